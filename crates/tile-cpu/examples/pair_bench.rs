//! Times the fused sigmoid and GELU value/derivative pairs at 4096x4096
//! `f32`, the same with fusion off, and a copy of the same bytes (read one
//! plane, write two) on as many threads: the median of 20 runs after
//! warm-up, in GB/s of bytes moved (one plane read, two written).
//!
//! Variants run interleaved, one run each per round, so that drift in the
//! machine's bandwidth affects them alike and the ratios stay meaningful.
//!
//! `cargo run --release -p tile-cpu --example pair_bench [ROWS COLS]`

use std::time::Instant;
use tile_cpu::{CpuModule, CpuOptions, RawArg};
use tile_ir::{DType, Sizes};

const RUNS: usize = 20;
const WARMUP: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn raw(name: &str, v: &mut [f32], shape: &[usize]) -> RawArg {
    RawArg {
        name: name.to_string(),
        dtype: DType::F32,
        shape: shape.to_vec(),
        addr: v.as_mut_ptr() as u64,
        bytes: std::mem::size_of_val(v),
    }
}

/// What one variant runs.
enum Variant {
    /// One pass: read each element once, store it to both planes.
    CopyOnePass,
    /// Two `memcpy`s of the thread's part (the C library's copy).
    CopyTwice,
    /// A compiled pair.
    Tile(Box<CpuModule>),
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rows = args.first().copied().unwrap_or(4096);
    let cols = args.get(1).copied().unwrap_or(4096);
    let shape = [rows, cols];
    let n = rows * cols;
    let threads = CpuOptions::default().thread_count();
    let bytes = 3.0 * (n * 4) as f64;
    println!(
        "{rows}x{cols} f32, {threads} threads, median of {RUNS} interleaved runs, \
         GB/s of 1 plane read + 2 written"
    );

    // Inputs as in docs/benchmarking.md.
    let mut x: Vec<f32> = (0..n)
        .map(|k| {
            let k = k as f64;
            ((k * 0.618_033_988_749_894_9 + 0.123_456_7).fract() * 2.0 - 1.0 + 1e-3 * k.sin())
                as f32
        })
        .collect();
    let mut value = vec![0f32; n];
    let mut grad = vec![0f32; n];

    let mut variants: Vec<(String, Variant)> = vec![
        ("copy, one pass".to_string(), Variant::CopyOnePass),
        ("copy, two memcpy".to_string(), Variant::CopyTwice),
    ];
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    for name in ["sigmoid_pair", "gelu_pair"] {
        let text = std::fs::read_to_string(format!("{root}/{name}.tile")).expect("example");
        let program = tile_ir::parse_program(&text).expect("parses");
        for fusion in [true, false] {
            let plan = tile_plan::compile(&program, &tile_plan::Options { fusion }).expect("plans");
            let module = tile_cpu::compile(&plan, &CpuOptions::default()).expect("compiles");
            let label = format!("{name} {}", if fusion { "fused" } else { "split" });
            variants.push((label, Variant::Tile(Box::new(module))));
        }
    }

    let chunk = n.div_ceil(threads);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
    for round in 0..WARMUP + RUNS {
        for (v, (_, variant)) in variants.iter().enumerate() {
            let t = Instant::now();
            match variant {
                Variant::CopyOnePass | Variant::CopyTwice => std::thread::scope(|s| {
                    let parts = x
                        .chunks(chunk)
                        .zip(value.chunks_mut(chunk))
                        .zip(grad.chunks_mut(chunk));
                    for ((src, d1), d2) in parts {
                        let once = matches!(variant, Variant::CopyOnePass);
                        s.spawn(move || {
                            if once {
                                for ((a, b), c) in src.iter().zip(d1.iter_mut()).zip(d2.iter_mut())
                                {
                                    *b = *a;
                                    *c = *a;
                                }
                            } else {
                                d1.copy_from_slice(src);
                                d2.copy_from_slice(src);
                            }
                        });
                    }
                }),
                Variant::Tile(module) => {
                    let args = [
                        raw("x", &mut x, &shape),
                        raw("value", &mut value, &shape),
                        raw("grad", &mut grad, &shape),
                    ];
                    // SAFETY: three distinct live vectors of the right size.
                    unsafe { module.run_raw(&args, &Sizes::new()) }.expect("runs");
                }
            }
            if round >= WARMUP {
                times[v].push(t.elapsed().as_secs_f64());
            }
        }
    }

    let medians: Vec<f64> = times.into_iter().map(median).collect();
    let floor = medians[0].min(medians[1]);
    for (v, (label, variant)) in variants.iter().enumerate() {
        let secs = medians[v];
        let mut line = format!(
            "{label:<20} {:8.3} ms {:7.2} GB/s",
            secs * 1e3,
            bytes / secs / 1e9
        );
        if let Variant::Tile(module) = variant {
            line.push_str(&format!("  {:.2}x copy floor", secs / floor));
            if label.ends_with("split") {
                line.push_str(&format!(", {:.2}x fused", secs / medians[v - 1]));
            } else {
                line.push_str(&format!("  ({} lanes)", module.lanes()));
            }
        }
        println!("{line}");
    }
}
