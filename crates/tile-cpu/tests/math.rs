//! Accuracy of every math function on the CPU back end, in `f32` (within
//! atol 2e-6 + rtol 2e-5 of FP64) and `f64` (1e-12 relative), over [-1, 1]
//! and, for `exp`, `tanh`, `sigmoid` and `erf`, over wide ranges and at
//! special values (NaN, infinities, saturation).

mod common;

use std::collections::BTreeMap;
use tile_ir::{Array, DType, Sizes};

/// Unary functions: (name, call text).
const UNARY: &[(&str, &str)] = &[
    ("exp", "exp(x[i])"),
    ("exp2", "exp2(x[i])"),
    ("log", "log(x[i])"),
    ("log2", "log2(x[i])"),
    ("tanh", "tanh(x[i])"),
    ("sigmoid", "sigmoid(x[i])"),
    ("erf", "erf(x[i])"),
    ("sin", "sin(x[i])"),
    ("cos", "cos(x[i])"),
    ("sqrt", "sqrt(x[i])"),
    ("rsqrt", "rsqrt(x[i])"),
    ("floor", "floor(x[i])"),
    ("ceil", "ceil(x[i])"),
    ("abs", "abs(x[i])"),
    ("neg", "-x[i]"),
];

/// Functions of several arguments.
const NARY: &[(&str, &str)] = &[
    ("pow", "pow(x[i], w[i])"),
    ("min", "min(x[i], w[i])"),
    ("max", "max(x[i], w[i])"),
    ("fma", "fma(x[i], w[i], c[i])"),
    ("select", "select(x[i] < w[i], x[i], c[i])"),
    ("cast", "{t}(i32(x[i] * 1000.0)) * 0.001"),
];

fn program(t: &str) -> tile_ir::Program {
    let mut params = vec![
        format!("x: in {t}[N]"),
        format!("w: in {t}[N]"),
        format!("c: in {t}[N]"),
    ];
    let mut body = String::new();
    for (name, call) in UNARY.iter().chain(NARY) {
        params.push(format!("y_{name}: out {t}[N]"));
        body.push_str(&format!("    y_{name}[i] = {}\n", call.replace("{t}", t)));
    }
    let text = format!(
        "program math_{t}({}) {{\n  for i in 0..N {{\n{body}  }}\n}}\n",
        params.join(", ")
    );
    tile_ir::parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs the program on cpu and interpreter with `x`, `w`, `c`; returns
/// both results per output.
fn run(
    module: &tile_cpu::CpuModule,
    program: &tile_ir::Program,
    dtype: DType,
    x: &[f64],
    w: &[f64],
    c: &[f64],
) -> BTreeMap<String, (Vec<f64>, Vec<f64>)> {
    let n = x.len();
    let mut args = BTreeMap::new();
    for (name, v) in [("x", x), ("w", w), ("c", c)] {
        args.insert(name.to_string(), Array::from_f64(dtype, &[n], v));
    }
    for p in program.params.iter().filter(|p| p.role.is_written()) {
        args.insert(p.name.clone(), Array::zeros(dtype, &[n]));
    }
    let mut want = args.clone();
    tile_ir::interp::interpret(program, &mut want, &Sizes::new()).expect("interpreter");
    module.run(&mut args, &Sizes::new()).expect("cpu");
    program
        .params
        .iter()
        .filter(|p| p.role.is_written())
        .map(|p| {
            (
                p.name.trim_start_matches("y_").to_string(),
                (args[&p.name].to_f64(), want[&p.name].to_f64()),
            )
        })
        .collect()
}

fn linspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|k| lo + (hi - lo) * k as f64 / (n - 1) as f64)
        .collect()
}

