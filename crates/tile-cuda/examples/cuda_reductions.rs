//! Measures the per-row, per-column and whole-array reductions of
//! `tests/programs/reductions` on the GPU against a device-to-device copy
//! moving the same bytes (a copy of half of them: it reads them and writes
//! them), in the same run; column kernels at several slice counts and row kernels
//! staged or streaming at several block sizes too, `auto` being what
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
        "{:<12} {:>11} {:>16} {:>12} {:>11} {:>11} {:>8} {:>8}",
        "program", "shape", "mapping", "variant", "device us", "copy us", "vs copy", "GB/s"
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
            for (variant, opts) in variants(mapping) {
                let module = tile_cuda::compile(&plan, &opts).expect("compiles");
                let b = module.bind(&arrays, &sizes).expect("binds");
                for _ in 0..10 {
                    module.launch(&b).expect("launch");
                }
                module.finish(&b).expect("runs");
                let dev = per_call(&gpu, || module.launch(&b));
                module.finish(&b).expect("runs");
                println!(
                    "{name:<12} {:>11} {:>16} {:>12} {:>11.2} {:>11.2} {:>8.3} {:>8.0}",
                    format!("{m}x{n}"),
                    mapping.name(),
                    variant,
                    dev * 1e6,
                    copy * 1e6,
                    dev / copy,
                    moved as f64 / dev / 1e9
                );
            }
        }
    }
}

/// The launch variants measured per mapping, `auto` (what `tile bench`
/// runs) first: column kernels at several slice counts; row kernels staged
/// and streaming at several block sizes.
fn variants(mapping: tile_plan::Mapping) -> Vec<(String, tile_cuda::CudaOptions)> {
    use tile_cuda::{CudaOptions, RowStaging};
    let mut v = vec![("auto".to_string(), CudaOptions::default())];
    match mapping {
        tile_plan::Mapping::ColumnReduction => {
            for s in [1, 4, 8, 16, 32] {
                let opts = CudaOptions {
                    col_slices: Some(s),
                    ..Default::default()
                };
                v.push((format!("slices {s}"), opts));
            }
        }
        tile_plan::Mapping::RowReduction => {
            for (staged, block, unroll) in [
                (false, 128, 1),
                (false, 128, 2),
                (false, 128, 4),
                (false, 256, 1),
                (false, 256, 2),
                (false, 256, 4),
                (false, 512, 2),
                (true, 256, 2),
                (true, 512, 2),
                (true, 1024, 2),
            ] {
                let opts = CudaOptions {
                    stage_rows: if staged {
                        RowStaging::Always
                    } else {
                        RowStaging::Never
                    },
                    row_block: Some(block),
                    row_unroll: unroll,
                    ..Default::default()
                };
                v.push((
                    format!(
                        "{} {block} u{unroll}",
                        if staged { "staged" } else { "stream" }
                    ),
                    opts,
                ));
            }
        }
        tile_plan::Mapping::FullReduction => {
            for unroll in [1, 2, 4] {
                let opts = CudaOptions {
                    row_unroll: unroll,
                    ..Default::default()
                };
                v.push((format!("u{unroll}"), opts));
            }
        }
        _ => {}
    }
    v
}
