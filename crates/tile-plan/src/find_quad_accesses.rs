//! Finds the accesses a GPU thread may make as one 16-byte vector in a
//! loop over a row four elements at a time ([`QuadAccesses`]): the
//! lowering's answer, which the GPU printers' quad loops read instead of
//! judging contiguity themselves.

use crate::affine::{unit_stride, Affine};
use crate::kernel_ir::QuadAccesses;
use tile_ir::{Expr, Program, Stmt};

/// Records, for every loop and reduction of `bodies` and every reduction
/// in `exprs`, whether each access inside it is contiguous in its
/// variable ([`QuadAccesses`]); `program` declares the accessed buffers
/// (scratch rows included).
pub fn find_quad_accesses(
    program: &Program,
    bodies: &[&[Stmt]],
    exprs: &[&Expr],
    out: &mut QuadAccesses,
) {
    for body in bodies {
        for s in body.iter() {
            stmt(program, s, out);
        }
    }
    for e in exprs {
        reductions(program, e, out);
    }
}

/// The contexts of one statement: a loop's own (its innermost variable,
/// the names its body binds), then every loop and reduction inside.
fn stmt(program: &Program, s: &Stmt, out: &mut QuadAccesses) {
    if let Stmt::For { vars, body, .. } = s {
        if let Some(v) = vars.last() {
            let bound: Vec<String> = body
                .iter()
                .filter_map(|s| match s {
                    Stmt::Let { name, .. } => Some(name.clone()),
                    _ => None,
                })
                .collect();
            for s in body {
                match s {
                    Stmt::Let { value, .. } => accesses(program, &v.name, &bound, value, out),
                    Stmt::Store {
                        buf, idx, value, ..
                    } => {
                        out.record(
                            &v.name,
                            buf,
                            idx,
                            contiguous(program, &v.name, &bound, buf, idx),
                        );
                        accesses(program, &v.name, &bound, value, out);
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
                reductions(program, &v.lo, out);
                reductions(program, &v.hi, out);
            }
            for t in body {
                stmt(program, t, out);
            }
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            reductions(program, cond, out);
            for t in then.iter().chain(els) {
                stmt(program, t, out);
            }
        }
        Stmt::Let { value, .. } => reductions(program, value, out),
        Stmt::Store { idx, value, .. } => {
            for e in idx.iter().chain([value]) {
                reductions(program, e, out);
            }
        }
    }
}

/// Every load of `e` (reduction bodies included) in the context of a
/// loop over `var` whose body binds `bound`.
fn accesses(program: &Program, var: &str, bound: &[String], e: &Expr, out: &mut QuadAccesses) {
    e.walk(&mut |x| {
        if let Expr::Load { buf, idx, .. } = x {
            out.record(var, buf, idx, contiguous(program, var, bound, buf, idx));
        }
    });
}

/// The reductions of `e`, each a context: its variable, nothing bound.
fn reductions(program: &Program, e: &Expr, out: &mut QuadAccesses) {
    e.walk(&mut |x| {
        if let Expr::Reduce { var, body, .. } = x {
            accesses(program, var, &[], body, out);
        }
    });
}

/// Whether `buf[idx]` is an `f32` access whose last index is `var + c`
/// and whose other indices and `c` are fixed over the loop (`bound`: the
/// names its body binds), with no load in the last index.
fn contiguous(program: &Program, var: &str, bound: &[String], buf: &str, idx: &[Expr]) -> bool {
    let Some((a, rest)) = program
        .param(buf)
        .and_then(|param| unit_stride(param, var, idx))
    else {
        return false;
    };
    let fixed = |e: &Expr| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        !e.has_reduction() && free.iter().all(|n| n != var && !bound.contains(n))
    };
    terms_fixed(&a, var, bound)
        && rest.iter().all(fixed)
        && idx.last().is_some_and(|last| !has_load(last))
}

/// Every name of `a` but `var` is fixed over the loop.
fn terms_fixed(a: &Affine, var: &str, bound: &[String]) -> bool {
    a.terms.keys().all(|n| n == var || !bound.contains(n))
}

fn has_load(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::Load { .. }));
    found
}
