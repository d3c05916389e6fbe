//! The legality property test: random programs are planned, then every
//! parallel kernel runs with its work items in shuffled orders on the FP64
//! interpreter; the result must equal plain sequential execution bit for
//! bit. A planner that admits a racy program fails here.

use proptest::prelude::*;
use std::fmt::Write;
use tile_ir::{fixture, interp, parse_program, Sizes};
use tile_plan::kernel_ir::{Form, Target};
use tile_plan::{
    compile, execute_lowered, execute_plan, lower_kernels, EntryPoint, Kernel, Mapping, Options,
    Order, Plan,
};

/// One index dimension: `var + c`, reversed `N - 1 - var + c`, `c`,
/// `2 * var + c` (parities that never meet, or meet) or `var + N` (a shift
/// by the range's length).
#[derive(Clone, Debug)]
enum Ix {
    Var(usize, i64),
    Rev(usize, i64),
    Const(i64),
    Twice(usize, i64),
    Shift(usize),
}

fn show_ix(ix: &Ix, vars: &[&str]) -> String {
    match ix {
        Ix::Var(v, c) => format!("{} + {c}", vars[*v]),
        Ix::Rev(v, c) => format!("N - 1 - {} + {c}", vars[*v]),
        Ix::Const(c) => format!("{c}"),
        Ix::Twice(v, c) => format!("2 * {} + {c}", vars[*v]),
        Ix::Shift(v) => format!("{} + N", vars[*v]),
    }
}

#[derive(Clone, Debug)]
struct StoreGen {
    target: usize,
    map: [Ix; 2],
    loads: Vec<(usize, [Ix; 2])>,
    cond: bool,
    op: usize,
}

#[derive(Clone, Debug)]
struct NestGen {
    lo: [i64; 2],
    hi: [i64; 2],
    stores: Vec<StoreGen>,
}

fn ix() -> impl Strategy<Value = Ix> {
    prop_oneof![
        4 => (0..2usize, -1..=1i64).prop_map(|(v, c)| Ix::Var(v, c)),
        1 => (0..2usize, -1..=1i64).prop_map(|(v, c)| Ix::Rev(v, c)),
        1 => (-1..=1i64).prop_map(Ix::Const),
        1 => (0..2usize, 0..=2i64).prop_map(|(v, c)| Ix::Twice(v, c)),
        1 => (0..2usize).prop_map(Ix::Shift),
    ]
}

fn map() -> impl Strategy<Value = [Ix; 2]> {
    prop_oneof![
        3 => (-1..=1i64, -1..=1i64).prop_map(|(a, b)| [Ix::Var(0, a), Ix::Var(1, b)]),
        1 => (-1..=1i64, -1..=1i64).prop_map(|(a, b)| [Ix::Var(1, a), Ix::Var(0, b)]),
        2 => (ix(), ix()).prop_map(|(a, b)| [a, b]),
    ]
}

fn store() -> impl Strategy<Value = StoreGen> {
    (
        0..3usize,
        map(),
        prop::collection::vec((0..5usize, map()), 1..3),
        prop::bool::weighted(0.2),
        0..4usize,
    )
        .prop_map(|(target, map, loads, cond, op)| StoreGen {
            target,
            map,
            loads,
            cond,
            op,
        })
}

fn nest() -> impl Strategy<Value = NestGen> {
    (
        prop_oneof![3 => Just([0i64, 0]), 1 => [-1..=1i64, -1..=1i64]],
        prop_oneof![3 => Just([0i64, 0]), 1 => [-1..=1i64, -1..=1i64]],
        prop::collection::vec(store(), 1..3),
    )
        .prop_map(|(lo, hi, stores)| NestGen { lo, hi, stores })
}

