//! Interchanges a column kernel's loops so that each step reads along
//! rows. A `column_reduction` work item reduces down its column; walked
//! column by column (a vector of columns at a time), every step of a long
//! column touches a new page, and the walk is bound by address
//! translation, not bandwidth. For a block of up to [`COLUMN_BLOCK`] columns,
//! the rewrite runs each statement over the whole block before the next:
//!
//! ```text
//! for j in lo..hi {                      for j in cb..ce { __cacc0[j - cb] = 0 }
//!   m = sum(i in 0..M: x[i, j])    ->    for i in 0..M, j in cb..ce {
//!   y[j] = m / f32(M)                      __cacc0[j - cb] = __cacc0[j - cb] + f64(x[i, j]) }
//! }                                      for j in cb..ce { __cval0[j - cb] = f32(__cacc0[j - cb]) }
//!                                        for j in cb..ce { y[j] = __cval0[j - cb] / f32(M) }
//! ```
//!
//! with `cb..ce` the block (names the kernel binds to its block loop) and
//! `__cacc*`, `__cval*` per-thread scratch rows of [`COLUMN_BLOCK`] elements.
//! Columns are independent (the plan proved it), so running a statement
//! for every column of the block before the next keeps each column's
//! order; each column's reduction still runs over its range in order,
//! accumulating in the same type as the lane walk (`f64` for sums of
//! `f32`). Sibling reductions (consecutive statements' reductions over one
//! range, none reading what another writes; `hoist_sibling_reductions.rs`)
//! share one sweep: `for i in 0..M { for j in cb..ce {acc0} for j in cb..ce
//! {acc1} }`, so a block's rows are read once while each accumulator row
//! is updated in its own order. Bodies it does not cover (`if`, nested reductions, bounds that
//! are not size symbols, integer or boolean reductions and bindings) keep
//! the lane walk.
//!
//! The pass runs in [`crate::compile`] and records the rewritten body
//! beside the kernel's own ([`Kernel::interchanged`]); the CPU back end
//! runs it, a block of columns per step of each thread's share (the CPU
//! fixture tests check it against the interpreter). The CUDA back end
//! keeps the plain body (its threads already read along rows), and so
//! does [`crate::execute_plan`]: the rewrite rounds each sum to the
//! column's type where the `f64` interpreter does not, so the two would
//! differ in the last bits.

use crate::{Kernel, Mapping, ScratchRow};
use tile_ir::{BinOp, DType, Expr, Func, LoopVar, Program, ReduceOp, Span, Stmt};

/// Columns per block: each row is read in runs of up to this many
/// elements, and an accumulator row (8 bytes per column) stays in the
/// first-level cache.
pub const COLUMN_BLOCK: i64 = 2048;

/// A column kernel's body interchanged to run a block of columns at a
/// time.
#[derive(Clone, Debug, PartialEq)]
pub struct Interchanged {
    /// The statements, each over the block's columns
    /// `column_block_names()`: bound by whoever runs it to the block's
    /// first column and one past its last.
    pub body: Vec<Stmt>,
    /// Per-thread scratch rows of [`COLUMN_BLOCK`] elements (the
    /// reductions' accumulators and the bindings' values).
    pub scratch: Vec<ScratchRow>,
    /// Row kernels: the inner loops run in blocks, as `tile plan` names
    /// them (`the loop over `j` at line 10`); empty for column kernels,
    /// whose blocks are of the kernel's own columns.
    pub loops: Vec<String>,
    /// Column kernels: for each group of sibling reductions (bound
    /// together by `hoist_sibling_reductions.rs`), how many share one sweep
    /// over the rows per block, each into its own accumulator row.
    pub sweeps: Vec<usize>,
}

/// Sets [`Kernel::interchanged`] on each column kernel of `program` whose
/// body the rewrite covers.
pub fn interchange_columns(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels {
        let (Mapping::ColumnReduction, Some(col)) = (k.mapping, k.domain.first()) else {
            continue;
        };
        let (cb, ce) = column_block_names();
        let block = Block {
            var: &col.name,
            first: Expr::var(&cb),
            end: Expr::var(&ce),
            fixed: &[],
        };
        // Sibling reductions (one range, nothing read that another
        // writes) sweep the rows once per block.
        let (body, groups) =
            match crate::hoist_sibling_reductions::hoist_sibling_reductions(&k.body) {
                Some(h) => (h.body, h.groups),
                None => (k.body.clone(), Vec::new()),
            };
        let mut scratch = Vec::new();
        k.interchanged =
            interchange_body(program, &block, &body, &groups, &mut scratch).map(|body| {
                Interchanged {
                    body,
                    scratch,
                    loops: Vec::new(),
                    sweeps: groups.iter().map(|g| g.len()).collect(),
                }
            });
    }
}

