//! Generated derivatives against central finite differences in FP64 on
//! the interpreter: every fixture that can be differentiated, random
//! element-wise and row-reduction programs (proptest), and the requests
//! and programs that are refused, each with its message.

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use tile_ir::{
    derive, differentiate, fixture, interp, parse_program, Array, DType, Expr, Func, GradError,
    GradOptions, Program, Role, Saves, Sizes, Stmt,
};

/// `program` with every `f32` made `f64` (parameters and casts), so finite
/// differences are taken in FP64 throughout.
fn widen(program: &Program) -> Program {
    fn expr(e: &mut Expr) {
        if let Expr::Call(Func::Cast(t @ DType::F32), _) = e {
            *t = DType::F64;
        }
        for c in e.children_mut() {
            expr(c);
        }
    }
    fn stmt(s: &mut Stmt) {
        match s {
            Stmt::For { vars, body, .. } => {
                for v in vars {
                    expr(&mut v.lo);
                    expr(&mut v.hi);
                }
                body.iter_mut().for_each(stmt);
            }
            Stmt::Let { value, .. } => expr(value),
            Stmt::Store { idx, value, .. } => {
                idx.iter_mut().for_each(expr);
                expr(value);
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                expr(cond);
                then.iter_mut().for_each(stmt);
                els.iter_mut().for_each(stmt);
            }
        }
    }
    let mut p = program.clone();
    for q in &mut p.params {
        if q.dtype == DType::F32 {
            q.dtype = DType::F64;
        }
    }
    p.body.iter_mut().for_each(stmt);
    p
}

fn run(
    program: &Program,
    args: &BTreeMap<String, Array>,
    sizes: &Sizes,
) -> BTreeMap<String, Array> {
    let mut a = args.clone();
    interp::interpret(program, &mut a, sizes).unwrap_or_else(|e| panic!("{}: {e}", program.name));
    a
}

/// Checks the derivative of `program` with respect to `wrt` at `sizes`
/// against central differences; returns how many elements were compared.
fn check_gradients(program: &Program, wrt: &[String], sizes: &Sizes) -> Result<usize, String> {
    let wide = widen(program);
    let options = GradOptions {
        saves: Default::default(),
        wrt: wrt.to_vec(),
        with_value: false,
    };
    let grad = differentiate(&wide, &options).map_err(|e| e.to_string())?;
    let Some(mut args) = fixture::arguments(&wide, sizes) else {
        return Ok(0);
    };
    // The fixture values of two inputs differ by a constant, which makes
    // exact ties in `max(w[j] - x[j])`: jitter them, so differences are
    // taken away from the kinks of `max`, `min`, `abs` and `select`.
    for (seed, p) in wide.params.iter().enumerate() {
        if p.role == Role::In && p.dtype.is_float() {
            let a = args.get_mut(&p.name).unwrap();
            for k in 0..a.len() {
                let v = a.get_f64(k) + 0.05 * (13.7 * k as f64 + 3.1 * seed as f64).sin();
                a.set_f64(k, v);
            }
        }
    }
    // The cotangents: one per float output, in order, after the inputs.
    let outs: Vec<_> = wide
        .params
        .iter()
        .filter(|p| p.role == Role::Out && p.dtype.is_float())
        .collect();
    let inputs = wide.params.iter().filter(|p| p.role == Role::In).count();
    // Gradients and work outputs start from the fixture's sentinels: none
    // may depend on what they held.
    let mut gargs = fixture::arguments(&grad, sizes).expect("the same sizes fit");
    let mut cot = BTreeMap::new();
    for (k, p) in grad.params.iter().enumerate() {
        if k < inputs {
            gargs.insert(p.name.clone(), args[&p.name].clone());
        } else if k < inputs + outs.len() {
            let y = &args[&outs[k - inputs].name];
            let v: Vec<f64> = (0..y.len())
                .map(|e| fixture::input_value(e, 50 + k))
                .collect();
            let a = Array::from_f64(DType::F64, y.shape(), &v);
            cot.insert(outs[k - inputs].name.clone(), a.clone());
            gargs.insert(p.name.clone(), a);
        }
    }
    let got = run(&grad, &gargs, sizes);
    let mut compared = 0;
    for (k, x) in wrt.iter().enumerate() {
        let g = &got[&grad.params[inputs + outs.len() + k].name];
        let n = args[x].len();
        let step = (n / 24).max(1);
        for e in (0..n).step_by(step) {
            let x0 = args[x].get_f64(e);
            let h = 1e-6 * x0.abs().max(1.0);
            let mut plus = args.clone();
            plus.get_mut(x).unwrap().set_f64(e, x0 + h);
            let mut minus = args.clone();
            minus.get_mut(x).unwrap().set_f64(e, x0 - h);
            let (yp, ym) = (run(&wide, &plus, sizes), run(&wide, &minus, sizes));
            // Element by element, so outputs x does not touch cancel exactly.
            let mut fd = 0.0;
            for (name, c) in &cot {
                for i in 0..c.len() {
                    fd += c.get_f64(i) * (yp[name].get_f64(i) - ym[name].get_f64(i));
                }
            }
            fd /= 2.0 * h;
            let want = g.get_f64(e);
            if (fd - want).abs() > 1e-6 * (1.0 + want.abs()) {
                return Err(format!(
                    "d/d{x}[{e}] at {sizes:?}: generated {want}, finite differences {fd}\n{grad}"
                ));
            }
            compared += 1;
        }
    }
    Ok(compared)
}

