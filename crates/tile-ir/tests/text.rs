//! The `.tile` text format: round trips, stable printing, a property test over
//! random expressions, and diagnostics with exact positions.

use proptest::prelude::*;
use tile_ir::*;

/// The two example programs of the original design, as written there.
const DESIGN_EXAMPLES: &str = "\
# value and derivative of the logistic sigmoid
program sigmoid_pair(x: in f32[M, N], value: out f32[M, N], grad: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    s = sigmoid(x[i, j])
    value[i, j] = s
    grad[i, j] = s * (1.0 - s)
  }
}

program softmax(x: in f32[M, N], y: out f32[M, N]) {
  for i in 0..M {
    m = max(j in 0..N: x[i, j])
    z = sum(j in 0..N: exp(x[i, j] - m))
    for j in 0..N {
      y[i, j] = exp(x[i, j] - m) / z
    }
  }
}
";

/// Every construct of the grammar, written loosely: comments, blank lines,
/// `;` separators, a parameter list over several lines, `else if`, literals
/// in every spelling.
const EVERY_CONSTRUCT: &str = "\
# every construct of the text format
program every(
  x: in f32[-2..M - 2, N],   # box shifted to start at -2
  w: in f64[0..K],
  flags: in bool[M], idx: in i32[M],
  y: inout f32[M, 1..N + 1],
  z: out f64[2 * M]
) {
  for i in 0..M, j in 0..N {

    a = x[i - 2, j]; b = -1.5e-3 * a + 2.
    c = neg(a) - -a * -2 / (b - 1) - (-b)
    t = abs(a) + min(a, b) + max(a, b) + exp(a) + exp2(a) + log(a) + log2(a)
    u = sqrt(a) + rsqrt(a) + tanh(a) + sigmoid(a) + erf(a) + sin(a) + cos(a)
    v = floor(a) + ceil(a) + pow(a, 2) + fma(a, b, c) + select(flags[i], a, b)
    k = f32(idx[i]) + f64(a) * i32(b)
    ok = (a < b) == (b <= c) && a > b || !(b >= c) && a != c
    s = sum(q in 0..K: w[q] * w[q]) + max(q in -1..K + 1: w[q]) - min(q in 0..K: inf)
    if ok && true { y[i, j + 1] = a } else if a == 1e30 {
      y[i, j + 1] = -inf
    }
    else {
      if false { y[i, j + 1] = 0 }
      y[i, j + 1] = 1e-7  # a comment
    }
  }
  for q in 0..M { z[2 * q] = 1.0; z[2 * q + 1] = -0.0 }
}
";

const EVERY_CONSTRUCT_NORMALISED: &str = "\
program every(x: in f32[-2..M - 2, N], w: in f64[K], flags: in bool[M], idx: in i32[M], y: inout f32[M, 1..N + 1], z: out f64[2 * M]) {
  for i in 0..M, j in 0..N {
    a = x[i - 2, j]
    b = -0.0015 * a + 2.0
    c = -a - -a * -2 / (b - 1) - -b
    t = abs(a) + min(a, b) + max(a, b) + exp(a) + exp2(a) + log(a) + log2(a)
    u = sqrt(a) + rsqrt(a) + tanh(a) + sigmoid(a) + erf(a) + sin(a) + cos(a)
    v = floor(a) + ceil(a) + pow(a, 2) + fma(a, b, c) + select(flags[i], a, b)
    k = f32(idx[i]) + f64(a) * i32(b)
    ok = (a < b) == (b <= c) && a > b || !(b >= c) && a != c
    s = sum(q in 0..K: w[q] * w[q]) + max(q in -1..K + 1: w[q]) - min(q in 0..K: inf)
    if ok && true {
      y[i, j + 1] = a
    } else if a == 1e30 {
      y[i, j + 1] = -inf
    } else {
      if false {
        y[i, j + 1] = 0
      }
      y[i, j + 1] = 1e-7
    }
  }
  for q in 0..M {
    z[2 * q] = 1.0
    z[2 * q + 1] = -0.0
  }
}
";

fn parse_ok(text: &str) -> Vec<Program> {
    parse_file(text).unwrap_or_else(|d| panic!("{d}\n{text}"))
}

/// Parses, prints and parses again; checks the programs are equal and the
/// printed text is stable. Returns the normalised text.
fn round_trip(text: &str) -> String {
    let programs = parse_ok(text);
    let printed = print_file(&programs);
    let again = parse_ok(&printed);
    assert_eq!(
        programs, again,
        "parse(print(parse(t))) differs:\n{printed}"
    );
    assert_eq!(print_file(&again), printed, "printing is not stable");
    printed
}

