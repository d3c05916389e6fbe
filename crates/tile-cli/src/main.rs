//! The `tile` command line: check, plan, emit, run, bench and audit.
//!
//! Errors go to stderr as `FILE:LINE:COL: error: MESSAGE` (or without a
//! location where none applies) and the exit status is 1; usage errors exit
//! with 2. Nothing here panics on user input.

mod load;
mod run;
mod signals;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// Compile and run element-wise and row-reduction tensor kernels, with
/// multi-output fusion.
#[derive(Parser)]
#[command(name = "tile", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Planner switch.
#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Fusion {
    /// Merge same-domain independent stores into one kernel (default).
    On,
    /// The control: one kernel per store.
    Off,
}

/// Where `run` executes the program.
#[derive(Clone, Copy, ValueEnum, PartialEq, Debug)]
enum Target {
    /// The FP64 reference interpreter (sequential program order).
    Interp,
    /// Generated C compiled by the system C compiler.
    Cpu,
    /// Generated CUDA C compiled by NVRTC.
    Cuda,
    /// Generated WGSL run by wgpu (Vulkan, Metal, DirectX 12; Mesa's
    /// lavapipe without a GPU), in a `tile` built with `--features wgpu`.
    Wgpu,
}

/// Targets whose generated source `tile emit` prints.
#[derive(Clone, Copy, ValueEnum, PartialEq, Debug)]
enum SourceTarget {
    /// C for CPUs.
    Cpu,
    /// CUDA C.
    Cuda,
    /// WGSL for wgpu.
    Wgpu,
}

/// Targets `tile bench` measures.
#[derive(Clone, Copy, ValueEnum, PartialEq, Debug)]
enum BenchTarget {
    /// Generated C on the CPU.
    Cpu,
    /// Generated CUDA C on an NVIDIA GPU.
    Cuda,
    /// Generated WGSL through wgpu (a `tile` built with `--features
    /// wgpu`).
    Wgpu,
}

/// Targets with lowered kernels.
#[derive(Clone, Copy, ValueEnum, PartialEq, Debug)]
enum EmitTarget {
    /// C for CPUs.
    Cpu,
    /// CUDA C.
    Cuda,
    /// WGSL for wgpu.
    Wgpu,
}

