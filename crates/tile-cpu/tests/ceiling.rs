//! Scratch rows are memory Tile allocates: sized on the host and refused
//! above the memory ceiling before any kernel runs. (Its own test binary:
//! the ceiling is process-wide.)

use std::collections::BTreeMap;
use tile_cpu::CpuError;
use tile_ir::{Array, DType, Sizes};

#[test]
fn scratch_rows_above_the_ceiling_are_refused_before_launch() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/programs/controls/softmax.tile"),
    )
    .unwrap();
    let program = tile_ir::parse_file(&text).unwrap().remove(0);
    let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
    let module = tile_cpu::compile(&plan, &tile_cpu::CpuOptions::default()).unwrap();
    assert!(
        module.source().contains("tile_scratch("),
        "softmax caches its exponentials"
    );
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[2, 64], &[1.0; 128]),
        ),
        (
            "y".to_string(),
            Array::from_f64(DType::F32, &[2, 64], &[7.0; 128]),
        ),
    ]);
    // One row of 64 f32 needs 256 bytes, plus 64 of slack.
    tile_ir::limits::set_memory_ceiling(300);
    let e = module.run(&mut arrays, &Sizes::new()).unwrap_err();
    assert!(
        matches!(
            e,
            CpuError::ScratchTooLarge {
                bytes: 320,
                ceiling: 300,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(arrays["y"].to_f64(), [7.0; 128], "nothing ran");
    tile_ir::limits::set_memory_ceiling(320);
    module.run(&mut arrays, &Sizes::new()).unwrap();
    assert!((arrays["y"].to_f64()[0] - 1.0 / 64.0).abs() < 1e-6);
}
