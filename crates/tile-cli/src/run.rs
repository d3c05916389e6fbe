//! `tile run`: load `.npy` arguments, check them, execute the plan on a
//! target, and write every out/inout parameter as `.npy`, all or nothing.

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
    pub inits: Vec<String>,
    pub binds: Vec<String>,
    pub fusion: bool,
    pub out_dir: PathBuf,
}

fn pair<'a>(s: &'a str, flag: &str) -> Result<(&'a str, &'a str), String> {
    s.split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| format!("error: --{flag} expects NAME=VALUE, got `{s}`"))
}

fn read_array(path: &str) -> Result<Array, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: error: cannot read: {e}"))?;
    tile_ir::npy::read_npy(&bytes).map_err(|e| format!("{path}: error: {e}"))
}

/// Runs the command.
pub fn run(a: RunArgs) -> Result<(), String> {
    let (file, program) = load::program(&a.file, a.program.as_deref())?;
    let plan = tile_plan::compile(&program, &tile_plan::Options { fusion: a.fusion })
        .map_err(|e| load::located(&file, &e.diagnostics))?;

    let mut explicit = Sizes::new();
    for b in &a.binds {
        let (k, v) = pair(b, "bind")?;
        let v: i64 = v
            .parse()
            .map_err(|_| format!("error: --bind {k} needs an integer, got `{v}`"))?;
        if !program.size_symbols().iter().any(|s| s == k) {
            return Err(format!(
                "error: --bind {k}: the program has no size symbol `{k}`"
            ));
        }
        explicit.insert(k.to_string(), v);
    }
    let mut arrays: BTreeMap<String, Array> = BTreeMap::new();
    for (list, flag) in [(&a.inputs, "input"), (&a.inits, "init")] {
        for item in list {
            let (name, path) = pair(item, flag)?;
            let p = program.param(name).ok_or_else(|| {
                format!("error: --{flag} {name}: the program has no parameter `{name}`")
            })?;
            match (flag, p.role) {
                ("input", Role::Out) => return Err(format!("error: `{name}` is an output; give its initial content with --init {name}=FILE")),
                ("init", Role::In) => return Err(format!("error: `{name}` is an input; pass it with --input {name}=FILE")),
                _ => {}
            }
            if arrays.insert(name.to_string(), read_array(path)?).is_some() {
                return Err(format!("error: `{name}` is given twice"));
            }
        }
    }
    for p in &program.params {
        if p.role == Role::In && !arrays.contains_key(&p.name) {
            return Err(format!(
                "error: missing input `{0}`: pass --input {0}=FILE.npy",
                p.name
            ));
        }
    }
    // Outputs without initial content start as zeros of their box's shape.
    let shapes = arrays
        .iter()
        .filter(|(k, arr)| {
            program
                .param(k)
                .is_some_and(|p| p.dims.len() == arr.shape.len())
        })
        .map(|(k, arr)| (k.clone(), (arr.dtype(), arr.shape.clone())))
        .collect();
    let sizes = tile_ir::args::solve_sizes(&program, &shapes, &explicit)
        .map_err(|e| format!("error: {e}"))?;
    let boxes = tile_ir::args::boxes(&program, &sizes).map_err(|e| format!("error: {e}"))?;
    for p in &program.params {
        if !arrays.contains_key(&p.name) {
            let shape: Vec<i64> = boxes[&p.name].iter().map(|(lo, hi)| hi - lo).collect();
            if shape.iter().any(|&n| n < 0) {
                return Err(format!(
                    "error: the box of `{}` has a negative extent {shape:?}",
                    p.name
                ));
            }
            let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
            arrays.insert(p.name.clone(), Array::zeros(p.dtype, &shape));
        }
    }
    tile_ir::args::bind_arrays(&program, &arrays, &explicit).map_err(|e| format!("error: {e}"))?;

    match a.target {
        Target::Interp => {
            tile_plan::execute_plan(&plan, &mut arrays, &explicit, tile_plan::Order::Sequential)
                .map_err(|e| format!("{file}:{e}"))?
        }
        Target::Cpu => {
            let module = tile_cpu::compile(&plan, &tile_cpu::CpuOptions::default())
                .map_err(|e| format!("error: {e}"))?;
            module
                .run(&mut arrays, &explicit)
                .map_err(|e| format!("error: {e}"))?;
        }
        Target::Cuda => {
            let module = tile_cuda::compile(&plan, &tile_cuda::CudaOptions::default())
                .map_err(|e| format!("error: {e}"))?;
            module
                .run(&mut arrays, &explicit)
                .map_err(|e| format!("error: {e}"))?;
        }
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
    write_all(&a.out_dir, &outputs)
}

/// Writes every file or none: into a staging directory beside `dir`, then
/// renamed into place.
fn write_all(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    let shown = dir.display();
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let leaf = dir
        .file_name()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let stage = parent.join(format!(".{leaf}.tile-staging-{}", std::process::id()));
    let fail = |e: std::io::Error| format!("{shown}: error: cannot write outputs: {e}");
    std::fs::create_dir_all(&stage).map_err(fail)?;
    let result = (|| {
        for (name, bytes) in files {
            std::fs::write(stage.join(name), bytes)?;
        }
        if !dir.exists() {
            return std::fs::rename(&stage, dir);
        }
        for (name, _) in files {
            std::fs::rename(stage.join(name), dir.join(name))?;
        }
        std::fs::remove_dir(&stage)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&stage);
    }
    result.map_err(fail)
}