/// The IR names of the block's first column and one past its last.
pub fn column_block_names() -> (String, String) {
    (
        tile_ir::names::generated("col_b", 0),
        tile_ir::names::generated("col_e", 0),
    )
}

/// A block of iterations of the variable `var`: `first..end`, at most
/// [`COLUMN_BLOCK`] of them. `fixed` names other integers that keep their
/// value over the block (a row kernel's row variable).
pub(crate) struct Block<'a> {
    pub var: &'a str,
    pub first: Expr,
    pub end: Expr,
    pub fixed: &'a [String],
}

/// `body` (the statements of one iteration of `block.var`) interchanged to
/// run each statement over the whole block, with its scratch rows added to
/// `scratch`; `None` when the body is not covered. The bindings of each
/// range in `groups` (sibling reductions, one each, over one range) share
/// one sweep over that range: their accumulator rows are filled first,
/// then each step of the range updates every one of them in order.
pub(crate) fn interchange_body(
    program: &Program,
    block: &Block,
    body: &[Stmt],
    groups: &[std::ops::Range<usize>],
    scratch: &mut Vec<ScratchRow>,
) -> Option<Vec<Stmt>> {
    let symbols = program.size_symbols();
    let col = block.var;
    let slot = || Expr::binary(BinOp::Sub, Expr::var(col), block.first.clone());
    let over_block = |stmts: Vec<Stmt>, span: Span| Stmt::For {
        vars: vec![LoopVar {
            name: col.to_string(),
            lo: block.first.clone(),
            hi: block.end.clone(),
        }],
        body: stmts,
        span,
    };
    let mut types: std::collections::HashMap<String, DType> = symbols
        .iter()
        .chain(std::iter::once(&col.to_string()))
        .chain(block.fixed)
        .map(|n| (n.clone(), DType::I32))
        .collect();
    let mut out = Vec::new();
    let row = |prefix: &str, dtype: DType, scratch: &mut Vec<ScratchRow>| {
        let name = tile_ir::names::generated(prefix, scratch.len());
        scratch.push(ScratchRow {
            name: name.clone(),
            dtype,
            lo: Expr::Int(0),
            hi: Expr::Int(COLUMN_BLOCK),
        });
        name
    };
    // Bindings made so far and the scratch rows holding them.
    let mut held: Vec<(String, String)> = Vec::new();
    // The open group of sibling reductions.
    let mut group: Option<Siblings> = None;
    for (n, s) in body.iter().enumerate() {
        if let Some(g) = groups.iter().find(|g| g.start == n) {
            group = Some(Siblings {
                end: g.end,
                fills: Vec::new(),
                sweeps: Vec::new(),
                after: Vec::new(),
            });
        }
        let before = out.len();
        let (value, span) = match s {
            Stmt::Let { value, span, .. } | Stmt::Store { value, span, .. } => {
                (value.clone(), *span)
            }
            _ => return None,
        };
        // Types from the statement as written (bindings by name).
        let value_type = tile_ir::infer_type(&value, &|n| types.get(n).copied(), program);
        if let Stmt::Store { idx, .. } = s {
            if idx.iter().any(|e| e.has_reduction()) {
                return None;
            }
        }
        // Each reduction: fill its accumulator row over the block, then
        // read it back in its place.
        let mut failed = false;
        let mut steps: Vec<Stmt> = Vec::new();
        let var_type = |n: &str| types.get(n).copied();
        let value = replace_reductions(value, &mut |r| {
            let Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } = &r
            else {
                return r;
            };
            let inner = |n: &str| {
                if n == var {
                    Some(DType::I32)
                } else {
                    var_type(n)
                }
            };
            let t = tile_ir::infer_type(body, &inner, program);
            let uniform = |e: &Expr| {
                let mut free = Vec::new();
                e.free_vars(&mut free);
                free.iter()
                    .all(|f| symbols.contains(f) || block.fixed.contains(f))
            };
            if !t.is_float() || body.has_reduction() || var == col || !uniform(lo) || !uniform(hi) {
                failed = true;
                return r;
            }
            let acc_t = if *op == ReduceOp::Sum && t == DType::F32 {
                DType::F64
            } else {
                t
            };
            let acc = row("cacc", acc_t, scratch);
            let at = |e: Expr| Expr::load(&acc, vec![e]);
            let init = match op {
                ReduceOp::Sum => Expr::Float(0.0),
                // NaN: the first element replaces it, as in the lane walk.
                _ => Expr::Float(f64::NAN),
            };
            steps.push(over_block(
                vec![Stmt::store(acc.clone(), vec![slot()], init, span)],
                span,
            ));
            let body = read_held((**body).clone(), &held, &slot());
            let term = if acc_t == t {
                body
            } else {
                Expr::call(Func::Cast(acc_t), vec![body])
            };
            let next = match op {
                ReduceOp::Sum => Expr::binary(BinOp::Add, at(slot()), term),
                ReduceOp::Max => Expr::call(Func::Max, vec![at(slot()), term]),
                ReduceOp::Min => Expr::call(Func::Min, vec![at(slot()), term]),
            };
            steps.push(Stmt::For {
                vars: vec![
                    LoopVar {
                        name: var.clone(),
                        lo: (**lo).clone(),
                        hi: (**hi).clone(),
                    },
                    LoopVar {
                        name: col.to_string(),
                        lo: block.first.clone(),
                        hi: block.end.clone(),
                    },
                ],
                body: vec![Stmt::store(acc.clone(), vec![slot()], next, span)],
                span,
            });
            let read = if acc_t == t {
                at(slot())
            } else {
                Expr::call(Func::Cast(t), vec![at(slot())])
            };
            match op {
                ReduceOp::Sum => read,
                // An empty range: the operator's identity, not NaN.
                _ => Expr::call(
                    Func::Select,
                    vec![
                        Expr::binary(BinOp::Gt, (**hi).clone(), (**lo).clone()),
                        read,
                        Expr::Float(if *op == ReduceOp::Max {
                            f64::NEG_INFINITY
                        } else {
                            f64::INFINITY
                        }),
                    ],
                ),
            }
        });
        if failed {
            return None;
        }
        let value = read_held(value, &held, &slot());
        out.extend(steps);
        match s {
            Stmt::Let { name, .. } => {
                let t = value_type;
                // Scratch rows hold floats exactly; an integer binding is
                // 64-bit in generated code and an `i32` row would clamp it.
                if !t.is_float() {
                    return None;
                }
                let buf = row("cval", t, scratch);
                out.push(over_block(
                    vec![Stmt::store(buf.clone(), vec![slot()], value, span)],
                    span,
                ));
                types.insert(name.clone(), t);
                held.push((name.clone(), buf));
            }
            Stmt::Store { buf, idx, .. } => {
                let idx = idx
                    .iter()
                    .map(|e| read_held(e.clone(), &held, &slot()))
                    .collect();
                out.push(over_block(
                    vec![Stmt::store(buf.clone(), idx, value, span)],
                    span,
                ));
            }
            _ => return None,
        }
        if let Some(g) = &mut group {
            // This member's fill and sweep, then its value's row.
            let mine: Vec<Stmt> = out.drain(before..).collect();
            let [fill, sweep, rest @ ..] = mine.as_slice() else {
                return None;
            };
            g.fills.push(fill.clone());
            g.sweeps.push(sweep.clone());
            g.after.extend(rest.iter().cloned());
            if n + 1 == g.end {
                let g = group.take()?;
                out.extend(g.fills);
                out.push(one_sweep(g.sweeps)?);
                out.extend(g.after);
            }
        }
    }
    Some(out)
}

