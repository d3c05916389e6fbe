//! `remove_dead_code`: drop bindings nothing uses, and `if`s and loops that
//! do nothing.
//!
//! Expressions have no effects, so an unused binding, an `if` with two empty
//! branches and a loop with an empty body or an empty literal range can go.

use tile_ir::{Expr, Program, Stmt};

/// Removes dead statements from `program` in place.
pub fn remove_dead_code(program: &mut Program) {
    let body = std::mem::take(&mut program.body);
    program.body = prune(body);
}

pub(crate) fn prune(stmts: Vec<Stmt>) -> Vec<Stmt> {
    // Work backwards so a binding used only by dead bindings dies too.
    let mut out: Vec<Stmt> = Vec::new();
    for s in stmts.into_iter().rev() {
        match s {
            Stmt::Let { ref name, .. } => {
                if out.iter().any(|t| uses(t, name)) {
                    out.push(s);
                }
            }
            Stmt::For { vars, body, span } => {
                let body = prune(body);
                let empty_range = vars
                    .iter()
                    .any(|v| matches!((&v.lo, &v.hi), (Expr::Int(a), Expr::Int(b)) if a >= b));
                if !body.is_empty() && !empty_range {
                    out.push(Stmt::For { vars, body, span });
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
                    out.push(Stmt::If {
                        cond,
                        then,
                        els,
                        span,
                    });
                }
            }
            s => out.push(s),
        }
    }
    out.reverse();
    out
}

/// True when `s` reads the name `n`.
fn uses(s: &Stmt, n: &str) -> bool {
    let mut found = false;
    s.walk_exprs(&mut |e| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        found |= free.iter().any(|f| f == n);
    });
    found
}
