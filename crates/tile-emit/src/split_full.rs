//! The pieces both back ends print a `full_reduction` kernel from: the
//! chunk's reduction (over `__full_lo..__full_hi`, its body in `f64`), the
//! body alone (for chunks whose values run one after the other), and the
//! store with the reduction replaced by `__full_comb`, the combined
//! result. Built once per kernel and kept while printed (the printer
//! keys sites by node address).

use crate::printer::Printer;
use tile_ir::{DType, Expr, Func, Program, ReduceOp, Stmt};
use tile_plan::Kernel;

/// A full reduction's parts.
pub struct FullParts {
    /// The reduction's operator.
    pub op: ReduceOp,
    /// The split variable.
    pub var: String,
    /// The range's start (size symbols only).
    pub lo: Expr,
    /// One past its end.
    pub hi: Expr,
    /// The reduction's type (`f32` or `f64`).
    pub t: DType,
    /// Whether the reduced body holds reductions of its own.
    pub nested: bool,
    /// Whether those hold reductions in turn.
    pub deep: bool,
    /// `op(var in __full_lo..__full_hi: f64(body))`.
    pub chunk: Box<Expr>,
    /// `f64(body)`.
    pub body: Box<Expr>,
    /// When the body is itself a reduction with the same operator over
    /// values without reductions (`sum(i: sum(j: x[i, j]))`): that
    /// reduction with its body in `f64`. Both ranges may then be walked as
    /// one (the values reassociated, as chunks are).
    pub flat: Option<Box<Expr>>,
    /// The store, its reduction replaced by `__full_comb`.
    pub finish: Vec<Stmt>,
}

/// The IR names the target binds: the chunk's first value, one past its
/// last, and the combined result.
pub fn full_names() -> (String, String, String) {
    (
        tile_ir::names::generated("full_lo", 0),
        tile_ir::names::generated("full_hi", 0),
        tile_ir::names::generated("full_comb", 0),
    )
}

/// Whether a reduction in `e` holds another.
fn nests(e: &Expr) -> bool {
    let mut n = false;
    e.walk(&mut |x| {
        if let Expr::Reduce { body, .. } = x {
            n |= body.has_reduction();
        }
    });
    n
}

impl FullParts {
    /// The parts of `k`, when its body is a store holding one reduction
    /// (what the planner makes a `full_reduction`).
    pub fn of(program: &Program, k: &Kernel) -> Option<FullParts> {
        let [Stmt::Store {
            buf,
            idx,
            value,
            span,
        }] = k.body.as_slice()
        else {
            return None;
        };
        let mut found = Vec::new();
        tile_plan::split_reductions::top_reductions(value, &mut found);
        let [r @ Expr::Reduce {
            op,
            var,
            lo,
            hi,
            body,
        }] = found.as_slice()
        else {
            return None;
        };
        let t = tile_ir::infer_type(r, &|_| None, program);
        let (clo, chi, comb) = full_names();
        let body64 = Expr::call(Func::Cast(DType::F64), vec![(**body).clone()]);
        let chunk = Expr::Reduce {
            op: *op,
            var: var.clone(),
            lo: Box::new(Expr::var(&clo)),
            hi: Box::new(Expr::var(&chi)),
            body: Box::new(body64.clone()),
        };
        let flat = match &**body {
            Expr::Reduce {
                op: inner,
                var: iv,
                lo: il,
                hi: ih,
                body: ib,
            } if inner == op && !ib.has_reduction() => Some(Box::new(Expr::Reduce {
                op: *op,
                var: iv.clone(),
                lo: il.clone(),
                hi: ih.clone(),
                body: Box::new(Expr::call(Func::Cast(DType::F64), vec![(**ib).clone()])),
            })),
            _ => None,
        };
        let mut v = value.clone();
        replace_first(&mut v, r, &Expr::var(&comb));
        Some(FullParts {
            op: *op,
            var: var.clone(),
            lo: (**lo).clone(),
            hi: (**hi).clone(),
            t,
            nested: body.has_reduction(),
            deep: nests(body),
            chunk: Box::new(chunk),
            body: Box::new(body64),
            flat,
            finish: vec![Stmt::Store {
                buf: buf.clone(),
                idx: idx.clone(),
                value: v,
                span: *span,
            }],
        })
    }
}

impl Printer<'_> {
    /// `acc = acc op v;` for `double` values (the helpers `tile_max_f64`
    /// and `tile_min_f64` of the target's library).
    pub fn combine_f64(&mut self, op: ReduceOp, acc: &str, v: &str) -> String {
        match op {
            ReduceOp::Sum => format!("{acc} = {acc} + {v};"),
            ReduceOp::Max => {
                let f = self.helper_call("tile_max_f64");
                format!("{acc} = {f}({acc}, {v});")
            }
            ReduceOp::Min => {
                let f = self.helper_call("tile_min_f64");
                format!("{acc} = {f}({acc}, {v});")
            }
        }
    }
}

/// Replaces the first occurrence of `target` in `e` by `with`.
fn replace_first(e: &mut Expr, target: &Expr, with: &Expr) -> bool {
    if e == target {
        *e = with.clone();
        return true;
    }
    e.children_mut()
        .into_iter()
        .any(|c| replace_first(c, target, with))
}