/// Options shared by every command that reads a program.
#[derive(clap::Args)]
struct Source {
    /// The `.tile` file.
    file: PathBuf,
    /// Which program of the file, when it holds several.
    #[arg(long)]
    program: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and verify a program; print it normalised.
    Check {
        #[command(flatten)]
        source: Source,
    },
    /// Print the derivative program: the gradients of the inputs named by
    /// --wrt, given a cotangent `grad_Y` of each float output `Y`
    /// (reverse mode; docs/guide/derivatives.md).
    ///
    /// The result is an ordinary program (named NAME_grad): save it and
    /// `tile plan`, `tile run` or `tile bench` it like any other.
    Grad {
        #[command(flatten)]
        source: Source,
        /// The float `in` parameters to differentiate with respect to,
        /// comma-separated: `--wrt x` or `--wrt x,w`.
        #[arg(long, value_delimiter = ',', required = true)]
        wrt: Vec<String>,
        /// Also write the program's own outputs in the same program (value
        /// and gradient in one pass, sharing what both compute).
        #[arg(long)]
        with_value: bool,
        /// What the forward pass keeps for the derivative. `inputs`: the
        /// derivative recomputes everything from the inputs. `reductions`:
        /// prints two programs, NAME_forward (the program, also storing
        /// every float binding that holds a reduction to a `saved_NAME`
        /// output) and NAME_grad (reading those back as `saved_NAME`
        /// inputs instead of reducing again).
        #[arg(long, default_value = "inputs", value_parser = ["inputs", "reductions"])]
        save: String,
    },
    /// Show how the program will run: kernels, mappings, fallbacks.
    Plan {
        #[command(flatten)]
        source: Source,
        /// `off` gives the control plan (no multi-store kernels).
        #[arg(long, value_enum, default_value = "on")]
        fusion: Fusion,
        /// Print the plan as one JSON object.
        #[arg(long)]
        json: bool,
        /// Also print the kernels as this back end lowers them: the body
        /// each runs, the loops on vector lanes, how sums are reordered, the
        /// extra entry points and the rows staged or held, a GPU block's
        /// steps and barriers, and kernels refused where a check may fail.
        #[arg(long, value_enum)]
        target: Option<EmitTarget>,
    },
    /// Print the generated source of a program's kernels.
    Emit {
        #[command(flatten)]
        source: Source,
        /// Which back end's source.
        #[arg(long, value_enum)]
        target: SourceTarget,
        /// `off` emits the control plan.
        #[arg(long, value_enum, default_value = "on")]
        fusion: Fusion,
        /// With `--target cuda`: the contractions' tiled entry points
        /// multiply `f32` on TF32 tensor cores (`mma.sync`), as `run
        /// --allow-tf32` compiles them.
        #[arg(long)]
        allow_tf32: bool,
    },
    /// Measure Tile against its peers under the fixed protocol
    /// (docs/benchmarking.md); writes results.json, sources/ and results.md.
    ///
    /// With a FILE, benchmarks that one program at each `--shape` (fused,
    /// fusion off, and a copy of the same bytes), validated against the FP64
    /// interpreter: `tile bench my.tile --shape 4096x4096`.
    Bench(BenchCmd),
    /// Recompute every figure of a results directory from its raw samples
    /// and check the protocol; `--self-test` proves the audit rejects
    /// tampered data.
    Audit {
        /// DIR/results.json.
        results: PathBuf,
        /// Apply the eight mutations of docs/benchmarking.md; each must be rejected.
        #[arg(long)]
        self_test: bool,
    },
    /// Write the results digest of benchmark runs: per run, the answer
    /// first, the audit's verdict and an exact-lookup table, every figure
    /// from its results.json (docs/results/digest.md is this command's
    /// output for the committed runs).
    Report {
        /// Results directories (each holding results.json), in the order
        /// the digest lists them.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Write the digest here (links are made relative to its folder)
        /// instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run a program on `.npy` inputs and write its outputs as `.npy` files.
    Run {
        #[command(flatten)]
        source: Source,
        /// Where to run it.
        #[arg(long, value_enum, default_value = "interp")]
        target: Target,
        /// An input parameter's data: NAME=FILE.npy (repeat per input).
        #[arg(long = "input", value_name = "NAME=FILE")]
        inputs: Vec<String>,
        /// A scalar input parameter's value: NAME=VALUE, e.g. `alpha=0.1`,
        /// `k=3`, `flag=true` (repeat per scalar; `--input` with a 0-d
        /// `.npy` works too).
        #[arg(long = "scalar", value_name = "NAME=VALUE")]
        scalars: Vec<String>,
        /// Initial content of an out/inout parameter: NAME=FILE.npy. An
        /// `inout` parameter needs it (or --zeros); an `out` parameter
        /// starts as zeros without it.
        #[arg(long = "init", value_name = "NAME=FILE")]
        inits: Vec<String>,
        /// Start an `inout` parameter from zeros instead of --init
        /// (repeat per parameter).
        #[arg(long = "zeros", value_name = "NAME")]
        zeros: Vec<String>,
        /// Ceiling on the memory of arrays Tile allocates (outputs made
        /// from a box), e.g. 4G; default $TILE_MAX_MEMORY, else the
        /// machine's physical memory.
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<String>,
        /// A size symbol no shape determines: NAME=VALUE.
        #[arg(long = "bind", value_name = "NAME=VALUE")]
        binds: Vec<String>,
        /// `off` runs the control plan.
        #[arg(long, value_enum, default_value = "on")]
        fusion: Fusion,
        /// Directory for NAME.npy per out/inout parameter (created; files
        /// appear only when the whole run succeeded).
        #[arg(long)]
        out_dir: PathBuf,
        /// With `--target cuda`: let `f32` contractions multiply on TF32
        /// tensor cores (operands rounded to 10 mantissa bits, sums in
        /// FP32), as PyTorch's `allow_tf32`; without it, exact FP32.
        #[arg(long)]
        allow_tf32: bool,
    },
}

/// The arguments of `tile bench`.
#[derive(clap::Args)]
struct BenchCmd {
    /// A `.tile` file to benchmark instead of a suite.
    file: Option<PathBuf>,
    /// With FILE: the shapes, comma-separated: `MxN` (sizes M and N) or
    /// `N` (M = 1). A program whose sizes have other names takes them in
    /// order of first appearance, after --bind: `AxB` gives the last two
    /// symbols --bind leaves, `B` the last one. `inout` parameters start
    /// from the same deterministic values as inputs, in the kernel and in
    /// the FP64 reference alike.
    #[arg(long, value_delimiter = ',')]
    shape: Vec<String>,
    /// With FILE: which program of the file, when it holds several.
    #[arg(long)]
    program: Option<String>,
    /// With FILE: a size symbol other than M and N, fixed for every shape:
    /// NAME=VALUE (repeat per symbol), e.g. `--bind K=256`; --shape gives
    /// the rest.
    #[arg(long = "bind", value_name = "NAME=VALUE")]
    binds: Vec<String>,
    /// With FILE: absolute tolerance of the validation (default 1e-5).
    #[arg(long)]
    atol: Option<f64>,
    /// With FILE: relative tolerance of the validation (default 1e-4).
    #[arg(long)]
    rtol: Option<f64>,
    /// Where Tile runs.
    #[arg(long, value_enum, default_value = "cpu")]
    target: BenchTarget,
    /// Cases: groups (`seed`, `controls`, `reductions`, `matrix`,
    /// `contractions`, `contractions_large`, `neural`, `autodiff`,
    /// `algorithm`, `all`), graphs or case names,
    /// comma-separated (default: the seed suite).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
    /// Peer frameworks, comma-separated, or `none` (default: numpy_eager
    /// and torch_eager on cpu; torch_eager, torch_compile, jax_jit and
    /// cupy_elementwise on cuda). Missing ones are recorded as not
    /// available.
    #[arg(long, value_delimiter = ',')]
    peers: Vec<String>,
    /// Smoke run: 1 round, 3 samples, 2 ms batches, 5 ms warm-up (never
    /// reported as performance).
    #[arg(long)]
    quick: bool,
    /// Rounds (default 6).
    #[arg(long)]
    rounds: Option<usize>,
    /// Samples per phase (default 9).
    #[arg(long)]
    samples: Option<usize>,
    /// Batch window in milliseconds (default 30).
    #[arg(long)]
    window_ms: Option<f64>,
    /// Warm-up in milliseconds (default 100).
    #[arg(long)]
    warmup_ms: Option<f64>,
    /// Output directory (must be empty or absent; default
    /// results/<target>-<time>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Python interpreter for the peers.
    #[arg(long, default_value = "python3")]
    python: String,
    /// Another suite file (JSON, like bench/suite.json).
    #[arg(long)]
    suite: Option<PathBuf>,
    /// Let `f32` matrix products round their operands to TF32 on tensor
    /// cores: Tile's CUDA contractions (`mma.sync`) and the peers'
    /// products (cuBLAS's and XLA's TF32 modes); recorded in results.json,
    /// with the products' tolerances widened by the rounding's bound.
    /// Without it every product is exact FP32.
    #[arg(long)]
    allow_tf32: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    signals::install();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{}", msg.trim_end());
            ExitCode::FAILURE
        }
    }
}

