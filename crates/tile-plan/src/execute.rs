//! `execute_plan`: run a plan's kernels on the FP64 interpreter, each with
//! its own mapping's freedom of order. This is how the legality property
//! test checks the planner: parallel mappings must give the sequential
//! result whatever order their work items run in. Shuffled runs also walk
//! backwards every innermost loop whose iterations may run as lanes or
//! threads ([`crate::lane_refusal`]: the loops the CPU vectorises, in any
//! kernel, and those a block splits, [`crate::Sharing::Split`]), so no
//! iteration of such a loop may depend on another.
//!
//! `execute_lowered` does the same for what a target runs
//! ([`crate::kernel_ir::Lowered`]): each kernel's lowered body (cached,
//! interchanged a block of columns at a time, or a `_rows` entry point's),
//! with the loops the lowering runs as vector lanes, and the loops a block
//! splits over its threads, walked backwards in shuffled runs. The lowering
//! decides; this only runs its decisions, so a lowering that made a wrong
//! one shows up as a difference from sequential order.

use std::collections::BTreeMap;
use tile_ir::interp::{Env, Machine, RunError, Value};
use tile_ir::{Array, Span};

use crate::kernel_ir::{Form, LoopKey, Lowered, RowStep};
use crate::{Kernel, Mapping, Plan, ScratchRow, Sharing};
use std::collections::BTreeSet;
use tile_ir::{BinOp, DType, Expr, LoopVar, Program, Stmt};

/// The order in which work items of parallel kernels run.
#[derive(Clone, Copy, Debug)]
pub enum Order {
    /// Sequential (lexicographic) order.
    Sequential,
    /// A pseudo-random permutation from this seed (element grids, split
    /// kernels and rows alike).
    Shuffled(u64),
}

/// Runs every kernel of `plan` in launch order over `arrays`. A row kernel
/// with values cached in scratch rows ([`crate::Kernel::cached`]) runs its
/// cached body, as the targets do; the scratch rows hold `f64` here, so
/// the interpreter's values are the same as computing them twice, and a
/// run compares the rewrite itself with sequential execution.
pub fn execute_plan(
    plan: &Plan,
    arrays: &mut BTreeMap<String, Array>,
    explicit: &tile_ir::Sizes,
    order: Order,
) -> Result<(), RunError> {
    let program = &plan.program;
    let sizes = tile_ir::args::bind_arrays(program, arrays, explicit)?;
    for (n, k) in plan.kernels.iter().enumerate() {
        let (body, scratch) = match &k.cached {
            Some(c) => (&c.body, &c.scratch[..]),
            None => (&k.body, &[][..]),
        };
        let work = Work {
            body,
            scratch,
            reverse: Reverse::Rule {
                split: k.sharing == Some(Sharing::Split),
            },
            blocks: false,
        };
        run_kernel(program, k, n, &work, &sizes, order, arrays)?;
    }
    Ok(())
}

/// Which entry point's body [`execute_lowered`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryPoint {
    /// Every kernel's general entry point (the `_v4` entry point runs the
    /// same statements four elements at a time).
    General,
    /// The `_rows` entry point where a kernel has one, else the general.
    Rows,
}

