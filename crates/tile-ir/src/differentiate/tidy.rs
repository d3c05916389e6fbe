//! Finishing the derivative program: gradient stores put in their blocks,
//! variables that would shadow a visible name renamed, and bindings and
//! loops the outputs do not use dropped.

use super::Namer;
use crate::{Expr, Stmt};
use std::collections::{HashMap, HashSet};

/// The placeholder for block `id`'s gradient stores (a reserved name no
/// program can hold).
pub(super) fn marker(id: usize) -> Stmt {
    Stmt::Let {
        name: crate::names::generated("place", id),
        value: Expr::Int(id as i64),
        span: crate::Span::default(),
    }
}

fn marker_id(s: &Stmt) -> Option<usize> {
    match s {
        Stmt::Let {
            name,
            value: Expr::Int(id),
            ..
        } if *name == crate::names::generated("place", *id as usize) => Some(*id as usize),
        _ => None,
    }
}

/// Replaces each marker by its block's stores (or nothing).
pub(super) fn fill(body: &mut Vec<Stmt>, placed: &mut HashMap<usize, Vec<Stmt>>) {
    let old = std::mem::take(body);
    for mut s in old {
        if let Some(id) = marker_id(&s) {
            body.extend(placed.remove(&id).unwrap_or_default());
            continue;
        }
        for b in s.bodies_mut() {
            fill(b, placed);
        }
        body.push(s);
    }
}

/// Renames every loop or reduction variable that would rebind a visible
/// name (a gradient's loop placed after a binding of the same name, a
/// `max` written out inside a sum over the same variable).
pub(super) fn unshadow(body: &mut [Stmt], visible: &mut HashSet<String>, namer: &mut Namer) {
    let mut bound = Vec::new();
    for s in body.iter_mut() {
        match s {
            Stmt::For { vars, body, .. } => {
                let mut inner = Vec::new();
                for k in 0..vars.len() {
                    unshadow_expr(&mut vars[k].lo, visible, namer);
                    unshadow_expr(&mut vars[k].hi, visible, namer);
                    if visible.contains(&vars[k].name) {
                        let old = vars[k].name.clone();
                        let fresh = namer.fresh(&old);
                        let to = Expr::var(&fresh);
                        for later in &mut vars[k + 1..] {
                            later.lo.substitute(&old, &to);
                            later.hi.substitute(&old, &to);
                        }
                        body.iter_mut().for_each(|t| t.substitute(&old, &to));
                        vars[k].name = fresh;
                    }
                    visible.insert(vars[k].name.clone());
                    inner.push(vars[k].name.clone());
                }
                unshadow(body, visible, namer);
                for n in inner {
                    visible.remove(&n);
                }
            }
            Stmt::Let { name, value, .. } => {
                unshadow_expr(value, visible, namer);
                visible.insert(name.clone());
                bound.push(name.clone());
            }
            Stmt::Store { idx, value, .. } => {
                idx.iter_mut()
                    .for_each(|e| unshadow_expr(e, visible, namer));
                unshadow_expr(value, visible, namer);
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                unshadow_expr(cond, visible, namer);
                unshadow(then, visible, namer);
                unshadow(els, visible, namer);
            }
        }
    }
    for n in bound {
        visible.remove(&n);
    }
}

fn unshadow_expr(e: &mut Expr, visible: &mut HashSet<String>, namer: &mut Namer) {
    if let Expr::Reduce {
        var, lo, hi, body, ..
    } = e
    {
        unshadow_expr(lo, visible, namer);
        unshadow_expr(hi, visible, namer);
        if visible.contains(var.as_str()) {
            let fresh = namer.fresh(var);
            body.substitute(var, &Expr::var(&fresh));
            *var = fresh;
        }
        visible.insert(var.clone());
        unshadow_expr(body, visible, namer);
        visible.remove(var.as_str());
        return;
    }
    for c in e.children_mut() {
        unshadow_expr(c, visible, namer);
    }
}

fn read(e: &Expr, used: &mut HashSet<String>) {
    e.walk(&mut |n| {
        if let Expr::Var(v) = n {
            used.insert(v.clone());
        }
    });
}

/// Drops bindings no later statement reads and loops and `if`s left with
/// nothing to do; `used` holds the names read after `body`, and gets the
/// names `body` reads.
pub(super) fn prune(body: &mut Vec<Stmt>, used: &mut HashSet<String>) {
    let old = std::mem::take(body);
    let mut kept = Vec::new();
    for mut s in old.into_iter().rev() {
        let keep = match &mut s {
            Stmt::Let { name, value, .. } => {
                let keep = used.contains(name.as_str());
                if keep {
                    read(value, used);
                }
                keep
            }
            Stmt::Store { idx, value, .. } => {
                idx.iter().for_each(|e| read(e, used));
                read(value, used);
                true
            }
            Stmt::For { vars, body, .. } => {
                let mut inner = used.clone();
                prune(body, &mut inner);
                let keep = !body.is_empty();
                if keep {
                    used.extend(inner);
                    for v in vars.iter() {
                        read(&v.lo, used);
                        read(&v.hi, used);
                    }
                }
                keep
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                let mut a = used.clone();
                let mut b = used.clone();
                prune(then, &mut a);
                prune(els, &mut b);
                let keep = !(then.is_empty() && els.is_empty());
                if keep {
                    used.extend(a);
                    used.extend(b);
                    read(cond, used);
                }
                keep
            }
        };
        if keep {
            kept.push(s);
        }
    }
    kept.reverse();
    *body = kept;
}