fn options(fusion: Fusion) -> tile_plan::Options {
    tile_plan::Options {
        fusion: fusion == Fusion::On,
    }
}

fn dispatch(cmd: Command) -> Result<(), String> {
    match cmd {
        Command::Check { source } => {
            let (file, program) = load::program(&source.file, source.program.as_deref())?;
            tile_ir::verify(&program).map_err(|e| load::located(&file, &e.diagnostics))?;
            print!("{}", tile_ir::print_file(std::slice::from_ref(&program)));
            Ok(())
        }
        Command::Grad {
            source,
            wrt,
            with_value,
            save,
        } => {
            let (file, program) = load::program(&source.file, source.program.as_deref())?;
            let options = tile_ir::GradOptions {
                wrt,
                with_value,
                saves: save.parse()?,
            };
            let d = tile_ir::derive(&program, &options).map_err(|e| match e {
                tile_ir::GradError::Unsupported(d) => {
                    load::located(&file, std::slice::from_ref(&d))
                }
                e => format!("{file}: error: {e}"),
            })?;
            let programs: Vec<tile_ir::Program> = d.forward.into_iter().chain([d.grad]).collect();
            print!("{}", tile_ir::print_file(&programs));
            Ok(())
        }
        Command::Plan {
            source,
            fusion,
            json,
            target,
        } => {
            let (file, program) = load::program(&source.file, source.program.as_deref())?;
            let plan = tile_plan::compile(&program, &options(fusion))
                .map_err(|e| load::located(&file, &e.diagnostics))?;
            let lowered = target.map(|t| match t {
                EmitTarget::Cpu => tile_cpu::lower_c(&plan),
                EmitTarget::Cuda => {
                    tile_cuda::lower_cuda(&plan, &tile_cuda::CudaOptions::default())
                }
                EmitTarget::Wgpu => tile_wgpu::lower_wgsl(&plan),
            });
            if json {
                let mut v = plan.to_json();
                if let Some(l) = &lowered {
                    v["lowered"] = l.to_json();
                }
                println!(
                    "{}",
                    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
                );
            } else {
                print!("{plan}");
                if let Some(l) = &lowered {
                    print!("{l}");
                }
            }
            Ok(())
        }
        Command::Bench(b) => bench(b),
        Command::Audit { results, self_test } => audit(&results, self_test),
        Command::Report { dirs, out } => report(&dirs, out.as_deref()),
        Command::Emit {
            source,
            target,
            fusion,
            allow_tf32,
        } => {
            if allow_tf32 && !matches!(target, SourceTarget::Cuda) {
                return Err(TF32_CUDA_ONLY.to_string());
            }
            let (file, program) = load::program(&source.file, source.program.as_deref())?;
            let plan = tile_plan::compile(&program, &options(fusion))
                .map_err(|e| load::located(&file, &e.diagnostics))?;
            let text = match target {
                SourceTarget::Cpu => tile_cpu::emit_c(&plan, &tile_cpu::CpuOptions::default())
                    .map_err(|e| format!("error: {e}"))?,
                SourceTarget::Cuda => {
                    let opts = tile_cuda::CudaOptions {
                        allow_tf32,
                        ..Default::default()
                    };
                    tile_cuda::emit_cuda_with(&plan, &opts).map_err(|e| format!("error: {e}"))?
                }
                SourceTarget::Wgpu => {
                    tile_wgpu::emit_wgsl(&plan).map_err(|e| format!("{file}: error: {e}"))?
                }
            };
            print!("{text}");
            Ok(())
        }
        Command::Run {
            source,
            target,
            inputs,
            scalars,
            inits,
            zeros,
            max_memory,
            binds,
            fusion,
            out_dir,
            allow_tf32,
        } => run::run(run::RunArgs {
            file: source.file,
            program: source.program,
            target,
            inputs,
            scalars,
            inits,
            zeros,
            max_memory,
            binds,
            fusion: fusion == Fusion::On,
            out_dir,
            allow_tf32,
        }),
    }
}

