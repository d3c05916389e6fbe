//! Finds row kernels that are one attention head: for each query row `i`,
//! scores `s_j = F(sum(d in 0..D: q[i, d] * k[j, d]))` (any element-wise
//! `F`: a scale, a causal mask as a `select` on indices), their softmax
//! and the weighted sum of the rows of `v`:
//!
//! ```text
//! m = max(j in 0..N: F(dot))
//! z = sum(j in 0..N: exp(F(dot) - m))
//! for c in 0..E { o[i, c] = G(sum(j in 0..N: exp(F(dot) - m) * v[j, c]), z) }
//! ```
//!
//! Written this way each score is computed `E + 2` times. A target that
//! tiles attention computes a block of rows' scores once, as a tiled
//! product (`q k^T`), into a per-thread row of scores per query row; runs
//! [`Attention::scores`] on each row (the scores, their maximum, the
//! exponentials in place, their sum); multiplies the block's rows of
//! exponentials by `v` as a second tiled product; then runs
//! [`Attention::output`] on each row. Each value is the program's, each
//! reduction in its own order except that the two products accumulate in
//! the program's float type; nothing of size `M x N` is ever in memory.
//!
//! A kernel qualifies only in exactly that shape: leading bindings without
//! a reduction, the three statements above with `F` spelled the same in
//! all three, `q`, `k` and `v` matrices of the program's float type read over their whole
//! dimensions (either index order), written by no statement of the kernel,
//! and `G` reading nothing but `z`, `c`, the row, sizes and the leading
//! bindings.

use crate::find_contractions::{operand, replace_reduction};
use crate::{Kernel, Mapping, Operand, ScratchRow};
use tile_ir::{BinOp, DType, Expr, Func, LoopVar, Program, ReduceOp, Stmt};

/// A row kernel run as tiled attention ([`Kernel::attention`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Attention {
    /// The queries, indexed by the row and `d` (`transposed`: `[d, i]`).
    pub q: Operand,
    /// The keys, as the right operand of `q k^T`: indexed by `d` and `j`
    /// (`transposed`: `[j, d]`, the usual layout).
    pub k: Operand,
    /// The values, as the right operand of `p v`: indexed by `j` and `c`
    /// (`transposed`: `[c, j]`).
    pub v: Operand,
    /// The keys' variable and range (`0..N`).
    pub key: LoopVar,
    /// The dot product's variable and range (`0..D`).
    pub depth: LoopVar,
    /// The output loop's variable and range (`0..E`).
    pub col: LoopVar,
    /// The line of the maximum.
    pub line: u32,
    /// Per row, on its row of scores (which holds the raw dot products):
    /// the leading bindings, `F` in place, the maximum, the
    /// exponentials in place, their sum, stored to [`Attention::scratch`]'s
    /// second row.
    pub scores: Vec<Stmt>,
    /// Per row, after the second product: the leading bindings, `z` read
    /// back, and the output loop with the weighted sum read from the
    /// third scratch row.
    pub output: Vec<Stmt>,
    /// The scratch rows the bodies read: the row of scores (`0..N`), the
    /// row's sum (`0..1`), the row's weighted sums (`0..E`).
    pub scratch: Vec<ScratchRow>,
    /// The dot product as the program wrote it (of `j`).
    pub dot: Expr,
    /// The weighted sum the second product computes, of `c`:
    /// `sum(j in 0..N: scores[j] * v[j, c])`.
    pub weighted: Expr,
    /// The pieces a target that keeps scores in registers renders per
    /// element (CUDA): the leading bindings, per row.
    pub lets: Vec<Stmt>,
    /// The score `F` of query row and key `j`, reading the dot product as
    /// [`Attention::dot_name`].
    pub score: Expr,
    /// The weight `exp(F - m)` of the same, reading the row's maximum by
    /// [`Attention::max`].
    pub weight: Expr,
    /// The row's maximum's name, `m`.
    pub max: String,
    /// The row's sum's name, `z`.
    pub sum: String,
    /// The output's store for row and column `c`, reading `z` and the
    /// weighted sum as [`Attention::weighted_name`].
    pub finish: Stmt,
}

impl Attention {
    /// The name [`Attention::score`] and [`Attention::weight`] read the
    /// dot product by.
    pub fn dot_name() -> String {
        tile_ir::names::generated("attd", 0)
    }

    /// The name [`Attention::finish`] reads the weighted sum by.
    pub fn weighted_name() -> String {
        tile_ir::names::generated("attw", 0)
    }

    /// How `tile plan` describes it.
    pub fn describe(&self) -> String {
        format!(
            "softmax over `{}` in 0..{} of scores from sum({} in 0..{}: {} * {}), times `{}`, at line {}: where tiled, each score computed once as a tiled product (no M x N array); elsewhere the row as written, each score recomputed per use",
            self.key.name, self.key.hi, self.depth.name, self.depth.hi, self.q.buf, self.k.buf, self.v.buf, self.line
        )
    }
}

