//! Programs: parameters with boxes, and a statement tree.

use crate::{DType, Expr, NodeId, Role, Span};

/// One dimension of a parameter's box: the half-open range `lo..hi`, affine
/// in the program's size symbols.
#[derive(Clone, Debug, PartialEq)]
pub struct Dim {
    /// Lowest valid index.
    pub lo: Expr,
    /// One past the highest valid index.
    pub hi: Expr,
}

impl Dim {
    /// `0..hi`.
    pub fn extent(hi: Expr) -> Dim {
        Dim {
            lo: Expr::Int(0),
            hi,
        }
    }
}

/// A kernel parameter: a buffer with a role, an element type and a box.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The parameter's name.
    pub name: String,
    /// Read, written, or both.
    pub role: Role,
    /// Element type.
    pub dtype: DType,
    /// One range per dimension; storage is row-major and compact over it.
    pub dims: Vec<Dim>,
    /// Where the parameter was declared.
    pub span: Span,
}

/// One loop variable of a `for` nest: `name in lo..hi`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopVar {
    /// The variable.
    pub name: String,
    /// Inclusive start.
    pub lo: Expr,
    /// Exclusive end.
    pub hi: Expr,
}

/// A statement. Only statements have effects; they run in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `for i in a..b, j in c..d { body }`: the first variable is outermost.
    For {
        /// The loop variables, outermost first.
        vars: Vec<LoopVar>,
        /// The loop body.
        body: Vec<Stmt>,
        /// Location of the `for` keyword.
        span: Span,
    },
    /// `name = value`: single assignment, visible to the rest of the block.
    Let {
        /// The bound name.
        name: String,
        /// Its value.
        value: Expr,
        /// Location of the name.
        span: Span,
    },
    /// `buf[idx...] = value`.
    Store {
        /// Written parameter.
        buf: String,
        /// One index per dimension.
        idx: Vec<Expr>,
        /// Stored value.
        value: Expr,
        /// Location of the buffer name.
        span: Span,
        /// The node's identity (its failure site in generated code).
        id: NodeId,
    },
    /// `if cond { then } else { els }`.
    If {
        /// A boolean condition.
        cond: Expr,
        /// Taken when `cond` holds.
        then: Vec<Stmt>,
        /// Taken otherwise (may be empty).
        els: Vec<Stmt>,
        /// Location of the `if` keyword.
        span: Span,
    },
}

impl Stmt {
    /// `buf[idx...] = value`, a new node (a fresh [`NodeId`]).
    pub fn store(buf: impl Into<String>, idx: Vec<Expr>, value: Expr, span: Span) -> Stmt {
        Stmt::Store {
            buf: buf.into(),
            idx,
            value,
            span,
            id: NodeId::fresh(),
        }
    }

    /// The statement's location.
    pub fn span(&self) -> Span {
        match self {
            Stmt::For { span, .. }
            | Stmt::Let { span, .. }
            | Stmt::Store { span, .. }
            | Stmt::If { span, .. } => *span,
        }
    }

