//! Lowers each kernel of a plan for one target: picks the body each entry
//! point runs, the loops that run as vector lanes, the reassociation of
//! reductions, the extra entry points and the rows held in registers
//! ([`crate::kernel_ir`]). The legality rules it applies are the plan's
//! (`find_lane_loops.rs`, `cache_reduced_values.rs`,
//! `find_reread_rows.rs`); the back ends print what it decided.

use crate::affine::Affine;
use crate::kernel_ir::{
    Entry, Form, FullForm, HeldRow, LoopKey, LoopRun, Lowered, LoweredKernel, QuadAccesses,
    QuadCondition, Reassociation, RowEntry, RowStep, StagedRow, Target, Wait,
};
use crate::{Kernel, Mapping, Plan, ScratchRow, Sharing};
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{BinOp, DType, Expr, Program, Stmt};

/// Lowers every kernel of `plan` for `target`.
pub fn lower_kernels(plan: &Plan, target: Target) -> Lowered {
    let index = tile_ir::ParamIndex::of(&plan.program);
    Lowered {
        target,
        kernels: plan
            .kernels
            .iter()
            .map(|k| lower_kernel(&plan.program, &index, k, target))
            .collect(),
    }
}

/// Lowers one kernel of a plan of `program` (`index`: its parameters).
pub fn lower_kernel(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
    target: Target,
) -> LoweredKernel {
    // Bodies that write per-task scratch rows: the CPU's (each thread
    // owns a scratch buffer). A target without one runs the plan's body
    // in its general entry point.
    let contraction = k.contraction.as_ref().filter(|_| target.tiles_contractions);
    let attention = k.attention.as_ref().filter(|_| target.tiles_attention);
    let (form, body, scratch) = match (target.vectors, &k.cached, &k.interchanged) {
        _ if attention.is_some() && target.vectors => {
            let a = attention.expect("checked");
            let mut body = a.scores.clone();
            body.extend(a.output.iter().cloned());
            (Form::Attention, body, a.scratch.clone())
        }
        _ if contraction.is_some() && target.vectors => {
            let c = contraction.expect("checked");
            (
                Form::Contraction,
                c.epilogue.clone(),
                vec![c.scratch.clone()],
            )
        }
        (true, Some(c), _) => (Form::Cached, c.body.clone(), c.scratch.clone()),
        (true, None, Some(c)) => (Form::Interchanged, c.body.clone(), c.scratch.clone()),
        _ => (Form::Plain, k.body.clone(), vec![]),
    };
    // A column the block shares (its threads split each column's rows).
    let shared_column = target.barriers
        && k.mapping == Mapping::ColumnReduction
        && k.sharing == Some(Sharing::Split);
    // Such a column reads the rows of sibling reductions once (each keeps
    // its own order).
    let hoisted = (shared_column && form == Form::Plain)
        .then(|| crate::hoist_sibling_reductions::hoist_sibling_reductions(&body))
        .flatten();
    let full = k.full_parts().filter(|_| target.barriers).map(FullForm::of);
    let slice_unroll = if shared_column {
        target.slice_unroll
    } else {
        1
    };
    let (body, together) = match hoisted {
        Some(h) => (h.body, h.groups),
        None => (body, Vec::new()),
    };
    let blocks = form == Form::Interchanged;
    let inner = match k.mapping {
        _ if !target.vectors => None,
        // The grid's points are independent (find_hazards proved it).
        Mapping::ElementGrid | Mapping::Split => Some(
            k.lanes
                .iter()
                .find(|l| l.line == 0)
                .map_or(Some("the plan records no lanes".to_string()), |l| {
                    l.lanes.clone()
                }),
        ),
        // One lane per column: orient_rows chose columns whose reductions
        // are independent.
        Mapping::ColumnReduction if !blocks => Some(None),
        _ => None,
    };
    // Inner loops run as lanes in row kernels and in the column blocks;
    // serial kernels and the finish of a full reduction run in order.
    let loops = match k.mapping {
        Mapping::RowReduction if target.vectors => lane_loops(&body),
        Mapping::ColumnReduction if target.vectors && blocks => lane_loops(&body),
        _ => Vec::new(),
    };
    let reassociation = if target.vectors {
        Reassociation::Vectors {
            accumulators: target.accumulators,
        }
    } else {
        // A GPU block splits the reductions of the rows and columns it
        // shares, and a full reduction's chunks; a thread runs any other
        // reduction alone, in order.
        let shared = matches!(k.sharing, Some(Sharing::Split | Sharing::Lockstep(_)));
        match k.mapping {
            Mapping::RowReduction | Mapping::ColumnReduction if shared => Reassociation::Threads,
            Mapping::FullReduction => Reassociation::Threads,
            _ => Reassociation::InOrder,
        }
    };
    let split = k.mapping == Mapping::RowReduction && k.sharing == Some(Sharing::Split);
    let batches = if target.wide_access && split {
        batch_loops(&body)
    } else {
        BTreeSet::new()
    };
    let mut entries = Vec::new();
    if target.quad_entries && k.mapping.is_elementwise() {
        if let Some((conditions, sites)) = quads(program, index, k) {
            entries.push(Entry::Quads { conditions, sites });
        }
    }
    if target.shared_rows && split {
        if let Some(r) = rows(program, k, target) {
            entries.push(Entry::Rows(r));
        }
    }
    let steps = match k.mapping {
        _ if !target.barriers => Vec::new(),
        Mapping::RowReduction => row_steps(k.sharing.as_ref(), &body, &[], &[]),
        // A column the block shares runs as a split row does (its body
        // has no loop or `if`); any other column runs on its first thread,
        // with no shared slots to wait for.
        Mapping::ColumnReduction if k.sharing == Some(Sharing::Split) => {
            row_steps(k.sharing.as_ref(), &body, &[], &together)
        }
        Mapping::ColumnReduction => vec![RowStep::FirstThread(body.clone())],
        _ => Vec::new(),
    };
    let held = if target.held_quads > 0 && split {
        held_rows(program, k, target.held_quads)
    } else {
        Vec::new()
    };
    // What the GPU printers' loops over a row may access as 16-byte
    // vectors: every body and expression they print.
    let mut quads = QuadAccesses::default();
    if target.wide_access && matches!(k.mapping, Mapping::RowReduction | Mapping::FullReduction) {
        let parts = k.full_parts();
        let exprs: Vec<&Expr> = parts
            .iter()
            .flat_map(|f| [&*f.chunk, &*f.body].into_iter().chain(f.flat.as_deref()))
            .collect();
        let domain: Vec<String> = k.domain.iter().map(|v| v.name.clone()).collect();
        crate::find_quad_accesses((program, index), &domain, &[&body], &exprs, &mut quads);
        for e in &entries {
            if let Entry::Rows(r) = e {
                let extended = crate::with_scratch(program, &r.scratch);
                let extended_index = tile_ir::ParamIndex::of(&extended);
                crate::find_quad_accesses(
                    (&extended, &extended_index),
                    &domain,
                    &[&r.body],
                    &[],
                    &mut quads,
                );
            }
        }
    }
    // Threads that check different ranges before a barrier: the column
    // slices of a shared column, the threads of a full reduction's chunk
    // whose rows each run on one thread.
    let check_then_wait = shared_column || full == Some(FullForm::OneThread);
    // Every body a lowered kernel runs verifies (debug builds).
    if cfg!(debug_assertions) {
        let blocks = form == Form::Interchanged && k.mapping == Mapping::ColumnReduction;
        // A contraction's epilogue and an attention head's bodies need
        // their blocks' names bound: verify_kernels.rs checks them with
        // the plan, in their own wrappers.
        if !matches!(form, Form::Contraction | Form::Attention) {
            crate::verify_kernels::verify_body(
                "lower_kernels",
                program,
                k,
                &body,
                &scratch,
                blocks,
            );
        }
        for e in &entries {
            if let Entry::Rows(r) = e {
                crate::verify_kernels::verify_body(
                    "lower_kernels (_rows)",
                    program,
                    k,
                    &r.body,
                    &r.scratch,
                    false,
                );
            }
        }
    }
    LoweredKernel {
        name: k.name.clone(),
        mapping: k.mapping,
        form,
        body,
        scratch,
        inner,
        loops,
        reassociation,
        batches,
        entries,
        held,
        check_then_wait,
        slice_unroll,
        quads,
        full,
        steps,
        contraction: contraction.cloned(),
        attention: attention.cloned(),
    }
}

