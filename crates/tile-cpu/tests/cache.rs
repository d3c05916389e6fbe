//! The kernel cache is never trusted: truncated, damaged and foreign
//! entries are detected, removed and rebuilt, and temporaries a killed
//! process left behind are cleaned up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use tile_cpu::{CpuModule, CpuOptions};
use tile_ir::{Array, DType, Sizes};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tile-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn opts(cache: &Path) -> CpuOptions {
    CpuOptions {
        cache: true,
        cache_dir: Some(cache.to_path_buf()),
        threads: Some(1),
        ..CpuOptions::default()
    }
}

fn module(text: &str, cache: &Path) -> CpuModule {
    let program = tile_ir::parse_program(text).unwrap();
    let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
    tile_cpu::compile(&plan, &opts(cache)).unwrap()
}

const ADD: &str =
    "program add(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] + 1.0 } }";
const MUL: &str =
    "program mul(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] * 3.0 } }";

/// Runs `m` on [1, 2, 3] and returns `y`.
fn run(m: &CpuModule) -> Vec<f64> {
    let mut arrays = BTreeMap::from([
        (
            "x".to_string(),
            Array::from_f64(DType::F32, &[3], &[1.0, 2.0, 3.0]),
        ),
        ("y".to_string(), Array::zeros(DType::F32, &[3])),
    ]);
    m.run(&mut arrays, &Sizes::new()).unwrap();
    arrays["y"].to_f64()
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tso"))
        .collect();
    v.sort();
    v
}

#[test]
fn damaged_entries_are_rebuilt() {
    let cache = dir("damaged");
    assert_eq!(run(&module(ADD, &cache)), [2.0, 3.0, 4.0]);
    let [entry] = entries(&cache).try_into().unwrap();
    let whole = std::fs::read(&entry).unwrap();
    // Truncated (a process killed mid-write with an older writer, a full
    // disk): once every later run died with SIGBUS.
    std::fs::write(&entry, &whole[..whole.len() / 2]).unwrap();
    assert_eq!(run(&module(ADD, &cache)), [2.0, 3.0, 4.0]);
    assert_eq!(std::fs::read(&entry).unwrap(), whole, "rebuilt in place");
    // One flipped byte in the object.
    let mut flipped = whole.clone();
    let last = flipped.len() - 100;
    flipped[last] ^= 0x40;
    std::fs::write(&entry, &flipped).unwrap();
    assert_eq!(run(&module(ADD, &cache)), [2.0, 3.0, 4.0]);
    assert_eq!(std::fs::read(&entry).unwrap(), whole);
    // Not an entry at all.
    std::fs::write(&entry, b"\x7fELF garbage").unwrap();
    assert_eq!(run(&module(ADD, &cache)), [2.0, 3.0, 4.0]);
    assert_eq!(std::fs::read(&entry).unwrap(), whole);
}

#[test]
fn a_foreign_entry_is_not_loaded() {
    let cache = dir("foreign");
    run(&module(ADD, &cache));
    let [add_entry] = entries(&cache).try_into().unwrap();
    run(&module(MUL, &cache));
    let mul_entry = entries(&cache)
        .into_iter()
        .find(|p| *p != add_entry)
        .unwrap();
    // A valid object of another program under ADD's key: once it silently
    // gave MUL's results.
    std::fs::copy(&mul_entry, &add_entry).unwrap();
    assert_eq!(run(&module(ADD, &cache)), [2.0, 3.0, 4.0]);
    assert_eq!(run(&module(MUL, &cache)), [3.0, 6.0, 9.0]);
}

#[test]
fn stale_temporaries_are_removed_and_fresh_ones_kept() {
    let cache = dir("stale");
    let stale = cache.join("0123.tso.tmp-99999-0");
    let fresh = cache.join("4567.tso.tmp-99999-1");
    for p in [&stale, &fresh] {
        std::fs::write(p, b"partial").unwrap();
    }
    let old = SystemTime::now() - Duration::from_secs(2 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(old)
        .unwrap();
    run(&module(ADD, &cache));
    assert!(!stale.exists(), "a temporary two hours old is a left-over");
    assert!(
        fresh.exists(),
        "a recent temporary may belong to a running build"
    );
}

#[test]
fn a_cache_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let cache = dir("shared");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(run(&module(ADD, &cache)), [2.0, 3.0, 4.0]);
    assert!(
        entries(&cache).is_empty(),
        "nothing is read from or written to it"
    );
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    run(&module(ADD, &cache));
    assert_eq!(entries(&cache).len(), 1);
}