fn float_inputs(p: &Program) -> Vec<String> {
    p.params
        .iter()
        .filter(|q| q.role == Role::In && q.dtype.is_float())
        .map(|q| q.name.clone())
        .collect()
}

/// The fixtures differentiation refuses, each for the reason its error
/// gives (outputs read back, `inout` state, stores that may repeat); the
/// generated derivatives that accumulate a gradient read it back, so their
/// own derivatives are refused too.
const REFUSED: [&str; 23] = [
    "histogram",
    "prefix_sum",
    "topk",
    "dependent_nests",
    "row_tail",
    "apart",
    "apart_lanes",
    "meet_lanes",
    "non_injective",
    "raw",
    "unknown_index",
    "war",
    "waw",
    "adam",
    "sgd_momentum",
    "lockstep_branches",
    "lockstep_literal",
    "reread_rows",
    "gathered_rows_grad",
    "batched_shared_weight_grad",
    "layernorm_grad",
    "matmul_bias_gelu_grad",
    "rmsnorm_grad",
];

#[test]
fn every_differentiable_fixture_matches_finite_differences() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let paths = fixture::tile_files(&[root.join("tests/programs"), root.join("examples")]);
    let (mut checked, mut elements, mut failures) = (0, 0, Vec::new());
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        for program in tile_ir::parse_file(&text).unwrap() {
            if tile_ir::verify(&program).is_err() {
                continue;
            }
            let wrt = float_inputs(&program);
            if wrt.is_empty() {
                continue;
            }
            // The smallest `# run:` shape: each element costs two runs.
            let Some(sizes) = fixture::run_lines(&text)
                .into_iter()
                .min_by_key(|s| s.values().product::<i64>())
            else {
                continue;
            };
            match check_gradients(&program, &wrt, &sizes) {
                Ok(n) => {
                    checked += 1;
                    elements += n;
                }
                Err(e) if e.contains("differentiation needs") || e.contains("`inout`") => {
                    if !REFUSED.contains(&program.name.as_str()) {
                        failures.push(format!("{}: refused: {e}", path.display()));
                    }
                }
                Err(e) => failures.push(format!("{}: {e}", path.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 50, "only {checked} fixtures differentiated");
    eprintln!("{checked} fixtures, {elements} gradient elements against finite differences");
}

/// With `Saves::Reductions`, every differentiable fixture's forward
/// program computes the program's outputs, and the derivative fed its
/// saved values gives the gradients of the derivative that recomputes
/// them (itself checked against finite differences above), in FP64.
#[test]
fn saving_reductions_gives_the_same_outputs_and_gradients() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let paths = fixture::tile_files(&[root.join("tests/programs"), root.join("examples")]);
    let (mut checked, mut saving, mut failures) = (0, 0, Vec::new());
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        for program in tile_ir::parse_file(&text).unwrap() {
            let wide = widen(&program);
            let wrt = float_inputs(&wide);
            let Some(sizes) = fixture::run_lines(&text)
                .into_iter()
                .min_by_key(|s| s.values().product::<i64>())
            else {
                continue;
            };
            if tile_ir::verify(&wide).is_err() || wrt.is_empty() {
                continue;
            }
            let options = |saves| GradOptions {
                wrt: wrt.clone(),
                with_value: false,
                saves,
            };
            let (Ok(plain), Ok(saved)) = (
                derive(&wide, &options(Saves::Inputs)),
                derive(&wide, &options(Saves::Reductions)),
            ) else {
                continue;
            };
            let forward = saved.forward.expect("a forward program");
            let Some(args) = fixture::arguments(&wide, &sizes) else {
                continue;
            };
            let mut fargs = fixture::arguments(&forward, &sizes).unwrap();
            for (name, a) in &args {
                fargs.insert(name.clone(), a.clone());
            }
            let fwd = run(&forward, &fargs, &sizes);
            let want = run(&wide, &args, &sizes);
            let mut ok = true;
            for p in wide.params.iter().filter(|p| p.role == Role::Out) {
                ok &= same(&fwd[&p.name], &want[&p.name]);
            }
            // The derivative's inputs: the program's inputs, a cotangent per
            // float output, the saved values.
            let mut plain_args = fixture::arguments(&plain.grad, &sizes).unwrap();
            for (name, a) in &args {
                if plain_args.contains_key(name) {
                    plain_args.insert(name.clone(), a.clone());
                }
            }
            let mut saved_args = fixture::arguments(&saved.grad, &sizes).unwrap();
            for (name, a) in plain_args.iter().chain(&fwd) {
                let is_input = saved.grad.param(name).is_some_and(|p| p.role == Role::In);
                if is_input {
                    saved_args.insert(name.clone(), a.clone());
                }
            }
            let (a, b) = (
                run(&plain.grad, &plain_args, &sizes),
                run(&saved.grad, &saved_args, &sizes),
            );
            // The gradients (named alike in both), not the work outputs.
            for p in plain.grad.params.iter().filter(|p| p.role == Role::Out) {
                if !p.name.starts_with("saved_") {
                    ok &= b.get(&p.name).is_some_and(|g| same(&a[&p.name], g));
                }
            }
            if !ok {
                failures.push(format!("{}: {}\n{}", path.display(), forward, saved.grad));
            }
            checked += 1;
            saving += usize::from(forward.params.len() > wide.params.len());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        checked >= 50 && saving >= 10,
        "{checked} fixtures, {saving} saving"
    );
    eprintln!("{checked} fixtures, {saving} with saved reductions");
}

/// Equal to rounding in FP64 (NaN where the other is NaN, infinities
/// equal).
fn same(a: &Array, b: &Array) -> bool {
    a.len() == b.len()
        && (0..a.len()).all(|k| {
            let (x, y) = (a.get_f64(k), b.get_f64(k));
            x == y
                || (x.is_nan() && y.is_nan())
                || (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs()))
        })
}

