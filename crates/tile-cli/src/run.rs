//! `tile run`: load `.npy` arguments, check them, execute the plan on a
//! target, and write every out/inout parameter as `.npy`, all or nothing.
//!
//! Every check comes before any work: arguments (names, roles, dtypes,
//! ranks, shapes, which argument bound each size symbol), `inout`
//! parameters given (`--init`) or explicitly zeroed (`--zeros`), the
//! launch's integer ranges, the memory of outputs made from boxes, and the
//! output directory (a staging directory is created beside it first).

use crate::{load, Target};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tile_ir::{Array, Role, Sizes};

/// Everything `tile run` was given.
pub struct RunArgs {
    pub file: PathBuf,
    pub program: Option<String>,
    pub target: Target,
    pub inputs: Vec<String>,
    pub scalars: Vec<String>,
    pub inits: Vec<String>,
    pub zeros: Vec<String>,
    pub max_memory: Option<String>,
    pub binds: Vec<String>,
    pub fusion: bool,
    pub out_dir: PathBuf,
    pub allow_tf32: bool,
}

fn pair<'a>(s: &'a str, flag: &str) -> Result<(&'a str, &'a str), String> {
    s.split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| format!("error: --{flag} expects NAME=VALUE, got `{s}`"))
}

/// Reads a `.npy` argument: a regular file (not a FIFO or a device that
/// never ends) no larger than the memory ceiling.
fn read_array(path: &str) -> Result<Array, String> {
    let ceiling = tile_ir::limits::memory_ceiling().map_err(|e| format!("error: {e}"))?;
    let bytes = tile_ir::load::read_regular_file(Path::new(path), ceiling).map_err(|e| {
        let why = if e.contains(&ceiling.to_string()) {
            " (the memory ceiling: --max-memory or TILE_MAX_MEMORY)"
        } else {
            ""
        };
        format!("{path}: error: {e}{why}")
    })?;
    tile_ir::npy::read_npy(&bytes).map_err(|e| format!("{path}: error: {e}"))
}

