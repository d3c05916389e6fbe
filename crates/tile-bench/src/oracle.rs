//! FP64 references and validation for the suite's graphs, written from the
//! formulas of the suite's graphs (independent of the interpreter and of every
//! back end), the interpreter's FP64 results for every other program, and
//! the deterministic input formula.

/// Input parameter `p` (0-based declaration order) at flat index `k`:
/// The input formula of docs/benchmarking.md, shifted by `0.37 * p`, rounded to f32.
pub fn input(k: usize, p: usize) -> f32 {
    tile_ir::fixture::input_value(k, p) as f32
}

/// `i32` input parameter `p` at flat index `k`: `(7k + 3p) mod 13`, values
/// 0..=12 (valid class labels and indices for every benchmarked shape).
pub fn int_input(k: usize, p: usize) -> i32 {
    ((7 * (k % 13) + 3 * p) % 13) as i32
}

/// Runs `row(i, out_i)` for each row `i` of `out` (rows of `width`; the
/// last may be shorter), on every core: each row's arithmetic is the same sequence whatever the
/// thread, so the results do not depend on the number of cores.
fn by_rows(out: &mut [f64], width: usize, row: impl Fn(usize, &mut [f64]) + Sync) {
    if width == 0 {
        return;
    }
    let rows = out.len().div_ceil(width);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = rows.div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(per * width).enumerate() {
            let row = &row;
            s.spawn(move || {
                for (r, o) in chunk.chunks_mut(width).enumerate() {
                    row(t * per + r, o);
                }
            });
        }
    });
}

/// The FP64 product of `a` (`m` x K, row-major) and `b` (K x `n`), each
/// element summed over k in order (rows of b contiguous in the inner
/// loop); K from a's length.
fn product(a: &[f64], b: &[f64], m: usize, n: usize) -> Result<Vec<f64>, String> {
    let kk = a.len().checked_div(m).unwrap_or(0);
    if a.len() != m * kk || b.len() != kk * n {
        return Err(format!(
            "a has {} elements and b {}: not {m} x K and K x {n}",
            a.len(),
            b.len()
        ));
    }
    let mut z = vec![0.0f64; m * n];
    // Groups of 8 rows, so each row of b is read once per group.
    by_rows(&mut z, 8 * n, |g, out| {
        for k in 0..kk {
            let w = &b[k * n..(k + 1) * n];
            for (r, o) in out.chunks_mut(n.max(1)).enumerate() {
                let x = a[(8 * g + r) * kk + k];
                o.iter_mut().zip(w).for_each(|(o, w)| *o += x * w);
            }
        }
    });
    Ok(z)
}

