//! Constructs beyond the fixtures, each against the interpreter at several
//! shapes (fusion on and off): `bool` and `i32` buffers, `f64` and mixed
//! types, nested conditions (lane masks), data-dependent gathers,
//! reductions whose body or bounds vary across lanes, inner loops that must
//! keep their order, 3-D and 1-D domains, serial top-level code.

mod common;

/// (name, program text, size sets)
const CASES: &[(&str, &str, &[&[i64]])] = &[
    (
        "bool_and_int_buffers",
        "program bi(x: in f32[M, N], m: in bool[M, N], k: in i32[M, N], y: out f32[M, N], b: out bool[M, N], c: out i32[M, N]) {
          for i in 0..M, j in 0..N {
            y[i, j] = select(m[i, j], x[i, j], f32(k[i, j]) * 0.5)
            b[i, j] = x[i, j] > 0.0 && !m[i, j] || k[i, j] == 2
            c[i, j] = k[i, j] * 3 + i32(x[i, j] * 10.0) - min(k[i, j], 1) + abs(k[i, j] - 2)
          }
        }",
        &[&[1, 1], &[3, 17], &[5, 100]],
    ),
    (
        "f64_and_casts",
        "program mixed(x: in f32[N], w: in f64[N], y: out f64[N], z: out f32[N]) {
          for i in 0..N {
            y[i] = f64(x[i]) * w[i] + exp(w[i])
            z[i] = f32(w[i] * 2.0) + tanh(x[i])
          }
        }",
        &[&[1], &[15], &[64], &[1000]],
    ),
    (
        "nested_conditions",
        "program nested(x: in f32[M, N], w: in f32[M, N], y: out f32[M, N], z: out f32[M, N]) {
          for i in 0..M, j in 0..N {
            v = x[i, j]
            if v > -0.5 {
              if w[i, j] < 0.3 {
                y[i, j] = v * w[i, j]
              } else {
                t = exp(v)
                y[i, j] = t
                z[i, j] = t * 2.0
              }
            } else {
              if i > 1 {
                z[i, j] = -v
              }
            }
          }
        }",
        &[&[1, 1], &[3, 17], &[7, 64], &[4, 33]],
    ),
    (
        "nested_masks",
        "program masks(x: in f32[M, N], w: in f32[M, N], y: out f32[M, N], z: out f32[M, N], u: out f32[M, N]) {
          for i in 0..M, j in 0..N {
            v = x[i, j]
            if v > -0.5 {
              if w[i, j] < 0.3 {
                y[i, j] = v * w[i, j]
              } else {
                t = exp(v)
                z[i, j] = t * 2.0 + w[i, N - 1 - j]
              }
            } else {
              if i > 1 {
                u[i, j] = -v
              }
            }
          }
        }",
        &[&[1, 1], &[3, 17], &[7, 64], &[4, 33]],
    ),
    (
        "guarded_neighbours",
        "program guarded(x: in f32[M, N], y: out f32[M, N]) {
          for i in 0..M, j in 0..N {
            if j + 1 < N && i > 0 {
              y[i, j] = x[i, j + 1] - x[i - 1, j]
            }
          }
        }",
        &[&[1, 1], &[2, 16], &[5, 37]],
    ),
    (
        "data_dependent_gather",
        "program gather(x: in f32[N], idx: in i32[M], y: out f32[M]) {
          for i in 0..M {
            y[i] = x[abs(idx[i]) + abs(idx[i]) / 3] * 2.0
          }
        }",
        &[&[40, 8]],
    ),
    (
        "strided_and_reversed",
        "program strided(x: in f32[M, 2 * N], y: out f32[M, N], z: out f32[N, M]) {
          for i in 0..M, j in 0..N {
            y[i, j] = x[i, 2 * j] + x[i, 2 * N - 1 - j]
            z[N - 1 - j, i] = x[i, 2 * j + 1]
          }
        }",
        &[&[1, 1], &[3, 16], &[4, 37]],
    ),
    (
        "three_dims",
        "program cube(x: in f32[A, B, C], y: out f32[A, B, C], z: out f32[C, B, A]) {
          for a in 0..A, b in 0..B, c in 0..C {
            y[a, b, c] = x[a, b, c] * f32(a + 2 * b + 3 * c)
            z[c, b, a] = sigmoid(x[a, b, c])
          }
        }",
        &[&[1, 1, 1], &[2, 3, 17], &[3, 5, 40], &[40, 40, 30]],
    ),
    (
        "row_reductions",
        "program rows(x: in f32[M, N], y: out f32[M, N], s: out f32[M], t: out f32[M]) {
          for i in 0..M {
            mx = max(j in 0..N: x[i, j])
            mn = min(j in 0..N: x[i, j])
            s[i] = sum(j in 0..N: exp(x[i, j] - mx)) + mn
            t[i] = sum(j in 0..i + 1: x[i, j] * x[i, i - j])
            for j in 0..N {
              y[i, j] = sum(k in 0..j + 1: x[i, k]) + max(k in j..N: x[i, k] * 0.5)
            }
          }
        }",
        &[&[1, 1], &[3, 5], &[5, 17], &[8, 40]],
    ),
    (
        "row_reduction_body_varies",
        "program mv(a: in f32[M, K], b: in f32[K, N], y: out f32[M, N]) {
          for i in 0..M {
            for j in 0..N {
              y[i, j] = sum(k in 0..K: a[i, k] * b[k, j])
            }
          }
        }",
        &[&[1, 1, 1], &[3, 5, 17], &[4, 33, 20]],
    ),
    (
        "prefix_sum_keeps_order",
        "program prefix(x: in f32[M, N], y: inout f32[M, N]) {
          for i in 0..M {
            y[i, 0] = x[i, 0]
            for j in 1..N {
              y[i, j] = y[i, j - 1] + x[i, j]
            }
          }
        }",
        &[&[1, 1], &[2, 17], &[3, 50]],
    ),
    (
        "integer_reductions",
        "program isum(k: in i32[M, N], s: out i32[M], mx: out i32[M]) {
          for i in 0..M {
            s[i] = sum(j in 0..N: k[i, j] * 2)
            mx[i] = max(j in 0..N: k[i, j] + j)
          }
        }",
        &[&[1, 1], &[3, 17], &[5, 40]],
    ),
    (
        "serial_top_level",
        "program top(x: in f32[N], y: out f32[N], z: out f32[N]) {
          c = x[0] * 2.0
          for i in 0..N {
            y[i] = x[i] + c
          }
          for i in 1..N {
            z[i] = y[i - 1] + sum(k in 0..i: x[k])
          }
        }",
        &[&[1], &[5], &[40]],
    ),
    (
        "reduction_under_mask",
        "program rmask(x: in f32[M, N], y: out f32[M, N]) {
          for i in 0..M {
            for j in 0..N {
              if x[i, j] > 0.0 {
                y[i, j] = sum(k in 0..j + 1: x[i, k]) + sum(k in 0..N: x[i, k] * x[i, j])
              }
            }
          }
        }",
        &[&[1, 1], &[3, 17], &[4, 40]],
    ),
    (
        "negative_boxes",
        "program neg(x: in f32[-3..M - 3, -1..N + 1], y: out f32[-2..M - 2, N]) {
          for i in -2..M - 3, j in 0..N {
            y[i, j] = x[i, j - 1] + x[i + 1, j + 1]
          }
        }",
        &[&[3, 1], &[4, 16], &[6, 37]],
    ),
];

#[test]
fn features_match_the_interpreter() {
    let mut failures = Vec::new();
    for (name, text, size_sets) in CASES {
        let program = tile_ir::parse_program(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        tile_ir::verify(&program).unwrap_or_else(|e| panic!("{name}: {e}"));
        for fusion in [true, false] {
            let (_, module) = common::build(&program, fusion);
            for values in size_sets.iter() {
                let sizes = common::sizes_for(&program, values);
                if let Err(e) = common::compare(
                    &program,
                    &module,
                    &sizes,
                    &format!("{name} fusion {fusion}"),
                ) {
                    failures.push(e);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
