//! Finds the accesses a GPU thread may make as one 16-byte vector in a
//! loop over a row four elements at a time ([`QuadAccesses`]): the
//! lowering's answer, which the GPU printers' quad loops read instead of
//! judging contiguity themselves.

use crate::affine::{unit_stride, Affine};
use crate::kernel_ir::QuadAccesses;
use std::collections::BTreeSet;
use tile_ir::{Expr, ParamIndex, Program, Stmt};

/// The program whose parameters the accesses name, with its index (one
/// lookup per access, not a walk of the parameter list).
type Params<'a> = (&'a Program, &'a ParamIndex);

/// Records, for every loop and reduction of `bodies` and every reduction
/// in `exprs`, whether each access inside it is contiguous in its
/// variable ([`QuadAccesses`]); `params` declares the accessed buffers
/// (scratch rows included).
pub fn find_quad_accesses(
    params: Params,
    bodies: &[&[Stmt]],
    exprs: &[&Expr],
    out: &mut QuadAccesses,
) {
    for body in bodies {
        for s in body.iter() {
            stmt(params, s, out);
        }
    }
    for e in exprs {
        reductions(params, e, out);
    }
}

/// The contexts of one statement: a loop's own (its innermost variable,
/// the names its body binds), then every loop and reduction inside.
fn stmt(params: Params, s: &Stmt, out: &mut QuadAccesses) {
    if let Stmt::For { vars, body, .. } = s {
        if let Some(v) = vars.last() {
            let bound: BTreeSet<&str> = body
                .iter()
                .filter_map(|s| match s {
                    Stmt::Let { name, .. } => Some(name.as_str()),
                    _ => None,
                })
                .collect();
            for s in body {
                match s {
                    Stmt::Let { value, .. } => accesses(params, &v.name, &bound, value, out),
                    Stmt::Store {
                        buf, idx, value, ..
                    } => {
                        let c = contiguous(params, &v.name, &bound, buf, idx);
                        out.record(&v.name, buf, idx, c);
                        accesses(params, &v.name, &bound, value, out);
                    }
                    _ => {}
                }
            }
        }
    }
    // The statement's own expressions, then the statements inside it.
    match s {
        Stmt::For { vars, body, .. } => {
            for v in vars {
                reductions(params, &v.lo, out);
                reductions(params, &v.hi, out);
            }
            for t in body {
                stmt(params, t, out);
            }
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            reductions(params, cond, out);
            for t in then.iter().chain(els) {
                stmt(params, t, out);
            }
        }
        Stmt::Let { value, .. } => reductions(params, value, out),
        Stmt::Store { idx, value, .. } => {
            for e in idx.iter().chain([value]) {
                reductions(params, e, out);
            }
        }
    }
}

/// Every load of `e` (reduction bodies included) in the context of a
/// loop over `var` whose body binds `bound`.
fn accesses(params: Params, var: &str, bound: &BTreeSet<&str>, e: &Expr, out: &mut QuadAccesses) {
    e.walk(&mut |x| {
        if let Expr::Load { buf, idx, .. } = x {
            out.record(var, buf, idx, contiguous(params, var, bound, buf, idx));
        }
    });
}

/// The reductions of `e`, each a context: its variable, nothing bound.
fn reductions(params: Params, e: &Expr, out: &mut QuadAccesses) {
    e.walk(&mut |x| {
        if let Expr::Reduce { var, body, .. } = x {
            accesses(params, var, &BTreeSet::new(), body, out);
        }
    });
}

/// Whether `buf[idx]` is an `f32` access whose last index is `var + c`
/// and whose other indices and `c` are fixed over the loop (`bound`: the
/// names its body binds), with no load in the last index.
fn contiguous(
    (program, index): Params,
    var: &str,
    bound: &BTreeSet<&str>,
    buf: &str,
    idx: &[Expr],
) -> bool {
    let Some((a, rest)) = index
        .param(program, buf)
        .and_then(|param| unit_stride(param, var, idx))
    else {
        return false;
    };
    let fixed = |e: &Expr| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        !e.has_reduction() && free.iter().all(|n| n != var && !bound.contains(n.as_str()))
    };
    terms_fixed(&a, var, bound)
        && rest.iter().all(fixed)
        && idx.last().is_some_and(|last| !has_load(last))
}

/// Every name of `a` but `var` is fixed over the loop.
fn terms_fixed(a: &Affine, var: &str, bound: &BTreeSet<&str>) -> bool {
    a.terms
        .keys()
        .all(|n| n == var || !bound.contains(n.as_str()))
}

fn has_load(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::Load { .. }));
    found
}