/// The FP64 reference outputs of `graph` for f32 inputs `ins` (in parameter
/// order) of shape `[m, n]` (row vectors `w`, `b` have length `n`); a
/// batched product's batch count is `B` of the case's fixed `sizes`.
pub fn reference(
    graph: &str,
    ins: &[Vec<f32>],
    (m, n): (usize, usize),
    sizes: &std::collections::BTreeMap<String, usize>,
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
        "col_sum" => {
            let x = f(0);
            let mut y = vec![0.0; n];
            for row in x.chunks(n.max(1)).take(m) {
                for (s, v) in y.iter_mut().zip(row) {
                    *s += v;
                }
            }
            vec![y]
        }
        "full_sum" => vec![vec![f(0).iter().take(m * n).sum::<f64>()]],
        // One attention head, `v` as wide as `q` (tests/programs/neural/
        // attention.tile): scores scaled by 1/sqrt(D), their softmax, the
        // weighted rows of v.
        "attention" => {
            let (q, k, v) = (f(0), f(1), f(2));
            let d = q.len().checked_div(m).unwrap_or(0);
            if k.len() != n * d || v.len() != n * d {
                return Err(format!("attention: k or v is not {n} x {d}"));
            }
            let scale = 1.0 / (d as f64).sqrt();
            let mut o = vec![0.0f64; m * d];
            by_rows(&mut o, d, |i, oi| {
                let qi = &q[i * d..(i + 1) * d];
                let s: Vec<f64> = (0..n)
                    .map(|j| {
                        let kj = &k[j * d..(j + 1) * d];
                        qi.iter().zip(kj).map(|(a, b)| a * b).sum::<f64>() * scale
                    })
                    .collect();
                let mx = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let mut z = 0.0;
                for (j, sj) in s.iter().enumerate() {
                    let p = (sj - mx).exp();
                    z += p;
                    for (oc, vc) in oi.iter_mut().zip(&v[j * d..(j + 1) * d]) {
                        *oc += p * vc;
                    }
                }
                oi.iter_mut().for_each(|x| *x /= z);
            });
            vec![o]
        }
        // Products in FP64 (one per batch for `bmm`, B of the sizes).
        "gemm" | "gemm_gelu_pair" | "bmm" => {
            let (a, b) = (f(0), f(1));
            let batches = if graph == "bmm" {
                *sizes.get("B").ok_or("bmm: no batch count B")?
            } else {
                1
            };
            let mut z = Vec::with_capacity(batches * m * n);
            let (sa, sb) = (
                a.len().checked_div(batches).unwrap_or(0),
                b.len().checked_div(batches).unwrap_or(0),
            );
            if sa * batches != a.len() || sb * batches != b.len() {
                return Err(format!("{graph}: operands not {batches} matrices each"));
            }
            for h in 0..batches {
                z.extend(
                    product(&a[h * sa..(h + 1) * sa], &b[h * sb..(h + 1) * sb], m, n)
                        .map_err(|e| format!("{graph}: {e}"))?,
                );
            }
            if graph != "gemm_gelu_pair" {
                vec![z]
            } else {
                let bias = f(2);
                let (mut y, mut dy) = (Vec::with_capacity(m * n), Vec::with_capacity(m * n));
                for (e, zz) in z.iter().enumerate() {
                    let z = zz + bias[e % n.max(1)];
                    let t = (c * (z + 0.044715 * z * z * z)).tanh();
                    y.push(0.5 * z * (1.0 + t));
                    dy.push(
                        0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * c * (1.0 + 0.134145 * z * z),
                    );
                }
                vec![y, dy]
            }
        }
        g => return Err(format!("no FP64 reference for graph `{g}`")),
    })
}

