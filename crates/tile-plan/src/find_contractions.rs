//! Finds row kernels that are matrix products with an element-wise
//! epilogue (`z = sum(k in 0..K: a[i, k] * b[k, j]) + bias[j]; y[i, j] =
//! ...`): a target that tiles contractions computes the products of a
//! block of rows and columns at a time, both operands' blocks kept in
//! cache, then runs the row's statements (the epilogue) on those products.
//!
//! A kernel qualifies when all of these hold (otherwise it keeps its row
//! form, and `find_costs` notes the re-read column):
//! - it is a row kernel over `i` whose body is one loop over `j` (after
//!   bindings that hold no reduction), with no nested loop or `if` inside,
//!   and the plan proved the loop's iterations independent (lanes);
//! - or it is batched: a row kernel over a batch variable `h` whose body
//!   is one loop over `i, j` (`for h in 0..B, i in 0..M, j in 0..N`), the
//!   plan proved the iterations over `j` independent, and every buffer the
//!   loop writes is read and written at one index list only, which holds
//!   `i` and `j` themselves (so distinct `(i, j)` touch distinct elements);
//!   an operand is then either a 3-D matrix indexed by `h` first
//!   (`a[h, i, k]`: one matrix per batch, `h` over its whole first
//!   dimension) or a 2-D one (shared by every batch);
//! - the loop's statements hold exactly one reduction, a `sum` over `k`
//!   from 0 of the product of two loads of matrices of the program's float
//!   type (`f32` or `f64`): one indexed by
//!   `i` and `k` (either order: `a` or `a` transposed), the other by `k`
//!   and `j` (either order);
//! - each of those indices runs over exactly its dimension: `i`, `j` and
//!   `k` start at 0 and end at the extent of the dimensions they index, so
//!   every read is in bounds by construction and needs no check;
//! - the kernel writes neither operand, and the bindings before the loop
//!   (which a target evaluates again for each block of products) read
//!   nothing the kernel writes.
//!
//! The epilogue is the kernel's body with the sum replaced by a read of a
//! per-thread scratch row of products (`__dot[j - jb]`) and the loop over
//! `j` run over one block of columns (`jb..je`,
//! [`contraction_block_names`], bound by the target).

use crate::{Kernel, Mapping, ScratchRow};
use tile_ir::{BinOp, DType, Expr, LoopVar, Program, ReduceOp, Stmt};

/// Columns of products a tiled contraction computes per block (the
/// scratch row's length).
pub const CONTRACTION_COLUMNS: i64 = 512;

/// One operand of a contraction.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// The matrix read.
    pub buf: String,
    /// Whether it is read transposed: `a[k, i]` for the left operand,
    /// `b[j, k]` for the right one.
    pub transposed: bool,
    /// Whether it holds one matrix per batch (a 3-D buffer indexed by the
    /// batch variable first, [`Contraction::batch`]); otherwise a 2-D
    /// matrix every batch reads.
    pub batched: bool,
}

/// A row kernel run as a tiled contraction ([`Kernel::contraction`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Contraction {
    /// The batch variable, the kernel's row variable, when the product is
    /// batched (`for h in 0..B, i in 0..M, j in 0..N`); `None` for a plain
    /// product.
    pub batch: Option<LoopVar>,
    /// The product's row variable and range: the kernel's row variable,
    /// or the loop's first one in a batched product.
    pub row: LoopVar,
    /// The left operand, indexed by the row variable and `k`.
    pub a: Operand,
    /// The right operand, indexed by `k` and the column variable.
    pub b: Operand,
    /// The column loop's variable and range (the product's columns).
    pub col: LoopVar,
    /// The reduction's variable and range (`lo` is 0).
    pub k: LoopVar,
    /// The line of the sum.
    pub line: u32,
    /// The sum itself, as the program wrote it.
    pub sum: Expr,
    /// The operands' and products' type (the program's float type).
    pub dtype: DType,
    /// The kernel's body run on a block of products: the column loop over
    /// `jb..je`, the sum replaced by a read of [`Contraction::scratch`].
    pub epilogue: Vec<Stmt>,
    /// The scratch row of products the epilogue reads.
    pub scratch: ScratchRow,
    /// The epilogue for one element `(i, j)`, the product bound to
    /// [`Contraction::value_name`]: the leading bindings, then the loop's
    /// statements with the sum replaced by that name (what a GPU thread
    /// runs for each product it holds).
    pub per_element: Vec<Stmt>,
    /// The epilogue's statements, as `tile plan` names what was fused.
    pub fused: usize,
}