/// Sets [`Kernel::attention`] on each row kernel of `program` that is one
/// attention head.
pub fn find_attention(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels {
        k.attention = attention(program, k);
    }
}

fn attention(program: &Program, kern: &Kernel) -> Option<Attention> {
    let dtype = program.float_type();
    if kern.mapping != Mapping::RowReduction
        || kern.domain.len() != 1
        || !matches!(dtype, DType::F32 | DType::F64)
    {
        return None;
    }
    let row = &kern.domain[0];
    let n = kern.body.len();
    if n < 3 {
        return None;
    }
    let (lets, tail) = kern.body.split_at(n - 3);
    if lets
        .iter()
        .any(|s| !matches!(s, Stmt::Let { value, .. } if !value.has_reduction()))
    {
        return None;
    }
    // A target evaluates the leading bindings again (per step, per
    // output element), after some of `o` was stored: they may read
    // nothing the kernel writes.
    if crate::find_contractions::reads_any(lets, &kern.stores) {
        return None;
    }
    let lets_names: Vec<String> = lets
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    // m = max(j in 0..N: F)
    let Stmt::Let {
        name: m,
        value:
            Expr::Reduce {
                op: ReduceOp::Max,
                var: j,
                lo,
                hi,
                body: f,
            },
        span,
    } = &tail[0]
    else {
        return None;
    };
    if **lo != Expr::Int(0) {
        return None;
    }
    let key = LoopVar {
        name: j.clone(),
        lo: Expr::Int(0),
        hi: (**hi).clone(),
    };
    // The dot product inside F, and F with it replaced.
    let (dot, q, kop, depth) = find_dot(program, f, row, &key)?;
    let exp_term = |var: &str| -> Expr {
        let mut g = (**f).clone();
        g.substitute(j, &Expr::var(var));
        Expr::call(Func::Exp, vec![Expr::binary(BinOp::Sub, g, Expr::var(m))])
    };
    // z = sum(j' in 0..N: exp(F[j := j'] - m))
    let Stmt::Let {
        name: z,
        value:
            Expr::Reduce {
                op: ReduceOp::Sum,
                var: j2,
                lo: lo2,
                hi: hi2,
                body: e2,
            },
        ..
    } = &tail[1]
    else {
        return None;
    };
    if **lo2 != Expr::Int(0) || **hi2 != key.hi || **e2 != exp_term(j2) {
        return None;
    }
    // for c in 0..E { o[i, c] = G(sum(j'' in 0..N: exp(...) * v[j'', c]), z) }
    let Stmt::For {
        vars,
        body: obody,
        span: ospan,
    } = &tail[2]
    else {
        return None;
    };
    let [col] = &vars[..] else {
        return None;
    };
    let [Stmt::Store {
        buf: out,
        idx: oidx,
        value: g,
        span: sspan,
        ..
    }] = &obody[..]
    else {
        return None;
    };
    if oidx.iter().any(Expr::has_reduction) {
        return None;
    }
    let mut found = Vec::new();
    crate::find_contractions::collect_reductions(g, &mut found);
    let [pv] = &found[..] else {
        return None;
    };
    let Expr::Reduce {
        op: ReduceOp::Sum,
        var: j3,
        lo: lo3,
        hi: hi3,
        body: prod,
    } = pv
    else {
        return None;
    };
    if **lo3 != Expr::Int(0) || **hi3 != key.hi {
        return None;
    }
    let Expr::Binary(BinOp::Mul, x, y, _) = &**prod else {
        return None;
    };
    let key3 = LoopVar {
        name: j3.clone(),
        ..key.clone()
    };
    let v = if **x == exp_term(j3) {
        operand(program, y, None, &key3, col)
    } else if **y == exp_term(j3) {
        operand(program, x, None, &key3, col)
    } else {
        None
    }?;
    // The kernel writes only `o`, which none of the operands is; F and G
    // read only what the rules above allow.
    let operands = [&q.buf, &kop.buf, &v.buf];
    if kern.stores.iter().any(|s| operands.contains(&s)) {
        return None;
    }
    let mut symbols = program.size_symbols();
    symbols.push(row.name.clone());
    symbols.extend(lets_names.iter().cloned());
    let mut f_free = Vec::new();
    f.free_vars(&mut f_free);
    if f_free.iter().any(|n| n != j && !symbols.contains(n)) {
        return None;
    }
    let mut g_names = symbols.clone();
    g_names.push(col.name.clone());
    g_names.push(z.clone());
    // G with the weighted sum taken out (that sum reads `m`, `j`, `v`).
    let mut g_out = g.clone();
    replace_reduction(&mut g_out, &Expr::Int(0));
    let mut g_free = Vec::new();
    g_out.free_vars(&mut g_free);
    if g_free.iter().any(|n| !g_names.contains(n)) {
        return None;
    }
    let mut read = Vec::new();
    f.loaded_buffers(&mut read);
    g_out.loaded_buffers(&mut read);
    if read.iter().any(|b| kern.stores.contains(b)) {
        return None;
    }
    let scores_row = ScratchRow {
        name: tile_ir::names::generated("att", 0),
        dtype,
        lo: Expr::Int(0),
        hi: key.hi.clone(),
    };
    let sum_row = ScratchRow {
        name: tile_ir::names::generated("attz", 0),
        dtype,
        lo: Expr::Int(0),
        hi: Expr::Int(1),
    };
    let out_row = ScratchRow {
        name: tile_ir::names::generated("atto", 0),
        dtype,
        lo: Expr::Int(0),
        hi: col.hi.clone(),
    };
    let at = |var: &str| Expr::load(&scores_row.name, vec![Expr::var(var)]);
    let over = |body: Vec<Stmt>| Stmt::For {
        vars: vec![key.clone()],
        body,
        span: *span,
    };
    let mut f1 = (**f).clone();
    replace_reduction(&mut f1, &at(j));
    let mut scores = lets.to_vec();
    scores.push(over(vec![Stmt::store(
        scores_row.name.clone(),
        vec![Expr::var(j)],
        f1,
        *span,
    )]));
    scores.push(Stmt::Let {
        name: m.clone(),
        value: Expr::Reduce {
            op: ReduceOp::Max,
            var: j.clone(),
            lo: Box::new(Expr::Int(0)),
            hi: Box::new(key.hi.clone()),
            body: Box::new(at(j)),
        },
        span: *span,
    });
    scores.push(over(vec![Stmt::store(
        scores_row.name.clone(),
        vec![Expr::var(j)],
        Expr::call(
            Func::Exp,
            vec![Expr::binary(BinOp::Sub, at(j), Expr::var(m))],
        ),
        *span,
    )]));
    scores.push(Stmt::Let {
        name: z.clone(),
        value: Expr::Reduce {
            op: ReduceOp::Sum,
            var: j.clone(),
            lo: Box::new(Expr::Int(0)),
            hi: Box::new(key.hi.clone()),
            body: Box::new(at(j)),
        },
        span: *span,
    });
    scores.push(Stmt::store(
        sum_row.name.clone(),
        vec![Expr::Int(0)],
        Expr::var(z),
        *span,
    ));
    let mut g1 = g.clone();
    replace_reduction(
        &mut g1,
        &Expr::load(&out_row.name, vec![Expr::var(&col.name)]),
    );
    let mut output = lets.to_vec();
    output.push(Stmt::Let {
        name: z.clone(),
        value: Expr::load(&sum_row.name, vec![Expr::Int(0)]),
        span: *span,
    });
    output.push(Stmt::For {
        vars: vec![col.clone()],
        body: vec![Stmt::store(out.clone(), oidx.clone(), g1, *sspan)],
        span: *ospan,
    });
    let v_at = if v.transposed {
        vec![Expr::var(&col.name), Expr::var(j)]
    } else {
        vec![Expr::var(j), Expr::var(&col.name)]
    };
    let weighted = Expr::Reduce {
        op: ReduceOp::Sum,
        var: j.clone(),
        lo: Box::new(Expr::Int(0)),
        hi: Box::new(key.hi.clone()),
        body: Box::new(Expr::binary(BinOp::Mul, at(j), Expr::load(&v.buf, v_at))),
    };
    let mut score = (**f).clone();
    replace_reduction(&mut score, &Expr::var(&Attention::dot_name()));
    let weight = Expr::call(
        Func::Exp,
        vec![Expr::binary(BinOp::Sub, score.clone(), Expr::var(m))],
    );
    let mut gw = g.clone();
    replace_reduction(&mut gw, &Expr::var(&Attention::weighted_name()));
    let finish = Stmt::store(out.clone(), oidx.clone(), gw, *sspan);
    Some(Attention {
        lets: lets.to_vec(),
        score,
        weight,
        max: m.clone(),
        sum: z.clone(),
        finish,
        dot,
        weighted,
        q,
        k: kop,
        v,
        key,
        depth,
        col: col.clone(),
        line: span.line,
        scores,
        output,
        scratch: vec![scores_row, sum_row, out_row],
    })
}

