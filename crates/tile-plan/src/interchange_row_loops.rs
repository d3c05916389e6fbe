//! Interchanges a row kernel's inner loop with the reduction inside it
//! when the reduction reads down columns. In a matrix product
//!
//! ```text
//! for j in 0..N {
//!   c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])
//! }
//! ```
//!
//! each result's reduction walks `b` down a column, a new row of `b` per
//! step, and its lanes (steps of `k`) gather one element from each. For a
//! block of up to [`COLUMN_BLOCK`] iterations of `j` the rewrite instead
//! runs each statement over the whole block, as `interchange_columns` does
//! for a column kernel's columns:
//!
//! ```text
//! for __blk0 in 0..(N + 2047) / 2048 {
//!   for j in jb..je { __cacc0[j - jb] = 0 }
//!   for k in 0..K, j in jb..je { __cacc0[j - jb] = __cacc0[j - jb] + f64(a[i, k] * b[k, j]) }
//!   for j in jb..je { c[i, j] = f32(__cacc0[j - jb]) }
//! }
//! ```
//!
//! with `jb = __blk0 * 2048` and `je = min(N, jb + 2048)`, so each
//! step reads a run of a row of `b` as vectors. The loop's iterations touch
//! distinct elements ([`crate::lanes_independent`], the rule that lets
//! them run as lanes), so running a statement for every iteration of the
//! block before the next keeps each iteration's order; each result's
//! reduction still runs over its range in order, accumulating in the same
//! type as the lane walk (`f64` for sums of `f32`).
//!
//! A loop is rewritten when it is one variable, its bounds read no buffer
//! (they are computed again for each block) and, like every name its body
//! reads apart from its own, name only size symbols and the row variable, some reduction in it reads a load whose last index follows
//! the loop's variable and not the reduction's, and
//! `interchange_columns`'s body rewrite covers it. Kernels whose body
//! `cache_reduced_values` rewrote keep their body. The CPU back end runs
//! the result ([`Kernel::interchanged`]); CUDA (whose threads already
//! read along rows) and [`crate::execute_plan`] keep the plain body.

use crate::interchange_columns::{interchange_body, Block};
use crate::{fold_expr, lanes_independent, Interchanged, Kernel, Mapping, COLUMN_BLOCK};
use tile_ir::{BinOp, Expr, Func, LoopVar, Program, Stmt};

/// Sets [`Kernel::interchanged`] on each row kernel of `program` with an
/// inner loop the rewrite covers.
pub fn interchange_row_loops(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels {
        let (Mapping::RowReduction, Some(row), None) = (k.mapping, k.domain.first(), &k.cached)
        else {
            continue;
        };
        let fixed = vec![row.name.clone()];
        let mut scratch = Vec::new();
        let mut loops = Vec::new();
        let body: Vec<Stmt> = k
            .body
            .iter()
            .map(
                |s| match interchange_loop(program, s, &fixed, loops.len(), &mut scratch) {
                    Some((blocked, named)) => {
                        loops.push(named);
                        blocked
                    }
                    None => s.clone(),
                },
            )
            .collect();
        if !loops.is_empty() {
            k.interchanged = Some(Interchanged {
                body,
                scratch,
                loops,
                sweeps: Vec::new(),
            });
        }
    }
}

/// The block loop replacing `s`, the `n`th loop rewritten in its kernel,
/// and the loop as `tile plan` names it, when `s` is a loop the rewrite
/// covers.
fn interchange_loop(
    program: &Program,
    s: &Stmt,
    fixed: &[String],
    n: usize,
    scratch: &mut Vec<crate::ScratchRow>,
) -> Option<(Stmt, String)> {
    let Stmt::For { vars, body, span } = s else {
        return None;
    };
    let [lv] = vars.as_slice() else {
        return None;
    };
    let symbols = program.size_symbols();
    // Bounds are read once by the plain loop and once per block here: they
    // must not read memory the loop may write (`0..c[i, 0]`).
    let known = |e: &Expr| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        let mut loads = false;
        e.walk(&mut |x| loads |= matches!(x, Expr::Load { .. }));
        !loads
            && free
                .iter()
                .all(|f| symbols.contains(f) || fixed.contains(f))
    };
    if !known(&lv.lo) || !known(&lv.hi) || !lanes_independent(lv, body) {
        return None;
    }
    if !reads_only(body, &lv.name, &symbols, fixed) || !reads_along(body, &lv.name) {
        return None;
    }
    let blk = tile_ir::names::generated("blk", n);
    // jb = lo + blk * B, je = min(hi, jb + B).
    let offset = Expr::binary(BinOp::Mul, Expr::var(&blk), Expr::Int(COLUMN_BLOCK));
    let first = match &lv.lo {
        Expr::Int(0) => offset,
        lo => fold_expr(Expr::binary(BinOp::Add, lo.clone(), offset)),
    };
    let end = fold_expr(Expr::call(
        Func::Min,
        vec![
            lv.hi.clone(),
            Expr::binary(BinOp::Add, first.clone(), Expr::Int(COLUMN_BLOCK)),
        ],
    ));
    let block = Block {
        var: &lv.name,
        first,
        end,
        fixed,
    };
    let mut rows = scratch.clone();
    let blocked = interchange_body(program, &block, body, &[], &mut rows)?;
    *scratch = rows;
    // Blocks: (hi - lo + B - 1) / B, none for an empty range.
    let count = fold_expr(Expr::binary(
        BinOp::Div,
        Expr::binary(
            BinOp::Add,
            Expr::binary(BinOp::Sub, lv.hi.clone(), lv.lo.clone()),
            Expr::Int(COLUMN_BLOCK - 1),
        ),
        Expr::Int(COLUMN_BLOCK),
    ));
    let blocked = Stmt::For {
        vars: vec![LoopVar {
            name: blk,
            lo: Expr::Int(0),
            hi: count,
        }],
        body: blocked,
        span: *span,
    };
    let named = format!("the loop over `{}` at line {}", lv.name, span.line);
    Some((blocked, named))
}

/// Whether every name `body` reads is a size symbol, a `fixed` name, the
/// loop's variable, or bound inside `body` (a binding or a reduction's
/// variable).
fn reads_only(body: &[Stmt], var: &str, symbols: &[String], fixed: &[String]) -> bool {
    let mut bound: Vec<String> = vec![var.to_string()];
    let mut used: Vec<String> = Vec::new();
    for s in body {
        s.walk(&mut |t| {
            if let Stmt::Let { name, .. } = t {
                bound.push(name.clone());
            }
        });
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| match x {
                Expr::Var(n) => used.push(n.clone()),
                Expr::Reduce { var, .. } => bound.push(var.clone()),
                _ => {}
            })
        });
    }
    used.iter()
        .all(|n| bound.contains(n) || symbols.contains(n) || fixed.contains(n))
}

/// Whether some reduction in `body` reads a load whose last index follows
/// `var` and not the reduction's own variable (a column of a matrix
/// product's right operand): the interchanged loop reads it along rows.
fn reads_along(body: &[Stmt], var: &str) -> bool {
    let uses = |e: &Expr, n: &str| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        free.iter().any(|f| f == n)
    };
    let mut found = false;
    for s in body {
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                let Expr::Reduce { var: r, body, .. } = x else {
                    return;
                };
                body.walk(&mut |l| {
                    if let Expr::Load { idx, .. } = l {
                        if let Some(last) = idx.last() {
                            found |= uses(last, var) && !uses(last, r);
                        }
                    }
                });
            })
        });
    }
    found
}
