//! Stages the rows a row kernel reads whole in shared memory: each such
//! row is copied from device memory once (16-byte loads where the row
//! start allows), and every reduction and inner loop over it then reads
//! shared memory, so softmax's three passes or LayerNorm's two read the
//! row from device memory once.
//!
//! The lowering decides what is staged (tile-plan's `lower_kernels.rs`):
//! the `f32` rows of tile-plan's fact
//! [`tile_plan::Kernel::rereads`]: inputs the kernel never writes whose
//! whole row (`x[i, v]`, `v` over exactly the box's last dimension) at
//! least two of the row's statements read, so every staged element is in
//! bounds and holds the value a load would return. Those loads read
//! shared memory ([`replace_staged_loads`]); loads of other shapes stay
//! loads. The staged kernel computes the same values in the same order as
//! the streaming one, bit for bit.

use crate::gpu::spell;
use crate::{Printer, VTy};
use tile_ir::{Expr, Program, Stmt};
use tile_plan::kernel_ir::{RowEntry, StagedRow};

/// Whether a loop over `lo..hi` runs over a row in shared memory (so its
/// length fits a 32-bit counter).
pub(crate) fn short(entry: &RowEntry, lo: &Expr, hi: &Expr) -> bool {
    entry.ranges().iter().any(|(l, h)| l == lo && h == hi)
}

/// The name a staged load of `staged[n]` at variable `v` becomes; bound by
/// [`bind_staged`] where `v` is bound.
pub(crate) fn staged_name(n: usize, v: &str) -> String {
    tile_ir::names::generated_for("row", n, v)
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
pub(crate) fn declare_staging(p: &mut Printer, plan: &RowEntry, extended: &Program) {
    let int = p.d.int;
    for line in p.gpu().shared_rows.lines() {
        p.line(line);
    }
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
    p.line(format!("const {int} ro0 = 0;"));
    for n in 1..lens.len() {
        p.line(format!(
            "const {int} ro{n} = ro{} + ((({len} > 0 ? {len} : 0) + 3) & ~3LL);",
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
/// [`crate::gpu::quad_loops`]), so it waits for its own copies only, and no
/// barrier is needed: no thread reads a staged element another thread
/// wrote, in this row or the next.
pub(crate) fn print_staging(p: &mut Printer, staged: &[StagedRow], rv: &str) {
    let g = p.gpu();
    let i32 = g.int32;
    for (n, s) in staged.iter().enumerate() {
        let len = Printer::box_n(&s.buf, 1);
        p.set_line(s.line);
        let site = p.new_site(&s.buf, "load");
        p.open(format!("if ({len} > 0)"));
        let (first, off) = p.row_in_box(&s.buf, rv);
        p.line(p.d.check(&first, site));
        p.line(format!(
            "const float *src = {} + {off} * {len};",
            Printer::ptr_name(&s.buf)
        ));
        p.line(format!("float *dst = tile_rows + ro{n};"));
        p.line(format!("const {i32} len = ({i32}){len};"));
        p.line(format!("{i32} q = ({i32}){} * 4;", g.thread_x));
        p.open(format!("if ({})", spell(g.aligned16, "(src)", "")));
        let step = format!("q += ({i32}){} * 4", g.threads_x);
        p.open(format!("for (; q + 3 < len; {step})"));
        p.line("tile_cp16(dst + q, src + q);");
        p.close();
        p.close();
        p.open(format!("for (; q < len; {step})"));
        p.line(format!(
            "for ({i32} e = q; e < len && e < q + 4; e++) dst[e] = src[e];"
        ));
        p.close();
        p.close();
    }
    p.line("tile_cp_wait();");
}
