//! Stages the rows a row kernel reads whole in shared memory: each such
//! row is copied from device memory once (16-byte loads where the row
//! start allows), and every reduction and inner loop over it then reads
//! shared memory, so softmax's three passes or LayerNorm's two read the
//! row from device memory once.
//!
//! A load `x[i, v]` is staged when `x` is a 2-D `f32` input the kernel
//! does not write, `i` is the row variable and `v` is the variable of a
//! reduction or inner loop that ranges over exactly `x`'s last box
//! dimension: then the program reads the whole row anyway, every staged
//! element is in bounds, and the values are the ones a load would return.
//! Only rows at least two of the row's statements read (bindings, loops,
//! or a store of the row's result) are staged. Loads of other shapes stay
//! loads. The staged kernel computes the same
//! values in the same order as the streaming one, bit for bit.

use tile_emit::{Printer, VTy};
use tile_ir::{DType, Expr, Program, Stmt};
use tile_plan::Kernel;
use tile_plan::ScratchRow;

/// A buffer whose rows a kernel stages, and the range of its last box
/// dimension (the row).
#[derive(Clone, Debug)]
pub(crate) struct StagedRow {
    pub buf: String,
    pub lo: Expr,
    pub hi: Expr,
    /// Source line of the first statement that reads the row (failures of
    /// the staging copy report it).
    pub line: u32,
}

/// What a `_rows` entry point runs: the row body (with values cached in
/// scratch rows where [`tile_plan::cache_reduced_values`] found some), the staged
/// input rows and the scratch rows, all in dynamic shared memory.
pub(crate) struct RowPlan {
    pub body: Vec<Stmt>,
    pub staged: Vec<StagedRow>,
    pub scratch: Vec<ScratchRow>,
}

impl RowPlan {
    /// The range of every row in shared memory, staged rows first (the
    /// runtime sizes the dynamic shared memory from them).
    pub fn ranges(&self) -> Vec<(Expr, Expr)> {
        self.staged
            .iter()
            .map(|s| (s.lo.clone(), s.hi.clone()))
            .chain(self.scratch.iter().map(|s| (s.lo.clone(), s.hi.clone())))
            .collect()
    }

    /// Whether a loop over `lo..hi` runs over a row in shared memory (so
    /// its length fits a 32-bit counter).
    pub fn short(&self, lo: &Expr, hi: &Expr) -> bool {
        self.ranges().iter().any(|(l, h)| l == lo && h == hi)
    }
}

/// The `_rows` entry point of a block-shareable row kernel, or `None` when
/// it would stage nothing.
pub(crate) fn row_plan(program: &Program, k: &Kernel) -> Option<RowPlan> {
    let row = k.domain.first()?;
    // Shared memory holds f32 scratch rows only.
    let (body, scratch) = match &k.cached {
        Some(c) if c.scratch.iter().all(|s| s.dtype == DType::F32) => {
            (c.body.clone(), c.scratch.clone())
        }
        _ => (k.body.clone(), vec![]),
    };
    // Only rows several statements read: a row read once is read once
    // from device memory either way.
    let staged = reread_rows(program, &row.name, &body, &k.stores);
    (!staged.is_empty() || !scratch.is_empty()).then_some(RowPlan {
        body,
        staged,
        scratch,
    })
}

/// The buffers with at least one stageable load in `body` (a row kernel's
/// over `row` that writes `stores`), in the order of the statements that
/// first read them.
fn staged_rows(program: &Program, row: &str, body: &[Stmt], stores: &[String]) -> Vec<StagedRow> {
    let candidates: Vec<StagedRow> = program
        .params
        .iter()
        .filter(|p| p.dtype == DType::F32 && p.dims.len() == 2 && !stores.contains(&p.name))
        .map(|p| StagedRow {
            buf: p.name.clone(),
            lo: p.dims[1].lo.clone(),
            hi: p.dims[1].hi.clone(),
            line: 0,
        })
        .collect();
    let mut found: Vec<StagedRow> = Vec::new();
    for s in body {
        let mut probe = s.clone();
        let mut hits = Vec::new();
        rewrite_stmt(&mut probe, row, &candidates, &mut hits);
        for h in hits {
            if !found.iter().any(|f| f.buf == h) {
                if let Some(c) = candidates.iter().find(|c| c.buf == h) {
                    found.push(StagedRow {
                        line: s.span().line,
                        ..c.clone()
                    });
                }
            }
        }
    }
    found
}