/// Buffers: `a`, `b` inputs; `y0..y2` inout. All over `-3..2*N+4` squared
/// (room for `2 * i + 2` and `i + N` at `i = N`).
fn render(nests: &[NestGen]) -> String {
    let bufs = ["y0", "y1", "y2", "a", "b"];
    let mut t = String::from(
        "program random(a: in f32[-3..2 * N + 4, -3..2 * N + 4], b: in f32[-3..2 * N + 4, -3..2 * N + 4]",
    );
    for y in &bufs[..3] {
        let _ = write!(t, ", {y}: inout f32[-3..2 * N + 4, -3..2 * N + 4]");
    }
    t += ") {\n";
    for (n, g) in nests.iter().enumerate() {
        let vars = [format!("i{n}"), format!("j{n}")];
        let vr = [vars[0].as_str(), vars[1].as_str()];
        let _ = writeln!(
            t,
            "  for {} in {}..N + {}, {} in {}..N + {} {{",
            vr[0], g.lo[0], g.hi[0], vr[1], g.lo[1], g.hi[1]
        );
        for (k, s) in g.stores.iter().enumerate() {
            let loads: Vec<String> = s
                .loads
                .iter()
                .map(|(b, m)| {
                    format!(
                        "{}[{}, {}]",
                        bufs[*b],
                        show_ix(&m[0], &vr),
                        show_ix(&m[1], &vr)
                    )
                })
                .collect();
            let value = match s.op {
                0 => loads.join(" + "),
                1 => format!("tanh({}) * 2.0", loads.join(" - ")),
                2 => format!("({}) * 0.5 + 1.0", loads.join(" * ")),
                _ => format!("max({}, 0.25)", loads[0]),
            };
            let _ = writeln!(t, "    v{k} = {value}");
            let st = format!(
                "{}[{}, {}] = v{k}",
                bufs[s.target],
                show_ix(&s.map[0], &vr),
                show_ix(&s.map[1], &vr)
            );
            if s.cond {
                let _ = writeln!(t, "    if v{k} > 0.0 {{\n      {st}\n    }}");
            } else {
                let _ = writeln!(t, "    {st}");
            }
        }
        t += "  }\n";
    }
    t += "}\n";
    t
}

fn check(text: &str, n: i64) -> Result<(), TestCaseError> {
    let sizes = Sizes::from([("N".to_string(), n)]);
    for fusion in [true, false] {
        shuffled_runs_match(text, &sizes, fusion, &[1, 2, 3])?;
    }
    Ok(())
}