fn check(
    dtype: DType,
    what: &str,
    only: &[&str],
    results: &BTreeMap<String, (Vec<f64>, Vec<f64>)>,
    x: &[f64],
) {
    let mut bad = Vec::new();
    for (name, (got, want)) in results {
        if !only.is_empty() && !only.contains(&name.as_str()) {
            continue;
        }
        let mut worst = 0usize;
        if std::env::var("MATH_REPORT").is_ok() {
            let mut e = 0.0f64;
            for k in 0..got.len() {
                if got[k].is_finite() && want[k].is_finite() {
                    e = e.max((got[k] - want[k]).abs() / (2e-6 + 2e-5 * want[k].abs()));
                }
            }
            eprintln!("{what} {dtype} {name}: worst error / tolerance = {e:.3}");
        }
        for k in 0..got.len() {
            let ok = if dtype == DType::F64 {
                let (g, w) = (got[k], want[k]);
                (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= 1e-12 * w.abs() + 1e-300
            } else {
                common::close(dtype, got[k], want[k])
            };
            if !ok {
                worst += 1;
                if worst <= 3 {
                    bad.push(format!(
                        "{what} {dtype} {name}({:e}) = {:e}, FP64 {:e}",
                        x[k], got[k], want[k]
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn accuracy(dtype: DType) {
    let program = program(dtype.name());
    let (_, module) = common::build(&program, true);
    // [-1, 1], 4099 points (not a multiple of the vector width: the tail
    // runs too); w and c sweep the other way.
    let n = 4099;
    let x = linspace(-1.0, 1.0, n);
    let w = linspace(1.0, -1.0, n);
    let c: Vec<f64> = (0..n).map(|k| common::value(7, k)).collect();
    let r = run(&module, &program, dtype, &x, &w, &c);
    check(dtype, "[-1, 1]", &[], &r, &x);

    // Wide ranges and special values for the functions on the hot path.
    let mut x = linspace(-100.0, 100.0, 2001);
    x.extend(linspace(-5.0, 5.0, 1001));
    x.extend(linspace(-1e-3, 1e-3, 101));
    x.extend([
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        88.7,
        -88.7,
        89.0,
        -104.0,
        -110.0,
    ]);
    let n = x.len();
    let ones = vec![1.0; n];
    let r = run(&module, &program, dtype, &x, &ones, &ones);
    check(dtype, "wide", &["exp", "tanh", "sigmoid", "erf"], &r, &x);

    // NaN in gives NaN out, for every unary function.
    for (name, (got, _)) in &r {
        if UNARY.iter().any(|(u, _)| u == name) {
            let at = x.iter().position(|v| v.is_nan()).unwrap_or(0);
            assert!(got[at].is_nan(), "{dtype} {name}(NaN) = {}", got[at]);
        }
    }
    // Saturation is exact.
    let at = |v: f64| x.iter().position(|&y| y == v).unwrap_or(0);
    let (sig, tanh) = (&r["sigmoid"].0, &r["tanh"].0);
    assert_eq!(sig[at(100.0)], 1.0);
    assert!(sig[at(-100.0)] >= 0.0 && sig[at(-100.0)] < 1e-40);
    assert_eq!(tanh[at(100.0)], 1.0);
    assert_eq!(tanh[at(-100.0)], -1.0);
    assert_eq!(tanh[at(20.0)], 1.0);
    assert_eq!(sig[at(f64::INFINITY)], 1.0);
    assert_eq!(sig[at(f64::NEG_INFINITY)], 0.0);
    assert_eq!(r["exp"].0[at(f64::INFINITY)], f64::INFINITY);
    assert_eq!(r["exp"].0[at(f64::NEG_INFINITY)], 0.0);
    assert_eq!(r["erf"].0[at(f64::INFINITY)], 1.0);
}

#[test]
fn f32_functions_are_accurate() {
    accuracy(DType::F32);
}

#[test]
fn f64_functions_are_accurate() {
    accuracy(DType::F64);
}

#[test]
fn min_max_ignore_nan_like_ieee() {
    let program = program("f32");
    let (_, module) = common::build(&program, true);
    let nan = f64::NAN;
    let x = vec![nan, 1.0, nan, 2.0, -0.5];
    let w = vec![1.0, nan, nan, 3.0, -0.25];
    let c = vec![0.0; 5];
    let r = run(&module, &program, DType::F32, &x, &w, &c);
    let (min, max) = (&r["min"].0, &r["max"].0);
    assert_eq!(min[0], 1.0);
    assert_eq!(min[1], 1.0);
    assert!(min[2].is_nan());
    assert_eq!(min[3], 2.0);
    assert_eq!(max[0], 1.0);
    assert_eq!(max[1], 1.0);
    assert!(max[2].is_nan());
    assert_eq!(max[4], -0.25);
}
