//! The FP64 reference interpreter: runs a verified program in plain
//! sequential program order. Every back end is tested against it.
//!
//! All float arithmetic is done in `f64`; a store rounds to the buffer's
//! dtype (so an `f32` output holds the correctly rounded FP64 result), and
//! `f32(x)` rounds explicitly. Loads and stores are bounds-checked against
//! each parameter's box.

use crate::args::{bind_arrays, boxes, ArgError, Sizes};
use crate::{Array, BinOp, Expr, Func, Program, ReduceOp, Span, Stmt, UnOp};
use std::collections::BTreeMap;

/// A run-time value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// Any float (computed in FP64).
    F(f64),
    /// An integer.
    I(i64),
    /// A boolean.
    B(bool),
}

impl Value {
    /// The value as `f64` (booleans are 0 or 1).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::F(x) => x,
            Value::I(i) => i as f64,
            Value::B(b) => b as i64 as f64,
        }
    }

    fn as_int(self) -> Option<i64> {
        match self {
            Value::I(i) => Some(i),
            _ => None,
        }
    }

    fn as_bool(self) -> bool {
        match self {
            Value::B(b) => b,
            Value::I(i) => i != 0,
            Value::F(x) => x != 0.0,
        }
    }
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The arguments do not fit the program.
    #[error(transparent)]
    Args(#[from] ArgError),
    /// An index fell outside a parameter's box.
    #[error("{span}: index {index:?} is outside the box of `{buf}` {bounds:?}")]
    OutOfBounds {
        /// The parameter.
        buf: String,
        /// The offending index.
        index: Vec<i64>,
        /// The box, `(lo, hi)` per dimension.
        bounds: Vec<(i64, i64)>,
        /// The statement.
        span: Span,
    },
    /// Integer division by zero or overflow.
    #[error("{span}: integer division by zero or overflow (`/` or `%`)")]
    IntArith {
        /// The statement.
        span: Span,
    },
    /// The run would need more memory or work than Tile allows.
    #[error("{0}")]
    TooLarge(String),
    /// A name had no value (the program was not verified).
    #[error("{span}: `{name}` has no value here (was the program verified?)")]
    Unbound {
        /// The name.
        name: String,
        /// The statement.
        span: Span,
    },
}

/// Visible names and their values, innermost last.
#[derive(Clone, Debug, Default)]
pub struct Env {
    vars: Vec<(String, Value)>,
}

impl Env {
    /// An environment holding the size symbols.
    pub fn new(sizes: &Sizes) -> Env {
        Env {
            vars: sizes
                .iter()
                .map(|(k, v)| (k.clone(), Value::I(*v)))
                .collect(),
        }
    }

    /// Binds `name` (shadowing any outer one).
    pub fn push(&mut self, name: &str, v: Value) {
        self.vars.push((name.to_string(), v));
    }

    /// Number of bindings, to restore a scope with [`Env::truncate`].
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// True when nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// Drops bindings made after `len`.
    pub fn truncate(&mut self, len: usize) {
        self.vars.truncate(len);
    }

    fn get(&self, name: &str) -> Option<Value> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

/// A program with its argument arrays, ready to execute statements.
#[derive(Debug)]
pub struct Machine<'p> {
    _program: &'p Program,
    sizes: Sizes,
    boxes: BTreeMap<String, Vec<(i64, i64)>>,
    /// Every parameter's storage, by name.
    pub arrays: BTreeMap<String, Array>,
}

/// Runs `program` over `arrays` (one per parameter; written ones are
/// updated in place), binding size symbols from shapes and `explicit`.
pub fn interpret(
    program: &Program,
    arrays: &mut BTreeMap<String, Array>,
    explicit: &Sizes,
) -> Result<(), RunError> {
    let sizes = bind_arrays(program, arrays, explicit)?;
    let mut m = Machine::new(program, sizes, std::mem::take(arrays))?;
    let mut env = Env::new(&m.sizes);
    let r = m.exec(&program.body, &mut env);
    *arrays = m.arrays;
    r
}

impl<'p> Machine<'p> {
    /// A machine over `arrays`, which must already fit `sizes`.
    pub fn new(
        program: &'p Program,
        sizes: Sizes,
        arrays: BTreeMap<String, Array>,
    ) -> Result<Self, RunError> {
        let boxes = boxes(program, &sizes)?;
        Ok(Machine {
            _program: program,
            sizes,
            boxes,
            arrays,
        })
    }

    /// The bound size symbols.
    pub fn sizes(&self) -> &Sizes {
        &self.sizes
    }