impl Contraction {
    /// `a[i, k] * b[k, j]`, as `tile plan` prints the product.
    pub fn describe(&self) -> String {
        let (i, j, k) = (&self.row.name, &self.col.name, &self.k.name);
        let h = self.batch.as_ref().map(|b| b.name.as_str());
        let index = |op: &Operand, first: &str, second: &str| match (op.batched, h) {
            (true, Some(h)) => format!("{}[{h}, {first}, {second}]", op.buf),
            _ => format!("{}[{first}, {second}]", op.buf),
        };
        let a = if self.a.transposed {
            index(&self.a, k, i)
        } else {
            index(&self.a, i, k)
        };
        let b = if self.b.transposed {
            index(&self.b, j, k)
        } else {
            index(&self.b, k, j)
        };
        let each = h.map_or(String::new(), |h| format!(" for each {h}"));
        format!(
            "sum({k} in 0..{}: {a} * {b}) at line {}, tiled over {i} and {j}{each}; {} statement{} fused as its epilogue; accumulates in {}",
            self.k.hi,
            self.line,
            self.fused,
            if self.fused == 1 { "" } else { "s" },
            self.dtype.name()
        )
    }
}

/// The IR names of a block's first column and one past its last, which
/// a target binds before running [`Contraction::epilogue`].
pub fn contraction_block_names() -> (String, String) {
    (
        tile_ir::names::generated("ctr_b", 0),
        tile_ir::names::generated("ctr_e", 0),
    )
}

impl Contraction {
    /// The name [`Contraction::per_element`] reads the product by.
    pub fn value_name() -> String {
        tile_ir::names::generated("dotv", 0)
    }

    /// What a target that tiles the contraction runs for one row, as
    /// statements: each block of columns (`jb..je`, [`CONTRACTION_COLUMNS`]
    /// wide) fills the scratch row with its products, then runs the
    /// epilogue. `execute_lowered` replays it.
    pub fn row_by_blocks(&self) -> Vec<Stmt> {
        use tile_ir::{Func, Span};
        let span = Span::default();
        let (jb, je) = contraction_block_names();
        let blk = tile_ir::names::generated("ctr_blk", 0);
        let width = Expr::Int(CONTRACTION_COLUMNS);
        let blocks = Expr::binary(
            BinOp::Div,
            Expr::binary(
                BinOp::Add,
                self.col.hi.clone(),
                Expr::Int(CONTRACTION_COLUMNS - 1),
            ),
            width.clone(),
        );
        let first = Expr::binary(BinOp::Mul, Expr::var(&blk), width.clone());
        let fill = Stmt::For {
            vars: vec![LoopVar {
                name: self.col.name.clone(),
                lo: Expr::var(&jb),
                hi: Expr::var(&je),
            }],
            body: vec![Stmt::store(
                self.scratch.name.clone(),
                vec![Expr::binary(
                    BinOp::Sub,
                    Expr::var(&self.col.name),
                    Expr::var(&jb),
                )],
                self.sum.clone(),
                span,
            )],
            span,
        };
        let mut body = vec![
            Stmt::Let {
                name: jb.clone(),
                value: first,
                span,
            },
            Stmt::Let {
                name: je,
                value: Expr::call(
                    Func::Min,
                    vec![
                        self.col.hi.clone(),
                        Expr::binary(BinOp::Add, Expr::var(&jb), width),
                    ],
                ),
                span,
            },
            fill,
        ];
        body.extend(self.epilogue.iter().cloned());
        let blocks = Stmt::For {
            vars: vec![LoopVar {
                name: blk,
                lo: Expr::Int(0),
                hi: blocks,
            }],
            body,
            span,
        };
        // A batched product's kernel row is a batch: each of its rows in
        // turn.
        match self.batch {
            Some(_) => vec![Stmt::For {
                vars: vec![self.row.clone()],
                body: vec![blocks],
                span,
            }],
            None => vec![blocks],
        }
    }
}

