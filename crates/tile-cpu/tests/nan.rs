//! `max` and `min` over NaN on the CPU, as in the interpreter: a row, a
//! column or a whole array of NaN alone gives NaN, NaN among numbers is
//! skipped, an empty range gives the identity (the GPU has the same test).

mod common;

use tile_ir::{interp, Sizes};

#[test]
fn nan_in_max_and_min_matches_the_interpreter() {
    let program = tile_ir::parse_program(
        "program nans(x: in f32[M, N], r: out f32[M], s: out f32[M], c: out f32[N], t: out f32[1]) {
  for i in 0..M {
    r[i] = max(j in 0..N: x[i, j])
    s[i] = min(j in 0..N: x[i, j])
  }
  for j in 0..N {
    c[j] = max(i in 0..M: x[i, j])
  }
  t[0] = min(i in 0..M: max(j in 0..N: x[i, j]))
}",
    )
    .unwrap();
    for fusion in [true, false] {
        let (_, module) = common::build(&program, fusion);
        for (m, n) in [(3usize, 5usize), (4, 1), (1, 700), (40, 3), (3, 0), (0, 4)] {
            let sizes = Sizes::from([("M".into(), m as i64), ("N".into(), n as i64)]);
            let mut args = common::arguments(&program, &sizes).unwrap();
            let x = args.get_mut("x").unwrap();
            for i in 0..m {
                for j in 0..n {
                    // Row 0 and column 0 all NaN; every third element NaN.
                    if i == 0 || j == 0 || (i * n + j) % 3 == 0 {
                        x.set_f64(i * n + j, f64::NAN);
                    }
                }
            }
            let mut want = args.clone();
            interp::interpret(&program, &mut want, &sizes).unwrap();
            let mut got = args;
            module.run(&mut got, &sizes).unwrap();
            for (name, w) in &want {
                for k in 0..w.len() {
                    let (a, b) = (got[name].get_f64(k), w.get_f64(k));
                    assert!(
                        common::close(w.dtype(), a, b),
                        "`{name}`[{k}] at {m}x{n} (fusion {fusion}): {a}, interpreter {b}"
                    );
                }
            }
        }
    }
}
