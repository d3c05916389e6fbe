//! Stages the rows a row kernel reads whole in shared memory: each such
//! row is copied from device memory once (16-byte loads where the row
//! start allows), and every reduction and inner loop over it then reads
//! shared memory, so softmax's three passes or LayerNorm's two read the
//! row from device memory once.
//!
//! The rows staged are the `f32` rows of tile-plan's fact
//! [`tile_plan::Kernel::rereads`]: inputs the kernel never writes whose
//! whole row (`x[i, v]`, `v` over exactly the box's last dimension) at
//! least two of the row's statements read, so every staged element is in
//! bounds and holds the value a load would return. Those loads read
//! shared memory ([`replace_staged_loads`]); loads of other shapes stay
//! loads. The staged kernel computes the same values in the same order as
//! the streaming one, bit for bit.

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
    // Shared memory holds f32 scratch rows only.
    let (body, scratch) = match &k.cached {
        Some(c) if c.scratch.iter().all(|s| s.dtype == DType::F32) => {
            (c.body.clone(), c.scratch.clone())
        }
        _ => (k.body.clone(), vec![]),
    };
    // Only rows several statements read (a row read once is read once
    // from device memory either way).
    let staged = reread_rows(program, k, &body);
    (!staged.is_empty() || !scratch.is_empty()).then_some(RowPlan {
        body,
        staged,
        scratch,
    })
}

/// The `f32` rows tile-plan found several of `k`'s statements read
/// whole ([`Kernel::rereads`]) that `body` (the kernel's body or its
/// cached one) reads, in the order of the statements that first read
/// them: the rows a kernel stages, or (streaming) may hold in registers
/// between its loops ([`crate::quad_loops::Held`]).
pub(crate) fn reread_rows(program: &Program, k: &Kernel, body: &[Stmt]) -> Vec<StagedRow> {
    let Some(row) = k.domain.first() else {
        return Vec::new();
    };
    let mut found: Vec<StagedRow> = Vec::new();
    for s in body {
        tile_plan::row_level_loads(&mut s.clone(), &row.name, &mut |buf, _, lo, hi| {
            let f32 = program.param(buf).is_some_and(|p| p.dtype == DType::F32);
            let fact = k
                .rereads
                .iter()
                .find(|r| r.buf == buf && r.lo == *lo && r.hi == *hi);
            if let (true, Some(r), false) = (f32, fact, found.iter().any(|f| f.buf == buf)) {
                found.push(StagedRow {
                    buf: r.buf.clone(),
                    lo: r.lo.clone(),
                    hi: r.hi.clone(),
                    line: s.span().line,
                });
            }
            None
        });
    }
    found
}

/// The name a staged load of `staged[n]` at variable `v` becomes; bound by
/// [`bind_staged`] where `v` is bound.
pub(crate) fn staged_name(n: usize, v: &str) -> String {
    format!("__row{n}_{v}")
}

/// Replaces the loads of `s` that read staged rows by the names
/// [`bind_staged`] binds (where the row kernel binds those variables
/// itself: [`tile_plan::row_level_loads`]).
pub(crate) fn replace_staged_loads(s: &mut Stmt, row: &str, staged: &[StagedRow]) {
    tile_plan::row_level_loads(s, row, &mut |buf, v, lo, hi| {
        staged
            .iter()
            .position(|x| x.buf == buf && x.lo == *lo && x.hi == *hi)
            .map(|n| Expr::var(&staged_name(n, v)))
    });
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
        p.set_line(s.line);
        let site = p.new_site(&s.buf, "load");
        p.open(format!("if ({len} > 0)"));
        let (first, off) = p.row_in_box(&s.buf, rv);
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