/// Sets [`Kernel::contraction`] on each row kernel of `program` that is a
/// contraction with an epilogue.
pub fn find_contractions(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels {
        k.contraction = contraction(program, k);
    }
}

fn contraction(program: &Program, k: &Kernel) -> Option<Contraction> {
    if k.mapping != Mapping::RowReduction || k.domain.len() != 1 {
        return None;
    }
    let dtype = program.float_type();
    if !matches!(dtype, DType::F32 | DType::F64) {
        return None;
    }
    let (last, lets) = k.body.split_last()?;
    if lets
        .iter()
        .any(|s| !matches!(s, Stmt::Let { value, .. } if !has_reduction(value)))
    {
        return None;
    }
    // The bindings before the loop run again for each block of products
    // (and each product on a GPU), after earlier blocks' stores: they may
    // read nothing the kernel writes.
    if reads_any(lets, &k.stores) {
        return None;
    }
    let Stmt::For { vars, body, span } = last else {
        return None;
    };
    // `for i, j` in a kernel over `i`; `for h, i, j` is a kernel over `h`
    // whose loop is over `i, j`.
    let (batch, row, col) = match &vars[..] {
        [col] => (None, &k.domain[0], col),
        [row, col] => (Some(&k.domain[0]), row, col),
        _ => return None,
    };
    if !k
        .lanes
        .iter()
        .any(|l| l.var == col.name && l.line == span.line && l.lanes.is_none())
    {
        return None;
    }
    if batch.is_some() && !disjoint_rows(body, row, col) {
        return None;
    }
    // Exactly one reduction, in a straight run of bindings and stores.
    let mut found: Vec<Expr> = Vec::new();
    let mut line = 0;
    for s in body {
        match s {
            Stmt::Let { value, span, .. } | Stmt::Store { value, span, .. } => {
                let before = found.len();
                collect_reductions(value, &mut found);
                if found.len() > before {
                    line = span.line;
                }
            }
            _ => return None,
        }
        if let Stmt::Store { idx, .. } = s {
            if idx.iter().any(has_reduction) {
                return None;
            }
        }
    }
    let [sum] = &found[..] else {
        return None;
    };
    let Expr::Reduce {
        op: ReduceOp::Sum,
        var,
        lo,
        hi,
        body: product,
    } = sum
    else {
        return None;
    };
    if **lo != Expr::Int(0) {
        return None;
    }
    let Expr::Binary(BinOp::Mul, x, y, _) = &**product else {
        return None;
    };
    let kvar = LoopVar {
        name: var.clone(),
        lo: Expr::Int(0),
        hi: (**hi).clone(),
    };
    let operands = operand(program, x, batch, row, &kvar)
        .zip(operand(program, y, batch, col, &kvar))
        .or_else(|| {
            operand(program, y, batch, row, &kvar).zip(operand(program, x, batch, col, &kvar))
        });
    let (a, b) = operands?;
    // The left operand pairs the row with k; the right one k with the
    // column (a right operand indexed [j, k] is b transposed).
    let b = Operand {
        transposed: !b.transposed,
        ..b
    };
    if k.stores.contains(&a.buf) || k.stores.contains(&b.buf) {
        return None;
    }
    let scratch = ScratchRow {
        name: tile_ir::names::generated("dot", 0),
        dtype,
        lo: Expr::Int(0),
        hi: Expr::Int(CONTRACTION_COLUMNS),
    };
    let (jb, je) = contraction_block_names();
    let read = Expr::load(
        &scratch.name,
        vec![Expr::binary(
            BinOp::Sub,
            Expr::var(&col.name),
            Expr::var(&jb),
        )],
    );
    let mut inner = body.clone();
    for s in &mut inner {
        if let Stmt::Let { value, .. } | Stmt::Store { value, .. } = s {
            replace_reduction(value, &read);
        }
    }
    let mut per_element = lets.to_vec();
    for s in body {
        let mut s = s.clone();
        if let Stmt::Let { value, .. } | Stmt::Store { value, .. } = &mut s {
            replace_reduction(value, &Expr::var(&Contraction::value_name()));
        }
        per_element.push(s);
    }
    let mut epilogue = lets.to_vec();
    epilogue.push(Stmt::For {
        vars: vec![LoopVar {
            name: col.name.clone(),
            lo: Expr::var(&jb),
            hi: Expr::var(&je),
        }],
        body: inner,
        span: *span,
    });
    Some(Contraction {
        batch: batch.cloned(),
        row: row.clone(),
        a,
        b,
        col: col.clone(),
        k: kvar,
        line,
        sum: sum.clone(),
        dtype,
        epilogue,
        scratch,
        per_element,
        fused: body.len(),
    })
}

