//! The plan: kernels in launch order, each with one mapping, plus every
//! fallback and unused input. A plan is data: it prints for people and as
//! JSON for scripts, and the back ends lower it without deciding legality.

use crate::RangeError;
use serde_json::{json, Value};
use std::fmt;
use tile_ir::{LoopVar, Program, Stmt};

/// How a kernel's work is spread over workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mapping {
    /// One work item per element of the domain, computing all the group's
    /// stores and shared values.
    ElementGrid,
    /// One element-grid kernel per store (fusion off), recomputing what
    /// each store needs.
    Split,
    /// One row (the outermost loop variable) per work group or task, with
    /// reductions and the row's element-wise statements inside.
    RowReduction,
    /// One work item per value of the row variable, as for `row_reduction`,
    /// but adjacent work items run on adjacent vector lanes or threads and
    /// each reduces down its column in order: chosen when the reductions
    /// walk an outer dimension and the row variable the innermost one
    /// (`y[j] = sum(i in 0..M: x[i, j])`), see [`crate::orient_rows`].
    ColumnReduction,
    /// A store outside any nest whose value holds one reduction over sizes
    /// (`t[0] = sum(i in 0..M: sum(j in 0..N: x[i, j]))`): the reduction's
    /// range cut into chunks reduced in parallel, each in a fixed order, the
    /// chunks combined in order, then the store; see
    /// [`crate::split_reductions`]. The domain is the split variable.
    FullReduction,
    /// The statements in program order on one worker.
    Serial,
}

impl Mapping {
    /// The name used in plans and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mapping::ElementGrid => "element_grid",
            Mapping::Split => "split",
            Mapping::RowReduction => "row_reduction",
            Mapping::ColumnReduction => "column_reduction",
            Mapping::FullReduction => "full_reduction",
            Mapping::Serial => "serial",
        }
    }

    /// True for the mappings whose work items are the elements of the domain.
    pub fn is_elementwise(self) -> bool {
        matches!(self, Mapping::ElementGrid | Mapping::Split)
    }
}

/// The legality rule behind a fallback (names as in docs/guide/plans.md, "Seeing the plan").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// Nests over different domains are never merged.
    DifferentDomain,
    /// A buffer has more than one store in the group.
    Waw,
    /// Distinct iterations may write the same element.
    NonInjective,
    /// A buffer written in the group is read after the write.
    Raw,
    /// A buffer written in the group is read before the write. (No rule
    /// for overlapping buffers: every runtime refuses arguments whose
    /// memory overlaps a written one before any work, so the planner may
    /// assume distinct buffers.)
    War,
    /// The analysis cannot see the access pattern (non-affine index or
    /// bound, statements outside a nest).
    Unknown,
}

impl Rule {
    /// The rule's name in plans.
    pub fn name(self) -> &'static str {
        match self {
            Rule::DifferentDomain => "different_domain",
            Rule::Waw => "waw",
            Rule::NonInjective => "non_injective",
            Rule::Raw => "raw",
            Rule::War => "war",
            Rule::Unknown => "unknown",
        }
    }
}

/// One refusal: what could not be done, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Fallback {
    /// The rule that refused.
    pub rule: Rule,
    /// A sentence naming the buffers, lines and consequence.
    pub detail: String,
}

