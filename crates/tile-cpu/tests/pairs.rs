//! The sigmoid and GELU value/derivative pairs of `examples/` against their
//! FP64 formulas, in `f32`: 1e5 points over [-1, 1], at saturation
//! (|x| from 5 to 20) and near zero (|x| < 1e-3).

mod common;

use std::collections::BTreeMap;
use tile_ir::{Array, DType, Sizes};

fn sigmoid(x: f64) -> (f64, f64) {
    let s = 1.0 / (1.0 + (-x).exp());
    (s, s * (1.0 - s))
}

fn gelu(x: f64) -> (f64, f64) {
    let c = 0.797_884_560_802_865_4;
    let t = (c * (x + 0.044715 * x * x * x)).tanh();
    let value = 0.5 * x * (1.0 + t);
    let grad = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    (value, grad)
}

fn points() -> Vec<(&'static str, Vec<f64>)> {
    let lin = |lo: f64, hi: f64, n: usize| -> Vec<f64> {
        (0..n)
            .map(|k| lo + (hi - lo) * k as f64 / (n - 1) as f64)
            .collect()
    };
    let mut sat = lin(5.0, 20.0, 5000);
    sat.extend(lin(-20.0, -5.0, 5000));
    vec![
        ("[-1, 1]", lin(-1.0, 1.0, 100_000)),
        ("saturation", sat),
        ("near zero", lin(-1e-3, 1e-3, 10_001)),
    ]
}

fn check(file: &str, formula: fn(f64) -> (f64, f64)) {
    let text = std::fs::read_to_string(format!(
        "{}/../../examples/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("example");
    let program = tile_ir::parse_program(&text).expect("parses");
    for fusion in [true, false] {
        let (_, module) = common::build(&program, fusion);
        for (what, xs) in points() {
            let n = xs.len();
            let x = Array::from_f64(DType::F32, &[1, n], &xs);
            let xs32 = x.to_f64();
            let mut args = BTreeMap::from([
                ("x".to_string(), x),
                ("value".to_string(), Array::zeros(DType::F32, &[1, n])),
                ("grad".to_string(), Array::zeros(DType::F32, &[1, n])),
            ]);
            module.run(&mut args, &Sizes::new()).expect("runs");
            let (v, g) = (args["value"].to_f64(), args["grad"].to_f64());
            for k in 0..n {
                let (wv, wg) = formula(xs32[k]);
                assert!(
                    common::close(DType::F32, v[k], wv) && common::close(DType::F32, g[k], wg),
                    "{file} {what} fusion {fusion}: x = {:e}: value {:e} (FP64 {wv:e}), grad {:e} (FP64 {wg:e})",
                    xs32[k],
                    v[k],
                    g[k]
                );
            }
        }
    }
}

#[test]
fn sigmoid_pair_matches_fp64() {
    check("sigmoid_pair.tile", sigmoid);
}

#[test]
fn gelu_pair_matches_fp64() {
    check("gelu_pair.tile", gelu);
}
