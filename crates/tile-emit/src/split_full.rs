//! The pieces both back ends print a `full_reduction` kernel from: the
//! chunk's reduction (over `__full_lo0..__full_hi0`, its body in `f64`), the
//! body alone (for chunks whose values run one after the other), and the
//! store with the reduction replaced by `__full_comb0`, the combined
//! result. Built once per kernel and printed from there: the printer keys
//! failure sites by node identity, and a rebuilt part would be new nodes
//! with new sites.

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
    /// `op(var in __full_lo0..__full_hi0: f64(body))`.
    pub chunk: Box<Expr>,
    /// `f64(body)`.
    pub body: Box<Expr>,
    /// When the body is itself a sum over values without reductions
    /// (`sum(i: sum(j: x[i, j]))`): that sum with its body in `f64`. Both
    /// ranges may then be walked as one (the values reassociated, as
    /// chunks are). Not for `max` and `min`: walked as one, an empty inner
    /// range would drop the identity it gives its row, which decides the
    /// result when every other value is NaN.
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
            ..
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
            } if inner == op && *op == ReduceOp::Sum && !ib.has_reduction() => {
                Some(Box::new(Expr::Reduce {
                    op: *op,
                    var: iv.clone(),
                    lo: il.clone(),
                    hi: ih.clone(),
                    body: Box::new(Expr::call(Func::Cast(DType::F64), vec![(**ib).clone()])),
                }))
            }
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
            finish: vec![Stmt::store(buf.clone(), idx.clone(), v, *span)],
        })
    }
}

impl Printer<'_> {
    /// Declares `frl`, `frh` (the range) and `flen` (a chunk's length), as
    /// `tile_plan::full_chunks` counts them; `with_count` adds `fcount`,
    /// the chunks (for kernels that do not receive it).
    pub fn full_range(&mut self, f: &FullParts, with_count: bool) {
        let (int, parts) = (self.d.int, tile_plan::PARTIALS);
        self.line(format!(
            "const {int} frl = {}, frh = {};",
            self.size_expr(&f.lo),
            self.size_expr(&f.hi)
        ));
        self.line(format!("const {int} fn_ = frh > frl ? frh - frl : 0;"));
        self.line(format!("const {int} fp = fn_ < {parts} ? fn_ : {parts};"));
        self.line(format!(
            "const {int} flen = fp > 0 ? fn_ / fp + (fn_ % fp != 0) : 0;"
        ));
        if with_count {
            self.line(format!(
                "const {int} fcount = flen > 0 ? fn_ / flen + (fn_ % flen != 0) : 1;"
            ));
        }
    }

    /// A `double` accumulator's start for `op` (NaN for `max`/`min`: the
    /// first value replaces it) and the value of an empty range.
    pub fn full_literals(&self, op: ReduceOp) -> (String, String) {
        let f = |x: f64| self.float_lit(x, crate::VTy::F64);
        match op {
            ReduceOp::Sum => (f(0.0), f(0.0)),
            ReduceOp::Max => (f(f64::NAN), f(f64::NEG_INFINITY)),
            ReduceOp::Min => (f(f64::NAN), f(f64::INFINITY)),
        }
    }

    /// Binds the combined result (the `double` held by `comb`) in the
    /// reduction's type and prints the store.
    pub fn full_store(&mut self, f: &FullParts, comb: &str) {
        let depth = self.scope_len();
        let (_, _, name) = full_names();
        match f.t {
            DType::F64 => self.bind_value(&name, comb, crate::VTy::F64),
            _ => self.bind_value(&name, &format!("(({}){comb})", self.d.f32), crate::VTy::F32),
        }
        self.vector_loops = false;
        self.stmts(&f.finish);
        self.truncate_scope(depth);
    }

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
