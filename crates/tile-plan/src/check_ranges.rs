//! `check_ranges`: the launch-time proof that a program's integer
//! arithmetic cannot wrap in generated code.
//!
//! Kernels compute indices, bounds and integer values in 64-bit integers,
//! and check each access against its box with expressions such as
//! `q - lo < n`, or over a whole loop at its entry with the extreme values
//! of an affine index (`c1 * lo1 + c2 * hi2 + k`). None of that may wrap:
//! a wrapped index passes its check and touches memory outside the array.
//!
//! Before any launch, with the size symbols bound, this pass computes an
//! interval (in `i128`) for every integer-valued expression of the program,
//! from the sizes (points), loop and reduction variables (their bounds'
//! intervals), bindings, `i32` loads and conversions (the `i32` range).
//! It refuses the launch, naming the statement, when:
//! - a box bound or extent, a size, or a loop's extent reaches
//!   [`INDEX_LIMIT`] (2^62), or a box's extent is negative;
//! - a computed integer (any non-literal node) may reach 2^62 in
//!   magnitude; for an index this is reported as an index outside the box,
//!   the interpreter's message shape;
//! - an affine index's entry check, `sum(|c| * max|name|) + |k|`, may reach
//!   2^62;
//! - a nest's domain holds 2^62 work items or more.
//!
//! With every operand below 2^62 in magnitude, every check a kernel prints
//! (a difference of two such values, a sum of the terms above) stays below
//! 2^63: it cannot wrap. The interval is conservative (it ignores `if`
//! conditions), so a program may be refused here that the interpreter runs;
//! no program passes here whose generated code can wrap. Division by zero
//! is not a range question: kernels check divisors where they divide.

use crate::affine::Affine;
use crate::Plan;
use std::collections::{BTreeMap, HashMap};
use tile_ir::scope::Scope;
use tile_ir::{BinOp, DType, Expr, Func, ReduceOp, Sizes, Span, Stmt, UnOp};

/// Magnitude that no size, bound, index or computed integer may reach in
/// 64-bit kernels ([`check_ranges_within`] takes another).
pub const INDEX_LIMIT: i128 = 1 << 62;

/// Why a launch is refused: a located, plain sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeError {
    /// The statement (or parameter) at fault; unknown for sizes.
    pub span: Span,
    /// What may overflow, and where.
    pub message: String,
}

impl std::fmt::Display for RangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.span.is_known() {
            write!(f, "{}: {}", self.span, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for RangeError {}

/// What the proof found besides the absence of overflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeProof {
    /// Whether a check the kernels print may fail at these sizes: an
    /// access whose index interval leaves its box, or an integer division
    /// whose divisor's interval holds zero. When false, no kernel can
    /// report a failure, so a runtime need not wait to read one (the CUDA
    /// runtime's calls on a caller's stream stay asynchronous).
    pub checks_may_fail: bool,
}

/// Closed interval of an integer value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Iv {
    lo: i128,
    hi: i128,
}

impl Iv {
    fn point(v: i128) -> Iv {
        Iv { lo: v, hi: v }
    }

    fn of(a: i128, b: i128, c: i128, d: i128) -> Iv {
        Iv {
            lo: a.min(b).min(c).min(d),
            hi: a.max(b).max(c).max(d),
        }
    }

    fn magnitude(self) -> i128 {
        self.lo.abs().max(self.hi.abs())
    }

