//! The lowering ([`tile_plan::lower_kernels`]): every choice a back end
//! prints is made here, from the plan's facts, and the back ends call no
//! legality rule themselves.

use std::path::Path;
use tile_plan::kernel_ir::{
    quads_aligned, Entry, Form, Lowered, Reassociation, RowStaging, RowStep, Target, Wait,
};
use tile_plan::{compile, lower_kernels, Options};

fn lower(text: &str, target: Target) -> Lowered {
    let program = tile_ir::parse_program(text).unwrap();
    let plan = compile(&program, &Options { fusion: true }).unwrap();
    lower_kernels(&plan, target)
}

const SOFTMAX: &str = "program softmax(x: in f32[M, N], y: out f32[M, N]) {
  for i in 0..M {
    m = max(j in 0..N: x[i, j])
    z = sum(j in 0..N: exp(x[i, j] - m))
    for j in 0..N {
      y[i, j] = exp(x[i, j] - m) / z
    }
  }
}";

#[test]
fn softmax_caches_on_the_cpu_and_stages_on_cuda() {
    let cpu = lower(SOFTMAX, Target::CPU);
    let k = &cpu.kernels[0];
    assert_eq!(k.form, Form::Cached);
    assert_eq!(k.scratch.len(), 1);
    assert!(k.loops.iter().all(|l| l.scalar.is_none()), "{:?}", k.loops);
    assert_eq!(k.reassociation, Reassociation::Vectors { accumulators: 4 });
    assert!(k.entries.is_empty() && k.held.is_empty());

    let cuda = lower(SOFTMAX, Target::cuda(8));
    let k = &cuda.kernels[0];
    // The general entry point streams the plan's body; `_rows` stages
    // `x` and fuses the exponentials' fill with the sum reading them.
    assert_eq!(k.form, Form::Plain);
    assert!(k.loops.is_empty());
    assert_eq!(k.reassociation, Reassociation::Threads);
    let rows = k.rows().expect("a _rows entry point");
    assert_eq!(rows.staged.len(), 1);
    assert_eq!(rows.staged[0].buf, "x");
    assert_eq!(rows.scratch.len(), 1);
    assert_eq!(rows.fused.len(), 1);
    assert_eq!(rows.fused[0].1, tile_ir::ReduceOp::Sum);
    // A row-level store loop: no rows are held in registers.
    assert!(k.held.is_empty());
}

#[test]
fn element_kernels_get_sixteen_byte_entry_points_where_accesses_allow() {
    let pair = "program pair(x: in f32[M, N], v: out f32[M, N], g: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    s = sigmoid(x[i, j])
    v[i, j] = s
    g[i, j] = s * (1.0 - s)
  }
}";
    let cuda = lower(pair, Target::cuda(8));
    let (conditions, sites) = cuda.kernels[0].quads().expect("a _v4 entry point");
    assert_eq!(sites, ["x", "v", "g"]);
    assert_eq!(conditions.len(), 3);
    let cpu = lower(pair, Target::CPU);
    assert_eq!(cpu.kernels[0].inner, Some(None));
    assert!(cpu.kernels[0].entries.is_empty());

    // A transposed read is not contiguous: no `_v4`.
    let transposed = "program t(x: in f32[N, M], y: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    y[i, j] = x[j, i]
  }
}";
    assert!(lower(transposed, Target::cuda(8)).kernels[0]
        .quads()
        .is_none());
    // An `f64` buffer is not four to 16 bytes: no `_v4`.
    let wide = "program w(x: in f64[N], y: out f64[N]) {
  for j in 0..N {
    y[j] = x[j] * 2.0
  }
}";
    assert!(lower(wide, Target::cuda(8)).kernels[0].quads().is_none());
}

