//! `fold_constants`: evaluate operations whose operands are all literals,
//! propagate bindings to literals and names, and drop branches whose
//! condition is a constant.
//!
//! Folding is IEEE-safe: only identities that hold for every float value,
//! NaN, infinities and signed zeros included, are used (`x * 1 -> x`,
//! `x / 1 -> x`, `x - 0 -> x`, `-(-x) -> x`); `0 * x` and `x + 0` are kept.
//! Integer division by a literal zero is left for run time to report.

use std::collections::HashMap;
use tile_ir::{BinOp, Expr, Func, Program, Stmt, UnOp};

/// Folds constants in `program` in place.
pub fn fold_constants(program: &mut Program) {
    let body = std::mem::take(&mut program.body);
    program.body = fold_block(body);
}

fn fold_block(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::new();
    // Bindings of literals and names, propagated into the rest of the
    // block as each statement is reached: one walk, linear in its size.
    let mut propagate: HashMap<String, Expr> = HashMap::new();
    for mut s in stmts {
        if !propagate.is_empty() {
            s.substitute_all(&propagate);
        }
        match s {
            Stmt::Let { name, value, span } => {
                let value = fold_expr(value);
                if matches!(
                    value,
                    Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_)
                ) {
                    // The binding goes; later statements get its value.
                    propagate.insert(name, value);
                } else {
                    out.push(Stmt::Let { name, value, span });
                }
            }
            Stmt::Store {
                buf,
                idx,
                value,
                span,
                id,
            } => out.push(Stmt::Store {
                buf,
                idx: idx.into_iter().map(fold_expr).collect(),
                value: fold_expr(value),
                span,
                id,
            }),
            Stmt::For { vars, body, span } => {
                let vars = vars
                    .into_iter()
                    .map(|mut v| {
                        v.lo = fold_expr(v.lo);
                        v.hi = fold_expr(v.hi);
                        v
                    })
                    .collect();
                out.push(Stmt::For {
                    vars,
                    body: fold_block(body),
                    span,
                });
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                let cond = fold_expr(cond);
                let (then, els) = (fold_block(then), fold_block(els));
                match cond {
                    // A constant branch is inlined when it binds nothing, so
                    // no name leaks into the enclosing scope.
                    Expr::Bool(c) if !binds(if c { &then } else { &els }) => {
                        out.extend(if c { then } else { els });
                    }
                    cond => out.push(Stmt::If {
                        cond,
                        then,
                        els,
                        span,
                    }),
                }
            }
        }
    }
    out
}

fn binds(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| matches!(s, Stmt::Let { .. }))
}

/// Folds one expression bottom-up.
pub fn fold_expr(e: Expr) -> Expr {
    match e {
        Expr::Unary(op, a) => {
            let a = fold_expr(*a);
            match (op, a) {
                (UnOp::Neg, Expr::Float(x)) => Expr::Float(-x),
                (UnOp::Neg, Expr::Int(i)) if i != i64::MIN => Expr::Int(-i),
                (UnOp::Neg, Expr::Unary(UnOp::Neg, x)) => *x,
                (UnOp::Not, Expr::Bool(b)) => Expr::Bool(!b),
                (UnOp::Not, Expr::Unary(UnOp::Not, x)) => *x,
                (op, a) => Expr::Unary(op, Box::new(a)),
            }
        }
        Expr::Binary(op, a, b, _) => {
            let (a, b) = (fold_expr(*a), fold_expr(*b));
            fold_binary(op, a, b)
        }
        Expr::Call(f, args) => {
            let args: Vec<Expr> = args.into_iter().map(fold_expr).collect();
            fold_call(f, args)
        }
        Expr::Load { buf, idx, id } => Expr::Load {
            buf,
            idx: idx.into_iter().map(fold_expr).collect(),
            id,
        },
        Expr::Reduce {
            op,
            var,
            lo,
            hi,
            body,
        } => Expr::Reduce {
            op,
            var,
            lo: Box::new(fold_expr(*lo)),
            hi: Box::new(fold_expr(*hi)),
            body: Box::new(fold_expr(*body)),
        },
        e => e,
    }
}