#[test]
fn design_examples_are_already_normalised() {
    let printed = round_trip(DESIGN_EXAMPLES);
    let without_comment = DESIGN_EXAMPLES
        .split_once('\n')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    assert_eq!(printed, without_comment);
    let programs = parse_ok(DESIGN_EXAMPLES);
    assert_eq!(programs.len(), 2);
    assert_eq!(programs[1].name, "softmax");
    assert_eq!(programs[1].params[0].dims[1], Dim::extent(Expr::var("N")));
}

#[test]
fn every_construct_round_trips() {
    assert_eq!(round_trip(EVERY_CONSTRUCT), EVERY_CONSTRUCT_NORMALISED);
}

#[test]
fn parsed_structure_and_spans() {
    let p = parse_program(EVERY_CONSTRUCT).unwrap();
    assert_eq!((p.span.line, p.span.col), (2, 1));
    let x = &p.params[0];
    assert_eq!((x.span.line, x.span.col), (3, 3));
    assert_eq!((x.role, x.dtype), (Role::In, DType::F32));
    assert_eq!(x.dims[0].lo, Expr::Int(-2));
    assert_eq!(p.params[4].role, Role::InOut);
    let Stmt::For { vars, body, span } = &p.body[0] else {
        panic!("expected a for loop");
    };
    assert_eq!((span.line, span.col), (9, 3));
    assert_eq!(vars.len(), 2);
    // `a = ...; b = ...` on one line: two statements, spans at the names.
    let (a, b) = (body[0].span(), body[1].span());
    assert_eq!((a.line, a.col, b.line, b.col), (11, 5, 11, 22));
    let Stmt::If { els, span, .. } = &body[9] else {
        panic!("expected an if");
    };
    assert_eq!((span.line, span.col), (19, 5));
    // `else if` is an else-block holding one `if`.
    assert!(matches!(els.as_slice(), [Stmt::If { .. }]));
    assert_eq!(
        body[1],
        Stmt::Let {
            name: "b".into(),
            value: Expr::binary(
                BinOp::Add,
                Expr::binary(BinOp::Mul, Expr::Float(-1.5e-3), Expr::var("a")),
                Expr::Float(2.0)
            ),
            span: Span::default(),
        }
    );
}

#[test]
fn stability_of_loose_text() {
    let texts = [
        DESIGN_EXAMPLES,
        EVERY_CONSTRUCT,
        "program p(a: in f32[N]) {}",
        "\n\n program p(a: in f32[N])\n{\n;;\n y = (((a[0])))\n}\n\n",
        "program p(a: in f32[N], b: out f32[N]) { for i in 0..N { b[i] = -(-(a[i])) } }",
        "program p(a: in bool[N]) { c = !(!a[0]) || !true && (1 < 2) != false }",
    ];
    for text in texts {
        let once = print_file(&parse_ok(text));
        let twice = print_file(&parse_ok(&once));
        assert_eq!(once, twice, "unstable print of:\n{text}");
        round_trip(text);
    }
}

#[test]
fn nan_reads_and_prints() {
    // NaN never equals itself, so it is checked apart from the round trips.
    let p = parse_program("program p(y: out f32[N]) { y[0] = nan; y[1] = -nan }").unwrap();
    for s in &p.body {
        assert!(matches!(s, Stmt::Store { value: Expr::Float(v), .. } if v.is_nan()));
    }
    assert_eq!(
        p.to_string(),
        "program p(y: out f32[N]) {\n  y[0] = nan\n  y[1] = nan\n}"
    );
}

