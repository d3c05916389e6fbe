//! Float-to-integer conversions and integer comparisons on vector lanes,
//! at the values where they can go wrong: NaN, infinities, the edges of
//! the `i32` range (conversions saturate), signed zeros and the extremes
//! of `i32`. Each output is checked against the interpreter and against
//! the rule written out here in Rust, over a length that leaves a scalar
//! tail after the vector lanes, in a program of `f32` lanes and one of
//! `f64` lanes.

mod common;

use std::collections::BTreeMap;
use tile_ir::{interp, Array, ArrayData, DType};

const TEXT: &str = "program conv(x: in f32[N], w: in f64[N], k: in i32[N], a: out i32[N], b: out i32[N], c: out i32[N]) {
  for i in 0..N {
    a[i] = i32(x[i])
    b[i] = i32(w[i])
    c[i] = select(k[i] < 3, 1, 0) + select(k[i] <= 3, 2, 0) + select(k[i] > 3, 4, 0) + select(k[i] >= 3, 8, 0) + select(k[i] == 3, 16, 0) + select(k[i] != 3, 32, 0)
  }
}";

/// `i32(v)`: truncation toward zero, saturating, NaN to 0.
fn to_i32(v: f64) -> i32 {
    if v.is_nan() {
        0
    } else {
        v.trunc().clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
}

/// The bits `c[i]` sets for `k` against 3.
fn compare_bits(k: i32) -> i32 {
    [k < 3, k <= 3, k > 3, k >= 3, k == 3, k != 3]
        .iter()
        .enumerate()
        .map(|(b, &t)| if t { 1 << b } else { 0 })
        .sum()
}

#[test]
fn conversions_and_comparisons_at_the_edges_match_the_interpreter() {
    let floats: &[f64] = &[
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2147483520.0,
        2147483647.0,
        2147483647.5,
        2147483648.0,
        2147483648.5,
        3e9,
        -2147483648.0,
        -2147483648.5,
        -2147483649.0,
        -2147483904.0,
        -3e9,
        1e-40,
        -1e-40,
        1e300,
        -1e300,
        123456.75,
        -123456.75,
    ];
    let ints: &[i32] = &[i32::MIN, -1, 0, 2, 3, 4, i32::MAX, 3, 3, -3];
    // The first float parameter sets the program's lane count: f32 lanes
    // (`x` first) or f64 lanes (`w` first).
    let f64_first = TEXT.replace("x: in f32[N], w: in f64[N]", "w: in f64[N], x: in f32[N]");
    assert_ne!(f64_first, TEXT);
    for text in [TEXT, f64_first.as_str()] {
        let program = tile_ir::parse_program(text).expect("the test program parses");
        check(&program, floats, ints);
    }
}

fn check(program: &tile_ir::Program, floats: &[f64], ints: &[i32]) {
    for n in [1usize, 7, 16, 67, 200] {
        let x: Vec<f32> = (0..n).map(|i| floats[i % floats.len()] as f32).collect();
        let w: Vec<f64> = (0..n).map(|i| floats[(i * 7) % floats.len()]).collect();
        let k: Vec<i32> = (0..n).map(|i| ints[i % ints.len()]).collect();
        let mut args = BTreeMap::new();
        args.insert(
            "x".into(),
            Array::new(vec![n], ArrayData::F32(x.clone())).unwrap(),
        );
        args.insert(
            "w".into(),
            Array::new(vec![n], ArrayData::F64(w.clone())).unwrap(),
        );
        args.insert(
            "k".into(),
            Array::new(vec![n], ArrayData::I32(k.clone())).unwrap(),
        );
        for out in ["a", "b", "c"] {
            args.insert(out.into(), Array::zeros(DType::I32, &[n]));
        }
        let mut want = args.clone();
        interp::interpret(program, &mut want, &BTreeMap::new()).unwrap();
        for fusion in [true, false] {
            let (_, module) = common::build(program, fusion);
            let mut got = args.clone();
            module.run(&mut got, &BTreeMap::new()).unwrap();
            for i in 0..n {
                let rule = [
                    ("a", to_i32(x[i] as f64), x[i] as f64),
                    ("b", to_i32(w[i]), w[i]),
                    ("c", compare_bits(k[i]), k[i] as f64),
                ];
                for (name, r, input) in rule {
                    let (g, wv) = (got[name].get_f64(i), want[name].get_f64(i));
                    assert_eq!(
                        g, wv,
                        "`{name}`[{i}] of {input} at N={n} (fusion {fusion}): interpreter {wv}"
                    );
                    assert_eq!(
                        g, r as f64,
                        "`{name}`[{i}] of {input} at N={n} (fusion {fusion}): the rule gives {r}"
                    );
                }
            }
        }
    }
}
