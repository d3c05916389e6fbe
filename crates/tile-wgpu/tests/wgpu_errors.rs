//! What a wgpu call refuses, and that a refused or failed call changes
//! nothing. Skips with a message where no adapter exists (see
//! `lavapipe.rs`).
#![cfg(feature = "runtime")]

mod common;

use common::module;
use std::collections::BTreeMap;
use tile_ir::{Array, DType, Sizes};
use tile_wgpu::WgpuError;

fn plan(text: &str) -> tile_plan::Plan {
    let program = tile_ir::parse_program(text).unwrap();
    tile_plan::compile(&program, &tile_plan::Options::default()).unwrap()
}

#[test]
fn a_failed_check_names_the_access_and_changes_nothing() {
    let plan = plan("program shift(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i + 1] * 2.0\n  }\n}");
    let Some(m) = module(&plan) else {
        return;
    };
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[300], &[1.0; 300]),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[300], &[7.0; 300]),
        ),
    ]);
    let before = arrays.clone();
    let e = m.run(&mut arrays, &Sizes::new()).unwrap_err();
    assert!(
        matches!(&e, WgpuError::OutOfBounds { buf, line: 3, what, .. } if buf == "x" && what == "load"),
        "{e}"
    );
    assert_eq!(arrays, before, "a failed call changed its arguments");
    // The same module then runs a call that fits.
    let mut fits = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[3], &[1.0, 2.0, 3.0]),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[2], &[0.0, 0.0]),
        ),
    ]);
    let sizes = Sizes::from([("N".to_string(), 2)]);
    let e = m.run(&mut fits, &sizes);
    assert!(matches!(e, Err(WgpuError::Args(_))), "{e:?}");
}

#[test]
fn a_row_kernel_reports_its_first_failed_check_not_a_later_one() {
    // A thread of a row kernel goes on after a failed check (its
    // workgroup waits at barriers): the load of `x[ix[i]]` out of bounds
    // may read 0, which the division then fails on. The load is named.
    let plan = plan("program r(x: in i32[N], ix: in i32[M], y: out i32[M]) {\n  for i in 0..M {\n    d = x[ix[i]]\n    y[i] = sum(j in 0..N: x[j] % 7) / d\n  }\n}");
    assert_eq!(plan.kernels[0].mapping, tile_plan::Mapping::RowReduction);
    let Some(m) = module(&plan) else {
        return;
    };
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::I32, &[4], &[1.0, 2.0, 3.0, 4.0]),
        ),
        (
            "ix".to_string(),
            Array::from_f64(DType::I32, &[3], &[0.0, 9.0, 1.0]),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::I32, &[3], &[7.0; 3]),
        ),
    ]);
    let before = arrays.clone();
    let e = m.run(&mut arrays, &Sizes::new()).unwrap_err();
    assert!(
        matches!(&e, WgpuError::OutOfBounds { buf, line: 3, what, .. } if buf == "x" && what == "load"),
        "{e}"
    );
    assert_eq!(arrays, before, "a failed call changed its arguments");
}

#[test]
fn sizes_past_32_bits_are_refused_before_any_work() {
    let plan = plan("program s(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i] + 1.0\n  }\n}");
    let Some(m) = module(&plan) else {
        return;
    };
    // Sizes alone (no arrays of that size are needed to be refused):
    // explicit sizes that do not match the arrays are an argument error;
    // the proof's refusal is shown on the plan directly.
    let sizes = Sizes::from([("N".to_string(), 1i64 << 31)]);
    let e = tile_plan::check_ranges_within(&plan, &sizes, tile_wgpu::INDEX_BITS).unwrap_err();
    assert!(e.to_string().contains("2^30"), "{e}");
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[4], &[1.0; 4]),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[4], &[0.0; 4]),
        ),
    ]);
    m.run(&mut arrays, &Sizes::new()).unwrap();
    assert_eq!(arrays["y"].to_f64(), vec![2.0; 4]);
}
