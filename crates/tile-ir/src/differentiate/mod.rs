//! Reverse-mode differentiation (`tile grad`): from a program, the program
//! that computes the gradients of chosen inputs given cotangents of its
//! outputs. The result is an ordinary Tile program (printed, parsed back
//! and verified), so it is planned, fused and run like any other.
//!
//! The derivative program recomputes the forward values it needs: each
//! block (the program's body, a loop's body, a branch of an `if`) keeps
//! its bindings, then binds the adjoint `grad_a` of each of its float
//! bindings, last first, as the sum of what the uses after it contribute.
//! A contribution from inside a loop leaves it as a `sum` over the loop's
//! variables, with the loop's bindings written out in it; one from inside
//! an `if` leaves it under the condition (a `select`, or an empty-or-one
//! `sum` where it reads memory, so nothing is read that the program would
//! not read). Each load of a differentiated input is a contribution to
//! its gradient; `place` turns them into the gradient's stores and
//! `tidy` fills them in, renames shadowing variables and drops what the
//! gradients do not use. docs/guide/derivatives.md is the user's account.

mod check;
mod find_invariant_shifts;
mod name_reductions;
mod partials;
mod place;
mod save_reductions;
mod separate_names;
mod tidy;

use crate::scope::Scope;
use crate::{
    infer_type, BinOp, DType, Diagnostic, Expr, Func, LoopVar, Param, Program, ReduceOp, Role,
    Span, Stmt,
};
use std::collections::{HashMap, HashSet};

/// Why a program could not be differentiated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GradError {
    /// The request: no input named, or one that is unknown, not an input,
    /// or not a float.
    #[error("{0}")]
    Request(String),
    /// A construct differentiation does not handle, where it is.
    #[error("{0}")]
    Unsupported(Diagnostic),
    /// A bug: the derivative program does not parse or verify.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What to differentiate.
#[derive(Clone, Debug, Default)]
pub struct GradOptions {
    /// The `in` parameters whose gradients the derivative program writes.
    pub wrt: Vec<String>,
    /// Also write the program's own outputs, in the same program (value
    /// and gradient fused).
    pub with_value: bool,
    /// What the forward pass keeps for the derivative program.
    pub saves: Saves,
}

/// What the forward pass keeps for the derivative: a recorded choice
/// between memory and reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Saves {
    /// The inputs only: the derivative recomputes every forward value it
    /// needs from them (reads, no memory beyond the inputs).
    #[default]
    Inputs,
    /// The inputs and every float binding whose value holds a reduction
    /// (a row's mean, maximum or sum), one element per iteration of its
    /// loops: the forward program ([`Derivative::forward`]) writes them to
    /// `saved_NAME` outputs and the derivative reads them back instead of
    /// reducing again.
    Reductions,
}

impl Saves {
    /// `inputs` or `reductions`.
    pub fn name(self) -> &'static str {
        match self {
            Saves::Inputs => "inputs",
            Saves::Reductions => "reductions",
        }
    }
}

impl std::str::FromStr for Saves {
    type Err = String;

    fn from_str(s: &str) -> Result<Saves, String> {
        match s {
            "inputs" => Ok(Saves::Inputs),
            "reductions" => Ok(Saves::Reductions),
            _ => Err(format!("saves must be `inputs` or `reductions`, not `{s}`")),
        }
    }
}

/// A derivative and the forward program that feeds it.
#[derive(Clone, Debug)]
pub struct Derivative {
    /// The derivative program (`NAME_grad`).
    pub grad: Program,
    /// With [`Saves::Reductions`], the program itself with a
    /// `saved_NAME: out` per saved binding (`NAME_forward`): run it
    /// instead of the program in the forward pass and pass its `saved_*`
    /// outputs to the derivative, by name. `None` with [`Saves::Inputs`].
    pub forward: Option<Program>,
}

