//! Verifier and interpreter tests: every problem is reported with its
//! location and the culprit's name; the interpreter computes what the
//! program says, checked against formulas evaluated in FP64.

use std::collections::BTreeMap;
use tile_ir::{interp, parse_program, verify, Array, DType, Sizes};

fn problems(text: &str) -> Vec<String> {
    let p = parse_program(text).expect("parses");
    match verify(&p) {
        Ok(()) => vec![],
        Err(e) => e.diagnostics.iter().map(|d| d.to_string()).collect(),
    }
}

#[test]
fn collects_every_problem_with_its_location() {
    let text = "program bad(x: in f32[N], y: out f32[N]) {
  for i in 0..N {
    x[i] = 1.0
    t = y[i, i]
    t = 2.0
    y[i] = q
    y[i] = i
  }
}";
    let got = problems(text);
    assert_eq!(got.len(), 5, "{got:#?}");
    assert!(
        got[0].starts_with("3:5: error: store to `x`, which is an `in` parameter"),
        "{got:#?}"
    );
    assert!(
        got[1].starts_with("4:5: error: `y` has 1 dimensions but the load gives 2 indices"),
        "{got:#?}"
    );
    assert!(
        got[2].starts_with("5:5: error: binding `t` rebinds a binding"),
        "{got:#?}"
    );
    assert!(
        got[3].starts_with("6:5: error: unknown name `q`"),
        "{got:#?}"
    );
    assert!(
        got[4].starts_with("7:5: error: store of a i32 value into `y`"),
        "{got:#?}"
    );
}

#[test]
fn names_the_culprit() {
    let cases = [
        (
            "program p(x: in f32[N], x: out f32[N]) { }",
            "parameter `x` is declared twice",
        ),
        (
            "program p(x: in f32[N]) { for N in 0..3 { } }",
            "loop variable `N` rebinds a size symbol",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = z[i] } }",
            "load from unknown parameter `z`",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { w[i] = 1.0 } }",
            "store to unknown parameter `w`",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { if x[i] { y[i] = 1.0 } } }",
            "condition must be bool",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[x[i]] = 1.0 } }",
            "an index must be i32",
        ),
        (
            "program p(x: in f32[N], y: out f64[N]) { for i in 0..N { y[i] = x[i] } }",
            "store of a f32 value into `y`, which holds f64",
        ),
        (
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] + x } }",
            "parameter `x` is used without an index",
        ),
    ];
    for (text, want) in cases {
        let got = problems(text);
        assert!(
            got.iter().any(|g| g.contains(want)),
            "{text}\nwanted `{want}`, got {got:#?}"
        );
    }
}

#[test]
fn accepts_literals_in_any_numeric_context() {
    let text = "program p(x: in f64[N], y: out f64[N], k: out i32[N]) {
  for i in 0..N {
    y[i] = x[i] * 2 + 1.5
    k[i] = i * 3 - 1
  }
}";
    assert_eq!(problems(text), Vec::<String>::new());
}

#[test]
fn interpreter_matches_fp64_formulas() {
    let text = "program p(x: in f32[N], y: out f32[N], z: out f64[N]) {
  for i in 0..N {
    s = sigmoid(x[i])
    y[i] = s * (1.0 - s)
    z[i] = f64(erf(x[i])) + pow(2.0, f64(i))
  }
}";
    let p = parse_program(text).unwrap();
    let xs: Vec<f64> = (0..9)
        .map(|k| tile_ir::fixture::input_value(k, 0))
        .collect();
    let mut arrays = BTreeMap::from([
        ("x".to_string(), Array::from_f64(DType::F32, &[9], &xs)),
        ("y".to_string(), Array::zeros(DType::F32, &[9])),
        ("z".to_string(), Array::zeros(DType::F64, &[9])),
    ]);
    interp::interpret(&p, &mut arrays, &Sizes::new()).unwrap();
    for (k, &x) in xs.iter().enumerate() {
        let x = x as f32 as f64;
        let s = 1.0 / (1.0 + (-x).exp());
        assert_eq!(arrays["y"].get_f64(k), (s * (1.0 - s)) as f32 as f64);
        let want = libm_erf(x) + 2f64.powi(k as i32);
        assert!((arrays["z"].get_f64(k) - want).abs() < 1e-12, "{k}");
    }
}

/// erf by its Maclaurin series (converges fast on [-1, 1]): an oracle
/// independent of the interpreter's library call.
fn libm_erf(x: f64) -> f64 {
    let mut term = x;
    let mut sum = x;
    for n in 1..60 {
        term *= -x * x / n as f64;
        sum += term / (2 * n + 1) as f64;
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

#[test]
fn interpreter_reports_out_of_bounds() {
    let p = parse_program(
        "program p(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i + 1]\n  }\n}",
    )
    .unwrap();
    let mut arrays = BTreeMap::from([
        ("x".to_string(), Array::zeros(DType::F32, &[4])),
        ("y".to_string(), Array::zeros(DType::F32, &[4])),
    ]);
    let e = interp::interpret(&p, &mut arrays, &Sizes::new()).unwrap_err();
    assert!(
        e.to_string()
            .contains("index [4] is outside the box of `x`"),
        "{e}"
    );
}

#[test]
fn binds_sizes_from_shapes_and_checks_arguments() {
    let p = parse_program("program p(x: in f32[-2..M - 2, N + 1], y: out f32[M, 2]) { }").unwrap();
    let args = |xs: &[usize], ys: &[usize], dt: DType| {
        BTreeMap::from([
            ("x".to_string(), Array::zeros(dt, xs)),
            ("y".to_string(), Array::zeros(DType::F32, ys)),
        ])
    };
    let sizes =
        tile_ir::args::bind_arrays(&p, &args(&[3, 5], &[3, 2], DType::F32), &Sizes::new()).unwrap();
    assert_eq!(sizes, Sizes::from([("M".into(), 3), ("N".into(), 4)]));
    let err = |a| {
        tile_ir::args::bind_arrays(&p, &a, &Sizes::new())
            .unwrap_err()
            .to_string()
    };
    assert!(err(args(&[3, 5], &[4, 2], DType::F32)).contains("argument `y` has shape [4, 2]"));
    assert!(err(args(&[3, 5], &[3, 2], DType::F64))
        .contains("argument `x` has dtype f64, but the parameter is f32"));
    assert!(err(args(&[3], &[3, 2], DType::F32)).contains("argument `x` has 1 dimensions"));
    let mut missing = args(&[3, 5], &[3, 2], DType::F32);
    missing.remove("y");
    assert!(err(missing).contains("missing argument for parameter `y`"));
}

#[test]
fn names_built_in_rust_must_be_identifiers() {
    use tile_ir::builder::*;
    use tile_ir::{DType, Role};
    for bad in ["a */ int x; /*", "1x", "", "é"] {
        let mut b = ProgramBuilder::new("p");
        let x = b.param("x", Role::In, DType::F32, &["N"]);
        let y = b.param("y", Role::Out, DType::F32, &["N"]);
        b.for_each(&[("i", "N")], |body| {
            let s = body.bind(bad, x.at(&[v("i")]));
            body.store(&y, &[v("i")], s);
        });
        let e = tile_ir::verify(&b.finish()).unwrap_err();
        assert!(e.to_string().contains("is not a name"), "{bad:?}: {e}");
    }
}
