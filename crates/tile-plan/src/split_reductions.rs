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

use tile_ir::{DType, Expr, LoopVar, Program, Stmt};

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
fn evaluable(e: &Expr, symbols: &[String]) -> bool {
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
