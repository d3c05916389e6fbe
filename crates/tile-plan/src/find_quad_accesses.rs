//! Finds the accesses a GPU thread may make as one 16-byte vector in a
//! loop over a row four elements at a time ([`QuadAccesses`]): the
//! lowering's answer, which the GPU printers' quad loops read instead of
//! judging contiguity themselves, and which of them one check at the
//! loop's entry proves in bounds over the whole loop (the printers print
//! that check and vectorise nothing else).

use crate::affine::{unit_stride, Affine};
use crate::kernel_ir::QuadAccesses;
use std::collections::BTreeSet;
use tile_ir::{Expr, ParamIndex, Program, Stmt};

/// The program whose parameters the accesses name, with its index (one
/// lookup per access, not a walk of the parameter list), and the names
/// whose range is known at every loop's entry (size symbols, loop and
/// reduction variables, the kernel's domain and a full reduction's chunk
/// bounds; never a binding).
type Params<'a> = (&'a Program, &'a ParamIndex, &'a BTreeSet<String>);

/// Records, for every loop and reduction of `bodies` and every reduction
/// in `exprs`, whether each access inside it is contiguous in its
/// variable ([`QuadAccesses`]); `params` declares the accessed buffers
/// (scratch rows included), `domain` names the kernel's own variables.
pub fn find_quad_accesses(
    (program, index): (&Program, &ParamIndex),
    domain: &[String],
    bodies: &[&[Stmt]],
    exprs: &[&Expr],
    out: &mut QuadAccesses,
) {
    let mut known: BTreeSet<String> = index.symbols().iter().cloned().collect();
    known.extend(domain.iter().cloned());
    let (lo, hi, _) = crate::full_names();
    known.extend([lo, hi]);
    let mut vars: Vec<String> = Vec::new();
    let mut loop_var = |e: &Expr| {
        if let Expr::Reduce { var, .. } = e {
            vars.push(var.clone());
        }
    };
    for body in bodies {
        for s in body.iter() {
            s.walk(&mut |s| {
                if let Stmt::For { vars: vs, .. } = s {
                    known.extend(vs.iter().map(|v| v.name.clone()));
                }
            });
            s.walk_exprs(&mut |e| e.walk(&mut loop_var));
        }
    }
    for e in exprs {
        e.walk(&mut loop_var);
    }
    known.extend(vars);
    // A name a binding also takes is not known anywhere: the printer's
    // range facts follow scope, and a binding after a loop of the same
    // name hides the loop's range (the verifier allows that).
    let mut bound: Vec<String> = Vec::new();
    for body in bodies {
        for s in body.iter() {
            s.walk(&mut |t| {
                if let Stmt::Let { name, .. } = t {
                    bound.push(name.clone());
                }
            });
        }
    }
    for b in &bound {
        known.remove(b);
    }
    let params = (program, index, &known);
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
            let checked = entry_checked(params, &level_accesses(body, &[], 0));
            let ctx = (v.name.as_str(), &bound, &checked);
            for s in body {
                match s {
                    Stmt::Let { value, .. } => accesses(params, ctx, value, out),
                    Stmt::Store {
                        buf,
                        idx,
                        value,
                        id,
                        ..
                    } => {
                        let c = contiguous(params, &v.name, &bound, buf, idx);
                        out.record(&v.name, buf, idx, c && checked.contains(&id.get()));
                        accesses(params, ctx, value, out);
                    }
                    _ => {}
                }
            }
        }
    }
    // The statement's own expressions, then the statements inside it.
    for e in s.exprs() {
        reductions(params, e, out);
    }
    for t in s.bodies().into_iter().flatten() {
        stmt(params, t, out);
    }
}

/// A loop's context: its variable, the names its body binds, and the
/// nodes one check at its entry covers.
type Context<'a> = (&'a str, &'a BTreeSet<&'a str>, &'a BTreeSet<u64>);

