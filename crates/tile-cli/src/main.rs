//! The `tile` command line: check, plan, emit, run, bench and audit.
//!
//! Errors go to stderr as `FILE:LINE:COL: error: MESSAGE` (or without a
//! location where none applies) and the exit status is 1; usage errors exit
//! with 2. Nothing here panics on user input.

mod load;
mod run;

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
        /// Initial content of an out/inout parameter: NAME=FILE.npy
        /// (zeros otherwise).
        #[arg(long = "init", value_name = "NAME=FILE")]
        inits: Vec<String>,
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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        Command::Plan {
            source,
            fusion,
            json,
        } => {
            let (file, program) = load::program(&source.file, source.program.as_deref())?;
            let plan = tile_plan::compile(&program, &options(fusion))
                .map_err(|e| load::located(&file, &e.diagnostics))?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&plan.to_json()).map_err(|e| e.to_string())?
                );
            } else {
                print!("{plan}");
            }
            Ok(())
        }
        Command::Run {
            source,
            target,
            inputs,
            inits,
            binds,
            fusion,
            out_dir,
        } => run::run(run::RunArgs {
            file: source.file,
            program: source.program,
            target,
            inputs,
            inits,
            binds,
            fusion: fusion == Fusion::On,
            out_dir,
        }),
    }
}