fn grad_of(text: &str, wrt: &[&str]) -> Result<Program, GradError> {
    let p = parse_program(text).unwrap();
    let options = GradOptions {
        saves: Default::default(),
        wrt: wrt.iter().map(|s| s.to_string()).collect(),
        with_value: false,
    };
    differentiate(&p, &options)
}

#[test]
fn a_softmax_row_gives_one_store_per_element_and_row_sums() {
    let g = grad_of(
        "program softmax(x: in f32[M, N], y: out f32[M, N]) {
           for i in 0..M {
             m = max(j in 0..N: x[i, j])
             z = sum(j in 0..N: exp(x[i, j] - m))
             for j in 0..N { y[i, j] = exp(x[i, j] - m) / z }
           }
         }",
        &["x"],
    )
    .unwrap();
    let text = g.to_string();
    assert!(text.starts_with(
        "program softmax_grad(x: in f32[M, N], grad_y: in f32[M, N], grad_x: out f32[M, N])"
    ));
    // One store of grad_x, inside the row's loop, no zeroing pass.
    assert_eq!(text.matches("grad_x[i, j] =").count(), 1, "{text}");
    assert!(!text.contains("= 0.0\n"), "{text}");
    assert!(text.contains("grad_z = sum(j in 0..N:"), "{text}");
}

