//! Prints the body of a `row_reduction` kernel: one block per row (a
//! grid-stride loop over rows). When the block can share a row's
//! statements, every thread computes the bindings, reductions run over
//! the block's threads ([`crate::gpu::quad_loops`]) and combine through warp
//! shuffles and shared memory, inner loops are split over the threads,
//! and a barrier follows each statement that stores. A scratch row's fill
//! followed by the reduction that reads it back runs as one loop (the fill
//! loop's values are reduced as they are stored); a row's own result
//! (`y[i] = ...` with reductions) is reduced by the block and stored by
//! one thread. Rows the block cannot share (an `if`, an inner loop whose
//! iterations are not independent) walk their statements in lockstep when
//! they reduce, else run on thread 0, each marked by a comment in the
//! source; tile-plan decides which ([`tile_plan::Sharing`]).

use crate::gpu::quad_loops::{self, sfx, Each, Held, RowLoop};
use crate::gpu::Unroll;
use crate::{Dialect, Printer, VTy};
use std::collections::BTreeSet;
use tile_ir::{Expr, LoopVar, Program, ReduceOp, Stmt};
use tile_plan::kernel_ir::{LoopKey, LoweredKernel, QuadAccesses, RowEntry, RowStep};
use tile_plan::{Kernel, Sharing};

/// No loops (reductions outside row kernels print no statement loops).
static NO_LOOPS: BTreeSet<LoopKey> = BTreeSet::new();

/// What row statements are printed against.
struct RowCtx<'a> {
    program: &'a Program,
    /// The `_rows` entry point, if this is it.
    plan: Option<&'a RowEntry>,
    /// The loops whose quads may load before they store (the lowering's
    /// [`LoweredKernel::batches`] or [`RowEntry::batches`]).
    batches: &'a BTreeSet<LoopKey>,
    /// Block reductions printed so far in the row: names accumulators and
    /// picks the shared-memory slot set (alternating).
    red: usize,
    /// Quads per step of loops reading device vectors ([`RowLoop::unroll`]).
    unroll: u32,
    /// Rows held in registers between loops ([`RowLoop::held`]).
    held: Vec<Held>,
    /// The lowering's contiguous accesses ([`LoweredKernel::quads`]).
    quads: &'a QuadAccesses,
}

impl RowCtx<'_> {
    fn row_loop<'b>(
        &'b self,
        var: &'b str,
        bl: &'b str,
        bh: &'b str,
        lo: &'b Expr,
        hi: &'b Expr,
    ) -> RowLoop<'b> {
        RowLoop {
            var,
            bl,
            bh,
            lo,
            hi,
            staged: self.plan.map_or(&[], |r| r.staged.as_slice()),
            short: self
                .plan
                .is_some_and(|r| crate::gpu::stage_rows::short(r, lo, hi)),
            unroll: self.unroll,
            held: &self.held,
            quads: self.quads,
        }
    }

    /// A fresh accumulator name and the slot set of its block reduction.
    /// The next block reduction's accumulator (named by the printer's
    /// counter, which nested reductions printed inside its body share, so
    /// no name shadows another) and its shared slot set (alternating).
    fn next_reduction(&mut self, p: &mut Printer) -> (String, usize) {
        let n = self.red;
        self.red += 1;
        (p.tmp("red"), p.gpu().row_set * (n % 2))
    }
}

