//! The benchmark suite as data: `bench/suite.json` lists graphs, their
//! `.tile` programs, shapes, groups and tolerances. The file and the
//! programs are compiled into the binary so `tile bench` runs from any
//! directory; `--suite FILE` reads another list.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

const SUITE: &str = include_str!("../../../bench/suite.json");

/// Programs named by the built-in suite, by path.
const PROGRAMS: [(&str, &str); 28] = [
    (
        "examples/sigmoid_pair.tile",
        include_str!("../../../examples/sigmoid_pair.tile"),
    ),
    (
        "examples/gelu_pair.tile",
        include_str!("../../../examples/gelu_pair.tile"),
    ),
    (
        "tests/programs/controls/add.tile",
        include_str!("../../../tests/programs/controls/add.tile"),
    ),
    (
        "tests/programs/controls/gelu_ab.tile",
        include_str!("../../../tests/programs/controls/gelu_ab.tile"),
    ),
    (
        "tests/programs/controls/softmax.tile",
        include_str!("../../../tests/programs/controls/softmax.tile"),
    ),
    (
        "tests/programs/controls/rmsnorm.tile",
        include_str!("../../../tests/programs/controls/rmsnorm.tile"),
    ),
    (
        "tests/programs/controls/layernorm.tile",
        include_str!("../../../tests/programs/controls/layernorm.tile"),
    ),
    (
        "tests/programs/reductions/row_lse.tile",
        include_str!("../../../tests/programs/reductions/row_lse.tile"),
    ),
    (
        "tests/programs/reductions/row_norm.tile",
        include_str!("../../../tests/programs/reductions/row_norm.tile"),
    ),
    (
        "tests/programs/reductions/col_sum.tile",
        include_str!("../../../tests/programs/reductions/col_sum.tile"),
    ),
    (
        "tests/programs/reductions/full_sum.tile",
        include_str!("../../../tests/programs/reductions/full_sum.tile"),
    ),
    (
        "tests/programs/matrix/matmul.tile",
        include_str!("../../../tests/programs/matrix/matmul.tile"),
    ),
    (
        "tests/programs/contractions/gemm_gelu_pair.tile",
        include_str!("../../../tests/programs/contractions/gemm_gelu_pair.tile"),
    ),
    (
        "tests/programs/contractions/bmm.tile",
        include_str!("../../../tests/programs/contractions/bmm.tile"),
    ),
    (
        "tests/programs/matrix/row_dot.tile",
        include_str!("../../../tests/programs/matrix/row_dot.tile"),
    ),
    (
        "tests/programs/matrix/transpose.tile",
        include_str!("../../../tests/programs/matrix/transpose.tile"),
    ),
    (
        "tests/programs/neural/cross_entropy.tile",
        include_str!("../../../tests/programs/neural/cross_entropy.tile"),
    ),
    (
        "tests/programs/neural/mse.tile",
        include_str!("../../../tests/programs/neural/mse.tile"),
    ),
    (
        "tests/programs/neural/attention.tile",
        include_str!("../../../tests/programs/neural/attention.tile"),
    ),
    (
        "tests/programs/neural/conv1d.tile",
        include_str!("../../../tests/programs/neural/conv1d.tile"),
    ),
    (
        "tests/programs/derivatives/softmax_grad.tile",
        include_str!("../../../tests/programs/derivatives/softmax_grad.tile"),
    ),
    (
        "tests/programs/derivatives/layernorm_grad.tile",
        include_str!("../../../tests/programs/derivatives/layernorm_grad.tile"),
    ),
    (
        "tests/programs/derivatives/cross_entropy_loss_grad.tile",
        include_str!("../../../tests/programs/derivatives/cross_entropy_loss_grad.tile"),
    ),
    (
        "tests/programs/algorithm/argmax.tile",
        include_str!("../../../tests/programs/algorithm/argmax.tile"),
    ),
    (
        "tests/programs/algorithm/prefix_sum.tile",
        include_str!("../../../tests/programs/algorithm/prefix_sum.tile"),
    ),
    (
        "tests/programs/algorithm/rank.tile",
        include_str!("../../../tests/programs/algorithm/rank.tile"),
    ),
    (
        "tests/programs/algorithm/topk.tile",
        include_str!("../../../tests/programs/algorithm/topk.tile"),
    ),
    (
        "tests/programs/algorithm/histogram.tile",
        include_str!("../../../tests/programs/algorithm/histogram.tile"),
    ),
];