/// How many expression nodes one contribution may hold once the bindings
/// of the loops it leaves are written out in it.
pub const MAX_INLINED_NODES: usize = 100_000;

/// The derivative program of `program` (which must verify) with respect to
/// `options.wrt`: named `NAME_grad`, it takes the program's `in`
/// parameters, then `grad_Y: in` for each float output `Y` (the output's
/// cotangent), then, with `with_value`, the program's outputs, then
/// `grad_X: out` for each `X` of `wrt`, in that order. A name already
/// taken gets a suffix (`grad_x_2`).
pub fn differentiate(program: &Program, options: &GradOptions) -> Result<Program, GradError> {
    derive(program, options).map(|d| d.grad)
}

/// [`differentiate`], with the forward program that writes what the
/// derivative reads back ([`Saves::Reductions`]). The derivative's
/// `saved_NAME: in` parameters follow its gradients, and the forward
/// program's `saved_NAME: out` follow the program's own parameters.
pub fn derive(program: &Program, options: &GradOptions) -> Result<Derivative, GradError> {
    crate::verify(program).map_err(|e| GradError::Request(e.to_string()))?;
    check::check(program, &options.wrt)?;
    let mut namer = Namer::of(program);
    let mut separated = program.body.clone();
    separate_names::separate_names(&mut separated, &mut namer);
    let bound = Program {
        body: name_reductions::name_reductions(&separated, &mut namer),
        ..program.clone()
    };
    check::check_sizes(&bound, options.with_value)?;
    let mut d = Deriver::new(&bound, options, namer);
    // The derivative's own parameters; work outputs follow.
    let base = d.params.len();
    d.invariant = find_invariant_shifts::invariant_shifts(&bound.body);
    if options.saves == Saves::Reductions {
        d.kept = save_reductions::choose(&bound, &mut d.namer);
    }
    let (_, mirror, outflow) = d.block(&bound.body, None, Vec::new())?;
    if let Some((name, _)) = outflow.first() {
        return Err(GradError::Internal(format!("`{name}` has no block")));
    }
    let (mut body, mut placements) = place::place(&mut d)?;
    body.extend(mirror);
    tidy::fill(&mut body, &mut placements);
    let mut visible: HashSet<String> = program.params.iter().map(|p| p.name.clone()).collect();
    visible.extend(d.params.iter().map(|p| p.name.clone()));
    visible.extend(program.size_symbols());
    tidy::unshadow(&mut body, &mut visible, &mut d.namer);
    tidy::prune(&mut body, &mut HashSet::new());
    let mut nodes = 0usize;
    body.iter()
        .for_each(|s| s.walk_exprs(&mut |e| e.walk(&mut |_| nodes += 1)));
    if nodes > crate::verify::MAX_NODES {
        return Err(GradError::Unsupported(Diagnostic::new(
            program.span,
            format!(
                "the derivative of `{}` would hold {nodes} expression nodes, more than the {} a \
                 program may hold",
                program.name,
                crate::verify::MAX_NODES
            ),
        )));
    }
    let mut params = std::mem::take(&mut d.params);
    let kept: Vec<Param> = d.kept.iter().map(|k| k.param(Role::In)).collect();
    params.splice(base..base, kept);
    let out = Program {
        name: format!("{}_grad", program.name),
        params,
        body,
        span: program.span,
    };
    let forward = (options.saves == Saves::Reductions)
        .then(|| save_reductions::forward(&bound, &d.kept))
        .map(|f| reparsed(f, "forward"))
        .transpose()?;
    Ok(Derivative {
        grad: reparsed(out, "derivative")?,
        forward,
    })
}

/// `program` printed, parsed back and verified: a generated program is
/// always one a user could have written.
fn reparsed(program: Program, what: &str) -> Result<Program, GradError> {
    let text = program.to_string();
    let parsed = crate::parse_program(&text).map_err(|e| {
        GradError::Internal(format!("the {what} program does not parse: {e}\n{text}"))
    })?;
    crate::verify(&parsed).map_err(|e| {
        GradError::Internal(format!("the {what} program does not verify: {e}\n{text}"))
    })?;
    Ok(parsed)
}