/// Prints the body of a `row_reduction` kernel from its lowered steps:
/// `plan` is the `_rows` entry point's (rows staged in shared memory),
/// `None` the streaming one's; `extended` is the program with the kernel's
/// scratch rows among its parameters.
pub fn row_reduction(
    p: &mut Printer,
    k: &Kernel,
    lowered: &LoweredKernel,
    plan: Option<&RowEntry>,
    extended: &Program,
    unroll: Unroll,
) {
    let row = &k.domain[0];
    let (g, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
    let (lo, n) = (p.size_expr(&row.lo), p.extent(&row.lo, &row.hi));
    p.line(syn.decls(int, &[("dl0", &lo), ("dn0", &n)]));
    declare_smem(p, 2 * g.row_set);
    if let Some(plan) = plan {
        crate::gpu::stage_rows::declare_staging(p, plan, extended);
    }
    let step = format!("r += {}", g.blocks_x);
    p.open(syn.for_head(int, "r", g.block_x, "r < dn0", &step));
    let depth = p.scope_len();
    let rv = Printer::var_name(&row.name);
    p.line(syn.decl(int, &rv, "dl0 + r"));
    p.bind_loop(&row.name, &rv);
    let steps = plan.map_or(&lowered.steps, |r| &r.steps);
    let sharing = sharing(k);
    let mut ctx = RowCtx {
        program: extended,
        plan: None,
        batches: &lowered.batches,
        red: 0,
        unroll: unroll.rows,
        held: Vec::new(),
        quads: &lowered.quads,
    };
    match sharing {
        Sharing::Split => {
            ctx.plan = plan;
            if let Some(plan) = plan {
                ctx.batches = &plan.batches;
                crate::gpu::stage_rows::print_staging(p, &plan.staged, &rv);
            } else {
                ctx.held = held_rows(lowered, &row.name);
            }
        }
        Sharing::Lockstep(_) => p.line(LOCKSTEP_ROW),
        Sharing::InOrder(_) => p.line(SERIAL_ROW),
    }
    let row_name = row.name.clone();
    steps_of(p, steps, &row_name, &mut ctx);
    p.truncate_scope(depth);
    p.close();
}

/// The rows the lowering holds in registers (streaming kernels whose
/// results are per-row values: [`LoweredKernel::held`]).
fn held_rows(lowered: &LoweredKernel, row: &str) -> Vec<Held> {
    lowered
        .held
        .iter()
        .map(|h| Held {
            buf: h.row.buf.clone(),
            row: row.to_string(),
            lo: h.row.lo.clone(),
            hi: h.row.hi.clone(),
            name: h.name.clone(),
            quads: h.quads,
            filled: std::cell::Cell::new(false),
        })
        .collect()
}

/// The comment marking a row run on one thread of its block.
pub const SERIAL_ROW: &str =
    "/* row on one thread: an `if`, or an inner loop the block cannot share, and no reduction to split (see print_rows.rs) */";

/// The comment marking a row whose statements every thread walks in
/// program order.
pub const LOCKSTEP_ROW: &str =
    "/* row in lockstep: every thread walks its statements in order, each reduction split over the block, every store between barriers (see print_rows.rs) */";

/// How the block shares the kernel's rows or columns: tile-plan's fact
/// ([`Kernel::sharing`]). A kernel that does not record it (built by hand,
/// not by `compile`) runs each row on one thread, in order: this layer
/// never decides that a row may split.
pub(crate) fn sharing(k: &Kernel) -> Sharing {
    k.sharing
        .clone()
        .unwrap_or_else(|| Sharing::InOrder("the plan records no sharing for this kernel".into()))
}

/// Whether the block splits the kernel's rows or columns ([`sharing`]
/// without copying the reason: launches ask it).
pub(crate) fn splits(k: &Kernel) -> bool {
    k.sharing == Some(Sharing::Split)
}

/// Prints `steps`, the lowering's steps of a row ([`RowStep`]), for the
/// row variable `row`.
fn steps_of(p: &mut Printer, steps: &[RowStep], row: &str, ctx: &mut RowCtx) {
    for step in steps {
        step_of(p, step, row, ctx);
    }
}

/// A statement with the loads of rows staged in shared memory renamed (in
/// the `_rows` entry point).
fn staged(s: &Stmt, row: &str, ctx: &RowCtx) -> Stmt {
    let mut s = s.clone();
    if let Some(plan) = ctx.plan {
        crate::gpu::stage_rows::replace_staged_loads(&mut s, row, &plan.staged);
    }
    s
}

fn step_of(p: &mut Printer, step: &RowStep, row: &str, ctx: &mut RowCtx) {
    match step {
        RowStep::Bind(s) | RowStep::Split(s) | RowStep::FirstThreadStore(s) => {
            row_stmt(p, &staged(s, row, ctx), ctx);
        }
        // Columns only (lower_kernels hoists no row's reductions).
        RowStep::BindTogether(_) => p.refuse(format!("a row kernel cannot run the step {step:?}")),
        RowStep::FillAndReduce {
            fill,
            bind,
            op,
            unfused,
        } => {
            let (fill, bind) = (staged(fill, row, ctx), staged(bind, row, ctx));
            match fill_and_reduce(p, &fill, &bind, *op, ctx) {
                Fused::Yes => {}
                // The fill's loop was printed: the steps after it.
                Fused::FillOnly => match unfused.split_first() {
                    Some((RowStep::Split(_), rest)) => steps_of(p, rest, row, ctx),
                    _ => p.refuse("a fused fill's unfused steps do not start with its loop".into()),
                },
                Fused::NotAPair => steps_of(p, unfused, row, ctx),
            }
        }
        RowStep::FirstThread(stmts) => {
            p.open(format!("if ({} == 0)", p.gpu().thread_x));
            p.stmts(stmts);
            p.close();
        }
        RowStep::LockstepStore(s) => lockstep_store(p, s, ctx),
        RowStep::LockstepLoop { vars, span, body } => {
            p.set_line(span.line);
            let depth = p.scope_len();
            for lv in vars {
                p.open("");
                let (bl, bh) = loop_bounds(p, &lv.lo, &lv.hi);
                let cv = Printer::var_name(&lv.name);
                let (cond, step) = (format!("{cv} < {bh}"), format!("{cv}++"));
                p.open(p.d.syntax.for_head(p.d.int, &cv, &bl, &cond, &step));
                p.bind_loop(&lv.name, &cv);
            }
            steps_of(p, body, row, ctx);
            for _ in vars {
                p.close();
                p.close();
            }
            p.truncate_scope(depth);
        }
        RowStep::LockstepIf {
            cond,
            span,
            then,
            els,
        } => {
            p.set_line(span.line);
            let mut c = cond.clone();
            lower_reductions(p, &mut c, ctx);
            let (code, _) = p.lower_as(&c, VTy::Bool);
            // Each branch's first reduction follows the condition's, so
            // both start from the same slot set; which reductions ran is
            // known only at run time, so a barrier ends the `if`.
            let first = ctx.red;
            let mut last = first;
            let heads = if then.is_empty() {
                [(then, String::new()), (els, format!("if (!({code}))"))]
            } else {
                [(then, format!("if ({code})")), (els, "else".to_string())]
            };
            for (branch, head) in heads {
                if branch.is_empty() {
                    continue;
                }
                ctx.red = first;
                p.open(head);
                let depth = p.scope_len();
                steps_of(p, branch, row, ctx);
                p.truncate_scope(depth);
                p.close();
                last = last.max(ctx.red);
            }
            ctx.red = last;
        }
        RowStep::Barrier(_) => p.line(p.gpu().barrier),
    }
}

/// A store of a lockstep row ([`RowStep::LockstepStore`]).
fn lockstep_store(p: &mut Printer, s: &Stmt, ctx: &mut RowCtx) {
    p.set_line(s.span().line);
    let Stmt::Store {
        buf,
        idx,
        value,
        span,
        ..
    } = s
    else {
        return;
    };
    // Every thread computes the value and the indices (reading what it
    // reads before any thread writes), then every thread checks and writes
    // the same value to the same element: a failed check fails in every
    // thread alike, so all leave together and none reports a later
    // failure.
    let mut names = Vec::new();
    let stored = ctx.program.param(buf).map(|b| VTy::of(b.dtype));
    for (n, e) in idx.iter().chain([value]).enumerate() {
        let mut e = e.clone();
        lower_reductions(p, &mut e, ctx);
        // The value in the buffer's type (an integer literal stored to a
        // float buffer), as a plain store prints it.
        let (code, ty) = match stored {
            Some(t) if n == idx.len() => p.lower_as(&e, t),
            _ => p.lower(&e),
        };
        let t = p.tmp("val");
        p.line(p.d.syntax.decl(p.scalar_type(ty), &t, &code));
        let name = tile_ir::names::generated("lockstep", names.len());
        p.bind_value(&name, &t, ty);
        names.push(name);
    }
    let (at, value) = names.split_at(idx.len());
    let store = vec![Stmt::store(
        buf.clone(),
        at.iter().map(|n| Expr::var(n)).collect(),
        Expr::var(&value[0]),
        *span,
    )];
    p.line(p.gpu().barrier);
    p.stmts(&store);
    p.line(p.gpu().barrier);
}

/// The identity of `op` on values of type `t`, in `d`'s spelling.
pub(crate) fn identity(d: &Dialect, op: ReduceOp, t: VTy) -> String {
    match (op, t) {
        (ReduceOp::Sum, VTy::F32) => "0.0f".to_string(),
        (ReduceOp::Sum, VTy::F64) => "0.0".to_string(),
        (ReduceOp::Sum, _) => match d.syntax {
            crate::Syntax::C => "0LL".to_string(),
            crate::Syntax::Wgsl => "0".to_string(),
        },
        (ReduceOp::Max, VTy::F32) => d.f32_ninf.to_string(),
        (ReduceOp::Min, VTy::F32) => d.f32_inf.to_string(),
        (ReduceOp::Max, VTy::F64) => d.f64_ninf.to_string(),
        (ReduceOp::Min, VTy::F64) => d.f64_inf.to_string(),
        (ReduceOp::Max, _) => d.syntax.int_extreme(false),
        (ReduceOp::Min, _) => d.syntax.int_extreme(true),
    }
}

/// Declares the block's `n` reduction slots where the dialect declares
/// them in the kernel.
pub(crate) fn declare_smem(p: &mut Printer, n: usize) {
    let decl = p.gpu().smem_decl;
    if !decl.is_empty() {
        p.line(decl.replace("{n}", &n.to_string()));
    }
}

/// The helper argument naming the slot set from slot `n`.
pub(crate) fn smem_at(p: &Printer, n: usize) -> String {
    p.gpu().smem_at.replace("{n}", &n.to_string())
}

/// Where a thread's share of a reduction starts: the identity, except NaN
/// for float `max` and `min` (IEEE `fmax` returns the other operand, so
/// the first value replaces it and an empty share changes nothing; a
/// range of NaN alone stays NaN, as in the interpreter). An empty range
/// gets the identity afterwards ([`empty_range`]).
pub(crate) fn start(d: &Dialect, op: ReduceOp, t: VTy) -> String {
    match (op, t) {
        (ReduceOp::Sum, _) | (_, VTy::Int) | (_, VTy::Bool) => identity(d, op, t),
        (_, VTy::F32) => d.f32_nan.to_string(),
        (_, VTy::F64) => d.f64_nan.to_string(),
    }
}

/// After a reduction over `bl..bh` whose shares started at [`start`]: the
/// identity when the range is empty.
pub(crate) fn empty_range(p: &mut Printer, op: ReduceOp, t: VTy, acc: &str, bl: &str, bh: &str) {
    if start(p.d, op, t) != identity(p.d, op, t) {
        let set = format!("{acc} = {};", identity(p.d, op, t));
        p.line(p.d.syntax.when(&format!("!({bh} > {bl})"), &set));
    }
}

/// The block-wide combination of the accumulator `acc` (slot set `set`),
/// bound to the reserved IR name [`result_name`] of `acc`, so no name of
/// the program can capture it; returns that name.
fn block_reduce(p: &mut Printer, op: ReduceOp, t: VTy, acc: &str, set: usize) -> String {
    let at = smem_at(p, set);
    p.line(format!(
        "{acc} = tile_block_{}_{}({acc}, {at});",
        op.name(),
        sfx(t)
    ));
    let name = result_name(acc);
    p.bind_value(&name, acc, t);
    name
}

/// The IR name a block reduction's result is bound to (`__red0`).
fn result_name(acc: &str) -> String {
    tile_ir::names::reserved(acc)
}

/// Replaces each reduction in `e` by its block-wide result (every thread of
/// the block must reach this code), for kernels other than rows (a full
/// reduction's chunks). Accumulators are numbered from `first`; returns
/// the next number.
pub(crate) fn block_reductions(
    p: &mut Printer,
    e: &mut Expr,
    (program, quads): (&Program, &QuadAccesses),
    first: usize,
    unroll: u32,
) -> usize {
    let mut ctx = RowCtx {
        program,
        plan: None,
        batches: &NO_LOOPS,
        red: first,
        unroll,
        held: Vec::new(),
        quads,
    };
    lower_reductions(p, e, &mut ctx);
    ctx.red
}

/// Adds this thread's share of the reduction `r` (its range split over
/// the block as in a row) into the accumulator `acc` of type `t`, declared
/// by the caller; no block-wide combination. A full reduction whose rows'
/// reductions have its own operator accumulates every row this way and
/// combines the block once.
pub(crate) fn thread_share(
    p: &mut Printer,
    r: &Expr,
    acc: &str,
    t: VTy,
    (program, quads): (&Program, &QuadAccesses),
    unroll: u32,
) {
    let Expr::Reduce {
        op,
        var,
        lo,
        hi,
        body,
    } = r
    else {
        return;
    };
    let (bl, bh) = loop_bounds(p, lo, hi);
    p.begin_checked_level(var, &bl, &bh, &[], &[body]);
    let ctx = RowCtx {
        program,
        plan: None,
        batches: &NO_LOOPS,
        red: 0,
        unroll,
        held: Vec::new(),
        quads,
    };
    let rl = ctx.row_loop(var, &bl, &bh, lo, hi);
    let each = Each::Reduce {
        body,
        acc,
        op: *op,
        t,
    };
    quad_loops::print_loop(p, &rl, &each);
    p.end_checked_level();
}

/// The identity of `op` for values of type `t`, in `d`'s spelling.
pub(crate) fn identity_of(d: &Dialect, op: ReduceOp, t: VTy) -> String {
    identity(d, op, t)
}

/// Replaces each reduction in `e` by a block-wide reduction bound to a
/// fresh name.
fn lower_reductions(p: &mut Printer, e: &mut Expr, ctx: &mut RowCtx) {
    let Expr::Reduce {
        op,
        var,
        lo,
        hi,
        body,
    } = e
    else {
        for c in e.children_mut() {
            lower_reductions(p, c, ctx);
        }
        return;
    };
    let (op, var, lo, hi) = (*op, var.clone(), (**lo).clone(), (**hi).clone());
    let body: &Expr = body;
    let (bl, bh) = loop_bounds(p, &lo, &hi);
    // The body's type with its variable (and staged rows) in scope.
    let depth = p.scope_len();
    p.bind_loop(&var, &Printer::var_name(&var));
    if let Some(plan) = ctx.plan {
        crate::gpu::stage_rows::bind_staged(p, &plan.staged, &var, "0", &lo, &hi);
    }
    let t = p.value_type(body);
    p.truncate_scope(depth);
    let (acc, set) = ctx.next_reduction(p);
    p.line(
        p.d.syntax
            .var(p.scalar_type(t), &acc, Some(&start(p.d, op, t))),
    );
    p.begin_checked_level(&var, &bl, &bh, &[], &[body]);
    let rl = ctx.row_loop(&var, &bl, &bh, &lo, &hi);
    let each = Each::Reduce {
        body,
        acc: &acc,
        op,
        t,
    };
    quad_loops::print_loop(p, &rl, &each);
    p.end_checked_level();
    let name = block_reduce(p, op, t, &acc, set);
    empty_range(p, op, t, &acc, &bl, &bh);
    *e = Expr::var(&name);
}

/// A row-level statement shared by the block.
fn row_stmt(p: &mut Printer, s: &Stmt, ctx: &mut RowCtx) {
    p.set_line(s.span().line);
    match s {
        Stmt::Let { name, value, .. } => {
            let mut v = value.clone();
            lower_reductions(p, &mut v, ctx);
            let (code, ty) = p.lower(&v);
            crate::gpu::bind_lowered(p, name, &code, ty);
        }
        Stmt::For { vars, body, span } => {
            let lv = &vars[0];
            let (bl, bh) = loop_bounds(p, &lv.lo, &lv.hi);
            p.begin_checked_level(&lv.name, &bl, &bh, body, &[]);
            let batch = ctx.batches.contains(&LoopKey::new(*span, &lv.name));
            for_body(p, lv, (body, batch), &bl, &bh, ctx);
        }
        Stmt::Store {
            buf,
            idx,
            value,
            span,
            ..
        } => {
            // Reductions first, over the block (every thread takes part);
            // then thread 0 stores the row's result.
            let mut v = value.clone();
            lower_reductions(p, &mut v, ctx);
            let store = vec![Stmt::store(buf.clone(), idx.clone(), v, *span)];
            p.open(format!("if ({} == 0)", p.gpu().thread_x));
            p.stmts(&store);
            p.close();
        }
        Stmt::If { .. } => {}
    }
}

/// A row-level loop whose bounds are declared and whose checked level has
/// begun: the loop and the level's end (`batch`: its quads may load before
/// they store; the barrier after it is the lowering's next step).
fn for_body(
    p: &mut Printer,
    lv: &LoopVar,
    (body, batch): (&[Stmt], bool),
    bl: &str,
    bh: &str,
    ctx: &mut RowCtx,
) {
    let rl = ctx.row_loop(&lv.name, bl, bh, &lv.lo, &lv.hi);
    let each = Each::Stmts {
        body,
        acc: None,
        batch,
    };
    quad_loops::print_loop(p, &rl, &each);
    p.end_checked_level();
}

/// Declares and returns the C names of a loop's bounds.
fn loop_bounds(p: &mut Printer, lo: &Expr, hi: &Expr) -> (String, String) {
    let (lo, _) = p.lower_as(lo, VTy::Int);
    let (hi, _) = p.lower_as(hi, VTy::Int);
    let bl = p.tmp("bnd");
    let bh = p.tmp("bnd");
    p.line(p.d.syntax.decls(p.d.int, &[(&bl, &lo), (&bh, &hi)]));
    (bl, bh)
}

/// What [`fill_and_reduce`] printed.
enum Fused {
    /// The fill and the reduction as one loop, then the binding.
    Yes,
    /// The fill's loop alone (its body has no vector form): the unfused
    /// steps after it follow.
    FillOnly,
    /// Nothing: the statements are not a fill and a binding (the unfused
    /// steps follow, all of them).
    NotAPair,
}

/// Prints a scratch row's fill and the reduction reading it back as one
/// loop, then the binding ([`RowStep::FillAndReduce`]); `fill` and `bind`
/// are a pair the lowering fused ([`RowEntry::fused`]).
fn fill_and_reduce(
    p: &mut Printer,
    fill: &Stmt,
    bind: &Stmt,
    op: ReduceOp,
    ctx: &mut RowCtx,
) -> Fused {
    let (Stmt::For { vars, body, .. }, Stmt::Let { name, value, span }) = (fill, bind) else {
        return Fused::NotAPair;
    };
    let [Stmt::Store { buf, .. }] = body.as_slice() else {
        return Fused::NotAPair;
    };
    let lv = &vars[0];
    p.set_line(fill.span().line);
    let batch = ctx.batches.contains(&LoopKey::new(fill.span(), &lv.name));
    let (bl, bh) = loop_bounds(p, &lv.lo, &lv.hi);
    p.begin_checked_level(&lv.name, &bl, &bh, body, &[]);
    let rl = ctx.row_loop(&lv.name, &bl, &bh, &lv.lo, &lv.hi);
    if !quad_loops::fusable(p, &rl, body, batch) {
        // The fill as a loop of its own.
        for_body(p, lv, (body, batch), &bl, &bh, ctx);
        return Fused::FillOnly;
    }
    let (acc, set) = ctx.next_reduction(p);
    let init = start(p.d, op, VTy::F32);
    p.line(p.d.syntax.var(p.d.f32, &acc, Some(&init)));
    let each = Each::Stmts {
        body,
        acc: Some((&acc, op)),
        batch,
    };
    let rl = ctx.row_loop(&lv.name, &bl, &bh, &lv.lo, &lv.hi);
    quad_loops::print_loop(p, &rl, &each);
    p.end_checked_level();
    // The block reduction's barrier also orders the fill before any read.
    let result = block_reduce(p, op, VTy::F32, &acc, set);
    empty_range(p, op, VTy::F32, &acc, &bl, &bh);
    let mut v = value.clone();
    tile_plan::replace_read_back(&mut v, buf, &lv.lo, &lv.hi, &result);
    let rest = Stmt::Let {
        name: name.clone(),
        value: v,
        span: *span,
    };
    row_stmt(p, &rest, ctx);
    Fused::Yes
}
