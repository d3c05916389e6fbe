//! `docs/results/digest.md` is `tile report`'s output for the committed
//! runs: regenerated from their `results.json` (the runs and their order
//! are the page's own `## ` headings), it must match byte for byte, and
//! every committed `results.json` must be in it. `TILE_BLESS=1` rewrites
//! the page.

use std::path::{Path, PathBuf};

fn results_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/results")
}

/// Every folder below `dir` holding a `results.json`.
fn runs_below(dir: &Path, base: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.join("results.json").is_file() {
                out.push(
                    p.strip_prefix(base)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
            runs_below(&p, base, out);
        }
    }
}

#[test]
fn the_results_digest_matches_the_committed_runs() {
    let root = results_root();
    let page = root.join("digest.md");
    let text = std::fs::read_to_string(&page).expect("docs/results/digest.md exists");
    let listed: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_string)
        .collect();
    let mut committed = Vec::new();
    runs_below(&root, &root, &mut committed);
    committed.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(
        sorted, committed,
        "docs/results/digest.md must list every committed run (add new ones to `tile report`'s arguments)"
    );
    let dirs: Vec<PathBuf> = listed.iter().map(|d| root.join(d)).collect();
    let runs = tile_bench::digest::load(&dirs, &root).unwrap();
    for r in &runs {
        assert!(
            r.audit.is_ok(),
            "{}: the audit fails: {:?}",
            r.path,
            r.audit
        );
    }
    let fresh = tile_bench::digest::digest(&runs);
    if std::env::var("TILE_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&page, &fresh).unwrap();
        return;
    }
    assert!(
        fresh == text,
        "docs/results/digest.md is stale: regenerate it with `tile report {} --out docs/results/digest.md` (from the repository root, paths under docs/results) or TILE_BLESS=1\n{}",
        listed.join(" "),
        tile_ir::fixture::line_diff(&text, &fresh)
    );
}

/// The book (docs/SUMMARY.md) has a page for every committed run's
/// `results.md` and every results README, so none is left out of the site.
#[test]
fn the_book_lists_every_results_page() {
    let root = results_root();
    let summary = std::fs::read_to_string(root.join("../SUMMARY.md")).expect("docs/SUMMARY.md");
    let mut runs = Vec::new();
    runs_below(&root, &root, &mut runs);
    let mut missing: Vec<String> = runs
        .iter()
        .map(|r| format!("results/{r}/results.md"))
        .filter(|p| !summary.contains(&format!("({p})")))
        .collect();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let readme = e.path().join("README.md");
        if readme.is_file() {
            let p = format!("results/{}/README.md", e.file_name().to_string_lossy());
            if !summary.contains(&format!("({p})")) {
                missing.push(p);
            }
        }
    }
    assert!(missing.is_empty(), "docs/SUMMARY.md lacks {missing:?}");
}

/// Every committed run's `results.md` is the report rendered from its
/// `results.json` by the current `tile bench` code, byte for byte
/// (`TILE_BLESS=1` renders them again).
#[test]
fn every_results_page_is_its_rendering() {
    let root = results_root();
    let mut runs = Vec::new();
    runs_below(&root, &root, &mut runs);
    let mut stale = Vec::new();
    for r in &runs {
        let dir = root.join(r);
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        let page = std::fs::read_to_string(dir.join("results.md")).unwrap();
        let fresh = tile_bench::report::render(&json).unwrap();
        if std::env::var("TILE_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(dir.join("results.md"), &fresh).unwrap();
            continue;
        }
        if fresh != page {
            stale.push(format!(
                "{r}:\n{}",
                tile_ir::fixture::line_diff(&page, &fresh)
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "results.md differs from its rendering:\n{}",
        stale.join("\n")
    );
}
