//! Measures softmax, RMSNorm and LayerNorm (one row per block) at
//! 4096x4096 f32 on the GPU against a device-to-device copy of one plane
//! (read one plane, write one), in the same run.
//!
//! `cargo run --release -p tile-cuda --example cuda_rows` (needs a GPU).

use std::collections::BTreeMap;
use tile_ir::{fixture, Array, DType, Sizes};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let gpu = match tile_cuda::gpu() {
        Ok(g) => g,
        Err(e) => {
            println!("SKIPPED cuda_rows: {e}");
            return;
        }
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::env::var("TILE_SOURCE_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or(root);
    let (m, n) = (4096usize, 4096usize);
    let bytes = m * n * 4;
    let src = gpu.alloc(bytes).expect("alloc");
    let dst = gpu.alloc(bytes).expect("alloc");
    let t1 = gpu.time(|| gpu.copy(&dst, &src, bytes)).expect("copy");
    let reps = ((0.03 / t1.max(1e-7)) as usize).clamp(10, 20000);
    let copy = median(
        (0..9)
            .map(|_| {
                gpu.time(|| (0..reps).try_for_each(|_| gpu.copy(&dst, &src, bytes)))
                    .expect("copy")
                    / reps as f64
            })
            .collect(),
    );
    println!(
        "device: {}; copy of one {m}x{n} f32 plane: {:.2} us",
        gpu.name,
        copy * 1e6
    );
    println!("{:<10} {:>12} {:>10}", "program", "device us", "vs copy");
    for name in ["softmax", "rmsnorm", "layernorm"] {
        let text =
            std::fs::read_to_string(root.join(format!("tests/programs/controls/{name}.tile")))
                .expect("program");
        let program = tile_ir::parse_program(&text).expect("parses");
        let plan = tile_plan::compile(&program, &tile_plan::Options::default()).expect("plans");
        let module = tile_cuda::compile(&plan, &Default::default()).expect("compiles");
        let sizes = Sizes::from([("M".into(), m as i64), ("N".into(), n as i64)]);
        let mut arrays: BTreeMap<String, Array> =
            fixture::arguments(&program, &sizes).expect("arguments");
        arrays.insert("y".into(), Array::zeros(DType::F32, &[m, n]));
        let b = module.bind(&arrays, &sizes).expect("binds");
        for _ in 0..10 {
            module.launch(&b).expect("launch");
        }
        module.finish(&b).expect("runs");
        let t1 = gpu.time(|| module.launch(&b)).expect("time");
        let reps = ((0.03 / t1.max(1e-7)) as usize).clamp(10, 20000);
        let dev = median(
            (0..9)
                .map(|_| {
                    gpu.time(|| (0..reps).try_for_each(|_| module.launch(&b)))
                        .expect("time")
                        / reps as f64
                })
                .collect(),
        );
        println!("{name:<10} {:>12.2} {:>10.3}", dev * 1e6, dev / copy);
    }
}