#[test]
fn a_loop_whose_iterations_meet_runs_in_order_and_says_why() {
    let text = "program shift(x: in f32[M, N], y: out f32[M, N + 1], s: out f32[M]) {
  for i in 0..M {
    s[i] = sum(j in 0..N: x[i, j])
    for j in 0..N {
      y[i, j] = x[i, j]
      y[i, j + 1] = x[i, j] * 2.0
    }
  }
}";
    let cpu = lower(text, Target::CPU);
    let k = &cpu.kernels[0];
    let run = k
        .loops
        .iter()
        .find(|l| l.key.var == "j")
        .expect("the j loop");
    assert!(run.scalar.is_some(), "{run:?}");
    assert!(k.lane_loops().is_empty());
    let shown = cpu.to_string();
    assert!(
        shown.contains("loop:   j at line 4: one iteration at a time ("),
        "{shown}"
    );
}

#[test]
fn streaming_rows_hold_what_several_statements_reread() {
    let text = "program lse(x: in f32[M, N], y: out f32[M]) {
  for i in 0..M {
    m = max(j in 0..N: x[i, j])
    y[i] = m + log(sum(j in 0..N: exp(x[i, j] - m)))
  }
}";
    let k = lower(text, Target::cuda(8)).kernels.remove(0);
    assert_eq!(k.held.len(), 1);
    assert_eq!(k.held[0].row.buf, "x");
    assert_eq!(k.held[0].quads, 8);
    // Holding off (`TILE_CUDA_HOLD=0`) holds nothing.
    assert!(lower(text, Target::cuda(0)).kernels[0].held.is_empty());
}

#[test]
fn lowering_is_deterministic_and_prints_as_json() {
    for target in [Target::CPU, Target::cuda(8)] {
        let a = lower(SOFTMAX, target);
        let b = lower(SOFTMAX, target);
        assert_eq!(a, b);
        assert_eq!(a.to_string(), b.to_string());
        let json = a.to_json();
        assert_eq!(json["target"], target.name);
        assert_eq!(json["kernels"][0]["name"], "k0");
    }
    let cuda = lower(SOFTMAX, Target::cuda(8)).to_json();
    assert_eq!(cuda["kernels"][0]["entries"][0]["entry"], "rows");
    assert_eq!(cuda["kernels"][0]["entries"][0]["fused"][0], 2);
}

fn sizes(pairs: &[(&str, i64)]) -> tile_ir::Sizes {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn the_runtime_picks_entry_points_by_the_lowerings_rules() {
    // `_v4` where every quad starts on a 16-byte boundary.
    let pair = "program pair(x: in f32[M, N], v: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    v[i, j] = sigmoid(x[i, j])
  }
}";
    let cuda = lower(pair, Target::cuda(8));
    let (conditions, _) = cuda.kernels[0].quads().unwrap();
    assert!(quads_aligned(conditions, &sizes(&[("M", 3), ("N", 8)])));
    assert!(!quads_aligned(conditions, &sizes(&[("M", 3), ("N", 6)])));
    assert!(quads_aligned(conditions, &sizes(&[("M", 1), ("N", 4)])));

    // `_rows`: softmax caches its exponentials in a scratch row, so it is
    // staged at any length; a row that is only reread streams up to
    // 8192 elements.
    let softmax = lower(SOFTMAX, Target::cuda(8));
    let rows = softmax.kernels[0].rows().unwrap();
    assert!(rows.stages(RowStaging::Auto, 5));
    assert!(!rows.stages(RowStaging::Never, 50_000));
    // `x`'s row and the scratch row, each 5 elements in two quads.
    assert_eq!(
        rows.staging_bytes(&sizes(&[("M", 3), ("N", 5)])),
        Some((64, 5))
    );
    let rms = "program rms(x: in f32[M, N], w: in f32[N], y: out f32[M, N]) {
  for i in 0..M {
    r = 1.0 / sqrt(sum(j in 0..N: x[i, j] * x[i, j]) + 0.00001)
    for j in 0..N {
      y[i, j] = x[i, j] * r * w[j]
    }
  }
}";
    let lowered = lower(rms, Target::cuda(8));
    let rows = lowered.kernels[0].rows().expect("x is read twice");
    assert!(rows.scratch.is_empty());
    assert!(!rows.stages(RowStaging::Auto, 4096));
    assert!(!rows.stages(RowStaging::Auto, 8192));
    assert!(rows.stages(RowStaging::Auto, 8193));
    assert!(rows.stages(RowStaging::Always, 4));
}