/// One kernel of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// `k0`, `k1`, ... in launch order.
    pub name: String,
    /// How it runs.
    pub mapping: Mapping,
    /// The domain whose points are the work items: all nest variables for
    /// `element_grid`/`split`, the row variable for `row_reduction` and
    /// `column_reduction`, none
    /// for `serial`.
    pub domain: Vec<LoopVar>,
    /// What one work item executes, in program order (for `serial`, the
    /// whole statements).
    pub body: Vec<Stmt>,
    /// Buffers written, in program order.
    pub stores: Vec<String>,
    /// Buffers read, in program order.
    pub reads: Vec<String>,
    /// Source lines of the statements it came from.
    pub lines: Vec<u32>,
    /// Row and column kernels: how a block's threads share one row or
    /// column ([`crate::find_row_forms`]); `None` for other mappings.
    pub sharing: Option<crate::Sharing>,
    /// Row kernels that compute a value twice: the body with it computed
    /// once into scratch rows ([`crate::cache_reduced_values`]).
    pub cached: Option<crate::Cached>,
    /// Column kernels: the body run a block of columns at a time
    /// ([`crate::interchange_columns`]); row kernels: inner loops that
    /// read down columns run a block of iterations at a time
    /// ([`crate::interchange_row_loops`]).
    pub interchanged: Option<crate::Interchanged>,
    /// Row kernels: rows of inputs that several of the row's statements
    /// read whole and the kernel never writes, which a target may read
    /// once per row ([`crate::find_reread_rows`]).
    pub rereads: Vec<crate::Reread>,
    /// The last variable of each innermost loop (and an element kernel's
    /// innermost domain variable): whether its iterations may run as
    /// lanes or threads,
    /// and whether a group of them may load before it stores
    /// ([`crate::find_lane_loops`]).
    pub lanes: Vec<crate::LaneLoop>,
    /// Full reductions: the parts the targets print, the reduction's
    /// chunk and the final store ([`crate::split_full_reductions`]).
    pub full: Option<crate::FullParts>,
    /// Row kernels that are a matrix product with an element-wise
    /// epilogue: the operands and the epilogue a target that tiles
    /// contractions runs ([`crate::find_contractions`]).
    pub contraction: Option<crate::Contraction>,
    /// Row kernels that are one attention head: the operands and the
    /// per-row bodies a target that tiles it runs
    /// ([`crate::find_attention`]).
    pub attention: Option<crate::Attention>,
}

impl Kernel {
    /// ` over i in 0..M, j in 0..N`, or nothing for a kernel without a
    /// domain: how plans and generated kernel files name the domain.
    pub fn over(&self) -> String {
        if self.domain.is_empty() {
            return String::new();
        }
        let d: Vec<String> = self
            .domain
            .iter()
            .map(|v| format!("{} in {}..{}", v.name, v.lo, v.hi))
            .collect();
        format!(" over {}", d.join(", "))
    }

    /// A full reduction's parts ([`Kernel::full`]); `None` for any other
    /// mapping, even in a kernel built by hand from one.
    pub fn full_parts(&self) -> Option<&crate::FullParts> {
        self.full
            .as_ref()
            .filter(|_| self.mapping == Mapping::FullReduction)
    }

    /// Parameters the kernel touches, in the program's declaration order
    /// (unused inputs never appear).
    pub fn params<'p>(&self, program: &'p Program) -> Vec<&'p tile_ir::Param> {
        // A walk of the parameters: cheaper than building an index for one
        // kernel (launch paths call this).
        program
            .params
            .iter()
            .filter(|p| self.stores.contains(&p.name) || self.reads.contains(&p.name))
            .collect()
    }

    /// [`Kernel::params`] through `program`'s index: time in the kernel's
    /// buffers, not the program's parameters.
    pub fn params_in<'p>(
        &self,
        program: &'p Program,
        index: &tile_ir::ParamIndex,
    ) -> Vec<&'p tile_ir::Param> {
        let mut at: Vec<usize> = self
            .stores
            .iter()
            .chain(&self.reads)
            .filter_map(|n| index.position(program, n))
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter().map(|i| &program.params[i]).collect()
    }

    /// The extent of each domain variable at `sizes` (0 for an empty
    /// range), each below [`crate::INDEX_LIMIT`].
    pub fn extents(&self, sizes: &tile_ir::Sizes) -> Result<Vec<i64>, RangeError> {
        self.domain
            .iter()
            .map(|v| {
                let lo = tile_ir::args::eval_int(&v.lo, sizes);
                let hi = tile_ir::args::eval_int(&v.hi, sizes);
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    return Err(self.refuse(format!(
                        "cannot evaluate the domain `{} in {}..{}`",
                        v.name, v.lo, v.hi
                    )));
                };
                let n = (hi as i128 - lo as i128).max(0);
                if n >= crate::INDEX_LIMIT {
                    return Err(self.refuse(format!(
                        "the domain `{} in {}..{}` spans 2^62 values or more",
                        v.name, v.lo, v.hi
                    )));
                }
                Ok(n as i64)
            })
            .collect()
    }

    /// Number of work items at `sizes`: the domain's points for element
    /// grids, its rows for row and column reductions, its chunks for a full
    /// reduction ([`crate::full_chunks`]), 1 for `serial`. Checked: a
    /// domain of 2^62 items or more is an error, never a wrapped count.
    pub fn work_items(&self, sizes: &tile_ir::Sizes) -> Result<i64, RangeError> {
        let ext = self.extents(sizes)?;
        match self.mapping {
            Mapping::Serial => Ok(1),
            Mapping::FullReduction => Ok(crate::full_chunks(ext.first().copied().unwrap_or(0)).0),
            Mapping::RowReduction | Mapping::ColumnReduction => ext
                .first()
                .copied()
                .ok_or_else(|| self.refuse("a row kernel without a row variable".to_string())),
            Mapping::ElementGrid | Mapping::Split => {
                let total = ext.iter().try_fold(1i128, |a, &n| {
                    let t = a * n as i128;
                    (t < crate::INDEX_LIMIT).then_some(t)
                });
                total.map(|t| t as i64).ok_or_else(|| {
                    self.refuse("the domain holds 2^62 work items or more".to_string())
                })
            }
        }
    }

    fn refuse(&self, what: String) -> RangeError {
        RangeError {
            span: tile_ir::Span::new(self.lines.first().copied().unwrap_or(0), 1),
            message: format!("kernel {}: {what}", self.name),
        }
    }
}