/// Runs the command.
pub fn run(a: RunArgs) -> Result<(), String> {
    if a.allow_tf32 && !matches!(a.target, Target::Cuda) {
        return Err(crate::TF32_CUDA_ONLY.to_string());
    }
    if let Some(m) = &a.max_memory {
        let bytes = tile_ir::limits::parse_bytes(m).ok_or_else(|| {
            format!("error: --max-memory expects a byte count such as 4G or 512M, got `{m}`")
        })?;
        tile_ir::limits::set_memory_ceiling(bytes);
    }
    let (file, program) = load::program(&a.file, a.program.as_deref())?;
    let plan = tile_plan::compile(&program, &tile_plan::Options { fusion: a.fusion })
        .map_err(|e| load::located(&file, &e.diagnostics))?;

    let explicit = binds(&program, &a.binds)?;
    let mut arrays = load_arguments(&program, &a)?;
    let sizes = solve(&program, &arrays, &explicit)?;
    tile_plan::check_ranges(&plan, &sizes).map_err(|e| located(&file, &e))?;
    let boxes = tile_ir::args::boxes(&program, &sizes).map_err(|e| format!("error: {e}"))?;
    // Outputs without initial content are made from their boxes
    // (check_ranges proved every extent non-negative and small): each and
    // together under the memory ceiling, checked before any is allocated.
    let ceiling = tile_ir::limits::memory_ceiling().map_err(|e| format!("error: {e}"))?;
    let mut made = Vec::new();
    for p in program
        .params
        .iter()
        .filter(|p| !arrays.contains_key(&p.name))
    {
        let shape: Vec<usize> = boxes[&p.name]
            .iter()
            .map(|(lo, hi)| (hi - lo) as usize)
            .collect();
        let (_, bytes) = tile_ir::shape_bytes(p.dtype, &shape)
            .map_err(|e| format!("error: output `{}`: {e}", p.name))?;
        made.push((p, shape, bytes));
    }
    let total: u128 = made.iter().map(|(_, _, b)| *b as u128).sum();
    if let Some((p, shape, bytes)) = made
        .iter()
        .max_by_key(|(_, _, b)| *b)
        .filter(|_| total > ceiling as u128)
    {
        return Err(if *bytes > ceiling {
            format!("error: output `{}` of shape {shape:?} needs {bytes} bytes, above the memory ceiling of {ceiling} bytes (--max-memory or TILE_MAX_MEMORY)", p.name)
        } else {
            format!("error: the outputs need {total} bytes together, above the memory ceiling of {ceiling} bytes (--max-memory or TILE_MAX_MEMORY)")
        });
    }
    for (p, shape, _) in made {
        let zeros = Array::try_zeros(p.dtype, &shape)
            .map_err(|e| format!("error: output `{}`: {e}", p.name))?;
        arrays.insert(p.name.clone(), zeros);
    }
    tile_ir::args::bind_arrays(&program, &arrays, &explicit).map_err(|e| format!("error: {e}"))?;
    let stage = Staging::create(&a.out_dir)?;

    let ran = match a.target {
        Target::Interp => {
            tile_plan::execute_plan(&plan, &mut arrays, &explicit, tile_plan::Order::Sequential)
                .map_err(|e| {
                    // "LINE:COL: message" becomes "FILE:LINE:COL: error: message".
                    let m = e.to_string();
                    match m.split_once(": ") {
                        Some((at, rest))
                            if at.contains(':')
                                && at.chars().all(|c| c.is_ascii_digit() || c == ':') =>
                        {
                            format!("{file}:{at}: error: {rest}")
                        }
                        _ => format!("{file}: error: {m}"),
                    }
                })
        }
        Target::Cpu => tile_cpu::compile(&plan, &tile_cpu::CpuOptions::default())
            .and_then(|m| m.run(&mut arrays, &explicit))
            .map_err(|e| match e {
                tile_cpu::CpuError::Range(r) => located(&file, &r),
                e @ (tile_cpu::CpuError::OutOfBounds { .. }
                | tile_cpu::CpuError::IntArith { .. }
                | tile_cpu::CpuError::Scratch { .. }) => format!("{file}: error: {e}"),
                e => format!("error: {e}"),
            }),
        Target::Cuda => tile_cuda::compile(
            &plan,
            &tile_cuda::CudaOptions {
                allow_tf32: a.allow_tf32,
                ..Default::default()
            },
        )
        .and_then(|m| m.run(&mut arrays, &explicit))
        .map_err(|e| match e {
            tile_cuda::CudaError::Range(r) => located(&file, &r),
            e @ (tile_cuda::CudaError::OutOfBounds { .. }
            | tile_cuda::CudaError::IntArith { .. }) => format!("{file}: error: {e}"),
            e => format!("error: {e}"),
        }),
        Target::Wgpu => run_wgpu(&plan, &mut arrays, &explicit, &file),
    };
    if let Err(e) = ran {
        drop(stage); // removes the staging directory
        return Err(format!(
            "{e}\nno output files were written (the run's partial results were discarded)"
        ));
    }
    let outputs: Vec<(String, Vec<u8>)> = program
        .params
        .iter()
        .filter(|p| p.role.is_written())
        .map(|p| {
            (
                format!("{}.npy", p.name),
                tile_ir::npy::write_npy(&arrays[&p.name]),
            )
        })
        .collect();
    stage.commit(&outputs)
}

/// Runs `plan` on wgpu (a `tile` built with `--features wgpu`).
#[cfg(feature = "wgpu")]
fn run_wgpu(
    plan: &tile_plan::Plan,
    arrays: &mut std::collections::BTreeMap<String, Array>,
    explicit: &Sizes,
    file: &str,
) -> Result<(), String> {
    tile_wgpu::WgpuModule::compile(plan)
        .and_then(|m| m.run(arrays, explicit))
        .map_err(|e| match e {
            tile_wgpu::WgpuError::Range(r) => located(file, &r),
            e @ (tile_wgpu::WgpuError::OutOfBounds { .. }
            | tile_wgpu::WgpuError::IntArith { .. }
            | tile_wgpu::WgpuError::Unsupported(_)) => format!("{file}: error: {e}"),
            e => format!("error: {e}"),
        })
}

/// Says how to get the wgpu runtime (not a default feature: it adds about
/// two minutes to a 2-core build).
#[cfg(not(feature = "wgpu"))]
fn run_wgpu(
    plan: &tile_plan::Plan,
    _: &mut std::collections::BTreeMap<String, Array>,
    _: &Sizes,
    file: &str,
) -> Result<(), String> {
    // What the target cannot print is said first, as a built one would.
    tile_wgpu::emit_wgsl(plan).map_err(|e| format!("{file}: error: {e}"))?;
    Err("error: this `tile` was built without the wgpu runtime; build it with `cargo run --release --features wgpu -- run --target wgpu ...`".to_string())
}

/// A refused launch, located like any other diagnostic.
fn located(file: &str, e: &tile_plan::RangeError) -> String {
    load::located(file, &[tile_ir::Diagnostic::new(e.span, e.message.clone())])
}

