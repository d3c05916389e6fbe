//! `Kernel::rereads`: which rows a row kernel may read once.

use tile_plan::{compile, Options};

fn rereads(src: &str) -> Vec<(String, String, usize)> {
    let program = tile_ir::parse_program(src).unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    plan.kernels
        .iter()
        .flat_map(|k| &k.rereads)
        .map(|r| (r.buf.clone(), format!("{}..{}", r.lo, r.hi), r.readers))
        .collect()
}

#[test]
fn rows_read_whole_twice_and_never_written() {
    // Two statements read x's whole row: a binding's max and the store's sum.
    let lse = "program p(x: in f32[M, N], y: out f32[M]) {
      for i in 0..M {
        m = max(j in 0..N: x[i, j])
        y[i] = m + log(sum(j in 0..N: exp(x[i, j] - m)))
      }
    }";
    assert_eq!(rereads(lse), vec![("x".into(), "0..N".into(), 2)]);
    // A reduction and a row-level loop; w is read once, by the loop.
    let norm = "program p(x: in f32[M, N], w: in f32[M, N], y: out f32[M, N]) {
      for i in 0..M {
        s = sum(j in 0..N: x[i, j] * x[i, j])
        for j in 0..N {
          y[i, j] = x[i, j] * w[i, j] / s
        }
      }
    }";
    assert_eq!(rereads(norm), vec![("x".into(), "0..N".into(), 2)]);
}

#[test]
fn rows_read_once_in_part_or_written_are_not_reread() {
    // One statement reads the row.
    let once = "program p(x: in f32[M, N], y: out f32[M]) {
      for i in 0..M {
        y[i] = sqrt(sum(j in 0..N: x[i, j] * x[i, j]))
      }
    }";
    assert!(rereads(once).is_empty());
    // Part of the row (1..N is not the box's last dimension).
    let part = "program p(x: in f32[M, N], y: out f32[M]) {
      for i in 0..M {
        m = max(j in 1..N: x[i, j])
        y[i] = m + sum(j in 1..N: x[i, j])
      }
    }";
    assert!(rereads(part).is_empty());
    // The kernel writes x (its rows change while the row runs).
    let written = "program p(x: inout f32[M, N], y: out f32[M]) {
      for i in 0..M {
        m = max(j in 0..N: x[i, j])
        for j in 0..N {
          x[i, j] = x[i, j] - m
        }
        y[i] = sum(j in 0..N: x[i, j])
      }
    }";
    assert!(rereads(written).is_empty());
}