/// The result of planning a program.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The simplified program the kernels were cut from.
    pub program: Program,
    /// Kernels in launch order.
    pub kernels: Vec<Kernel>,
    /// Every refusal, in program order.
    pub fallbacks: Vec<Fallback>,
    /// Inputs no store depends on.
    pub unused_inputs: Vec<String>,
    /// Why a correct mapping is costly ([`crate::find_costs`]), if it is.
    pub notes: Vec<String>,
    /// Whether fusion was enabled.
    pub fusion: bool,
    /// Bindings the simplification introduced (values shared by several
    /// expressions, `c0`), which messages about the program replace by
    /// their values: they are not the user's names.
    pub shared: Vec<String>,
}

impl Plan {
    /// The plan as the JSON object documented in docs/guide/plans.md (`tile plan --json`).
    pub fn to_json(&self) -> Value {
        let kernels: Vec<Value> = self
            .kernels
            .iter()
            .map(|k| {
                json!({
                    "name": k.name,
                    "mapping": k.mapping.name(),
                    "stores": k.stores,
                    "reads": k.reads,
                    "domain": k.domain.iter().map(|v| format!("{} in {}..{}", v.name, v.lo, v.hi)).collect::<Vec<_>>(),
                    "lines": k.lines,
                    "sharing": k.sharing.as_ref().map(|s| s.describe()),
                    "caches": k.cached.as_ref().map_or(vec![], |c| c
                        .cached_values()
                        .into_iter()
                        .map(|(row, var, value)| json!({
                            "value": value.to_string(),
                            "var": var,
                            "range": format!("{}..{}", row.lo, row.hi),
                            "scratch": row.name,
                        }))
                        .collect::<Vec<_>>()),
                    "rereads": k.rereads.iter().map(|r| json!({
                        "buf": r.buf,
                        "range": format!("{}..{}", r.lo, r.hi),
                        "readers": r.readers,
                    })).collect::<Vec<_>>(),
                    "lanes": k.lanes.iter().map(|l| json!({
                        "var": l.var,
                        "line": l.line,
                        "lanes": l.lanes,
                        "batch": l.batch,
                    })).collect::<Vec<_>>(),
                    "contraction": k.contraction.as_ref().map(|c| json!({
                        "a": c.a.buf,
                        "a_transposed": c.a.transposed,
                        "b": c.b.buf,
                        "b_transposed": c.b.transposed,
                        "batch": c.batch.as_ref().map(|b| json!({"var": b.name, "a": c.a.batched, "b": c.b.batched})),
                        "line": c.line,
                        "fused": c.fused,
                        "columns": crate::CONTRACTION_COLUMNS,
                    })),
                    "attention": k.attention.as_ref().map(|a| json!({
                        "q": a.q.buf,
                        "k": a.k.buf,
                        "v": a.v.buf,
                        "line": a.line,
                    })),
                    "interchanged": k.interchanged.as_ref().map(|c| json!({
                        "block": crate::COLUMN_BLOCK,
                        "loops": c.loops,
                        "sweeps": c.sweeps,
                        "scratch": c.scratch.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
                    })),
                })
            })
            .collect();
        let fallbacks: Vec<Value> = self
            .fallbacks
            .iter()
            .map(|f| json!({"rule": f.rule.name(), "detail": f.detail}))
            .collect();
        json!({
            "program": self.program.name,
            "fusion": self.fusion,
            "kernels": kernels,
            "fallbacks": fallbacks,
            "notes": self.notes,
            "unused_inputs": self.unused_inputs,
        })
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.kernels.len();
        writeln!(
            f,
            "program {}: {} kernel{} (fusion {})",
            self.program.name,
            n,
            if n == 1 { "" } else { "s" },
            if self.fusion { "on" } else { "off" }
        )?;
        for k in &self.kernels {
            let lines: Vec<String> = k.lines.iter().map(|l| l.to_string()).collect();
            writeln!(f, "  {} {}{}", k.name, k.mapping.name(), k.over())?;
            writeln!(f, "     stores: {}", list(&k.stores))?;
            writeln!(f, "     reads:  {}", list(&k.reads))?;
            if !lines.is_empty() {
                writeln!(f, "     lines:  {}", lines.join(", "))?;
            }
            if let Some(sh) = &k.sharing {
                let what = if k.mapping == Mapping::ColumnReduction {
                    "column"
                } else {
                    "row"
                };
                writeln!(
                    f,
                    "     {what}:{} {}",
                    " ".repeat(6 - what.len()),
                    sh.describe()
                )?;
            }
            if let Some(c) = &k.cached {
                for (row, var, value) in c.cached_values() {
                    writeln!(
                        f,
                        "     caches: {value} for {var} in {}..{} (scratch row {})",
                        row.lo, row.hi, row.name
                    )?;
                }
            }
            for l in &k.lanes {
                writeln!(f, "     lanes:  {}", l.describe())?;
            }
            for r in &k.rereads {
                writeln!(
                    f,
                    "     rereads: {} over {}..{} (whole rows, by {} statements; never written here, so a target may read each row once)",
                    r.buf, r.lo, r.hi, r.readers
                )?;
            }
            if let Some(c) = &k.contraction {
                writeln!(f, "     contraction: {}", c.describe())?;
            }
            if let Some(a) = &k.attention {
                writeln!(f, "     attention: {}", a.describe())?;
            }
            if let Some(c) = &k.interchanged {
                let rows: Vec<&str> = c.scratch.iter().map(|r| r.name.as_str()).collect();
                if c.loops.is_empty() {
                    writeln!(
                        f,
                        "     blocks: each statement over {} columns at a time (scratch rows {})",
                        crate::COLUMN_BLOCK,
                        rows.join(", ")
                    )?;
                    for n in &c.sweeps {
                        writeln!(
                            f,
                            "     sweeps: {n} reductions over the same rows in one sweep per block"
                        )?;
                    }
                } else {
                    writeln!(
                        f,
                        "     blocks: {}: each statement over {} iterations at a time (scratch rows {})",
                        c.loops.join(" and "),
                        crate::COLUMN_BLOCK,
                        rows.join(", ")
                    )?;
                }
            }
        }
        if self.fallbacks.is_empty() {
            writeln!(f, "fallbacks: none")?;
        } else {
            writeln!(f, "fallbacks:")?;
            for fb in &self.fallbacks {
                writeln!(f, "  [{}] {}", fb.rule.name(), fb.detail)?;
            }
        }
        for (i, n) in self.notes.iter().enumerate() {
            if i == 0 {
                writeln!(f, "notes:")?;
            }
            writeln!(f, "  {n}")?;
        }
        writeln!(f, "unused inputs: {}", list(&self.unused_inputs))
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}