/// Every load of `e` (reduction bodies included) in the context of a
/// loop.
fn accesses(params: Params, (var, bound, checked): Context, e: &Expr, out: &mut QuadAccesses) {
    e.walk(&mut |x| {
        if let Expr::Load { buf, idx, id } = x {
            let quad = checked.contains(&id.get()) && contiguous(params, var, bound, buf, idx);
            out.record(var, buf, idx, quad);
        }
    });
}

/// The reductions of `e`, each a context: its variable, nothing bound.
fn reductions(params: Params, e: &Expr, out: &mut QuadAccesses) {
    e.walk(&mut |x| {
        if let Expr::Reduce { var, body, .. } = x {
            let checked = entry_checked(params, &level_accesses(&[], &[body], 0));
            accesses(params, (var, &BTreeSet::new(), &checked), body, out);
        }
    });
}

/// Whether `buf[idx]` is an `f32` access whose last index is `var + c`
/// and whose other indices and `c` are fixed over the loop (`bound`: the
/// names its body binds), with no load in the last index.
fn contiguous(
    (program, index, _): Params,
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

/// An access that runs unconditionally at a loop level
/// ([`level_accesses`]).
pub struct LevelAccess<'a> {
    /// The load's or store's node.
    pub id: u64,
    /// The buffer.
    pub buf: &'a str,
    /// Its indices.
    pub idx: &'a [Expr],
    /// A store, not a load.
    pub store: bool,
    /// The source line of its statement (`line` for the level's bare
    /// expressions).
    pub line: u32,
}

/// The accesses that `stmts` and `exprs` run unconditionally at their own
/// loop level, not inside a branch, an inner loop or a reduction's body
/// (levels of their own): the accesses one check at the level's entry may
/// cover. `line` is the line of `exprs`.
pub fn level_accesses<'a>(
    stmts: &'a [Stmt],
    exprs: &[&'a Expr],
    line: u32,
) -> Vec<LevelAccess<'a>> {
    let mut out = Vec::new();
    for s in stmts {
        level_stmt(s, &mut out);
    }
    for e in exprs {
        level_expr(e, line, &mut out);
    }
    out
}

/// The accesses of `level` that one check at the loop's entry covers:
/// every index affine in names whose range is known there, one index per
/// dimension of a declared buffer.
fn entry_checked((program, index, known): Params, level: &[LevelAccess]) -> BTreeSet<u64> {
    level
        .iter()
        .filter(|a| {
            index
                .param(program, a.buf)
                .is_some_and(|p| p.dims.len() == a.idx.len() && !a.idx.is_empty())
                && a.idx.iter().all(|e| {
                    Affine::of(e).is_some_and(|f| f.terms.keys().all(|n| known.contains(n)))
                })
        })
        .map(|a| a.id)
        .collect()
}

fn level_stmt<'a>(s: &'a Stmt, out: &mut Vec<LevelAccess<'a>>) {
    let line = s.span().line;
    match s {
        Stmt::Let { value, .. } => level_expr(value, line, out),
        Stmt::Store {
            buf,
            idx,
            value,
            id,
            ..
        } => {
            for i in idx {
                level_expr(i, line, out);
            }
            level_expr(value, line, out);
            out.push(LevelAccess {
                id: id.get(),
                buf,
                idx,
                store: true,
                line,
            });
        }
        Stmt::If { cond, .. } => level_expr(cond, line, out),
        Stmt::For { vars, .. } => {
            if let Some(v) = vars.first() {
                level_expr(&v.lo, line, out);
                level_expr(&v.hi, line, out);
            }
        }
    }
}

fn level_expr<'a>(e: &'a Expr, line: u32, out: &mut Vec<LevelAccess<'a>>) {
    match e {
        Expr::Load { buf, idx, id } => {
            for i in idx {
                level_expr(i, line, out);
            }
            out.push(LevelAccess {
                id: id.get(),
                buf,
                idx,
                store: false,
                line,
            });
        }
        Expr::Reduce { lo, hi, .. } => {
            level_expr(lo, line, out);
            level_expr(hi, line, out);
        }
        _ => {
            for c in e.children() {
                level_expr(c, line, out);
            }
        }
    }
}
