//! Hoists sibling reductions of a shared column kernel: consecutive
//! statements whose reductions all run over one range become one group of
//! bindings (`__sib0 = sum(i in 0..M: ...)`, `__sib1 = ...`) ahead of the
//! statements, which then read the bound names. A target runs such a
//! group in one pass over the range, each reduction with its own
//! accumulator in its own order, so every result keeps its bits while the
//! rows they share are read once (LayerNorm backward's weight and bias
//! gradients read `grad_y` together).
//!
//! A statement joins the group only if its reductions read no array a
//! member stores and no name a member binds, so computing every member's
//! reductions before any member's statement changes nothing; the interpreter
//! replays the hoisted body (`execute_lowered`), so a wrong hoist is
//! caught there.

use tile_ir::{Expr, Stmt};

/// A column body with its sibling reductions hoisted.
pub(crate) struct Hoisted {
    /// The body: each group's bindings, then its statements, in order.
    pub body: Vec<Stmt>,
    /// Each group's bindings, as a range of `body` (two or more).
    pub groups: Vec<std::ops::Range<usize>>,
}

/// The range a reduction runs over: its variable and bounds, as printed.
type Range = (String, String, String);

/// Hoists the sibling reductions of `body`, the top-level statements of a
/// column kernel whose block shares its columns (lets and stores whose
/// reductions do not nest; `Sharing::Split`). Returns `None` where no two
/// consecutive statements share a range.
pub(crate) fn hoist_sibling_reductions(body: &[Stmt]) -> Option<Hoisted> {
    let mut out = Vec::new();
    let mut groups = Vec::new();
    let mut next_name = 0;
    let mut a = 0;
    while a < body.len() {
        let Some(range) = one_range(&body[a]) else {
            out.push(body[a].clone());
            a += 1;
            continue;
        };
        // Members from `a` on: a statement joins while its reductions run
        // over `range` and read nothing an earlier member writes or binds.
        let mut written: Vec<String> = Vec::new();
        let mut b = a;
        while b < body.len() {
            let s = &body[b];
            if one_range(s).as_ref() != Some(&range) {
                break;
            }
            if b > a && reads_any(s, &written) {
                break;
            }
            match s {
                Stmt::Let { name, .. } => written.push(name.clone()),
                Stmt::Store { buf, .. } => written.push(buf.clone()),
                _ => {}
            }
            b += 1;
        }
        if b - a < 2 {
            out.push(body[a].clone());
            a += 1;
            continue;
        }
        let first = out.len();
        let mut members = Vec::new();
        for s in &body[a..b] {
            let mut s = s.clone();
            let span = s.span();
            for value in values_mut(&mut s) {
                bind_reductions(value, &mut |reduce| {
                    let name = tile_ir::names::generated("sib", next_name);
                    next_name += 1;
                    out.push(Stmt::Let {
                        name: name.clone(),
                        value: reduce,
                        span,
                    });
                    name
                });
            }
            members.push(s);
        }
        groups.push(first..out.len());
        out.extend(members);
        a = b;
    }
    (!groups.is_empty()).then_some(Hoisted { body: out, groups })
}

/// The one range every reduction of `s` runs over, where `s` has at least
/// one reduction and they all share it.
fn one_range(s: &Stmt) -> Option<Range> {
    let mut ranges: Vec<Range> = Vec::new();
    for value in values(s) {
        value.walk(&mut |e| {
            if let Expr::Reduce { var, lo, hi, .. } = e {
                ranges.push((var.clone(), lo.to_string(), hi.to_string()));
            }
        });
    }
    let first = ranges.first()?.clone();
    ranges.iter().all(|r| *r == first).then_some(first)
}

/// Whether any reduction of `s` (bounds or body) reads an array or a name
/// in `names`.
fn reads_any(s: &Stmt, names: &[String]) -> bool {
    let mut hit = false;
    for value in values(s) {
        value.walk(&mut |e| {
            if let Expr::Reduce { .. } = e {
                e.walk(&mut |x| match x {
                    Expr::Load { buf, .. } => hit |= names.contains(buf),
                    Expr::Var(v) => hit |= names.contains(v),
                    _ => {}
                });
            }
        });
    }
    hit
}

/// The expressions of a let or store (its value; a store's indices too).
fn values(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Let { value, .. } => vec![value],
        Stmt::Store { idx, value, .. } => idx.iter().chain(std::iter::once(value)).collect(),
        _ => Vec::new(),
    }
}

/// See [`values`].
fn values_mut(s: &mut Stmt) -> Vec<&mut Expr> {
    match s {
        Stmt::Let { value, .. } => vec![value],
        Stmt::Store { idx, value, .. } => idx.iter_mut().chain(std::iter::once(value)).collect(),
        _ => Vec::new(),
    }
}

/// Replaces each reduction of `e`, in evaluation order, by the name `bind`
/// gives it.
fn bind_reductions(e: &mut Expr, bind: &mut dyn FnMut(Expr) -> String) {
    if let Expr::Reduce { .. } = e {
        let name = bind(e.clone());
        *e = Expr::var(&name);
        return;
    }
    for c in e.children_mut() {
        bind_reductions(c, bind);
    }
}
