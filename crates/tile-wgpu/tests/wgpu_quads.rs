//! The element kernels' `_v4` entry points (four elements per thread,
//! 16-byte accesses through `vec4<f32>` views): chosen where every access
//! starts on a 16-byte boundary, right at ragged ends and 1-element
//! buffers, and their own failed checks named. Skips with a message where
//! no adapter exists (see `lavapipe.rs`).
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

/// Values in a few binades, with signs, from `seed`.
fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            (h as f64 / (1u64 << 24) as f64 - 0.5) * 16.0
        })
        .collect()
}

#[test]
fn aligned_rows_run_the_v4_entry_point_and_match_the_interpreter() {
    // `b` is read once per row (not with `j`): a scalar read through its
    // view, as the ragged end's elements are.
    let text = "program pair(x: in f32[M, N], b: in f32[M], value: out f32[M, N], grad: out f32[M, N]) {\n  for i in 0..M, j in 0..N {\n    s = sigmoid(x[i, j] + b[i])\n    value[i, j] = s\n    grad[i, j] = s * (1.0 - s)\n  }\n}";
    let plan = plan(text);
    let Some(m) = module(&plan) else {
        return;
    };
    assert!(m.source().contains("fn tile_k0_v4("), "a _v4 entry point");
    // (rows, columns, whether every row starts on a 16-byte boundary).
    for (rows, cols, quads) in [
        (3, 1028, true),
        (1, 4, true),
        (5, 1027, false),
        (1, 1, false),
        (2, 6, false),
        (7, 8, true),
    ] {
        let mut arrays = BTreeMap::from([
            (
                "x".to_string(),
                Array::from_f64(DType::F32, &[rows, cols], &values(rows * cols, 1)),
            ),
            (
                "b".to_string(),
                Array::from_f64(DType::F32, &[rows], &values(rows, 2)),
            ),
            (
                "value".to_string(),
                Array::from_f64(DType::F32, &[rows, cols], &vec![0.0; rows * cols]),
            ),
            (
                "grad".to_string(),
                Array::from_f64(DType::F32, &[rows, cols], &vec![0.0; rows * cols]),
            ),
        ]);
        let sizes = Sizes::new();
        let bound = m.bind(&arrays, &sizes).unwrap();
        let want_entry = if quads { "tile_k0_v4" } else { "tile_k0" };
        assert_eq!(m.launched(&bound), [want_entry], "{rows}x{cols}");
        let mut want = arrays.clone();
        tile_ir::interp::interpret(&plan.program, &mut want, &sizes).unwrap();
        m.run(&mut arrays, &sizes).unwrap();
        for name in ["value", "grad"] {
            let (g, w) = (&arrays[name], &want[name]);
            for k in 0..w.len() {
                let (g, w) = (g.get_f64(k), w.get_f64(k));
                assert!(
                    // f32 against the interpreter's f64, as in `lavapipe.rs`.
                    (g - w).abs() <= 2e-6 + 2e-5 * w.abs(),
                    "{rows}x{cols} `{name}`[{k}] = {g:e}, interpreter {w:e}"
                );
            }
        }
    }
}

#[test]
fn a_failed_16_byte_access_is_named_and_changes_nothing() {
    // `x[i, j + 4]` starts on a 16-byte boundary (the `_v4` entry point
    // runs) and its last quad of each row lies past the row.
    let plan = plan("program ahead(x: in f32[M, N], y: out f32[M, N]) {\n  for i in 0..M, j in 0..N {\n    y[i, j] = x[i, j + 4]\n  }\n}");
    let Some(m) = module(&plan) else {
        return;
    };
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[2, 8], &values(16, 3)),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[2, 8], &[5.0; 16]),
        ),
    ]);
    let before = arrays.clone();
    let bound = m.bind(&arrays, &Sizes::new()).unwrap();
    assert_eq!(m.launched(&bound), ["tile_k0_v4"]);
    let e = m.run(&mut arrays, &Sizes::new()).unwrap_err();
    assert!(
        matches!(&e, WgpuError::OutOfBounds { buf, what, .. } if buf == "x" && what == "vector access"),
        "{e}"
    );
    assert_eq!(arrays, before, "a failed call changed its arguments");
}

#[test]
fn a_failed_16_byte_store_names_its_buffer_after_a_repeated_load() {
    // Two nests fused into one kernel read `x[i, j]` twice (one 16-byte
    // load): the failed store past `z`'s rows is named `z`, not the
    // buffer of the site before it.
    let plan = plan("program dup(x: in f32[M, N], y: out f32[M, N], z: out f32[M, N]) {\n  for i in 0..M, j in 0..N {\n    y[i, j] = exp(x[i, j])\n  }\n  for p in 0..M, q in 0..N {\n    z[p, q + 4] = sin(x[p, q])\n  }\n}");
    let Some(m) = module(&plan) else {
        return;
    };
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[2, 8], &values(16, 4)),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[2, 8], &[5.0; 16]),
        ),
        (
            "z".to_string(),
            Array::from_f64(DType::F32, &[2, 8], &[6.0; 16]),
        ),
    ]);
    let before = arrays.clone();
    let bound = m.bind(&arrays, &Sizes::new()).unwrap();
    assert_eq!(m.launched(&bound), ["tile_k0_v4"]);
    let e = m.run(&mut arrays, &Sizes::new()).unwrap_err();
    assert!(
        matches!(&e, WgpuError::OutOfBounds { buf, what, .. } if buf == "z" && what == "vector access"),
        "{e}"
    );
    assert_eq!(arrays, before, "a failed call changed its arguments");
}