    /// The statement's own expressions, in program order: a loop's bounds,
    /// a binding's value, a store's indices then value, a condition (not
    /// those of nested statements).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Stmt::For { vars, .. } => vars.iter().flat_map(|v| [&v.lo, &v.hi]).collect(),
            Stmt::Let { value, .. } => vec![value],
            Stmt::Store { idx, value, .. } => idx.iter().chain([value]).collect(),
            Stmt::If { cond, .. } => vec![cond],
        }
    }

    /// [`Stmt::exprs`], to rewrite in place.
    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Stmt::For { vars, .. } => vars
                .iter_mut()
                .flat_map(|v| [&mut v.lo, &mut v.hi])
                .collect(),
            Stmt::Let { value, .. } => vec![value],
            Stmt::Store { idx, value, .. } => idx.iter_mut().chain([value]).collect(),
            Stmt::If { cond, .. } => vec![cond],
        }
    }

    /// Replaces free uses of `name` by `to` in this statement and the
    /// statements nested in it, except where a loop or reduction variable
    /// of that name hides it.
    pub fn substitute(&mut self, name: &str, to: &Expr) {
        for e in self.exprs_mut() {
            e.substitute(name, to);
        }
        if let Stmt::For { vars, .. } = self {
            if vars.iter().any(|v| v.name == name) {
                return;
            }
        }
        for body in self.bodies_mut() {
            body.iter_mut().for_each(|t| t.substitute(name, to));
        }
    }

    /// [`Stmt::substitute`] for every name of `map` in one walk.
    pub fn substitute_all(&mut self, map: &std::collections::HashMap<String, Expr>) {
        for e in self.exprs_mut() {
            e.substitute_all(map);
        }
        let mut inner = None;
        if let Stmt::For { vars, .. } = self {
            if vars.iter().any(|v| map.contains_key(&v.name)) {
                let mut m = map.clone();
                vars.iter().for_each(|v| {
                    m.remove(&v.name);
                });
                inner = Some(m);
            }
        }
        let map = inner.as_ref().unwrap_or(map);
        for body in self.bodies_mut() {
            body.iter_mut().for_each(|t| t.substitute_all(map));
        }
    }

    /// The statement lists nested directly in this one: a loop's body, a
    /// branch's two arms.
    pub fn bodies(&self) -> Vec<&Vec<Stmt>> {
        match self {
            Stmt::For { body, .. } => vec![body],
            Stmt::If { then, els, .. } => vec![then, els],
            Stmt::Let { .. } | Stmt::Store { .. } => Vec::new(),
        }
    }

    /// [`Stmt::bodies`], to rewrite in place.
    pub fn bodies_mut(&mut self) -> Vec<&mut Vec<Stmt>> {
        match self {
            Stmt::For { body, .. } => vec![body],
            Stmt::If { then, els, .. } => vec![then, els],
            Stmt::Let { .. } | Stmt::Store { .. } => Vec::new(),
        }
    }

    /// Calls `f` on this statement and every nested statement, in order.
    pub fn walk(&self, f: &mut dyn FnMut(&Stmt)) {
        f(self);
        for body in self.bodies() {
            body.iter().for_each(|s| s.walk(f));
        }
    }

    /// Calls `f` on every expression of this statement and nested ones
    /// (loop bounds, conditions, indices, values), in program order.
    pub fn walk_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        self.walk(&mut |s| s.exprs().into_iter().for_each(&mut *f));
    }
}

/// A program: a named kernel with parameters and a body.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The program's name.
    pub name: String,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
    /// Statements in program order.
    pub body: Vec<Stmt>,
    /// Location of the `program` keyword.
    pub span: Span,
}

impl Program {
    /// Looks a parameter up by name.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Size symbols: the free names of the parameter boxes, in order of
    /// first appearance.
    pub fn size_symbols(&self) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.params {
            for d in &p.dims {
                d.lo.free_vars(&mut out);
                d.hi.free_vars(&mut out);
            }
        }
        out
    }

    /// The float type literals take: the first float parameter's type, or
    /// `f32` when there is none.
    pub fn float_type(&self) -> DType {
        self.params
            .iter()
            .map(|p| p.dtype)
            .find(|d| d.is_float())
            .unwrap_or(DType::F32)
    }

    /// Every statement, depth first, in program order.
    pub fn walk(&self, f: &mut dyn FnMut(&Stmt)) {
        self.body.iter().for_each(|s| s.walk(f));
    }
}

/// A program's parameters by name and its size symbols, computed once, for
/// printers and launchers that look parameters up per access over many
/// kernels ([`Program::param`] walks the list). It stays valid for a
/// program that appends parameters (a kernel's scratch rows): those are
/// found by walking what follows the indexed ones.
#[derive(Clone, Debug, Default)]
pub struct ParamIndex {
    by_name: std::collections::HashMap<String, usize>,
    len: usize,
    symbols: Vec<String>,
}

impl ParamIndex {
    /// Indexes `program`'s parameters (the first of a name, as
    /// [`Program::param`]) and computes its size symbols.
    pub fn of(program: &Program) -> ParamIndex {
        let mut by_name = std::collections::HashMap::new();
        for (i, p) in program.params.iter().enumerate() {
            by_name.entry(p.name.clone()).or_insert(i);
        }
        ParamIndex {
            by_name,
            len: program.params.len(),
            symbols: program.size_symbols(),
        }
    }

    /// The position of parameter `name` in `program` (the indexed program,
    /// or one that appends parameters to it).
    pub fn position(&self, program: &Program, name: &str) -> Option<usize> {
        match self.by_name.get(name) {
            Some(&i) if program.params.get(i).is_some_and(|p| p.name == name) => Some(i),
            // Not indexed, or a different program: walk.
            Some(_) => program.params.iter().position(|p| p.name == name),
            None => program
                .params
                .iter()
                .skip(self.len)
                .position(|p| p.name == name)
                .map(|i| i + self.len),
        }
    }

    /// [`Program::param`] through the index.
    pub fn param<'p>(&self, program: &'p Program, name: &str) -> Option<&'p Param> {
        self.position(program, name).map(|i| &program.params[i])
    }

    /// [`Program::size_symbols`] of the indexed program.
    pub fn symbols(&self) -> &[String] {
        &self.symbols
    }
}
