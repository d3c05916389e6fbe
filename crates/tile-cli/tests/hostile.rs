//! Hostile input, as users (or attackers) would give it: every fixture in
//! `tests/hostile/` runs through the `tile` command on every target (the
//! CUDA one where a GPU is present) and must end as its header says: exit
//! 1 with the expected located message and no output directory, or a
//! successful run. Headers:
//!
//! - `# array: NAME=DTYPE[SHAPE]` writes a `.npy` (small integers), with
//!   `!header` only the header (a file whose data is missing);
//! - `# args: ...` the command's arguments, `@NAME` naming an array's file;
//! - `# command: check|plan` (default: `run`, on interp, cpu and cuda);
//! - `# error: TEXT` expected in the message, or `# ok`.
//!
//! The cases the fixture format cannot hold (a 25,000-term expression,
//! invalid UTF-8, an output path that is a file) are tests below.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tile_ir::{npy, Array, ArrayData};

/// The `tile` binary: this build's, or `$TILE_BIN` (the H200 script runs
/// this test from a copied binary). A run that has not ended after
/// [`HANG_SECONDS`] is killed and fails the test: a hang is a failure, not
/// a wait.
fn tile(args: &[String]) -> Output {
    let bin = std::env::var_os("TILE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tile")));
    let mut child = Command::new(bin)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    // Read both pipes while waiting, so a chatty run cannot block on a
    // full pipe.
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let reader = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out, err) = (reader(Box::new(out)), reader(Box::new(err)));
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(HANG_SECONDS) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`tile {}` still running after {HANG_SECONDS} s: killed",
                args.join(" ")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// How long one `tile` run of this test may take (the 20,000-binding chain
/// plans in well under a second; a GPU kernel whose threads wait for one
/// that left never ends).
const HANG_SECONDS: u64 = 120;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tile-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes the array a header line describes; returns its name and path.
fn array(dir: &Path, spec: &str) -> (String, String) {
    let (name, rest) = spec.split_once('=').expect("NAME=DTYPE[SHAPE]");
    let (dtype, rest) = rest.split_once('[').expect("DTYPE[SHAPE]");
    let (shape, flags) = rest.split_once(']').expect("]");
    let shape: Vec<usize> = shape
        .split(',')
        .map(|d| d.trim().parse().unwrap())
        .collect();
    let path = dir.join(format!("{name}.npy"));
    let bytes = if flags == "!header" {
        let descr = if dtype == "i32" { "<i4" } else { "<f4" };
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let header = format!(
            "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({},), }}\n",
            dims.join(", ")
        );
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(header.len() as u16).to_le_bytes());
        b.extend_from_slice(header.as_bytes());
        b
    } else {
        let n: usize = shape.iter().product();
        let data = match dtype {
            "i32" => ArrayData::I32((0..n as i32).collect()),
            _ => ArrayData::F32((0..n).map(|i| i as f32).collect()),
        };
        npy::write_npy(&Array::new(shape, data).unwrap())
    };
    std::fs::write(&path, bytes).unwrap();
    (name.to_string(), path.display().to_string())
}

/// Whether `tile run --target cuda` can run here (else the reason).
fn cuda_missing() -> Option<String> {
    let dir = scratch("probe");
    let f = dir.join("p.tile");
    std::fs::write(
        &f,
        "program p(y: out f32[N]) { for i in 0..N { y[i] = 1.0 } }",
    )
    .unwrap();
    let o = tile(&[
        "run".into(),
        f.display().to_string(),
        "--target".into(),
        "cuda".into(),
        "--bind".into(),
        "N=3".into(),
        "--out-dir".into(),
        dir.join("o").display().to_string(),
    ]);
    (!o.status.success()).then(|| String::from_utf8_lossy(&o.stderr).trim().to_string())
}