/// `e` as a load of a 2-D parameter of the program's float type indexed by `outer` and `k` in
/// either order (`transposed`: `[k, outer]`), each running over exactly
/// its dimension (from 0 to the dimension's extent); with a `batch`
/// variable, also a 3-D one indexed by it first, over exactly its first
/// dimension (`[h, outer, k]`: [`Operand::batched`]).
pub(crate) fn operand(
    program: &Program,
    e: &Expr,
    batch: Option<&LoopVar>,
    outer: &LoopVar,
    k: &LoopVar,
) -> Option<Operand> {
    let Expr::Load { buf, idx, .. } = e else {
        return None;
    };
    let p = program.params.iter().find(|p| &p.name == buf)?;
    if p.dtype != program.float_type() || p.dims.len() != idx.len() {
        return None;
    }
    let is = |e: &Expr, v: &LoopVar| matches!(e, Expr::Var(n) if *n == v.name);
    let exact = |d: &tile_ir::Dim, v: &LoopVar| {
        d.lo == Expr::Int(0) && v.lo == Expr::Int(0) && d.hi == v.hi
    };
    let (batched, idx, dims) = match (batch, &idx[..]) {
        (_, [_, _]) => (false, &idx[..], &p.dims[..]),
        (Some(h), [first, rest @ ..]) if rest.len() == 2 => {
            if !is(first, h) || !exact(&p.dims[0], h) {
                return None;
            }
            (true, rest, &p.dims[1..])
        }
        _ => return None,
    };
    let transposed = if is(&idx[0], outer) && is(&idx[1], k) {
        false
    } else if is(&idx[0], k) && is(&idx[1], outer) {
        true
    } else {
        return None;
    };
    let (d_outer, d_k) = if transposed {
        (&dims[1], &dims[0])
    } else {
        (&dims[0], &dims[1])
    };
    (exact(d_outer, outer) && exact(d_k, k)).then(|| Operand {
        buf: buf.clone(),
        transposed,
        batched,
    })
}

/// Whether the iterations of a batched product's loop over `row, col`
/// touch distinct elements of what they write: every buffer the loop
/// stores to is accessed (read or written) at one index list only, and
/// that list holds `row` and `col` themselves. (Within a row, the lane
/// rule already proved the columns independent; this covers pairs of
/// iterations in different rows.)
fn disjoint_rows(body: &[Stmt], row: &LoopVar, col: &LoopVar) -> bool {
    let mut stores: Vec<(&str, &[Expr])> = Vec::new();
    for s in body {
        if let Stmt::Store { buf, idx, .. } = s {
            stores.push((buf, idx));
        }
    }
    let is = |e: &Expr, v: &LoopVar| matches!(e, Expr::Var(n) if *n == v.name);
    let mut ok = stores
        .iter()
        .all(|(_, idx)| idx.iter().any(|e| is(e, row)) && idx.iter().any(|e| is(e, col)));
    let same = |buf: &str, idx: &[Expr]| {
        stores
            .iter()
            .filter(|(b, _)| *b == buf)
            .all(|(_, at)| *at == idx)
    };
    for s in body {
        if let Stmt::Store { buf, idx, .. } = s {
            ok &= same(buf, idx);
        }
        // Every load, however deep in an expression (`z + y[h, i + 1, j]`).
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Load { buf, idx, .. } = x {
                    ok &= same(buf, idx);
                }
            })
        });
    }
    ok
}