/// Softmax does not depend on the shift it subtracts, so its derivative
/// skips the shift's cotangent and tie count, and is the exact derivative
/// even where the row's largest element is tied; a program whose output
/// sees the max keeps them.
#[test]
fn an_invariant_shift_has_no_cotangent_and_ties_are_exact() {
    let softmax = "program softmax(x: in f32[M, N], y: out f32[M, N]) {
           for i in 0..M {
             m = max(j in 0..N: x[i, j])
             z = sum(j in 0..N: exp(x[i, j] - m))
             for j in 0..N { y[i, j] = exp(x[i, j] - m) / z }
           }
         }";
    let g = grad_of(softmax, &["x"]).unwrap();
    let text = g.to_string();
    assert!(!text.contains("ties") && !text.contains("grad_m"), "{text}");
    // Two rows of five, each with its largest value tied.
    let x = [0.5, 2.0, -1.0, 2.0, 0.25, 3.0, 3.0, 3.0, 1.0, -2.0];
    let gy = [0.3, -1.2, 0.7, 2.0, -0.4, 1.5, -0.5, 0.25, -1.0, 0.8];
    let sizes = Sizes::from([("M".to_string(), 2), ("N".to_string(), 5)]);
    let wide = widen(&g);
    let mut args = BTreeMap::new();
    args.insert("x".to_string(), Array::from_f64(DType::F64, &[2, 5], &x));
    args.insert(
        "grad_y".to_string(),
        Array::from_f64(DType::F64, &[2, 5], &gy),
    );
    args.insert(
        "grad_x".to_string(),
        Array::from_f64(DType::F64, &[2, 5], &[f64::NAN; 10]),
    );
    let got = run(&wide, &args, &sizes);
    for r in 0..2 {
        let row = &x[5 * r..5 * r + 5];
        let top = row.iter().cloned().fold(f64::MIN, f64::max);
        let e: Vec<f64> = row.iter().map(|v| (v - top).exp()).collect();
        let z: f64 = e.iter().sum();
        let y: Vec<f64> = e.iter().map(|v| v / z).collect();
        let dot: f64 = (0..5).map(|j| gy[5 * r + j] * y[j]).sum();
        for j in 0..5 {
            let want = y[j] * (gy[5 * r + j] - dot);
            let have = got["grad_x"].get_f64(5 * r + j);
            assert!(
                (want - have).abs() < 1e-12,
                "row {r}, {j}: {have} != {want}"
            );
        }
    }
    // The max is an output too: its cotangent and tie count stay.
    let both = "program both(x: in f32[M, N], y: out f32[M, N], top: out f32[M]) {
           for i in 0..M {
             m = max(j in 0..N: x[i, j])
             top[i] = m
             z = sum(j in 0..N: exp(x[i, j] - m))
             for j in 0..N { y[i, j] = exp(x[i, j] - m) / z }
           }
         }";
    let text = grad_of(both, &["x"]).unwrap().to_string();
    assert!(text.contains("m_ties") && text.contains("grad_m"), "{text}");
}