/// The one reduction of `f`, when it is `sum(d in 0..D: q * k)` with `q`
/// indexed by the row and `d` and `k` by `d` and the key: the reduction,
/// the operands (`k` as the right operand, indexed `[d, j]` unless
/// transposed) and `d`'s range.
fn find_dot(
    program: &Program,
    f: &Expr,
    row: &LoopVar,
    key: &LoopVar,
) -> Option<(Expr, Operand, Operand, LoopVar)> {
    let mut found = Vec::new();
    crate::find_contractions::collect_reductions(f, &mut found);
    let [dot] = &found[..] else {
        return None;
    };
    let Expr::Reduce {
        op: ReduceOp::Sum,
        var: d,
        lo,
        hi,
        body,
    } = dot
    else {
        return None;
    };
    if **lo != Expr::Int(0) {
        return None;
    }
    let Expr::Binary(BinOp::Mul, x, y, _) = &**body else {
        return None;
    };
    let depth = LoopVar {
        name: d.clone(),
        lo: Expr::Int(0),
        hi: (**hi).clone(),
    };
    let pair = operand(program, x, None, row, &depth)
        .zip(operand(program, y, None, key, &depth))
        .or_else(|| {
            operand(program, y, None, row, &depth).zip(operand(program, x, None, key, &depth))
        })?;
    let (q, kk) = pair;
    // `operand` reads `k[j, d]` as not transposed with `j` first; as the
    // right operand (`[d, j]`) that is transposed.
    let k = Operand {
        transposed: !kk.transposed,
        ..kk
    };
    Some((dot.clone(), q, k, depth))
}

