//! Local derivatives: for each operator, the cotangent of each operand
//! given the cotangent of the result, and the tidy constructors they use.
//!
//! Where the derivative is not defined everywhere the rule gives the value
//! documented in docs/guide/derivatives.md: `abs` has 0 at 0, `min` and
//! `max` split a tie evenly (as PyTorch's `minimum` and `maximum`), `pow`'s
//! derivative in its exponent is 0 where the base is not positive, and
//! `floor`, `ceil`, comparisons and integers have none.

use crate::{BinOp, Expr, Func, ReduceOp, UnOp};

const LN_2: f64 = std::f64::consts::LN_2;
/// 2 / sqrt(pi), the scale of erf's derivative.
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

fn is_one(e: &Expr) -> bool {
    matches!(e, Expr::Float(v) if *v == 1.0) || matches!(e, Expr::Int(1))
}

/// `a * b`, dropping a factor of one.
pub(super) fn mul(a: Expr, b: Expr) -> Expr {
    if is_one(&a) {
        b
    } else if is_one(&b) {
        a
    } else {
        Expr::binary(BinOp::Mul, a, b)
    }
}

/// `a / b`.
pub(super) fn div(a: Expr, b: Expr) -> Expr {
    if is_one(&b) {
        a
    } else {
        Expr::binary(BinOp::Div, a, b)
    }
}

/// `-a`, folding a double negation.
pub(super) fn neg(a: Expr) -> Expr {
    match a {
        Expr::Unary(UnOp::Neg, inner) => *inner,
        a => Expr::Unary(UnOp::Neg, Box::new(a)),
    }
}

/// The sum of `terms`, in order; `None` when there are none. Sums over the
/// same variable and range become one (`sum(j in 0..N: a) + sum(j in
/// 0..N: b)` is `sum(j in 0..N: a + b)`): one pass over a row, not two.
pub(super) fn add_all(terms: Vec<Expr>) -> Option<Expr> {
    let mut merged: Vec<Expr> = Vec::new();
    for t in terms {
        if let Expr::Reduce {
            op: ReduceOp::Sum,
            var,
            lo,
            hi,
            body,
        } = &t
        {
            let same = merged.iter_mut().find(|m| {
                matches!(m, Expr::Reduce { op: ReduceOp::Sum, var: v, lo: l, hi: h, .. }
                    if v == var && l == lo && h == hi)
            });
            if let Some(Expr::Reduce { body: into, .. }) = same {
                let old = std::mem::replace(&mut **into, Expr::Int(0));
                **into = add_all(vec![old, (**body).clone()]).expect("two terms");
                continue;
            }
        }
        merged.push(t);
    }
    merged.into_iter().reduce(|acc, t| match t {
        Expr::Unary(UnOp::Neg, inner) => Expr::binary(BinOp::Sub, acc, *inner),
        t => Expr::binary(BinOp::Add, acc, t),
    })
}

fn select(c: Expr, a: Expr, b: Expr) -> Expr {
    Expr::call(Func::Select, vec![c, a, b])
}

fn call1(f: Func, a: &Expr) -> Expr {
    Expr::call(f, vec![a.clone()])
}

fn zero() -> Expr {
    Expr::Float(0.0)
}

fn lit(v: f64) -> Expr {
    Expr::Float(v)
}

/// `bar` where `a` is the larger (or the smaller, `max == false`) of `a`
/// and `b`, half of it where they tie, else 0.
fn pick(a: &Expr, b: &Expr, bar: &Expr, max: bool) -> Expr {
    let op = if max { BinOp::Gt } else { BinOp::Lt };
    select(
        Expr::binary(op, a.clone(), b.clone()),
        bar.clone(),
        select(
            Expr::binary(BinOp::Eq, a.clone(), b.clone()),
            mul(lit(0.5), bar.clone()),
            zero(),
        ),
    )
}