fn is_one(e: &Expr) -> bool {
    matches!(e, Expr::Float(x) if *x == 1.0) || matches!(e, Expr::Int(1))
}

fn is_zero(e: &Expr) -> bool {
    matches!(e, Expr::Float(x) if *x == 0.0 && x.is_sign_positive()) || matches!(e, Expr::Int(0))
}

fn fold_binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    use Expr::{Bool as B, Float as F, Int as I};
    let folded = match (&a, &b) {
        (I(x), I(y)) => match op {
            BinOp::Add => x.checked_add(*y).map(I),
            BinOp::Sub => x.checked_sub(*y).map(I),
            BinOp::Mul => x.checked_mul(*y).map(I),
            BinOp::Div => x.checked_div(*y).map(I),
            BinOp::Rem => x.checked_rem(*y).map(I),
            BinOp::Lt => Some(B(x < y)),
            BinOp::Le => Some(B(x <= y)),
            BinOp::Gt => Some(B(x > y)),
            BinOp::Ge => Some(B(x >= y)),
            BinOp::Eq => Some(B(x == y)),
            BinOp::Ne => Some(B(x != y)),
            _ => None,
        },
        (F(_), F(_) | I(_)) | (I(_), F(_)) => {
            let (x, y) = (num(&a), num(&b));
            match op {
                BinOp::Add => Some(F(x + y)),
                BinOp::Sub => Some(F(x - y)),
                BinOp::Mul => Some(F(x * y)),
                BinOp::Div => Some(F(x / y)),
                BinOp::Lt => Some(B(x < y)),
                BinOp::Le => Some(B(x <= y)),
                BinOp::Gt => Some(B(x > y)),
                BinOp::Ge => Some(B(x >= y)),
                BinOp::Eq => Some(B(x == y)),
                BinOp::Ne => Some(B(x != y)),
                _ => None,
            }
        }
        (B(x), B(y)) => match op {
            BinOp::And => Some(B(*x && *y)),
            BinOp::Or => Some(B(*x || *y)),
            BinOp::Eq => Some(B(x == y)),
            BinOp::Ne => Some(B(x != y)),
            _ => None,
        },
        _ => None,
    };
    if let Some(f) = folded {
        return f;
    }
    match op {
        BinOp::Mul if is_one(&b) => a,
        BinOp::Mul if is_one(&a) => b,
        BinOp::Div if is_one(&b) => a,
        BinOp::Sub if is_zero(&b) => a,
        BinOp::And if matches!(a, B(true)) => b,
        BinOp::And if matches!(b, B(true)) => a,
        BinOp::Or if matches!(a, B(false)) => b,
        BinOp::Or if matches!(b, B(false)) => a,
        _ => Expr::binary(op, a, b),
    }
}

fn num(e: &Expr) -> f64 {
    match e {
        Expr::Float(x) => *x,
        Expr::Int(i) => *i as f64,
        _ => f64::NAN,
    }
}