#[test]
fn a_weight_read_in_every_row_gets_a_sum_over_the_rows() {
    let g = grad_of(
        "program scale(x: in f32[M, N], w: in f32[N], y: out f32[M, N]) {
           for i in 0..M, j in 0..N { y[i, j] = x[i, j] * w[j] }
         }",
        &["x", "w"],
    )
    .unwrap();
    let text = g.to_string();
    assert!(
        text.contains("grad_x[i, j] = grad_y[i, j] * w[j]"),
        "{text}"
    );
    assert!(
        text.contains("grad_w[j] = sum(i in 0..M: grad_y[i, j] * x[i, j])"),
        "{text}"
    );
}

#[test]
fn a_matrix_products_operands_get_products_with_the_saved_output_gradient() {
    let g = grad_of(
        "program mm(a: in f32[M, K], b: in f32[K, N], c: out f32[M, N]) {
           for i in 0..M, j in 0..N { c[i, j] = tanh(sum(k in 0..K: a[i, k] * b[k, j])) }
         }",
        &["a", "b"],
    )
    .unwrap();
    let text = g.to_string();
    assert!(text.contains("saved_grad_c_sum: out f32[M, N]"), "{text}");
    assert!(
        text.contains("grad_a[i, k] = sum(j in 0..N: saved_grad_c_sum[i, j] * b[k, j])"),
        "{text}"
    );
    assert!(
        text.contains("grad_b[k, j] = sum(i in 0..M: saved_grad_c_sum[i, j] * a[i, k])"),
        "{text}"
    );
}

#[test]
fn a_gathered_input_is_zeroed_then_accumulated() {
    let g = grad_of(
        "program gather(x: in f32[N], idx: in i32[M], y: out f32[M]) {
           for i in 0..M { y[i] = x[idx[i]] * 2.0 }
         }",
        &["x"],
    )
    .unwrap();
    let text = g.to_string();
    assert!(text.contains("grad_x[z0] = 0.0"), "{text}");
    assert!(
        text.contains("grad_x[idx[i]] = grad_x[idx[i]] + grad_y[i] * 2.0"),
        "{text}"
    );
}

#[test]
fn with_value_keeps_the_outputs_in_the_same_loop() {
    let p = parse_program(
        "program sig(x: in f32[N], y: out f32[N]) { for i in 0..N { s = sigmoid(x[i]); y[i] = s } }",
    )
    .unwrap();
    let options = GradOptions {
        saves: Default::default(),
        wrt: vec!["x".into()],
        with_value: true,
    };
    let g = differentiate(&p, &options).unwrap();
    assert_eq!(
        g.to_string(),
        "program sig_grad(x: in f32[N], grad_y: in f32[N], y: out f32[N], grad_x: out f32[N]) {\n  \
         for i in 0..N {\n    s = sigmoid(x[i])\n    y[i] = s\n    grad_s = grad_y[i]\n    \
         grad_x[i] = grad_s * sigmoid(x[i]) * (1.0 - sigmoid(x[i]))\n  }\n}"
    );
}

#[test]
fn names_already_taken_get_a_suffix() {
    let g = grad_of(
        "program p(x: in f32[N], grad_x: in f32[N], y: out f32[N]) {
           for i in 0..N { y[i] = x[i] * grad_x[i] }
         }",
        &["x"],
    )
    .unwrap();
    assert!(g.to_string().contains("grad_x_2: out f32[N]"), "{g}");
}