    /// Executes `stmts` in order; bindings they make are dropped at the end.
    pub fn exec(&mut self, stmts: &[Stmt], env: &mut Env) -> Result<(), RunError> {
        let depth = env.len();
        for s in stmts {
            self.stmt(s, env)?;
        }
        env.truncate(depth);
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, env: &mut Env) -> Result<(), RunError> {
        match s {
            Stmt::For { vars, body, span } => self.nest(vars, 0, body, env, *span),
            Stmt::Let { name, value, span } => {
                let v = self.eval(value, env, *span)?;
                env.push(name, v);
                Ok(())
            }
            Stmt::Store {
                buf,
                idx,
                value,
                span,
                ..
            } => {
                let v = self.eval(value, env, *span)?;
                let flat = self.flat_index(buf, idx, env, *span)?;
                let a = self.arrays.get_mut(buf).ok_or_else(|| RunError::Unbound {
                    name: buf.clone(),
                    span: *span,
                })?;
                a.set_f64(flat, v.as_f64());
                Ok(())
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                if self.eval(cond, env, *span)?.as_bool() {
                    self.exec(then, env)
                } else {
                    self.exec(els, env)
                }
            }
        }
    }

    fn nest(
        &mut self,
        vars: &[crate::LoopVar],
        k: usize,
        body: &[Stmt],
        env: &mut Env,
        span: Span,
    ) -> Result<(), RunError> {
        let Some(lv) = vars.get(k) else {
            return self.exec(body, env);
        };
        let lo = self.int(&lv.lo, env, span)?;
        let hi = self.int(&lv.hi, env, span)?;
        for i in lo..hi {
            let depth = env.len();
            env.push(&lv.name, Value::I(i));
            self.nest(vars, k + 1, body, env, span)?;
            env.truncate(depth);
        }
        Ok(())
    }

    /// Evaluates an integer expression (a bound or an index).
    pub fn int(&self, e: &Expr, env: &Env, span: Span) -> Result<i64, RunError> {
        match self.eval(e, env, span)? {
            Value::I(i) => Ok(i),
            Value::F(x) => Ok(x as i64),
            Value::B(b) => Ok(b as i64),
        }
    }

    fn flat_index(
        &self,
        buf: &str,
        idx: &[Expr],
        env: &Env,
        span: Span,
    ) -> Result<usize, RunError> {
        let bounds = self.boxes.get(buf).ok_or_else(|| RunError::Unbound {
            name: buf.to_string(),
            span,
        })?;
        let index = idx
            .iter()
            .map(|e| self.int(e, env, span))
            .collect::<Result<Vec<_>, _>>()?;
        let mut flat: i64 = 0;
        for (&i, &(lo, hi)) in index.iter().zip(bounds) {
            if i < lo || i >= hi {
                return Err(RunError::OutOfBounds {
                    buf: buf.to_string(),
                    index,
                    bounds: bounds.clone(),
                    span,
                });
            }
            flat = flat * (hi - lo) + (i - lo);
        }
        Ok(flat as usize)
    }

    /// Evaluates `e` in `env`.
    pub fn eval(&self, e: &Expr, env: &Env, span: Span) -> Result<Value, RunError> {
        Ok(match e {
            Expr::Float(x) => Value::F(*x),
            Expr::Int(i) => Value::I(*i),
            Expr::Bool(b) => Value::B(*b),
            Expr::Var(n) => env.get(n).ok_or_else(|| RunError::Unbound {
                name: n.clone(),
                span,
            })?,
            Expr::Load { buf, idx, .. } => {
                let flat = self.flat_index(buf, idx, env, span)?;
                let a = &self.arrays[buf];
                match a.dtype() {
                    crate::DType::F32 | crate::DType::F64 => Value::F(a.get_f64(flat)),
                    crate::DType::I32 => Value::I(a.get_f64(flat) as i64),
                    crate::DType::Bool => Value::B(a.get_f64(flat) != 0.0),
                }
            }
            Expr::Unary(UnOp::Neg, a) => match self.eval(a, env, span)? {
                Value::I(i) => Value::I(i.checked_neg().ok_or(RunError::IntArith { span })?),
                v => Value::F(-v.as_f64()),
            },
            Expr::Unary(UnOp::Not, a) => Value::B(!self.eval(a, env, span)?.as_bool()),
            Expr::Binary(op, a, b, _) => {
                let x = self.eval(a, env, span)?;
                if matches!(op, BinOp::And | BinOp::Or) {
                    let y = self.eval(b, env, span)?;
                    return Ok(Value::B(if *op == BinOp::And {
                        x.as_bool() && y.as_bool()
                    } else {
                        x.as_bool() || y.as_bool()
                    }));
                }
                let y = self.eval(b, env, span)?;
                binary(*op, x, y).ok_or(RunError::IntArith { span })?
            }
            Expr::Call(f, args) => {
                let vals = args
                    .iter()
                    .map(|a| self.eval(a, env, span))
                    .collect::<Result<Vec<_>, _>>()?;
                call(*f, &vals).ok_or(RunError::IntArith { span })?
            }
            Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => {
                let (lo, hi) = (self.int(lo, env, span)?, self.int(hi, env, span)?);
                let mut acc = match op {
                    ReduceOp::Sum => Value::F(0.0),
                    ReduceOp::Max => Value::F(f64::NEG_INFINITY),
                    ReduceOp::Min => Value::F(f64::INFINITY),
                };
                let mut inner = env.clone();
                for i in lo..hi {
                    let depth = inner.len();
                    inner.push(var, Value::I(i));
                    let v = self.eval(body, &inner, span)?;
                    inner.truncate(depth);
                    acc = if i == lo {
                        v
                    } else {
                        match op {
                            ReduceOp::Sum => {
                                binary(BinOp::Add, acc, v).ok_or(RunError::IntArith { span })?
                            }
                            ReduceOp::Max => {
                                call(Func::Max, &[acc, v]).ok_or(RunError::IntArith { span })?
                            }
                            ReduceOp::Min => {
                                call(Func::Min, &[acc, v]).ok_or(RunError::IntArith { span })?
                            }
                        }
                    };
                }
                acc
            }
        })
    }
}

