//! Chooses what the forward pass keeps for the derivative with
//! [`Saves::Reductions`](super::Saves::Reductions), and writes the forward
//! program that keeps it. Every float binding whose value holds a
//! reduction (a row's mean, variance, maximum, sum of exponentials) is
//! kept: the forward program stores it to `saved_NAME`, indexed by the
//! variables of the loops around it, right after binding it, and the
//! derivative binds it to that load instead of reducing again. A kept
//! value costs one element per iteration of its loops (`M` floats for a
//! per-row statistic); what is derived from it cheaply (`mean = s / N`)
//! is recomputed from the load.

use super::Namer;
use crate::{infer_type, DType, Dim, Expr, LoopVar, Param, Program, Role, Span, Stmt};
use std::collections::HashMap;

/// A binding the forward program keeps.
pub(super) struct Kept {
    /// The binding.
    pub(super) name: String,
    /// The parameter that holds it (`saved_NAME`).
    saved: String,
    /// The loops around the binding, outermost first: the parameter's
    /// box and index.
    loops: Vec<LoopVar>,
    dtype: DType,
    span: Span,
}

impl Kept {
    /// `saved_NAME[i, ..]`, indexed by the loops' variables.
    pub(super) fn load(&self) -> Expr {
        Expr::load(
            &self.saved,
            self.loops.iter().map(|v| Expr::var(&v.name)).collect(),
        )
    }

    /// The parameter, as an output of the forward program or an input of
    /// the derivative.
    pub(super) fn param(&self, role: Role) -> Param {
        Param {
            name: self.saved.clone(),
            role,
            dtype: self.dtype,
            dims: self
                .loops
                .iter()
                .map(|v| Dim {
                    lo: v.lo.clone(),
                    hi: v.hi.clone(),
                })
                .collect(),
            span: self.span,
        }
    }
}

/// The float bindings of `program` (names kept apart by
/// `separate_names`) whose values hold a reduction, in program order;
/// none inside a loop whose range is not made of size symbols (no box
/// could hold its values).
pub(super) fn choose(program: &Program, namer: &mut Namer) -> Vec<Kept> {
    let mut kept = Vec::new();
    let mut types = HashMap::new();
    walk(
        program,
        &program.body,
        &mut Vec::new(),
        &mut types,
        namer,
        &mut kept,
    );
    kept
}

fn walk(
    program: &Program,
    stmts: &[Stmt],
    loops: &mut Vec<LoopVar>,
    types: &mut HashMap<String, DType>,
    namer: &mut Namer,
    kept: &mut Vec<Kept>,
) {
    for s in stmts {
        match s {
            Stmt::Let { name, value, span } => {
                let dtype = infer_type(value, &|n| types.get(n).copied(), program);
                types.insert(name.clone(), dtype);
                let mut reduces = false;
                value.walk(&mut |e| reduces |= matches!(e, Expr::Reduce { .. }));
                if reduces && dtype.is_float() {
                    kept.push(Kept {
                        name: name.clone(),
                        saved: namer.fresh(&format!("saved_{name}")),
                        loops: loops.clone(),
                        dtype,
                        span: *span,
                    });
                }
            }
            Stmt::For { vars, body, .. } => {
                for v in vars {
                    types.insert(v.name.clone(), DType::I32);
                }
                let sizes = program.size_symbols();
                let boxable = vars.iter().all(|v| {
                    let mut only_sizes = true;
                    for bound in [&v.lo, &v.hi] {
                        bound.walk(&mut |e| match e {
                            Expr::Var(n) => only_sizes &= sizes.contains(n),
                            Expr::Int(_) => {}
                            Expr::Binary(..) => {}
                            _ => only_sizes = false,
                        });
                    }
                    only_sizes
                });
                if !boxable {
                    continue;
                }
                let depth = loops.len();
                loops.extend(vars.iter().cloned());
                walk(program, body, loops, types, namer, kept);
                loops.truncate(depth);
            }
            Stmt::If { then, els, .. } => {
                walk(program, then, loops, types, namer, kept);
                walk(program, els, loops, types, namer, kept);
            }
            Stmt::Store { .. } => {}
        }
    }
}

/// `program` (as differentiated: bindings renamed apart, reductions
/// bound) named `NAME_forward`, with a `saved_NAME: out` parameter per
/// kept binding after its own, stored right after the binding.
pub(super) fn forward(program: &Program, kept: &[Kept]) -> Program {
    let mut params = program.params.clone();
    params.extend(kept.iter().map(|k| k.param(Role::Out)));
    Program {
        name: format!("{}_forward", program.name),
        params,
        body: with_stores(&program.body, kept),
        span: program.span,
    }
}

fn with_stores(stmts: &[Stmt], kept: &[Kept]) -> Vec<Stmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        match s {
            Stmt::Let { name, span, .. } => {
                out.push(s.clone());
                if let Some(k) = kept.iter().find(|k| &k.name == name) {
                    let Expr::Load { buf, idx, .. } = k.load() else {
                        unreachable!("a kept value is a load")
                    };
                    out.push(Stmt::store(buf, idx, Expr::var(name), *span));
                }
            }
            Stmt::For { vars, body, span } => out.push(Stmt::For {
                vars: vars.clone(),
                body: with_stores(body, kept),
                span: *span,
            }),
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => out.push(Stmt::If {
                cond: cond.clone(),
                then: with_stores(then, kept),
                els: with_stores(els, kept),
                span: *span,
            }),
            Stmt::Store { .. } => out.push(s.clone()),
        }
    }
    out
}
