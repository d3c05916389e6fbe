//! Random element-wise programs (1-3 stores over `i in 0..M, j in 0..N`,
//! random expression trees over every math function, plain, permuted and
//! conditional stores, shared bindings, contiguous, uniform and reversed
//! loads) at random shapes including 0, 1, vector-width multiples and
//! ragged sizes: the CPU back end matches the FP64 interpreter, fusion on
//! and off.
//!
//! Every generated operator keeps values in [-1, 1] with a derivative of
//! at most about 1, so `f32` rounding errors add up instead of growing;
//! discontinuous operators (`floor`, `ceil`, `i32`, comparisons) apply
//! only to inputs scaled exactly, so `f32` and FP64 agree on which side of
//! a step a value lies.

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// A leaf: a load or a literal.
fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a[i, j]".to_string()),
        Just("b[i, j]".to_string()),
        Just("a[i, 0]".to_string()),
        Just("b[i, N - 1 - j]".to_string()),
        Just("a[0, j]".to_string()),
        (-100i32..100).prop_map(|k| format!("{:.2}", k as f64 / 100.0)),
        Just("f32(i + j) * 0.001".to_string()),
        Just("floor(a[i, j] * 4.0) * 0.25".to_string()),
        Just("f32(i32(b[i, j] * 8.0)) * 0.125".to_string()),
        Just("select(a[i, j] > 0.25, a[i, j], b[i, j])".to_string()),
        Just("ceil(b[i, j] * 2.0) * 0.5".to_string()),
    ]
}

fn tree() -> impl Strategy<Value = String> {
    leaf().prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| format!("exp({e}) * 0.36")),
            inner.clone().prop_map(|e| format!("exp2({e}) * 0.5")),
            // At 2 or more, where log is well conditioned (near 1 the f32
            // rounding of its argument alone exceeds the tolerance).
            inner.clone().prop_map(|e| format!("log(abs({e}) + 2.0)")),
            inner
                .clone()
                .prop_map(|e| format!("log2(abs({e}) + 1.0) * 0.5")),
            inner.clone().prop_map(|e| format!("tanh({e})")),
            inner.clone().prop_map(|e| format!("sigmoid({e})")),
            inner.clone().prop_map(|e| format!("erf({e})")),
            inner.clone().prop_map(|e| format!("sin({e})")),
            inner.clone().prop_map(|e| format!("cos({e})")),
            inner
                .clone()
                .prop_map(|e| format!("sqrt(abs({e}) + 0.25) - 0.5")),
            inner.clone().prop_map(|e| format!("rsqrt(abs({e}) + 1.0)")),
            inner.clone().prop_map(|e| format!("abs({e})")),
            inner.clone().prop_map(|e| format!("-({e})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} + {y}) * 0.5")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x} - {y}) * 0.5")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("{x} * {y}")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("min({x}, {y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("max({x}, {y})")),
            (inner.clone(), inner.clone())
                .prop_map(|(x, y)| format!("pow(abs({x}) + 1.0, {y}) * 0.5")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(x, y, z)| format!("fma({x}, {y}, {z}) * 0.5")),
        ]
    })
}

/// How a store writes its output.
#[derive(Clone, Debug)]
enum Layout {
    Plain,
    Permuted,
    Conditional,
}

#[derive(Clone, Debug)]
struct Case {
    dtype: &'static str,
    shared: Option<String>,
    stores: Vec<(Layout, String)>,
    m: i64,
    n: i64,
}

fn case() -> impl Strategy<Value = Case> {
    let sizes = prop::sample::select(vec![0i64, 1, 3, 15, 16, 17, 31, 32, 33, 127]);
    let layout = prop_oneof![
        3 => Just(Layout::Plain),
        1 => Just(Layout::Permuted),
        1 => Just(Layout::Conditional),
    ];
    (
        prop::sample::select(vec!["f32", "f32", "f32", "f64"]),
        prop::option::of(tree()),
        prop::collection::vec((layout, tree()), 1..=3),
        prop::sample::select(vec![0i64, 1, 3, 16, 17]),
        sizes,
    )
        .prop_map(|(dtype, shared, stores, m, n)| Case {
            dtype,
            shared,
            stores,
            m,
            n,
        })
}

impl Case {
    fn text(&self) -> String {
        let t = self.dtype;
        let mut params = vec![format!("a: in {t}[M, N]"), format!("b: in {t}[M, N]")];
        let mut body = String::new();
        if let Some(s) = &self.shared {
            body.push_str(&format!(
                "    s = {}\n",
                s.replace("f32(", &format!("{t}("))
            ));
        }
        for (k, (layout, e)) in self.stores.iter().enumerate() {
            let e = if self.shared.is_some() && k % 2 == 1 {
                format!("(s + {e}) * 0.5")
            } else {
                e.clone()
            };
            let e = e.replace("f32(", &format!("{t}("));
            match layout {
                Layout::Plain => {
                    params.push(format!("y{k}: out {t}[M, N]"));
                    body.push_str(&format!("    y{k}[i, j] = {e}\n"));
                }
                Layout::Permuted => {
                    params.push(format!("y{k}: out {t}[N, M]"));
                    body.push_str(&format!("    y{k}[j, i] = {e}\n"));
                }
                Layout::Conditional => {
                    params.push(format!("y{k}: out {t}[M, N]"));
                    body.push_str(&format!(
                        "    if b[i, j] < 0.125 {{\n      y{k}[i, j] = {e}\n    }}\n"
                    ));
                }
            }
        }
        format!(
            "program random({}) {{\n  for i in 0..M, j in 0..N {{\n{body}  }}\n}}\n",
            params.join(", ")
        )
    }
}

#[test]
fn random_elementwise_programs_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case(), |c| {
            let text = c.text();
            let program = tile_ir::parse_program(&text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            tile_ir::verify(&program).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            for fusion in [true, false] {
                // Random programs are never reused: no on-disk cache.
                let opts = tile_cpu::CpuOptions {
                    cache: false,
                    ..common::opts()
                };
                let (_, module) = common::build_with(&program, fusion, &opts);
                for (m, n) in [(c.m, c.n), (c.n.min(5), c.m + 1)] {
                    let sizes = tile_ir::Sizes::from([("M".to_string(), m), ("N".to_string(), n)]);
                    common::compare(&program, &module, &sizes, &format!("fusion {fusion}"))
                        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