/// How a GPU block reduces a full reduction's chunk is the lowering's
/// (`LoweredKernel::full`, printed as `chunks:`), one form per shape.
#[test]
fn full_reduction_chunks_take_the_lowerings_form() {
    use tile_plan::kernel_ir::FullForm;
    let form = |text: &str| lower(text, Target::cuda(8)).kernels[0].full;
    let one = "program a(x: in f32[N], t: out f32[1]) { t[0] = sum(i in 0..N: x[i]) }";
    assert_eq!(form(one), Some(FullForm::OverBlock));
    let rows = "program b(x: in f32[M, N], t: out f32[1]) { t[0] = sum(i in 0..M: sum(j in 0..N: x[i, j])) }";
    assert_eq!(form(rows), Some(FullForm::ThreadShares));
    let mixed = "program c(x: in f32[M, N], t: out f32[1]) { t[0] = max(i in 0..M: sum(j in 0..N: x[i, j])) }";
    assert_eq!(form(mixed), Some(FullForm::RowsOverBlock));
    let deep = "program d(x: in f32[M, N], t: out f32[1]) { t[0] = sum(i in 0..M: sum(j in 0..N: sum(k in 0..N: x[i, j] * x[i, k]))) }";
    assert_eq!(form(deep), Some(FullForm::OneThread));
    assert!(lower(mixed, Target::cuda(8))
        .to_string()
        .contains("chunks: a chunk's rows one after another, each row's reductions split over the block, a barrier after each row; a barrier after each chunk"));
    // The CPU has no barriers: no chunk form.
    assert_eq!(lower(one, Target::CPU).kernels[0].full, None);
}

/// Which accesses of a row kernel a GPU thread may read as 16-byte
/// vectors is the lowering's answer (`LoweredKernel::quads`), not the
/// printer's.
#[test]
fn contiguous_accesses_are_the_lowerings() {
    let text = "program q(x: in f32[M, N], d: in f64[M, N], k: in i32[N], y: out f32[M, N], s: out f32[M]) {
  for i in 0..M {
    s[i] = sum(j in 0..N: x[i, j] * x[i, N - 1 - j] + f32(d[i, j]) + x[i, k[j]])
    for j in 0..N {
      t = x[i, j] + 1.0
      y[i, j] = t * x[j, 0]
    }
  }
}";
    let lowered = lower(text, Target::cuda(8));
    let q = &lowered.kernels[0].quads;
    let idx = |s: &str| {
        tile_ir::parse_program(&format!(
            "program p(a: in f32[M, N], o: out f32[M]) {{ for i in 0..M {{ o[i] = a[{s}] }} }}"
        ))
        .map(|p| match &p.body[0] {
            tile_ir::Stmt::For { body, .. } => match &body[0] {
                tile_ir::Stmt::Store {
                    value: tile_ir::Expr::Load { idx, .. },
                    ..
                } => idx.clone(),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .unwrap()
    };
    // Unit stride in the loop's variable, everything else fixed.
    assert!(q.quad("j", "x", &idx("i, j")), "{:?}", q.list());
    assert!(q.quad("j", "y", &idx("i, j")), "{:?}", q.list());
    // Reversed, `f64`, gathered, or varying in the other index.
    assert!(!q.quad("j", "x", &idx("i, N - 1 - j")));
    assert!(!q.quad("j", "d", &idx("i, j")));
    assert!(!q.quad("j", "x", &idx("i, k[j]")));
    assert!(!q.quad("j", "x", &idx("j, 0")));
    assert!(
        lowered
            .to_string()
            .contains("access: 16-byte over j where checked at the loop's entry: x[i, j], y[i, j]"),
        "{lowered}"
    );
    // The CPU has no 16-byte accesses to decide.
    assert!(lower(text, Target::CPU).kernels[0].quads.list().is_empty());
    // Contiguous, but through a binding: no check at the loop's entry
    // proves it in bounds (a binding's range is not known there), so it
    // is no quad; the same row through the row variable is.
    let bound = "program q(x: in f32[M, N], s: out f32[M]) {
  for i in 0..M {
    r = M - 1 - i
    s[i] = sum(j in 0..N: x[r, j]) + sum(k in 0..N: x[i, k])
  }
}";
    let q = lower(bound, Target::cuda(8)).kernels[0].quads.clone();
    assert!(!q.quad("j", "x", &idx("r, j")), "{:?}", q.list());
    assert!(q.quad("k", "x", &idx("i, k")), "{:?}", q.list());
    // A binding that takes the name of an earlier reduction's variable:
    // the printer knows no range for it after the binding, so the lowering
    // counts on none (an access through it is no quad, and printing the
    // kernel does not stop).
    let rebound = "program q(x: in f32[M, N], idx: in i32[M], y: out f32[M, N]) {
  for i in 0..M {
    s = sum(j in 0..N: x[i, j])
    j = idx[i]
    for k in 0..N { y[i, k] = x[i, k + j] / s }
  }
}";
    let program = tile_ir::parse_program(rebound).unwrap();
    let plan = compile(&program, &Options { fusion: true }).unwrap();
    let q = lower_kernels(&plan, Target::cuda(8)).kernels[0]
        .quads
        .clone();
    assert!(!q.quad("k", "x", &idx("i, k + j")), "{:?}", q.list());
}

