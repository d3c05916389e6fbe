//! Bad launches are typed errors before any work: missing arguments, wrong
//! dtype or shape, overlapping buffers; a missing compiler says what to
//! install; indices outside a box and integer division by zero are
//! reported, not undefined behaviour.

mod common;

use std::collections::BTreeMap;
use tile_cpu::{CpuError, CpuOptions, RawArg};
use tile_ir::{ArgError, Array, DType, Sizes};

const ADD: &str = "program add(a: in f32[M, N], b: in f32[M, N], y: out f32[M, N]) {
  for i in 0..M, j in 0..N { y[i, j] = a[i, j] + b[i, j] }
}";

fn add() -> (tile_ir::Program, tile_cpu::CpuModule) {
    let p = tile_ir::parse_program(ADD).expect("parses");
    let (_, m) = common::build(&p, true);
    (p, m)
}

fn arrays(shape_y: &[usize]) -> BTreeMap<String, Array> {
    BTreeMap::from([
        ("a".to_string(), Array::zeros(DType::F32, &[2, 3])),
        ("b".to_string(), Array::zeros(DType::F32, &[2, 3])),
        ("y".to_string(), Array::zeros(DType::F32, shape_y)),
    ])
}

#[test]
fn missing_argument() {
    let (_, m) = add();
    let mut a = arrays(&[2, 3]);
    a.remove("b");
    let e = m.run(&mut a, &Sizes::new()).unwrap_err();
    assert!(
        matches!(e, CpuError::Args(ArgError::Missing(ref n)) if n == "b"),
        "{e}"
    );
}

#[test]
fn wrong_dtype() {
    let (_, m) = add();
    let mut a = arrays(&[2, 3]);
    a.insert("b".to_string(), Array::zeros(DType::F64, &[2, 3]));
    let e = m.run(&mut a, &Sizes::new()).unwrap_err();
    assert!(matches!(e, CpuError::Args(ArgError::DType { .. })), "{e}");
}

#[test]
fn wrong_shape_touches_nothing() {
    let (_, m) = add();
    let mut a = arrays(&[2, 4]);
    a.insert(
        "a".to_string(),
        Array::from_f64(DType::F32, &[2, 3], &[1.0; 6]),
    );
    let e = m.run(&mut a, &Sizes::new()).unwrap_err();
    assert!(matches!(e, CpuError::Args(ArgError::Shape { .. })), "{e}");
    assert!(a["y"].to_f64().iter().all(|&v| v == 0.0));
}

fn raw(name: &str, v: &mut [f32], shape: &[usize]) -> RawArg {
    RawArg {
        name: name.to_string(),
        dtype: DType::F32,
        shape: shape.to_vec(),
        addr: v.as_mut_ptr() as u64,
        bytes: std::mem::size_of_val(v),
    }
}

#[test]
fn overlapping_buffers_via_run_raw() {
    let (_, m) = add();
    let mut mem = [1.0f32; 12];
    let (left, right) = mem.split_at_mut(6);
    let mut b = vec![2.0f32; 6];
    let a_arg = raw("a", left, &[2, 3]);
    let b_arg = raw("b", &mut b, &[2, 3]);
    // y overlaps a.
    let y_arg = RawArg {
        addr: a_arg.addr + 16,
        ..raw("y", right, &[2, 3])
    };
    let e =
        unsafe { m.run_raw(&[a_arg.clone(), b_arg.clone(), y_arg], &Sizes::new()) }.unwrap_err();
    assert!(matches!(e, CpuError::Args(ArgError::Overlap(..))), "{e}");
    // Disjoint memory runs.
    let y_ok = raw("y", right, &[2, 3]);
    unsafe { m.run_raw(&[a_arg, b_arg, y_ok], &Sizes::new()) }.expect("runs");
    assert!(mem[6..].iter().all(|&v| v == 3.0));
}

#[test]
fn raw_argument_of_the_wrong_size() {
    let (_, m) = add();
    let (mut a, mut b, mut y) = (vec![0f32; 6], vec![0f32; 6], vec![0f32; 6]);
    let mut short = raw("y", &mut y, &[2, 3]);
    short.bytes = 20;
    let args = [raw("a", &mut a, &[2, 3]), raw("b", &mut b, &[2, 3]), short];
    let e = unsafe { m.run_raw(&args, &Sizes::new()) }.unwrap_err();
    assert!(matches!(e, CpuError::Args(ArgError::Raw { .. })), "{e}");
}