/// Runs every kernel of `plan` as `lowered` (`plan` lowered for one
/// target) says it runs: its entry point's body, its scratch rows (in
/// `f64`, as [`execute_plan`]'s), a column kernel's interchanged body a
/// block of columns at a time (blocks of 1 to 5 columns in shuffled runs,
/// of [`crate::COLUMN_BLOCK`] in order), and in shuffled runs the loops the
/// lowering runs as vector lanes ([`crate::kernel_ir::LoweredKernel::lane_loops`])
/// and the loops its steps split over a block's threads
/// ([`crate::kernel_ir::LoweredKernel::steps`]), walked backwards. An interchanged body rounds each column's sum to the
/// column's type before the statements that read it, so its results may
/// differ from sequential order in the last bits; every other lowered body
/// gives the sequential result bit for bit.
pub fn execute_lowered(
    plan: &Plan,
    lowered: &Lowered,
    entry: EntryPoint,
    arrays: &mut BTreeMap<String, Array>,
    explicit: &tile_ir::Sizes,
    order: Order,
) -> Result<(), RunError> {
    let program = &plan.program;
    let sizes = tile_ir::args::bind_arrays(program, arrays, explicit)?;
    for (n, (k, lk)) in plan.kernels.iter().zip(&lowered.kernels).enumerate() {
        let (body, scratch, steps) = match (entry, lk.rows()) {
            (EntryPoint::Rows, Some(r)) => (&r.body, &r.scratch[..], &r.steps),
            _ => (&lk.body, &lk.scratch[..], &lk.steps),
        };
        // A tiled contraction: each block of columns' products, then the
        // epilogue on them.
        // (On a GPU the same products come a tile per block: the same
        // values, replayed the same way, with the scratch row they need.)
        let by_blocks = lk
            .contraction
            .as_ref()
            .map(|c| (c.row_by_blocks(), vec![c.scratch.clone()]))
            .or_else(|| {
                lk.attention
                    .as_ref()
                    .map(|a| (a.row_in_steps(), a.scratch.clone()))
            });
        let (body, scratch) = match &by_blocks {
            Some((b, s)) => (&b[..], &s[..]),
            None => (&body[..], scratch),
        };
        let work = Work {
            body,
            scratch,
            reverse: Reverse::Keys {
                lanes: lk.lane_loops(),
                threads: thread_loops(steps),
            },
            blocks: lk.form == Form::Interchanged && k.mapping == Mapping::ColumnReduction,
        };
        run_kernel(program, k, n, &work, &sizes, order, arrays)?;
    }
    Ok(())
}

/// What one kernel runs.
struct Work<'a> {
    body: &'a [Stmt],
    scratch: &'a [ScratchRow],
    /// The loops a shuffled run walks backwards.
    reverse: Reverse,
    /// A column kernel's interchanged body: its work items are blocks of
    /// columns, bound to [`crate::column_block_names`].
    blocks: bool,
}

/// Which innermost loops a shuffled run walks backwards.
enum Reverse {
    /// Those [`crate::lanes_independent`] allows (the plan's facts); with
    /// `split`, every top-level single-variable loop too.
    Rule { split: bool },
    /// Those whose [`LoopKey`] is in `lanes` or `threads` (the lowering's
    /// decisions: loops on vector lanes, loops a block's threads split).
    Keys {
        lanes: BTreeSet<LoopKey>,
        threads: BTreeSet<LoopKey>,
    },
}

/// The loops a GPU block's threads split, by the lowering's steps
/// ([`RowStep::Split`], and the fill of a [`RowStep::FillAndReduce`]).
fn thread_loops(steps: &[RowStep]) -> BTreeSet<LoopKey> {
    let mut keys = BTreeSet::new();
    for st in steps {
        let (RowStep::Split(s) | RowStep::FillAndReduce { fill: s, .. }) = st else {
            continue;
        };
        if let Stmt::For { vars, span, .. } = s {
            if let Some(v) = vars.last() {
                keys.insert(LoopKey::new(*span, &v.name));
            }
        }
    }
    keys
}

/// Runs kernel `k` (number `n` in the plan) over `arrays`.
fn run_kernel(
    program: &Program,
    k: &Kernel,
    n: usize,
    work: &Work,
    sizes: &tile_ir::Sizes,
    order: Order,
    arrays: &mut BTreeMap<String, Array>,
) -> Result<(), RunError> {
    let scratch: Vec<ScratchRow> = work
        .scratch
        .iter()
        .map(|r| ScratchRow {
            dtype: DType::F64,
            ..r.clone()
        })
        .collect();
    let extended = if scratch.is_empty() {
        std::borrow::Cow::Borrowed(program)
    } else {
        crate::with_scratch(program, &scratch)
    };
    let mut held = std::mem::take(arrays);
    for r in &scratch {
        let lo = tile_ir::args::eval_int(&r.lo, sizes);
        let hi = tile_ir::args::eval_int(&r.hi, sizes);
        let len = match (lo, hi) {
            (Some(lo), Some(hi)) => usize::try_from(hi.saturating_sub(lo).max(0)).unwrap_or(0),
            _ => 0,
        };
        match Array::try_zeros(DType::F64, &[len]) {
            Ok(a) => {
                held.insert(r.name.clone(), a);
            }
            Err(e) => {
                *arrays = held;
                return Err(RunError::TooLarge(format!("scratch row {}: {e}", r.name)));
            }
        }
    }
    let result = match Machine::new(&extended, sizes.clone(), held) {
        Ok(mut m) => {
            let r = run_items(&mut m, k, n, work, sizes, order);
            held = m.arrays;
            r
        }
        // Only on a box it cannot evaluate (bind_arrays evaluated the
        // program's already): the arrays are gone, as the caller's run is.
        Err(e) => return Err(e),
    };
    for r in &scratch {
        held.remove(&r.name);
    }
    *arrays = held;
    result
}

