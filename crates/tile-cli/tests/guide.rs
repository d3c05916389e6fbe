//! The guide's suites chapter (docs/guide/suites.md) shows each program by
//! including its fixture file and then the plan `tile plan` prints for it:
//! every shown plan must be the planner's plan of the included program, and
//! every fixture of the three suites must be shown.

use std::path::Path;
use tile_plan::{compile, Options};

#[test]
fn the_suites_chapter_shows_the_planners_plans() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("docs/guide/suites.md")).unwrap();
    let mut shown = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("{{#include ../../") {
        rest = &rest[at + "{{#include ../../".len()..];
        let path = &rest[..rest.find("}}").unwrap()];
        let block = rest
            .find("```text\n")
            .map(|b| &rest[b + "```text\n".len()..])
            .unwrap_or_else(|| panic!("{path}: no plan block after the program"));
        let plan_text = &block[..block.find("```").unwrap()];
        let program =
            tile_ir::parse_program(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap();
        let plan = compile(&program, &Options { fusion: true }).unwrap();
        assert_eq!(
            plan_text,
            plan.to_string(),
            "{path}: the chapter's plan is stale"
        );
        shown.push(path.to_string());
    }
    for suite in ["matrix", "neural", "algorithm"] {
        for f in tile_ir::fixture::tile_files(&[root.join("tests/programs").join(suite)]) {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            assert!(shown.contains(&rel), "{rel} is not in docs/guide/suites.md");
        }
    }
}