#[test]
fn sibling_column_reductions_over_one_range_run_in_one_pass() {
    // LayerNorm backward's weight and bias gradients: both read grad_y down
    // the same rows.
    let siblings = "program g(x: in f32[M, N], gy: in f32[M, N], m: in f32[M], gw: out f32[N], gb: out f32[N]) {
  for j in 0..N {
    gw[j] = sum(i in 0..M: gy[i, j] * (x[i, j] - m[i]))
    gb[j] = 2.0 * sum(i in 0..M: gy[i, j]) + max(i in 0..M: x[i, j])
  }
}";
    let cuda = lower(siblings, Target::cuda(8));
    let k = &cuda.kernels[0];
    assert_eq!(
        kinds(&k.steps),
        [
            "together3",
            "first_store",
            "barrier:Writes",
            "first_store",
            "barrier:Writes"
        ],
        "{cuda}"
    );
    assert!(cuda
        .to_string()
        .contains("bind in one pass __sib0 (line 3), __sib1 (line 4), __sib2 (line 4)"));
    // Every slice loop of a shared CUDA column is unrolled, a lone
    // reduction's too; the CPU's and a row kernel's are not.
    assert_eq!(k.slice_unroll, tile_plan::kernel_ir::SLICE_UNROLL);
    assert!(cuda
        .to_string()
        .contains("slices: each thread's slice of the rows in one loop, unrolled by 8"));
    let lone = "program s(x: in f32[M, N], y: out f32[N]) { for j in 0..N { y[j] = sum(i in 0..M: x[i, j]) } }";
    assert_eq!(lower(lone, Target::cuda(8)).kernels[0].slice_unroll, 8);
    assert_eq!(lower(lone, Target::CPU).kernels[0].slice_unroll, 1);
    let row = "program r(x: in f32[M, N], y: out f32[M]) { for i in 0..M { y[i] = sum(j in 0..N: x[i, j]) } }";
    assert_eq!(lower(row, Target::cuda(8)).kernels[0].slice_unroll, 1);
    // The statements read the bound names, and nothing else changed.
    let printed: Vec<String> = k.body.iter().map(|s| format!("{s}")).collect();
    assert!(printed[3].contains("gw[j] = __sib0"), "{printed:?}");
    assert!(printed[4].contains("__sib1") && printed[4].contains("__sib2"));
    // The CPU runs its column blocks with one sweep over the rows for the
    // three reductions (interchange_columns), and no GPU steps.
    assert!(!lower(siblings, Target::CPU)
        .to_string()
        .contains("one pass"));
    let plan = compile(
        &tile_ir::parse_program(siblings).unwrap(),
        &Options { fusion: true },
    )
    .unwrap();
    assert!(
        plan.to_string()
            .contains("sweeps: 3 reductions over the same rows in one sweep per block"),
        "{plan}"
    );
    let blocked = &plan.kernels[0].interchanged.as_ref().unwrap().body;
    let sweeps = blocked
        .iter()
        .filter(|s| matches!(s, tile_ir::Stmt::For { vars, .. } if vars[0].name == "i"))
        .count();
    assert_eq!(sweeps, 1, "{blocked:?}");

    // Not siblings: a later reduction reads what an earlier statement
    // stores or binds, or runs over another range.
    for apart in [
        "program a(x: in f32[M, N], y: inout f32[M, N], s: out f32[N]) {
  for j in 0..N {
    y[0, j] = sum(i in 0..M: x[i, j])
    s[j] = sum(i in 0..M: y[i, j])
  }
}",
        "program b(x: in f32[M, N], s: out f32[N]) {
  for j in 0..N {
    t = sum(i in 0..M: x[i, j])
    s[j] = sum(i in 0..M: x[i, j] * t)
  }
}",
        "program c(x: in f32[M, N], s: out f32[N], u: out f32[N]) {
  for j in 0..N {
    s[j] = sum(i in 0..M: x[i, j])
    u[j] = sum(i in 1..M: x[i, j])
  }
}",
    ] {
        let cuda = lower(apart, Target::cuda(8));
        assert!(!cuda.to_string().contains("one pass"), "{apart}\n{cuda}");
    }
}