/// Fresh names: never one the program uses anywhere, nor one made before.
pub(super) struct Namer {
    taken: HashSet<String>,
}

impl Namer {
    fn of(program: &Program) -> Namer {
        let mut taken: HashSet<String> = program.params.iter().map(|p| p.name.clone()).collect();
        taken.extend(program.size_symbols());
        program.walk(&mut |s| match s {
            Stmt::Let { name, .. } => {
                taken.insert(name.clone());
            }
            Stmt::For { vars, .. } => taken.extend(vars.iter().map(|v| v.name.clone())),
            _ => {}
        });
        for s in &program.body {
            s.walk_exprs(&mut |e| {
                e.walk(&mut |n| match n {
                    Expr::Reduce { var, .. } => {
                        taken.insert(var.clone());
                    }
                    Expr::Var(v) => {
                        taken.insert(v.clone());
                    }
                    _ => {}
                })
            });
        }
        Namer { taken }
    }

    /// `base`, or `base_2`, `base_3`, ... : the first not yet taken.
    pub(super) fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// A name visible while deriving: where it is bound and what it holds.
#[derive(Clone, Copy)]
struct Binding {
    block: usize,
    dtype: DType,
    /// A float binding that depends on a differentiated input.
    active: bool,
    /// A binding (`name = e`), not a loop or reduction variable.
    is_let: bool,
}

/// One level of iteration or condition around a statement.
#[derive(Clone, Debug)]
pub(super) struct Frame {
    /// Unique per loop variable, reduction or branch.
    pub(super) id: usize,
    pub(super) kind: FrameKind,
}

#[derive(Clone, Debug)]
pub(super) enum FrameKind {
    /// A `for` variable (`reduce: false`) or a reduction's (`true`).
    Loop {
        var: String,
        lo: Expr,
        hi: Expr,
        reduce: bool,
    },
    /// A branch of an `if`.
    Cond,
}

/// A block of the derivative program, mirroring one of the program's.
pub(super) struct Block {
    pub(super) parent: Option<usize>,
    /// Every frame around the block, outermost first.
    pub(super) frames: Vec<Frame>,
    /// Its bindings in order: the program's, then the adjoints.
    pub(super) lets: Vec<(String, Expr)>,
    /// The type of each of its bindings.
    pub(super) types: HashMap<String, DType>,
}

/// One load of a differentiated input and what it contributes to the
/// input's gradient at the loaded index.
pub(super) struct Site {
    pub(super) param: String,
    pub(super) idx: Vec<Expr>,
    /// The innermost block around the load.
    pub(super) block: usize,
    /// The reductions around the load inside its statement, outermost first.
    pub(super) reduce: Vec<Frame>,
    pub(super) value: Expr,
    pub(super) span: Span,
}

/// A derived block: its id, its statements in the derivative program, and
/// the contributions it makes to bindings of enclosing blocks.
type Derived = (usize, Vec<Stmt>, Vec<(String, Expr)>);

/// Where a contribution is being made.
struct Cx {
    block: usize,
    span: Span,
}

/// The derivation's state.
pub(super) struct Deriver<'p> {
    pub(super) program: &'p Program,
    /// Differentiated inputs and their gradient parameters, in order.
    pub(super) grads: Vec<(String, String)>,
    /// Float outputs and their cotangent parameters.
    cotangents: HashMap<String, String>,
    with_value: bool,
    pub(super) namer: Namer,
    /// The derivative program's parameters.
    pub(super) params: Vec<Param>,
    scope: Scope<Binding>,
    pub(super) blocks: Vec<Block>,
    pub(super) sites: Vec<Site>,
    frames: usize,
    /// Bindings saved to work outputs: (block, name) to the output.
    pub(super) saved: HashMap<(usize, String), String>,
    /// `max`/`min` bindings no output depends on: treated as constants
    /// ([`find_invariant_shifts`]).
    invariant: HashSet<String>,
    /// Bindings the forward program saves ([`Saves::Reductions`]).
    kept: Vec<save_reductions::Kept>,
}

