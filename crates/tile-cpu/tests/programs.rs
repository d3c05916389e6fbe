//! Every program in `examples/` and `tests/programs/` runs on the CPU back
//! end, fusion on and off, at the shapes of its `# run:` lines and at a few
//! ragged ones, and matches the FP64 interpreter within the accuracy
//! contract.

mod common;

use std::path::Path;

#[test]
fn every_program_matches_the_interpreter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let paths = tile_ir::fixture::tile_files(&[root.join("examples"), root.join("tests/programs")]);
    assert!(
        !paths.is_empty(),
        "no .tile files found under {}",
        root.display()
    );
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("skip {}: unreadable", path.display());
            continue;
        };
        let programs = match tile_ir::parse_file(&text) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("skip {}: does not parse: {e}", path.display());
                continue;
            }
        };
        for program in &programs {
            if tile_ir::verify(&program.clone()).is_err() {
                eprintln!(
                    "skip {} `{}`: does not verify",
                    path.display(),
                    program.name
                );
                continue;
            }
            let mut shapes = tile_ir::fixture::run_lines(&text);
            // Programs of quadratic cost (a reduction per element over a
            // row) say `# large shape: skip`: the interpreter would take
            // minutes at 37x1537.
            let extra: &[[i64; 3]] = if text.contains("\n# large shape: skip\n") {
                &[[1, 1, 1], [3, 127, 5]]
            } else {
                &[[1, 1, 1], [3, 127, 5], [37, 1537, 3]]
            };
            for v in extra {
                shapes.push(common::sizes_for(program, v));
            }
            for fusion in [true, false] {
                let (_, module) = common::build(program, fusion);
                for sizes in &shapes {
                    let what = format!(
                        "{} `{}` fusion {}",
                        path.display(),
                        program.name,
                        if fusion { "on" } else { "off" }
                    );
                    ran += 1;
                    if let Err(e) = common::compare(program, &module, sizes, &what) {
                        failures.push(e);
                    }
                }
            }
        }
    }
    eprintln!("ran {ran}");
    assert!(
        failures.is_empty(),
        "{} of {ran} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