#[test]
fn threads_that_check_then_wait_are_recorded_for_the_refusal() {
    let columns = "program cs(x: in f32[M, N], y: out f32[N]) {
  for j in 0..N {
    y[j] = sum(i in 0..M: x[i, j])
  }
}";
    let deep = "program d(x: in f32[N, N, N], y: out f32) {
  y = sum(i in 0..N: sum(j in 0..N: sum(k in 0..N: x[i, j, k])))
}";
    let flat = "program f(x: in f32[N], y: out f32) {
  y = sum(i in 0..N: x[i])
}";
    for (text, waits) in [
        (columns, true),
        (deep, true),
        (flat, false),
        (SOFTMAX, false),
    ] {
        let cuda = lower(text, Target::cuda(8));
        assert_eq!(
            cuda.kernels.iter().any(|k| k.check_then_wait),
            waits,
            "{text}\n{cuda}"
        );
        // The CPU has no barriers.
        assert!(lower(text, Target::CPU)
            .kernels
            .iter()
            .all(|k| !k.check_then_wait));
    }
    assert!(lower(columns, Target::cuda(8))
        .to_string()
        .contains("waits:  threads check different ranges"));
}

/// The statements `steps` run, at the top level, in order.
fn stepped(steps: &[RowStep]) -> Vec<tile_ir::Stmt> {
    let mut out = Vec::new();
    for st in steps {
        match st {
            RowStep::Bind(s)
            | RowStep::Split(s)
            | RowStep::FirstThreadStore(s)
            | RowStep::LockstepStore(s) => out.push(s.clone()),
            RowStep::FillAndReduce { fill, bind, .. } => {
                out.push(fill.clone());
                out.push(bind.clone());
            }
            RowStep::FirstThread(b) | RowStep::BindTogether(b) => out.extend(b.iter().cloned()),
            RowStep::LockstepLoop { vars, span, body } => out.push(tile_ir::Stmt::For {
                vars: vars.clone(),
                body: stepped(body),
                span: *span,
            }),
            RowStep::LockstepIf {
                cond,
                span,
                then,
                els,
            } => out.push(tile_ir::Stmt::If {
                cond: cond.clone(),
                then: stepped(then),
                els: stepped(els),
                span: *span,
            }),
            RowStep::Barrier(_) => {}
        }
    }
    out
}

