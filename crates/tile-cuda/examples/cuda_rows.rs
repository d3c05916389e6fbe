//! Measures softmax, RMSNorm and LayerNorm (one row per block) on the GPU
//! against a device-to-device copy of one plane (read one plane, write
//! one) of the same shape, in the same run: the streaming kernel (every
//! pass reads the row from device memory) and the staged one (each row
//! copied once into shared memory), at several block sizes, and the
//! runtime's default choice of the two (`default`, what `tile bench` runs).
//!
//! `cargo run --release -p tile-cuda --example cuda_rows [MxN ...]` (needs a
//! GPU; default shapes 1024x4096 and 4096x4096).

use std::collections::BTreeMap;
use tile_ir::{fixture, Array, DType, Sizes};

mod timing;
use timing::per_call;

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
    let shapes = timing::shapes(&[(1024, 4096), (4096, 4096)]);
    println!("device: {}", gpu.name);
    println!(
        "{:<10} {:>11} {:>9} {:>6} {:>11} {:>8}",
        "program", "shape", "rows", "block", "device us", "vs copy"
    );
    for (m, n) in shapes {
        let bytes = m * n * 4;
        let src = gpu.alloc(bytes).expect("alloc");
        let dst = gpu.alloc(bytes).expect("alloc");
        let copy = per_call(&gpu, || gpu.copy(&dst, &src, bytes));
        let shape = format!("{m}x{n}");
        println!(
            "{:<10} {shape:>11} {:>9} {:>6} {:>11.2} {:>8.3}",
            "copy",
            "-",
            "-",
            copy * 1e6,
            1.0
        );
        for name in ["softmax", "rmsnorm", "layernorm"] {
            let text =
                std::fs::read_to_string(root.join(format!("tests/programs/controls/{name}.tile")))
                    .expect("program");
            let program = tile_ir::parse_program(&text).expect("parses");
            let plan = tile_plan::compile(&program, &tile_plan::Options::default()).expect("plans");
            let sizes = Sizes::from([("M".into(), m as i64), ("N".into(), n as i64)]);
            let mut arrays: BTreeMap<String, Array> =
                fixture::arguments(&program, &sizes).expect("arguments");
            arrays.insert("y".into(), Array::zeros(DType::F32, &[m, n]));
            use tile_cuda::RowStaging::{Always, Auto, Never};
            for (label, stage_rows, row_block, row_unroll) in [
                ("stream u1", Never, Some(128), 1),
                ("stream u1", Never, Some(256), 1),
                ("stream u2", Never, Some(128), 2),
                ("stream u2", Never, Some(256), 2),
                ("stream u4", Never, Some(256), 4),
                ("staged", Always, Some(128), tile_cuda::DEFAULT_ROW_UNROLL),
                ("staged", Always, Some(256), tile_cuda::DEFAULT_ROW_UNROLL),
                ("staged", Always, Some(512), tile_cuda::DEFAULT_ROW_UNROLL),
                ("staged", Always, Some(1024), tile_cuda::DEFAULT_ROW_UNROLL),
                ("staged", Always, None, tile_cuda::DEFAULT_ROW_UNROLL),
                ("default", Auto, None, tile_cuda::DEFAULT_ROW_UNROLL),
            ] {
                let opts = tile_cuda::CudaOptions {
                    stage_rows,
                    row_block,
                    row_unroll,
                    ..Default::default()
                };
                let module = tile_cuda::compile(&plan, &opts).expect("compiles");
                let b = module.bind(&arrays, &sizes).expect("binds");
                for _ in 0..10 {
                    module.launch(&b).expect("launch");
                }
                module.finish(&b).expect("runs");
                let dev = per_call(&gpu, || module.launch(&b));
                module.finish(&b).expect("runs");
                let block = row_block.map_or("auto".to_string(), |b| b.to_string());
                println!(
                    "{name:<10} {shape:>11} {:>9} {block:>6} {:>11.2} {:>8.3}",
                    label,
                    dev * 1e6,
                    dev / copy
                );
            }
        }
    }
}