#[derive(Deserialize)]
struct SuiteFile {
    graphs: Vec<GraphEntry>,
}

#[derive(Deserialize)]
struct GraphEntry {
    graph: String,
    program: String,
    group: String,
    outputs: Vec<String>,
    atol: f64,
    rtol: f64,
    shapes: Vec<[usize; 2]>,
    /// Size symbols other than `M` and `N`, fixed for every shape (a
    /// matrix product's `K`, a head's `D`).
    #[serde(default)]
    sizes: BTreeMap<String, usize>,
    /// Floating-point operations per invocation, as a sum of products of
    /// integers and size names (`[[2, "M", "N", "K"]]`): the products'
    /// multiply-adds, two operations each.
    #[serde(default)]
    flops: Vec<Vec<serde_json::Value>>,
    /// Appended to the case names (`_d128`), where a graph appears twice.
    #[serde(default)]
    suffix: String,
}

/// One benchmark case: a graph at one shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// `sigmoid_pair_37x1537`.
    pub name: String,
    /// `sigmoid_pair`.
    pub graph: String,
    /// `seed`, `controls` or `reductions`.
    pub group: String,
    /// The program's `.tile` text.
    pub program: String,
    /// Rows and columns (the sizes `M` and `N`).
    pub shape: [usize; 2],
    /// The program's other size symbols, fixed by the suite.
    pub sizes: BTreeMap<String, usize>,
    /// Floating-point operations per invocation as a sum of products of
    /// integers and size names; empty when the suite gives none.
    pub flops: Vec<Vec<serde_json::Value>>,
    /// Output parameters validated.
    pub outputs: Vec<String>,
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
    /// Whether `f32` products may run on TF32 tensor cores (`tile bench
    /// --allow-tf32`): Tile's CUDA contractions and the peers' matrix
    /// products alike.
    pub allow_tf32: bool,
}

/// Reads a suite (the built-in one when `path` is `None`) and selects cases
/// whose group, graph or name is in `select` (all seed cases when empty).
pub fn load(path: Option<&Path>, select: &[String]) -> Result<Vec<Case>, String> {
    let (text, base) = match path {
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))?,
            p.parent().map(Path::to_path_buf),
        ),
        None => (SUITE.to_string(), None),
    };
    let file: SuiteFile =
        serde_json::from_str(&text).map_err(|e| format!("bad suite file: {e}"))?;
    let mut cases = Vec::new();
    for g in file.graphs {
        let program = match PROGRAMS.iter().find(|(p, _)| *p == g.program) {
            Some((_, t)) if base.is_none() => t.to_string(),
            _ => {
                let p = base.clone().unwrap_or_default().join(&g.program);
                std::fs::read_to_string(&p)
                    .map_err(|e| format!("{}: cannot read: {e}", p.display()))?
            }
        };
        for s in &g.shapes {
            cases.push(Case {
                name: format!("{}_{}x{}{}", g.graph, s[0], s[1], g.suffix),
                graph: g.graph.clone(),
                group: g.group.clone(),
                program: program.clone(),
                shape: *s,
                sizes: g.sizes.clone(),
                flops: g.flops.clone(),
                outputs: g.outputs.clone(),
                atol: g.atol,
                rtol: g.rtol,
                allow_tf32: false,
            });
        }
    }
    for (i, c) in cases.iter().enumerate() {
        if cases[..i].iter().any(|d| d.name == c.name) {
            return Err(format!(
                "bad suite file: two cases are named {} (give one graph entry a \"suffix\")",
                c.name
            ));
        }
    }
    let wanted = |c: &Case| {
        if select.is_empty() {
            c.group == "seed"
        } else {
            select
                .iter()
                .any(|s| s == "all" || *s == c.group || *s == c.graph || *s == c.name)
        }
    };
    let picked: Vec<Case> = cases.iter().filter(|c| wanted(c)).cloned().collect();
    if picked.is_empty() {
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        let mut groups: Vec<&str> = Vec::new();
        for c in &cases {
            if !groups.contains(&c.group.as_str()) {
                groups.push(&c.group);
            }
        }
        return Err(format!(
            "no case matches {select:?}; groups: {}, all; cases: {}",
            groups.join(", "),
            names.join(", ")
        ));
    }
    Ok(picked)
}

