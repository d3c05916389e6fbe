//! Random contractions (`sum(k: a * b)` with either operand transposed and
//! an epilogue: a plain store, a bias, an activation's value and
//! derivative, a residual read, an in-place update) in `f32` and `f64` at
//! random shapes
//! (1, ragged, across the 960-row, 512-column and 256-deep blocks, and an
//! empty `k`): the plan finds the contraction, the C source tiles it, and
//! every output matches the FP64 interpreter within `f32` accumulation's
//! error (`atol 1e-5 * (K + 1)`, `rtol 1e-4`); batched products likewise.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tile_ir::{fixture, interp, Sizes};

fn check(text: &str, outputs: &[&str], m: i64, n: i64, kk: i64) -> Result<(), TestCaseError> {
    let sizes = Sizes::from([("M".into(), m), ("N".into(), n), ("K".into(), kk)]);
    check_at(text, outputs, &sizes)
}

/// [`check`] at any sizes (`B` too, for batched products).
fn check_at(text: &str, outputs: &[&str], sizes: &Sizes) -> Result<(), TestCaseError> {
    let program =
        tile_ir::parse_program(text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let plan = tile_plan::compile(&program, &tile_plan::Options::default())
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    prop_assert!(
        plan.kernels[0].contraction.is_some(),
        "not a contraction:\n{plan}\n{text}"
    );
    let opts = tile_cpu::CpuOptions {
        cache: true,
        threads: Some(2),
        ..tile_cpu::CpuOptions::default()
    };
    let source =
        tile_cpu::emit_c(&plan, &opts).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let helper = if text.contains("f64[") {
        "tile_gemm_f64("
    } else {
        "tile_gemm_f32("
    };
    prop_assert!(source.contains(helper), "{}", text);
    let module =
        tile_cpu::compile(&plan, &opts).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let args = fixture::arguments(&program, sizes).expect("arguments");
    let mut want = args.clone();
    interp::interpret(&program, &mut want, sizes)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let mut got = args;
    module
        .run(&mut got, sizes)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let atol = 1e-5 * (sizes["K"] + 1) as f64;
    for out in outputs {
        for e in 0..want[*out].len() {
            let (g, w) = (got[*out].get_f64(e), want[*out].get_f64(e));
            prop_assert!(
                (g - w).abs() <= atol + 1e-4 * w.abs(),
                "{out}[{e}] (flat) = {g}, interpreter {w}, {sizes:?}\n{text}"
            );
        }
    }
    Ok(())
}

#[test]
fn random_contractions_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 40,
        failure_persistence: None,
        ..Config::default()
    });
    // Small sizes, with at most one dimension across its block (rows 960,
    // columns 512, depth 256), so the FP64 interpreter stays quick.
    let strategy = (
        any::<bool>(),
        any::<bool>(),
        0usize..5,
        prop::sample::select(vec![1i64, 2, 5, 7, 13]),
        prop::sample::select(vec![1i64, 3, 16, 33, 47]),
        prop::sample::select(vec![0i64, 1, 4, 17, 40]),
        0usize..5,
        any::<bool>(),
    );
    runner
        .run(&strategy, |(a_t, b_t, which, m, n, kk, big, f64)| {
            let (m, n, kk) = match big {
                0 => (961, n.min(16), kk.min(17)),
                1 => (m, 515, kk.min(17)),
                2 => (m, n.min(16), 257),
                _ => (m, n, kk),
            };
            let (mut text, outputs) = fixture::contraction(a_t, b_t, which);
            if f64 {
                text = text.replace("f32", "f64");
            }
            check(&text, outputs, m, n, kk)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Batched products (`for h in 0..B, i in 0..M, j in 0..N`), each operand
/// one matrix per batch or one every batch shares, at batch counts that
/// take the column split (few batches: every batch over chunks of
/// columns) and the batch split (threads over batches).
#[test]
fn random_batched_contractions_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 40,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        (any::<bool>(), any::<bool>()),
        (any::<bool>(), any::<bool>()),
        0usize..5,
        prop::sample::select(vec![1i64, 2, 3, 200]),
        prop::sample::select(vec![1i64, 5, 13]),
        prop::sample::select(vec![1i64, 3, 33, 300]),
        prop::sample::select(vec![0i64, 1, 17]),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(t, batched, which, b, m, n, kk, f64)| {
            let (mut text, outputs) = fixture::batched_contraction(t, batched, which);
            if f64 {
                text = text.replace("f32", "f64");
            }
            // The interpreter's cost: a few million products at most.
            let n = if b == 200 { n.min(33) } else { n };
            let sizes = Sizes::from([
                ("B".into(), b),
                ("M".into(), m),
                ("N".into(), n),
                ("K".into(), kk),
            ]);
            check_at(&text, outputs, &sizes)
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn an_in_place_update_reads_the_old_value() {
    // y = y * 0.5 + a b: each element's old value is read where it is
    // written (the plan allows it: same element, same iteration).
    let text = "program c(a: in f32[M, K], b: in f32[K, N], y: inout f32[M, N]) {\n  for i in 0..M, j in 0..N {\n    y[i, j] = y[i, j] * 0.5 + sum(k in 0..K: a[i, k] * b[k, j])\n  }\n}\n";
    // Across the 960-row block, then across the 512-column block and the
    // 256-deep panel.
    check(text, &["y"], 970, 17, 9).unwrap();
    check(text, &["y"], 5, 515, 260).unwrap();
}
