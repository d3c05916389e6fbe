//! The WGSL prelude's math against the interpreter (C's meaning) at the
//! special values where WGSL leaves its builtins undefined: `pow` with
//! zero, negative and unit bases and infinite or NaN exponents, `erf`
//! across its two formulas, `min`/`max` with NaN, `log` of zero and
//! negatives. Skips with a message where no adapter exists.
#![cfg(feature = "runtime")]

mod common;

use common::module;
use std::collections::BTreeMap;
use tile_ir::{Array, DType, Sizes};

fn run(text: &str, a: &[f64], b: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let program = tile_ir::parse_program(text).unwrap();
    let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
    let m = module(&plan)?;
    let n = a.len();
    let args = BTreeMap::from([
        ("a".to_string(), Array::from_f64(DType::F32, &[n], a)),
        ("b".to_string(), Array::from_f64(DType::F32, &[n], b)),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[n], &vec![0.0; n]),
        ),
    ]);
    let mut want = args.clone();
    tile_ir::interp::interpret(&program, &mut want, &Sizes::new()).unwrap();
    let mut got = args;
    m.run(&mut got, &Sizes::new()).unwrap();
    Some((got["y"].to_f64(), want["y"].to_f64()))
}

fn same(got: f64, want: f64, rel: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return got.is_sign_negative() == want.is_sign_negative() || got != 0.0;
    }
    (got - want).abs() <= rel * want.abs() + 1e-30
}

#[test]
fn special_values_mean_what_they_mean_in_c() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let pairs = [
        (1.0, nan),
        (1.0, inf),
        (-1.0, inf),
        (-1.0, -inf),
        (-0.0, -3.0),
        (-0.0, 3.0),
        (-0.0, -2.0),
        (0.0, -1.0),
        (0.0, 2.0),
        (-2.0, 3.0),
        (-2.0, 2.0),
        (-2.0, 0.5),
        (2.0, 10.0),
        (0.5, inf),
        (3.0, -inf),
        (nan, 0.0),
        (nan, 1.0),
        (2.5, -1.5),
    ];
    let (a, b): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let text = "program p(a: in f32[N], b: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = pow(a[i], b[i])\n  }\n}";
    let Some((got, want)) = run(text, &a, &b) else {
        return;
    };
    for k in 0..a.len() {
        assert!(
            same(got[k], want[k], 1e-6),
            "pow({}, {}) = {}, C gives {}",
            a[k],
            b[k],
            got[k],
            want[k]
        );
    }
    let xs: Vec<f64> = (0..200)
        .map(|k| (k as f64 - 100.0) * 0.047)
        .chain([0.0, -0.0, 1e-20, 4.5, -6.0])
        .collect();
    let zeros = vec![0.0; xs.len()];
    let text = "program p(a: in f32[N], b: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = erf(a[i]) + b[i]\n  }\n}";
    let (got, want) = run(text, &xs, &zeros).unwrap();
    for k in 0..xs.len() {
        assert!(
            same(got[k], want[k], 1e-6) || (got[k] - want[k]).abs() < 3e-7,
            "erf({}) = {}, want {}",
            xs[k],
            got[k],
            want[k]
        );
    }
    let a = [nan, 1.0, nan, 0.0, -0.0, -1.0];
    let b = [1.0, nan, nan, -0.0, 0.0, 0.0];
    let text = "program p(a: in f32[N], b: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = max(a[i], b[i]) + min(a[i], b[i]) + log(a[i] + 1.0)\n  }\n}";
    let (got, want) = run(text, &a, &b).unwrap();
    for k in 0..a.len() {
        assert!(
            same(got[k], want[k], 1e-6),
            "row {k}: {} against {}",
            got[k],
            want[k]
        );
    }
}
