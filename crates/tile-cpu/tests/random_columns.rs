//! Random column programs (per-column results stored straight from
//! reductions down the rows, the second using the first; bodies mixing
//! column loads, a per-row weight, a reversed load and constants) at
//! random shapes, ragged and 1-element included: they plan as
//! `column_reduction` and the CPU back end matches the FP64 interpreter
//! within the reduction tolerance (`atol 1e-5, rtol 1e-4`).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tile_ir::{fixture, interp, Sizes};

fn col_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a[i, j]".to_string()),
        Just("b[i, j]".to_string()),
        Just("w[i]".to_string()),
        Just("a[M - 1 - i, j]".to_string()),
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

#[test]
fn random_column_programs_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        col_expr(),
        col_expr(),
        prop::sample::select(vec!["sum", "max", "min"]),
        prop::sample::select(vec![0i64, 1, 3, 17, 300]),
        prop::sample::select(vec![1i64, 3, 15, 16, 17, 127, 1025]),
    );
    runner
        .run(&strategy, |(e1, e2, op1, m, n)| {
            // The first load decides the orientation: a body of constants
            // only has nothing to walk.
            let text = format!(
                "program c(a: in f32[M, N], b: in f32[M, N], w: in f32[M], y: out f32[N], z: out f32[N]) {{\n  for j in 0..N {{\n    s = {op1}(i in 0..M: a[i, j] * 0.5 + {e1})\n    y[j] = s * 0.5 + sum(i in 0..M: tanh({e2} * 0.5))\n    z[j] = max(i in 0..M: {e2}) - s\n  }}\n}}\n"
            );
            let program = tile_ir::parse_program(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let plan = tile_plan::compile(&program, &tile_plan::Options::default())
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(
                plan.kernels[0].mapping,
                tile_plan::Mapping::ColumnReduction,
                "{}",
                text
            );
            let opts = tile_cpu::CpuOptions {
                cache: false,
                threads: Some(2),
                ..tile_cpu::CpuOptions::default()
            };
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
            for out in ["y", "z"] {
                for k in 0..want[out].len() {
                    let (g, w) = (got[out].get_f64(k), want[out].get_f64(k));
                    prop_assert!(
                        g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
                        "{out}[{k}] = {g}, interpreter {w}, M={m} N={n}\n{text}"
                    );
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