fn kinds(steps: &[RowStep]) -> Vec<String> {
    steps
        .iter()
        .map(|s| match s {
            RowStep::Bind(_) => "bind".to_string(),
            RowStep::BindTogether(b) => format!("together{}", b.len()),
            RowStep::Split(_) => "split".to_string(),
            RowStep::FillAndReduce { .. } => "fill".to_string(),
            RowStep::FirstThreadStore(_) => "first_store".to_string(),
            RowStep::FirstThread(_) => "first_thread".to_string(),
            RowStep::LockstepStore(_) => "lock_store".to_string(),
            RowStep::LockstepLoop { body, .. } => format!("lock_loop[{}]", kinds(body).join(",")),
            RowStep::LockstepIf { then, els, .. } => format!(
                "lock_if[{}|{}]",
                kinds(then).join(","),
                kinds(els).join(",")
            ),
            RowStep::Barrier(w) => format!("barrier:{w:?}"),
        })
        .collect()
}

#[test]
fn a_gpu_row_is_a_list_of_steps_with_every_barrier() {
    let cuda = lower(SOFTMAX, Target::cuda(8));
    let k = &cuda.kernels[0];
    assert_eq!(
        kinds(&k.steps),
        ["bind", "bind", "split", "barrier:Writes"],
        "{cuda}"
    );
    assert_eq!(
        kinds(&k.rows().unwrap().steps),
        ["bind", "fill", "split", "barrier:Writes"]
    );
    // A per-row result: stored by the first thread, then a barrier.
    let lse = "program lse(x: in f32[M, N], y: out f32[M]) {
  for i in 0..M {
    y[i] = log(sum(j in 0..N: exp(x[i, j])))
  }
}";
    let k = &lower(lse, Target::cuda(8)).kernels[0];
    assert_eq!(kinds(&k.steps), ["first_store", "barrier:Writes"]);
    // A running sum after a reduction: lockstep, with a barrier before and
    // after each store (inside the step), each iteration and the loop.
    let scan = "program scan(x: in f32[M, N], y: inout f32[M, N]) {
  for i in 0..M {
    t = sum(j in 0..N: x[i, j])
    for j in 1..N {
      y[i, j] = y[i, j - 1] + t
    }
  }
}";
    let k = &lower(scan, Target::cuda(8)).kernels[0];
    assert_eq!(
        kinds(&k.steps),
        [
            "bind",
            "lock_loop[lock_store,barrier:EndOfIteration]",
            "barrier:AfterLoop",
            "barrier:EndOfItem"
        ]
    );
    // An `if` with only an `else`, in a row with a reduction, and a loop
    // over two variables: lockstep, a barrier after the `if`, after each
    // iteration and after the loop.
    let branches = "program br(x: in f32[M, N], y: inout f32[M, N], t: out f32[M]) {
  for i in 0..M {
    s = sum(j in 0..N: x[i, j])
    if s > 0.0 {
    } else {
      t[i] = s
    }
    for j in 1..N, k in 0..1 {
      y[i, j] = y[i, j - 1] + s
    }
  }
}";
    let k = &lower(branches, Target::cuda(8)).kernels[0];
    assert_eq!(
        kinds(&k.steps),
        [
            "bind",
            "lock_if[|lock_store]",
            "barrier:AfterIf",
            "lock_loop[lock_store,barrier:EndOfIteration]",
            "barrier:AfterLoop",
            "barrier:EndOfItem"
        ],
        "{}",
        lower(branches, Target::cuda(8))
    );
    // With nothing to reduce, the first thread runs the row.
    let plain = "program plain(x: in f32[M, N], y: inout f32[M, N]) {
  for i in 0..M {
    for j in 1..N {
      y[i, j] = y[i, j - 1] + x[i, j]
    }
  }
}";
    let k = &lower(plain, Target::cuda(8)).kernels[0];
    assert_eq!(kinds(&k.steps), ["first_thread", "barrier:EndOfItem"]);
    assert_eq!(k.steps.last(), Some(&RowStep::Barrier(Wait::EndOfItem)));
    // The CPU has no blocks.
    assert!(lower(SOFTMAX, Target::CPU).kernels[0].steps.is_empty());
    // A column the block shares: bindings and first-thread stores, a
    // barrier after each store.
    let moments = "program cm(x: in f32[M, N], mean: out f32[N], sq: out f32[N]) {
  for j in 0..N {
    m = sum(i in 0..M: x[i, j]) / f32(M)
    mean[j] = m
    sq[j] = sum(i in 0..M: (x[i, j] - m) * (x[i, j] - m))
  }
}";
    let k = &lower(moments, Target::cuda(8)).kernels[0];
    assert_eq!(k.mapping, tile_plan::Mapping::ColumnReduction);
    assert_eq!(
        kinds(&k.steps),
        [
            "bind",
            "first_store",
            "barrier:Writes",
            "first_store",
            "barrier:Writes"
        ]
    );
}