/// Runs `work`'s body, kernel `k`'s work item, at every point of its
/// domain in `order` (a full reduction or serial kernel once).
fn run_items(
    m: &mut Machine,
    k: &Kernel,
    n: usize,
    work: &Work,
    sizes: &tile_ir::Sizes,
    order: Order,
) -> Result<(), RunError> {
    let mut env = Env::new(sizes);
    let body = if matches!(order, Order::Shuffled(_)) {
        let reversed = match &work.reverse {
            Reverse::Rule { split } => reversed_lane_loops(
                work.body,
                *split,
                &|last, inner, _| crate::lanes_independent(last, inner),
                &mut 0,
            ),
            Reverse::Keys { lanes, threads } => reversed_lane_loops(
                work.body,
                false,
                &|last, _, span| {
                    let key = LoopKey::new(span, &last.name);
                    lanes.contains(&key) || threads.contains(&key)
                },
                &mut 0,
            ),
        };
        std::borrow::Cow::Owned(reversed)
    } else {
        std::borrow::Cow::Borrowed(work.body)
    };
    // A full reduction's work items are chunks of one statement: run it
    // once.
    if matches!(k.mapping, Mapping::Serial | Mapping::FullReduction) {
        return m.exec(&body, &mut env);
    }
    if work.blocks {
        return run_column_blocks(m, k, n, &body, &mut env, order);
    }
    // The domain's points, in order or shuffled; sequential runs never
    // materialise them.
    let mut ranges = Vec::new();
    for v in &k.domain {
        let lo = m.int(&v.lo, &env, Span::default())?;
        let hi = m.int(&v.hi, &env, Span::default())?;
        ranges.push((lo, hi.max(lo)));
    }
    let total = k
        .work_items(sizes)
        .map_err(|e| RunError::TooLarge(e.to_string()))?;
    let mut run_point = |p: i64, env: &mut Env| -> Result<(), RunError> {
        let depth = env.len();
        let mut rest = p;
        let mut coords = vec![0; ranges.len()];
        for (d, (lo, hi)) in ranges.iter().enumerate().rev() {
            coords[d] = lo + rest % (hi - lo);
            rest /= hi - lo;
        }
        for (v, c) in k.domain.iter().zip(coords) {
            env.push(&v.name, Value::I(c));
        }
        m.exec(&body, env)?;
        env.truncate(depth);
        Ok(())
    };
    match order {
        Order::Sequential => {
            for p in 0..total {
                run_point(p, &mut env)?;
            }
        }
        Order::Shuffled(seed) => {
            let bytes = (total as u64).saturating_mul(8);
            let ceiling =
                tile_ir::limits::memory_ceiling().map_err(|e| RunError::TooLarge(e.to_string()))?;
            let mut points = Vec::new();
            if bytes > ceiling || points.try_reserve_exact(total as usize).is_err() {
                return Err(RunError::TooLarge(format!(
                    "kernel {}: shuffling {total} work items needs {bytes} bytes",
                    k.name
                )));
            }
            points.extend(0..total);
            shuffle(
                &mut points,
                seed ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            for p in points {
                run_point(p, &mut env)?;
            }
        }
    }
    Ok(())
}

/// Runs an interchanged column kernel's body once per block of columns
/// (the block's first column and one past its last bound to
/// [`crate::column_block_names`]): blocks of [`crate::COLUMN_BLOCK`]
/// columns in order, or of 1 to 5 columns in a shuffled order.
fn run_column_blocks(
    m: &mut Machine,
    k: &Kernel,
    n: usize,
    body: &[Stmt],
    env: &mut Env,
    order: Order,
) -> Result<(), RunError> {
    let Some(col) = k.domain.first() else {
        return m.exec(body, env);
    };
    let lo = m.int(&col.lo, env, Span::default())?;
    let hi = m.int(&col.hi, env, Span::default())?.max(lo);
    let mut blocks = Vec::new();
    let mut first = lo;
    let mut step = 0u64;
    while first < hi {
        let len = match order {
            Order::Sequential => crate::COLUMN_BLOCK,
            Order::Shuffled(seed) => {
                step += 1;
                1 + ((seed ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15)) % 5) as i64
            }
        };
        let end = hi.min(first.saturating_add(len));
        blocks.push((first, end));
        first = end;
    }
    if let Order::Shuffled(seed) = order {
        let mut idx: Vec<i64> = (0..blocks.len() as i64).collect();
        shuffle(
            &mut idx,
            seed ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        blocks = idx.into_iter().map(|i| blocks[i as usize]).collect();
    }
    let (cb, ce) = crate::column_block_names();
    for (first, end) in blocks {
        let depth = env.len();
        env.push(&cb, Value::I(first));
        env.push(&ce, Value::I(end));
        m.exec(body, env)?;
        env.truncate(depth);
    }
    Ok(())
}

/// Fisher-Yates with a small xorshift generator (deterministic per seed).
fn shuffle(v: &mut [i64], seed: u64) {
    let mut s = seed | 1;
    for i in (1..v.len()).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.swap(i, (s % (i as u64 + 1)) as usize);
    }
}