#[test]
fn every_hostile_fixture_ends_as_its_header_says() {
    let root = std::env::var_os("TILE_SOURCE_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .join("tests/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tile"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "fixtures missing in {}", root.display());
    let cuda = cuda_missing();
    if let Some(why) = &cuda {
        println!("SKIPPED the cuda target of tests/hostile: {why}");
    }
    let mut runs = 0;
    for file in &files {
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        let dir = scratch(&stem);
        let text = std::fs::read_to_string(file).unwrap();
        let header = |key: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(&format!("# {key}:")))
                .map(|v| v.trim().to_string())
                .collect()
        };
        let arrays: Vec<(String, String)> =
            header("array").iter().map(|s| array(&dir, s)).collect();
        let mut args: Vec<String> = header("args")
            .join(" ")
            .split_whitespace()
            .map(|a| {
                let mut a = a.to_string();
                for (name, path) in &arrays {
                    a = a.replace(&format!("@{name}"), path);
                }
                a
            })
            .collect();
        let expect_ok = text.lines().any(|l| l.trim() == "# ok");
        let error = header("error").first().cloned();
        assert!(
            expect_ok != error.is_some(),
            "{stem}: needs `# ok` or `# error:`"
        );
        let command = header("command")
            .first()
            .cloned()
            .unwrap_or_else(|| "run".into());
        let targets: Vec<&str> = if command == "run" {
            let mut t = vec!["interp", "cpu"];
            if cuda.is_none() {
                t.push("cuda");
            }
            t
        } else {
            vec![""]
        };
        for target in targets {
            let out = dir.join(format!("out-{target}"));
            let mut full = vec![command.clone(), file.display().to_string()];
            if command == "run" {
                full.extend(["--target".into(), target.into()]);
                full.extend(["--out-dir".into(), out.display().to_string()]);
            }
            full.append(&mut args.clone());
            let o = tile(&full);
            let stderr = String::from_utf8_lossy(&o.stderr).to_string();
            runs += 1;
            if expect_ok {
                assert!(o.status.success(), "{stem} ({target}): {stderr}");
                continue;
            }
            assert_eq!(o.status.code(), Some(1), "{stem} ({target}): {stderr}");
            let want = error.as_deref().unwrap_or_default();
            assert!(
                stderr.contains(want),
                "{stem} ({target}): wanted `{want}`, got:\n{stderr}"
            );
            // A located expectation (`LINE:COL: error: ...`) must follow
            // this file's name.
            let located = want
                .split(':')
                .take(2)
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            if located {
                let at = format!("{}:{want}", file.display());
                assert!(
                    stderr.contains(&at),
                    "{stem} ({target}): wanted `{at}`, got:\n{stderr}"
                );
            }
            assert!(
                !out.exists(),
                "{stem} ({target}): the output directory was created"
            );
            let left: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .filter(|n| n.contains("staging"))
                .collect();
            assert!(
                left.is_empty(),
                "{stem} ({target}): staging left behind: {left:?}"
            );
        }
        args.clear();
    }
    println!("{} hostile fixtures, {runs} runs", files.len());
}

#[test]
fn a_25000_term_expression_is_an_error_not_a_stack_overflow() {
    let dir = scratch("long");
    let body = format!(
        "program p(y: out f32[N]) {{\n  for i in 0..N {{\n    y[i] = 1.0{}\n  }}\n}}\n",
        " + 1.0".repeat(25_000)
    );
    let f = dir.join("long.tile");
    std::fs::write(&f, body).unwrap();
    let o = tile(&["check".into(), f.display().to_string()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(":3:") && stderr.contains("nested deeper than 200 levels"),
        "{stderr}"
    );
}

#[test]
fn twenty_thousand_chained_bindings_plan() {
    let dir = scratch("chain");
    let mut body = String::from(
        "program p(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    a0 = x[i]\n",
    );
    for k in 1..20_000 {
        body.push_str(&format!("    a{k} = a{} * 0.5 + x[i]\n", k - 1));
    }
    body.push_str("    y[i] = a19999\n  }\n}\n");
    let f = dir.join("chain.tile");
    std::fs::write(&f, body).unwrap();
    let o = tile(&["plan".into(), f.display().to_string()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("k0 element_grid"));
}

#[test]
fn invalid_utf8_is_located() {
    let dir = scratch("utf8");
    let f = dir.join("bad.tile");
    std::fs::write(
        &f,
        b"program p(y: out f32[N]) {\n  for i in 0..N { y[i] = 1.0 } \xff\n}\n",
    )
    .unwrap();
    let o = tile(&["check".into(), f.display().to_string()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bad.tile:2:32: error: invalid UTF-8 (byte 0xff)"),
        "{stderr}"
    );
}

#[test]
fn an_output_path_that_is_a_file_fails_before_any_work() {
    let dir = scratch("outfile");
    let f = dir.join("p.tile");
    // The division by zero would fail the run: the path must be found first.
    std::fs::write(
        &f,
        "program p(y: out f32[N]) { for i in 0..N { y[i / (i - i)] = 1.0 } }",
    )
    .unwrap();
    let out = dir.join("taken");
    std::fs::write(&out, "a file").unwrap();
    for target in ["interp", "cpu"] {
        let o = tile(&[
            "run".into(),
            f.display().to_string(),
            "--target".into(),
            target.into(),
            "--bind".into(),
            "N=3".into(),
            "--out-dir".into(),
            out.display().to_string(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("exists and is not a directory"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "a file");
    }
}