    fn union(self, o: Iv) -> Iv {
        Iv {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    /// The endpoint farther from zero (for messages).
    fn extreme(self) -> i128 {
        if self.hi.abs() >= self.lo.abs() {
            self.hi
        } else {
            self.lo
        }
    }
}

const I32: Iv = Iv {
    lo: i32::MIN as i128,
    hi: i32::MAX as i128,
};

/// Proves that every integer `plan`'s kernels compute at `sizes` stays
/// below [`INDEX_LIMIT`] in magnitude (see the module documentation). The
/// kernels' own domains and bodies are walked (what the back ends print),
/// and every kernel's work items are counted before any launch.
pub fn check_ranges(plan: &Plan, sizes: &Sizes) -> Result<RangeProof, RangeError> {
    check_ranges_within(plan, sizes, 62)
}

/// [`check_ranges`] for a target whose kernels compute in narrower
/// integers: no integer may reach `2^bits` (62 for 64-bit kernels; 30 for
/// WGSL's `i32`, so that every check's sum of two such values stays below
/// 2^31).
pub fn check_ranges_within(
    plan: &Plan,
    sizes: &Sizes,
    bits: u32,
) -> Result<RangeProof, RangeError> {
    let program = &plan.program;
    let boxes = tile_ir::args::boxes(program, sizes).map_err(|e| RangeError {
        span: program.span,
        message: format!("{e} (integer overflow or division by zero)"),
    })?;
    let mut c = Checker {
        limit: 1 << bits,
        bits,
        program,
        boxes,
        shared: &plan.shared,
        planned: HashMap::new(),
        env: Scope::default(),
        may_fail: false,
        dead: 0,
    };
    for (name, &v) in sizes {
        if (v as i128).abs() >= c.limit {
            return Err(RangeError {
                span: Span::default(),
                message: format!(
                    "size symbol `{name}` = {v} reaches 2^{}, beyond what kernels index",
                    c.bits
                ),
            });
        }
        c.env.push(name.clone(), Some(Iv::point(v as i128)));
    }
    for p in &program.params {
        // Kernels compute each box's bounds from the sizes: every step of
        // that arithmetic stays under the limit too.
        for d in &p.dims {
            c.int(&d.lo, p.span)?;
            c.int(&d.hi, p.span)?;
        }
        let mut numel: i128 = 1;
        for &(lo, hi) in &c.boxes[&p.name] {
            let (lo, hi) = (lo as i128, hi as i128);
            if lo.abs() >= c.limit || hi.abs() >= c.limit || hi - lo >= c.limit {
                return Err(RangeError {
                    span: p.span,
                    message: format!(
                        "the box of `{}` has a bound or extent reaching 2^{} ({lo}..{hi})",
                        p.name, c.bits
                    ),
                });
            }
            if hi < lo {
                return Err(RangeError {
                    span: p.span,
                    message: format!("the box of `{}` has a negative extent ({lo}..{hi})", p.name),
                });
            }
            numel = numel.saturating_mul(hi - lo);
        }
        if numel >= c.limit {
            return Err(RangeError {
                span: p.span,
                message: format!(
                    "the box of `{}` holds 2^{} elements or more",
                    p.name, c.bits
                ),
            });
        }
    }
    for k in &plan.kernels {
        k.work_items(sizes)?;
        let span = Span::new(k.lines.first().copied().unwrap_or(0), 1);
        let depth = c.env.len();
        let mut empty = false;
        for v in &k.domain {
            let (iv, _, never) = c.range(&v.lo, &v.hi, span, &v.name)?;
            empty |= never;
            c.env.push(v.name.clone(), Some(iv));
        }
        // A full reduction's domain is its reduction's range, but its
        // store runs once even when that range is empty.
        c.dead = u32::from(empty && k.mapping != crate::Mapping::FullReduction);
        c.stmts(&k.body)?;
        c.dead = 0;
        c.env.truncate(depth);
    }
    Ok(RangeProof {
        checks_may_fail: c.may_fail,
    })
}

struct Checker<'p> {
    /// The magnitude no integer may reach (`1 << bits`).
    limit: i128,
    /// Its exponent, for messages.
    bits: u32,
    program: &'p tile_ir::Program,
    /// Every parameter's box at these sizes (for messages).
    boxes: BTreeMap<String, Vec<(i64, i64)>>,
    /// The bindings simplification introduced ([`Plan::shared`]).
    shared: &'p [String],
    /// The values of bindings the planner made (`c0`: a value shared by
    /// several expressions), in the user's names, so that a refusal shows
    /// what the user wrote ([`Checker::shown`]).
    planned: HashMap<String, Expr>,
    /// Visible names: an interval for integers, `None` for floats and
    /// booleans.
    env: Scope<Option<Iv>>,
    /// Whether some access may leave its box or some divisor be zero.
    may_fail: bool,
    /// How many enclosing loops or reductions are empty at these sizes:
    /// inside one, nothing runs, so no check can fail (overflow is still
    /// refused: the bounds are evaluated).
    dead: u32,
}

impl Checker<'_> {
    fn lookup(&self, name: &str) -> Option<Iv> {
        self.env.get(name).flatten()
    }