/// Plans `text` (fusion on or off) and runs the plan at `sizes` with each
/// shuffle seed, then what each target runs (the plan lowered for the CPU
/// and for CUDA, each entry point); every array must equal the
/// interpreter's sequential result bit for bit (within a few units in the
/// last place where the CPU's interchanged columns round each sum to the
/// column's type first). Returns the plan.
fn shuffled_runs_match(
    text: &str,
    sizes: &Sizes,
    fusion: bool,
    seeds: &[u64],
) -> Result<Plan, TestCaseError> {
    let program = parse_program(text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let args = fixture::arguments(&program, sizes).expect("boxes are non-negative");
    let mut oracle = args.clone();
    interp::interpret(&program, &mut oracle, sizes)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    let plan = compile(&program, &Options { fusion })
        .map_err(|e| TestCaseError::fail(format!("planning failed: {e}\n{text}")))?;
    for &seed in seeds {
        let mut got = args.clone();
        execute_plan(&plan, &mut got, sizes, Order::Shuffled(seed))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for (name, a) in &oracle {
            let same =
                (0..a.len()).all(|i| a.get_f64(i).to_bits() == got[name].get_f64(i).to_bits());
            prop_assert!(
                same,
                "`{name}` differs (fusion {fusion}, seed {seed}, sizes {sizes:?})\n{text}\n{plan}"
            );
        }
        for target in [Target::CPU, Target::cuda(8)] {
            let lowered = lower_kernels(&plan, target);
            let rounds = lowered.kernels.iter().any(|k| k.form == Form::Interchanged);
            for entry in [EntryPoint::General, EntryPoint::Rows] {
                let mut got = args.clone();
                execute_lowered(
                    &plan,
                    &lowered,
                    entry,
                    &mut got,
                    sizes,
                    Order::Shuffled(seed),
                )
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
                for (name, a) in &oracle {
                    let b = &got[name];
                    let same = (0..a.len()).all(|i| {
                        let (x, y) = (a.get_f64(i), b.get_f64(i));
                        x.to_bits() == y.to_bits()
                            || (rounds && (x - y).abs() <= 1e-6 * x.abs().max(1.0))
                    });
                    prop_assert!(
                        same,
                        "`{name}` differs lowered for {} ({entry:?}, fusion {fusion}, seed {seed}, sizes {sizes:?})\n{text}\n{plan}\n{lowered}",
                        target.name
                    );
                }
            }
        }
    }
    Ok(plan)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parallel_mappings_match_sequential_order(nests in prop::collection::vec(nest(), 1..4), n in prop_oneof![Just(1i64), Just(2), Just(3), Just(5)]) {
        let total: usize = nests.iter().map(|g| g.stores.len()).sum();
        prop_assume!(total <= 4);
        check(&render(&nests), n)?;
    }
}

/// `n` values of `strategy`, the same on every run (the coverage tests
/// below check what a generator reaches).
fn samples<S: Strategy>(strategy: S, n: usize) -> Vec<S::Value> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

/// The generator reaches every mapping and rule, so the property above
/// exercises the planner's refusals as well as its admissions.
#[test]
fn generator_covers_the_rules() {
    let mut seen = std::collections::BTreeSet::new();
    for nests in samples(prop::collection::vec(nest(), 1..4), 400) {
        let p = parse_program(&render(&nests)).unwrap();
        let plan = compile(&p, &Options::default()).unwrap();
        seen.extend(plan.kernels.iter().map(|k| k.mapping.name().to_string()));
        seen.extend(plan.fallbacks.iter().map(|f| f.rule.name().to_string()));
        // One buffer stored at two indices proven apart, on a grid.
        for k in plan
            .kernels
            .iter()
            .filter(|k| k.mapping == Mapping::ElementGrid)
        {
            let mut stored = Vec::new();
            for s in &k.body {
                s.walk(&mut |t| {
                    if let tile_ir::Stmt::Store { buf, .. } = t {
                        stored.push(buf.clone());
                    }
                });
            }
            let n = stored.len();
            stored.sort();
            stored.dedup();
            if stored.len() < n {
                seen.insert("apart".to_string());
            }
        }
    }
    for want in [
        "apart",
        "element_grid",
        "serial",
        "raw",
        "war",
        "waw",
        "non_injective",
        "different_domain",
    ] {
        assert!(
            seen.contains(want),
            "the generator never produced `{want}`: {seen:?}"
        );
    }
}

/// The lowered executor has teeth: a lowering that ran a dependent loop as
/// vector lanes, or split it over a block's threads (a running sum along
/// the row), gives a result that differs from sequential order, and the
/// real lowerings do not.
#[test]
fn a_lowering_that_vectorises_a_dependent_loop_is_caught() {
    let text = "program scan(x: in f32[M, N], y: inout f32[M, N], t: out f32[M]) {
  for i in 0..M {
    t[i] = sum(j in 0..N: x[i, j])
    for j in 1..N {
      y[i, j] = y[i, j - 1] + x[i, j]
    }
  }
}";
    let sizes = Sizes::from([("M".to_string(), 3), ("N".to_string(), 9)]);
    let (plan, args, oracle) = planned(text, &sizes);
    let lowered = lower_kernels(&plan, Target::CPU);
    let dependent = lowered.kernels[0]
        .loops
        .iter()
        .position(|l| l.scalar.is_some())
        .expect("the running sum runs one iteration at a time");
    let run = |l: &tile_plan::kernel_ir::Lowered| shuffled_lowered(&plan, l, &args, &sizes, 5, "y");
    let want = bits(&oracle["y"]);
    assert_eq!(run(&lowered), want);
    let mut wrong = lowered.clone();
    wrong.kernels[0].loops[dependent].scalar = None;
    assert_ne!(run(&wrong), want, "a wrong lowering must be caught");
    // On the GPU the row runs in lockstep; steps that split the running
    // sum over the block's threads are caught the same way.
    let cuda = lower_kernels(&plan, Target::cuda(8));
    assert_eq!(run(&cuda), want);
    let mut wrong = cuda.clone();
    let scan = plan.kernels[0].body[1].clone();
    assert!(matches!(scan, tile_ir::Stmt::For { .. }));
    wrong.kernels[0].steps = vec![tile_plan::kernel_ir::RowStep::Split(scan)];
    assert_ne!(run(&wrong), want, "a wrong split must be caught");
}

