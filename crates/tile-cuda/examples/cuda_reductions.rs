//! Measures the per-row, per-column and whole-array reductions of
//! `tests/programs/reductions` on the GPU against a device-to-device copy
//! moving the same bytes (a copy of half of them: it reads them and writes
//! them), in the same run; column kernels at several slice counts too
//! (threads per column, `CudaOptions::col_slices`), `auto` being what
//! `tile bench` runs.
//!
//! `cargo run --release -p tile-cuda --example cuda_reductions [MxN ...]`
//! (needs a GPU; default shapes 1024x4096 and 4096x4096).

use tile_ir::{fixture, Sizes};

mod timing;
use timing::per_call;

fn main() {
    let gpu = match tile_cuda::gpu() {
        Ok(g) => g,
        Err(e) => {
            println!("SKIPPED cuda_reductions: {e}");
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
        "{:<12} {:>11} {:>16} {:>9} {:>11} {:>11} {:>8} {:>8}",
        "program", "shape", "mapping", "slices", "device us", "copy us", "vs copy", "GB/s"
    );
    for (m, n) in shapes {
        for name in ["row_lse", "row_norm", "col_sum", "col_moments", "full_sum"] {
            let text = std::fs::read_to_string(
                root.join(format!("tests/programs/reductions/{name}.tile")),
            )
            .expect("program");
            let program = tile_ir::parse_program(&text).expect("parses");
            let plan = tile_plan::compile(&program, &tile_plan::Options::default()).expect("plans");
            let sizes = Sizes::from([("M".into(), m as i64), ("N".into(), n as i64)]);
            let arrays = fixture::arguments(&program, &sizes).expect("arguments");
            // Bytes the kernel moves: every input read once, every output
            // written once.
            let moved: usize = arrays.values().map(|a| a.len() * 4).sum();
            let half = moved.div_ceil(2);
            let src = gpu.alloc(half).expect("alloc");
            let dst = gpu.alloc(half).expect("alloc");
            let copy = per_call(&gpu, || gpu.copy(&dst, &src, half));
            let mapping = plan.kernels[0].mapping;
            let slices: Vec<Option<u32>> = if mapping == tile_plan::Mapping::ColumnReduction {
                vec![None, Some(1), Some(4), Some(8), Some(16), Some(32)]
            } else {
                vec![None]
            };
            for col_slices in slices {
                let opts = tile_cuda::CudaOptions {
                    col_slices,
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
                println!(
                    "{name:<12} {:>11} {:>16} {:>9} {:>11.2} {:>11.2} {:>8.3} {:>8.0}",
                    format!("{m}x{n}"),
                    mapping.name(),
                    col_slices.map_or("auto".to_string(), |s| s.to_string()),
                    dev * 1e6,
                    copy * 1e6,
                    dev / copy,
                    moved as f64 / dev / 1e9
                );
            }
        }
    }
}
