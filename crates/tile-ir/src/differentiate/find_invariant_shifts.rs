//! Finds the `max` and `min` reductions a program's outputs do not depend
//! on: the shift of a numerically stable softmax, log-sum-exp or
//! cross-entropy. `m = max(j in 0..N: x[i, j])` enters softmax only as
//! `exp(x[i, j] - m)`, and every output is unchanged (in real arithmetic)
//! when `m` is replaced by `m + d` for any `d`, with everything else held
//! fixed. The outputs' derivative through `m` is then zero, so the
//! derivative program needs neither `m`'s cotangent nor the count of the
//! elements that attain it (a pass over the row each, and a rounding-error
//! term on the largest element that is zero in real arithmetic).
//!
//! The proof is an abstract evaluation of the program with `m` moved by
//! `d`: each value is *invariant*, *shifted* by `c d` (`m` itself, `x - m`,
//! `log(s) + m`), *scaled* by `exp(k d)` (`exp(x - m)`, its sums and
//! products), or unknown. Sums of like values, products and quotients of
//! scaled ones, `exp` of a shifted one, `log` of a scaled one, `max`/`min`
//! and `select` of like values keep a class; comparisons of like values
//! are invariant (the scale factor is positive); everything else is
//! invariant only when its operands are. `m` is *invariant-shifted* when
//! every store's value and index, every condition and every bound in its
//! scope comes out invariant. Bindings inside a loop are checked per
//! instance, which is sound because a binding is visible only in its scope
//! and outputs are never read back (`check.rs`).

use crate::{BinOp, Expr, Func, ReduceOp, Stmt, UnOp};
use std::collections::{HashMap, HashSet};

/// How a value moves when the candidate binding moves by `d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shift {
    /// Unchanged.
    Invariant,
    /// Moves by `c d`, `c != 0`.
    Shifted(i64),
    /// Multiplied by `exp(k d)`, `k != 0`.
    Scaled(i64),
    /// Anything else.
    Unknown,
}

use Shift::{Invariant, Scaled, Shifted, Unknown};

fn shifted(c: Option<i64>) -> Shift {
    match c {
        Some(0) => Invariant,
        Some(c) => Shifted(c),
        None => Unknown,
    }
}

fn scaled(k: Option<i64>) -> Shift {
    match k {
        Some(0) => Invariant,
        Some(k) => Scaled(k),
        None => Unknown,
    }
}

impl Shift {
    /// The additive rate, where the value moves additively.
    fn rate(self) -> Option<i64> {
        match self {
            Invariant => Some(0),
            Shifted(c) => Some(c),
            _ => None,
        }
    }

    /// The exponent of the factor, where the value is scaled.
    fn power(self) -> Option<i64> {
        match self {
            Invariant => Some(0),
            Scaled(k) => Some(k),
            _ => None,
        }
    }

    /// Two values of one class (a sum's terms, a `select`'s branches).
    fn alike(self, other: Shift) -> Shift {
        if self == other {
            self
        } else {
            Unknown
        }
    }
}

/// The names of the `max`/`min` reduction bindings of `body` (after
/// `name_reductions`, with names kept apart by `separate_names`) that no
/// output depends on.
pub(super) fn invariant_shifts(body: &[Stmt]) -> HashSet<String> {
    let mut found = HashSet::new();
    find(body, &mut found);
    found
}

/// Tries every candidate binding of `stmts` (and of nested blocks) against
/// the rest of its scope.
fn find(stmts: &[Stmt], found: &mut HashSet<String>) {
    for (k, s) in stmts.iter().enumerate() {
        match s {
            Stmt::Let {
                name,
                value:
                    Expr::Reduce {
                        op: ReduceOp::Max | ReduceOp::Min,
                        ..
                    },
                ..
            } => {
                let mut env = HashMap::from([(name.clone(), Shifted(1))]);
                if block_invariant(&stmts[k + 1..], &mut env) {
                    found.insert(name.clone());
                }
            }
            s => s.bodies().into_iter().for_each(|b| find(b, found)),
        }
    }
}

/// True when every store, condition and bound of `stmts` is invariant;
/// records the bindings' classes in `env`.
fn block_invariant(stmts: &[Stmt], env: &mut HashMap<String, Shift>) -> bool {
    stmts.iter().all(|s| match s {
        Stmt::Let { name, value, .. } => {
            let v = class(value, env);
            env.insert(name.clone(), v);
            true
        }
        Stmt::Store { idx, value, .. } => {
            idx.iter().all(|i| class(i, env) == Invariant) && class(value, env) == Invariant
        }
        Stmt::For { vars, body, .. } => {
            vars.iter()
                .all(|v| class(&v.lo, env) == Invariant && class(&v.hi, env) == Invariant)
                && {
                    for v in vars {
                        env.insert(v.name.clone(), Invariant);
                    }
                    block_invariant(body, env)
                }
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            class(cond, env) == Invariant && block_invariant(then, env) && block_invariant(els, env)
        }
    })
}