/// The rows a row kernel stages, or (streaming) may hold in registers
/// between its loops ([`crate::quad_loops::Held`]): the stageable rows of
/// `body` read by at least two of its statements.
pub(crate) fn reread_rows(
    program: &Program,
    row: &str,
    body: &[Stmt],
    stores: &[String],
) -> Vec<StagedRow> {
    let mut rows = staged_rows(program, row, body, stores);
    rows.retain(|r| {
        let readers = body
            .iter()
            .filter(|s| {
                let mut probe = (*s).clone();
                let mut hits = Vec::new();
                rewrite_stmt(&mut probe, row, std::slice::from_ref(r), &mut hits);
                !hits.is_empty()
            })
            .count();
        readers >= 2
    });
    rows
}

/// The name a staged load of `staged[n]` at variable `v` becomes; bound by
/// [`bind_staged`] where `v` is bound.
pub(crate) fn staged_name(n: usize, v: &str) -> String {
    format!("__row{n}_{v}")
}

/// Replaces the stageable loads of `s` by the names [`bind_staged`]
/// binds. Only loads inside a `let`'s reductions or directly in the body
/// of a row-level `for` are replaced, which is where the row kernel binds
/// those variables itself.
pub(crate) fn replace_staged_loads(s: &mut Stmt, row: &str, staged: &[StagedRow]) {
    rewrite_stmt(s, row, staged, &mut Vec::new());
}