#[test]
fn every_row_step_list_runs_its_body_once_in_order() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let mut rows = 0;
    for path in tile_ir::fixture::tile_files(&[root]) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(programs) = tile_ir::parse_file(&text) else {
            continue;
        };
        for program in programs {
            let Ok(plan) = compile(&program, &Options { fusion: true }) else {
                continue;
            };
            for k in lower_kernels(&plan, Target::cuda(8)).kernels {
                use tile_plan::Mapping;
                if !matches!(k.mapping, Mapping::RowReduction | Mapping::ColumnReduction) {
                    assert!(k.steps.is_empty());
                    continue;
                }
                if k.mapping == Mapping::ColumnReduction {
                    // Bindings, first-thread stores and barriers only.
                    assert!(k.steps.iter().all(|s| matches!(
                        s,
                        RowStep::Bind(_)
                            | RowStep::BindTogether(_)
                            | RowStep::FirstThreadStore(_)
                            | RowStep::FirstThread(_)
                            | RowStep::Barrier(_)
                    )));
                }
                rows += 1;
                assert_eq!(stepped(&k.steps), k.body, "{}: {}", path.display(), k.name);
                if let Some(r) = k.rows() {
                    assert_eq!(stepped(&r.steps), r.body, "{}: {}", path.display(), k.name);
                }
            }
        }
    }
    assert!(rows > 10, "{rows} row kernels");
}

#[test]
fn every_entry_kind_is_reached_by_the_fixtures() {
    // The fixtures exercise each decision, so the snapshot tests (which pin
    // every fixture's C and CUDA) pin the back ends' reading of it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let (mut quads, mut rows, mut held, mut scalar, mut interchanged) = (0, 0, 0, 0, 0);
    for path in tile_ir::fixture::tile_files(&[root]) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(programs) = tile_ir::parse_file(&text) else {
            continue;
        };
        for program in programs {
            let Ok(plan) = compile(&program, &Options { fusion: true }) else {
                continue;
            };
            for k in lower_kernels(&plan, Target::cuda(8)).kernels {
                quads += k
                    .entries
                    .iter()
                    .filter(|e| matches!(e, Entry::Quads { .. }))
                    .count();
                rows += usize::from(k.rows().is_some());
                held += k.held.len();
            }
            for k in lower_kernels(&plan, Target::CPU).kernels {
                scalar += k.loops.iter().filter(|l| l.scalar.is_some()).count();
                interchanged += usize::from(k.form == Form::Interchanged);
            }
        }
    }
    assert!(
        quads > 0 && rows > 0 && held > 0 && scalar > 0 && interchanged > 0,
        "quads {quads}, rows {rows}, held {held}, scalar loops {scalar}, interchanged {interchanged}"
    );
}