/// Whether any expression of `stmts`, at any depth, loads one of `bufs`.
pub(crate) fn reads_any(stmts: &[Stmt], bufs: &[String]) -> bool {
    let mut found = false;
    for s in stmts {
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                found |= matches!(x, Expr::Load { buf, .. } if bufs.contains(buf));
            })
        });
    }
    found
}

fn has_reduction(e: &Expr) -> bool {
    let mut found = Vec::new();
    collect_reductions(e, &mut found);
    !found.is_empty()
}

/// The reductions of `e` not inside another one.
pub(crate) fn collect_reductions(e: &Expr, out: &mut Vec<Expr>) {
    if matches!(e, Expr::Reduce { .. }) {
        out.push(e.clone());
        return;
    }
    for c in e.children() {
        collect_reductions(c, out);
    }
}

/// Replaces the reductions of `e` not inside another one by `with`.
pub(crate) fn replace_reduction(e: &mut Expr, with: &Expr) {
    if matches!(e, Expr::Reduce { .. }) {
        *e = with.clone();
        return;
    }
    for c in e.children_mut() {
        replace_reduction(c, with);
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, Options};

    fn contraction(text: &str) -> Option<String> {
        let program = tile_ir::parse_program(text).unwrap();
        let plan = compile(&program, &Options::default()).unwrap();
        let k = &plan.kernels[0];
        k.contraction.as_ref().map(|c| c.describe())
    }

    #[test]
    fn a_product_with_an_epilogue_is_a_contraction() {
        let d = contraction(
            "program p(a: in f32[M, K], b: in f32[K, N], bias: in f32[N], y: out f32[M, N], dy: out f32[M, N]) {
               for i in 0..M, j in 0..N {
                 z = sum(k in 0..K: a[i, k] * b[k, j]) + bias[j]
                 y[i, j] = tanh(z)
                 dy[i, j] = 1.0 - tanh(z) * tanh(z)
               }
             }",
        )
        .unwrap();
        assert!(
            d.starts_with("sum(k in 0..K: a[i, k] * b[k, j]) at line 3"),
            "{d}"
        );
    }

    #[test]
    fn transposed_operands_in_either_order_are_contractions() {
        let d = contraction(
            "program p(a: in f32[K, M], b: in f32[N, K], c: out f32[M, N]) {
               for i in 0..M, j in 0..N { c[i, j] = sum(k in 0..K: b[j, k] * a[k, i]) }
             }",
        )
        .unwrap();
        assert!(d.starts_with("sum(k in 0..K: a[k, i] * b[j, k])"), "{d}");
    }

    #[test]
    fn partial_ranges_written_operands_and_two_sums_are_not() {
        // k over part of the dimension: reads would need checks.
        assert_eq!(
            contraction(
                "program p(a: in f32[M, K], b: in f32[K, N], c: out f32[M, N]) {
                   for i in 0..M, j in 0..N { c[i, j] = sum(k in 1..K: a[i, k] * b[k, j]) }
                 }"
            ),
            None
        );
        // Two sums in the loop.
        assert_eq!(
            contraction(
                "program p(a: in f32[M, K], b: in f32[K, N], c: out f32[M, N]) {
                   for i in 0..M, j in 0..N { c[i, j] = sum(k in 0..K: a[i, k] * b[k, j]) + sum(k in 0..K: a[i, k]) }
                 }"
            ),
            None
        );
        // A row of one operand indexed by something else.
        assert_eq!(
            contraction(
                "program p(a: in f32[M, K], b: in f32[K, M], c: out f32[M, M]) {
                   for i in 0..M, j in 0..M { c[i, j] = sum(k in 0..K: a[i, k] * b[k, i]) }
                 }"
            ),
            None
        );
    }

    #[test]
    fn batched_products_are_contractions() {
        // Both operands one matrix per batch.
        let d = contraction(
            "program p(a: in f32[B, M, K], b: in f32[B, K, N], s: in f32[B], y: out f32[B, M, N]) {
               for h in 0..B, i in 0..M, j in 0..N { y[h, i, j] = sum(k in 0..K: a[h, i, k] * b[h, k, j]) * s[h] }
             }",
        )
        .unwrap();
        assert!(
            d.starts_with(
                "sum(k in 0..K: a[h, i, k] * b[h, k, j]) at line 2, tiled over i and j for each h;"
            ),
            "{d}"
        );
        // A shared right operand, read transposed, and a transposed left.
        let d = contraction(
            "program p(x: in f32[B, K, M], w: in f32[N, K], y: out f32[B, M, N]) {
               for h in 0..B, i in 0..M, j in 0..N { y[h, i, j] = sum(k in 0..K: w[j, k] * x[h, k, i]) }
             }",
        )
        .unwrap();
        assert!(d.starts_with("sum(k in 0..K: x[h, k, i] * w[j, k])"), "{d}");
    }

    #[test]
    fn batched_products_that_share_outputs_or_misplace_the_batch_are_not() {
        // The batch index not first.
        assert_eq!(
            contraction(
                "program p(a: in f32[M, B, K], b: in f32[B, K, N], y: out f32[B, M, N]) {
                   for h in 0..B, i in 0..M, j in 0..N { y[h, i, j] = sum(k in 0..K: a[i, h, k] * b[h, k, j]) }
                 }"
            ),
            None
        );
        // Part of the batches: the operand's reads would need checks.
        assert_eq!(
            contraction(
                "program p(a: in f32[C, M, K], b: in f32[K, N], y: out f32[B, M, N]) {
                   for h in 0..B, i in 0..M, j in 0..N { y[h, i, j] = sum(k in 0..K: a[h, i, k] * b[k, j]) }
                 }"
            ),
            None
        );
        // A row reads the next row of what it writes, inside a larger
        // expression: rows of one batch are not independent.
        assert_eq!(
            contraction(
                "program p(a: in f32[B, M, K], b: in f32[B, K, N], y: inout f32[B, P, N]) {
                   for h in 0..B, i in 0..M, j in 0..N { y[h, i, j] = sum(k in 0..K: a[h, i, k] * b[h, k, j]) + y[h, i + 1, N - 1 - j] }
                 }"
            ),
            None
        );
        // A binding before the loop reads what the loop writes: a target
        // evaluates it again after earlier products were stored.
        assert_eq!(
            contraction(
                "program p(a: in f32[B, M, K], b: in f32[B, K, N], y: inout f32[B, M, N]) {
                   for h in 0..B {
                     t = y[h, 0, 0]
                     for i in 0..M, j in 0..N { y[h, i, j] = sum(k in 0..K: a[h, i, k] * b[h, k, j]) + t }
                   }
                 }"
            ),
            None
        );
        assert_eq!(
            contraction(
                "program p(a: in f32[M, K], b: in f32[K, N], y: inout f32[M, N]) {
                   for i in 0..M {
                     t = y[i, 0]
                     for j in 0..N { y[i, j] = sum(k in 0..K: a[i, k] * b[k, j]) + t }
                   }
                 }"
            ),
            None
        );
        // Every row of a batch writes the same row of `r`: rows of one
        // batch are not independent.
        assert_eq!(
            contraction(
                "program p(a: in f32[B, M, K], b: in f32[K, N], y: out f32[B, M, N], r: out f32[B, N]) {
                   for h in 0..B, i in 0..M, j in 0..N {
                     z = sum(k in 0..K: a[h, i, k] * b[k, j])
                     y[h, i, j] = z
                     r[h, j] = z
                   }
                 }"
            ),
            None
        );
    }
}
