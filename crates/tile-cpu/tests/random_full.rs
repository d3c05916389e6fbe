//! Random full reductions (a store outside any nest holding one reduction,
//! over a vector or over the rows of a matrix with a reduction per row) at
//! random sizes, empty and 1-element included: they plan as
//! `full_reduction`, match the FP64 interpreter within the reduction
//! tolerance, and give the same bits with one thread and with two (the
//! chunks depend on the range's length only).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tile_ir::{fixture, interp, Sizes};

fn leaf_expr(var: &'static str) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just(format!("x[{var}]")),
        Just(format!("w[{var}]")),
        Just(format!("x[N - 1 - {var}]")),
        (-20i32..20).prop_map(|k| format!("{:.2}", k as f64 / 8.0)),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                inner.clone(),
                prop_oneof![Just("+"), Just("-"), Just("*")]
            )
                .prop_map(|(x, y, o)| format!("({x} {o} {y})")),
            (
                inner.clone(),
                prop_oneof![Just("exp"), Just("tanh"), Just("abs")]
            )
                .prop_map(|(x, f)| format!("{f}({x} * 0.5)")),
        ]
    })
}

#[test]
fn random_full_reductions_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        leaf_expr("i"),
        prop::sample::select(vec!["sum", "max", "min"]),
        prop::sample::select(vec!["sum", "max", "min"]),
        any::<bool>(),
        prop::sample::select(vec![0i64, 1, 3, 255, 257, 1000, 40_000]),
        prop::sample::select(vec![1i64, 5, 130]),
    );
    runner
        .run(&strategy, |(e, op, inner, matrix, n, m)| {
            // Over a vector, or over the rows of a matrix (each row's
            // reduction inside the split one).
            let text = if matrix {
                let row = &e;
                format!(
                    "program f(x: in f32[N], w: in f32[N], a: in f32[N, M], t: out f32[2]) {{\n  t[1] = 0.5 * {op}(i in 0..N: {row} + {inner}(j in 0..M: a[i, j] * 0.25))\n}}\n"
                )
            } else {
                format!(
                    "program f(x: in f32[N], w: in f32[N], a: in f32[N, M], t: out f32[2]) {{\n  t[0] = {op}(i in 0..N: {e}) * 0.5 + 1.0\n}}\n"
                )
            };
            let program = tile_ir::parse_program(&text)
                .map_err(|er| TestCaseError::fail(format!("{er}\n{text}")))?;
            let plan = tile_plan::compile(&program, &tile_plan::Options::default())
                .map_err(|er| TestCaseError::fail(format!("{er}\n{text}")))?;
            prop_assert_eq!(
                plan.kernels[0].mapping,
                tile_plan::Mapping::FullReduction,
                "{}",
                text
            );
            let sizes = Sizes::from([("N".into(), n), ("M".into(), m)]);
            let args = fixture::arguments(&program, &sizes).expect("arguments");
            let mut want = args.clone();
            interp::interpret(&program, &mut want, &sizes)
                .map_err(|er| TestCaseError::fail(format!("{er}\n{text}")))?;
            let mut runs = Vec::new();
            for threads in [1, 2] {
                let opts = tile_cpu::CpuOptions {
                    cache: false,
                    threads: Some(threads),
                    ..tile_cpu::CpuOptions::default()
                };
                let module = tile_cpu::compile(&plan, &opts)
                    .map_err(|er| TestCaseError::fail(format!("{er}\n{text}")))?;
                let mut got = args.clone();
                module
                    .run(&mut got, &sizes)
                    .map_err(|er| TestCaseError::fail(format!("{er}\n{text}")))?;
                runs.push(got);
            }
            for k in 0..2 {
                let (g, w) = (runs[1]["t"].get_f64(k), want["t"].get_f64(k));
                let one = runs[0]["t"].get_f64(k);
                prop_assert!(
                    g.to_bits() == one.to_bits(),
                    "t[{k}]: {g} with two threads, {one} with one\n{text}"
                );
                prop_assert!(
                    g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
                    "t[{k}] = {g}, interpreter {w}, N={n} M={m}\n{text}"
                );
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