/// Why `--allow-tf32` needs `--target cuda`.
pub(crate) const TF32_CUDA_ONLY: &str = "error: --allow-tf32 asks for TF32 tensor cores, which only --target cuda has (the other targets compute exact FP32)";

/// `tile bench`: a suite's cases or one file's program, under the protocol.
fn bench(b: BenchCmd) -> Result<(), String> {
    let BenchCmd {
        file,
        shape,
        program,
        binds,
        atol,
        rtol,
        target,
        cases,
        peers,
        quick,
        rounds,
        samples,
        window_ms,
        warmup_ms,
        out,
        python,
        suite,
        allow_tf32,
    } = b;
    let target = match target {
        BenchTarget::Cpu => "cpu",
        BenchTarget::Cuda => "cuda",
        BenchTarget::Wgpu => "wgpu",
    };
    if target == "wgpu" && !cfg!(feature = "wgpu") {
        return Err("error: this `tile` was built without the wgpu runtime; build it with `cargo run --release --features wgpu -- bench --target wgpu ...`".to_string());
    }
    let protocol = protocol_of(quick, rounds, samples, window_ms, warmup_ms);
    let chosen = match &file {
        Some(path) => {
            if !cases.is_empty() || suite.is_some() {
                return Err("give either a .tile FILE or --cases/--suite, not both".to_string());
            }
            file_cases(path, program.as_deref(), &shape, &binds, atol, rtol)?
        }
        None => {
            if !shape.is_empty()
                || program.is_some()
                || !binds.is_empty()
                || atol.is_some()
                || rtol.is_some()
            {
                return Err(
                    "--shape, --program, --bind, --atol and --rtol go with a .tile FILE"
                        .to_string(),
                );
            }
            tile_bench::suite::load(suite.as_deref(), &cases)?
        }
    };
    let mut chosen = chosen;
    if allow_tf32 {
        if target != "cuda" {
            return Err(TF32_CUDA_ONLY.to_string());
        }
        tile_bench::suite::allow_tf32(&mut chosen)?;
    }
    let peers = match peers.as_slice() {
        // A user's program has no peer implementation.
        [] if file.is_some() => vec![],
        [] => tile_bench::default_peers(target),
        [n] if n == "none" => vec![],
        p => p.to_vec(),
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let out = out.unwrap_or_else(|| PathBuf::from(format!("results/{target}-{stamp}")));
    let args = tile_bench::BenchArgs {
        target: target.to_string(),
        cases: chosen,
        peers,
        protocol,
        out: out.clone(),
        python,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        progress: true,
    };
    tile_bench::bench(&args)?;
    print_summary(&out)
}

/// The protocol of `tile bench`: `--quick` or the full one, with the
/// options that override its rounds, samples and windows.
fn protocol_of(
    quick: bool,
    rounds: Option<usize>,
    samples: Option<usize>,
    window_ms: Option<f64>,
    warmup_ms: Option<f64>,
) -> tile_bench::protocol::Protocol {
    let mut protocol = if quick {
        tile_bench::protocol::Protocol::quick()
    } else {
        tile_bench::protocol::Protocol::full()
    };
    protocol.rounds = rounds.unwrap_or(protocol.rounds).max(1);
    protocol.samples = samples.unwrap_or(protocol.samples).max(1);
    protocol.window_ms = window_ms.unwrap_or(protocol.window_ms);
    protocol.warmup_ms = warmup_ms.unwrap_or(protocol.warmup_ms);
    protocol
}

/// Prints the summary of the run in `out` and where its files are.
fn print_summary(out: &std::path::Path) -> Result<(), String> {
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    print!("{}", tile_bench::report::summary(&results));
    println!(
        "\nresults: {}/results.md (audit: tile audit {}/results.json)",
        out.display(),
        out.display()
    );
    Ok(())
}

/// `tile audit`: one results directory, or the mutation self-test.
fn audit(results: &std::path::Path, self_test: bool) -> Result<(), String> {
    if self_test {
        let (lines, all) = tile_bench::audit::self_test(results)?;
        for l in &lines {
            println!("{l}");
        }
        if !all {
            return Err("error: the audit accepted a mutated results directory".into());
        }
        println!(
            "audit self-test: {} of {} mutations rejected",
            lines.len(),
            lines.len()
        );
        Ok(())
    } else {
        match tile_bench::audit::audit(results) {
            Ok(msg) => {
                println!("{msg}");
                Ok(())
            }
            Err(problems) => Err(format!(
                "audit failed ({} problem(s)):\n{}",
                problems.len(),
                problems.join("\n")
            )),
        }
    }
}

/// `tile report`: the digest of several runs.
fn report(dirs: &[PathBuf], out: Option<&std::path::Path>) -> Result<(), String> {
    let base = out
        .as_ref()
        .and_then(|o| o.parent())
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let runs = tile_bench::digest::load(dirs, &base)?;
    let text = tile_bench::digest::digest(&runs);
    match out {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}

/// The sizes a `--shape` gives beyond `M` and `N` (which the case's shape
/// gives by name), with the `--bind` ones: the program's free symbols
/// (`free`, those --bind leaves) take the shape's sizes in order, `B` the
/// last symbol, `AxB` the last two; `M` and `N` must then sit where their
/// names put them (`M` first of two, `N` last).
fn shape_sizes(
    file: &str,
    free: &[String],
    dims: &[usize],
    shape: [usize; 2],
    binds: &std::collections::BTreeMap<String, usize>,
) -> Result<std::collections::BTreeMap<String, usize>, String> {
    let mut sizes = binds.clone();
    if free.iter().all(|s| s == "M" || s == "N") {
        return Ok(sizes);
    }
    if free.len() != dims.len() {
        return Err(format!(
            "{file}: --shape gives {} size(s), and the program's size symbols that --bind leaves are {} ({}): give one size per symbol, or --bind the others",
            dims.len(),
            free.len(),
            free.join(", ")
        ));
    }
    let at = 2 - free.len();
    for (k, sym) in free.iter().enumerate() {
        let pos = at + k;
        match sym.as_str() {
            "M" | "N" if (sym == "M") != (pos == 0) => {
                return Err(format!(
                    "{file}: `{sym}` would take the shape's {} size; name the program's sizes M and N (in that order), or --bind `{sym}`",
                    if pos == 0 { "first" } else { "last" }
                ))
            }
            "M" | "N" => {}
            _ => {
                sizes.insert(sym.clone(), shape[pos]);
            }
        }
    }
    Ok(sizes)
}

/// The cases of `tile bench FILE`: the chosen program at each shape, every
/// written parameter validated against the FP64 interpreter.
fn file_cases(
    path: &std::path::Path,
    name: Option<&str>,
    shapes: &[String],
    binds: &[String],
    atol: Option<f64>,
    rtol: Option<f64>,
) -> Result<Vec<tile_bench::suite::Case>, String> {
    let (file, program) = load::program(path, name)?;
    let mut sizes = std::collections::BTreeMap::new();
    for b in binds {
        let bad = || {
            format!("--bind {b:?}: write NAME=VALUE with a size symbol of the program other than M and N (which --shape gives), and a count")
        };
        let (k, v) = b.split_once('=').ok_or_else(bad)?;
        let v: usize = v.trim().parse().map_err(|_| bad())?;
        if k == "M" || k == "N" || !program.size_symbols().iter().any(|s| s == k) {
            return Err(bad());
        }
        if sizes.insert(k.to_string(), v).is_some() {
            return Err(format!("--bind {k} is given twice"));
        }
    }
    if shapes.is_empty() {
        return Err(format!(
            "{file}: give the sizes to benchmark at, e.g. --shape 4096x4096 (M x N) or --shape 1000000 (N)"
        ));
    }
    let (atol, rtol) = (atol.unwrap_or(1e-5), rtol.unwrap_or(1e-4));
    if !(atol >= 0.0 && rtol >= 0.0 && atol.is_finite() && rtol.is_finite()) {
        return Err("--atol and --rtol must be finite and not negative".to_string());
    }
    let outputs: Vec<String> = program
        .params
        .iter()
        .filter(|p| p.role.is_written())
        .map(|p| p.name.clone())
        .collect();
    if let Some(p) = program
        .params
        .iter()
        .find(|p| !matches!(p.dtype, tile_ir::DType::F32 | tile_ir::DType::I32))
    {
        return Err(format!(
            "{file}: `{}` is {}; tile bench measures programs whose parameters are f32 or i32",
            p.name, p.dtype
        ));
    }
    // The symbols a shape gives: those --bind leaves, in order of first
    // appearance (`M` and `N` keep their places by name).
    let free: Vec<String> = program
        .size_symbols()
        .into_iter()
        .filter(|s| !sizes.contains_key(s))
        .collect();
    let mut cases = Vec::new();
    for s in shapes {
        let bad = || format!("--shape {s:?}: write AxB (e.g. 4096x4096) or B");
        let dims: Vec<usize> = s
            .split('x')
            .map(|d| d.trim().parse::<usize>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let shape = match dims.as_slice() {
            [n] => [1, *n],
            [m, n] => [*m, *n],
            _ => return Err(bad()),
        };
        let case_sizes = shape_sizes(&file, &free, &dims, shape, &sizes)?;
        let case = tile_bench::suite::Case {
            name: format!("{}_{}x{}", program.name, shape[0], shape[1]),
            graph: program.name.clone(),
            group: "program".to_string(),
            program: program.to_string(),
            shape,
            sizes: case_sizes,
            flops: Vec::new(),
            outputs: outputs.clone(),
            atol,
            rtol,
            allow_tf32: false,
        };
        // Sizes and byte counts checked before any work.
        tile_bench::target::moved_bytes(&case).map_err(|e| format!("{file}: {e}"))?;
        cases.push(case);
    }
    Ok(cases)
}
