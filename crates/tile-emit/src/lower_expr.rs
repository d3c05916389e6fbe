//! Expressions: typing with literal adaptation (as the verifier types them),
//! lane analysis (does a value vary across the vector's lanes?), and the
//! lowering of operators, calls and casts to scalar or vector code.

use crate::printer::{Printer, VTy, Val};
use tile_ir::{BinOp, DType, Expr, Func, NodeId, UnOp};

/// A static type where literals are still open (as in the verifier).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Ty {
    Known(VTy),
    FloatLit,
    IntLit,
}

fn unify(a: Ty, b: Ty) -> Ty {
    use Ty::*;
    match (a, b) {
        (Known(x), _) => Known(x),
        (_, Known(y)) => Known(y),
        (FloatLit, _) | (_, FloatLit) => FloatLit,
        (IntLit, IntLit) => IntLit,
    }
}

impl Printer<'_> {
    /// The program's float type (what a bare float literal is).
    pub(crate) fn float_ty(&self) -> VTy {
        VTy::of(self.program.float_type())
    }

    /// Resolves an open type: literals take `want` where it fits.
    pub(crate) fn resolve(&self, t: Ty, want: Option<VTy>) -> VTy {
        match t {
            Ty::Known(x) => x,
            Ty::FloatLit => want.filter(|w| w.is_float()).unwrap_or(self.float_ty()),
            Ty::IntLit => match want {
                Some(w) if w.is_float() || w == VTy::Int => w,
                _ => VTy::Int,
            },
        }
    }

    /// The static type of `e` in the current scope.
    pub(crate) fn ty(&self, e: &Expr) -> Ty {
        self.ty_in(e, &[])
    }

    fn ty_in(&self, e: &Expr, ints: &[&str]) -> Ty {
        match e {
            Expr::Float(_) => Ty::FloatLit,
            Expr::Int(_) => Ty::IntLit,
            Expr::Bool(_) => Ty::Known(VTy::Bool),
            Expr::Var(n) => {
                if ints.contains(&n.as_str()) {
                    Ty::Known(VTy::Int)
                } else {
                    Ty::Known(self.lookup(n).map_or(VTy::Int, |b| b.ty))
                }
            }
            Expr::Load { buf, .. } => {
                Ty::Known(self.param(buf).map_or(VTy::F32, |p| VTy::of(p.dtype)))
            }
            Expr::Unary(UnOp::Not, _) => Ty::Known(VTy::Bool),
            Expr::Unary(UnOp::Neg, a) => self.ty_in(a, ints),
            Expr::Binary(op, a, b, _) => {
                if op.is_comparison() || op.is_logical() {
                    Ty::Known(VTy::Bool)
                } else if *op == BinOp::Rem {
                    Ty::Known(VTy::Int)
                } else {
                    unify(self.ty_in(a, ints), self.ty_in(b, ints))
                }
            }
            Expr::Call(Func::Cast(t), _) => Ty::Known(VTy::of(*t)),
            Expr::Call(Func::Select, args) if args.len() == 3 => {
                unify(self.ty_in(&args[1], ints), self.ty_in(&args[2], ints))
            }
            Expr::Call(f, args) => {
                let t = args
                    .iter()
                    .map(|a| self.ty_in(a, ints))
                    .fold(Ty::IntLit, unify);
                match (f, t) {
                    (Func::Abs | Func::Min | Func::Max, t) => t,
                    (_, Ty::IntLit) => Ty::FloatLit,
                    (_, t) => t,
                }
            }
            Expr::Reduce { var, body, .. } => {
                let mut inner = ints.to_vec();
                inner.push(var);
                self.ty_in(body, &inner)
            }
        }
    }

    /// Whether evaluating `e` inline may stop the run: an integer `/` or
    /// `%` outside any reduction (reductions and loads print their checks
    /// as statements before the expression, so they run regardless).
    pub(crate) fn may_fail(&self, e: &Expr) -> bool {
        match e {
            Expr::Reduce { .. } => false,
            Expr::Binary(op @ (BinOp::Div | BinOp::Rem), a, b, _)
                if *op == BinOp::Rem
                    || matches!(
                        unify(self.ty(a), self.ty(b)),
                        Ty::IntLit | Ty::Known(VTy::Int)
                    ) =>
            {
                true
            }
            _ => e.children().into_iter().any(|c| self.may_fail(c)),
        }
    }

    /// Does `e` vary across the lanes of the current vector context?
    pub(crate) fn vary(&self, e: &Expr) -> bool {
        self.vec.is_some() && self.vary_in(e, &mut Vec::new())
    }

    /// True when some index of `idx` varies.
    pub(crate) fn vary_any(&self, idx: &[Expr]) -> bool {
        idx.iter().any(|e| self.vary(e))
    }

    fn vary_in(&self, e: &Expr, shadow: &mut Vec<String>) -> bool {
        match e {
            Expr::Var(n) => !shadow.contains(n) && self.name_vary(n),
            Expr::Reduce {
                var, lo, hi, body, ..
            } => {
                if self.vary_in(lo, shadow) || self.vary_in(hi, shadow) {
                    return true;
                }
                shadow.push(var.clone());
                let r = self.vary_in(body, shadow);
                shadow.pop();
                r
            }
            _ => e.children().into_iter().any(|c| self.vary_in(c, shadow)),
        }
    }

    /// Does the body of a reduction over `var` vary (with `var` itself
    /// uniform)?
    pub(crate) fn vary_without(&self, e: &Expr, var: &str) -> bool {
        self.vec.is_some() && self.vary_in(e, &mut vec![var.to_string()])
    }

    pub(crate) fn name_vary(&self, n: &str) -> bool {
        self.lookup(n).is_some_and(|b| b.vary)
    }

    // ---- conversions between shapes ----

    /// The value as a vector (splatting a scalar).
    pub(crate) fn splat_if_uniform(&mut self, v: Val) -> Val {
        if v.vary {
            return v;
        }
        let mw = if v.ty == VTy::Bool {
            self.mw_default
        } else {
            0
        };
        let sfx = Printer::suffix(v.ty, true, mw);
        let f = self.helper(format!("tile_splat_{sfx}"));
        Val::vec(format!("{f}({})", v.code), v.ty, mw)
    }

    /// A mask with `mw`-byte lanes.
    pub(crate) fn mask_width(&mut self, v: Val, mw: u8) -> Val {
        let v = if v.vary {
            v
        } else {
            let sfx = if mw == 8 { "vm8" } else { "vm4" };
            let f = self.helper(format!("tile_splat_{sfx}"));
            return Val::vec(format!("{f}({})", v.code), VTy::Bool, mw);
        };
        if v.mw == mw {
            return v;
        }
        let f = self.helper(format!("tile_m{}_to_m{}", v.mw, mw));
        Val::vec(format!("{f}({})", v.code), VTy::Bool, mw)
    }

    /// Splats the uniform operand of a mixed pair (literals stay scalars in
    /// arithmetic, which vector extensions broadcast).
    fn pair(&mut self, x: Val, y: Val, keep_lits: bool) -> (Val, Val, bool) {
        if !x.vary && !y.vary {
            return (x, y, false);
        }
        let splat = |v: &Val| !(v.vary || (keep_lits && v.lit));
        let x = if splat(&x) {
            self.splat_if_uniform(x)
        } else {
            x
        };
        let y = if splat(&y) {
            self.splat_if_uniform(y)
        } else {
            y
        };
        (x, y, true)
    }

    /// Stores `v` in a fresh temporary of `kind` unless it is already a
    /// name or literal.
    pub(crate) fn materialize(&mut self, v: Val, kind: &'static str) -> Val {
        let simple = v.lit
            || v.code
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if simple {
            return v;
        }
        let t = self.tmp(kind);
        let ty = self.type_of(&v);
        self.line(self.d.syntax.decl(ty, &t, &v.code));
        Val { code: t, ..v }
    }

    // ---- expressions ----

    /// Lowers `e`; literals take `want` where it fits.
    pub(crate) fn expr(&mut self, e: &Expr, want: Option<VTy>) -> Val {
        match e {
            Expr::Float(x) => {
                let t = self.resolve(Ty::FloatLit, want);
                Val::lit(self.float_lit(*x, t), t)
            }
            Expr::Int(i) => match want {
                Some(t) if t.is_float() => Val::lit(self.float_lit(*i as f64, t), t),
                _ => Val::lit(self.d.syntax.int_lit(*i), VTy::Int),
            },
            Expr::Bool(b) => Val::lit(if *b { "true" } else { "false" }.to_string(), VTy::Bool),
            Expr::Var(n) => match self.lookup(n) {
                Some(b) => Val {
                    code: b.code.clone(),
                    ty: b.ty,
                    vary: b.vary,
                    mw: b.mw,
                    lit: false,
                },
                None => {
                    self.error(format!(
                        "`{n}` has no value here (was the program verified?)"
                    ));
                    Val::lit("0".to_string(), VTy::Int)
                }
            },
            Expr::Load { buf, idx, id } => self.load(id, buf, idx),
            Expr::Unary(UnOp::Neg, a) => {
                let v = self.expr(a, want);
                Val {
                    code: format!("(-{})", v.code),
                    lit: false,
                    ..v
                }
            }
            Expr::Unary(UnOp::Not, a) => {
                let v = self.expr(a, Some(VTy::Bool));
                let code = if v.vary {
                    format!("(~{})", v.code)
                } else {
                    format!("(!{})", v.code)
                };
                Val {
                    code,
                    lit: false,
                    ..v
                }
            }
            Expr::Binary(op, a, b, id) => self.binary(id, *op, a, b, want),
            Expr::Call(f, args) => self.call(e, *f, args, want),
            Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => self.reduce(e, *op, var, lo, hi, body, want),
        }
    }

    fn binary(&mut self, node: &NodeId, op: BinOp, a: &Expr, b: &Expr, want: Option<VTy>) -> Val {
        if op.is_logical() {
            let x = self.expr(a, Some(VTy::Bool));
            let y = self.expr(b, Some(VTy::Bool));
            return self.bool_pair(x, y, op);
        }
        if op.is_comparison() {
            let t = self.resolve(unify(self.ty(a), self.ty(b)), None);
            let x = self.expr(a, Some(t));
            let y = self.expr(b, Some(t));
            if t == VTy::Bool {
                return self.bool_pair(x, y, op);
            }
            let (x, y, vary) = self.pair(x, y, false);
            if vary && t == VTy::Int {
                // Integer lanes are 64-bit: a vector of them may be wider
                // than the machine's, which compilers compare lane by lane
                // unless split (the helpers compare native-width pieces).
                let f = self.helper(format!("tile_{}_vi64", comparison_name(op)));
                return Val::vec(format!("{f}({}, {})", x.code, y.code), VTy::Bool, 8);
            }
            let code = format!("({} {} {})", x.code, op.symbol(), y.code);
            return if vary {
                let mw = t.mask_width();
                let mt = self.vector_type(VTy::Bool, mw);
                Val::vec(format!("(({mt}){code})"), VTy::Bool, mw)
            } else {
                Val::uni(code, VTy::Bool)
            };
        }
        let operands = unify(self.ty(a), self.ty(b));
        let t = if op == BinOp::Rem || (op == BinOp::Div && operands == Ty::IntLit) {
            // `%` is integer-only (the verifier's rule), literals included;
            // `/` of integer literals divides integers, as the interpreter
            // does, even where a float is wanted (folding left it because
            // it fails: `7 / 0`).
            VTy::Int
        } else {
            self.resolve(operands, want)
        };
        let x = self.expr(a, Some(t));
        let y = self.expr(b, Some(t));
        if t == VTy::Int && matches!(op, BinOp::Div | BinOp::Rem) {
            let q = self.int_div(node, x, y, op);
            return match want {
                Some(VTy::F32) => self.cast(q, tile_ir::DType::F32),
                Some(VTy::F64) => self.cast(q, tile_ir::DType::F64),
                _ => q,
            };
        }
        let lit = x.lit && y.lit;
        let (x, y, vary) = self.pair(x, y, true);
        let code = format!("({} {} {})", x.code, op.symbol(), y.code);
        if vary {
            Val::vec(code, t, 0)
        } else if lit {
            Val::lit(code, t)
        } else {
            Val::uni(code, t)
        }
    }

    /// A boolean operator on two booleans (masks when either varies).
    fn bool_pair(&mut self, x: Val, y: Val, op: BinOp) -> Val {
        if !x.vary && !y.vary {
            let sym = match op {
                BinOp::And => "&",
                BinOp::Or => "|",
                BinOp::Eq => "==",
                _ => "!=",
            };
            return Val::uni(format!("({} {sym} {})", x.code, y.code), VTy::Bool);
        }
        let mw = if x.vary { x.mw } else { y.mw };
        let x = self.mask_width(x, mw);
        let y = self.mask_width(y, mw);
        // Masks are all-ones or zero per lane, so every operator is bitwise.
        let code = match op {
            BinOp::And => format!("({} & {})", x.code, y.code),
            BinOp::Or => format!("({} | {})", x.code, y.code),
            BinOp::Eq => format!("(~({} ^ {}))", x.code, y.code),
            _ => format!("({} ^ {})", x.code, y.code),
        };
        Val::vec(code, VTy::Bool, mw)
    }

    /// Checked integer `/` or `%` (a zero divisor or overflow reports the
    /// site instead of trapping).
    fn int_div(&mut self, node: &NodeId, x: Val, y: Val, op: BinOp) -> Val {
        let id = self.site(node.get(), "", "div");
        let name = if op == BinOp::Rem { "irem" } else { "idiv" };
        if !x.vary && !y.vary {
            let f = self.helper(format!("tile_{name}_i64"));
            return Val::uni(format!("{f}({}, {}, err, {id})", x.code, y.code), VTy::Int);
        }
        let x = self.splat_if_uniform(x);
        let mut y = self.splat_if_uniform(y);
        if let Some(m) = self.mask.clone() {
            // Inactive lanes divide by one: they must not report an error.
            let m8 = self.mask_width(Val::vec(m.code, VTy::Bool, m.mw), 8);
            let sel = self.helper("tile_sel_vi64".to_string());
            let one = self.helper("tile_splat_vi64".to_string());
            y = Val::vec(
                format!("{sel}({}, {}, {one}(1))", m8.code, y.code),
                VTy::Int,
                0,
            );
        }
        let f = self.helper(format!("tile_{name}_vi64"));
        Val::vec(
            format!("{f}({}, {}, err, {id})", x.code, y.code),
            VTy::Int,
            0,
        )
    }

    fn call(&mut self, node: &Expr, f: Func, args: &[Expr], want: Option<VTy>) -> Val {
        if args.len() != f.arity() {
            self.error(format!("`{}` takes {} arguments", f.name(), f.arity()));
            return Val::lit("0".to_string(), VTy::Int);
        }
        match f {
            Func::Cast(to) => {
                let from = self.resolve(self.ty(&args[0]), None);
                let x = self.expr(&args[0], Some(from));
                self.cast(x, to)
            }
            Func::Select => {
                let c = self.expr(&args[0], Some(VTy::Bool));
                let t = self.resolve(unify(self.ty(&args[1]), self.ty(&args[2])), want);
                let a = self.expr(&args[1], Some(t));
                let b = self.expr(&args[2], Some(t));
                if !c.vary {
                    // Both operands are evaluated, as the interpreter
                    // does: C's `?:` would skip a failing division in the
                    // one not chosen.
                    let a = if self.may_fail(&args[1]) {
                        self.materialize(a, "alu")
                    } else {
                        a
                    };
                    let b = if self.may_fail(&args[2]) {
                        self.materialize(b, "alu")
                    } else {
                        b
                    };
                    // Two masks of different widths (an `f32` and an `f64`
                    // or integer comparison) meet at one width.
                    let (a, b) = if t == VTy::Bool && (a.vary || b.vary) {
                        let mw = if a.vary { a.mw } else { b.mw };
                        (self.mask_width(a, mw), self.mask_width(b, mw))
                    } else {
                        (a, b)
                    };
                    let (a, b, vary) = self.pair(a, b, false);
                    let code = format!("({})", self.d.syntax.select(&c.code, &a.code, &b.code));
                    return if vary {
                        Val::vec(code, t, a.mw.max(b.mw))
                    } else {
                        Val::uni(code, t)
                    };
                }
                let mw = if t == VTy::Bool { c.mw } else { t.mask_width() };
                let m = self.mask_width(c, mw);
                let a = if t == VTy::Bool {
                    self.mask_width(a, mw)
                } else {
                    self.splat_if_uniform(a)
                };
                let b = if t == VTy::Bool {
                    self.mask_width(b, mw)
                } else {
                    self.splat_if_uniform(b)
                };
                let sfx = Printer::suffix(t, true, mw);
                let h = self.helper(format!("tile_sel_{sfx}"));
                Val::vec(
                    format!("{h}({}, {}, {})", m.code, a.code, b.code),
                    t,
                    if t == VTy::Bool { mw } else { 0 },
                )
            }
            _ => {
                let open = args.iter().map(|a| self.ty(a)).fold(Ty::IntLit, unify);
                let t = match (f, open) {
                    (Func::Abs | Func::Min | Func::Max, Ty::IntLit) => match want {
                        Some(w) if w.is_float() => w,
                        _ => VTy::Int,
                    },
                    (Func::Abs | Func::Min | Func::Max, o) => self.resolve(o, want),
                    (_, Ty::IntLit) => self.resolve(Ty::FloatLit, want),
                    (_, o) => self.resolve(o, want),
                };
                if t == VTy::Bool
                    || (t == VTy::Int && !matches!(f, Func::Abs | Func::Min | Func::Max))
                {
                    self.error(format!("`{}` of a {t:?} value", f.name()));
                }
                let vals: Vec<Val> = args.iter().map(|a| self.expr(a, Some(t))).collect();
                let vary = vals.iter().any(|v| v.vary);
                let vals: Vec<Val> = if vary {
                    vals.into_iter().map(|v| self.splat_if_uniform(v)).collect()
                } else {
                    vals
                };
                let _ = node;
                let sfx = Printer::suffix(t, vary, 0);
                let pattern = if vary {
                    self.d.math_vector
                } else {
                    self.d.math_scalar
                };
                let name = pattern.replace("{f}", f.name()).replace("{t}", sfx);
                let h = self.helper(name);
                let list: Vec<&str> = vals.iter().map(|v| v.code.as_str()).collect();
                let code = format!("{h}({})", list.join(", "));
                if vary {
                    Val::vec(code, t, 0)
                } else {
                    Val::uni(code, t)
                }
            }
        }
    }

    /// Converts `x` to the IR type `to` the way the interpreter does:
    /// floats round, `i32` truncates toward zero and saturates (NaN is 0),
    /// `bool` is `x != 0`.
    pub(crate) fn cast(&mut self, x: Val, to: DType) -> Val {
        let to_t = VTy::of(to);
        if x.ty == VTy::Bool {
            self.error(format!("cannot convert bool with `{}`", to.name()));
            return x;
        }
        match to_t {
            VTy::Bool => {
                let zero = Val::lit(
                    if x.ty.is_float() {
                        self.float_lit(0.0, x.ty)
                    } else {
                        "0".to_string()
                    },
                    x.ty,
                );
                let (a, z, vary) = self.pair(x.clone(), zero, false);
                let code = format!("({} != {})", a.code, z.code);
                if vary {
                    let mw = x.ty.mask_width();
                    let mt = self.vector_type(VTy::Bool, mw);
                    Val::vec(format!("(({mt}){code})"), VTy::Bool, mw)
                } else {
                    Val::uni(code, VTy::Bool)
                }
            }
            VTy::Int => {
                let sfx = Printer::suffix(x.ty, x.vary, 0);
                let h = if x.ty == VTy::Int {
                    self.helper(format!("tile_clampi_{sfx}"))
                } else {
                    self.helper(format!("tile_f2i_{sfx}"))
                };
                Val {
                    code: format!("{h}({})", x.code),
                    ty: VTy::Int,
                    lit: false,
                    mw: 0,
                    vary: x.vary,
                }
            }
            t => {
                if x.ty == t {
                    return x;
                }
                let code = if x.vary {
                    let vt = self.vector_type(t, 0);
                    self.d.convert.replace("{x}", &x.code).replace("{t}", vt)
                } else {
                    format!("({})", self.d.syntax.cast(self.scalar_type(t), &x.code))
                };
                Val {
                    code,
                    ty: t,
                    lit: false,
                    mw: 0,
                    vary: x.vary,
                }
            }
        }
    }
}

/// The helper-name part of a comparison (`lt` for `<`).
fn comparison_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
        BinOp::Eq => "eq",
        _ => "ne",
    }
}