#[test]
fn a_branch_that_reads_memory_contributes_only_where_it_runs() {
    // `a` flows out of the branch through a load of `grad_y` at `i - 1`,
    // which is outside the box where the condition fails.
    let text = "program p(x: in f32[N], y: out f32[N]) {
       for i in 0..N {
         a = x[i] * x[i]
         if i > 0 { y[i - 1] = a * 3.0 }
       }
     }";
    let g = grad_of(text, &["x"]).unwrap();
    assert!(
        g.to_string()
            .contains("sum(taken in 0..select(i > 0, 1, 0):"),
        "{g}"
    );
    let p = parse_program(text).unwrap();
    for n in [1, 2, 5] {
        let sizes = Sizes::from([("N".to_string(), n)]);
        assert!(check_gradients(&p, &["x".into()], &sizes).unwrap() > 0);
    }
}

#[test]
fn refusals_name_the_culprit() {
    let cases: [(&str, &[&str], &str); 7] = [
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }",
            &[],
            "name the inputs",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }",
            &["q"],
            "`p` has no parameter `q`; its float inputs are x",
        ),
        (
            "program p(x: in f32[N], k: in i32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }",
            &["k"],
            "`k` holds i32, which has no gradient",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }",
            &["y"],
            "`y` is an `out` parameter",
        ),
        (
            "program p(x: in f32[N], y: inout f32[N]) { for i in 0..N { y[i] = x[i] } }",
            &["x"],
            "`y` is `inout`",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N, j in 0..N { y[i] = x[j] } }",
            &["x"],
            "does not index by the loop variable `j`",
        ),
        (
            "program p(x: in f32[N], y: out f32[N], z: out f32[N]) {
               for i in 0..N { y[i] = x[i]; z[i] = y[i] } }",
            &["x"],
            "the output `y` is read here",
        ),
    ];
    for (text, wrt, want) in cases {
        let e = grad_of(text, wrt).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
    let e = grad_of(
        "program p(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i]\n    y[i] = x[i]\n  }\n}",
        &["x"],
    )
    .unwrap_err();
    match e {
        GradError::Unsupported(d) => {
            assert_eq!(d.span.line, 3);
            assert!(
                d.message.contains("written more than once"),
                "{}",
                d.message
            );
        }
        e => panic!("{e}"),
    }
}

/// A random expression over `leaves`: every function of the language,
/// with arguments kept in their domains and growth bounded (`exp(tanh(e))`)
/// so finite differences stay accurate. `select` picks between its two
/// compared values (continuous where they meet): a `max` row binding
/// compared with one of its own elements ties exactly, and finite
/// differences across a jump there mean nothing.
fn elem(depth: u32, leaves: Vec<&'static str>) -> BoxedStrategy<String> {
    let leaf = prop::sample::select(leaves).prop_map(str::to_string);
    leaf.prop_recursive(depth, 24, 3, |inner| {
        let unary = [
            "-({})",
            "tanh({})",
            "sigmoid({})",
            "sin({})",
            "cos({})",
            "exp(tanh({}))",
            "abs({})",
            "erf({})",
            "expm1(tanh({}))",
            "log(1.0 + ({}) * ({}))",
            "sqrt(1.5 + ({}) * ({}))",
            "rsqrt(1.5 + ({}) * ({}))",
            "log1p(({}) * ({}))",
            "exp2(tanh({}))",
            "log2(2.0 + ({}) * ({}))",
            "f32(f64({}))",
        ];
        let binary = [
            "({}) + ({})",
            "({}) - ({})",
            "({}) * ({})",
            "({0}) / (1.5 + ({1}) * ({1}))",
            "max({}, {})",
            "min({}, {})",
            "pow(1.5 + tanh({0}) * tanh({0}), tanh({1}))",
            "select({0} > {1}, {0}, {1})",
        ];
        prop_oneof![
            (prop::sample::select(unary.to_vec()), inner.clone())
                .prop_map(|(f, a)| f.replace("{}", &a)),
            (
                prop::sample::select(binary.to_vec()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(f, a, b)| {
                    if f.contains("{0}") || f.contains("{1}") {
                        f.replace("{0}", &a).replace("{1}", &b)
                    } else {
                        f.replacen("{}", &a, 1).replacen("{}", &b, 1)
                    }
                }),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c)| format!("fma({a}, {b}, {c})")),
        ]
    })
    .boxed()
}

