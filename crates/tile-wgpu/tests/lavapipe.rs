//! Every fixture the wgpu target prints, run on a wgpu adapter (Mesa's
//! lavapipe on a machine with no GPU) at the shapes of its `# run:` lines
//! and at ragged ones, fusion on and off, against the FP64 interpreter.
//! Skips with a message when no adapter exists, unless
//! `TILE_WGPU_REQUIRE=1` (CI sets it after installing lavapipe).
#![cfg(feature = "runtime")]

mod common;

use common::module;
use std::path::Path;
use tile_ir::DType;
use tile_wgpu::WgpuError;

fn close(dtype: DType, got: f64, want: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    match dtype {
        DType::F32 => got == want || (got - want).abs() <= 2e-6 + 2e-5 * want.abs(),
        _ => got == want,
    }
}

/// Fixtures whose threads loop more than 65,535 times at large shapes
/// (llvmpipe's limit: see the skip below). The batched products run on
/// wgpu as row kernels over the batches, each walking its `M x N`
/// products in order (wgpu does not tile contractions).
const LONG_LOOPS: &[&str] = &["triple_nested", "batched_gemm", "bmm"];

#[test]
fn every_printed_fixture_matches_the_interpreter() {
    // TILE_SOURCE_ROOT: the repository, where the test binary runs away
    // from its build tree (the GPU machine).
    let root = std::env::var("TILE_SOURCE_ROOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let paths = tile_ir::fixture::tile_files(&[root.join("examples"), root.join("tests/programs")]);
    let (mut ran, mut failures, mut adapter) = (0, Vec::new(), String::new());
    let mut refused = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let Ok(programs) = tile_ir::parse_file(&text) else {
            continue;
        };
        for program in &programs {
            let mut shapes = tile_ir::fixture::run_lines(&text);
            // Ragged shapes, and one of multiples of four, where the
            // element kernels' `_v4` entry points run.
            for v in [[1i64, 1, 1], [3, 127, 5], [5, 1029, 3], [4, 132, 8]] {
                shapes.push(
                    program
                        .size_symbols()
                        .iter()
                        .zip(v.iter().cycle())
                        .map(|(s, v)| (s.clone(), *v))
                        .collect(),
                );
            }
            for fusion in [true, false] {
                let Ok(plan) = tile_plan::compile(program, &tile_plan::Options { fusion }) else {
                    continue;
                };
                if tile_wgpu::emit_wgsl(&plan).is_err() {
                    continue;
                }
                let Some(m) = module(&plan) else {
                    return;
                };
                adapter = m.adapter().to_string();
                for sizes in &shapes {
                    let Some(args) = tile_ir::fixture::arguments(program, sizes) else {
                        continue;
                    };
                    let what = format!(
                        "{} `{}` fusion {fusion} {sizes:?}",
                        path.display(),
                        program.name
                    );
                    // Mesa's llvmpipe stops every loop of an invocation
                    // after 65,535 iterations in all, without an error
                    // (gallivm's loop limiter); a nested reduction over a
                    // long row passes that on one thread.
                    if adapter.contains("llvmpipe")
                        && LONG_LOOPS.contains(&program.name.as_str())
                        && sizes.values().any(|&v| v > 64)
                    {
                        eprintln!("skipped on llvmpipe (its 65,535-iteration loop limit): {what}");
                        continue;
                    }
                    let mut want = args.clone();
                    let interp = tile_ir::interp::interpret(program, &mut want, sizes);
                    let mut got = args.clone();
                    ran += 1;
                    match (interp, m.run(&mut got, sizes)) {
                        (Ok(()), Ok(())) => {}
                        (
                            Err(_),
                            Err(WgpuError::OutOfBounds { .. } | WgpuError::IntArith { .. }),
                        ) => {
                            // A failed call changes nothing.
                            if got != args {
                                failures
                                    .push(format!("{what}: a failed call changed its arguments"));
                            }
                            continue;
                        }
                        (Err(_), Err(WgpuError::Args(_))) => continue,
                        // Integer arithmetic on loaded `i32` values may
                        // leave 32 bits, where the interpreter computes in
                        // 64: refused before launch, by name.
                        (Ok(()), Err(WgpuError::Range(e))) => {
                            refused.push(format!("{what}: {e}"));
                            continue;
                        }
                        (a, b) => {
                            failures.push(format!("{what}: interpreter {a:?}, wgpu {b:?}"));
                            continue;
                        }
                    }
                    for p in program.params.iter().filter(|p| p.role.is_written()) {
                        let (g, w) = (&got[&p.name], &want[&p.name]);
                        if let Some(k) =
                            (0..w.len()).find(|&k| !close(p.dtype, g.get_f64(k), w.get_f64(k)))
                        {
                            failures.push(format!(
                                "{what}: `{}`[{k}] = {:e}, interpreter {:e}",
                                p.name,
                                g.get_f64(k),
                                w.get_f64(k)
                            ));
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "wgpu on {adapter}: {ran} runs, {} refused by the 32-bit range proof:\n{}",
        refused.len(),
        refused.join("\n")
    );
    assert!(
        refused.len() * 20 < ran,
        "{} of {ran} runs refused",
        refused.len()
    );
    assert!(ran >= 100, "only {ran} runs");
    assert!(
        failures.is_empty(),
        "{} of {ran} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