type Arrays = std::collections::BTreeMap<String, tile_ir::Array>;

/// `text` planned (default options), its fixture arguments at `sizes` and
/// the interpreter's sequential result.
fn planned(text: &str, sizes: &Sizes) -> (Plan, Arrays, Arrays) {
    let program = parse_program(text).unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let args = fixture::arguments(&program, sizes).unwrap();
    let mut oracle = args.clone();
    interp::interpret(&program, &mut oracle, sizes).unwrap();
    (plan, args, oracle)
}

/// The bits of array `name` after a shuffled run (`seed`) of the general
/// entry points of `lowered`, from `args`.
fn shuffled_lowered(
    plan: &Plan,
    lowered: &tile_plan::kernel_ir::Lowered,
    args: &Arrays,
    sizes: &Sizes,
    seed: u64,
    name: &str,
) -> Vec<u64> {
    let mut got = args.clone();
    execute_lowered(
        plan,
        lowered,
        EntryPoint::General,
        &mut got,
        sizes,
        Order::Shuffled(seed),
    )
    .unwrap();
    bits(&got[name])
}

fn bits(a: &tile_ir::Array) -> Vec<u64> {
    (0..a.len()).map(|i| a.get_f64(i).to_bits()).collect()
}

/// The shuffled executor has teeth: forcing a refused nest onto an element
/// grid gives a result that differs from sequential order.
#[test]
fn forcing_a_refused_nest_parallel_is_caught() {
    for text in [
        "program raw(x: in f32[N], y: inout f32[N]) {\n  for i in 0..N - 1 {\n    y[i + 1] = y[i] + x[i]\n  }\n}",
        "program waw(x: in f32[N], y: out f32[N]) {\n  for i in 0..N - 1 {\n    y[i] = x[i]\n    y[i + 1] = x[i] * 10.0\n  }\n}",
    ] {
        let program = parse_program(text).unwrap();
        let plan = compile(&program, &Options::default()).unwrap();
        assert_eq!(plan.kernels[0].mapping, Mapping::Serial);
        let tile_ir::Stmt::For { vars, body, .. } = &plan.kernels[0].body[0] else { panic!("a nest") };
        let forced = Plan {
            kernels: vec![Kernel {
                mapping: Mapping::ElementGrid,
                domain: vars.clone(),
                body: body.clone(),
                ..plan.kernels[0].clone()
            }],
            ..plan.clone()
        };
        let sizes = Sizes::from([("N".to_string(), 64)]);
        let args = fixture::arguments(&program, &sizes).unwrap();
        let mut oracle = args.clone();
        interp::interpret(&program, &mut oracle, &sizes).unwrap();
        let mut got = args.clone();
        execute_plan(&forced, &mut got, &sizes, Order::Shuffled(5)).unwrap();
        assert_ne!(oracle["y"], got["y"], "a racy plan must be detected:\n{text}");
    }
}

/// A row program: a reduction over the row, then an inner loop storing at
/// one of several indices a value that may read other elements of the
/// row it writes, and optionally a second loop over the stored row.
fn row_program() -> impl Strategy<Value = String> {
    let idx = prop_oneof![Just("j"), Just("N - 1 - j"), Just("j / 2"), Just("0")];
    let val = prop_oneof![
        Just("x[i, j] * s"),
        Just("y[i, j] + x[i, j]"),
        Just("y[i, N - 1 - j] + 1.0"),
        Just("y[i, j / 2] + x[i, j]"),
        Just("s - x[i, N - 1 - j]"),
    ];
    (idx, val, any::<bool>()).prop_map(|(idx, val, second)| {
        let second = if second {
            "\n    for j in 0..N {\n      y[i, j] = y[i, j] * 2.0 - s\n    }"
        } else {
            ""
        };
        format!(
            "program r(x: in f32[M, N], y: inout f32[M, N]) {{\n  for i in 0..M {{\n    s = sum(j in 0..N: x[i, j])\n    for j in 0..N {{\n      y[i, {idx}] = {val}\n    }}{second}\n  }}\n}}"
        )
    })
}

