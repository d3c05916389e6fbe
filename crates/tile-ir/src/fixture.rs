//! Test data shared by every crate's tests: deterministic, non-zero
//! arguments for a program, and the `# run:` lines of fixture files.
//!
//! Inputs follow the input formula of docs/benchmarking.md, shifted per parameter so no two
//! inputs are equal; written parameters start from a sentinel pattern so an
//! element no store writes is visible in every comparison.

use crate::args::{boxes, Sizes};
use crate::{Array, DType, Program, Role};
use std::collections::BTreeMap;

/// `frac(k * 0.618... + 0.1234567 + 0.37 * seed) * 2 - 1 + 1e-3 * sin(k)`:
/// deterministic, non-dyadic values roughly in [-1, 1].
pub fn input_value(k: usize, seed: usize) -> f64 {
    let t = k as f64 * 0.6180339887498949 + 0.1234567 + 0.37 * seed as f64;
    (t - t.floor()) * 2.0 - 1.0 + 1e-3 * (k as f64).sin()
}

/// A contraction's epilogue: the statements of the loop over `j`, using `z` bound to
/// the product (and the outputs they write).
fn contraction_epilogue(which: usize) -> (&'static str, &'static str, &'static [&'static str]) {
    match which {
        0 => ("", "y[i, j] = z", &["y"]),
        1 => (", bias: in f32[N]", "y[i, j] = z + bias[j]", &["y"]),
        2 => (
            ", bias: in f32[N], dy: out f32[M, N]",
            "u = z + bias[j]\n      t = tanh(0.7978845608 * (u + 0.044715 * u * u * u))\n      y[i, j] = 0.5 * u * (1.0 + t)\n      dy[i, j] = 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * 0.7978845608 * (1.0 + 0.134145 * u * u)",
            &["y", "dy"],
        ),
        3 => (", r: in f32[M, N]", "y[i, j] = max(z, 0.0) + r[i, j] * 0.5", &["y"]),
        _ => (", s: in f32[M]", "y[i, j] = sigmoid(z) * s[i] + f32(K) * 0.001", &["y"]),
    }
}

/// A contraction for property tests: `z = sum(k in 0..K: a * b)` with
/// either operand transposed (`a_t`, `b_t`) and epilogue `which` (0..5: a
/// plain store, a bias, GELU's value and derivative, a residual read with
/// `max`, `sigmoid` times a row vector plus `f32(K)`); the program's text
/// and its outputs.
pub fn contraction(a_t: bool, b_t: bool, which: usize) -> (String, &'static [&'static str]) {
    let (a_decl, a_at) = if a_t {
        ("a: in f32[K, M]", "a[k, i]")
    } else {
        ("a: in f32[M, K]", "a[i, k]")
    };
    let (b_decl, b_at) = if b_t {
        ("b: in f32[N, K]", "b[j, k]")
    } else {
        ("b: in f32[K, N]", "b[k, j]")
    };
    let (extra, body, outputs) = contraction_epilogue(which);
    let text = format!(
        "program c({a_decl}, {b_decl}, y: out f32[M, N]{extra}) {{\n  for i in 0..M, j in 0..N {{\n      z = sum(k in 0..K: {a_at} * {b_at})\n      {body}\n  }}\n}}\n"
    );
    (text, outputs)
}

/// [`contraction`] batched: `for h in 0..B, i in 0..M, j in 0..N`, the
/// outputs (and epilogue 3's residual) one matrix per batch, and each
/// operand either one matrix per batch (`a_b`, `b_b`: `a[h, i, k]`) or
/// one matrix every batch shares.
pub fn batched_contraction(
    (a_t, b_t): (bool, bool),
    (a_b, b_b): (bool, bool),
    which: usize,
) -> (String, &'static [&'static str]) {
    let (text, outputs) = contraction(a_t, b_t, which);
    let mut text = text
        .replace(
            "for i in 0..M, j in 0..N",
            "for h in 0..B, i in 0..M, j in 0..N",
        )
        .replace("f32[M, N]", "f32[B, M, N]")
        .replace("[i, j]", "[h, i, j]");
    for (op, batched) in [("a", a_b), ("b", b_b)] {
        if batched {
            text = text
                .replace(&format!("{op}: in f32["), &format!("{op}: in f32[B, "))
                .replace(&format!(" {op}["), &format!(" {op}[h, "))
                .replace(&format!("({op}["), &format!("({op}[h, "));
        }
    }
    (text, outputs)
}

/// One attention head as the planner recognises it (a maximum, a sum of
/// exponentials, a weighted sum per output column; `o: out f32[M, E]`),
/// with `q`, `k` and `v` each in either index order (`*_t`: transposed)
/// and the score `score` 0: scaled, 1: causal (`select` on indices), 2:
/// biased (`bias: in f32[N]`).
pub fn attention(q_t: bool, k_t: bool, v_t: bool, score: usize) -> String {
    let (qd, qa) = if q_t {
        ("q: in f32[D, M]", "q[d, i]")
    } else {
        ("q: in f32[M, D]", "q[i, d]")
    };
    let (kd, ka) = if k_t {
        ("k: in f32[D, N]", "k[d, j]")
    } else {
        ("k: in f32[N, D]", "k[j, d]")
    };
    let (vd, va) = if v_t {
        ("v: in f32[E, N]", "v[c, j]")
    } else {
        ("v: in f32[N, E]", "v[j, c]")
    };
    let dot = format!("sum(d in 0..D: {qa} * {ka})");
    let (extra, f) = match score {
        0 => ("", format!("{dot} * scale")),
        1 => ("", format!("select(j <= i, {dot} * scale, -1e30)")),
        _ => (", bias: in f32[N]", format!("{dot} * scale + bias[j]")),
    };
    format!(
        "program a({qd}, {kd}, {vd}, o: out f32[M, E]{extra}) {{\n  for i in 0..M {{\n    scale = rsqrt(f32(D + 1))\n    m = max(j in 0..N: {f})\n    z = sum(j in 0..N: exp({f} - m))\n    for c in 0..E {{\n      o[i, c] = sum(j in 0..N: exp({f} - m) * {va}) / z\n    }}\n  }}\n}}\n"
    )
}

