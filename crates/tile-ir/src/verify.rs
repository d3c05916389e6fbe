//! The verifier: every problem in a program, each with its location.
//!
//! First, without recursion (so a program built in Rust of any depth is
//! safe to check): statements and expressions nest at most
//! [`MAX_DEPTH`] levels, every operator counting, the program holds at
//! most [`MAX_NODES`] expression nodes, and no name starts with the
//! reserved prefix of generated names. Then, in one walk over the program:
//! - parameter names are unique, boxes use only size symbols and integers;
//! - every name is defined before use (parameters are only loaded or
//!   stored, never used as values; size symbols, loop variables and bindings
//!   are values);
//! - no binding or loop variable rebinds a name that is visible (including
//!   parameters and size symbols): bindings are single assignment;
//! - stores target `out` or `inout` parameters;
//! - every load and store has one index per dimension of the box;
//! - types agree: indices and bounds are `i32`, conditions are `bool`,
//!   arithmetic operands share a type, stored values match the buffer's
//!   dtype. Literals adapt: `1.0` is any float, `2` is an `i32` or any float.

use crate::{BinOp, DType, Diagnostic, Expr, Func, Param, Program, Span, Stmt, UnOp};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Every problem the verifier found, in program order.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct VerifyError {
    /// The problems, each with a location and the culprit's name.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// How deeply statements and expressions may nest (each operator of a
/// chain is a level); the parser refuses deeper text with the same limit.
pub const MAX_DEPTH: usize = 200;

/// How many expression nodes a program may hold.
pub const MAX_NODES: usize = 1_000_000;

/// Checks `program`; returns every problem found.
pub fn verify(program: &Program) -> Result<(), VerifyError> {
    verify_names(program, false)
}

/// [`verify`] for a program a pass built: names Tile generates (with the
/// reserved prefix: scratch rows, block bounds) are allowed, every other
/// check is the same. How debug builds check what kernel-level rewrites
/// and the lowering produce.
pub fn verify_generated(program: &Program) -> Result<(), VerifyError> {
    verify_names(program, true)
}

fn verify_names(program: &Program, generated: bool) -> Result<(), VerifyError> {
    let shape = check_shape(program, generated);
    if !shape.is_empty() {
        return Err(VerifyError { diagnostics: shape });
    }
    let mut v = Verifier {
        program,
        params: program
            .params
            .iter()
            .rev()
            .map(|p| (p.name.as_str(), p))
            .collect(),
        float: program.float_type(),
        diags: Vec::new(),
        scope: crate::scope::Scope::default(),
    };
    v.run();
    if v.diags.is_empty() {
        Ok(())
    } else {
        Err(VerifyError {
            diagnostics: v.diags,
        })
    }
}

/// The iterative first phase of [`verify`]: nesting depth, size and
/// reserved names. Stops at the first depth or size problem.
fn check_shape(program: &Program, generated: bool) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let reserved = |name: &str| !generated && name.starts_with(crate::names::RESERVED_PREFIX);
    let name_check = |name: &str, span: Span, diags: &mut Vec<Diagnostic>| {
        // Names reach generated C and CUDA (as parts of identifiers and in
        // comments): only identifiers may pass, whatever built the program.
        let mut chars = name.chars();
        let ident = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            diags.push(Diagnostic::new(
                span,
                format!("{name:?} is not a name: names are ASCII letters, digits and `_`, not starting with a digit"),
            ));
        } else if reserved(name) {
            diags.push(Diagnostic::new(
                span,
                format!(
                    "`{name}`: names starting with `{}` are reserved for the names Tile generates",
                    crate::names::RESERVED_PREFIX
                ),
            ));
        }
    };
    name_check(&program.name, program.span, &mut diags);
    for p in &program.params {
        name_check(&p.name, p.span, &mut diags);
    }
    for s in program.size_symbols() {
        name_check(&s, program.span, &mut diags);
    }
    let mut nodes = 0usize;
    // Expressions of every statement, with the statement's depth.
    let mut stmts: Vec<(&Stmt, usize)> = program.body.iter().rev().map(|s| (s, 1)).collect();
    let mut exprs: Vec<(&Expr, usize)> = Vec::new();
    while let Some((s, depth)) = stmts.pop() {
        let span = s.span();
        if depth > MAX_DEPTH {
            diags.push(Diagnostic::new(
                span,
                format!("statements nested deeper than {MAX_DEPTH} levels"),
            ));
            return diags;
        }
        exprs.clear();
        match s {
            Stmt::For { vars, body, .. } => {
                for v in vars {
                    name_check(&v.name, span, &mut diags);
                    exprs.push((&v.lo, depth));
                    exprs.push((&v.hi, depth));
                }
                stmts.extend(body.iter().rev().map(|b| (b, depth + 1)));
            }
            Stmt::Let { name, value, .. } => {
                name_check(name, span, &mut diags);
                exprs.push((value, depth));
            }
            Stmt::Store {
                buf, idx, value, ..
            } => {
                name_check(buf, span, &mut diags);
                exprs.extend(idx.iter().map(|e| (e, depth)));
                exprs.push((value, depth));
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                exprs.push((cond, depth));
                stmts.extend(els.iter().rev().map(|b| (b, depth + 1)));
                stmts.extend(then.iter().rev().map(|b| (b, depth + 1)));
            }
        }
        while let Some((e, d)) = exprs.pop() {
            nodes += 1;
            if d > MAX_DEPTH {
                diags.push(Diagnostic::new(
                    span,
                    format!("expression nested deeper than {MAX_DEPTH} levels (each operator of a chain counts); split it with bindings"),
                ));
                return diags;
            }
            if nodes > MAX_NODES {
                diags.push(Diagnostic::new(
                    span,
                    format!("the program holds more than {MAX_NODES} expression nodes"),
                ));
                return diags;
            }
            match e {
                Expr::Reduce { var, .. } => name_check(var, span, &mut diags),
                Expr::Var(n) | Expr::Load { buf: n, .. } => name_check(n, span, &mut diags),
                _ => {}
            }
            exprs.extend(e.children().into_iter().map(|c| (c, d + 1)));
        }
    }
    diags
}

