//! The guide's suites chapter (docs/guide/suites.md) shows each program by
//! including its fixture file and then the plan `tile plan` prints for it:
//! every shown plan must be the planner's plan of the included program, and
//! every fixture of the three suites must be shown. `TILE_BLESS=1`
//! rewrites the chapter's plan blocks to the planner's plans.

use std::path::Path;
use tile_plan::{compile, Options};

#[test]
fn the_suites_chapter_shows_the_planners_plans() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let chapter = root.join("docs/guide/suites.md");
    let text = std::fs::read_to_string(&chapter).unwrap();
    let bless = std::env::var_os("TILE_BLESS").is_some();
    let mut blessed = String::new();
    let mut copied = 0;
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
        if bless {
            // The text up to the block, then the planner's plan.
            let start = text.len() - block.len();
            blessed.push_str(&text[copied..start]);
            blessed.push_str(&plan.to_string());
            copied = start + plan_text.len();
            shown.push(path.to_string());
            continue;
        }
        assert_eq!(
            plan_text,
            plan.to_string(),
            "{path}: the chapter's plan is stale"
        );
        shown.push(path.to_string());
    }
    if bless {
        blessed.push_str(&text[copied..]);
        std::fs::write(&chapter, blessed).unwrap();
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
