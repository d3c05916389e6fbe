//! Expressions: literals, names, loads, operators, calls and reductions.
//!
//! Expressions are trees; sharing is expressed by bindings (`name = expr`) in
//! the statement list, so a program after `share_common_values` is a DAG
//! written as text. Expressions have no side effects; a load reads the buffer
//! as it is at the point of the statement that evaluates it.

use crate::NodeId;

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation (`-x`, `neg(x)`).
    Neg,
    /// Boolean not (`!c`).
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division truncates toward zero).
    Div,
    /// `%`: integer remainder of the truncating division (the sign of
    /// the dividend, as in C); integers only.
    Rem,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// The operator's spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// Binding strength: higher binds tighter.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => 3,
            BinOp::Add | BinOp::Sub => 4,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 5,
        }
    }

    /// True for the six comparisons.
    pub fn is_comparison(self) -> bool {
        self.precedence() == 3
    }

    /// True for `&&` and `||`.
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

/// Built-in functions callable as `name(args)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    /// `abs(x)`
    Abs,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
    /// `exp(x)`
    Exp,
    /// `exp2(x)`
    Exp2,
    /// `log(x)`
    Log,
    /// `log2(x)`
    Log2,
    /// `log1p(x)` = log(1 + x), accurate for small `x`
    Log1p,
    /// `expm1(x)` = exp(x) - 1, accurate for small `x`
    Expm1,
    /// `sqrt(x)`
    Sqrt,
    /// `rsqrt(x)` = 1/sqrt(x)
    Rsqrt,
    /// `tanh(x)`
    Tanh,
    /// `sigmoid(x)` = 1/(1+exp(-x))
    Sigmoid,
    /// `erf(x)`
    Erf,
    /// `sin(x)`
    Sin,
    /// `cos(x)`
    Cos,
    /// `floor(x)`
    Floor,
    /// `ceil(x)`
    Ceil,
    /// `pow(x, y)`
    Pow,
    /// `fma(a, b, c)` = a*b+c with one rounding
    Fma,
    /// `select(c, a, b)`: a where c holds, else b
    Select,
    /// `f32(x)`, `f64(x)`, `i32(x)`: conversions
    Cast(crate::DType),
}

impl Func {
    /// Every function, for parsers and generators.
    pub const ALL: [Func; 24] = [
        Func::Abs,
        Func::Min,
        Func::Max,
        Func::Exp,
        Func::Exp2,
        Func::Log,
        Func::Log2,
        Func::Log1p,
        Func::Expm1,
        Func::Sqrt,
        Func::Rsqrt,
        Func::Tanh,
        Func::Sigmoid,
        Func::Erf,
        Func::Sin,
        Func::Cos,
        Func::Floor,
        Func::Ceil,
        Func::Pow,
        Func::Fma,
        Func::Select,
        Func::Cast(crate::DType::F32),
        Func::Cast(crate::DType::F64),
        Func::Cast(crate::DType::I32),
    ];

    /// The name used in `.tile` text.
    pub fn name(self) -> &'static str {
        match self {
            Func::Abs => "abs",
            Func::Min => "min",
            Func::Max => "max",
            Func::Exp => "exp",
            Func::Exp2 => "exp2",
            Func::Log => "log",
            Func::Log2 => "log2",
            Func::Log1p => "log1p",
            Func::Expm1 => "expm1",
            Func::Sqrt => "sqrt",
            Func::Rsqrt => "rsqrt",
            Func::Tanh => "tanh",
            Func::Sigmoid => "sigmoid",
            Func::Erf => "erf",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Pow => "pow",
            Func::Fma => "fma",
            Func::Select => "select",
            Func::Cast(t) => t.name(),
        }
    }

    /// Looks a function up by its `.tile` name (`neg` is a unary operator).
    pub fn from_name(s: &str) -> Option<Func> {
        Func::ALL.iter().copied().find(|f| f.name() == s)
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max | Func::Pow => 2,
            Func::Fma | Func::Select => 3,
            _ => 1,
        }
    }
}

/// Reduction operators over an inner range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (0 over an empty range).
    Sum,
    /// Maximum (-inf over an empty range).
    Max,
    /// Minimum (+inf over an empty range).
    Min,
}