/// Runs a row program's plan with rows shuffled and the inner loops of
/// rows the planner lets the block split walked backwards; the result must
/// equal the interpreter's bit for bit.
fn check_rows(text: &str, n: i64) -> Result<tile_plan::Sharing, TestCaseError> {
    let sizes = Sizes::from([("M".to_string(), 3), ("N".to_string(), n)]);
    let plan = shuffled_runs_match(text, &sizes, true, &[1, 2])?;
    prop_assert_eq!(plan.kernels[0].mapping, Mapping::RowReduction, "{}", text);
    Ok(plan.kernels[0]
        .sharing
        .clone()
        .expect("row kernels say how rows split"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn split_rows_match_sequential_order(text in row_program(), n in prop_oneof![Just(1i64), Just(2), Just(3), Just(5)]) {
        check_rows(&text, n)?;
    }
}

/// The row generator reaches rows the block splits and rows it cannot.
#[test]
fn row_generator_covers_split_and_lockstep_rows() {
    let mut seen = std::collections::BTreeSet::new();
    for text in samples(row_program(), 200) {
        let sharing = check_rows(&text, 5).unwrap();
        seen.insert(match sharing {
            tile_plan::Sharing::Split => "split",
            tile_plan::Sharing::Lockstep(_) => "lockstep",
            tile_plan::Sharing::InOrder(_) => "in order",
        });
    }
    assert!(
        seen.contains("split") && seen.contains("lockstep"),
        "{seen:?}"
    );
}

/// A row whose inner loop reads what another iteration writes, forced to
/// split, gives a different result: the backwards walk detects it.
#[test]
fn forcing_a_dependent_row_to_split_is_caught() {
    let text = "program r(x: in f32[M, N], y: inout f32[M, N]) {\n  for i in 0..M {\n    for j in 1..N {\n      y[i, j] = y[i, j - 1] + x[i, j]\n    }\n  }\n}";
    let program = parse_program(text).unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    assert_eq!(plan.kernels[0].mapping, Mapping::RowReduction);
    assert!(matches!(
        plan.kernels[0].sharing,
        Some(tile_plan::Sharing::InOrder(_))
    ));
    let forced = Plan {
        kernels: vec![Kernel {
            sharing: Some(tile_plan::Sharing::Split),
            cached: None,
            ..plan.kernels[0].clone()
        }],
        ..plan.clone()
    };
    let sizes = Sizes::from([("M".to_string(), 2), ("N".to_string(), 16)]);
    let args = fixture::arguments(&program, &sizes).unwrap();
    let mut oracle = args.clone();
    interp::interpret(&program, &mut oracle, &sizes).unwrap();
    let mut got = args.clone();
    execute_plan(&forced, &mut got, &sizes, Order::Shuffled(5)).unwrap();
    assert_ne!(
        oracle["y"], got["y"],
        "a split of a dependent row must be detected"
    );
}

/// Plan execution runs a row's cached body (values computed once into a
/// scratch row): softmax's matches the interpreter bit for bit, and a
/// cache that stored the wrong value would not.
#[test]
fn cached_rows_run_and_a_wrong_cache_is_caught() {
    let text = include_str!("../../../tests/programs/controls/softmax.tile");
    let program = parse_program(text).unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let cached = plan.kernels[0].cached.clone().expect("softmax caches exp");
    let sizes = Sizes::from([("M".to_string(), 3), ("N".to_string(), 37)]);
    let args = fixture::arguments(&program, &sizes).unwrap();
    let mut oracle = args.clone();
    interp::interpret(&program, &mut oracle, &sizes).unwrap();
    let mut got = args.clone();
    execute_plan(&plan, &mut got, &sizes, Order::Shuffled(3)).unwrap();
    assert_eq!(oracle["y"], got["y"]);
    // The fill stores its value plus one (doubling it would leave a
    // softmax unchanged): the sum and the loop both read it.
    let mut body = cached.body.clone();
    let at = body
        .iter()
        .position(|s| matches!(s, tile_ir::Stmt::For { .. }))
        .expect("a fill loop");
    let tile_ir::Stmt::For { body: fill, .. } = &mut body[at] else {
        unreachable!()
    };
    let tile_ir::Stmt::Store { value, .. } = &mut fill[0] else {
        panic!("a fill stores")
    };
    *value = tile_ir::Expr::binary(
        tile_ir::BinOp::Add,
        value.clone(),
        tile_ir::Expr::Float(1.0),
    );
    let wrong = Plan {
        kernels: vec![Kernel {
            cached: Some(tile_plan::Cached { body, ..cached }),
            ..plan.kernels[0].clone()
        }],
        ..plan.clone()
    };
    let mut got = args.clone();
    execute_plan(&wrong, &mut got, &sizes, Order::Sequential).unwrap();
    assert_ne!(oracle["y"], got["y"], "a wrong cache must be detected");
}

/// A program that runs as one serial kernel (every pass of the outer loop
/// writes the same elements, so its passes are not independent), whose
/// innermost loop stores at one or two of several indices a value that
/// may read other elements of what it writes. The CPU vectorises such a loop when
/// [`tile_plan::lane_refusal`] allows it, so shuffled plan runs walk those
/// loops backwards.
fn lane_program() -> impl Strategy<Value = String> {
    let idx = || {
        prop_oneof![
            Just("j"),
            Just("N - 1 - j"),
            Just("j / 2"),
            Just("0"),
            Just("2 * j"),
            Just("2 * j + 1"),
            Just("j + N")
        ]
    };
    let val = prop_oneof![
        Just("x[j] * 2.0"),
        Just("y[j] + x[j]"),
        Just("y[N - 1 - j] + 1.0"),
        Just("y[j / 2] + x[j]"),
        Just("1.0 - x[N - 1 - j]"),
        Just("y[2 * j] * 0.5"),
        Just("y[j + N] - x[j]"),
    ];
    // A second store to `y`, at an index that may or may not meet the
    // first's.
    let second = prop::option::weighted(0.5, idx());
    (idx(), val, second).prop_map(|(idx, val, second)| {
        let more = second.map_or(String::new(), |i| format!("      y[{i}] = x[j] + 3.0\n"));
        format!(
            "program l(x: in f32[N], y: inout f32[2 * N + 1]) {{\n  for t in 0..2 {{\n    for j in 0..N {{\n      y[{idx}] = {val}\n{more}    }}\n  }}\n}}"
        )
    })
}

/// Runs a lane program's plan shuffled; returns whether its loop's lanes
/// are independent.
fn check_lanes(text: &str, n: i64) -> Result<bool, TestCaseError> {
    let sizes = Sizes::from([("N".to_string(), n)]);
    let plan = shuffled_runs_match(text, &sizes, true, &[1])?;
    prop_assert_eq!(plan.kernels[0].mapping, Mapping::Serial, "{}", text);
    let lanes = &plan.kernels[0].lanes;
    prop_assert_eq!(lanes.len(), 1, "{}", plan);
    Ok(lanes[0].lanes.is_none())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn lane_loops_match_sequential_order(text in lane_program(), n in prop_oneof![Just(1i64), Just(2), Just(3), Just(5)]) {
        check_lanes(&text, n)?;
    }
}

/// The lane generator reaches loops whose lanes are independent and loops
/// the rule refuses, each with one store and with two.
#[test]
fn lane_generator_covers_both_verdicts() {
    let mut seen = std::collections::BTreeSet::new();
    for text in samples(lane_program(), 200) {
        let two = text.matches("y[").count() > text.matches("= y[").count() + 1;
        seen.insert((check_lanes(&text, 5).unwrap(), two));
    }
    // Both verdicts, with one store and with two (indices apart or not).
    assert_eq!(seen.len(), 4, "{seen:?}");
}

/// A column program: a reduction down each column, then a store per
/// column at one of several indices, of a value that may read other
/// columns' results; and maybe a second reduction over the same rows,
/// right after the first (sibling reductions the CUDA lowering runs in
/// one pass, unless it reads what the first binds) or after the store.
fn column_program() -> impl Strategy<Value = String> {
    let idx = prop_oneof![Just("j"), Just("N - 1 - j"), Just("j / 2"), Just("0")];
    let val = prop_oneof![
        Just("s * x[0, j]"),
        Just("y[j] + s"),
        Just("y[N - 1 - j] + 1.0"),
        Just("s - x[M - 1, N - 1 - j]"),
    ];
    let sibling = prop_oneof![
        Just(""),
        Just("    z[j] = sum(i in 0..M: x[i, j] * x[i, j])\n"),
        Just("    z[j] = max(i in 0..M: x[i, j] - y[j])\n"),
        Just("    z[j] = 2.0 * sum(i in 0..M: x[i, N - 1 - j]) + s\n"),
    ];
    (idx, val, sibling, any::<bool>()).prop_map(|(idx, val, sibling, early)| {
        let (before, after) = if early { (sibling, "") } else { ("", sibling) };
        format!(
            "program c(x: in f32[M, N], y: inout f32[N], z: inout f32[N]) {{\n  for j in 0..N {{\n    s = sum(i in 0..M: x[i, j])\n{before}    y[{idx}] = {val}\n{after}  }}\n}}"
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Columns run shuffled.
    #[test]
    fn column_programs_match_sequential_order(text in column_program(), n in prop_oneof![Just(1i64), Just(2), Just(3), Just(5)]) {
        let sizes = Sizes::from([("M".to_string(), 3), ("N".to_string(), n)]);
        shuffled_runs_match(&text, &sizes, true, &[1, 2])?;
    }
}

/// The column generator reaches column kernels, the nests the hazard
/// rules refuse, and sibling reductions run in one pass.
#[test]
fn column_generator_reaches_column_kernels() {
    let mut seen = std::collections::BTreeSet::new();
    let mut together = 0;
    for text in samples(column_program(), 100) {
        let plan = compile(&parse_program(&text).unwrap(), &Options::default()).unwrap();
        seen.insert(plan.kernels[0].mapping.name());
        let cuda = lower_kernels(&plan, Target::cuda(8));
        together += usize::from(cuda.to_string().contains("one pass"));
    }
    assert!(
        seen.contains("column_reduction") && seen.contains("serial"),
        "{seen:?}"
    );
    assert!(together > 5, "{together} of 100 with sibling reductions");
}

/// A hoist of a reduction above the store whose value it reads is caught
/// by the lowered executor; the real lowering refuses that hoist.
#[test]
fn a_wrong_hoist_of_sibling_reductions_is_caught() {
    let text = "program h(x: in f32[M, N], y: out f32[N], z: out f32[N]) {
  for j in 0..N {
    y[j] = sum(i in 0..M: x[i, j])
    z[j] = sum(i in 0..M: x[i, j] + y[j])
  }
}";
    // The same loop hoisted by hand: z's sum runs before y is stored.
    let hoisted = "program h(x: in f32[M, N], y: out f32[N], z: out f32[N]) {
  for j in 0..N {
    a = sum(i in 0..M: x[i, j])
    b = sum(i in 0..M: x[i, j] + y[j])
    y[j] = a
    z[j] = b
  }
}";
    let sizes = Sizes::from([("M".to_string(), 3), ("N".to_string(), 5)]);
    let (plan, args, oracle) = planned(text, &sizes);
    let run = |l: &tile_plan::kernel_ir::Lowered| shuffled_lowered(&plan, l, &args, &sizes, 3, "z");
    let cuda = lower_kernels(&plan, Target::cuda(8));
    assert!(!cuda.to_string().contains("one pass"), "{cuda}");
    let want = bits(&oracle["z"]);
    assert_eq!(run(&cuda), want);
    let body = parse_program(hoisted).unwrap().body;
    let tile_ir::Stmt::For { body: inner, .. } = &body[0] else {
        panic!("a loop over j");
    };
    let mut wrong = cuda.clone();
    wrong.kernels[0].body = inner.clone();
    assert_ne!(run(&wrong), want, "a wrong hoist must be caught");
}

/// The body of a loop over `j` for the batch rule: one or two stores at
/// `j` whose values may read what the loop stores, `{j}` standing for the
/// iteration's index.
fn batch_body() -> impl Strategy<Value = Vec<(&'static str, &'static str)>> {
    let store = prop_oneof![
        Just(("y", "x[{j}] * 2.0")),
        Just(("z", "y[{j}] + 1.0")),
        Just(("y", "z[{j}] - x[{j}]")),
        Just(("z", "x[N - 1 - {j}] + 0.5")),
        Just(("y", "y[{j}] * 0.5")),
        Just(("z", "z[N - 1 - {j}] * 3.0")),
    ];
    prop::collection::vec(store, 1..3)
}

/// `for t in 0..2 { for j in 0..N { stores } }` and the same loop run the
/// way 16-byte vector code runs it: four iterations at a time, every value
/// of the four computed before any of their stores (lanes past the end
/// recompute the last iteration and store nothing).
fn batch_programs(stores: &[(&str, &str)]) -> (String, String) {
    let head = "program b(x: in f32[N], y: inout f32[N], z: inout f32[N]) {\n  for t in 0..2 {\n";
    let mut plain = String::from(head);
    plain.push_str("    for j in 0..N {\n");
    for (buf, val) in stores {
        let _ = writeln!(plain, "      {buf}[j] = {}", val.replace("{j}", "j"));
    }
    plain.push_str("    }\n  }\n}\n");
    let mut grouped = String::from(head);
    grouped.push_str("    for g in 0..(N + 3) / 4 {\n");
    for l in 0..4 {
        let _ = writeln!(grouped, "      j{l} = min(4 * g + {l}, N - 1)");
    }
    for l in 0..4 {
        for (n, (_, val)) in stores.iter().enumerate() {
            let _ = writeln!(
                grouped,
                "      v{l}_{n} = {}",
                val.replace("{j}", &format!("j{l}"))
            );
        }
    }
    for l in 0..4 {
        let _ = writeln!(grouped, "      if 4 * g + {l} < N {{");
        for (n, (buf, _)) in stores.iter().enumerate() {
            let _ = writeln!(grouped, "        {buf}[j{l}] = v{l}_{n}");
        }
        grouped.push_str("      }\n");
    }
    grouped.push_str("    }\n  }\n}\n");
    (plain, grouped)
}

/// Runs both forms of a batch body at `N = n`: whether the lane and batch
/// rules allow the loop, and whether the two forms agree bit for bit.
fn run_batch(stores: &[(&str, &str)], n: i64) -> (bool, bool) {
    let (plain, grouped) = batch_programs(stores);
    let sizes = Sizes::from([("N".to_string(), n)]);
    let run = |text: &str| {
        let program = parse_program(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut arrays = fixture::arguments(&program, &sizes).unwrap();
        interp::interpret(&program, &mut arrays, &sizes).unwrap_or_else(|e| panic!("{e}\n{text}"));
        arrays
    };
    let (a, b) = (run(&plain), run(&grouped));
    let same = ["y", "z"].iter().all(|name| {
        (0..a[*name].len()).all(|i| a[*name].get_f64(i).to_bits() == b[*name].get_f64(i).to_bits())
    });
    let program = parse_program(&plain).unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let lane = &plan.kernels[0].lanes[0];
    (lane.lanes.is_none() && lane.batch.is_none(), same)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Where both rules allow a loop, four iterations with their loads
    /// first compute what the loop computes in order.
    #[test]
    fn batched_loads_match_sequential_order(stores in batch_body(), n in prop_oneof![Just(1i64), Just(3), Just(4), Just(9)]) {
        let (allowed, same) = run_batch(&stores, n);
        prop_assert!(!allowed || same, "{:?} at N={}", stores, n);
    }
}

/// The batch generator reaches loops the rules allow, and loops they
/// refuse whose batched form computes something else (what the rule
/// prevents).
#[test]
fn batch_generator_covers_both_verdicts() {
    let mut seen = std::collections::BTreeSet::new();
    for stores in samples(batch_body(), 200) {
        seen.insert(run_batch(&stores, 9));
    }
    assert!(
        seen.contains(&(true, true)) && seen.contains(&(false, false)),
        "{seen:?}"
    );
}

/// A lane loop whose bound reads what the loop writes: walked backwards,
/// the bound is still the one the loop evaluated once, at its start.
#[test]
fn reversed_loops_evaluate_their_bounds_once() {
    let text =
        "program b(x: inout f32[N]) {\n  for j in 0..N - i32(x[N - 1]) {\n    x[j] = 7.0\n  }\n}";
    let sizes = Sizes::from([("N".to_string(), 12)]);
    let plan = shuffled_runs_match(text, &sizes, true, &[1]).unwrap();
    assert_eq!(plan.kernels[0].lanes[0].lanes, None, "{plan}");
}
