//! Separating binding names before differentiating: after this pass no
//! binding shares its name with another binding anywhere in the program,
//! nor with any loop or reduction variable. The language allows both
//! (a binding after a loop may reuse the loop's variable; sibling loops
//! may bind the same name), but differentiating writes bindings out far
//! from where they were bound, inside sums over loop variables: a shared
//! name would be captured there. The first binding of a name keeps it.

use super::Namer;
use crate::{Expr, Stmt};
use std::collections::HashSet;

/// Renames bindings of `body` as the module doc says.
pub(super) fn separate_names(body: &mut [Stmt], namer: &mut Namer) {
    let mut index = HashSet::new();
    for s in body.iter() {
        s.walk(&mut |t| {
            if let Stmt::For { vars, .. } = t {
                index.extend(vars.iter().map(|v| v.name.clone()));
            }
        });
        s.walk_exprs(&mut |e| {
            e.walk(&mut |n| {
                if let Expr::Reduce { var, .. } = n {
                    index.insert(var.clone());
                }
            })
        });
    }
    block(body, &index, &mut HashSet::new(), namer);
}

fn block(
    body: &mut [Stmt],
    index: &HashSet<String>,
    seen: &mut HashSet<String>,
    namer: &mut Namer,
) {
    for k in 0..body.len() {
        let (head, rest) = body.split_at_mut(k + 1);
        match &mut head[k] {
            Stmt::Let { name, .. } => {
                if index.contains(name.as_str()) || seen.contains(name.as_str()) {
                    let fresh = namer.fresh(name);
                    let to = Expr::var(&fresh);
                    rest.iter_mut().for_each(|s| rename(s, name, &to));
                    *name = fresh;
                }
                seen.insert(name.clone());
            }
            Stmt::For { body, .. } => block(body, index, seen, namer),
            Stmt::If { then, els, .. } => {
                block(then, index, seen, namer);
                block(els, index, seen, namer);
            }
            Stmt::Store { .. } => {}
        }
    }
}

/// Replaces the name `from` by `to` in `s` and the statements nested in
/// it, except where a loop or reduction variable of that name hides it
/// (also how `tidy` renames a loop variable in its body).
pub(super) fn rename(s: &mut Stmt, from: &str, to: &Expr) {
    match s {
        Stmt::For { vars, body, .. } => {
            for v in vars.iter_mut() {
                v.lo.substitute(from, to);
                v.hi.substitute(from, to);
            }
            if !vars.iter().any(|v| v.name == from) {
                body.iter_mut().for_each(|t| rename(t, from, to));
            }
        }
        Stmt::Let { value, .. } => value.substitute(from, to),
        Stmt::Store { idx, value, .. } => {
            idx.iter_mut().for_each(|e| e.substitute(from, to));
            value.substitute(from, to);
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            cond.substitute(from, to);
            then.iter_mut().for_each(|t| rename(t, from, to));
            els.iter_mut().for_each(|t| rename(t, from, to));
        }
    }
}