fn rewrite_stmt(s: &mut Stmt, row: &str, staged: &[StagedRow], hits: &mut Vec<String>) {
    match s {
        // A binding's or a row result's top-level reductions (a store
        // outside any loop, such as `y[i] = m + log(sum(...))`, is reduced
        // by the block like a binding).
        Stmt::Let { value, .. } | Stmt::Store { value, .. } => {
            rewrite_expr(value, row, None, staged, true, hits)
        }
        Stmt::For { vars, body, .. } if vars.len() == 1 => {
            let lv = vars[0].clone();
            let bound = Some((lv.name.as_str(), &lv.lo, &lv.hi));
            for t in body {
                match t {
                    Stmt::Let { value, .. } => rewrite_expr(value, row, bound, staged, false, hits),
                    Stmt::Store { idx, value, .. } => {
                        for e in idx.iter_mut() {
                            rewrite_expr(e, row, bound, staged, false, hits);
                        }
                        rewrite_expr(value, row, bound, staged, false, hits);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// `bound`: the innermost variable the row kernel binds here and its
/// range; `enter`: whether reductions bind their own variable (top-level
/// reductions of a `let`) or are left alone (reductions inside a loop body
/// are printed by the generic printer).
fn rewrite_expr(
    e: &mut Expr,
    row: &str,
    bound: Option<(&str, &Expr, &Expr)>,
    staged: &[StagedRow],
    enter: bool,
    hits: &mut Vec<String>,
) {
    match e {
        Expr::Reduce {
            var, lo, hi, body, ..
        } => {
            if enter {
                let (var, lo, hi) = (var.clone(), (**lo).clone(), (**hi).clone());
                rewrite_expr(body, row, Some((&var, &lo, &hi)), staged, false, hits);
            }
        }
        Expr::Load { buf, idx, .. } => {
            if let (Some((v, lo, hi)), [Expr::Var(r), Expr::Var(c)]) = (bound, idx.as_slice()) {
                if r == row && c == v && v != row {
                    if let Some(n) = staged
                        .iter()
                        .position(|s| &s.buf == buf && &s.lo == lo && &s.hi == hi)
                    {
                        hits.push(buf.clone());
                        *e = Expr::var(&staged_name(n, v));
                        return;
                    }
                }
            }
            for i in idx.iter_mut() {
                rewrite_expr(i, row, bound, staged, enter, hits);
            }
        }
        _ => {
            for c in e.children_mut() {
                rewrite_expr(c, row, bound, staged, enter, hits);
            }
        }
    }
}

/// Makes the staged elements at variable `v` visible where `q` (C code)
/// holds `v - lo` for a loop over `lo..hi`: `tile_rows[ro{n} + q]`.
pub(crate) fn bind_staged(
    p: &mut Printer,
    staged: &[StagedRow],
    v: &str,
    q: &str,
    lo: &Expr,
    hi: &Expr,
) {
    for (n, s) in staged.iter().enumerate() {
        if &s.lo == lo && &s.hi == hi {
            p.bind_value(
                &staged_name(n, v),
                &format!("tile_rows[ro{n} + {q}]"),
                VTy::F32,
            );
        }
    }
}

/// The kernel-level declarations: the dynamic shared array, each row's
/// offset in it (rounded up to four floats, so every row starts on a
/// 16-byte boundary), and the scratch rows' pointers (parameters of
/// `extended`).
pub(crate) fn declare_staging(p: &mut Printer, plan: &RowPlan, extended: &Program) {
    p.line("extern __shared__ float4 tile_rows4[];");
    p.line("float *const tile_rows = reinterpret_cast<float *>(tile_rows4);");
    let lens: Vec<String> = plan
        .staged
        .iter()
        .map(|s| Printer::box_n(&s.buf, 1))
        .chain(
            plan.scratch
                .iter()
                .map(|s| format!("({})", p.extent(&s.lo, &s.hi))),
        )
        .collect();
    p.line("const long long ro0 = 0;");
    for n in 1..lens.len() {
        p.line(format!(
            "const long long ro{n} = ro{} + ((({len} > 0 ? {len} : 0) + 3) & ~3LL);",
            n - 1,
            len = lens[n - 1]
        ));
    }
    let first = plan.staged.len();
    for (n, s) in plan.scratch.iter().enumerate() {
        if let Some(q) = extended.param(&s.name) {
            p.declare_param(q, true, &format!("(tile_rows + ro{})", first + n));
        }
    }
}

/// The copy of row `rv` of every staged buffer into shared memory: 16-byte
/// asynchronous copies where the row start is aligned (the copies of
/// every staged row are in flight together), element by element otherwise
/// and for a ragged end. A row outside a buffer's box reports the failure
/// before anything is read.
///
/// Each thread copies exactly the quads it reads in the row's loops
/// (elements `4 t .. 4 t + 3`, then `blockDim.x * 4` further on; see
/// [`crate::quad_loops`]), so it waits for its own copies only, and no
/// barrier is needed: no thread reads a staged element another thread
/// wrote, in this row or the next.
pub(crate) fn print_staging(p: &mut Printer, staged: &[StagedRow], rv: &str) {
    for (n, s) in staged.iter().enumerate() {
        let len = Printer::box_n(&s.buf, 1);
        let rows = Printer::box_n(&s.buf, 0);
        let lo0 = p.box_lo(&s.buf, 0);
        p.set_line(s.line);
        let site = p.new_site(&s.buf, "load");
        p.open(format!("if ({len} > 0)"));
        let (first, off) = if lo0 == "0" {
            (format!("{rv} >= 0 && {rv} < {rows}"), rv.to_string())
        } else {
            (
                format!("{rv} >= {lo0} && {rv} < {lo0} + {rows}"),
                format!("({rv} - {lo0})"),
            )
        };
        p.line(format!("if (!({first})) TILE_FAIL({site});"));
        p.line(format!(
            "const float *src = {} + {off} * {len};",
            Printer::ptr_name(&s.buf)
        ));
        p.line(format!("float *dst = tile_rows + ro{n};"));
        p.line(format!("const int len = (int){len};"));
        p.line("int q = (int)threadIdx.x * 4;");
        p.open("if ((reinterpret_cast<unsigned long long>(src) & 15ULL) == 0)");
        p.open("for (; q + 3 < len; q += (int)blockDim.x * 4)");
        p.line("tile_cp16(dst + q, src + q);");
        p.close();
        p.close();
        p.open("for (; q < len; q += (int)blockDim.x * 4)");
        p.line("for (int e = q; e < len && e < q + 4; e++) dst[e] = src[e];");
        p.close();
        p.close();
    }
    p.line("tile_cp_wait();");
}

/// Bytes of dynamic shared memory a launch needs for rows over `ranges`
/// at these sizes, and the longest row's length; `None` when a length
/// cannot be evaluated.
pub(crate) fn staging_bytes(ranges: &[(Expr, Expr)], sizes: &tile_ir::Sizes) -> Option<(u64, u64)> {
    let mut total: u64 = 0;
    let mut longest: u64 = 0;
    for (lo, hi) in ranges {
        let lo = tile_ir::args::eval_int(lo, sizes)?;
        let hi = tile_ir::args::eval_int(hi, sizes)?;
        let len = hi.checked_sub(lo)?.max(0) as u64;
        longest = longest.max(len);
        total = total.checked_add(len.div_ceil(4) * 16)?;
    }
    Some((total, longest))
}