impl<'p> Deriver<'p> {
    fn new(program: &'p Program, options: &GradOptions, mut namer: Namer) -> Deriver<'p> {
        let mut params: Vec<Param> = program
            .params
            .iter()
            .filter(|p| p.role == Role::In)
            .cloned()
            .collect();
        let mut cotangents = HashMap::new();
        for p in program
            .params
            .iter()
            .filter(|p| p.role == Role::Out && p.dtype.is_float())
        {
            let name = namer.fresh(&format!("grad_{}", p.name));
            cotangents.insert(p.name.clone(), name.clone());
            params.push(Param {
                name,
                role: Role::In,
                ..p.clone()
            });
        }
        if options.with_value {
            params.extend(
                program
                    .params
                    .iter()
                    .filter(|p| p.role == Role::Out)
                    .cloned(),
            );
        }
        let mut grads = Vec::new();
        for x in &options.wrt {
            let p = program.param(x).expect("checked: a parameter");
            let name = namer.fresh(&format!("grad_{x}"));
            grads.push((x.clone(), name.clone()));
            params.push(Param {
                name,
                role: Role::Out,
                ..p.clone()
            });
        }
        Deriver {
            program,
            grads,
            cotangents,
            with_value: options.with_value,
            namer,
            params,
            scope: Scope::default(),
            blocks: Vec::new(),
            sites: Vec::new(),
            frames: 0,
            saved: HashMap::new(),
            invariant: HashSet::new(),
            kept: Vec::new(),
        }
    }

    fn frame(&mut self, kind: FrameKind) -> Frame {
        self.frames += 1;
        Frame {
            id: self.frames,
            kind,
        }
    }

    fn ty(&self, e: &Expr) -> DType {
        infer_type(e, &|n| self.scope.get(n).map(|b| b.dtype), self.program)
    }

    /// True when `e` depends on a differentiated input.
    fn is_active(&self, e: &Expr) -> bool {
        let mut active = false;
        e.walk(&mut |n| match n {
            Expr::Load { buf, .. } => active |= self.grads.iter().any(|(x, _)| x == buf),
            Expr::Var(v) => active |= self.scope.get(v).is_some_and(|b| b.is_let && b.active),
            _ => {}
        });
        active
    }

    /// Binds `name = value` (of type `dtype`) in block `id` of the
    /// derivative program.
    fn emit(
        &mut self,
        id: usize,
        out: &mut Vec<Stmt>,
        name: &str,
        value: Expr,
        dtype: DType,
        span: Span,
    ) {
        self.scope.push(
            name.to_string(),
            Binding {
                block: id,
                dtype,
                active: false,
                is_let: true,
            },
        );
        self.blocks[id].lets.push((name.to_string(), value.clone()));
        self.blocks[id].types.insert(name.to_string(), dtype);
        out.push(Stmt::Let {
            name: name.to_string(),
            value,
            span,
        });
    }

    /// Derives one block: returns its id, its statements in the derivative
    /// program, and the contributions its statements make to bindings of
    /// enclosing blocks (still in terms of this block's bindings).
    fn block(
        &mut self,
        stmts: &[Stmt],
        parent: Option<usize>,
        own: Vec<Frame>,
    ) -> Result<Derived, GradError> {
        let id = self.blocks.len();
        let mut frames = parent.map_or_else(Vec::new, |p| self.blocks[p].frames.clone());
        frames.extend(own);
        self.blocks.push(Block {
            parent,
            frames,
            lets: Vec::new(),
            types: HashMap::new(),
        });
        let depth = self.scope.len();
        for s in stmts {
            if let Stmt::Let { name, value, .. } = s {
                let dtype = self.ty(value);
                let active =
                    dtype.is_float() && self.is_active(value) && !self.invariant.contains(name);
                self.scope.push(
                    name.clone(),
                    Binding {
                        block: id,
                        dtype,
                        active,
                        is_let: true,
                    },
                );
                self.blocks[id].lets.push((name.clone(), value.clone()));
                self.blocks[id].types.insert(name.clone(), dtype);
            }
        }
        let mut bars: HashMap<String, Vec<Expr>> = HashMap::new();
        let mut outflow = Vec::new();
        let mut adjoints = Vec::new();
        let mut mirror: Vec<Option<Stmt>> = vec![None; stmts.len()];
        for (k, s) in stmts.iter().enumerate().rev() {
            let mut flows = Vec::new();
            let cx = Cx {
                block: id,
                span: s.span(),
            };
            match s {
                Stmt::Store {
                    buf, idx, value, ..
                } => {
                    if self.with_value {
                        mirror[k] = Some(s.clone());
                    }
                    if let Some(c) = self.cotangents.get(buf).cloned() {
                        let bar = Expr::load(&c, idx.clone());
                        self.backprop(value, bar, &mut Vec::new(), &cx, &mut flows)?;
                    }
                }
                Stmt::Let { name, value, span } => {
                    mirror[k] = Some(Stmt::Let {
                        name: name.clone(),
                        value: self.recomputed(name, value),
                        span: *span,
                    });
                    if let Some(terms) = bars.remove(name) {
                        let dtype = self.scope.get(name).map_or(DType::F32, |b| b.dtype);
                        let g = self.namer.fresh(&format!("grad_{name}"));
                        let sum = partials::add_all(terms).expect("at least one term");
                        self.emit(id, &mut adjoints, &g, sum, dtype, *span);
                        match value {
                            Expr::Reduce {
                                op: ReduceOp::Max | ReduceOp::Min,
                                var,
                                lo,
                                hi,
                                body,
                            } => {
                                let ties = self.namer.fresh(&format!("{name}_ties"));
                                let count = self.ties(var, lo, hi, body, &Expr::var(name), dtype);
                                self.emit(id, &mut adjoints, &ties, count, dtype, *span);
                                let result = Some((Expr::var(name), Expr::var(&ties)));
                                let bar = Expr::var(&g);
                                self.backprop_reduce(
                                    value,
                                    bar,
                                    result,
                                    &mut Vec::new(),
                                    &cx,
                                    &mut flows,
                                )?;
                            }
                            _ => self.backprop(
                                value,
                                Expr::var(&g),
                                &mut Vec::new(),
                                &cx,
                                &mut flows,
                            )?,
                        }
                    }
                }
                Stmt::For { vars, body, span } => {
                    let inner_depth = self.scope.len();
                    let mut own = Vec::new();
                    for v in vars {
                        self.scope.push(v.name.clone(), loop_binding(id));
                        own.push(self.frame(FrameKind::Loop {
                            var: v.name.clone(),
                            lo: v.lo.clone(),
                            hi: v.hi.clone(),
                            reduce: false,
                        }));
                    }
                    let (child, inner, child_out) = self.block(body, Some(id), own)?;
                    self.scope.truncate(inner_depth);
                    mirror[k] = Some(Stmt::For {
                        vars: vars.clone(),
                        body: inner,
                        span: *span,
                    });
                    for (n, mut c) in child_out {
                        self.inline(child, &mut c, *span)?;
                        for v in vars.iter().rev() {
                            c = sum(&v.name, v.lo.clone(), v.hi.clone(), c);
                        }
                        flows.push((n, c));
                    }
                }
                Stmt::If {
                    cond,
                    then,
                    els,
                    span,
                } => {
                    let mut branches = Vec::new();
                    for (branch, holds) in [(then, true), (els, false)] {
                        let own = vec![self.frame(FrameKind::Cond)];
                        let (child, inner, child_out) = self.block(branch, Some(id), own)?;
                        branches.push(inner);
                        for (n, mut c) in child_out {
                            self.inline(child, &mut c, *span)?;
                            flows.push((n, self.guard(id, cond, holds, c)));
                        }
                    }
                    let els = branches.pop().unwrap_or_default();
                    let then = branches.pop().unwrap_or_default();
                    mirror[k] = Some(Stmt::If {
                        cond: cond.clone(),
                        then,
                        els,
                        span: *span,
                    });
                }
            }
            for (n, c) in flows {
                match self.scope.get(&n) {
                    Some(b) if b.block == id => bars.entry(n).or_default().push(c),
                    _ => outflow.push((n, c)),
                }
            }
        }
        self.scope.truncate(depth);
        let mut out: Vec<Stmt> = mirror.into_iter().flatten().collect();
        out.extend(adjoints);
        out.push(tidy::marker(id));
        Ok((id, out, outflow))
    }

    /// What the derivative binds `name` (bound to `value` in the program)
    /// to: `value` again, or the load of its saved value.
    fn recomputed(&self, name: &str, value: &Expr) -> Expr {
        match self.kept.iter().find(|k| k.name == name) {
            Some(k) => k.load(),
            None => value.clone(),
        }
    }

    /// Writes block `id`'s bindings out in `e` (the last first, so one
    /// written out in terms of earlier ones has those written out too).
    pub(super) fn inline(&self, id: usize, e: &mut Expr, span: Span) -> Result<(), GradError> {
        for (name, value) in self.blocks[id].lets.iter().rev() {
            write_out(e, name, value, span)?;
        }
        Ok(())
    }

    /// A contribution from a branch of `if cond` in block `id`, made only
    /// where the branch runs: a `select` when evaluating it cannot fail
    /// (every load provably in its box, no integer division), else a sum
    /// over a range of one element or none, so nothing the program would
    /// not evaluate is evaluated.
    fn guard(&mut self, id: usize, cond: &Expr, holds: bool, c: Expr) -> Expr {
        if self.cannot_fail(id, &c, &mut Vec::new()) {
            let (a, b) = if holds {
                (c, Expr::Float(0.0))
            } else {
                (Expr::Float(0.0), c)
            };
            return Expr::call(Func::Select, vec![cond.clone(), a, b]);
        }
        let (on, off) = if holds { (1, 0) } else { (0, 1) };
        let var = self.namer.fresh("taken");
        let count = Expr::call(
            Func::Select,
            vec![cond.clone(), Expr::Int(on), Expr::Int(off)],
        );
        sum(&var, Expr::Int(0), count, c)
    }

    /// True when evaluating `e` in block `id` cannot fail: no integer `/`
    /// or `%`, and each load indexes every dimension by a loop or
    /// reduction variable whose range is exactly that dimension of the
    /// box. `ranges` holds the reductions around `e`.
    fn cannot_fail(&self, id: usize, e: &Expr, ranges: &mut Vec<(String, Expr, Expr)>) -> bool {
        match e {
            Expr::Binary(BinOp::Rem, ..) => false,
            Expr::Binary(BinOp::Div, a, b, _) => {
                self.ty(e).is_float()
                    && self.cannot_fail(id, a, ranges)
                    && self.cannot_fail(id, b, ranges)
            }
            Expr::Load { buf, idx, .. } => {
                let Some(p) = self
                    .params
                    .iter()
                    .find(|p| p.name == *buf)
                    .or_else(|| self.program.param(buf))
                else {
                    return false;
                };
                p.dims.len() == idx.len()
                    && idx.iter().zip(&p.dims).all(|(i, dim)| {
                        let Expr::Var(v) = i else { return false };
                        let range = ranges
                            .iter()
                            .rev()
                            .find(|r| r.0 == *v)
                            .map(|r| (&r.1, &r.2));
                        let range = range.or_else(|| {
                            self.blocks[id]
                                .frames
                                .iter()
                                .rev()
                                .find_map(|f| match &f.kind {
                                    FrameKind::Loop { var, lo, hi, .. } if var == v => {
                                        Some((lo, hi))
                                    }
                                    _ => None,
                                })
                        });
                        range.is_some_and(|(lo, hi)| *lo == dim.lo && *hi == dim.hi)
                    })
            }
            Expr::Reduce {
                var, lo, hi, body, ..
            } => {
                if !self.cannot_fail(id, lo, ranges) || !self.cannot_fail(id, hi, ranges) {
                    return false;
                }
                ranges.push((var.clone(), (**lo).clone(), (**hi).clone()));
                let ok = self.cannot_fail(id, body, ranges);
                ranges.pop();
                ok
            }
            _ => e
                .children()
                .into_iter()
                .all(|c| self.cannot_fail(id, c, ranges)),
        }
    }

    /// `sum(v in lo..hi: select(body == result, 1, 0))`: how many elements
    /// attain a `max` or `min` reduction's result.
    fn ties(
        &mut self,
        var: &str,
        lo: &Expr,
        hi: &Expr,
        body: &Expr,
        result: &Expr,
        dtype: DType,
    ) -> Expr {
        let (one, zero) = if dtype == self.program.float_type() {
            (Expr::Float(1.0), Expr::Float(0.0))
        } else {
            (
                Expr::call(Func::Cast(dtype), vec![Expr::Float(1.0)]),
                Expr::call(Func::Cast(dtype), vec![Expr::Float(0.0)]),
            )
        };
        let hit = Expr::binary(BinOp::Eq, body.clone(), result.clone());
        sum(
            var,
            lo.clone(),
            hi.clone(),
            Expr::call(Func::Select, vec![hit, one, zero]),
        )
    }

    /// Propagates `bar`, the cotangent of `e`, to the bindings and loads
    /// `e` reads; `red` holds the reductions around `e` in its statement.
    fn backprop(
        &mut self,
        e: &Expr,
        bar: Expr,
        red: &mut Vec<Frame>,
        cx: &Cx,
        flows: &mut Vec<(String, Expr)>,
    ) -> Result<(), GradError> {
        if !self.is_active(e) || !self.ty(e).is_float() {
            return Ok(());
        }
        match e {
            Expr::Var(n) => flows.push((n.clone(), wrap_sums(bar, red))),
            Expr::Load { buf, idx, .. } => self.sites.push(Site {
                param: buf.clone(),
                idx: idx.clone(),
                block: cx.block,
                reduce: red.clone(),
                value: bar,
                span: cx.span,
            }),
            Expr::Call(Func::Cast(t), args) => {
                let from = self.ty(&args[0]);
                if t.is_float() && from.is_float() {
                    let bar = if from == *t {
                        bar
                    } else {
                        Expr::call(Func::Cast(from), vec![bar])
                    };
                    self.backprop(&args[0], bar, red, cx, flows)?;
                }
            }
            Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => {
                let ties = if *op == ReduceOp::Sum {
                    None
                } else {
                    let fresh = self.namer.fresh(var);
                    let mut renamed = (**body).clone();
                    renamed.substitute(var, &Expr::var(&fresh));
                    let dtype = self.ty(e);
                    let count = self.ties(&fresh, lo, hi, &renamed, e, dtype);
                    Some((e.clone(), count))
                };
                self.backprop_reduce(e, bar, ties, red, cx, flows)?;
            }
            _ => {
                let children = e.children();
                for (k, cb) in partials::operand_cotangents(e, &bar) {
                    self.backprop(children[k], cb, red, cx, flows)?;
                }
            }
        }
        Ok(())
    }

    /// [`Deriver::backprop`] into a reduction's body; for `max` and `min`,
    /// `ties` holds the result and how many elements attain it, and the
    /// cotangent is shared evenly among them.
    fn backprop_reduce(
        &mut self,
        e: &Expr,
        bar: Expr,
        ties: Option<(Expr, Expr)>,
        red: &mut Vec<Frame>,
        cx: &Cx,
        flows: &mut Vec<(String, Expr)>,
    ) -> Result<(), GradError> {
        let Expr::Reduce {
            var, lo, hi, body, ..
        } = e
        else {
            return Ok(());
        };
        let body_bar = match ties {
            None => bar,
            Some((result, count)) => Expr::call(
                Func::Select,
                vec![
                    Expr::binary(BinOp::Eq, (**body).clone(), result),
                    partials::div(bar, count),
                    Expr::Float(0.0),
                ],
            ),
        };
        let depth = self.scope.len();
        self.scope.push(var.clone(), loop_binding(cx.block));
        let frame = self.frame(FrameKind::Loop {
            var: var.clone(),
            lo: (**lo).clone(),
            hi: (**hi).clone(),
            reduce: true,
        });
        red.push(frame);
        let r = self.backprop(body, body_bar, red, cx, flows);
        red.pop();
        self.scope.truncate(depth);
        r
    }
}

fn loop_binding(block: usize) -> Binding {
    Binding {
        block,
        dtype: DType::I32,
        active: false,
        is_let: false,
    }
}

/// `sum(var in lo..hi: body)`.
pub(super) fn sum(var: &str, lo: Expr, hi: Expr, body: Expr) -> Expr {
    crate::builder::reduce(ReduceOp::Sum, var, lo, hi, body)
}

/// `bar` summed over the reductions `red` (innermost inside).
fn wrap_sums(mut bar: Expr, red: &[Frame]) -> Expr {
    for f in red.iter().rev() {
        if let FrameKind::Loop { var, lo, hi, .. } = &f.kind {
            bar = sum(var, lo.clone(), hi.clone(), bar);
        }
    }
    bar
}

/// Replaces the binding `name` by its `value` in `e`, refusing (before
/// building it) a result of more than [`MAX_INLINED_NODES`] nodes.
pub(super) fn write_out(
    e: &mut Expr,
    name: &str,
    value: &Expr,
    span: Span,
) -> Result<(), GradError> {
    let (mut uses, mut size, mut value_size) = (0usize, 0usize, 0usize);
    e.walk(&mut |n| {
        size += 1;
        uses += usize::from(matches!(n, Expr::Var(v) if v == name));
    });
    if uses == 0 {
        return Ok(());
    }
    value.walk(&mut |_| value_size += 1);
    let nodes = uses.saturating_mul(value_size).saturating_add(size);
    if nodes > MAX_INLINED_NODES {
        return Err(GradError::Unsupported(Diagnostic::new(
            span,
            format!(
                "the derivative flowing out of this statement would hold more than \
                 {MAX_INLINED_NODES} expression nodes once the loop's bindings are written out \
                 (`{name}` is used {uses} times); split the loop or bind fewer shared values in it"
            ),
        )));
    }
    e.substitute(name, value);
    Ok(())
}

/// True when `e` reads the name `name`.
pub(super) fn mentions(e: &Expr, name: &str) -> bool {
    let mut found = false;
    e.walk(&mut |n| found |= matches!(n, Expr::Var(v) if v == name));
    found
}

/// The loop variable a frame binds, when it binds one.
pub(super) fn frame_loop(f: &Frame) -> Option<LoopVar> {
    match &f.kind {
        FrameKind::Loop { var, lo, hi, .. } => Some(LoopVar {
            name: var.clone(),
            lo: lo.clone(),
            hi: hi.clone(),
        }),
        FrameKind::Cond => None,
    }
}