/// How a block runs one row of `body` ([`RowStep`]), given how the plan
/// lets it share the row (`None`: in order, on one thread) and the fused
/// fill/reduce pairs of `body` ([`RowEntry::fused`]) and its groups of
/// bindings run in one pass ([`RowStep::BindTogether`]).
///
/// - Split rows: every thread computes each binding (its reductions over
///   the block); loops split over the threads, a barrier after each (its
///   stores are read later); a store of the row's result by the first
///   thread, then a barrier; and a barrier at the end unless the last
///   step ended with one, since the next row's reductions reuse the
///   shared slots.
/// - Lockstep rows: every thread walks every statement in order; a barrier
///   before and after each store (inside the step), after each loop
///   iteration, after each loop and after each `if`, and at the end.
/// - Other rows run on the first thread, then a barrier.
pub(crate) fn row_steps(
    sharing: Option<&Sharing>,
    body: &[Stmt],
    fused: &[(usize, tile_ir::ReduceOp)],
    together: &[std::ops::Range<usize>],
) -> Vec<RowStep> {
    match sharing {
        Some(Sharing::Split) => {
            let mut steps = Vec::new();
            let mut a = 0;
            while a < body.len() {
                if let Some(g) = together.iter().find(|g| g.start == a) {
                    steps.push(RowStep::BindTogether(body[g.clone()].to_vec()));
                    a = g.end;
                    continue;
                }
                if let Some(&(_, op)) = fused.iter().find(|(f, _)| *f == a) {
                    steps.push(RowStep::FillAndReduce {
                        fill: body[a].clone(),
                        bind: body[a + 1].clone(),
                        op,
                        unfused: vec![
                            RowStep::Split(body[a].clone()),
                            RowStep::Barrier(Wait::Writes),
                            RowStep::Bind(body[a + 1].clone()),
                        ],
                    });
                    a += 2;
                    continue;
                }
                match &body[a] {
                    s @ Stmt::Let { .. } => steps.push(RowStep::Bind(s.clone())),
                    s @ Stmt::For { .. } => {
                        steps.push(RowStep::Split(s.clone()));
                        steps.push(RowStep::Barrier(Wait::Writes));
                    }
                    s @ Stmt::Store { .. } => {
                        steps.push(RowStep::FirstThreadStore(s.clone()));
                        steps.push(RowStep::Barrier(Wait::Writes));
                    }
                    // A plain `if` (a split column's, find_row_forms): the
                    // first thread runs it, as it runs a store.
                    s @ Stmt::If { .. } => {
                        steps.push(RowStep::FirstThread(vec![s.clone()]));
                        steps.push(RowStep::Barrier(Wait::Writes));
                    }
                }
                a += 1;
            }
            if !matches!(
                body.last(),
                Some(Stmt::For { .. } | Stmt::Store { .. } | Stmt::If { .. })
            ) {
                steps.push(RowStep::Barrier(Wait::EndOfItem));
            }
            steps
        }
        Some(Sharing::Lockstep(_)) => {
            let mut steps = lockstep_steps(body);
            steps.push(RowStep::Barrier(Wait::EndOfItem));
            steps
        }
        _ => vec![
            RowStep::FirstThread(body.to_vec()),
            RowStep::Barrier(Wait::EndOfItem),
        ],
    }
}

