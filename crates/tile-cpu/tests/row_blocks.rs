//! Row kernels whose inner loop reads down columns (matrix products) run
//! in blocks of the loop's iterations (tile-plan's
//! `interchange_row_loops`): against the interpreter at lengths around the
//! block size (one, a full block, one more, several with a ragged end),
//! with an empty reduction range, a loop that does not start at 0, and
//! bindings and several statements in the loop.

mod common;

use tile_ir::Sizes;

const MATMUL: &str = include_str!("../../../tests/programs/matrix/matmul.tile");

const SEVERAL: &str =
    "program several(a: in f32[M, K], b: in f32[K, N], c: out f32[M, N], d: out f32[M, N]) {
  for i in 0..M {
    for j in 1..N {
      t = sum(k in 0..K: a[i, k] * b[k, j - 1])
      c[i, j] = t * 0.5 + f32(j)
      d[i, j] = max(k in 0..K: b[k, j]) - t
    }
  }
}";

#[test]
fn blocked_inner_loops_match_the_interpreter() {
    let block = tile_plan::COLUMN_BLOCK;
    for text in [MATMUL, SEVERAL] {
        let program = tile_ir::parse_program(text).unwrap();
        for fusion in [true, false] {
            let (plan, module) = common::build(&program, fusion);
            assert!(
                plan.kernels
                    .iter()
                    .any(|k| k.interchanged.as_ref().is_some_and(|c| !c.loops.is_empty())),
                "{}: no kernel runs its inner loop in blocks:\n{plan}",
                program.name
            );
            for n in [1, 2, block - 1, block, block + 1, 2 * block + 5] {
                for k in [0, 1, 5] {
                    let sizes = Sizes::from([("M".into(), 3), ("N".into(), n), ("K".into(), k)]);
                    let what = format!("{} N={n} K={k} (fusion {fusion})", program.name);
                    if let Err(m) = common::compare(&program, &module, &sizes, &what) {
                        panic!("{m}");
                    }
                }
            }
        }
    }
}

/// Random product-like loops: a reduction (sum, max or min) over `k` of a
/// random expression of `a[i, k]`, `b[k, j]` and constants, used by one or
/// two statements, at random shapes around the block size.
#[test]
fn random_blocked_loops_match_the_interpreter() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let leaf = prop_oneof![
        Just("a[i, k]".to_string()),
        Just("b[k, j]".to_string()),
        (-8i32..8).prop_map(|c| format!("{:.2}", c as f64 / 4.0)),
    ];
    let body = leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop_oneof![Just("+"), Just("-"), Just("*")]
            )
                .prop_map(|(x, y, o)| format!("({x} {o} {y})")),
            inner.prop_map(|x| format!("tanh({x})")),
        ]
    });
    let strategy = (
        body,
        prop::sample::select(vec!["sum", "max", "min"]),
        any::<bool>(),
        prop::sample::select(vec![1i64, 3]),
        prop::sample::select(vec![1i64, 7, 2049]),
        prop::sample::select(vec![0i64, 1, 3, 17]),
    );
    let mut runner = TestRunner::new(Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |(e, op, two, m, n, k)| {
            // Every body reads `b[k, j]`, so the loop reads down columns.
            let second = if two {
                "\n      d[i, j] = t * t + f32(j)"
            } else {
                ""
            };
            let text = format!(
                "program p(a: in f32[M, K], b: in f32[K, N], c: out f32[M, N], d: out f32[M, N]) {{\n  for i in 0..M {{\n    for j in 0..N {{\n      t = {op}(k in 0..K: {e} + b[k, j])\n      c[i, j] = t * 0.5{second}\n    }}\n  }}\n}}\n"
            );
            let program = tile_ir::parse_program(&text)
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            let (plan, module) = common::build(&program, true);
            prop_assert!(
                plan.kernels.iter().any(|k| k.interchanged.is_some()),
                "not blocked:\n{text}\n{plan}"
            );
            let sizes = Sizes::from([("M".into(), m), ("N".into(), n), ("K".into(), k)]);
            common::compare(&program, &module, &sizes, &text).map_err(TestCaseError::fail)
        })
        .unwrap();
}

/// A loop whose bound reads a buffer the loop writes keeps the plain loop
/// (the bound is read once, as the interpreter reads it), and runs as the
/// interpreter does.
#[test]
fn a_bound_read_from_memory_keeps_the_plain_loop() {
    let text = "program p(a: in f32[M, K], b: in f32[K, N], c: inout i32[M, N]) {
  for i in 0..M {
    for j in 0..c[i, 0] {
      c[i, j] = i32(sum(k in 0..K: a[i, k] * b[k, j]))
    }
  }
}";
    let program = tile_ir::parse_program(text).unwrap();
    let (plan, module) = common::build(&program, true);
    assert!(
        plan.kernels.iter().all(|k| k.interchanged.is_none()),
        "{plan}"
    );
    for (n, k) in [(1, 1), (5, 3), (2049, 2)] {
        let sizes = Sizes::from([("M".into(), 3), ("N".into(), n), ("K".into(), k)]);
        if let Err(m) = common::compare(&program, &module, &sizes, "bound from memory") {
            panic!("{m}");
        }
    }
}
