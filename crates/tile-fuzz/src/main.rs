//! `tile-fuzz`: the differential fuzz harness for index and size
//! arithmetic.
//!
//! ```text
//! cargo run --release -p tile-fuzz -- [--seconds 120] [--seed S] [--cases N] [--asan]
//! ```
//!
//! Generates random programs ([`generate`]), runs each on the FP64
//! interpreter and on the CPU back end ([`check`]), and counts outcomes.
//! Cases run in child processes (batches of [`BATCH`]), so a crash or a
//! sanitizer report ends only its batch: the parent names the case, prints
//! its program, and goes on with the next. With `--asan` the kernels are
//! built with AddressSanitizer and the children run with its runtime
//! preloaded. The last line is the tally; the exit status is 1 when any
//! case crashed, tripped the sanitizer or disagreed.

mod check;
mod generate;
mod rng;

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Cases per child process.
const BATCH: u64 = 100;

/// The exit code children use for a sanitizer report.
const ASAN_EXIT: i32 = 86;

struct Args {
    seconds: f64,
    seed: u64,
    cases: u64,
    asan: bool,
    worker: Option<(u64, u64)>,
    write: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        seconds: 60.0,
        seed: 1,
        cases: u64::MAX,
        asan: false,
        worker: None,
        write: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match flag.as_str() {
            "--seconds" => {
                a.seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "--seconds: a number")?
            }
            "--seed" => a.seed = value("--seed")?.parse().map_err(|_| "--seed: an integer")?,
            "--cases" => {
                a.cases = value("--cases")?
                    .parse()
                    .map_err(|_| "--cases: an integer")?
            }
            "--asan" => a.asan = true,
            "--write" => a.write = Some(value("--write")?),
            "--worker" => {
                let from = value("--worker")?.parse().map_err(|_| "--worker FROM TO")?;
                let to = value("--worker")?.parse().map_err(|_| "--worker FROM TO")?;
                a.worker = Some((from, to));
            }
            "-h" | "--help" => {
                println!("tile-fuzz [--seconds N (60)] [--seed S (1)] [--cases N] [--asan]\ntile-fuzz --write DIR --cases N [--seed S (1)]\n\nRandom index- and size-arithmetic programs on the interpreter and the CPU\nback end; --asan builds the kernels with AddressSanitizer. Exits 1 on any\ncrash, sanitizer report or disagreement.\n\n--write DIR runs nothing: it writes the first N programs of the seed as\nDIR/caseK.tile (a corpus for checking that a change leaves the emitted\nsources byte-identical: bench/emit_all.sh).");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (see --help)")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tile-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &args.write {
        return write_cases(dir, args.seed, args.cases);
    }
    match args.worker {
        Some((from, to)) => worker(args.seed, from, to, args.asan),
        None => parent(&args),
    }
}

/// Writes the programs of cases `0..cases` of `seed` as `dir/caseK.tile`.
fn write_cases(dir: &str, seed: u64, cases: u64) -> ExitCode {
    if cases == u64::MAX {
        eprintln!("tile-fuzz: --write needs --cases N");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("tile-fuzz: cannot create {dir}: {e}");
        return ExitCode::FAILURE;
    }
    for n in 0..cases {
        let path = std::path::Path::new(dir).join(format!("case{n}.tile"));
        if let Err(e) = std::fs::write(&path, generate::case(seed, n).text) {
            eprintln!("tile-fuzz: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Runs cases `from..to`, announcing each before it starts.
fn worker(seed: u64, from: u64, to: u64, asan: bool) -> ExitCode {
    for n in from..to {
        println!("begin {n}");
        let case = generate::case(seed, n);
        let outcome = check::run(&case, asan);
        if let check::Outcome::Disagreed(why) = &outcome {
            eprintln!("case {n} (seed {seed}) disagrees: {why}\n{}", case.text);
        } else if std::env::var_os("TILE_FUZZ_SHOW").is_some() {
            eprintln!(
                "case {n}: {} {:?}\n{}",
                outcome.name(),
                case.sizes,
                case.text
            );
        }
        println!("end {n} {}", outcome.name());
    }
    ExitCode::SUCCESS
}

fn asan_runtime() -> Result<String, String> {
    let cc = std::env::var("TILE_CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .arg("-print-file-name=libasan.so")
        .output()
        .map_err(|e| format!("cannot run {cc}: {e}"))?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !std::path::Path::new(&path).exists() {
        return Err(format!("{cc} has no AddressSanitizer runtime (libasan.so)"));
    }
    Ok(path)
}

fn parent(args: &Args) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("tile-fuzz: cannot find myself: {e}");
            return ExitCode::FAILURE;
        }
    };
    let preload = if args.asan {
        match asan_runtime() {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("tile-fuzz: --asan: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let start = Instant::now();
    let budget = Duration::from_secs_f64(args.seconds);
    let mut tally: std::collections::BTreeMap<String, u64> = Default::default();
    let (mut crashes, mut reports) = (0u64, 0u64);
    let mut next = 0u64;
    while next < args.cases && start.elapsed() < budget {
        let to = (next + BATCH).min(args.cases);
        let mut cmd = Command::new(&exe);
        cmd.args([
            "--seed",
            &args.seed.to_string(),
            "--worker",
            &next.to_string(),
            &to.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        if let Some(p) = &preload {
            cmd.arg("--asan").env("LD_PRELOAD", p).env(
                "ASAN_OPTIONS",
                format!("detect_leaks=0:exitcode={ASAN_EXIT}:halt_on_error=1"),
            );
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("tile-fuzz: cannot start a worker: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut current = None;
        if let Some(out) = child.stdout.take() {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let mut w = line.split_whitespace();
                match (w.next(), w.next(), w.next()) {
                    (Some("begin"), Some(n), _) => current = n.parse::<u64>().ok(),
                    (Some("end"), Some(_), Some(what)) => {
                        *tally.entry(what.to_string()).or_default() += 1;
                        current = None;
                        next += 1;
                    }
                    _ => {}
                }
                if start.elapsed() >= budget {
                    let _ = child.kill();
                    break;
                }
            }
        }
        let status = child.wait();
        if let Some(n) = current {
            let code = status.as_ref().ok().and_then(|s| s.code());
            if start.elapsed() >= budget && code.is_none() {
                break; // killed at the deadline, mid-case
            }
            if code == Some(ASAN_EXIT) {
                reports += 1;
            } else {
                crashes += 1;
            }
            eprintln!(
                "case {n} (seed {}) ended its process ({status:?}):\n{}",
                args.seed,
                generate::case(args.seed, n).text
            );
            next = n + 1;
        }
    }
    let tried = next;
    let disagreed = tally.get("disagreed").copied().unwrap_or(0);
    let parts: Vec<String> = tally.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!(
        "tile-fuzz: {tried} programs in {:.0} s (seed {}, kernels {}): {}",
        start.elapsed().as_secs_f64(),
        args.seed,
        if args.asan {
            "with AddressSanitizer"
        } else {
            "plain"
        },
        parts.join(", ")
    );
    println!("crashes: {crashes}, sanitizer reports: {reports}, disagreements: {disagreed}");
    if crashes + reports + disagreed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