/// The lockstep steps of `body` (see [`row_steps`]).
fn lockstep_steps(body: &[Stmt]) -> Vec<RowStep> {
    let mut steps = Vec::new();
    for s in body {
        match s {
            Stmt::Let { .. } => steps.push(RowStep::Bind(s.clone())),
            Stmt::Store { .. } => steps.push(RowStep::LockstepStore(s.clone())),
            Stmt::For { vars, body, span } => {
                let mut inner = lockstep_steps(body);
                inner.push(RowStep::Barrier(Wait::EndOfIteration));
                steps.push(RowStep::LockstepLoop {
                    vars: vars.clone(),
                    span: *span,
                    body: inner,
                });
                steps.push(RowStep::Barrier(Wait::AfterLoop));
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => {
                steps.push(RowStep::LockstepIf {
                    cond: cond.clone(),
                    span: *span,
                    then: lockstep_steps(then),
                    els: lockstep_steps(els),
                });
                steps.push(RowStep::Barrier(Wait::AfterIf));
            }
        }
    }
    steps
}

/// Every `for` of `body` (at any depth) and whether its innermost
/// variable's iterations may run as lanes ([`crate::lane_refusal`]). Two
/// loops with one key (a rewrite's copies of a source loop) run as lanes
/// only if both may.
fn lane_loops(body: &[Stmt]) -> Vec<LoopRun> {
    let mut order: Vec<LoopKey> = Vec::new();
    let mut verdict: BTreeMap<LoopKey, Option<String>> = BTreeMap::new();
    for s in body {
        s.walk(&mut |t| {
            let Stmt::For {
                vars, body, span, ..
            } = t
            else {
                return;
            };
            let Some(v) = vars.last() else { return };
            let key = LoopKey::new(*span, &v.name);
            let why = crate::lane_refusal(v, body);
            match verdict.get_mut(&key) {
                Some(old) => {
                    if old.is_none() {
                        *old = why;
                    }
                }
                None => {
                    order.push(key.clone());
                    verdict.insert(key, why);
                }
            }
        });
    }
    order
        .into_iter()
        .map(|key| {
            let scalar = verdict.remove(&key).flatten();
            LoopRun { key, scalar }
        })
        .collect()
}

/// The loops of `body` whose quads of iterations may load before they
/// store ([`crate::batch_refusal`]); a key shared by two loops is in the
/// set only if both may.
fn batch_loops(body: &[Stmt]) -> BTreeSet<LoopKey> {
    let mut ok = BTreeSet::new();
    let mut refused = BTreeSet::new();
    for s in body {
        s.walk(&mut |t| {
            if let Stmt::For {
                vars, body, span, ..
            } = t
            {
                if let Some(v) = vars.last() {
                    let key = LoopKey::new(*span, &v.name);
                    if crate::batch_refusal(body).is_none() {
                        ok.insert(key);
                    } else {
                        refused.insert(key);
                    }
                }
            }
        });
    }
    ok.difference(&refused).cloned().collect()
}

/// The `_v4` entry point of an element kernel: its conditions and their
/// buffers, or `None` when the body is not straight-line loads and stores
/// that move with the innermost domain variable at unit stride, or its
/// lanes may not load before they store.
fn quads(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
) -> Option<(Vec<QuadCondition>, Vec<String>)> {
    let jv = k.domain.last()?.name.clone();
    let mut conditions = Vec::new();
    let mut sites = Vec::new();
    let mut stored = Vec::new();
    let mut loaded = Vec::new();
    let mut ok = true;
    for s in &k.body {
        match s {
            Stmt::Let { .. } | Stmt::Store { .. } => {}
            _ => ok = false,
        }
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Load { buf, idx, .. } = x {
                    let mut free = Vec::new();
                    x.free_vars(&mut free);
                    // Each distinct access once, in order of first
                    // appearance, as the printers load them (so the
                    // entry point's own failure sites name their buffers).
                    if free.contains(&jv) && !loaded.iter().any(|(b, i)| b == buf && i == idx) {
                        loaded.push((buf.clone(), idx.clone()));
                    }
                }
                if matches!(x, Expr::Reduce { .. }) {
                    ok = false;
                }
            })
        });
        if let Stmt::Store { buf, idx, .. } = s {
            stored.push((buf.clone(), idx.clone()));
        }
    }
    // Four lanes load before they store: the plan's batch rule for the
    // innermost domain variable.
    let batch = k
        .lanes
        .iter()
        .find(|l| l.line == 0)
        .is_some_and(|l| l.batch.is_none());
    if !ok || stored.is_empty() || !batch {
        return None;
    }
    let dom_lo = k.domain.last()?.lo.clone();
    for (buf, idx) in loaded.iter().chain(&stored) {
        let c = contiguous(program, index, k, buf, idx)?;
        let param = index.param(program, buf)?;
        let last = param.dims.last()?;
        let first = Expr::binary(
            BinOp::Sub,
            Expr::binary(BinOp::Add, dom_lo.clone(), c),
            last.lo.clone(),
        );
        let row = (param.dims.len() > 1)
            .then(|| Expr::binary(BinOp::Sub, last.hi.clone(), last.lo.clone()));
        conditions.push((first, row));
        sites.push(buf.clone());
    }
    Some((conditions, sites))
}

