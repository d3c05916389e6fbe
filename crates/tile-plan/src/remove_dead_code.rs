//! `remove_dead_code`: drop bindings nothing uses, and `if`s and loops that
//! do nothing.
//!
//! Expressions have no effects, so an unused binding, an `if` with two empty
//! branches and a loop with an empty body or an empty literal range can go.

use std::collections::HashSet;
use tile_ir::{Expr, Program, Stmt};

/// Removes dead statements from `program` in place.
pub fn remove_dead_code(program: &mut Program) {
    let body = std::mem::take(&mut program.body);
    program.body = prune(body);
}

pub(crate) fn prune(stmts: Vec<Stmt>) -> Vec<Stmt> {
    // Work backwards so a binding used only by dead bindings dies too.
    // `used` holds every name the kept statements read: one pass, linear
    // in the block's size.
    let mut out: Vec<Stmt> = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    let keep = |s: Stmt, out: &mut Vec<Stmt>, used: &mut HashSet<String>| {
        note_uses(&s, used);
        out.push(s);
    };
    for s in stmts.into_iter().rev() {
        match s {
            Stmt::Let { ref name, .. } => {
                if used.contains(name) {
                    keep(s, &mut out, &mut used);
                }
            }
            Stmt::For { vars, body, span } => {
                let body = prune(body);
                let empty_range = vars
                    .iter()
                    .any(|v| matches!((&v.lo, &v.hi), (Expr::Int(a), Expr::Int(b)) if a >= b));
                if !body.is_empty() && !empty_range {
                    keep(Stmt::For { vars, body, span }, &mut out, &mut used);
                }
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                let (then, els) = (prune(then), prune(els));
                if !then.is_empty() || !els.is_empty() {
                    let s = Stmt::If {
                        cond,
                        then,
                        els,
                        span,
                    };
                    keep(s, &mut out, &mut used);
                }
            }
            s => keep(s, &mut out, &mut used),
        }
    }
    out.reverse();
    out
}

/// Adds every name `s` reads (free in any of its expressions, nested
/// blocks included) to `used`.
fn note_uses(s: &Stmt, used: &mut HashSet<String>) {
    s.walk_exprs(&mut |e| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        used.extend(free);
    });
}