/// The sentinel initial content of written parameters.
pub fn sentinel_value(k: usize) -> f64 {
    -100.0 - (k % 7) as f64
}

/// One array per parameter, shaped by its box under `sizes`: inputs from
/// [`input_value`], outputs from [`sentinel_value`], and inout parameters
/// (state updated in place: moments, accumulators) from the magnitude of
/// [`input_value`], so state that must be non-negative is. Scalar (0-d) inputs stand for rates,
/// factors and counts, so they get values such parameters take: floats in
/// [0.05, 0.95], integers in 1..=7 (see [`scalar_value`]). `None` when a box
/// has a negative extent.
pub fn arguments(program: &Program, sizes: &Sizes) -> Option<BTreeMap<String, Array>> {
    let bx = boxes(program, sizes).ok()?;
    let mut out = BTreeMap::new();
    for (seed, p) in program.params.iter().enumerate() {
        let shape: Vec<usize> = bx[&p.name]
            .iter()
            .map(|(lo, hi)| usize::try_from(hi - lo).ok())
            .collect::<Option<_>>()?;
        let n: usize = shape.iter().product();
        let values: Vec<f64> = (0..n)
            .map(|k| match (p.role, p.dtype) {
                (Role::Out, _) => sentinel_value(k),
                (Role::In, dt) if shape.is_empty() => scalar_value(dt, seed),
                (Role::InOut, DType::F32 | DType::F64) => input_value(k, seed).abs(),
                (_, DType::I32) => ((k * 7 + seed) % 13) as f64 - 6.0,
                (_, DType::Bool) => ((k * 3 + seed) % 2) as f64,
                _ => input_value(k, seed),
            })
            .collect();
        out.insert(p.name.clone(), Array::from_f64(p.dtype, &shape, &values));
    }
    Some(out)
}

/// The value of a scalar (0-d) input parameter, by its position `seed`:
/// floats `0.5 + 0.45 * input_value(0, seed)` (in [0.05, 0.95]), integers
/// `1 + seed % 7`, booleans alternating.
pub fn scalar_value(dtype: DType, seed: usize) -> f64 {
    match dtype {
        DType::I32 => (1 + seed % 7) as f64,
        DType::Bool => (seed % 2) as f64,
        _ => 0.5 + 0.45 * input_value(0, seed),
    }
}

/// The size bindings of every `# run: M=3 N=5` line in a fixture's text.
pub fn run_lines(text: &str) -> Vec<Sizes> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("# run:"))
        .map(|rest| {
            rest.split_whitespace()
                .filter_map(|kv| {
                    let (k, v) = kv.split_once('=')?;
                    Some((k.to_string(), v.parse().ok()?))
                })
                .collect()
        })
        .collect()
}

/// Every `.tile` file below the given folders, sorted (test discovery of
/// `tests/programs/` and `examples/`).
pub fn tile_files(roots: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs: Vec<std::path::PathBuf> = roots.to_vec();
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "tile") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Line diff: common prefix and suffix elided, the middle shown as -/+.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let pre = e.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suf = e[pre..]
        .iter()
        .rev()
        .zip(a[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = format!("@@ line {} @@\n", pre + 1);
    for l in &e[pre..e.len() - suf] {
        out += &format!("-{l}\n");
    }
    for l in &a[pre..a.len() - suf] {
        out += &format!("+{l}\n");
    }
    out
}

/// Shapes of the NaN case for `max` and `min` (empty ranges included).
pub const NAN_SHAPES: [(usize, usize); 6] = [(3, 5), (4, 1), (1, 700), (40, 3), (3, 0), (0, 4)];

/// Arguments for a program over `x: f32[M, N]` (such as
/// `tests/programs/reductions/max_min_empty.tile`) at `m` x `n`, with row
/// 0, column 0 and every third element of `x` NaN: rows, columns and a
/// whole array of NaN alone, and NaN among numbers.
pub fn nan_arguments(
    program: &Program,
    m: usize,
    n: usize,
) -> Option<(Sizes, BTreeMap<String, Array>)> {
    let sizes = Sizes::from([("M".into(), m as i64), ("N".into(), n as i64)]);
    let mut args = arguments(program, &sizes)?;
    let x = args.get_mut("x")?;
    for i in 0..m {
        for j in 0..n {
            if i == 0 || j == 0 || (i * n + j).is_multiple_of(3) {
                x.set_f64(i * n + j, f64::NAN);
            }
        }
    }
    Some((sizes, args))
}