/// The class of `e` given the classes of the names it reads (a name not in
/// `env` is a parameter-free size symbol or an earlier binding: invariant).
fn class(e: &Expr, env: &HashMap<String, Shift>) -> Shift {
    match e {
        Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) => Invariant,
        Expr::Var(n) => env.get(n).copied().unwrap_or(Invariant),
        Expr::Load { idx, .. } => all_invariant(idx, env),
        Expr::Unary(UnOp::Neg, a) => match class(a, env) {
            Shifted(c) => Shifted(-c),
            other => other,
        },
        Expr::Unary(_, a) => all_invariant(std::slice::from_ref(a), env),
        Expr::Binary(op, a, b, _) => {
            let (a, b) = (class(a, env), class(b, env));
            match op {
                BinOp::Add => combine(a, b, i64::checked_add),
                BinOp::Sub => combine(a, b, i64::checked_sub),
                BinOp::Mul => scaled(a.power().zip(b.power()).and_then(|(x, y)| x.checked_add(y))),
                BinOp::Div => scaled(a.power().zip(b.power()).and_then(|(x, y)| x.checked_sub(y))),
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                    if a.alike(b) == Unknown {
                        Unknown
                    } else {
                        Invariant
                    }
                }
                BinOp::Rem | BinOp::And | BinOp::Or => {
                    if a == Invariant && b == Invariant {
                        Invariant
                    } else {
                        Unknown
                    }
                }
            }
        }
        Expr::Call(f, args) => {
            let c: Vec<Shift> = args.iter().map(|a| class(a, env)).collect();
            match (f, c.as_slice()) {
                (Func::Exp, [a]) => scaled(a.rate()),
                (Func::Log, [a]) => shifted(a.power()),
                (Func::Max | Func::Min, [a, b]) => a.alike(*b),
                (Func::Select, [cond, a, b]) if *cond == Invariant => a.alike(*b),
                (Func::Cast(t), [a]) if t.is_float() => *a,
                _ if c.iter().all(|x| *x == Invariant) => Invariant,
                _ => Unknown,
            }
        }
        Expr::Reduce {
            op,
            lo,
            hi,
            body,
            var,
        } => {
            if class(lo, env) != Invariant || class(hi, env) != Invariant {
                return Unknown;
            }
            let mut inner = env.clone();
            inner.insert(var.clone(), Invariant);
            match (op, class(body, &inner)) {
                (_, Invariant) => Invariant,
                (ReduceOp::Sum, Scaled(k)) => Scaled(k),
                (ReduceOp::Max | ReduceOp::Min, c) => c,
                _ => Unknown,
            }
        }
    }
}

/// `a + b` or `a - b` (`op` combines the rates): shifted values add or
/// subtract their rates; scaled values of one power stay scaled.
fn combine(a: Shift, b: Shift, op: fn(i64, i64) -> Option<i64>) -> Shift {
    match (a, b) {
        (Scaled(k), Scaled(l)) if k == l => Scaled(k),
        _ => shifted(a.rate().zip(b.rate()).and_then(|(x, y)| op(x, y))),
    }
}

fn all_invariant(es: &[Expr], env: &HashMap<String, Shift>) -> Shift {
    if es.iter().all(|e| class(e, env) == Invariant) {
        Invariant
    } else {
        Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invariant(src: &str) -> Vec<String> {
        let p = crate::parse_program(src).unwrap();
        let mut v: Vec<String> = invariant_shifts(&p.body).into_iter().collect();
        v.sort();
        v
    }

    #[test]
    fn softmax_log_sum_exp_and_cross_entropy_shifts_are_invariant() {
        let softmax = "program s(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            z = sum(j in 0..N: exp(x[i, j] - m)); \
            for j in 0..N { y[i, j] = exp(x[i, j] - m) / z } } }";
        assert_eq!(invariant(softmax), ["m"]);
        let lse = "program l(x: in f32[M, N], y: out f32[M]) { for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            y[i] = m + log(sum(j in 0..N: exp(x[i, j] - m))) } }";
        assert_eq!(invariant(lse), ["m"]);
        let xent = "program c(x: in f32[M, N], label: in i32[M], loss: out f32[M], dx: out f32[M, N]) { \
            for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            s = sum(j in 0..N: exp(x[i, j] - m)); \
            picked = sum(j in 0..N: select(j == label[i], x[i, j], 0.0)); \
            loss[i] = m + log(s) - picked; \
            for j in 0..N { dx[i, j] = exp(x[i, j] - m) / s - select(j == label[i], 1.0, 0.0) } } }";
        assert_eq!(invariant(xent), ["m"]);
    }

    #[test]
    fn a_shift_an_output_sees_is_not_invariant() {
        // The max itself is an output.
        let p = "program s(x: in f32[M, N], y: out f32[M, N], top: out f32[M]) { for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            top[i] = m; \
            for j in 0..N { y[i, j] = exp(x[i, j] - m) } } }";
        assert!(invariant(p).is_empty());
        // Not normalised: exp(x - m) alone scales with the shift.
        let q = "program s(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            for j in 0..N { y[i, j] = exp(x[i, j] - m) } } }";
        assert!(invariant(q).is_empty());
        // Squared differences (a variance) are not shift-invariant.
        let r = "program s(x: in f32[M, N], y: out f32[M]) { for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            y[i] = sum(j in 0..N: (x[i, j] - m) * (x[i, j] - m)) } }";
        assert!(invariant(r).is_empty());
        // A condition on the shift.
        let c = "program s(x: in f32[M, N], y: out f32[M]) { for i in 0..M { \
            m = max(j in 0..N: x[i, j]); \
            if m > 0.0 { y[i] = 1.0 } else { y[i] = 0.0 } } }";
        assert!(invariant(c).is_empty());
    }
}