/// For the operator node `e` (a unary, binary or call node other than a
/// cast), each operand's position among `e.children()` with its cotangent
/// when `e`'s is `bar`. Operands with no derivative (conditions, integer
/// operands of comparisons, `floor`) are left out; the caller also skips
/// operands that are not floats.
pub(super) fn operand_cotangents(e: &Expr, bar: &Expr) -> Vec<(usize, Expr)> {
    let b = || bar.clone();
    match e {
        Expr::Unary(UnOp::Neg, _) => vec![(0, neg(b()))],
        Expr::Binary(op, x, y, _) => match op {
            BinOp::Add => vec![(0, b()), (1, b())],
            BinOp::Sub => vec![(0, b()), (1, neg(b()))],
            BinOp::Mul => vec![(0, mul(b(), (**y).clone())), (1, mul(b(), (**x).clone()))],
            // d(x/y)/dy = -(x/y)/y: no y*y, which overflows long before x/y.
            BinOp::Div => vec![
                (0, div(b(), (**y).clone())),
                (1, neg(div(mul(b(), e.clone()), (**y).clone()))),
            ],
            _ => vec![],
        },
        Expr::Call(f, args) => {
            let a = &args[0];
            match f {
                Func::Abs => vec![(
                    0,
                    select(
                        Expr::binary(BinOp::Gt, a.clone(), zero()),
                        b(),
                        select(Expr::binary(BinOp::Lt, a.clone(), zero()), neg(b()), zero()),
                    ),
                )],
                Func::Min | Func::Max => {
                    let max = *f == Func::Max;
                    vec![
                        (0, pick(&args[0], &args[1], bar, max)),
                        (1, pick(&args[1], &args[0], bar, max)),
                    ]
                }
                Func::Exp => vec![(0, mul(b(), e.clone()))],
                Func::Exp2 => vec![(0, mul(mul(b(), e.clone()), lit(LN_2)))],
                Func::Log => vec![(0, div(b(), a.clone()))],
                Func::Log2 => vec![(0, div(b(), mul(a.clone(), lit(LN_2))))],
                Func::Log1p => vec![(0, div(b(), Expr::binary(BinOp::Add, lit(1.0), a.clone())))],
                Func::Expm1 => vec![(0, mul(b(), Expr::binary(BinOp::Add, e.clone(), lit(1.0))))],
                Func::Sqrt => vec![(0, div(mul(lit(0.5), b()), e.clone()))],
                // d(x^-1/2) = -1/2 x^-1/2 / x.
                Func::Rsqrt => vec![(0, div(mul(lit(-0.5), mul(b(), e.clone())), a.clone()))],
                Func::Tanh => vec![(
                    0,
                    mul(
                        b(),
                        Expr::binary(BinOp::Sub, lit(1.0), mul(e.clone(), e.clone())),
                    ),
                )],
                Func::Sigmoid => vec![(
                    0,
                    mul(
                        mul(b(), e.clone()),
                        Expr::binary(BinOp::Sub, lit(1.0), e.clone()),
                    ),
                )],
                Func::Erf => vec![(
                    0,
                    mul(
                        mul(b(), lit(TWO_OVER_SQRT_PI)),
                        call1(Func::Exp, &neg(mul(a.clone(), a.clone()))),
                    ),
                )],
                Func::Sin => vec![(0, mul(b(), call1(Func::Cos, a)))],
                Func::Cos => vec![(0, neg(mul(b(), call1(Func::Sin, a))))],
                Func::Pow => {
                    let y = &args[1];
                    let lowered = Expr::binary(BinOp::Sub, y.clone(), lit(1.0));
                    vec![
                        (
                            0,
                            mul(
                                mul(b(), y.clone()),
                                Expr::call(Func::Pow, vec![a.clone(), lowered]),
                            ),
                        ),
                        (
                            1,
                            mul(
                                b(),
                                select(
                                    Expr::binary(BinOp::Gt, a.clone(), zero()),
                                    mul(e.clone(), call1(Func::Log, a)),
                                    zero(),
                                ),
                            ),
                        ),
                    ]
                }
                Func::Fma => vec![
                    (0, mul(b(), args[1].clone())),
                    (1, mul(b(), args[0].clone())),
                    (2, b()),
                ],
                Func::Select => vec![
                    (1, select(args[0].clone(), b(), zero())),
                    (2, select(args[0].clone(), zero(), b())),
                ],
                Func::Floor | Func::Ceil | Func::Cast(_) => vec![],
            }
        }
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_constructors_fold_ones_and_double_negation() {
        let x = Expr::var("x");
        assert_eq!(mul(lit(1.0), x.clone()), x);
        assert_eq!(mul(x.clone(), Expr::Int(1)), x);
        assert_eq!(neg(neg(x.clone())), x);
        assert_eq!(div(x.clone(), lit(1.0)), x);
        let sum = add_all(vec![x.clone(), neg(Expr::var("y"))]).unwrap();
        assert_eq!(sum.to_string(), "x - y");
        assert!(add_all(vec![]).is_none());
        let row = |body: Expr| super::super::sum("j", Expr::Int(0), Expr::var("N"), body);
        let merged = add_all(vec![
            row(x.clone()),
            Expr::var("z"),
            row(neg(Expr::var("y"))),
        ])
        .unwrap();
        assert_eq!(merged.to_string(), "sum(j in 0..N: x - y) + z");
    }
}
