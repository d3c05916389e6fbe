//! Emission is deterministic: the same plan gives the same bytes on every
//! run, and programs whose plan does not depend on fusion (every
//! single-store program) give byte-identical C with fusion on and off.

mod common;

use std::path::Path;
use tile_cpu::{emit_c, CpuOptions};

fn programs() -> Vec<tile_ir::Program> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    let mut stack = vec![root.join("examples"), root.join("tests/programs")];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "tile") {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        match tile_ir::parse_file(&text) {
            Ok(ps) => out.extend(ps.into_iter().filter(|p| tile_ir::verify(p).is_ok())),
            Err(e) => eprintln!("skip {}: {e}", f.display()),
        }
    }
    out
}

fn stored_buffers(p: &tile_ir::Program) -> usize {
    let mut names = Vec::new();
    p.walk(&mut |s| {
        if let tile_ir::Stmt::Store { buf, .. } = s {
            if !names.contains(buf) {
                names.push(buf.clone());
            }
        }
    });
    names.len()
}

#[test]
fn emission_is_repeatable_and_fusion_neutral_for_single_stores() {
    let opts = CpuOptions::default();
    let mut single = 0;
    for program in programs() {
        let plan =
            |fusion| tile_plan::compile(&program, &tile_plan::Options { fusion }).expect("plans");
        let (on, off) = (plan(true), plan(false));
        let a = emit_c(&on, &opts).expect("emits");
        let b = emit_c(&plan(true), &opts).expect("emits");
        assert_eq!(a, b, "{}: two emissions differ", program.name);
        let c = emit_c(&off, &opts).expect("emits");
        if stored_buffers(&program) == 1 {
            single += 1;
            assert_eq!(
                a, c,
                "{}: single-store program differs with fusion off",
                program.name
            );
        }
        if on.kernels == off.kernels {
            assert_eq!(a, c, "{}: same kernels but different C", program.name);
        }
        assert!(
            !a.contains("fusion"),
            "{}: the source mentions fusion",
            program.name
        );
    }
    assert!(
        single >= 3,
        "too few single-store programs found ({single})"
    );
}