/// A contiguous access of an element kernel: the last index minus the
/// innermost variable (an expression of size symbols).
fn contiguous(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
    buf: &str,
    idx: &[Expr],
) -> Option<Expr> {
    let jv = &k.domain.last()?.name;
    let (a, rest) = crate::affine::unit_stride(index.param(program, buf)?, jv, idx)?;
    let symbols = index.symbols();
    // Outer indices are printed as affine code over the other domain
    // variables and sizes: anything else (a load, a product, a division)
    // keeps the scalar entry point.
    let outer_ok =
        |n: &String| *n != *jv && (symbols.contains(n) || k.domain.iter().any(|v| v.name == *n));
    for e in rest {
        if !Affine::of(e).is_some_and(|a| a.terms.keys().all(outer_ok)) {
            return None;
        }
    }
    if a.terms.keys().any(|n| n != jv && !symbols.contains(n)) {
        return None;
    }
    let mut c = Expr::Int(a.constant);
    for (n, k) in a.terms.iter().filter(|(n, _)| *n != jv) {
        c = Expr::binary(
            BinOp::Add,
            c,
            Expr::binary(BinOp::Mul, Expr::Int(*k), Expr::var(n)),
        );
    }
    Some(c)
}

/// The `_rows` entry point of a block-split row kernel, or `None` when it
/// would stage nothing.
fn rows(program: &Program, k: &Kernel, target: Target) -> Option<RowEntry> {
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
    if staged.is_empty() && scratch.is_empty() {
        return None;
    }
    let fused = fused_fills(&body, &scratch);
    let batches = batch_loops(&body);
    let steps = if target.barriers {
        row_steps(Some(&Sharing::Split), &body, &fused, &[])
    } else {
        Vec::new()
    };
    Some(RowEntry {
        body,
        staged,
        scratch,
        fused,
        batches,
        steps,
    })
}

