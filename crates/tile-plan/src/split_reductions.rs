//! `split_reductions`: find the statements outside any nest that a
//! `full_reduction` kernel can run in parallel.
//!
//! A store outside every loop nest, `t[0] = F(op(i in lo..hi: B(i)))`, is
//! one statement: its only write comes after all its reads. When its value
//! holds exactly one reduction not inside another, over a range of size
//! symbols, producing a float, the reduction may run in two stages: its
//! range cut into at most [`PARTIALS`] consecutive chunks of equal length
//! ([`full_chunks`]), each chunk reduced in a fixed order (in parallel
//! with the others), then the chunks' results combined in chunk order and `F`
//! applied before the store. Floating-point reductions are reassociated
//! this way everywhere in Tile (rows are split over threads too); the
//! chunks depend on the range's length only, so the result is the same on
//! every run and any thread count.
//!
//! [`split_full_reductions`] then records each such kernel's parts
//! ([`FullParts`]: the chunk's reduction, the body, the final store) in
//! [`Kernel::full`], so the targets print them rather than rewriting the
//! statement themselves.

use crate::{Kernel, Mapping};
use tile_ir::{DType, Expr, Func, LoopVar, Program, ReduceOp, Stmt};

/// The most chunks a full reduction's range is cut into.
pub const PARTIALS: i64 = 256;

/// The chunks of a full reduction over `n` values: `(count, length)`. At
/// most [`PARTIALS`] chunks of `length` consecutive values, none empty
/// (the last may be shorter), and one empty chunk when `n <= 0`, so the
/// store still runs.
pub fn full_chunks(n: i64) -> (i64, i64) {
    if n <= 0 {
        return (1, 0);
    }
    let p = n.min(PARTIALS);
    let len = n / p + i64::from(n % p != 0);
    (n / len + i64::from(n % len != 0), len)
}

/// The split variable (the reduction's variable and range) when `s` is a
/// store a `full_reduction` kernel runs.
pub fn full_reduction(program: &Program, s: &Stmt) -> Option<LoopVar> {
    let Stmt::Store { idx, value, .. } = s else {
        return None;
    };
    if idx.iter().any(|e| e.has_reduction()) {
        return None;
    }
    let mut found = Vec::new();
    top_reductions(value, &mut found);
    let [Expr::Reduce { var, lo, hi, .. }] = found.as_slice() else {
        return None;
    };
    let symbols = program.size_symbols();
    let sized = |e: &Expr| evaluable(e, &symbols);
    let t = tile_ir::infer_type(found[0], &|_| None, program);
    (sized(lo) && sized(hi) && matches!(t, DType::F32 | DType::F64)).then(|| LoopVar {
        name: var.clone(),
        lo: (**lo).clone(),
        hi: (**hi).clone(),
    })
}

/// Whether `e` is a bound the runtimes evaluate at launch
/// (`tile_ir::args::eval_int`): literals and size symbols under `-`, `+`,
/// `-`, `*` and `/`.
pub(crate) fn evaluable(e: &Expr, symbols: &[String]) -> bool {
    use tile_ir::{BinOp, UnOp};
    match e {
        Expr::Int(_) => true,
        Expr::Var(n) => symbols.contains(n),
        Expr::Unary(UnOp::Neg, a) => evaluable(a, symbols),
        Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem, a, b, _) => {
            evaluable(a, symbols) && evaluable(b, symbols)
        }
        _ => false,
    }
}

/// The reductions of `e` not inside another one, in evaluation order.
pub fn top_reductions<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    if matches!(e, Expr::Reduce { .. }) {
        out.push(e);
        return;
    }
    for c in e.children() {
        top_reductions(c, out);
    }
}

/// Sets [`Kernel::full`] of every `full_reduction` kernel.
pub fn split_full_reductions(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels {
        k.full = FullParts::of(program, k);
    }
}

/// A full reduction's parts, built once by [`split_full_reductions`]
/// ([`crate::Kernel::full`]): both targets print its kernels from them, and
/// a printer keys failure sites by node identity, so every entry point of
/// a kernel prints the same nodes.
#[derive(Clone, Debug, PartialEq)]
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
        if k.mapping != Mapping::FullReduction {
            return None;
        }
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
        top_reductions(value, &mut found);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_range_without_empty_ones() {
        for n in [
            0i64,
            1,
            2,
            3,
            255,
            256,
            257,
            511,
            512,
            513,
            4096,
            16_777_216,
            1 << 40,
        ] {
            let (count, len) = full_chunks(n);
            assert!((1..=PARTIALS).contains(&count), "n={n}");
            if n == 0 {
                assert_eq!((count, len), (1, 0));
                continue;
            }
            // Every chunk starts inside the range; together they cover it.
            assert!((count - 1) * len < n && count * len >= n, "n={n}");
        }
    }

    #[test]
    fn only_single_sized_float_reductions_split() {
        let p = |body: &str| {
            let text = format!(
                "program p(x: in f32[M, N], k: in i32[N], t: out f32[2], u: out i32[1]) {{\n  {body}\n}}"
            );
            let program = tile_ir::parse_program(&text).unwrap();
            full_reduction(&program, &program.body[0]).map(|v| v.name)
        };
        assert_eq!(
            p("t[0] = sum(i in 0..M: sum(j in 0..N: x[i, j]))").as_deref(),
            Some("i")
        );
        assert_eq!(
            p("t[1] = max(j in 0..N: x[0, j]) * 2.0").as_deref(),
            Some("j")
        );
        // Two reductions, an integer one, a bound that is not a size.
        assert_eq!(
            p("t[0] = sum(i in 0..M: x[i, 0]) / sum(j in 0..N: x[0, j])"),
            None
        );
        assert_eq!(p("u[0] = sum(j in 0..N: k[j])"), None);
        assert_eq!(p("t[0] = sum(j in 0..k[0]: x[0, j])"), None);
        assert_eq!(p("t[0] = x[0, 0]"), None);
        // A bound the runtimes cannot evaluate at launch stays serial.
        assert_eq!(p("t[0] = sum(i in 0..max(N - 1, 0): x[0, i])"), None);
        assert_eq!(
            p("t[0] = sum(i in 1..N - 1: x[0, i])").as_deref(),
            Some("i")
        );
    }
}
