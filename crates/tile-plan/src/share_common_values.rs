//! `share_common_values`: one computation per shared value.
//!
//! Within each block, an expression computed more than once (across every
//! store, binding and condition of the block, so across all outputs of a
//! nest) is bound once to a fresh name before its first use, and every
//! later occurrence reads that name. Existing bindings are reused the same
//! way. Expressions are only shared at the level where they are evaluated
//! unconditionally (nothing is hoisted out of an `if`), never across a
//! binder (a reduction or loop variable of the same name), and never when
//! they load from a buffer the program writes (a store between two loads
//! could change the value). Affine index arithmetic is never bound: it is
//! cheap, and the access-map analysis must see it in place.

use crate::affine::Affine;
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Expr, Program, Span, Stmt};

/// Shares common sub-expressions in `program` in place.
pub fn share_common_values(program: &mut Program) {
    let mut written = BTreeSet::new();
    let mut names = BTreeSet::new();
    program.walk(&mut |s| match s {
        Stmt::Store { buf, .. } => {
            written.insert(buf.clone());
        }
        Stmt::Let { name, .. } => {
            names.insert(name.clone());
        }
        Stmt::For { vars, .. } => names.extend(vars.iter().map(|v| v.name.clone())),
        Stmt::If { .. } => {}
    });
    names.extend(program.size_symbols());
    names.extend(program.params.iter().map(|p| p.name.clone()));
    let mut cx = Sharer {
        written,
        names,
        next: 0,
    };
    let body = std::mem::take(&mut program.body);
    program.body = cx.block(body);
}

struct Sharer {
    written: BTreeSet<String>,
    names: BTreeSet<String>,
    next: usize,
}

/// Expressions evaluated directly by a statement (not in nested blocks).
fn level_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Let { value, .. } => vec![value],
        Stmt::Store { idx, value, .. } => idx.iter().chain(std::iter::once(value)).collect(),
        Stmt::If { cond, .. } => vec![cond],
        // Loop bounds are index arithmetic, left where they are.
        Stmt::For { .. } => vec![],
    }
}

fn size(e: &Expr) -> usize {
    let mut n = 0;
    e.walk(&mut |_| n += 1);
    n
}

impl Sharer {
    fn fresh(&mut self) -> String {
        loop {
            let n = format!("c{}", self.next);
            self.next += 1;
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    fn shareable(&self, e: &Expr) -> bool {
        // Affine expressions are index arithmetic: cheap, and binding them
        // would hide access maps from the analysis.
        if matches!(
            e,
            Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_)
        ) || Affine::of(e).is_some()
        {
            return false;
        }
        let mut loads = Vec::new();
        e.loaded_buffers(&mut loads);
        loads.iter().all(|b| !self.written.contains(b))
    }

    /// Candidate sub-expressions of `e` (not inside reduction bodies).
    fn candidates<'e>(&self, e: &'e Expr, out: &mut Vec<&'e Expr>) {
        if self.shareable(e) {
            out.push(e);
        }
        match e {
            Expr::Reduce { lo, hi, .. } => {
                self.candidates(lo, out);
                self.candidates(hi, out);
            }
            _ => e
                .children()
                .into_iter()
                .for_each(|c| self.candidates(c, out)),
        }
    }

    fn block(&mut self, mut stmts: Vec<Stmt>) -> Vec<Stmt> {
        // Reuse existing bindings for later occurrences of their values.
        for k in 0..stmts.len() {
            if let Stmt::Let { name, value, .. } = &stmts[k] {
                if self.shareable(value) {
                    let (target, with) = (value.clone(), Expr::var(name));
                    for s in &mut stmts[k + 1..] {
                        replace_in_stmt(s, &target, &with);
                    }
                }
            }
        }
        // Bind repeated expressions, largest first.
        loop {
            let mut count: BTreeMap<String, (usize, usize, Expr)> = BTreeMap::new();
            for (k, s) in stmts.iter().enumerate() {
                let mut c = Vec::new();
                for e in level_exprs(s) {
                    self.candidates(e, &mut c);
                }
                for e in c {
                    let entry = count.entry(e.to_string()).or_insert((0, k, e.clone()));
                    entry.0 += 1;
                }
            }
            let best = count
                .into_values()
                .filter(|(n, _, _)| *n >= 2)
                .max_by_key(|(_, first, e)| (size(e), std::cmp::Reverse(*first)));
            let Some((_, first, target)) = best else {
                break;
            };
            let name = self.fresh();
            let with = Expr::var(&name);
            for s in &mut stmts[first..] {
                replace_in_stmt(s, &target, &with);
            }
            stmts.insert(
                first,
                Stmt::Let {
                    name,
                    value: target,
                    span: Span::default(),
                },
            );
        }
        // Nested blocks are scopes of their own.
        stmts
            .into_iter()
            .map(|s| match s {
                Stmt::For { vars, body, span } => Stmt::For {
                    vars,
                    body: self.block(body),
                    span,
                },
                Stmt::If {
                    cond,
                    then,
                    els,
                    span,
                } => Stmt::If {
                    cond,
                    then: self.block(then),
                    els: self.block(els),
                    span,
                },
                s => s,
            })
            .collect()
    }
}

/// Replaces every occurrence of `target` by `with`, not crossing a binder
/// of one of `target`'s free variables.
pub(crate) fn replace_in_stmt(s: &mut Stmt, target: &Expr, with: &Expr) {
    let mut free = Vec::new();
    target.free_vars(&mut free);
    replace_stmt(s, target, with, &free);
}

fn replace_stmt(s: &mut Stmt, target: &Expr, with: &Expr, free: &[String]) {
    match s {
        Stmt::Let { value, .. } => replace_expr(value, target, with, free),
        Stmt::Store { idx, value, .. } => {
            idx.iter_mut()
                .for_each(|e| replace_expr(e, target, with, free));
            replace_expr(value, target, with, free);
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            replace_expr(cond, target, with, free);
            then.iter_mut()
                .for_each(|t| replace_stmt(t, target, with, free));
            els.iter_mut()
                .for_each(|t| replace_stmt(t, target, with, free));
        }
        Stmt::For { vars, body, .. } => {
            for v in vars.iter_mut() {
                replace_expr(&mut v.lo, target, with, free);
                replace_expr(&mut v.hi, target, with, free);
            }
            if vars.iter().all(|v| !free.contains(&v.name)) {
                body.iter_mut()
                    .for_each(|t| replace_stmt(t, target, with, free));
            }
        }
    }
}

fn replace_expr(e: &mut Expr, target: &Expr, with: &Expr, free: &[String]) {
    if e == target {
        *e = with.clone();
        return;
    }
    if let Expr::Reduce {
        var, lo, hi, body, ..
    } = e
    {
        replace_expr(lo, target, with, free);
        replace_expr(hi, target, with, free);
        if !free.contains(var) {
            replace_expr(body, target, with, free);
        }
        return;
    }
    for c in e.children_mut() {
        replace_expr(c, target, with, free);
    }
}
