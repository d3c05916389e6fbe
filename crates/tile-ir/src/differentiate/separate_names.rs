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
                    rest.iter_mut().for_each(|s| s.substitute(name, &to));
                    *name = fresh;
                }
                seen.insert(name.clone());
            }
            s => {
                for b in s.bodies_mut() {
                    block(b, index, seen, namer);
                }
            }
        }
    }
}