fn fold_call(f: Func, args: Vec<Expr>) -> Expr {
    if f == Func::Select {
        if let Expr::Bool(c) = args[0] {
            let mut args = args;
            return args.swap_remove(if c { 1 } else { 2 });
        }
        return Expr::Call(f, args);
    }
    let all_float = args
        .iter()
        .all(|a| matches!(a, Expr::Float(_) | Expr::Int(_)))
        && args.iter().any(|a| matches!(a, Expr::Float(_)));
    let all_int = args.iter().all(|a| matches!(a, Expr::Int(_)));
    let x = args.first().map_or(0.0, num);
    let y = args.get(1).map_or(0.0, num);
    let float = |v: f64| Some(Expr::Float(v));
    // Integer operands are read exactly: an i64 beyond 2^53 has no f64.
    let int = |k: usize| match args.get(k) {
        Some(Expr::Int(i)) => Some(*i),
        _ => None,
    };
    let r = match f {
        Func::Cast(tile_ir::DType::I32) if all_int => {
            int(0).filter(|i| i32::try_from(*i).is_ok()).map(Expr::Int)
        }
        Func::Cast(tile_ir::DType::I32) if all_float => {
            let t = x.trunc();
            (t >= i32::MIN as f64 && t <= i32::MAX as f64).then_some(Expr::Int(t as i64))
        }
        // One rounding, as the back ends' `(float)` of an integer.
        Func::Cast(tile_ir::DType::F32) if all_int => int(0).map(|i| Expr::Float(i as f32 as f64)),
        Func::Cast(tile_ir::DType::F32) if all_float => float(x as f32 as f64),
        Func::Cast(tile_ir::DType::F64) if all_int => int(0).map(|i| Expr::Float(i as f64)),
        Func::Cast(tile_ir::DType::F64) if all_float => float(x),
        // `abs(i64::MIN)` overflows: left for the run to report, as the
        // interpreter does.
        Func::Abs if all_int => int(0).and_then(i64::checked_abs).map(Expr::Int),
        Func::Min if all_int => int(0).zip(int(1)).map(|(a, b)| Expr::Int(a.min(b))),
        Func::Max if all_int => int(0).zip(int(1)).map(|(a, b)| Expr::Int(a.max(b))),
        _ if !all_float => None,
        Func::Abs => float(x.abs()),
        Func::Min => float(x.min(y)),
        Func::Max => float(x.max(y)),
        Func::Exp => float(x.exp()),
        Func::Exp2 => float(x.exp2()),
        Func::Log => float(x.ln()),
        Func::Log2 => float(x.log2()),
        Func::Log1p => float(x.ln_1p()),
        Func::Expm1 => float(x.exp_m1()),
        Func::Sqrt => float(x.sqrt()),
        Func::Rsqrt => float(1.0 / x.sqrt()),
        Func::Tanh => float(x.tanh()),
        Func::Sigmoid => float(1.0 / (1.0 + (-x).exp())),
        Func::Sin => float(x.sin()),
        Func::Cos => float(x.cos()),
        Func::Floor => float(x.floor()),
        Func::Ceil => float(x.ceil()),
        Func::Pow => float(x.powf(y)),
        Func::Fma => float(x.mul_add(y, num(&args[2]))),
        // erf needs a library implementation; leave it to the back end.
        _ => None,
    };
    r.unwrap_or(Expr::Call(f, args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::builder::*;

    #[test]
    fn calls_on_constants() {
        assert_eq!(fold_expr(exp(lit(0.0))), lit(1.0));
        // Integers beyond 2^53 fold exactly (a fuzz case once folded
        // `-2^62 + abs(0 - (2^62 - 1))` to 0, not -1).
        let big = (1i64 << 62) - 1;
        let abs = |e| Expr::call(Func::Abs, vec![e]);
        assert_eq!(fold_expr(abs(int(0) - int(big))), int(big));
        assert_eq!(fold_expr(int(-big - 1) + abs(int(0) - int(big))), int(-1));
        let e = abs(int(i64::MIN));
        assert_eq!(fold_expr(e.clone()), e);
        let max = Expr::call(Func::Max, vec![int(big), int(big - 1)]);
        assert_eq!(fold_expr(max), int(big));
        let to_f32 = Expr::call(
            Func::Cast(tile_ir::DType::F32),
            vec![int((1 << 53) + 1 + (1 << 29))],
        );
        let once = ((1i64 << 53) + 1 + (1 << 29)) as f32 as f64;
        assert_eq!(fold_expr(to_f32), lit(once));
        assert_eq!(fold_expr(lit(2.0) * lit(3.0) + v("x")), lit(6.0) + v("x"));
    }

    #[test]
    fn ieee_safe() {
        let e = lit(0.0) * v("x");
        assert_eq!(fold_expr(e.clone()), e);
        let e = v("x") + lit(0.0);
        assert_eq!(fold_expr(e.clone()), e);
        assert_eq!(fold_expr(v("x") * lit(1.0)), v("x"));
        assert_eq!(fold_expr(int(7) / int(0)), int(7) / int(0));
    }
}