/// The type of a value expression in a verified program.
///
/// `var_type` gives the type of a visible loop variable, size symbol or
/// binding. Literals take their context's type; a bare float literal is
/// `float`, a bare integer literal `i32`.
pub fn infer_type(e: &Expr, var_type: &dyn Fn(&str) -> Option<DType>, program: &Program) -> DType {
    match ty(e, var_type, program) {
        Ty::Known(t) => t,
        Ty::FloatLit => program.float_type(),
        Ty::IntLit => DType::I32,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    Known(DType),
    FloatLit,
    IntLit,
}

/// Joins two operand types; `None` when they cannot meet.
fn unify(a: Ty, b: Ty) -> Option<Ty> {
    use Ty::*;
    match (a, b) {
        (Known(x), Known(y)) => (x == y).then_some(a),
        (Known(x), FloatLit) | (FloatLit, Known(x)) => x.is_float().then_some(Known(x)),
        (Known(x), IntLit) | (IntLit, Known(x)) => {
            (x.is_float() || x == DType::I32).then_some(Known(x))
        }
        (FloatLit, _) | (_, FloatLit) => Some(FloatLit),
        (IntLit, IntLit) => Some(IntLit),
    }
}

fn ty(e: &Expr, var_type: &dyn Fn(&str) -> Option<DType>, p: &Program) -> Ty {
    match e {
        Expr::Float(_) => Ty::FloatLit,
        Expr::Int(_) => Ty::IntLit,
        Expr::Bool(_) => Ty::Known(DType::Bool),
        Expr::Var(n) => Ty::Known(var_type(n).unwrap_or(DType::I32)),
        Expr::Load { buf, .. } => Ty::Known(p.param(buf).map_or(DType::F32, |q| q.dtype)),
        Expr::Unary(UnOp::Not, _) => Ty::Known(DType::Bool),
        Expr::Unary(UnOp::Neg, a) => ty(a, var_type, p),
        Expr::Binary(op, a, b, _) => {
            if op.is_comparison() || op.is_logical() {
                Ty::Known(DType::Bool)
            } else if *op == BinOp::Rem {
                Ty::Known(DType::I32)
            } else {
                unify(ty(a, var_type, p), ty(b, var_type, p)).unwrap_or(Ty::FloatLit)
            }
        }
        Expr::Call(Func::Cast(t), _) => Ty::Known(*t),
        Expr::Call(Func::Select, args) => {
            unify(ty(&args[1], var_type, p), ty(&args[2], var_type, p)).unwrap_or(Ty::FloatLit)
        }
        Expr::Call(_, args) => args
            .iter()
            .map(|a| ty(a, var_type, p))
            .try_fold(Ty::IntLit, unify)
            .map(|t| if t == Ty::IntLit { Ty::FloatLit } else { t })
            .unwrap_or(Ty::FloatLit),
        Expr::Reduce { var, body, .. } => {
            let inner = |n: &str| {
                if n == var {
                    Some(DType::I32)
                } else {
                    var_type(n)
                }
            };
            ty(body, &inner, p)
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Size,
    Loop,
    Binding(DType),
}

struct Verifier<'a> {
    program: &'a Program,
    /// The parameters by name (the first of a name, as
    /// [`Program::param`]: collected last to first), so a look-up does not
    /// walk them all.
    params: HashMap<&'a str, &'a Param>,
    /// [`Program::float_type`], computed once.
    float: DType,
    diags: Vec<Diagnostic>,
    /// Visible value names, innermost last.
    scope: crate::scope::Scope<Kind>,
}

impl<'a> Verifier<'a> {
    fn param(&self, name: &str) -> Option<&'a Param> {
        self.params.get(name).copied()
    }

    fn error(&mut self, span: Span, msg: String) {
        self.diags.push(Diagnostic::new(span, msg));
    }

    fn lookup(&self, n: &str) -> Option<Kind> {
        self.scope.get(n)
    }

    fn var_type(&self, n: &str) -> Option<DType> {
        self.lookup(n).map(|k| match k {
            Kind::Binding(t) => t,
            _ => DType::I32,
        })
    }

    fn run(&mut self) {
        let p = self.program;
        let mut seen = HashSet::new();
        for q in &p.params {
            if !seen.insert(q.name.as_str()) {
                self.error(q.span, format!("parameter `{}` is declared twice", q.name));
            }
        }
        for s in p.size_symbols() {
            if p.param(&s).is_some() {
                self.error(
                    p.span,
                    format!("size symbol `{s}` has the name of a parameter"),
                );
            }
            self.scope.push(s, Kind::Size);
        }
        for q in &p.params {
            for d in &q.dims {
                for e in [&d.lo, &d.hi] {
                    let mut ok = true;
                    e.walk(&mut |x| {
                        ok &= matches!(
                            x,
                            Expr::Int(_)
                                | Expr::Var(_)
                                | Expr::Binary(
                                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div,
                                    _,
                                    _,
                                    _
                                )
                                | Expr::Unary(UnOp::Neg, _)
                        )
                    });
                    if !ok {
                        self.error(
                            q.span,
                            format!(
                                "the box of `{}` may only use size symbols, integers and + - * /",
                                q.name
                            ),
                        );
                    }
                }
            }
        }
        self.block(&p.body);
    }

    fn block(&mut self, stmts: &[Stmt]) {
        let depth = self.scope.len();
        for s in stmts {
            self.stmt(s);
        }
        self.scope.truncate(depth);
    }

    fn define(&mut self, name: &str, kind: Kind, span: Span, what: &str) {
        if self.param(name).is_some() {
            self.error(span, format!("{what} `{name}` has the name of a parameter"));
        } else if let Some(k) = self.lookup(name) {
            let prior = match k {
                Kind::Size => "a size symbol",
                Kind::Loop => "a loop variable",
                Kind::Binding(_) => "a binding",
            };
            self.error(
                span,
                format!("{what} `{name}` rebinds {prior} of the same name"),
            );
        }
        self.scope.push(name.to_string(), kind);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::For { vars, body, span } => {
                let depth = self.scope.len();
                for lv in vars {
                    self.expect_index(&lv.lo, *span, "a loop bound");
                    self.expect_index(&lv.hi, *span, "a loop bound");
                    self.define(&lv.name, Kind::Loop, *span, "loop variable");
                }
                self.block(body);
                self.scope.truncate(depth);
            }
            Stmt::Let { name, value, span } => {
                let t = self.expr(value, *span);
                let t = match t {
                    Some(Ty::Known(t)) => t,
                    Some(Ty::FloatLit) => self.float,
                    Some(Ty::IntLit) => DType::I32,
                    None => self.float,
                };
                self.define(name, Kind::Binding(t), *span, "binding");
            }
            Stmt::Store {
                buf,
                idx,
                value,
                span,
                ..
            } => {
                match self.param(buf) {
                    None => self.error(*span, format!("store to unknown parameter `{buf}`")),
                    Some(q) => {
                        if !q.role.is_written() {
                            self.error(
                                *span,
                                format!("store to `{buf}`, which is an `in` parameter"),
                            );
                        }
                        if q.dims.len() != idx.len() {
                            self.error(
                                *span,
                                format!(
                                    "`{buf}` has {} dimensions but the store gives {} indices",
                                    q.dims.len(),
                                    idx.len()
                                ),
                            );
                        }
                        let dt = q.dtype;
                        if let Some(t) = self.expr(value, *span) {
                            if unify(t, Ty::Known(dt)).is_none() {
                                self.error(
                                    *span,
                                    format!(
                                        "store of a {} value into `{buf}`, which holds {dt}",
                                        show(t)
                                    ),
                                );
                            }
                        }
                    }
                }
                for i in idx {
                    self.expect_index(i, *span, "an index");
                }
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                if let Some(t) = self.expr(cond, *span) {
                    if t != Ty::Known(DType::Bool) {
                        self.error(
                            *span,
                            format!("an `if` condition must be bool, found {}", show(t)),
                        );
                    }
                }
                self.block(then);
                self.block(els);
            }
        }
    }

    fn expect_index(&mut self, e: &Expr, span: Span, what: &str) {
        if let Some(t) = self.expr(e, span) {
            if unify(t, Ty::Known(DType::I32)).is_none() || t == Ty::FloatLit {
                self.error(
                    span,
                    format!("{what} must be i32, found {} in `{e}`", show(t)),
                );
            }
        }
    }

    /// Checks `e` and returns its type (`None` after an error inside it).
    fn expr(&mut self, e: &Expr, span: Span) -> Option<Ty> {
        match e {
            Expr::Float(_) => Some(Ty::FloatLit),
            Expr::Int(_) => Some(Ty::IntLit),
            Expr::Bool(_) => Some(Ty::Known(DType::Bool)),
            Expr::Var(n) => {
                if let Some(t) = self.var_type(n) {
                    Some(Ty::Known(t))
                } else if self.param(n).is_some() {
                    self.error(span, format!("parameter `{n}` is used without an index"));
                    None
                } else {
                    self.error(span, format!("unknown name `{n}`"));
                    None
                }
            }
            Expr::Load { buf, idx, .. } => {
                let mut ok = true;
                for i in idx {
                    ok &= self.expr(i, span).is_some();
                    self.expect_index(i, span, "an index");
                }
                match self.param(buf) {
                    None => {
                        self.error(span, format!("load from unknown parameter `{buf}`"));
                        None
                    }
                    Some(q) => {
                        if q.dims.len() != idx.len() {
                            self.error(
                                span,
                                format!(
                                    "`{buf}` has {} dimensions but the load gives {} indices",
                                    q.dims.len(),
                                    idx.len()
                                ),
                            );
                        }
                        ok.then_some(Ty::Known(q.dtype))
                    }
                }
            }
            Expr::Unary(op, a) => {
                let t = self.expr(a, span)?;
                match op {
                    UnOp::Not if t != Ty::Known(DType::Bool) => {
                        self.error(span, format!("`!` needs a bool, found {}", show(t)));
                        None
                    }
                    UnOp::Neg if t == Ty::Known(DType::Bool) => {
                        self.error(span, "`-` needs a number, found bool".to_string());
                        None
                    }
                    _ => Some(t),
                }
            }
            Expr::Binary(op, a, b, _) => {
                let (ta, tb) = (self.expr(a, span)?, self.expr(b, span)?);
                if op.is_logical() {
                    if ta != Ty::Known(DType::Bool) || tb != Ty::Known(DType::Bool) {
                        self.error(
                            span,
                            format!(
                                "`{}` needs bool operands, found {} and {}",
                                op.symbol(),
                                show(ta),
                                show(tb)
                            ),
                        );
                        return None;
                    }
                    return Some(ta);
                }
                let Some(t) = unify(ta, tb) else {
                    self.error(
                        span,
                        format!(
                            "type mismatch in `{e}`: {} {} {}",
                            show(ta),
                            op.symbol(),
                            show(tb)
                        ),
                    );
                    return None;
                };
                if t == Ty::Known(DType::Bool) && !matches!(op, BinOp::Eq | BinOp::Ne) {
                    self.error(span, format!("`{}` needs numbers, found bool", op.symbol()));
                    return None;
                }
                if *op == BinOp::Rem {
                    if !matches!(t, Ty::IntLit | Ty::Known(DType::I32)) {
                        self.error(
                            span,
                            format!(
                                "`%` takes integers, found {} in `{e}` (for floats write `x - y * floor(x / y)`)",
                                show(t)
                            ),
                        );
                        return None;
                    }
                    // Always an integer, even of two literals (`f32(7 % 3)`
                    // converts it).
                    return Some(Ty::Known(DType::I32));
                }
                Some(if op.is_comparison() {
                    Ty::Known(DType::Bool)
                } else {
                    t
                })
            }
            Expr::Call(f, args) => self.call(*f, args, span, e),
            Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => {
                self.expect_index(lo, span, "a reduction bound");
                self.expect_index(hi, span, "a reduction bound");
                let depth = self.scope.len();
                self.define(var, Kind::Loop, span, "reduction variable");
                let t = self.expr(body, span);
                self.scope.truncate(depth);
                let t = t?;
                if t == Ty::Known(DType::Bool) {
                    self.error(span, format!("`{}` reduces numbers, found bool", op.name()));
                    return None;
                }
                Some(t)
            }
        }
    }

    fn call(&mut self, f: Func, args: &[Expr], span: Span, e: &Expr) -> Option<Ty> {
        if args.len() != f.arity() {
            self.error(
                span,
                format!(
                    "`{}` takes {} arguments, found {}",
                    f.name(),
                    f.arity(),
                    args.len()
                ),
            );
            return None;
        }
        let ts: Vec<Option<Ty>> = args.iter().map(|a| self.expr(a, span)).collect();
        let ts: Vec<Ty> = ts.into_iter().collect::<Option<_>>()?;
        match f {
            Func::Cast(_) => {
                if ts[0] == Ty::Known(DType::Bool) {
                    self.error(
                        span,
                        format!("cannot convert bool with `{}`; use select", f.name()),
                    );
                    return None;
                }
                Some(Ty::Known(match f {
                    Func::Cast(t) => t,
                    _ => unreachable!(),
                }))
            }
            Func::Select => {
                if ts[0] != Ty::Known(DType::Bool) {
                    self.error(
                        span,
                        format!(
                            "the condition of `select` must be bool, found {}",
                            show(ts[0])
                        ),
                    );
                    return None;
                }
                let t = unify(ts[1], ts[2]);
                if t.is_none() {
                    self.error(span, format!("`select` branches differ in type in `{e}`"));
                }
                t
            }
            Func::Abs | Func::Min | Func::Max => {
                let t = ts.iter().copied().try_fold(Ty::IntLit, unify);
                if t.is_none() || t == Some(Ty::Known(DType::Bool)) {
                    self.error(span, format!("type mismatch in `{e}`"));
                    return None;
                }
                t
            }
            _ => {
                let t = ts.iter().copied().try_fold(Ty::FloatLit, unify);
                match t {
                    Some(Ty::Known(d)) if !d.is_float() => {
                        self.error(
                            span,
                            format!("`{}` needs float arguments, found {d} in `{e}`", f.name()),
                        );
                        None
                    }
                    None => {
                        self.error(span, format!("type mismatch in `{e}`"));
                        None
                    }
                    t => t,
                }
            }
        }
    }
}

fn show(t: Ty) -> String {
    match t {
        Ty::Known(d) => d.name().to_string(),
        Ty::FloatLit => "float literal".to_string(),
        Ty::IntLit => "integer literal".to_string(),
    }
}