impl Attention {
    /// What a target that tiles attention computes for one row, as
    /// statements (`execute_lowered` replays it): the row's dot products
    /// into its row of scores, [`Attention::scores`], the weighted sums
    /// into their row, then [`Attention::output`]'s loop.
    pub fn row_in_steps(&self) -> Vec<Stmt> {
        let span = tile_ir::Span::default();
        let mut body = vec![Stmt::For {
            vars: vec![self.key.clone()],
            body: vec![Stmt::store(
                self.scratch[0].name.clone(),
                vec![Expr::var(&self.key.name)],
                self.dot.clone(),
                span,
            )],
            span,
        }];
        body.extend(self.scores.iter().cloned());
        body.push(Stmt::For {
            vars: vec![self.col.clone()],
            body: vec![Stmt::store(
                self.scratch[2].name.clone(),
                vec![Expr::var(&self.col.name)],
                self.weighted.clone(),
                span,
            )],
            span,
        });
        // The output body's bindings are the scores body's again (the
        // leading ones, and `z` read back): one row binds each once.
        body.extend(self.output.last().cloned());
        body
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, Options};

    fn found(text: &str) -> bool {
        let program = tile_ir::parse_program(text).unwrap();
        let plan = compile(&program, &Options::default()).unwrap();
        plan.kernels[0].attention.is_some()
    }

    #[test]
    fn the_attention_fixture_is_attention() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/programs/neural/attention.tile"),
        )
        .unwrap();
        assert!(found(&text));
    }

    #[test]
    fn a_causal_mask_is_attention_and_a_different_score_is_not() {
        assert!(found(
            "program a(q: in f32[M, D], k: in f32[N, D], v: in f32[N, E], o: out f32[M, E]) {
               for i in 0..M {
                 m = max(j in 0..N: select(j <= i, sum(d in 0..D: q[i, d] * k[j, d]), -1e30))
                 z = sum(j in 0..N: exp(select(j <= i, sum(d in 0..D: q[i, d] * k[j, d]), -1e30) - m))
                 for c in 0..E { o[i, c] = sum(j in 0..N: exp(select(j <= i, sum(d in 0..D: q[i, d] * k[j, d]), -1e30) - m) * v[j, c]) / z }
               }
             }"
        ));
        // A leading binding reads the output the row writes.
        assert!(!found(
            "program a(q: in f32[M, D], k: in f32[N, D], v: in f32[N, E], o: inout f32[M, E]) {
               for i in 0..M {
                 t = o[i, 0]
                 m = max(j in 0..N: sum(d in 0..D: q[i, d] * k[j, d]))
                 z = sum(j in 0..N: exp(sum(d in 0..D: q[i, d] * k[j, d]) - m))
                 for c in 0..E { o[i, c] = sum(j in 0..N: exp(sum(d in 0..D: q[i, d] * k[j, d]) - m) * v[j, c]) / z + t }
               }
             }"
        ));
        // The sum's score is scaled, the maximum's is not.
        assert!(!found(
            "program a(q: in f32[M, D], k: in f32[N, D], v: in f32[N, E], o: out f32[M, E]) {
               for i in 0..M {
                 m = max(j in 0..N: sum(d in 0..D: q[i, d] * k[j, d]))
                 z = sum(j in 0..N: exp(sum(d in 0..D: q[i, d] * k[j, d]) * 0.5 - m))
                 for c in 0..E { o[i, c] = sum(j in 0..N: exp(sum(d in 0..D: q[i, d] * k[j, d]) * 0.5 - m) * v[j, c]) / z }
               }
             }"
        ));
    }
}
