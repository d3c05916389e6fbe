//! `max` and `min` over NaN on the CPU, as in the interpreter: a row, a
//! column or a whole array of NaN alone gives NaN, NaN among numbers is
//! skipped, an empty range gives the identity (the GPU has the same test,
//! on the same fixture and arguments).

mod common;

use std::path::Path;
use tile_ir::{fixture, interp};

#[test]
fn nan_in_max_and_min_matches_the_interpreter() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/programs/reductions/max_min_empty.tile");
    let program = tile_ir::parse_program(&std::fs::read_to_string(path).unwrap()).unwrap();
    for fusion in [true, false] {
        let (_, module) = common::build(&program, fusion);
        for (m, n) in fixture::NAN_SHAPES {
            let (sizes, args) = fixture::nan_arguments(&program, m, n).unwrap();
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