/// `tile bench --allow-tf32`: the cases whose program Tile runs as a
/// contraction (`gemm`, `gemm_gelu_pair`, `matmul`, a user's product) may
/// multiply `f32` operands on TF32 tensor cores, Tile's and the peers'
/// alike, and their absolute tolerance grows by `2^-9 sqrt(K)`. Rounding
/// `a` and `b` to TF32 (unit roundoff `2^-11`) changes each product by at
/// most `2^-10 |a| |b|`; the suite's inputs lie in [-1.001, 1.001], and
/// over `K` products of varied signs the changes add up like independent
/// errors, as `sqrt(K)`: `2^-9 sqrt(K)` is twice the largest change of
/// one product times `sqrt(K)`, a statistical allowance (about 0.13 at
/// `K` = 4096), not a proof. `crates/tile-cuda/tests/gpu.rs` checks the
/// exact meaning instead (the FP64 interpreter on TF32-rounded operands).
/// Other cases, attention among them, keep exact FP32 products and their
/// tolerances.
pub fn allow_tf32(cases: &mut [Case]) -> Result<(), String> {
    for c in cases.iter_mut() {
        let program = tile_ir::parse_program(&c.program).map_err(|e| format!("{}: {e}", c.name))?;
        let plan = tile_plan::compile(&program, &tile_plan::Options::default())
            .map_err(|e| format!("{}: {e}", c.name))?;
        let (sizes, _) = crate::target::case_shapes(&program, c)?;
        let depth = plan
            .kernels
            .iter()
            .filter_map(|k| k.contraction.as_ref())
            .filter_map(|ct| tile_ir::args::eval_int(&ct.k.hi, &sizes))
            .max();
        if let Some(k) = depth {
            c.allow_tf32 = true;
            c.atol += (k.max(0) as f64).sqrt() / 512.0;
        }
    }
    Ok(())
}

impl Case {
    /// The case's floating-point operations per invocation ([`Case::flops`]
    /// evaluated with `M`, `N` and its sizes), `None` when the suite gives
    /// no count; an error for an unknown name, a factor that is neither a
    /// name nor a non-negative integer, or an overflow.
    pub fn flop_count(&self) -> Result<Option<u64>, String> {
        if self.flops.is_empty() {
            return Ok(None);
        }
        let value = |f: &serde_json::Value| -> Result<u64, String> {
            match f {
                serde_json::Value::Number(n) => n
                    .as_u64()
                    .ok_or_else(|| format!("{}: flops factor {n} is not a count", self.name)),
                serde_json::Value::String(s) => match s.as_str() {
                    "M" => Ok(self.shape[0] as u64),
                    "N" => Ok(self.shape[1] as u64),
                    other => self.sizes.get(other).map(|&v| v as u64).ok_or_else(|| {
                        format!("{}: flops names unknown size `{other}`", self.name)
                    }),
                },
                other => Err(format!(
                    "{}: flops factor {other} is neither a count nor a size",
                    self.name
                )),
            }
        };
        let mut total: u64 = 0;
        for term in &self.flops {
            let mut p: u64 = 1;
            for f in term {
                p = p
                    .checked_mul(value(f)?)
                    .ok_or_else(|| format!("{}: flops overflow", self.name))?;
            }
            total = total
                .checked_add(p)
                .ok_or_else(|| format!("{}: flops overflow", self.name))?;
        }
        Ok(Some(total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_tf32_marks_the_contractions_only_and_widens_their_tolerance() {
        let mut cases = load(None, &["contractions".into(), "matrix".into()]).unwrap();
        let before = cases.clone();
        allow_tf32(&mut cases).unwrap();
        for (c, b) in cases.iter().zip(&before) {
            let product = matches!(
                c.graph.as_str(),
                "gemm" | "gemm_gelu_pair" | "matmul" | "bmm"
            );
            assert_eq!(c.allow_tf32, product, "{}", c.name);
            if product {
                let k = c.sizes["K"] as f64;
                assert!(
                    (c.atol - b.atol - k.sqrt() / 512.0).abs() < 1e-12,
                    "{}",
                    c.name
                );
            } else {
                assert_eq!(c.atol, b.atol, "{}", c.name);
            }
            assert_eq!(c.rtol, b.rtol, "{}", c.name);
        }
        assert!(cases.iter().any(|c| c.graph == "attention"));
        assert!(cases.iter().any(|c| c.graph == "matmul"));
    }
}