/// A group of sibling reductions being interchanged: where it ends in the
/// body, its accumulator rows' fills, its sweeps over the rows, and the
/// statements after them (the bound values' rows).
struct Siblings {
    end: usize,
    fills: Vec<Stmt>,
    sweeps: Vec<Stmt>,
    after: Vec<Stmt>,
}

/// Sweeps over one range (`for i in lo..hi, j in block`, one accumulator
/// row each) as one: `for i in lo..hi { for j in block {...} ... }`, each
/// row updated in the order it was alone.
fn one_sweep(sweeps: Vec<Stmt>) -> Option<Stmt> {
    let mut outer = None;
    let mut inner = Vec::new();
    for s in sweeps {
        let Stmt::For { vars, body, span } = s else {
            return None;
        };
        let [range, col] = vars.as_slice() else {
            return None;
        };
        outer.get_or_insert((range.clone(), span));
        inner.push(Stmt::For {
            vars: vec![col.clone()],
            body,
            span,
        });
    }
    let (range, span) = outer?;
    Some(Stmt::For {
        vars: vec![range],
        body: inner,
        span,
    })
}

/// `e` with each reduction not inside another replaced by `f`'s result.
fn replace_reductions(e: Expr, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
    if matches!(e, Expr::Reduce { .. }) {
        return f(e);
    }
    let mut e = e;
    for c in e.children_mut() {
        let taken = std::mem::replace(c, Expr::Int(0));
        *c = replace_reductions(taken, f);
    }
    e
}

/// `e` with every binding in `held` read from its scratch row at `slot`.
fn read_held(mut e: Expr, held: &[(String, String)], slot: &Expr) -> Expr {
    for (name, buf) in held {
        e.substitute(name, &Expr::load(buf, vec![slot.clone()]));
    }
    e
}