/// A random row program: row bindings from reductions over `x` and `w`,
/// an element binding, a row output and an element output.
fn row_program() -> impl Strategy<Value = String> {
    let red = prop::sample::select(vec!["sum", "max", "min"]);
    (
        red.clone(),
        elem(2, vec!["x[i, j]", "w[j]", "0.5"]),
        red,
        elem(2, vec!["x[i, j]", "a", "w[j]"]),
        elem(2, vec!["x[i, j]", "a", "b", "w[j]"]),
        elem(2, vec!["a", "b", "t"]),
        elem(1, vec!["a", "b"]),
    )
        .prop_map(|(r1, e1, r2, e2, e3, e4, e5)| {
            format!(
                "program rand(x: in f32[M, N], w: in f32[N], y: out f32[M, N], r: out f32[M]) {{
  for i in 0..M {{
    a = {r1}(j in 0..N: {e1})
    b = {r2}(j in 0..N: {e2}) / f32(N)
    r[i] = {e5}
    for j in 0..N {{
      t = {e3}
      y[i, j] = {e4}
    }}
  }}
}}"
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_row_programs_match_finite_differences(
        text in row_program(),
        m in 1i64..4,
        n in 1i64..6,
    ) {
        let p = parse_program(&text).unwrap();
        tile_ir::verify(&p).unwrap();
        let sizes = Sizes::from([("M".to_string(), m), ("N".to_string(), n)]);
        let r = check_gradients(&p, &["x".into(), "w".into()], &sizes);
        prop_assert!(r.is_ok(), "{}\n{}", text, r.unwrap_err());
    }
}

/// The generated derivatives of the value-only sigmoid and GELU, with a
/// cotangent of ones, reproduce the `grad` output of the hand-written seed
/// pairs (`examples/`), element for element, in FP64 on the interpreter.
#[test]
fn generated_derivatives_reproduce_the_seed_pairs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (value, pair) in [("sigmoid", "sigmoid_pair"), ("gelu", "gelu_pair")] {
        let read = |p: std::path::PathBuf| {
            widen(&parse_program(&std::fs::read_to_string(p).unwrap()).unwrap())
        };
        let forward = read(root.join(format!("tests/programs/derivatives/{value}.tile")));
        let pair = read(root.join(format!("examples/{pair}.tile")));
        let options = GradOptions {
            saves: Default::default(),
            wrt: vec!["x".into()],
            with_value: true,
        };
        let grad = differentiate(&forward, &options).unwrap();
        let sizes = Sizes::from([("M".to_string(), 3), ("N".to_string(), 257)]);
        let mut args = fixture::arguments(&grad, &sizes).unwrap();
        // Inputs spread over [-6, 6], where both functions bend and saturate.
        let x = args.get_mut("x").unwrap();
        for k in 0..x.len() {
            x.set_f64(k, -6.0 + 12.0 * k as f64 / (x.len() - 1) as f64);
        }
        let ones = Array::from_f64(DType::F64, &[3, 257], &[1.0; 3 * 257]);
        args.insert("grad_y".into(), ones);
        let got = run(&grad, &args, &sizes);
        let mut pargs = fixture::arguments(&pair, &sizes).unwrap();
        pargs.insert("x".into(), args["x"].clone());
        let want = run(&pair, &pargs, &sizes);
        for k in 0..3 * 257 {
            let (g, w) = (got["grad_x"].get_f64(k), want["grad"].get_f64(k));
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{value}: element {k}: {g} vs {w}"
            );
            let (v, w) = (got["y"].get_f64(k), want["value"].get_f64(k));
            assert!(
                (v - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{value}: value {k}: {v} vs {w}"
            );
        }
    }
}