#[test]
fn expression_printing() {
    let v = Expr::var;
    let bin = Expr::binary;
    let neg = |e| Expr::Unary(UnOp::Neg, Box::new(e));
    let cases = [
        (Expr::Float(1.0), "1.0"),
        (Expr::Float(0.044715), "0.044715"),
        (Expr::Float(1e-12), "1e-12"),
        (Expr::Float(1e20), "1e20"),
        (Expr::Float(-2.5), "-2.5"),
        (Expr::Float(f64::INFINITY), "inf"),
        (Expr::Float(f64::NEG_INFINITY), "-inf"),
        (Expr::Float(f64::NAN), "nan"),
        (Expr::Float(-f64::NAN), "nan"),
        (Expr::Int(-7), "-7"),
        (neg(Expr::Float(1.0)), "-(1.0)"),
        (neg(Expr::Float(-1.0)), "-(-1.0)"),
        (neg(v("x")), "-x"),
        (neg(bin(BinOp::Add, v("a"), v("b"))), "-(a + b)"),
        (bin(BinOp::Sub, v("x"), Expr::Float(-1.0)), "x - -1.0"),
        (bin(BinOp::Mul, v("x"), Expr::Int(-1)), "x * -1"),
        (
            bin(BinOp::Mul, bin(BinOp::Add, v("a"), v("b")), v("c")),
            "(a + b) * c",
        ),
        (
            bin(BinOp::Sub, v("a"), bin(BinOp::Sub, v("b"), v("c"))),
            "a - (b - c)",
        ),
        (
            bin(BinOp::Sub, bin(BinOp::Sub, v("a"), v("b")), v("c")),
            "a - b - c",
        ),
        (
            bin(BinOp::Lt, bin(BinOp::Lt, v("a"), v("b")), v("c")),
            "(a < b) < c",
        ),
        (
            Expr::Unary(UnOp::Not, Box::new(bin(BinOp::And, v("a"), v("b")))),
            "!(a && b)",
        ),
        (
            Expr::call(Func::Select, vec![v("c"), v("a"), Expr::Int(0)]),
            "select(c, a, 0)",
        ),
        (Expr::call(Func::Cast(DType::F32), vec![v("i")]), "f32(i)"),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
}

// ----- property test: random expressions survive print then parse -----

const BINOPS: [BinOp; 12] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::And,
    BinOp::Or,
];

fn name() -> impl Strategy<Value = String> {
    // Includes names that are also functions or reductions, which are
    // variables unless followed by `(`.
    prop::sample::select(vec![
        "a", "i", "x_1", "_t", "e5", "exp", "max", "sum", "neg",
    ])
    .prop_map(String::from)
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            -0.1,
            1e-7,
            1e20,
            -2.5e-300,
            1e16,
            123456789.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]),
        any::<f64>().prop_filter("NaN never equals itself", |v| !v.is_nan()),
    ]
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        prop::sample::select(vec![0, 1, -1, i64::MIN, i64::MAX]),
        -1000i64..1000,
        any::<i64>(),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        float().prop_map(Expr::Float),
        int().prop_map(Expr::Int),
        any::<bool>().prop_map(Expr::Bool),
        name().prop_map(Expr::Var),
    ];
    leaf.prop_recursive(4, 48, 3, |inner| {
        let call = {
            let inner = inner.clone();
            prop::sample::select(Func::ALL.to_vec()).prop_flat_map(move |f| {
                prop::collection::vec(inner.clone(), f.arity()).prop_map(move |a| Expr::call(f, a))
            })
        };
        prop_oneof![
            (name(), prop::collection::vec(inner.clone(), 1..=3))
                .prop_map(|(buf, idx)| Expr::load(&buf, idx)),
            (
                prop::sample::select(vec![UnOp::Neg, UnOp::Not]),
                inner.clone()
            )
                .prop_map(|(op, a)| Expr::Unary(op, Box::new(a))),
            (
                prop::sample::select(BINOPS.to_vec()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, a, b)| Expr::binary(op, a, b)),
            call,
            (
                prop::sample::select(vec![ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min]),
                name(),
                inner.clone(),
                inner.clone(),
                inner
            )
                .prop_map(|(op, var, lo, hi, body)| Expr::Reduce {
                    op,
                    var,
                    lo: Box::new(lo),
                    hi: Box::new(hi),
                    body: Box::new(body),
                }),
        ]
    })
}

/// `program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = <e> } }`.
fn wrap(e: Expr) -> Program {
    let mut p =
        parse_program("program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = 0 } }")
            .unwrap();
    let Some(Stmt::For { body, .. }) = p.body.first_mut() else {
        panic!("template has a for loop");
    };
    let Some(Stmt::Store { value, .. }) = body.first_mut() else {
        panic!("template has a store");
    };
    *value = e;
    p
}

proptest! {
    #[test]
    fn random_expressions_round_trip(e in expr()) {
        let p = wrap(e);
        let text = p.to_string();
        let back = parse_program(&text).map_err(|d| TestCaseError::fail(format!("{d}\n{text}")))?;
        prop_assert_eq!(&back, &p, "{}", text);
        prop_assert_eq!(back.to_string(), text);
    }
}

// ----- diagnostics -----

/// The first diagnostic for `text`, as (line, col, message).
fn error(text: &str) -> (u32, u32, String) {
    match parse_file(text) {
        Ok(p) => panic!("expected an error, parsed {p:?}"),
        Err(d) => (d.span.line, d.span.col, d.message),
    }
}

fn assert_error(text: &str, line: u32, col: u32, fragment: &str) {
    let (l, c, msg) = error(text);
    assert_eq!((l, c), (line, col), "position of `{msg}`");
    assert!(msg.contains(fragment), "`{msg}` lacks `{fragment}`");
}