/// `body` with the last variable of each innermost loop whose iterations
/// may run as lanes (`pick`) walked backwards, at any
/// depth: `for j in lo..hi { S }` becomes `__revlo0 = lo; __revhi0 = hi;
/// for __rev0 in __revlo0..__revhi0 { j = __revlo0 + __revhi0 - 1 -
/// __rev0; S }` (the bounds evaluated once, as the loop does), and `for i
/// in .., j in .. { S }` becomes `for i in .. { ... }` around that. With
/// `split` (a row or column the block splits) every top-level
/// single-variable loop is walked backwards too, whatever the rule says:
/// [`crate::find_row_forms`] splits only rows whose loops are such loops,
/// and a test that forces a split shows it matters. `pick` says which
/// other loops may run backwards (given the loop's last variable, its
/// body and its place). `n` numbers the names.
fn reversed_lane_loops(
    body: &[Stmt],
    split: bool,
    pick: &dyn Fn(&LoopVar, &[Stmt], Span) -> bool,
    n: &mut usize,
) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::For {
                vars,
                body: inner,
                span,
            } => {
                let Some((last, outer)) = vars.split_last() else {
                    out.push(s.clone());
                    continue;
                };
                let forced = split && vars.len() == 1;
                if forced || pick(last, inner, *span) {
                    let reversed = reversed_loop(last, inner, *span, n);
                    if outer.is_empty() {
                        out.extend(reversed);
                    } else {
                        out.push(Stmt::For {
                            vars: outer.to_vec(),
                            body: reversed,
                            span: *span,
                        });
                    }
                } else {
                    out.push(Stmt::For {
                        vars: vars.clone(),
                        body: reversed_lane_loops(inner, false, pick, n),
                        span: *span,
                    });
                }
            }
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => out.push(Stmt::If {
                cond: cond.clone(),
                then: reversed_lane_loops(then, false, pick, n),
                els: reversed_lane_loops(els, false, pick, n),
                span: *span,
            }),
            s => out.push(s.clone()),
        }
    }
    out
}

/// The loop over `v` with `body`, walked backwards (see
/// [`reversed_lane_loops`]).
fn reversed_loop(v: &LoopVar, body: &[Stmt], span: Span, n: &mut usize) -> Vec<Stmt> {
    let lo = tile_ir::names::generated("revlo", *n);
    let hi = tile_ir::names::generated("revhi", *n);
    let rev = tile_ir::names::generated("rev", *n);
    *n += 1;
    let last = Expr::binary(
        BinOp::Sub,
        Expr::binary(BinOp::Add, Expr::var(&lo), Expr::var(&hi)),
        Expr::Int(1),
    );
    let mut inner = vec![Stmt::Let {
        name: v.name.clone(),
        value: Expr::binary(BinOp::Sub, last, Expr::var(&rev)),
        span,
    }];
    inner.extend(body.iter().cloned());
    vec![
        Stmt::Let {
            name: lo.clone(),
            value: v.lo.clone(),
            span,
        },
        Stmt::Let {
            name: hi.clone(),
            value: v.hi.clone(),
            span,
        },
        Stmt::For {
            vars: vec![LoopVar {
                name: rev,
                lo: Expr::var(&lo),
                hi: Expr::var(&hi),
            }],
            body: inner,
            span,
        },
    ]
}