/// `--bind NAME=VALUE` values, each naming a size symbol.
fn binds(program: &tile_ir::Program, list: &[String]) -> Result<Sizes, String> {
    let mut explicit = Sizes::new();
    for b in list {
        let (k, v) = pair(b, "bind")?;
        let v: i64 = v
            .parse()
            .map_err(|_| format!("error: --bind {k} needs a 64-bit integer, got `{v}`"))?;
        if !program.size_symbols().iter().any(|s| s == k) {
            return Err(format!(
                "error: --bind {k}: the program has no size symbol `{k}`"
            ));
        }
        if explicit.insert(k.to_string(), v).is_some() {
            return Err(format!("error: --bind {k} is given twice"));
        }
    }
    Ok(explicit)
}

/// Reads `--input` and `--init` files and checks every parameter has what
/// its role needs: inputs their data, `inout` parameters their initial
/// content (or `--zeros`).
fn load_arguments(
    program: &tile_ir::Program,
    a: &RunArgs,
) -> Result<BTreeMap<String, Array>, String> {
    let mut arrays: BTreeMap<String, Array> = BTreeMap::new();
    for name in &a.zeros {
        let p = program.param(name).ok_or_else(|| {
            format!("error: --zeros {name}: the program has no parameter `{name}`")
        })?;
        if p.role != Role::InOut {
            return Err(format!(
                "error: --zeros {name}: `{name}` is an `{}` parameter; --zeros is for `inout` ones",
                p.role
            ));
        }
    }
    for (list, flag) in [(&a.inputs, "input"), (&a.inits, "init")] {
        for item in list {
            let (name, path) = pair(item, flag)?;
            let p = program.param(name).ok_or_else(|| {
                format!("error: --{flag} {name}: the program has no parameter `{name}`")
            })?;
            match (flag, p.role) {
                ("input", Role::Out) | ("input", Role::InOut) => return Err(format!("error: `{name}` is written by the program; give its initial content with --init {name}=FILE")),
                ("init", Role::In) => return Err(format!("error: `{name}` is an input; pass it with --input {name}=FILE")),
                _ => {}
            }
            if a.zeros.iter().any(|z| z == name) {
                return Err(format!("error: `{name}` has both --init and --zeros"));
            }
            if arrays.insert(name.to_string(), read_array(path)?).is_some() {
                return Err(format!("error: `{name}` is given twice"));
            }
        }
    }
    for item in &a.scalars {
        let (name, value) = pair(item, "scalar")?;
        let array = scalar(program, name, value)?;
        if arrays.insert(name.to_string(), array).is_some() {
            return Err(format!("error: `{name}` is given twice"));
        }
    }
    for p in &program.params {
        if arrays.contains_key(&p.name) {
            continue;
        }
        match p.role {
            Role::In if p.dims.is_empty() => {
                return Err(format!(
                    "error: missing scalar `{0}`: pass --scalar {0}=VALUE",
                    p.name
                ))
            }
            Role::In => {
                return Err(format!(
                    "error: missing input `{0}`: pass --input {0}=FILE.npy",
                    p.name
                ))
            }
            Role::InOut if !a.zeros.contains(&p.name) => {
                return Err(format!(
                    "error: `{0}` is an inout parameter: its initial content is read; pass --init {0}=FILE.npy, or --zeros {0} to start from zeros",
                    p.name
                ))
            }
            _ => {}
        }
    }
    Ok(arrays)
}

/// The 0-d array of `--scalar NAME=VALUE`, checked against the parameter:
/// an `in` scalar, and a value its dtype holds exactly (`i32` in range,
/// `bool` as `true`/`false`).
fn scalar(program: &tile_ir::Program, name: &str, value: &str) -> Result<Array, String> {
    let p = program
        .param(name)
        .ok_or_else(|| format!("error: --scalar {name}: the program has no parameter `{name}`"))?;
    if p.role != Role::In || !p.dims.is_empty() {
        return Err(format!(
            "error: --scalar {name}: `{name}` is not a scalar input (it is `{p}`); pass arrays with --input or --init"
        ));
    }
    let bad = |what: &str| format!("error: --scalar {name}={value}: {what}");
    let v = match p.dtype {
        tile_ir::DType::F32 | tile_ir::DType::F64 => value
            .parse::<f64>()
            .map_err(|_| bad(&format!("`{name}` is {}, expected a number", p.dtype)))?,
        tile_ir::DType::I32 => value.parse::<i32>().map(f64::from).map_err(|_| {
            bad(&format!(
                "`{name}` is i32, expected an integer in the i32 range"
            ))
        })?,
        tile_ir::DType::Bool => match value {
            "true" => 1.0,
            "false" => 0.0,
            _ => return Err(bad("expected `true` or `false`")),
        },
    };
    Ok(Array::from_f64(p.dtype, &[], &[v]))
}

