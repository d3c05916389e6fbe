//! `execute_plan`: run a plan's kernels on the FP64 interpreter, each with
//! its own mapping's freedom of order. This is how the legality property
//! test checks the planner: parallel mappings must give the sequential
//! result whatever order their work items run in. Shuffled runs also walk
//! backwards every innermost loop whose iterations may run as lanes or
//! threads ([`crate::lane_refusal`]: the loops the CPU vectorises, in any
//! kernel, and those a block splits, [`crate::Sharing::Split`]), so no
//! iteration of such a loop may depend on another.

use std::collections::BTreeMap;
use tile_ir::interp::{Env, Machine, RunError, Value};
use tile_ir::{Array, Span};

use crate::{Kernel, Mapping, Plan, ScratchRow, Sharing};
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
        run_kernel(program, k, n, &sizes, order, arrays)?;
    }
    Ok(())
}

/// Runs kernel `k` (number `n` in the plan) over `arrays`.
fn run_kernel(
    program: &Program,
    k: &Kernel,
    n: usize,
    sizes: &tile_ir::Sizes,
    order: Order,
    arrays: &mut BTreeMap<String, Array>,
) -> Result<(), RunError> {
    let (extended, body, scratch) = match &k.cached {
        Some(c) => {
            let rows: Vec<ScratchRow> = c
                .scratch
                .iter()
                .map(|r| ScratchRow {
                    dtype: DType::F64,
                    ..r.clone()
                })
                .collect();
            (crate::with_scratch(program, &rows), &c.body, rows)
        }
        None => (std::borrow::Cow::Borrowed(program), &k.body, vec![]),
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
            let r = run_items(&mut m, k, n, body, sizes, order);
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

/// Runs `body`, kernel `k`'s work item, at every point of its domain in
/// `order` (a full reduction or serial kernel once).
fn run_items(
    m: &mut Machine,
    k: &Kernel,
    n: usize,
    body: &[Stmt],
    sizes: &tile_ir::Sizes,
    order: Order,
) -> Result<(), RunError> {
    let mut env = Env::new(sizes);
    let body = if matches!(order, Order::Shuffled(_)) {
        let split = k.sharing == Some(Sharing::Split);
        std::borrow::Cow::Owned(reversed_lane_loops(body, split, &mut 0))
    } else {
        std::borrow::Cow::Borrowed(body)
    };
    // A full reduction's work items are chunks of one statement: run it
    // once.
    if matches!(k.mapping, Mapping::Serial | Mapping::FullReduction) {
        return m.exec(&body, &mut env);
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
/// may run as lanes ([`crate::lane_refusal`]) walked backwards, at any
/// depth: `for j in lo..hi { S }` becomes `__revlo0 = lo; __revhi0 = hi;
/// for __rev0 in __revlo0..__revhi0 { j = __revlo0 + __revhi0 - 1 -
/// __rev0; S }` (the bounds evaluated once, as the loop does), and `for i
/// in .., j in .. { S }` becomes `for i in .. { ... }` around that. With
/// `split` (a row or column the block splits) every top-level
/// single-variable loop is walked backwards too, whatever the rule says:
/// [`crate::find_row_forms`] splits only rows whose loops are such loops,
/// and a test that forces a split shows it matters. `n` numbers the names.
fn reversed_lane_loops(body: &[Stmt], split: bool, n: &mut usize) -> Vec<Stmt> {
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
                if forced || crate::lanes_independent(last, inner) {
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
                        body: reversed_lane_loops(inner, false, n),
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
                then: reversed_lane_loops(then, false, n),
                els: reversed_lane_loops(els, false, n),
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
