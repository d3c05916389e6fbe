//! Prints the body of a `column_reduction` kernel: a block is
//! `blockDim.x` adjacent columns (work items) by `blockDim.y` slices, in
//! a grid-stride loop over groups of columns. A warp holds 32 neighbouring
//! columns, so every step of a reduction down the columns reads
//! neighbouring elements.
//!
//! When the block can share a column's statements (bindings and stores
//! whose reductions do not nest, plain `if`s), each reduction's range is cut
//! into `blockDim.y` consecutive slices, one per thread of the column; the
//! slices' results are combined in slice order by the column's first
//! thread (`tile_col_*` in the prelude), so the result does not depend on
//! timing. Reductions the lowering binds together (`BindTogether`) share
//! one slice range and one loop. Every thread computes the bindings; the
//! first thread of each column stores, and runs each `if` (no loop and no
//! reduction inside, find_row_forms). Threads past the last column work
//! on the last column and never store, so every thread reaches every
//! barrier. Other bodies run each column on its first thread in program
//! order (the launch then gives the block one slice).

use crate::gpu::quad_loops::sfx;
use crate::gpu::spell;
use crate::{Printer, VTy};
use tile_ir::{Expr, Stmt};
use tile_plan::kernel_ir::{LoweredKernel, RowStep};
use tile_plan::Kernel;

/// What the column statements are printed against.
struct ColCtx {
    /// Column reductions printed so far: names accumulators and picks the
    /// shared-memory set (alternating).
    red: usize,
    /// Iterations of each slice loop unrolled together
    /// ([`LoweredKernel::slice_unroll`]).
    unroll: u32,
}

/// Whether the block shares a column's statements (slices per column),
/// as the printer and the launch both need to know: tile-plan's
/// [`tile_plan::Sharing`] of the kernel.
pub fn shares(k: &Kernel) -> bool {
    crate::gpu::print_rows::splits(k)
}

