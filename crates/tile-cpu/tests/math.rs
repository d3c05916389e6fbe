//! Accuracy of every math function on the CPU back end, in `f32` (within
//! atol 2e-6 + rtol 2e-5 of FP64) and `f64` (1e-12 relative), over [-1, 1]
//! and, for `exp`, `tanh`, `sigmoid` and `erf`, over wide ranges and at
//! special values (NaN, infinities, saturation); then the vector
//! transcendental functions against an oracle of Rust's `f64` functions
//! over wide ranges, every binade, and the special cases of C99 (run with
//! `--nocapture` to see the worst errors).

mod common;

use std::collections::BTreeMap;
use tile_ir::{Array, DType, Sizes};

/// Unary functions: (name, call text).
const UNARY: &[(&str, &str)] = &[
    ("exp", "exp(x[i])"),
    ("exp2", "exp2(x[i])"),
    ("log", "log(x[i])"),
    ("log2", "log2(x[i])"),
    ("log1p", "log1p(x[i])"),
    ("expm1", "expm1(x[i])"),
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

/// The oracle: Rust's `f64` functions (the C library), on the inputs as
/// the program sees them (rounded to `f32` for `f32`), rounded to the
/// output type.
fn oracle(dtype: DType, name: &str, x: f64, y: f64) -> f64 {
    let (x, y) = if dtype == DType::F32 {
        (x as f32 as f64, y as f32 as f64)
    } else {
        (x, y)
    };
    let r = match name {
        "exp" => x.exp(),
        "exp2" => x.exp2(),
        "log" => x.ln(),
        "log2" => x.log2(),
        "log1p" => x.ln_1p(),
        "expm1" => x.exp_m1(),
        "tanh" => x.tanh(),
        "sigmoid" => 1.0 / (1.0 + (-x).exp()),
        "erf" => erf(x),
        "sin" => x.sin(),
        "cos" => x.cos(),
        "pow" => x.powf(y),
        _ => unreachable!("{name}"),
    };
    if dtype == DType::F32 {
        r as f32 as f64
    } else {
        r
    }
}

/// erf for the oracle (Rust's std has none): the Maclaurin series, summed
/// in `f64` with the terms' error compensated, for |x| < 2; else
/// 1 - erfc by its continued fraction to 200 terms. Within a few ulp.
fn erf(x: f64) -> f64 {
    let a = x.abs();
    if x.is_nan() || x == 0.0 {
        return x;
    }
    if a < 2.0 {
        // Kahan-summed series: sum (-1)^n x^(2n+1) / (n! (2n + 1)).
        let (mut sum, mut comp, mut term) = (0.0f64, 0.0f64, x);
        for n in 0..200 {
            let t = term / (2 * n + 1) as f64;
            let y = t - comp;
            let s = sum + y;
            comp = (s - sum) - y;
            sum = s;
            term *= -x * x / (n + 1) as f64;
            if t.abs() < 1e-40 {
                break;
            }
        }
        return sum * std::f64::consts::FRAC_2_SQRT_PI;
    }
    let b = a.min(10.0);
    let mut k = b;
    for n in (1..=200).rev() {
        k = b + (n as f64 / 2.0) / k;
    }
    let e = 1.0 - (-b * b).exp() / std::f64::consts::PI.sqrt() / k;
    e.copysign(x)
}

/// Checks `names` of one run against the oracle: NaN exactly where the
/// oracle has NaN, infinities and zeros (with their sign) exact, else
/// within the tolerance (`f64`: 1e-12 relative plus 1e-300; `f32`: atol
/// 2e-6 + rtol 2e-5). Prints the worst relative error (`f64`) or worst
/// error / tolerance (`f32`) with `--nocapture`.
fn check_oracle(dtype: DType, what: &str, names: &[&str], x: &[f64], y: &[f64]) {
    let program = program(dtype.name());
    let (_, module) = common::build(&program, true);
    let r = run(&module, &program, dtype, x, y, y);
    let mut bad = Vec::new();
    for name in names {
        let got = &r[*name].0;
        let (mut worst, mut at) = (0.0f64, 0usize);
        let mut count = 0;
        for k in 0..x.len() {
            let (g, w) = (got[k], oracle(dtype, name, x[k], y[k]));
            let ok = if w.is_nan() || g.is_nan() {
                w.is_nan() && g.is_nan()
            } else if w.is_infinite() || w == 0.0 {
                g == w && g.is_sign_negative() == w.is_sign_negative()
            } else if dtype == DType::F64 {
                let e = (g - w).abs() / w.abs();
                if w.abs() > 1e-290 && e > worst {
                    (worst, at) = (e, k);
                }
                (g - w).abs() <= 1e-12 * w.abs() + 1e-300
            } else {
                let e = (g - w).abs() / (2e-6 + 2e-5 * w.abs());
                if e > worst {
                    (worst, at) = (e, k);
                }
                e <= 1.0
            };
            if !ok {
                count += 1;
                if count <= 3 {
                    bad.push(format!(
                        "{what} {dtype} {name}({:e}, {:e}) = {:e}, oracle {:e}",
                        x[k], y[k], g, w
                    ));
                }
            }
        }
        let unit = if dtype == DType::F64 {
            "relative error"
        } else {
            "error / tolerance"
        };
        eprintln!(
            "{what} {dtype} {name}: worst {unit} {worst:.3e} at ({:e}, {:e}), {count} failures",
            x[at], y[at]
        );
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Special values, placed first so that they land in full vectors (the
/// vector path), not in a loop's scalar tail.
const SPECIAL: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    1e-30,
    -1e-30,
    1e-300,
    -1e-300,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    f64::MAX,
    f64::MIN,
    1e30,
    -1e30,
    1e6,
    -1e6,
    1e22,
    -1e22,
    88.72,
    -103.9,
    -87.3,
    128.0,
    -149.0,
    -150.0,
    709.78,
    709.79,
    -708.39,
    -745.13,
    -745.14,
    1023.99,
    1024.0,
    -1022.0,
    -1074.0,
    -1075.0,
    -1076.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    f32::MIN_POSITIVE as f64,
    f32::MAX as f64,
    1.0 + 1e-10,
    1.0 - 1e-10,
    1.0 + 1e-15,
];

fn with_special(grids: &[Vec<f64>]) -> Vec<f64> {
    let mut x = SPECIAL.to_vec();
    for g in grids {
        x.extend(g);
    }
    x
}

fn vectorised(dtype: DType) {
    // exp, exp2, tanh, sigmoid: over and past the overflow and underflow
    // thresholds of both types.
    let x = with_special(&[
        linspace(-1.0, 1.0, 20001),
        linspace(-1e-3, 1e-3, 2001),
        linspace(-40.0, 40.0, 8001),
        linspace(-760.0, 760.0, 30001),
        linspace(-1100.0, 1100.0, 8001),
    ]);
    let ones = vec![1.0; x.len()];
    check_oracle(dtype, "exp", &["exp", "exp2", "tanh", "sigmoid"], &x, &ones);

    // erf (f64 only: f32 keeps its own polynomial, tested above).
    if dtype == DType::F64 {
        let x = with_special(&[
            linspace(-1.0, 1.0, 20001),
            linspace(-1e-3, 1e-3, 2001),
            linspace(-7.0, 7.0, 28001),
            linspace(2.4, 2.6, 2001),
            linspace(-100.0, 100.0, 2001),
        ]);
        check_oracle(dtype, "erf", &["erf"], &x, &vec![1.0; x.len()]);
    }

    // log, log2: every binade, subnormals, near 1, negatives.
    let logspace: Vec<f64> = (0..12_600)
        .map(|k| 10f64.powf(-323.5 + k as f64 * 0.05))
        .collect();
    let near1: Vec<f64> = (-2000..=2000).map(|k| 1.0 + k as f64 * 1e-7).collect();
    let x = with_special(&[
        linspace(-1.0, 1.0, 20001),
        logspace,
        near1,
        linspace(0.0, 10.0, 10001),
    ]);
    check_oracle(dtype, "log", &["log", "log2"], &x, &vec![1.0; x.len()]);

    // log1p, expm1: around 0 at every scale, to the edges of their domains
    // and ranges (the relative test near 0 is `tails_keep_relative_accuracy`).
    let tiny: Vec<f64> = (0..6_000)
        .flat_map(|k| {
            let v = 10f64.powf(-300.0 + k as f64 * 0.05);
            [v, -v]
        })
        .collect();
    let x = with_special(&[
        linspace(-1.0, 1.0, 20001),
        linspace(-0.999_999, 10.0, 10001),
        linspace(-40.0, 100.0, 8001),
        linspace(-760.0, 760.0, 30001),
        tiny,
    ]);
    check_oracle(dtype, "log1p", &["log1p", "expm1"], &x, &vec![1.0; x.len()]);

    // sin, cos: [-1, 1] densely, then up to 1e4 (f32) / 1e5 (f64), and the
    // library fallback beyond.
    let far = if dtype == DType::F64 { 1e5 } else { 1e4 };
    let x = with_special(&[
        linspace(-1.0, 1.0, 20001),
        linspace(-10.0, 10.0, 20001),
        linspace(-far, far, 40001),
        linspace(-3.0 * far, 3.0 * far, 1001),
    ]);
    let ones = vec![1.0; x.len()];
    check_oracle(dtype, "sin", &["sin", "cos"], &x, &ones);

    // pow: every pair of a set of bases and a set of exponents, including
    // the special cases of C99 (zeros, infinities, negative bases with
    // integral and non-integral exponents, NaN).
    let mut bases = SPECIAL.to_vec();
    bases.extend(linspace(-3.0, 3.0, 61));
    bases.extend([1e-5, 1e5, 0.999, 1.001, 1e-40, 1e-200, 1e200, 7.5, -7.5]);
    let mut exps = SPECIAL.to_vec();
    exps.extend(linspace(-4.0, 4.0, 33));
    exps.extend([
        0.1,
        -0.1,
        33.3,
        -33.3,
        1e10,
        -1e10,
        9007199254740992.0,
        9007199254740993.0 + 2.0,
        -9007199254740991.0,
        16777217.0,
        -16777215.0,
        1e300,
        -1e300,
        1075.0,
        -1075.0,
        f64::EPSILON,
    ]);
    let (mut px, mut py) = (Vec::new(), Vec::new());
    for &b in &bases {
        for &e in &exps {
            px.push(b);
            py.push(e);
        }
    }
    // [-1, 1] x [-1, 1] densely.
    for b in linspace(-1.0, 1.0, 201) {
        for e in linspace(-1.0, 1.0, 101) {
            px.push(b);
            py.push(e);
        }
    }
    check_oracle(dtype, "pow", &["pow"], &px, &py);
}

#[test]
fn f32_vector_functions_match_the_oracle() {
    vectorised(DType::F32);
}

#[test]
fn f64_vector_functions_match_the_oracle() {
    vectorised(DType::F64);
}

/// `log1p` and `expm1` keep their relative accuracy where the results are
/// tiny (where `log(1 + x)` and `exp(x) - 1` lose every digit, and a test of
/// absolute error would pass 0): within 4 ulp of `f32` (`f64`: 8 ulp) of
/// Rust's `ln_1p`/`exp_m1` for |x| from 1e-30 (f64: 1e-300) to 0.5, and
/// softplus written as `log1p(exp(x))` stays positive down to -87.
#[test]
fn tails_keep_relative_accuracy() {
    for dtype in [DType::F32, DType::F64] {
        let (lo, ulp) = if dtype == DType::F32 {
            (-30.0, 4.0 * f32::EPSILON as f64)
        } else {
            (-300.0, 8.0 * f64::EPSILON)
        };
        let mut x: Vec<f64> = Vec::new();
        let steps = ((-0.3 - lo) / 0.01) as usize;
        for k in 0..=steps {
            let v = 10f64.powf(lo + k as f64 * 0.01);
            let v = if dtype == DType::F32 {
                v as f32 as f64
            } else {
                v
            };
            x.extend([v, -v]);
        }
        let program = program(dtype.name());
        let (_, module) = common::build(&program, true);
        let r = run(&module, &program, dtype, &x, &x, &x);
        for name in ["log1p", "expm1"] {
            let got = &r[name].0;
            let mut worst = (0.0f64, 0.0f64);
            for (k, &v) in x.iter().enumerate() {
                let want = oracle(dtype, name, v, 1.0);
                let e = (got[k] - want).abs() / want.abs();
                if e > worst.0 {
                    worst = (e, v);
                }
            }
            assert!(
                worst.0 <= ulp,
                "{dtype} {name}: relative error {:e} at x = {:e}",
                worst.0,
                worst.1
            );
        }
    }
    let softplus = tile_ir::parse_program(
        "program sp(x: in f32[N], y: out f32[N], z: out f32[N]) {\n  for i in 0..N {\n    y[i] = log1p(exp(x[i]))\n    z[i] = log(1.0 + exp(x[i]))\n  }\n}\n",
    )
    .unwrap();
    let (_, module) = common::build(&softplus, true);
    let xs = linspace(-87.0, -17.0, 701);
    let n = xs.len();
    let mut args = BTreeMap::new();
    args.insert("x".to_string(), Array::from_f64(DType::F32, &[n], &xs));
    args.insert("y".to_string(), Array::zeros(DType::F32, &[n]));
    args.insert("z".to_string(), Array::zeros(DType::F32, &[n]));
    module.run(&mut args, &Sizes::new()).unwrap();
    let (y, z) = (args["y"].to_f64(), args["z"].to_f64());
    for k in 0..n {
        let want = (xs[k] as f32 as f64).exp().ln_1p();
        assert!(
            (y[k] - want).abs() <= 4.0 * f32::EPSILON as f64 * want,
            "softplus({}) = {:e}, FP64 {want:e}",
            xs[k],
            y[k]
        );
    }
    // The naive form is 0 there: what the issue reported.
    assert!(z.iter().all(|&v| v == 0.0));
}

/// The functions above run as vector code, not lane by lane through the C
/// library.
#[test]
fn transcendental_functions_are_vector_code() {
    for (dtype, core) in [
        (
            DType::F32,
            &["tile_sincos_vf32", "tile_pow_vf64", "tile_expcore_vf32"][..],
        ),
        (
            DType::F64,
            &[
                "tile_expcore_vf64",
                "tile_logparts_vf64",
                "tile_sincos_vf64",
                "tile_pow_vf64",
                "tile_erf_vf64",
            ][..],
        ),
    ] {
        let program = program(dtype.name());
        let (_, module) = common::build(&program, true);
        let src = module.source();
        for c in core {
            assert!(src.contains(&format!("{c}(")), "{dtype}: no {c}");
        }
        let t = &dtype.name()[1..];
        for f in [
            "exp", "exp2", "log", "log2", "log1p", "expm1", "tanh", "sigmoid", "erf", "sin", "cos",
        ] {
            let lane = format!("r[l] = tile_{f}_f{t}(x[l]);");
            assert!(!src.contains(&lane), "{dtype}: {f} is lane by lane");
        }
        assert!(!src.contains(&format!("r[l] = tile_pow_f{t}(a[l], b[l]);")));
    }
}
