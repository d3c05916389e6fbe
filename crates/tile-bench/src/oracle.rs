//! FP64 references and validation for the suite's graphs, written from the
//! formulas in BENCHMARK.md (independent of the interpreter and of every
//! back end), and the deterministic input formula.

/// Input parameter `p` (0-based declaration order) at flat index `k`:
/// BENCHMARK.md's formula, shifted by `0.37 * p`, rounded to f32.
pub fn input(k: usize, p: usize) -> f32 {
    tile_ir::fixture::input_value(k, p) as f32
}

/// The FP64 reference outputs of `graph` for f32 inputs `ins` (in parameter
/// order) of shape `[m, n]` (row vectors `w`, `b` have length `n`).
pub fn reference(
    graph: &str,
    ins: &[Vec<f32>],
    m: usize,
    n: usize,
) -> Result<Vec<Vec<f64>>, String> {
    let f = |i: usize| -> Vec<f64> { ins[i].iter().map(|&v| v as f64).collect() };
    let c = (2.0 / std::f64::consts::PI).sqrt();
    let gelu = |x: f64| 0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh());
    Ok(match graph {
        "sigmoid_pair" => {
            let s: Vec<f64> = f(0).iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect();
            let g = s.iter().map(|s| s * (1.0 - s)).collect();
            vec![s, g]
        }
        "gelu_pair" => {
            let x = f(0);
            let t: Vec<f64> = x
                .iter()
                .map(|x| (c * (x + 0.044715 * x * x * x)).tanh())
                .collect();
            let v = x.iter().zip(&t).map(|(x, t)| 0.5 * x * (1.0 + t)).collect();
            let g = x
                .iter()
                .zip(&t)
                .map(|(x, t)| {
                    0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x)
                })
                .collect();
            vec![v, g]
        }
        "add" => vec![f(0).iter().zip(f(1)).map(|(a, b)| a + b).collect()],
        "gelu_ab" => vec![f(0).iter().zip(f(1)).map(|(a, b)| gelu(a + b)).collect()],
        "softmax" | "rmsnorm" | "layernorm" => {
            let x = f(0);
            let mut y = vec![0.0; m * n];
            for i in 0..m {
                let row = &x[i * n..(i + 1) * n];
                let out = &mut y[i * n..(i + 1) * n];
                match graph {
                    "softmax" => {
                        let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                        let z: f64 = row.iter().map(|v| (v - mx).exp()).sum();
                        for (o, v) in out.iter_mut().zip(row) {
                            *o = (v - mx).exp() / z;
                        }
                    }
                    "rmsnorm" => {
                        let w = f(1);
                        let r =
                            1.0 / (row.iter().map(|v| v * v).sum::<f64>() / n as f64 + 1e-5).sqrt();
                        for j in 0..n {
                            out[j] = row[j] * r * w[j];
                        }
                    }
                    _ => {
                        let (w, b) = (f(1), f(2));
                        let mean = row.iter().sum::<f64>() / n as f64;
                        let var =
                            row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
                        let r = 1.0 / (var + 1e-5).sqrt();
                        for j in 0..n {
                            out[j] = (row[j] - mean) * r * w[j] + b[j];
                        }
                    }
                }
            }
            vec![y]
        }
        "row_lse" | "row_norm" => {
            let x = f(0);
            let rows = x.chunks(n.max(1)).take(m);
            vec![match graph {
                "row_lse" => rows
                    .map(|row| {
                        let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                        mx + row.iter().map(|v| (v - mx).exp()).sum::<f64>().ln()
                    })
                    .collect(),
                _ => rows
                    .map(|row| row.iter().map(|v| v * v).sum::<f64>().sqrt())
                    .collect(),
            }]
        }
        g => return Err(format!("no FP64 reference for graph `{g}`")),
    })
}

/// The validation record of one output.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OutputCheck {
    /// Output parameter.
    pub name: String,
    /// Elements compared.
    pub count: usize,
    /// Largest absolute error.
    pub max_abs: f64,
    /// Largest relative error.
    pub max_rel: f64,
    /// Every element within `atol + rtol * |ref|`, none NaN.
    pub pass: bool,
}

/// Compares `got` against `want` element by element.
pub fn check(name: &str, got: &[f32], want: &[f64], atol: f64, rtol: f64) -> OutputCheck {
    let mut c = OutputCheck {
        name: name.to_string(),
        count: got.len(),
        max_abs: 0.0,
        max_rel: 0.0,
        pass: got.len() == want.len(),
    };
    for (&g, &w) in got.iter().zip(want) {
        let e = (g as f64 - w).abs();
        if e.is_nan() || e > atol + rtol * w.abs() {
            c.pass = false;
        }
        if e.is_nan() {
            c.max_abs = f64::NAN;
            continue;
        }
        c.max_abs = c.max_abs.max(e);
        c.max_rel = c.max_rel.max(e / w.abs().max(f64::MIN_POSITIVE));
    }
    c
}