/// Prints the body of a `column_reduction` kernel from its lowered steps.
pub fn column_reduction(p: &mut Printer, k: &Kernel, lowered: &LoweredKernel) {
    let col = &k.domain[0];
    let (g, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
    let (lo, n) = (p.size_expr(&col.lo), p.extent(&col.lo, &col.hi));
    p.line(syn.decls(int, &[("dl0", &lo), ("dn0", &n)]));
    p.line(syn.leave_if("dn0 <= 0"));
    let shared = shares(k);
    if shared {
        crate::gpu::print_rows::declare_smem(p, 2 * g.col_set);
    }
    let (tx, bx) = (g.thread_x, g.threads_x);
    let first = format!("{} * {bx}", syn.cast(int, g.block_x));
    let step = format!("cb += {} * {bx}", syn.cast(int, g.blocks_x));
    p.open(syn.for_head(int, "cb", &first, "cb < dn0", &step));
    let depth = p.scope_len();
    p.line(syn.decl(p.d.bool_, "live", &format!("cb + {tx} < dn0")));
    let cv = Printer::var_name(&col.name);
    let at = syn.select("live", &format!("cb + {tx}"), "dn0 - 1");
    p.line(syn.decl(int, &cv, &format!("dl0 + ({at})")));
    p.bind_loop(&col.name, &cv);
    if !shared {
        p.line(SERIAL_COLUMN);
    }
    // The lowering's steps: bindings, first-thread stores and barriers
    // where the block shares the columns, else the column on its first
    // thread.
    let mut ctx = ColCtx {
        red: 0,
        unroll: lowered.slice_unroll,
    };
    for step in &lowered.steps {
        match step {
            RowStep::Bind(s) | RowStep::FirstThreadStore(s) => column_stmt(p, s, &mut ctx),
            RowStep::BindTogether(lets) => bind_together(p, lets, &mut ctx),
            RowStep::FirstThread(stmts) => {
                p.open(format!("if ({} == 0 && live)", g.thread_y));
                p.stmts(stmts);
                p.close();
            }
            RowStep::Barrier(_) => p.line(g.barrier),
            // Rows only: the lowering gives a column's body no loop or
            // `if` (find_row_forms), so this is a Tile bug, reported.
            other => p.refuse(format!("a column kernel cannot run the step {other:?}")),
        }
    }
    p.truncate_scope(depth);
    p.close();
}

/// The comment marking columns run on one thread each.
pub const SERIAL_COLUMN: &str =
    "/* column on one thread: nested reductions or `if` (see print_columns.rs) */";

/// One statement of a shared column.
fn column_stmt(p: &mut Printer, s: &Stmt, ctx: &mut ColCtx) {
    p.set_line(s.span().line);
    match s {
        Stmt::Let { name, value, .. } => {
            let mut v = value.clone();
            lower_reductions(p, &mut v, ctx);
            let (code, ty) = p.lower(&v);
            crate::gpu::bind_lowered(p, name, &code, ty);
        }
        Stmt::Store {
            buf,
            idx,
            value,
            span,
            ..
        } => {
            let mut v = value.clone();
            lower_reductions(p, &mut v, ctx);
            let store = vec![Stmt::store(buf.clone(), idx.clone(), v, *span)];
            p.open(format!("if ({} == 0 && live)", p.gpu().thread_y));
            p.stmts(&store);
            p.close();
        }
        // The lowering gives a shared column's loops no step and its
        // `if`s `RowStep::FirstThread` (find_row_forms).
        Stmt::For { .. } | Stmt::If { .. } => {}
    }
}

/// Bindings whose reductions share one range ([`RowStep::BindTogether`]):
/// this thread's slice of the range in one loop, each reduction with its
/// own accumulator, then each combined over the column's slices.
fn bind_together(p: &mut Printer, lets: &[Stmt], ctx: &mut ColCtx) {
    let mut reds = Vec::new();
    for s in lets {
        match s {
            Stmt::Let {
                name,
                value: r @ Expr::Reduce { .. },
                ..
            } => reds.push((name, r)),
            other => {
                p.refuse(format!(
                    "a binding of one pass is not a reduction: {other:?}"
                ));
                return;
            }
        }
    }
    let Some((_, Expr::Reduce { lo, hi, .. })) = reds.first() else {
        return;
    };
    p.set_line(lets[0].span().line);
    let range = ctx.red;
    let (lname, hname) = slice_range(p, lo, hi, range);
    let slices: Vec<Expr> = reds
        .iter()
        .map(|(_, r)| slice_of(r, &lname, &hname))
        .collect();
    let parts = p.lower_together(&slices.iter().collect::<Vec<_>>(), ctx.unroll);
    for ((name, r), (part, t)) in reds.iter().zip(parts) {
        let Expr::Reduce { op, .. } = r else {
            continue;
        };
        let acc = combine_slices(p, *op, t, part, range, ctx);
        p.bind_value(name, &acc, t);
    }
}

/// Prints this thread's slice of the range `lo..hi` (names numbered `n`)
/// and returns the IR names bound to its bounds.
fn slice_range(p: &mut Printer, lo: &Expr, hi: &Expr, n: usize) -> (String, String) {
    let (blo, _) = p.lower_as(lo, VTy::Int);
    let (bhi, _) = p.lower_as(hi, VTy::Int);
    // This thread's slice: `ch` consecutive values (the last slices may be
    // shorter or empty). No sum below can wrap: bounds are below 2^62
    // (2^30 where integers are 32-bit: the range proof's bound).
    let (sl, sh) = (format!("csl{n}"), format!("csh{n}"));
    let (g, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
    let (ty, by) = (g.thread_y, g.threads_y);
    let (cbl, cn, cch) = (format!("cbl{n}"), format!("cn{n}"), format!("cch{n}"));
    let len = syn.select(&format!("{bhi} > {cbl}"), &format!("{bhi} - {cbl}"), "0");
    p.line(syn.decls(int, &[(&cbl, &blo), (&cn, &len)]));
    let ragged = syn.as_int(&format!("{cn} % {by} != 0"));
    p.line(syn.decl(int, &cch, &format!("{cn} / {by} + {ragged}")));
    let first = spell(g.min, &cn, &format!("{} * {cch}", syn.cast(int, ty)));
    let last = spell(
        g.min,
        &cn,
        &format!("{} * {cch}", syn.cast(int, &format!("({ty} + 1)"))),
    );
    let (lo, hi) = (format!("{cbl} + {first}"), format!("{cbl} + {last}"));
    p.line(syn.decls(int, &[(&sl, &lo), (&sh, &hi)]));
    let (lname, hname) = (
        tile_ir::names::generated("col_lo", n),
        tile_ir::names::generated("col_hi", n),
    );
    p.bind_value(&lname, &sl, VTy::Int);
    p.bind_value(&hname, &sh, VTy::Int);
    (lname, hname)
}

/// The reduction `r` over the slice bound to `lname..hname`.
fn slice_of(r: &Expr, lname: &str, hname: &str) -> Expr {
    match r {
        Expr::Reduce { op, var, body, .. } => Expr::Reduce {
            op: *op,
            var: var.clone(),
            lo: Box::new(Expr::var(lname)),
            hi: Box::new(Expr::var(hname)),
            body: body.clone(),
        },
        other => other.clone(),
    }
}

/// Combines this thread's slice result `part` (of the range numbered
/// `range`) over the column's slices, in slice order; returns the C name
/// of the column's result.
fn combine_slices(
    p: &mut Printer,
    op: tile_ir::ReduceOp,
    t: VTy,
    part: String,
    range: usize,
    ctx: &mut ColCtx,
) -> String {
    let n = ctx.red;
    ctx.red += 1;
    let (sl, sh) = (format!("csl{range}"), format!("csh{range}"));
    let acc = format!("cred{n}");
    let combine = p.helper_call(&format!("tile_col_{}_{}", op.name(), sfx(t)));
    // An empty slice of a float `max` or `min` passes NaN, which the
    // combination skips, so a column of NaN alone stays NaN; an empty
    // column gets the identity.
    let (start, identity) = (
        crate::gpu::print_rows::start(p.d, op, t),
        crate::gpu::print_rows::identity(p.d, op, t),
    );
    let syn = p.d.syntax;
    let (part, fixed) = if start == identity {
        (part, true)
    } else {
        let c = format!("{sh} > {sl}");
        (format!("({})", syn.select(&c, &part, &start)), false)
    };
    let at = crate::gpu::print_rows::smem_at(p, p.gpu().col_set * (n % 2));
    let v = format!("{combine}({part}, {at})");
    let st = p.scalar_type(t);
    p.line(if fixed {
        syn.decl(st, &acc, &v)
    } else {
        syn.var(st, &acc, Some(&v))
    });
    crate::gpu::print_rows::empty_range(p, op, t, &acc, "0", &format!("cn{range}"));
    acc
}

/// Replaces each reduction in `e` by its column-wide result: this
/// thread's slice of the range reduced in order, then the slices combined.
fn lower_reductions(p: &mut Printer, e: &mut Expr, ctx: &mut ColCtx) {
    let Expr::Reduce { op, lo, hi, .. } = e else {
        for c in e.children_mut() {
            lower_reductions(p, c, ctx);
        }
        return;
    };
    let (op, n) = (*op, ctx.red);
    let (lname, hname) = slice_range(p, lo, hi, n);
    let slice = slice_of(e, &lname, &hname);
    let Some((part, t)) = p.lower_together(&[&slice], ctx.unroll).pop() else {
        return;
    };
    let acc = combine_slices(p, op, t, part, n, ctx);
    // The IR name is reserved, so no name of the program can capture it.
    let name = tile_ir::names::generated("cred", n);
    p.bind_value(&name, &acc, t);
    *e = Expr::var(&name);
}
