//! Binding reductions before differentiating: each reduction inside a
//! statement's expression (not a whole binding's value, and not inside
//! another reduction) becomes a binding of its own just before the
//! statement. Derivatives refer to their operands (`rsqrt(s)`'s
//! refers to `s`), so a reduction left in place would be written out again
//! in every derivative that refers to it; bound, it is computed once.

use super::Namer;
use crate::{Expr, ReduceOp, Span, Stmt};

/// `body` with its reductions bound (see the module doc).
pub(super) fn name_reductions(body: &[Stmt], namer: &mut Namer) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::Let { name, value, span } => {
                let mut value = value.clone();
                let mut hoisted = Vec::new();
                if !matches!(value, Expr::Reduce { .. }) {
                    hoist(&mut value, name, &mut hoisted, namer, *span);
                }
                out.extend(hoisted);
                out.push(Stmt::Let {
                    name: name.clone(),
                    value,
                    span: *span,
                });
            }
            Stmt::Store { buf, .. } => {
                let span = s.span();
                let mut s = s.clone();
                let mut hoisted = Vec::new();
                if let Stmt::Store { value, .. } = &mut s {
                    hoist(value, buf, &mut hoisted, namer, span);
                }
                out.extend(hoisted);
                out.push(s);
            }
            Stmt::For { vars, body, span } => out.push(Stmt::For {
                vars: vars.clone(),
                body: name_reductions(body, namer),
                span: *span,
            }),
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => out.push(Stmt::If {
                cond: cond.clone(),
                then: name_reductions(then, namer),
                els: name_reductions(els, namer),
                span: *span,
            }),
        }
    }
    out
}

/// Binds each reduction of `e` not inside another to a fresh name based
/// on `base`. One inside a reduction's body stays: it may be evaluated for
/// none of that range (an empty one), and hoisting it would evaluate, and
/// possibly fail on, what the program never evaluates.
fn hoist(e: &mut Expr, base: &str, out: &mut Vec<Stmt>, namer: &mut Namer, span: Span) {
    if let Expr::Reduce { op, .. } = e {
        let suffix = match *op {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        };
        let name = namer.fresh(&format!("{base}_{suffix}"));
        let value = std::mem::replace(e, Expr::var(&name));
        out.push(Stmt::Let { name, value, span });
        return;
    }
    for c in e.children_mut() {
        hoist(c, base, out, namer, span);
    }
}