    /// `e` in the user's names: a planner's shared value replaced by what
    /// it stands for, and a binding renamed when nests merged (`__t_1`)
    /// by the user's name (`t`).
    fn shown(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        self.unplan(&mut e);
        e
    }

    fn unplan(&self, e: &mut Expr) {
        if let Expr::Var(n) = e {
            if let Some(v) = self.planned.get(n.as_str()) {
                *e = v.clone();
            } else if let Some(user) = renamed(n) {
                *e = Expr::var(user);
            }
            return;
        }
        for c in e.children_mut() {
            self.unplan(c);
        }
    }

    fn stmts(&mut self, body: &[Stmt]) -> Result<(), RangeError> {
        let depth = self.env.len();
        for s in body {
            self.stmt(s)?;
        }
        self.env.truncate(depth);
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), RangeError> {
        match s {
            Stmt::For { vars, body, span } => {
                let depth = self.env.len();
                let mut work: i128 = 1;
                let mut empty = false;
                for v in vars {
                    let (iv, _, never) = self.range(&v.lo, &v.hi, *span, &v.name)?;
                    empty |= never;
                    work = work.saturating_mul(iv.hi - iv.lo + 1);
                    if work >= self.limit {
                        return Err(RangeError {
                            span: *span,
                            message: format!(
                                "the nest's domain may hold 2^{} points or more",
                                self.bits
                            ),
                        });
                    }
                    self.env.push(v.name.clone(), Some(iv));
                }
                self.dead += u32::from(empty);
                let r = self.stmts(body);
                self.dead -= u32::from(empty);
                self.env.truncate(depth);
                r
            }
            Stmt::Let { name, value, span } => {
                let v = self.expr(value, *span)?;
                if self.shared.iter().any(|n| n == name) {
                    let shown = self.shown(value);
                    self.planned.insert(name.clone(), shown);
                }
                self.env.push(name.clone(), v);
                Ok(())
            }
            Stmt::Store {
                buf,
                idx,
                value,
                span,
                ..
            } => {
                self.access(buf, idx, *span)?;
                self.expr(value, *span).map(|_| ())
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                self.expr(cond, *span)?;
                self.stmts(then)?;
                self.stmts(els)
            }
        }
    }

    /// The interval of a variable over `lo..hi`: `[min lo, max hi - 1]`
    /// (a single point when the range is always empty), and whether the
    /// range may be empty, and whether it is always empty. Bounds must
    /// stay below the limit too: a loop steps its variable (by a vector's
    /// width) up to its upper bound.
    fn range(
        &mut self,
        lo: &Expr,
        hi: &Expr,
        span: Span,
        var: &str,
    ) -> Result<(Iv, bool, bool), RangeError> {
        let (l, h) = (self.int(lo, span)?, self.int(hi, span)?);
        let iv = Iv {
            lo: l.lo,
            hi: (h.hi - 1).max(l.lo),
        };
        if l.magnitude() >= self.limit || h.magnitude() >= self.limit {
            return Err(RangeError {
                span,
                message: format!(
                    "a bound of `{var}` ({}..{}) may reach 2^{}",
                    self.shown(lo),
                    self.shown(hi),
                    self.bits
                ),
            });
        }
        if iv.hi - iv.lo >= self.limit {
            return Err(RangeError {
                span,
                message: format!(
                    "the range of `{var}` ({}..{}) may span 2^{} values or more",
                    self.shown(lo),
                    self.shown(hi),
                    self.bits
                ),
            });
        }
        Ok((iv, l.hi >= h.lo, h.hi <= l.lo))
    }