/// Names the language lets a program reuse (a binding named like a
/// reduction's variable, a `max` binding named like its own variable)
/// must not be captured when bindings are written out inside sums.
#[test]
fn reused_names_are_not_captured() {
    let sizes = Sizes::from([("M".to_string(), 2), ("N".to_string(), 3)]);
    for text in [
        "program p(x: in f32[M, N], w: in f32[N], y: out f32[M, N]) {
           for i in 0..M {
             a = x[i, 0] * 2.0
             for j in 0..N {
               s = sum(k in 0..N: a * w[k])
               k = j + 1
               y[i, j] = s * f32(k)
             }
           }
         }",
        "program p(x: in f32[M, N], y: out f32[M]) {
           for i in 0..M { m = max(m in 0..N: x[i, m]); y[i] = m * m }
         }",
        "program p(x: in f32[M, N], w: in f32[N], z: out f32[M]) {
           for i in 0..M { s = sum(j in 0..N: x[i, j] * w[j]); j = 0; z[i] = s * s + f32(j) }
         }",
    ] {
        let p = parse_program(text).unwrap();
        let r = check_gradients(&p, &float_inputs(&p), &sizes);
        assert!(r.as_ref().is_ok_and(|n| *n > 0), "{text}\n{r:?}");
    }
}

/// A reduction inside another's body is not moved out of it: with an
/// empty outer range the program never evaluates it (here, an integer
/// division by zero), and neither may its derivative.
#[test]
fn a_reduction_inside_an_empty_range_stays_unevaluated() {
    let p = parse_program(
        "program p(x: in f64[N], w: in f64[N], c: in i32[N], d: in i32[N], y: out f64[N]) {
           for i in 0..N {
             y[i] = sum(j in 0..c[i]: x[j] * sum(k in 0..N: w[k] * f64(k / d[i])))
           }
         }",
    )
    .unwrap();
    let options = GradOptions {
        saves: Default::default(),
        wrt: vec!["x".into()],
        with_value: false,
    };
    let g = differentiate(&p, &options).unwrap();
    let sizes = Sizes::from([("N".to_string(), 4)]);
    let mut args = fixture::arguments(&g, &sizes).unwrap();
    let int = |v: &[f64]| Array::from_f64(DType::I32, &[4], v);
    args.insert("c".into(), int(&[2.0, 0.0, 3.0, 1.0]));
    args.insert("d".into(), int(&[1.0, 0.0, 2.0, -1.0]));
    interp::interpret(&g, &mut args, &sizes).unwrap_or_else(|e| panic!("{e}\n{g}"));
}

/// A loop whose bindings reuse each other would write out exponentially
/// many nodes: refused before they are built, naming the statement.
#[test]
fn an_exponential_write_out_is_refused_before_it_is_built() {
    let mut text = String::from(
        "program p(x: in f32[M, N], y: out f32[M, N]) {\n  for i in 0..M {\n    a0 = x[i, 0] * 0.5\n    for j in 0..N {\n      b0 = a0 * x[i, j]\n",
    );
    for k in 1..40 {
        text.push_str(&format!("      b{k} = sin(b{}) * b{}\n", k - 1, k - 1));
    }
    text.push_str("      y[i, j] = b39\n    }\n  }\n}\n");
    let e = grad_of(&text, &["x"]).unwrap_err().to_string();
    assert!(e.contains("more than 100000 expression nodes"), "{e}");
}

#[test]
fn a_size_only_a_non_float_output_fixes_is_refused() {
    let text = "program p(x: in f32[N], c: out i32[K], y: out f32[N]) {
      for i in 0..N { y[i] = sum(k in 0..K: x[i] * f32(k)) }
    }";
    let e = grad_of(text, &["x"]).unwrap_err().to_string();
    assert!(
        e.contains("the size `K` is fixed only by the output `c`"),
        "{e}"
    );
    let p = parse_program(text).unwrap();
    let options = GradOptions {
        saves: Default::default(),
        wrt: vec!["x".into()],
        with_value: true,
    };
    assert!(differentiate(&p, &options).is_ok());
}
