//! A Rust API for capturing programs without writing `.tile` text.
//!
//! The builder produces the same [`Program`] the parser would for the
//! equivalent text; see the crate documentation for an example.

use crate::{
    BinOp, DType, Dim, Expr, Func, LoopVar, Param, Program, ReduceOp, Role, Span, Stmt, UnOp,
};
use std::ops;

/// A handle on a declared parameter.
#[derive(Clone, Debug)]
pub struct ParamRef {
    name: String,
}

impl ParamRef {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A load `name[idx...]`.
    pub fn at(&self, idx: &[Expr]) -> Expr {
        Expr::load(&self.name, idx.to_vec())
    }
}

/// Builds a statement list.
#[derive(Default, Debug)]
pub struct BlockBuilder {
    stmts: Vec<Stmt>,
}

impl BlockBuilder {
    /// `name = value`; returns `Var(name)` for later use.
    pub fn bind(&mut self, name: &str, value: Expr) -> Expr {
        self.stmts.push(Stmt::Let {
            name: name.to_string(),
            value,
            span: Span::default(),
        });
        v(name)
    }

    /// `buf[idx...] = value`.
    pub fn store(&mut self, buf: &ParamRef, idx: &[Expr], value: Expr) {
        self.stmts.push(Stmt::store(
            buf.name.clone(),
            idx.to_vec(),
            value,
            Span::default(),
        ));
    }

    /// `for v0 in 0..E0, v1 in 0..E1 { ... }` where each pair is
    /// `(variable, extent symbol or integer)`.
    pub fn for_each(&mut self, vars: &[(&str, &str)], body: impl FnOnce(&mut BlockBuilder)) {
        let vars = vars
            .iter()
            .map(|(n, e)| LoopVar {
                name: n.to_string(),
                lo: Expr::Int(0),
                hi: extent(e),
            })
            .collect();
        self.for_range(vars, body);
    }

    /// A `for` nest with explicit ranges.
    pub fn for_range(&mut self, vars: Vec<LoopVar>, body: impl FnOnce(&mut BlockBuilder)) {
        let mut inner = BlockBuilder::default();
        body(&mut inner);
        self.stmts.push(Stmt::For {
            vars,
            body: inner.stmts,
            span: Span::default(),
        });
    }

    /// `if cond { then } else { els }`.
    pub fn if_else(
        &mut self,
        cond: Expr,
        then: impl FnOnce(&mut BlockBuilder),
        els: impl FnOnce(&mut BlockBuilder),
    ) {
        let mut t = BlockBuilder::default();
        then(&mut t);
        let mut e = BlockBuilder::default();
        els(&mut e);
        self.stmts.push(Stmt::If {
            cond,
            then: t.stmts,
            els: e.stmts,
            span: Span::default(),
        });
    }
}

/// Builds a [`Program`].
#[derive(Debug)]
pub struct ProgramBuilder {
    name: String,
    params: Vec<Param>,
    body: BlockBuilder,
}

impl ProgramBuilder {
    /// A new, empty program.
    pub fn new(name: &str) -> Self {
        ProgramBuilder {
            name: name.to_string(),
            params: Vec::new(),
            body: BlockBuilder::default(),
        }
    }

    /// Declares a parameter whose box is `0..E` per dimension, each `E` a
    /// size symbol or an integer.
    pub fn param(&mut self, name: &str, role: Role, dtype: DType, extents: &[&str]) -> ParamRef {
        let dims = extents.iter().map(|e| Dim::extent(extent(e))).collect();
        self.param_box(name, role, dtype, dims)
    }

    /// Declares a parameter with an explicit box.
    pub fn param_box(&mut self, name: &str, role: Role, dtype: DType, dims: Vec<Dim>) -> ParamRef {
        self.params.push(Param {
            name: name.to_string(),
            role,
            dtype,
            dims,
            span: Span::default(),
        });
        ParamRef {
            name: name.to_string(),
        }
    }

    /// The program's top-level block.
    pub fn body(&mut self) -> &mut BlockBuilder {
        &mut self.body
    }

    /// A top-level `for` nest; see [`BlockBuilder::for_each`].
    pub fn for_each(&mut self, vars: &[(&str, &str)], body: impl FnOnce(&mut BlockBuilder)) {
        self.body.for_each(vars, body);
    }

    /// The finished program.
    pub fn finish(self) -> Program {
        Program {
            name: self.name,
            params: self.params,
            body: self.body.stmts,
            span: Span::default(),
        }
    }
}

fn extent(e: &str) -> Expr {
    match e.parse::<i64>() {
        Ok(n) => Expr::Int(n),
        Err(_) => v(e),
    }
}

/// A named value (loop variable, binding or size symbol).
pub fn v(name: &str) -> Expr {
    Expr::var(name)
}

/// A float literal.
pub fn lit(x: f64) -> Expr {
    Expr::Float(x)
}

/// An integer literal.
pub fn int(x: i64) -> Expr {
    Expr::Int(x)
}

/// `sum(var in lo..hi: body)`, `max(...)`, `min(...)`.
pub fn reduce(op: ReduceOp, var: &str, lo: Expr, hi: Expr, body: Expr) -> Expr {
    Expr::Reduce {
        op,
        var: var.to_string(),
        lo: Box::new(lo),
        hi: Box::new(hi),
        body: Box::new(body),
    }
}

macro_rules! unary_fns {
    ($($name:ident => $f:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "(x)`.")]
        pub fn $name(x: Expr) -> Expr {
            Expr::Call($f, vec![x])
        }
    )*};
}

unary_fns! {
    abs => Func::Abs, exp => Func::Exp, exp2 => Func::Exp2, log => Func::Log,
    log2 => Func::Log2, log1p => Func::Log1p, expm1 => Func::Expm1, sqrt => Func::Sqrt, rsqrt => Func::Rsqrt, tanh => Func::Tanh,
    sigmoid => Func::Sigmoid, erf => Func::Erf, sin => Func::Sin, cos => Func::Cos,
    floor => Func::Floor, ceil => Func::Ceil,
}

/// `min(a, b)`.
pub fn min(a: Expr, b: Expr) -> Expr {
    Expr::Call(Func::Min, vec![a, b])
}

/// `max(a, b)`.
pub fn max(a: Expr, b: Expr) -> Expr {
    Expr::Call(Func::Max, vec![a, b])
}

/// `pow(a, b)`.
pub fn pow(a: Expr, b: Expr) -> Expr {
    Expr::Call(Func::Pow, vec![a, b])
}

/// `fma(a, b, c)`.
pub fn fma(a: Expr, b: Expr, c: Expr) -> Expr {
    Expr::Call(Func::Fma, vec![a, b, c])
}

/// `select(c, a, b)`.
pub fn select(c: Expr, a: Expr, b: Expr) -> Expr {
    Expr::Call(Func::Select, vec![c, a, b])
}

/// A comparison or logical operator, `a op b`.
pub fn cmp(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::binary(op, a, b)
}

macro_rules! binary_ops {
    ($($tr:ident $m:ident => $op:expr),*) => {$(
        impl ops::$tr for Expr {
            type Output = Expr;
            fn $m(self, rhs: Expr) -> Expr {
                Expr::binary($op, self, rhs)
            }
        }
    )*};
}

binary_ops!(Add add => BinOp::Add, Sub sub => BinOp::Sub, Mul mul => BinOp::Mul, Div div => BinOp::Div);

impl ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Unary(UnOp::Neg, Box::new(self))
    }
}