#[test]
fn missing_close_paren() {
    let text = "\
program p(x: in f32[N], y: out f32[N]) {
  for i in 0..N {
    y[i] = (x[i] + 1.0]
  }
}";
    assert_error(text, 3, 23, "expected `)`, found `]`");
}

#[test]
fn bad_dtype() {
    assert_error(
        "program p(x: in f16[N]) {}",
        1,
        17,
        "expected a dtype (f32, f64, i32, bool), found `f16`",
    );
}

#[test]
fn unknown_function() {
    assert_error(
        "program p(x: in f32[N]) {\n  v = foo(1)\n}",
        2,
        7,
        "unknown function `foo`",
    );
    assert_error(
        "program p(x: in f32[N]) {\n  v = sum(x)\n}",
        2,
        7,
        "`sum` is a reduction",
    );
}

#[test]
fn unexpected_character() {
    assert_error(
        "program p(x: in f32[N]) {\n  v = 1 @ 2\n}",
        2,
        9,
        "unexpected character `@`",
    );
    assert_error(
        "program p(x: in f32[N]) {\n  v = a & b\n}",
        2,
        9,
        "unexpected character `&`",
    );
}

#[test]
fn the_first_problem_wins() {
    // A syntax error before a bad character is reported, not the character.
    assert_error(
        "program p(x: in f32[N]) {\n  v = )\n  w = @\n}",
        2,
        7,
        "expected an expression, found `)`",
    );
}

#[test]
fn chained_comparison() {
    assert_error(
        "program p(x: in f32[N]) {\n  c = a < b < c\n}",
        2,
        13,
        "cannot be chained",
    );
    assert_error(
        "program p(x: in f32[N]) {\n  c = a == b != c\n}",
        2,
        14,
        "cannot be chained",
    );
}

#[test]
fn wrong_arity() {
    assert_error(
        "program p(x: in f32[N]) {\n  v = pow(x[0])\n}",
        2,
        7,
        "`pow` takes 2 arguments, found 1",
    );
    assert_error(
        "program p(x: in f32[N]) {\n  v = exp(1, 2)\n}",
        2,
        7,
        "`exp` takes 1 argument, found 2",
    );
    assert_error(
        "program p(x: in f32[N]) {\n  v = neg()\n}",
        2,
        7,
        "`neg` takes 1 argument, found 0",
    );
}

#[test]
fn missing_program() {
    assert_error("", 1, 1, "expected `program`, found end of input");
    assert_error("# only a comment\n\n", 3, 1, "expected `program`");
    assert_error("\n  prog p() {}", 2, 3, "expected `program`, found `prog`");
}

#[test]
fn other_errors() {
    // One statement per line.
    assert_error(
        "program p(x: in f32[N]) {\n  a = 1 b = 2\n}",
        2,
        9,
        "expected a newline or `;`",
    );
    // Reserved words are not names.
    assert_error(
        "program p(in: in f32[N]) {}",
        1,
        11,
        "expected a parameter name, found `in`",
    );
    assert_error(
        "program p(x: at f32[N]) {}",
        1,
        14,
        "`in`, `out` or `inout`",
    );
    assert_error(
        "program p(x: in f32[N]) {\n  for i in 0..N {\n",
        3,
        1,
        "expected `}`, found end of input",
    );
    assert_error(
        "program p(x: in f32[N]) { v = }",
        1,
        31,
        "expected an expression, found `}`",
    );
    assert_error(
        "program p(x: in f32[N]) { v = 99999999999999999999 }",
        1,
        31,
        "too large",
    );
    // Exactly one program for `parse_program`.
    let two = "program p(x: in f32[N]) {}\nprogram q(x: in f32[N]) {}";
    assert_eq!(parse_file(two).map(|p| p.len()), Ok(2));
    let d = parse_program(two).unwrap_err();
    assert_eq!((d.span.line, d.span.col), (2, 1));
    assert!(d.message.contains("expected end of input"), "{d}");
}

#[test]
fn garbage_never_panics() {
    let pieces = [
        "program", "p", "(", ")", "[", "]", "{", "}", "x", ":", "in", "f32", "N", ",", "..", "=",
        "-", "!", "1", "1.5", "\n", ";", "sum", "j", "if", "else", "for", "<", "@", "#",
    ];
    // Every sequence of three pieces, inside and around a valid prefix.
    for a in pieces {
        for b in pieces {
            for c in pieces {
                let body = format!("{a} {b} {c}");
                let _ = parse_file(&body);
                let _ = parse_file(&format!("program p(x: in f32[N]) {{ {body} }}"));
                let _ = parse_file(&format!("program p(x: in f32[{body}]) {{}}"));
            }
        }
    }
}