    /// An integer expression's interval (loop bounds, indices).
    fn int(&mut self, e: &Expr, span: Span) -> Result<Iv, RangeError> {
        self.expr(e, span)?.ok_or_else(|| RangeError {
            span,
            message: format!("`{}` is not an integer expression", self.shown(e)),
        })
    }

    fn access(&mut self, buf: &str, idx: &[Expr], span: Span) -> Result<(), RangeError> {
        for (d, e) in idx.iter().enumerate() {
            let Some(iv) = self.eval(e, span)? else {
                self.may_fail |= self.dead == 0;
                continue;
            };
            let dim = self.boxes.get(buf).and_then(|b| b.get(d)).copied();
            let inside = dim.is_some_and(|(lo, hi)| iv.lo >= lo as i128 && iv.hi < hi as i128);
            self.may_fail |= !inside && self.dead == 0;
            // An index that computes nothing (a loaded value, a name, a
            // conversion, a min or max of such) checked against a box
            // from 0 is compared as it is (`q >= 0 && q < n`): no sum to
            // wrap, whatever its magnitude.
            if copies_operand(e) && dim.is_some_and(|(lo, _)| lo == 0) {
                continue;
            }
            if iv.magnitude() >= self.limit {
                let bounds = self.boxes.get(buf).cloned().unwrap_or_default();
                return Err(RangeError {
                    span,
                    message: format!(
                        "index `{}` may reach {}, outside the box of `{buf}` {bounds:?}; refused before launch",
                        self.shown(e),
                        iv.extreme()
                    ),
                });
            }
            // The entry check of a loop level sums the affine form's terms
            // at their extremes.
            if let Some(a) = Affine::of(e) {
                let mut total: i128 = (a.constant as i128).abs();
                for (n, &c) in &a.terms {
                    let Some(r) = self.lookup(n) else { continue };
                    total = total.saturating_add((c as i128).abs().saturating_mul(r.magnitude()));
                }
                if total >= self.limit {
                    return Err(RangeError {
                        span,
                        message: format!(
                            "index `{}` of `{buf}` has terms whose sum may reach 2^{}; its bounds check could overflow",
                            self.shown(e),
                            self.bits
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The interval of an integer-valued `e` (`None` for floats and
    /// booleans); refuses any computed integer reaching the limit (not
    /// those [`copies_operand`] names: nothing computed there can wrap).
    fn expr(&mut self, e: &Expr, span: Span) -> Result<Option<Iv>, RangeError> {
        let iv = self.eval(e, span)?;
        // A literal is printed as written, a load holds a value of its
        // buffer's `i32` type, and a name holds a value checked where it
        // was computed (a size, a loop's bounds, a binding's value): none
        // computes anything that could wrap here (what is computed from
        // them is checked, and an index is checked by `access`).
        if let (Some(v), false) = (iv, copies_operand(e)) {
            if v.magnitude() >= self.limit {
                return Err(RangeError {
                    span,
                    message: format!(
                        "the value of `{}` may reach {}, beyond the 2^{} that kernels compute without overflow",
                        self.shown(e),
                        v.extreme(),
                        self.bits
                    ),
                });
            }
        }
        Ok(iv)
    }

    /// [`Checker::expr`] without the limit on `e` itself (its operands are
    /// checked).
    fn eval(&mut self, e: &Expr, span: Span) -> Result<Option<Iv>, RangeError> {
        Ok(match e {
            Expr::Int(v) => Some(Iv::point(*v as i128)),
            Expr::Float(_) | Expr::Bool(_) => None,
            Expr::Var(n) => self.lookup(n),
            Expr::Load { buf, idx, .. } => {
                self.access(buf, idx, span)?;
                let dtype = self.program.param(buf).map(|p| p.dtype);
                (dtype == Some(DType::I32)).then_some(I32)
            }
            Expr::Unary(UnOp::Neg, a) => self.expr(a, span)?.map(|x| Iv {
                lo: -x.hi,
                hi: -x.lo,
            }),
            Expr::Unary(UnOp::Not, a) => {
                self.expr(a, span)?;
                None
            }
            Expr::Binary(op, a, b, _) => {
                let (x, y) = (self.expr(a, span)?, self.expr(b, span)?);
                match (x, y) {
                    (Some(x), Some(y)) => {
                        self.may_fail |= self.dead == 0
                            && matches!(op, BinOp::Div | BinOp::Rem)
                            && y.lo <= 0
                            && y.hi >= 0;
                        arith(*op, x, y)
                    }
                    _ => None,
                }
            }
            Expr::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.expr(a, span)?);
                }
                call(*f, &vals)
            }
            Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => {
                let (r, may_be_empty, never) = self.range(lo, hi, span, var)?;
                let depth = self.env.len();
                self.env.push(var.clone(), Some(r));
                self.dead += u32::from(never);
                let b = self.expr(body, span);
                self.dead -= u32::from(never);
                self.env.truncate(depth);
                let b = b?;
                match (op, b) {
                    (ReduceOp::Sum, Some(b)) => {
                        let n = r.hi - r.lo + 1;
                        Some(Iv::of(b.lo * n, b.hi * n, b.lo.min(0), b.hi.max(0)))
                    }
                    // An empty integer max or min is the kernels' starting
                    // value, the far end of the 64-bit range.
                    (ReduceOp::Max, Some(b)) if may_be_empty => {
                        Some(b.union(Iv::point(i64::MIN as i128)))
                    }
                    (ReduceOp::Min, Some(b)) if may_be_empty => {
                        Some(b.union(Iv::point(i64::MAX as i128)))
                    }
                    (_, b) => b,
                }
            }
        })
    }
}

/// Integer `x op y`; `None` for comparisons and logic (booleans).
fn arith(op: BinOp, x: Iv, y: Iv) -> Option<Iv> {
    Some(match op {
        BinOp::Add => Iv {
            lo: x.lo + y.lo,
            hi: x.hi + y.hi,
        },
        BinOp::Sub => Iv {
            lo: x.lo - y.hi,
            hi: x.hi - y.lo,
        },
        BinOp::Mul => Iv::of(x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi),
        // Truncating division never grows the magnitude (a zero divisor is
        // checked where the kernel divides).
        BinOp::Div => {
            let m = x.magnitude();
            Iv { lo: -m, hi: m }
        }
        // The remainder has the dividend's sign and a magnitude at most the
        // dividend's and below the divisor's (a zero divisor is checked
        // where the kernel divides).
        BinOp::Rem => {
            let m = x.magnitude().min((y.magnitude() - 1).max(0));
            Iv {
                lo: if x.lo < 0 { -m } else { 0 },
                hi: if x.hi > 0 { m } else { 0 },
            }
        }
        _ => return None,
    })
}

/// A built-in function on integer intervals, where its result is an
/// integer.
fn call(f: Func, v: &[Option<Iv>]) -> Option<Iv> {
    let all: Option<Vec<Iv>> = v.iter().copied().collect();
    match f {
        Func::Cast(DType::I32) => Some(I32),
        Func::Abs => all.map(|a| Iv {
            lo: if a[0].lo <= 0 && a[0].hi >= 0 {
                0
            } else {
                a[0].lo.abs().min(a[0].hi.abs())
            },
            hi: a[0].magnitude(),
        }),
        Func::Min => all.map(|a| Iv {
            lo: a[0].lo.min(a[1].lo),
            hi: a[0].hi.min(a[1].hi),
        }),
        Func::Max => all.map(|a| Iv {
            lo: a[0].lo.max(a[1].lo),
            hi: a[0].hi.max(a[1].hi),
        }),
        Func::Select => match (v.get(1).copied().flatten(), v.get(2).copied().flatten()) {
            (Some(a), Some(b)) => Some(a.union(b)),
            _ => None,
        },
        _ => None,
    }
}

/// The user's name behind a binding renamed when nests merged
/// (`__t_1` for `t`: `plan_groups::rename_into`), if `n` is one.
fn renamed(n: &str) -> Option<&str> {
    let rest = n.strip_prefix(tile_ir::names::RESERVED_PREFIX)?;
    let (user, k) = rest.rsplit_once('_')?;
    (!user.is_empty()
        && !user.starts_with('_')
        && !k.is_empty()
        && k.bytes().all(|b| b.is_ascii_digit()))
    .then_some(user)
}

/// Whether `e`'s value is one of its operands' values, or a value of its
/// type, computed by nothing that could wrap: a literal (printed as
/// written), a load (a value of its buffer's `i32` type), a name (checked
/// where it was computed: a size, a loop's bounds, a binding's value), a
/// conversion to `i32` (it saturates), or a `min`, `max` or `select` of
/// operands (each checked in turn).
fn copies_operand(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Int(_)
            | Expr::Load { .. }
            | Expr::Var(_)
            | Expr::Call(
                Func::Cast(DType::I32) | Func::Min | Func::Max | Func::Select,
                _
            )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, sizes: &[(&str, i64)]) -> Result<(), RangeError> {
        let p = tile_ir::parse_program(text).unwrap();
        let plan = crate::compile(&p, &crate::Options::default()).unwrap();
        let s: Sizes = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        check_ranges(&plan, &s).map(|_| ())
    }

    #[test]
    fn accesses_proven_inside_their_boxes_cannot_fail() {
        let plan = |text: &str| {
            let p = tile_ir::parse_program(text).expect("parses");
            crate::compile(&p, &crate::Options::default()).expect("plans")
        };
        let sizes: Sizes = [("N".to_string(), 8)].into_iter().collect();
        let inside =
            plan("program p(x: in f32[N], y: out f32[N]) { for j in 0..N { y[j] = x[j] } }");
        assert!(!check_ranges(&inside, &sizes).unwrap().checks_may_fail);
        let shifted =
            plan("program p(x: in f32[N], y: out f32[N]) { for j in 0..N { y[j] = x[j + 1] } }");
        assert!(check_ranges(&shifted, &sizes).unwrap().checks_may_fail);
        let gather = plan(
            "program p(x: in f32[N], k: in i32[N], y: out f32[N]) { for j in 0..N { y[j] = x[k[j]] } }",
        );
        assert!(check_ranges(&gather, &sizes).unwrap().checks_may_fail);
    }

    #[test]
    fn accesses_in_empty_ranges_cannot_fail() {
        let p = tile_ir::parse_program(
            "program c(a: in f32[M, N], y: out f32[N]) { for j in 0..N { y[j] = max(i in 0..M: a[i, j]) + sum(i in 0..M: a[i + 1, j]) } }",
        )
        .unwrap();
        let plan = crate::compile(&p, &crate::Options::default()).unwrap();
        let at = |m: i64| -> Sizes { [("M".to_string(), m), ("N".to_string(), 1)].into() };
        // No rows: neither reduction reads anything.
        assert!(!check_ranges(&plan, &at(0)).unwrap().checks_may_fail);
        // With rows, `a[i + 1, j]` leaves the box at the last one.
        assert!(check_ranges(&plan, &at(3)).unwrap().checks_may_fail);
        let nest = tile_ir::parse_program(
            "program n(x: in f32[N], y: out f32[M]) { for i in 0..M { y[i] = x[i + 7] } }",
        )
        .unwrap();
        let plan = crate::compile(&nest, &crate::Options::default()).unwrap();
        let s: Sizes = [("M".to_string(), 0), ("N".to_string(), 2)].into();
        assert!(!check_ranges(&plan, &s).unwrap().checks_may_fail);
        // A whole-array reduction over an empty range still stores, and
        // the store's other loads still run.
        let full = tile_ir::parse_program(
            "program f(x: in f32[N], b: in f32[M], y: out f32[1]) { y[0] = sum(i in 0..N: x[i]) + b[3] }",
        )
        .unwrap();
        let plan = crate::compile(&full, &crate::Options::default()).unwrap();
        assert_eq!(plan.kernels[0].mapping, crate::Mapping::FullReduction);
        let s: Sizes = [("M".to_string(), 1), ("N".to_string(), 0)].into();
        assert!(check_ranges(&plan, &s).unwrap().checks_may_fail);
    }

    #[test]
    fn ordinary_programs_pass() {
        let t = "program p(x: in f32[M, N], y: out f32[M, N]) {
          for i in 0..M { m = max(j in 0..N: x[i, j]); for j in 0..N { y[i, j] = x[i, j] - m } } }";
        check(t, &[("M", 4096), ("N", 1 << 30)]).unwrap();
    }

    #[test]
    fn a_refusal_names_what_the_user_wrote_where_it_is() {
        // A value the planner shares between two loads, and a binding
        // renamed when the two nests merged: the message shows neither
        // `c0` nor `__t_1`, and points at the statement's line.
        let t = "program p(x: in f32[N], y: out f32[N], z: out f32[N]) {
          for i in 0..N {
            t = i * i
            y[i] = x[i] + f32(t % 7)
          }
          for i in 0..N {
            t = i * 2
            z[i] = x[(t * t * t * t) % N] + x[(t * t * t * t) % N / 2]
          }
        }";
        let e = check(t, &[("N", 1 << 21)]).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("the value of `t * t * t`"), "{m}");
        assert!(!m.contains("__"), "{m}");
        assert_eq!(e.span.line, 8, "{m}");
        let t = "program p(x: in f32[N], y: out f32[N]) {
          for i in 0..N {
            y[i] = x[(i * i * i + 1) % N] + x[(i * i * i + 1) % N / 2]
          }
        }";
        let e = check(t, &[("N", 1 << 21)]).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("`i * i * i`") && !m.contains("c0"), "{m}");
        assert_eq!(e.span.line, 3, "{m}");
        // The failing product uses the shared value: shown as its value.
        let t = "program p(x: in f32[N], y: out f32[N]) {
          for i in 0..N {
            y[i] = x[((i * i) * (i * i)) % N]
          }
        }";
        let e = check(t, &[("N", 1 << 21)]).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("`i * i * (i * i)`"), "{m}");
        assert_eq!(e.span.line, 3, "{m}");
    }

    #[test]
    fn a_wrapping_index_is_refused_like_the_interpreter_would() {
        let t = "program p(x: in f32[N], y: out f32[N]) {
          for i in 0..N { y[i + 9223372036854775807] = x[i] } }";
        let e = check(t, &[("N", 5)]).unwrap_err();
        assert!(e.to_string().contains("outside the box of `y`"), "{e}");
        assert_eq!(e.span.line, 2);
    }

    #[test]
    fn products_and_huge_sizes_are_refused() {
        let t = "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i * i * i] } }";
        check(t, &[("N", 1000)]).unwrap();
        let e = check(t, &[("N", 3_000_000)]).unwrap_err();
        assert!(e.to_string().contains("may reach"), "{e}");
        let e = check(t, &[("N", 1 << 62)]).unwrap_err();
        assert!(e.to_string().contains("size symbol `N`"), "{e}");
    }

    #[test]
    fn entry_checks_of_affine_indices_are_bounded() {
        // Each term is small enough, their sum at the extremes is not.
        let t = "program p(x: in f32[N], y: out f32[N]) {
          for i in 0..N { y[i] = x[2305843009213693952 * i - 2305843009213693952 * i] } }";
        assert!(check(t, &[("N", 3)]).is_err());
    }

    #[test]
    fn i32_loads_and_divisions_stay_bounded() {
        let t = "program p(ix: in i32[N], x: in f32[N], y: out f32[N]) {
          for i in 0..N { y[i] = x[ix[i] / (i - i)] } }";
        check(t, &[("N", 7)]).unwrap();
    }

    #[test]
    fn empty_integer_max_and_huge_bounds_are_refused() {
        // The kernels start an integer max at i64::MIN: an empty one is
        // that value, and `m - d` below would wrap.
        let t = "program p(x: in f32[N], y: out f32[N]) {
          for i in 0..N { m = max(j in i..i: j); y[i] = x[m - 5] } }";
        let e = check(t, &[("N", 4)]).unwrap_err();
        assert!(e.to_string().contains("-9223372036854775808"), "{e}");
        let t = "program p(x: in f32[N], y: out f32[N]) {
          for i in 0..N { m = max(j in 0..N: j); y[i] = x[m - i] } }";
        check(t, &[("N", 4)]).unwrap();
        // A loop stepping up to a bound near i64::MAX would wrap.
        let t = "program p(y: out f32[N]) {
          for i in 0..N { y[i] = sum(j in 9223372036854775800..9223372036854775807: 1.0) } }";
        let e = check(t, &[("N", 4)]).unwrap_err();
        assert!(e.to_string().contains("a bound of `j`"), "{e}");
    }

    #[test]
    fn thirty_two_bit_kernels_get_a_narrower_proof() {
        let within = |text: &str, sizes: &[(&str, i64)], bits| {
            let p = tile_ir::parse_program(text).unwrap();
            let plan = crate::compile(&p, &crate::Options::default()).unwrap();
            let s: Sizes = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            check_ranges_within(&plan, &s, bits).map(|_| ())
        };
        let copy = "program p(x: in i32[N], y: out i32[N]) { for i in 0..N { y[i] = x[i] } }";
        within(copy, &[("N", 1000)], 30).unwrap();
        let e = within(copy, &[("N", 1 << 31)], 30).unwrap_err();
        assert!(e.to_string().contains("2^30"), "{e}");
        within(copy, &[("N", 1 << 31)], 62).unwrap();
        // Arithmetic on a loaded i32 may leave 32 bits (the interpreter
        // computes it in 64).
        let add = "program p(x: in i32[N], y: out i32[N]) { for i in 0..N { y[i] = x[i] + 1 } }";
        let e = within(add, &[("N", 8)], 30).unwrap_err();
        assert!(e.to_string().contains("beyond the 2^30"), "{e}");
        within(add, &[("N", 8)], 62).unwrap();
        // A loaded value bound to a name and stored is no more
        // arithmetic than the load itself (simplification binds repeated
        // loads).
        let twice = "program p(x: in i32[N], y: out i32[N], z: out i32[N]) { for i in 0..N { y[i] = x[i]\n z[i] = x[i] } }";
        within(twice, &[("N", 8)], 30).unwrap();
        // A box's extent is computed in the kernel: each step of it too.
        let quarter =
            "program p(x: in f32[N * M / 4], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }";
        let e = within(quarter, &[("N", 50000), ("M", 50000)], 30).unwrap_err();
        assert!(e.to_string().contains("N * M"), "{e}");
        within(quarter, &[("N", 50000), ("M", 50000)], 62).unwrap();
        // A gather's index computes nothing: checked as it is against a
        // box from 0, whatever it holds; clamped or converted values too.
        let gather = "program p(x: in f32[N], k: in i32[N], y: out f32[N]) { for i in 0..N { y[i] = x[k[i]] } }";
        within(gather, &[("N", 8)], 30).unwrap();
        let binned = "program p(x: in f32[N], c: out i32[B]) { for n in 0..N { c[max(0, min(B - 1, i32(floor(x[n] * 4.0))))] = 1 } }";
        within(binned, &[("N", 8), ("B", 4)], 30).unwrap();
        // ... but not a sum on it, nor a box that starts elsewhere (its
        // check subtracts the start).
        let shifted = "program p(x: in f32[N], k: in i32[N], y: out f32[N]) { for i in 0..N { y[i] = x[k[i] - 1] } }";
        let e = within(shifted, &[("N", 8)], 30).unwrap_err();
        assert!(e.to_string().contains("index `k[i] - 1` may reach"), "{e}");
        let offset = "program p(x: in f32[-4..N], k: in i32[N], y: out f32[N]) { for i in 0..N { y[i] = x[k[i]] } }";
        let e = within(offset, &[("N", 8)], 30).unwrap_err();
        assert!(e.to_string().contains("outside the box of `x`"), "{e}");
    }
}
