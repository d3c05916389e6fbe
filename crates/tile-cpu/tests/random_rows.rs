//! Random row programs (two reductions over a row, the second using the
//! first, then a store loop using both; bodies mixing row loads, a weight
//! vector, a reversed load and constants, with calls whose values the
//! back end may cache in a scratch row) at random shapes: the CPU back end
//! matches the FP64 interpreter within the row tolerance
//! (`atol 1e-5, rtol 1e-4`).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tile_ir::{fixture, interp, Sizes};

fn row_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a[i, j]".to_string()),
        Just("b[i, j]".to_string()),
        Just("w[j]".to_string()),
        Just("a[i, N - 1 - j]".to_string()),
        (-20i32..20).prop_map(|k| format!("{:.2}", k as f64 / 8.0)),
    ];
    leaf.prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop_oneof![Just("+"), Just("-"), Just("*")]
            )
                .prop_map(|(x, y, o)| format!("({x} {o} {y})")),
            (
                inner.clone(),
                prop_oneof![Just("exp"), Just("tanh"), Just("sigmoid"), Just("abs")]
            )
                .prop_map(|(x, f)| format!("{f}({x} * 0.5)")),
            (inner.clone(), inner).prop_map(|(x, y)| format!("max({x}, {y})")),
        ]
    })
}

/// A body whose value may be cached: a call at the top.
fn cached_expr() -> impl Strategy<Value = String> {
    (
        row_expr(),
        prop_oneof![Just("exp"), Just("tanh"), Just("sigmoid")],
    )
        .prop_map(|(e, f)| format!("{f}({e} * 0.5)"))
}

#[test]
fn random_row_programs_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        row_expr(),
        cached_expr(),
        row_expr(),
        prop::sample::select(vec!["sum", "max", "min"]),
        any::<bool>(),
        prop::sample::select(vec![0i64, 1, 3, 17]),
        prop::sample::select(vec![1i64, 3, 15, 16, 17, 127, 1025]),
    );
    runner
        .run(&strategy, |(e1, e2, e3, op1, reuse, m, n)| {
            let e2: String = e2;
            // With `reuse`, the store loop computes the second reduction's
            // body again: the case a scratch row serves, and the source
            // must use one exactly then.
            let again = if reuse {
                format!(" + {e2} * 0.25")
            } else {
                String::new()
            };
            let text = format!(
                "program r(a: in f32[M, N], b: in f32[M, N], w: in f32[N], y: out f32[M, N]) {{\n  for i in 0..M {{\n    s = {op1}(j in 0..N: {e1})\n    t = sum(j in 0..N: {e2})\n    for j in 0..N {{\n      y[i, j] = {e3} + tanh(s * 0.01) * a[i, j] + tanh(t * 0.01){again}\n    }}\n  }}\n}}\n"
            );
            let program = tile_ir::parse_program(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let plan = tile_plan::compile(&program, &tile_plan::Options::default())
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let opts = tile_cpu::CpuOptions {
                cache: false,
                threads: Some(2),
                ..tile_cpu::CpuOptions::default()
            };
            let source = tile_cpu::emit_c(&plan, &opts)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            // A body with no load folds to a constant and is never cached;
            // without `reuse`, the store loop may still recompute a
            // reduction's body by chance (`e3` containing `e1` or `e2`).
            let by_chance = e3.contains(&e1) || e3.contains(&e2);
            if reuse && e2.contains('[') {
                prop_assert!(source.contains("tile_scratch("), "{}", text);
            }
            if !reuse && !by_chance {
                prop_assert!(!source.contains("tile_scratch("), "{}", text);
            }
            let module = tile_cpu::compile(&plan, &opts)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let sizes = Sizes::from([("M".into(), m), ("N".into(), n)]);
            let args = fixture::arguments(&program, &sizes).expect("arguments");
            let mut want = args.clone();
            interp::interpret(&program, &mut want, &sizes)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let mut got = args;
            module
                .run(&mut got, &sizes)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            for k in 0..want["y"].len() {
                let (g, w) = (got["y"].get_f64(k), want["y"].get_f64(k));
                prop_assert!(
                    (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
                    "y[{k}] (flat) = {g}, interpreter {w}, M={m} N={n}\n{text}"
                );
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