/// Solves the size symbols from the arrays given (outputs without initial
/// content are made from their boxes afterwards).
fn solve(
    program: &tile_ir::Program,
    arrays: &BTreeMap<String, Array>,
    explicit: &Sizes,
) -> Result<Sizes, String> {
    let mut shapes = BTreeMap::new();
    for (k, arr) in arrays {
        if let Some(p) = program.param(k) {
            if p.dims.len() != arr.shape().len() {
                return Err(format!(
                    "error: {}",
                    tile_ir::ArgError::Rank {
                        name: k.clone(),
                        expected: p.dims.len(),
                        found: arr.shape().len(),
                    }
                ));
            }
        }
        shapes.insert(k.clone(), (arr.dtype(), arr.shape().to_vec()));
    }
    tile_ir::args::solve_sizes(program, &shapes, explicit).map_err(|e| format!("error: {e}"))
}

/// The staging directory: created before any work (so an unusable output
/// path fails first), filled and renamed into place only after the run
/// succeeded. It lies inside an existing output directory (the same file
/// system, and a parent such as `/` need not be writable), else beside the
/// one to be created; its name is new (created exclusively). It is
/// registered with `tile_ir::temp_paths`, so a signal removes it too.
struct Staging {
    dir: PathBuf,
    stage: PathBuf,
    _registered: tile_ir::temp_paths::Registered,
}

impl Staging {
    fn create(dir: &Path) -> Result<Staging, String> {
        let shown = dir.display();
        if dir.exists() && !dir.is_dir() {
            return Err(format!(
                "{shown}: error: the output directory exists and is not a directory"
            ));
        }
        let (base, leaf) = if dir.is_dir() {
            (dir.to_path_buf(), String::new())
        } else {
            let parent = dir
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("{shown}: error: cannot create the output directory: {e}"))?;
            let leaf = dir
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "out".into());
            (parent.to_path_buf(), leaf)
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let stage = base.join(format!(
            ".{leaf}.tile-staging-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir(&stage)
            .map_err(|e| format!("{shown}: error: cannot create the output directory: {e}"))?;
        Ok(Staging {
            dir: dir.to_path_buf(),
            _registered: tile_ir::temp_paths::register(&stage),
            stage,
        })
    }

    /// Writes every file or none. Each file is written into the staging
    /// directory; a new output directory is then renamed into place in one
    /// step. Into an existing one, every destination is checked first (a
    /// directory or other non-file in the way refuses the whole set), the
    /// files it replaces are moved aside into the staging directory, and
    /// the new ones renamed in; if any step fails, what was moved is moved
    /// back, so the directory holds the old set or the new one.
    fn commit(self, files: &[(String, Vec<u8>)]) -> Result<(), String> {
        let (dir, stage) = (&self.dir, &self.stage);
        let fail =
            |e: std::io::Error| format!("{}: error: cannot write outputs: {e}", dir.display());
        for (name, bytes) in files {
            std::fs::write(stage.join(name), bytes).map_err(fail)?;
        }
        if !dir.exists() {
            return std::fs::rename(stage, dir).map_err(fail);
        }
        for (name, _) in files {
            let dest = dir.join(name);
            if let Ok(m) = std::fs::symlink_metadata(&dest) {
                if !m.is_file() {
                    return Err(format!(
                        "{}: error: cannot write outputs: {} exists and is not a regular file; no output was written",
                        dir.display(),
                        dest.display()
                    ));
                }
            }
        }
        let old = |name: &str| stage.join(format!("{name}.old"));
        // (name, whether an old file was moved aside, whether the new one is in place)
        let mut done: Vec<(&str, bool, bool)> = Vec::new();
        let moved = (|| -> std::io::Result<()> {
            for (name, _) in files {
                let dest = dir.join(name);
                let aside = dest.exists();
                if aside {
                    std::fs::rename(&dest, old(name))?;
                }
                done.push((name, aside, false));
                std::fs::rename(stage.join(name), &dest)?;
                if let Some(last) = done.last_mut() {
                    last.2 = true;
                }
            }
            Ok(())
        })();
        if let Err(e) = moved {
            for &(name, aside, placed) in done.iter().rev() {
                if placed {
                    let _ = std::fs::remove_file(dir.join(name));
                }
                if aside {
                    let _ = std::fs::rename(old(name), dir.join(name));
                }
            }
            return Err(format!(
                "{}: error: cannot write outputs: {e}; the files already there were put back",
                dir.display()
            ));
        }
        Ok(())
    }
}

/// Whatever happens (an error, a panic), the staging directory does not
/// outlive the run: after a commit it no longer exists (renamed into
/// place), or holds only replaced files, and is removed here.
impl Drop for Staging {
    fn drop(&mut self) {
        if self.stage.exists() {
            let _ = std::fs::remove_dir_all(&self.stage);
        }
    }
}