impl ReduceOp {
    /// The name used in `.tile` text.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// An expression tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A floating literal; it takes the float type of its context.
    Float(f64),
    /// An integer literal (an index, or a float where a float is expected).
    Int(i64),
    /// `true` / `false`.
    Bool(bool),
    /// A loop variable, binding or size symbol.
    Var(String),
    /// `buf[i, j]`.
    Load {
        /// Parameter read.
        buf: String,
        /// One index per dimension of the buffer's box.
        idx: Vec<Expr>,
        /// The node's identity (its failure site in generated code).
        id: NodeId,
    },
    /// `-x`, `!c`.
    Unary(UnOp, Box<Expr>),
    /// `a op b`, with the node's identity (the failure site of an integer
    /// `/` or `%` in generated code).
    Binary(BinOp, Box<Expr>, Box<Expr>, NodeId),
    /// `f(args)`.
    Call(Func, Vec<Expr>),
    /// `sum(v in lo..hi: body)` and friends.
    Reduce {
        /// The operator.
        op: ReduceOp,
        /// The reduction variable (an `i32`, scoped to `body`).
        var: String,
        /// Inclusive start.
        lo: Box<Expr>,
        /// Exclusive end.
        hi: Box<Expr>,
        /// The reduced expression.
        body: Box<Expr>,
    },
}

impl Expr {
    /// A named value.
    pub fn var(name: &str) -> Expr {
        Expr::Var(name.to_string())
    }

    /// `buf[idx...]`.
    pub fn load(buf: &str, idx: Vec<Expr>) -> Expr {
        Expr::Load {
            buf: buf.to_string(),
            idx,
            id: NodeId::fresh(),
        }
    }

    /// `a op b`.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b), NodeId::fresh())
    }

    /// `f(args)`.
    pub fn call(f: Func, args: Vec<Expr>) -> Expr {
        Expr::Call(f, args)
    }

    /// Direct sub-expressions, in evaluation order.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_) => vec![],
            Expr::Load { idx, .. } => idx.iter().collect(),
            Expr::Unary(_, a) => vec![a],
            Expr::Binary(_, a, b, _) => vec![a, b],
            Expr::Call(_, args) => args.iter().collect(),
            Expr::Reduce { lo, hi, body, .. } => vec![lo, hi, body],
        }
    }

    /// Direct sub-expressions, mutably.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_) => vec![],
            Expr::Load { idx, .. } => idx.iter_mut().collect(),
            Expr::Unary(_, a) => vec![a],
            Expr::Binary(_, a, b, _) => vec![a, b],
            Expr::Call(_, args) => args.iter_mut().collect(),
            Expr::Reduce { lo, hi, body, .. } => vec![lo, hi, body],
        }
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        for c in self.children() {
            c.walk(f);
        }
    }

    /// Names of every buffer this expression loads from.
    pub fn loaded_buffers(&self, out: &mut Vec<String>) {
        self.walk(&mut |e| {
            if let Expr::Load { buf, .. } = e {
                if !out.contains(buf) {
                    out.push(buf.clone());
                }
            }
        });
    }

    /// Free variable names (reduction variables are bound inside their body).
    pub fn free_vars(&self, out: &mut Vec<String>) {
        match self {
            Expr::Var(n) => {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
            Expr::Reduce {
                var, lo, hi, body, ..
            } => {
                lo.free_vars(out);
                hi.free_vars(out);
                let mut inner = Vec::new();
                body.free_vars(&mut inner);
                for n in inner {
                    if &n != var && !out.contains(&n) {
                        out.push(n);
                    }
                }
            }
            _ => {
                for c in self.children() {
                    c.free_vars(out);
                }
            }
        }
    }

    /// True when the expression contains a reduction.
    pub fn has_reduction(&self) -> bool {
        let mut found = false;
        self.walk(&mut |e| found |= matches!(e, Expr::Reduce { .. }));
        found
    }

    /// Replaces every free occurrence of `Var(from)` by `to`.
    pub fn substitute(&mut self, from: &str, to: &Expr) {
        match self {
            Expr::Var(n) if n == from => *self = to.clone(),
            Expr::Reduce {
                var, lo, hi, body, ..
            } => {
                lo.substitute(from, to);
                hi.substitute(from, to);
                if var != from {
                    body.substitute(from, to);
                }
            }
            _ => {
                for c in self.children_mut() {
                    c.substitute(from, to);
                }
            }
        }
    }

    /// Replaces every free occurrence of each name in `map` by its
    /// expression, in one walk (a reduction's variable shadows the map's
    /// entry of the same name in its body).
    pub fn substitute_all(&mut self, map: &std::collections::HashMap<String, Expr>) {
        match self {
            Expr::Var(n) => {
                if let Some(to) = map.get(n.as_str()) {
                    *self = to.clone();
                }
            }
            Expr::Reduce {
                var, lo, hi, body, ..
            } => {
                lo.substitute_all(map);
                hi.substitute_all(map);
                if map.contains_key(var.as_str()) {
                    let mut inner = map.clone();
                    inner.remove(var.as_str());
                    body.substitute_all(&inner);
                } else {
                    body.substitute_all(map);
                }
            }
            _ => {
                for c in self.children_mut() {
                    c.substitute_all(map);
                }
            }
        }
    }
}
