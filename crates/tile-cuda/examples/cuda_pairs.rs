//! Measures the fused sigmoid and GELU pairs on the GPU against a
//! device-to-device copy of the same bytes (read one plane, write two), in
//! the same run: device time per invocation (events around a calibrated
//! batch) and host end-to-end time of one call (launch plus synchronise).
//!
//! `cargo run --release -p tile-cuda --example cuda_pairs` (needs a GPU).

use std::collections::BTreeMap;
use std::time::Instant;
use tile_ir::{fixture, Array, DType, Sizes};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let gpu = match tile_cuda::gpu() {
        Ok(g) => g,
        Err(e) => {
            println!("SKIPPED cuda_pairs: {e}");
            return;
        }
    };
    println!("device: {} ({} SMs)", gpu.name, gpu.sm_count);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::env::var("TILE_SOURCE_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or(root);
    println!(
        "{:<14} {:>10} {:>6} {:>12} {:>12} {:>10} {:>12} {:>12}",
        "pair", "shape", "entry", "device us", "copy us", "vs copy", "e2e 1 call", "split dev us"
    );
    for name in ["sigmoid_pair", "gelu_pair"] {
        let text =
            std::fs::read_to_string(root.join(format!("examples/{name}.tile"))).expect("example");
        let program = tile_ir::parse_program(&text).expect("parses");
        for (m, n) in [(1usize, 127usize), (37, 1537), (1024, 4096), (4096, 4096)] {
            for (vec4, unroll) in [(true, 1), (false, 1), (true, 4)] {
                let mut row = Vec::new();
                for fusion in [true, false] {
                    let plan = tile_plan::compile(&program, &tile_plan::Options { fusion })
                        .expect("plans");
                    let opts = tile_cuda::CudaOptions {
                        vec4,
                        unroll,
                        ..Default::default()
                    };
                    let module = tile_cuda::compile(&plan, &opts).expect("compiles");
                    let xs: Vec<f64> = (0..m * n).map(|k| fixture::input_value(k, 0)).collect();
                    let arrays = BTreeMap::from([
                        ("x".to_string(), Array::from_f64(DType::F32, &[m, n], &xs)),
                        ("value".to_string(), Array::zeros(DType::F32, &[m, n])),
                        ("grad".to_string(), Array::zeros(DType::F32, &[m, n])),
                    ]);
                    let b = module.bind(&arrays, &Sizes::new()).expect("binds");
                    for _ in 0..20 {
                        module.launch(&b).expect("launch");
                    }
                    module.finish(&b).expect("runs");
                    // Calibrate a ~30 ms batch.
                    let t1 = gpu.time(|| module.launch(&b)).expect("time");
                    let reps = ((0.03 / t1.max(1e-7)) as usize).clamp(10, 20000);
                    let dev: Vec<f64> = (0..9)
                        .map(|_| {
                            gpu.time(|| (0..reps).try_for_each(|_| module.launch(&b)))
                                .expect("time")
                                / reps as f64
                        })
                        .collect();
                    let e2e: Vec<f64> = (0..50)
                        .map(|_| {
                            let t = Instant::now();
                            module.launch(&b).expect("launch");
                            gpu.sync().expect("sync");
                            t.elapsed().as_secs_f64()
                        })
                        .collect();
                    row.push((median(dev), median(e2e)));
                    if fusion {
                        // The copy floor: 1.5 planes copied = 3 planes of traffic.
                        let bytes = m * n * 4 * 3 / 2;
                        let src = gpu.alloc(bytes).expect("alloc");
                        let dst = gpu.alloc(bytes).expect("alloc");
                        let t1 = gpu.time(|| gpu.copy(&dst, &src, bytes)).expect("copy");
                        let reps = ((0.03 / t1.max(1e-7)) as usize).clamp(10, 20000);
                        let copy: Vec<f64> = (0..9)
                            .map(|_| {
                                gpu.time(|| (0..reps).try_for_each(|_| gpu.copy(&dst, &src, bytes)))
                                    .expect("copy")
                                    / reps as f64
                            })
                            .collect();
                        row.push((median(copy), 0.0));
                    }
                }
                let (dev, e2e) = row[0];
                let copy = row[1].0;
                let split = row[2].0;
                println!(
                    "{name:<14} {:>10} {:>6} {:>12.2} {:>12.2} {:>10.3} {:>12.2} {:>12.2}",
                    format!("{m}x{n}"),
                    if vec4 {
                        format!("v4 u{unroll}")
                    } else {
                        "scalar".into()
                    },
                    dev * 1e6,
                    copy * 1e6,
                    dev / copy,
                    e2e * 1e6,
                    split * 1e6
                );
            }
        }
    }
}