#[test]
fn missing_compiler_says_what_to_install() {
    let p = tile_ir::parse_program(ADD).expect("parses");
    let plan = tile_plan::compile(&p, &tile_plan::Options::default()).expect("plans");
    let opts = CpuOptions {
        cc: Some("/nonexistent/tile-test-cc".into()),
        cache: false,
        ..CpuOptions::default()
    };
    let e = tile_cpu::compile(&plan, &opts).unwrap_err();
    assert!(matches!(e, CpuError::NoCompiler { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("/nonexistent/tile-test-cc")
            && msg.contains("gcc or clang")
            && msg.contains("TILE_CC"),
        "{msg}"
    );
    // Emission still works without a compiler.
    assert!(tile_cpu::emit_c(&plan, &opts).is_ok());
}

#[test]
fn out_of_box_index_is_an_error() {
    let p = tile_ir::parse_program(
        "program shift(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i + 1] } }",
    )
    .expect("parses");
    let (_, m) = common::build(&p, true);
    for n in [1usize, 5, 40, 100_000] {
        let mut a = BTreeMap::from([
            ("x".to_string(), Array::zeros(DType::F32, &[n])),
            ("y".to_string(), Array::zeros(DType::F32, &[n])),
        ]);
        let e = m.run(&mut a, &Sizes::new()).unwrap_err();
        assert!(
            matches!(e, CpuError::OutOfBounds { ref buf, .. } if buf == "x"),
            "{e}"
        );
    }
}

#[test]
fn a_whole_array_sum_names_its_line_when_an_index_leaves_the_box() {
    let p = tile_ir::parse_program(
        "program g(v: in f32[N], ix: in i32[N], y: out f32) {\n  y = sum(j in 0..N: v[ix[j] + j])\n}",
    )
    .expect("parses");
    let (_, m) = common::build(&p, true);
    let n = 4096;
    let mut a = BTreeMap::from([
        ("v".to_string(), Array::zeros(DType::F32, &[n])),
        (
            "ix".to_string(),
            Array::new(vec![n], tile_ir::ArrayData::I32((0..n as i32).collect())).unwrap(),
        ),
        ("y".to_string(), Array::zeros(DType::F32, &[])),
    ]);
    let e = m.run(&mut a, &Sizes::new()).unwrap_err();
    assert!(
        matches!(e, CpuError::OutOfBounds { ref buf, line: 2, .. } if buf == "v"),
        "{e}"
    );
}

#[test]
fn conditional_out_of_box_index_is_fine_when_guarded() {
    let p = tile_ir::parse_program(
        "program guarded(x: in f32[N], y: out f32[N]) { for i in 0..N { if i + 1 < N { y[i] = x[i + 1] } } }",
    )
    .expect("parses");
    let (_, m) = common::build(&p, true);
    let n = 37;
    let xs: Vec<f64> = (0..n).map(|k| k as f64).collect();
    let mut a = BTreeMap::from([
        ("x".to_string(), Array::from_f64(DType::F32, &[n], &xs)),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[n], &vec![-1.0; n]),
        ),
    ]);
    m.run(&mut a, &Sizes::new()).expect("runs");
    let y = a["y"].to_f64();
    assert_eq!(y[0], 1.0);
    assert_eq!(y[35], 36.0);
    assert_eq!(y[36], -1.0);
}

#[test]
fn integer_division_by_zero_is_an_error() {
    let p = tile_ir::parse_program(
        "program div(x: in i32[N], y: out i32[N]) { for i in 0..N { y[i] = 100 / x[i] } }",
    )
    .expect("parses");
    let (_, m) = common::build(&p, true);
    let mut a = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::I32, &[40], &[0.0; 40]),
        ),
        ("y".to_string(), Array::zeros(DType::I32, &[40])),
    ]);
    let e = m.run(&mut a, &Sizes::new()).unwrap_err();
    assert!(matches!(e, CpuError::IntArith { .. }), "{e}");
    // Truncation toward zero otherwise.
    let xs: Vec<f64> = (0..40)
        .map(|k| if k % 2 == 0 { 7.0 } else { -7.0 })
        .collect();
    a.insert("x".to_string(), Array::from_f64(DType::I32, &[40], &xs));
    m.run(&mut a, &Sizes::new()).expect("runs");
    assert_eq!(a["y"].to_f64()[0], 14.0);
    assert_eq!(a["y"].to_f64()[1], -14.0);
}

#[test]
fn wrapping_indices_are_refused_through_the_api_and_nothing_is_written() {
    for text in [
        "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i + 9223372036854775807] = x[i] } }",
        "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i + 9223372036854775807] } }",
        "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[(i * 4611686018427387904) / 4611686018427387904] } }",
    ] {
        let p = tile_ir::parse_program(text).expect("parses");
        let (_, m) = common::build(&p, true);
        let mut a = BTreeMap::from([
            ("x".to_string(), Array::from_f64(DType::F32, &[5], &[1.0; 5])),
            ("y".to_string(), Array::from_f64(DType::F32, &[5], &[7.0; 5])),
        ]);
        let e = m.run(&mut a, &Sizes::new()).unwrap_err();
        assert!(matches!(e, CpuError::Range(_)), "{text}: {e}");
        assert_eq!(a["y"].to_f64(), [7.0; 5], "{text}: y was written");
    }
}

#[test]
fn arrays_that_disagree_with_their_shape_cannot_be_made() {
    use tile_ir::ArrayData;
    assert!(Array::new(vec![2, 3], ArrayData::F32(vec![0.0; 5])).is_err());
    assert!(Array::new(vec![usize::MAX, 2], ArrayData::F32(vec![])).is_err());
    // RawArg describes memory the caller owns: its size is checked too.
    let (_, m) = add();
    let mut buf = [0f32; 6];
    let raw = |name: &str, bytes: usize, ptr: *mut u8| RawArg {
        name: name.to_string(),
        dtype: DType::F32,
        shape: vec![2, 3],
        addr: ptr as u64,
        bytes,
    };
    let (mut b1, mut b2) = ([0f32; 6], [0f32; 6]);
    let args = [
        raw("a", 20, buf.as_mut_ptr() as *mut u8),
        raw("b", 24, b1.as_mut_ptr() as *mut u8),
        raw("y", 24, b2.as_mut_ptr() as *mut u8),
    ];
    // SAFETY: every pointer is valid for the bytes it claims (fewer for a).
    let e = unsafe { m.run_raw(&args, &Sizes::new()) }.unwrap_err();
    assert!(
        matches!(e, CpuError::Args(ArgError::Raw { ref name, .. }) if name == "a"),
        "{e}"
    );
}
