//! Row reductions on long rows: softmax, RMSNorm and LayerNorm with rows up
//! to 16384 long stay within `atol 1e-5, rtol 1e-4` of the FP64 interpreter.

use std::path::Path;
use tile_ir::{fixture, interp, Sizes};

#[test]
fn long_rows_are_accurate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs/controls");
    for f in ["softmax", "rmsnorm", "layernorm"] {
        let text = std::fs::read_to_string(root.join(format!("{f}.tile"))).unwrap();
        let program = tile_ir::parse_program(&text).unwrap();
        let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
        assert_eq!(
            plan.kernels[0].mapping,
            tile_plan::Mapping::RowReduction,
            "{f}"
        );
        let module = tile_cpu::compile(&plan, &tile_cpu::CpuOptions::default()).unwrap();
        for n in [4097, 16384] {
            let sizes = Sizes::from([("M".into(), 3), ("N".into(), n)]);
            let args = fixture::arguments(&program, &sizes).unwrap();
            let mut want = args.clone();
            interp::interpret(&program, &mut want, &sizes).unwrap();
            let mut got = args.clone();
            module.run(&mut got, &sizes).unwrap();
            for i in 0..want["y"].len() {
                let (g, w) = (got["y"].get_f64(i), want["y"].get_f64(i));
                assert!(
                    (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
                    "{f} N={n} element {i}: got {g}, want {w}"
                );
            }
        }
    }
}