/// `x op y`; `None` on integer division by zero or overflow.
fn binary(op: BinOp, x: Value, y: Value) -> Option<Value> {
    if let (Some(a), Some(b)) = (x.as_int(), y.as_int()) {
        return Some(match op {
            BinOp::Add => Value::I(a.checked_add(b)?),
            BinOp::Sub => Value::I(a.checked_sub(b)?),
            BinOp::Mul => Value::I(a.checked_mul(b)?),
            BinOp::Div => Value::I(a.checked_div(b)?),
            BinOp::Rem => Value::I(a.checked_rem(b)?),
            BinOp::Lt => Value::B(a < b),
            BinOp::Le => Value::B(a <= b),
            BinOp::Gt => Value::B(a > b),
            BinOp::Ge => Value::B(a >= b),
            BinOp::Eq => Value::B(a == b),
            BinOp::Ne => Value::B(a != b),
            BinOp::And => Value::B(a != 0 && b != 0),
            BinOp::Or => Value::B(a != 0 || b != 0),
        });
    }
    let (a, b) = (x.as_f64(), y.as_f64());
    Some(match op {
        BinOp::Add => Value::F(a + b),
        BinOp::Sub => Value::F(a - b),
        BinOp::Mul => Value::F(a * b),
        BinOp::Div => Value::F(a / b),
        // The verifier admits `%` on integers only.
        BinOp::Rem => return None,
        BinOp::Lt => Value::B(a < b),
        BinOp::Le => Value::B(a <= b),
        BinOp::Gt => Value::B(a > b),
        BinOp::Ge => Value::B(a >= b),
        BinOp::Eq => Value::B(a == b),
        BinOp::Ne => Value::B(a != b),
        BinOp::And => Value::B(x.as_bool() && y.as_bool()),
        BinOp::Or => Value::B(x.as_bool() || y.as_bool()),
    })
}

/// Applies a built-in function in FP64.
fn call(f: Func, v: &[Value]) -> Option<Value> {
    let int_args = v.iter().all(|x| matches!(x, Value::I(_)));
    let x = v.first().map_or(0.0, |a| a.as_f64());
    let y = v.get(1).map_or(0.0, |a| a.as_f64());
    Some(Value::F(match f {
        Func::Abs if int_args => return Some(Value::I(v[0].as_int()?.checked_abs()?)),
        Func::Min if int_args => return Some(Value::I(v[0].as_int()?.min(v[1].as_int()?))),
        Func::Max if int_args => return Some(Value::I(v[0].as_int()?.max(v[1].as_int()?))),
        Func::Abs => x.abs(),
        Func::Min => x.min(y),
        Func::Max => x.max(y),
        Func::Exp => x.exp(),
        Func::Exp2 => x.exp2(),
        Func::Log => x.ln(),
        Func::Log2 => x.log2(),
        Func::Log1p => x.ln_1p(),
        Func::Expm1 => x.exp_m1(),
        Func::Sqrt => x.sqrt(),
        Func::Rsqrt => 1.0 / x.sqrt(),
        Func::Tanh => x.tanh(),
        Func::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Func::Erf => libm::erf(x),
        Func::Sin => x.sin(),
        Func::Cos => x.cos(),
        Func::Floor => x.floor(),
        Func::Ceil => x.ceil(),
        Func::Pow => x.powf(y),
        Func::Fma => x.mul_add(y, v[2].as_f64()),
        Func::Select => return Some(if v[0].as_bool() { v[1] } else { v[2] }),
        // One rounding from an integer, as C's `(float)` of an int64.
        Func::Cast(crate::DType::F32) => match v[0] {
            Value::I(i) => i as f32 as f64,
            _ => x as f32 as f64,
        },
        Func::Cast(crate::DType::F64) => x,
        Func::Cast(crate::DType::I32) => return Some(Value::I(x.trunc() as i32 as i64)),
        Func::Cast(crate::DType::Bool) => return Some(Value::B(x != 0.0)),
    }))
}