/// Functions that decide legality or pick among the plan's bodies: only
/// tile-plan may call them.
const RULES: [&str; 10] = [
    "lanes_independent",
    "lane_refusal",
    "batch_refusal",
    "fill_read_back",
    "find_element_hazards",
    "find_row_hazards",
    "find_split_hazards",
    "find_nest_dependency",
    "reread_rows",
    "unit_stride",
];

/// The `.rs` files under `dir`, subfolders included, sorted.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "{}", dir.display());
    files
}

#[test]
fn back_ends_call_no_legality_rule() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["tile-emit", "tile-cpu", "tile-cuda"] {
        let files = rust_files(&crates.join(krate).join("src"));
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for rule in RULES {
                    if code.contains(rule) {
                        found.push(format!("{}:{}: {rule}", f.display(), n + 1));
                    }
                }
                // The plan's alternative bodies are the lowering's to pick.
                for field in [".cached", ".interchanged"] {
                    if code.contains(field) {
                        found.push(format!("{}:{}: {field}", f.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "back ends deciding:\n{}",
        found.join("\n")
    );
}

/// Names a pass or a back end invents for the IR are spelled by
/// `tile_ir::names` (one reserved prefix), never by hand.
#[test]
fn generated_names_are_spelled_in_one_place() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["tile-ir", "tile-plan", "tile-emit", "tile-cpu", "tile-cuda"] {
        let files = rust_files(&crates.join(krate).join("src"));
        for f in files {
            if f.ends_with("names.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                // `format!("__name{n}")`: a name with a number spliced in
                // (CUDA's and GCC's own `__shared__`, `__builtin_*` are
                // spelled whole).
                let spliced = code.match_indices("format!(\"__").any(|(at, m)| {
                    let rest = &code[at + m.len()..];
                    let lit = &rest[..rest.find('"').unwrap_or(rest.len())];
                    lit.contains('{') && !lit.starts_with("builtin") && !lit.starts_with("shared")
                });
                let prefixed = code.contains("format!") && code.contains("RESERVED_PREFIX");
                if spliced || prefixed {
                    found.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "names spelled by hand:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_plain_if_after_column_reductions_runs_on_the_first_thread_of_a_split_column() {
    let clipped = "program c(x: in f32[M, N], y: out f32[N]) {
  for j in 0..N {
    m = max(i in 0..M: x[i, j])
    if m > 0.0 { y[j] = m } else { y[j] = 0.0 }
  }
}";
    let program = tile_ir::parse_program(clipped).unwrap();
    let plan = compile(&program, &Options { fusion: true }).unwrap();
    assert_eq!(plan.kernels[0].sharing, Some(tile_plan::Sharing::Split));
    let cuda = lower_kernels(&plan, Target::cuda(8));
    let k = &cuda.kernels[0];
    assert_eq!(
        kinds(&k.steps),
        ["bind", "first_thread", "barrier:Writes"],
        "{cuda}"
    );
    assert!(
        cuda.to_string().contains("first thread runs if (line 4)"),
        "{cuda}"
    );
    // An `if` holding a reduction keeps the column on one thread, and
    // the plan names the statement.
    let text = "program c(x: in f32[M, N], y: out f32[N]) {
  for j in 0..N {
    m = max(i in 0..M: x[i, j])
    if m > 0.0 { y[j] = sum(i in 0..M: x[i, j]) }
  }
}";
    let program = tile_ir::parse_program(text).unwrap();
    let plan = compile(&program, &Options { fusion: true }).unwrap();
    match &plan.kernels[0].sharing {
        Some(tile_plan::Sharing::InOrder(reason)) => {
            assert!(reason.contains("an `if` at line 4"), "{reason}")
        }
        other => panic!("{other:?}\n{plan}"),
    }
}