/// The FP64 outputs of a case's program computed by the interpreter, for
/// graphs without a formula above: every `f32` parameter widened to `f64`
/// (so nothing is rounded to `f32` but what the program rounds itself),
/// inputs `ins` in parameter order, `inout` parameters starting from the
/// kernels' deterministic values and `out` ones as NaN, like the kernels'
/// (`target::arguments`; the outputs named by the case, in its order).
pub fn interpreted(case: &crate::suite::Case, ins: &[Vec<f32>]) -> Result<Vec<Vec<f64>>, String> {
    use tile_ir::{Array, DType};
    let mut program =
        tile_ir::parse_program(&case.program).map_err(|e| format!("{}: {e}", case.graph))?;
    let (sizes, shapes) = crate::target::case_shapes(&program, case)?;
    for p in &mut program.params {
        if p.dtype == DType::F32 {
            p.dtype = DType::F64;
        }
    }
    let mut arrays = std::collections::BTreeMap::new();
    let mut next = ins.iter();
    for (k, p) in program.params.iter().enumerate() {
        let shape = &shapes[&p.name];
        let count: usize = shape.iter().product();
        let values: Vec<f64> = if p.role == tile_ir::Role::InOut {
            // The kernels' starting content, rounded as theirs is.
            (0..count)
                .map(|i| match p.dtype {
                    DType::I32 => f64::from(int_input(i, k)),
                    _ => f64::from(input(i, k)),
                })
                .collect()
        } else if p.role.is_written() {
            // The kernels' starting content (`target::arguments`).
            let poison = if p.dtype == DType::I32 {
                f64::from(i32::MIN)
            } else {
                f64::NAN
            };
            vec![poison; count]
        } else {
            let v = next
                .next()
                .ok_or_else(|| format!("{}: no input array for `{}`", case.graph, p.name))?;
            if v.len() != count {
                return Err(format!(
                    "{}: input `{}` has {} elements, its box {count}",
                    case.graph,
                    p.name,
                    v.len()
                ));
            }
            v.iter().map(|&x| x as f64).collect()
        };
        arrays.insert(p.name.clone(), Array::from_f64(p.dtype, shape, &values));
    }
    tile_ir::interp::interpret(&program, &mut arrays, &sizes)
        .map_err(|e| format!("{}: the interpreter failed: {e}", case.graph))?;
    case.outputs
        .iter()
        .map(|name| {
            arrays
                .get(name)
                .map(Array::to_f64)
                .ok_or_else(|| format!("{}: no output `{name}`", case.graph))
        })
        .collect()
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
    /// Every element within `atol + rtol * |ref|`, or equal to the
    /// reference (an infinity of the same sign; NaN where the reference is
    /// NaN: the program's own NaN, or an element it never writes, which
    /// starts as NaN in both); any other NaN fails.
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
        if g as f64 == w || (g.is_nan() && w.is_nan()) {
            continue;
        }
        let e = (g as f64 - w).abs();
        if !e.is_finite() || e > atol + rtol * w.abs() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_passes_only_where_the_reference_is_nan() {
        let c = |g: f32, w: f64| check("y", &[g], &[w], 1e-5, 1e-4).pass;
        assert!(c(f32::NAN, f64::NAN));
        assert!(c(f32::INFINITY, f64::INFINITY));
        assert!(c(1.0, 1.0 + 1e-6));
        assert!(!c(f32::NAN, 1.0), "an unwritten element must fail");
        assert!(!c(1.0, f64::NAN));
        assert!(!c(f32::INFINITY, f64::NEG_INFINITY));
        assert!(!c(f32::INFINITY, 1e30));
    }

    /// The formulas above and the interpreter agree on every built-in
    /// graph: two independent oracles cross-checked (to the rounding of
    /// the programs' `f32` literals).
    #[test]
    fn the_formulas_and_the_interpreter_agree() {
        let cases = crate::suite::load(None, &["all".to_string()]).unwrap();
        let mut graphs = std::collections::BTreeSet::new();
        for mut case in cases {
            // The matrix, neural, autodiff and algorithm suites have no
            // formula here: the interpreter is their oracle, and the peers'
            // NumPy references (peers/common.py) check it independently.
            let suites = ["matrix", "neural", "autodiff", "algorithm"];
            if suites.contains(&case.group.as_str()) || !graphs.insert(case.graph.clone()) {
                continue;
            }
            for shape in [[1, 1], [3, 7], [5, 33]] {
                case.shape = shape;
                let program = tile_ir::parse_program(&case.program).unwrap();
                let (_, shapes) = crate::target::case_shapes(&program, &case).unwrap();
                let ins: Vec<Vec<f32>> = program
                    .params
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| !p.role.is_written())
                    .map(|(k, p)| {
                        let n: usize = shapes[&p.name].iter().product();
                        (0..n).map(|i| input(i, k)).collect()
                    })
                    .collect();
                let formula =
                    reference(&case.graph, &ins, (shape[0], shape[1]), &case.sizes).unwrap();
                let interp = interpreted(&case, &ins).unwrap();
                assert_eq!(formula.len(), interp.len(), "{}", case.graph);
                for (a, b) in formula.iter().zip(&interp) {
                    assert_eq!(a.len(), b.len(), "{} {shape:?}", case.graph);
                    for (x, y) in a.iter().zip(b) {
                        assert!(
                            (x - y).abs() <= 1e-9 + 1e-6 * x.abs(),
                            "{} {shape:?}: formula {x}, interpreter {y}",
                            case.graph
                        );
                    }
                }
            }
        }
        assert!(graphs.len() >= 9, "{graphs:?}");
    }
}
