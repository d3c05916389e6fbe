//! Source snapshots: for every `tests/programs/**/*.tile` fixture, the
//! program after the planner's rewrites and the generated C, CUDA and
//! WGSL, as `tests/snapshots/<same path>.snap`, so every rewrite and
//! printer is pinned byte for byte. The CUDA and WGSL preludes (the same
//! for every program) are pinned once, in `tests/snapshots/cuda_prelude.cu`
//! and `tests/snapshots/wgsl_prelude.wgsl`. `TILE_BLESS=1`
//! rewrites the snapshots; a mismatch prints a diff. A second test proves
//! the snapshots would notice: skipping any one rewrite changes at least
//! one of them.

use std::path::{Path, PathBuf};
use tile_ir::fixture;
use tile_plan::{compile_skipping, Options, KERNEL_REWRITES, REWRITES};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixtures() -> Vec<PathBuf> {
    fixture::tile_files(&[root().join("tests/programs")])
}

const PRELUDE_MARK: &str = "/* (the CUDA prelude: tests/snapshots/cuda_prelude.cu) */\n";
const WGSL_PRELUDE_MARK: &str = "/* (the WGSL prelude: tests/snapshots/wgsl_prelude.wgsl) */\n";

/// A fixture's snapshot, the rewrite `skip` left out of the planner.
fn snapshot(path: &Path, skip: Option<&str>) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let program = tile_ir::parse_program(&text).map_err(|d| format!("parse: {d}"))?;
    let plan = compile_skipping(&program, &Options::default(), skip).map_err(|e| e.to_string())?;
    let c = tile_cpu::emit_c(&plan, &tile_cpu::CpuOptions::default())
        .unwrap_or_else(|e| format!("error: {e}\n"));
    let cuda = tile_cuda::emit_cuda(&plan)
        .map(|s| s.replacen(tile_cuda::PRELUDE, PRELUDE_MARK, 1))
        .unwrap_or_else(|e| format!("error: {e}\n"));
    let wgsl = tile_wgpu::emit_wgsl(&plan)
        .map(|s| s.replacen(&tile_wgpu::prelude(), WGSL_PRELUDE_MARK, 1))
        .unwrap_or_else(|e| format!("error: {e}\n"));
    Ok(format!(
        "== simplified ==\n{}\n== c ==\n{c}\n== cuda ==\n{cuda}\n== wgsl ==\n{wgsl}",
        plan.program
    ))
}

/// Compares `actual` with the file at `path`, or writes it when blessing.
fn compare(path: &Path, actual: &str, bless: bool) -> Result<(), String> {
    if bless {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        return std::fs::write(path, actual).map_err(|e| e.to_string());
    }
    let expected = std::fs::read_to_string(path).map_err(|_| {
        format!(
            "{}: no snapshot (run with TILE_BLESS=1 to write it)",
            path.display()
        )
    })?;
    if expected == actual {
        Ok(())
    } else {
        Err(format!(
            "{}: differs (TILE_BLESS=1 rewrites it if the change is intended)\n{}",
            path.display(),
            fixture::line_diff(&expected, actual)
        ))
    }
}

fn snapshot_path(fixture: &Path) -> PathBuf {
    let rel = fixture
        .strip_prefix(root().join("tests/programs"))
        .expect("fixtures live in tests/programs");
    root()
        .join("tests/snapshots")
        .join(rel)
        .with_extension("snap")
}

#[test]
fn every_fixture_matches_its_source_snapshot() {
    let bless = std::env::var("TILE_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    let prelude = root().join("tests/snapshots/cuda_prelude.cu");
    if let Err(e) = compare(&prelude, tile_cuda::PRELUDE, bless) {
        failures.push(e);
    }
    let wgsl_prelude = root().join("tests/snapshots/wgsl_prelude.wgsl");
    if let Err(e) = compare(&wgsl_prelude, &tile_wgpu::prelude(), bless) {
        failures.push(e);
    }
    let files = fixtures();
    assert!(!files.is_empty(), "no fixtures found");
    let mut expected: Vec<PathBuf> = Vec::new();
    for f in &files {
        let path = snapshot_path(f);
        let result = snapshot(f, None).and_then(|s| compare(&path, &s, bless));
        if let Err(e) = result {
            failures.push(format!("{}: {e}", f.display()));
        }
        expected.push(path);
    }
    // A snapshot whose fixture is gone is stale.
    let mut stale = Vec::new();
    let mut dirs = vec![root().join("tests/snapshots")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "snap") && !expected.contains(&p) {
                stale.push(p);
            }
        }
    }
    for p in stale {
        if bless {
            let _ = std::fs::remove_file(&p);
        } else {
            failures.push(format!("{}: no fixture for this snapshot", p.display()));
        }
    }
    println!("{} source snapshots checked", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn skipping_any_rewrite_changes_some_snapshot() {
    let files = fixtures();
    let base: Vec<Result<String, String>> = files.iter().map(|f| snapshot(f, None)).collect();
    let names = REWRITES
        .iter()
        .map(|(n, _)| *n)
        .chain(KERNEL_REWRITES.iter().copied());
    for name in names {
        let changed = files
            .iter()
            .zip(&base)
            .filter(|(f, b)| snapshot(f, Some(name)) != **b)
            .count();
        println!("without {name}: {changed} snapshots change");
        assert!(
            changed > 0,
            "skipping {name} changes no snapshot: no fixture pins what it does"
        );
    }
}