/// The statements of `body` that fill a scratch row which the next one
/// reduces, walked as the printer walks them (a fused pair is one step).
fn fused_fills(body: &[Stmt], scratch: &[ScratchRow]) -> Vec<(usize, tile_ir::ReduceOp)> {
    let mut out = Vec::new();
    let mut a = 0;
    while a < body.len() {
        if let Some(op) = crate::fill_read_back(body, a, scratch) {
            out.push((a, op));
            a += 2;
        } else {
            a += 1;
        }
    }
    out
}

/// The `f32` rows the plan found several of `k`'s statements read whole
/// ([`Kernel::rereads`]) that `body` (the kernel's body or its cached one)
/// reads, in the order of the statements that first read them.
pub fn reread_rows(program: &Program, k: &Kernel, body: &[Stmt]) -> Vec<StagedRow> {
    let Some(row) = k.domain.first() else {
        return Vec::new();
    };
    let mut found: Vec<StagedRow> = Vec::new();
    for s in body {
        crate::row_level_loads(&mut s.clone(), &row.name, &mut |buf, _, lo, hi| {
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

/// The rows a streaming row kernel holds in registers: those several of
/// its statements read ([`reread_rows`]), `quads` quads per thread in all,
/// shared equally (rows beyond `quads` are not held).
///
/// Only in kernels whose results are per-row values (no row-level `for`),
/// which stream with 128 threads. Measured on an H200 (8 quads per
/// thread, against none): row_lse 26.75 -> 22.76 us at 4096x4096 and
/// 7.57 -> 6.98 at 1024x4096; but RMSNorm 38.27 -> 47.48 and LayerNorm
/// 42.26 -> 47.68 at 4096x4096, whose inner store loops stream with 256
/// threads, so those keep reading the row again.
fn held_rows(program: &Program, k: &Kernel, quads: u32) -> Vec<HeldRow> {
    if k.body.iter().any(|s| matches!(s, Stmt::For { .. })) {
        return Vec::new();
    }
    let rows = reread_rows(program, k, &k.body);
    let n = rows.len().min(quads as usize);
    rows.into_iter()
        .take(n)
        .enumerate()
        .map(|(i, row)| HeldRow {
            row,
            name: format!("hq{i}"),
            quads: quads / n as u32,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::{LoopVar, Span};

    fn loop_at(span: Span, store: Expr) -> Stmt {
        Stmt::For {
            vars: vec![LoopVar {
                name: "j".into(),
                lo: Expr::Int(0),
                hi: Expr::var("N"),
            }],
            body: vec![Stmt::store(
                "y",
                vec![store],
                Expr::load("x", vec![Expr::var("j")]),
                span,
            )],
            span,
        }
    }

    #[test]
    fn two_loops_with_one_key_run_as_lanes_only_if_both_may() {
        let span = Span::new(3, 5);
        let free = loop_at(span, Expr::var("j"));
        // Every iteration stores `y[0]`: not lanes.
        let meets = loop_at(span, Expr::Int(0));
        let runs = lane_loops(&[free.clone(), meets.clone()]);
        assert_eq!(runs.len(), 1);
        assert!(runs[0].scalar.is_some());
        let runs = lane_loops(&[meets, free.clone()]);
        assert!(runs[0].scalar.is_some());
        assert!(lane_loops(&[free.clone(), free])
            .iter()
            .all(|r| r.scalar.is_none()));
    }
}
