//! A `tile` call either succeeds or changes nothing (issue 29): program
//! and array files must be regular files read with a bound, outputs are
//! committed as a set, a malformed `TILE_MAX_MEMORY` is an error, `.npy`
//! headers NumPy refuses are refused, and a signal leaves no staging
//! directory behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tile_ir::{npy, Array, DType};

fn tile(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tile"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tile-trust-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .display()
        .to_string()
}

fn save(dir: &Path, name: &str, a: &Array) -> String {
    let p = dir.join(name);
    std::fs::write(&p, npy::write_npy(a)).unwrap();
    p.display().to_string()
}

/// Runs `tile` with a deadline: a call that blocks (a FIFO opened for
/// reading) fails the test instead of hanging it.
fn tile_within(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tile"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("`tile {args:?}` did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn program_and_array_files_must_be_regular_files() {
    let d = scratch("regular");
    let fifo = d.join("p.tile");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let limit = Duration::from_secs(20);
    let mut cases = vec![vec!["check".to_string(), "/dev/zero".into()]];
    if made.is_ok_and(|s| s.success()) {
        cases.push(vec!["check".into(), fifo.display().to_string()]);
        cases.push(vec![
            "run".into(),
            example("sigmoid_pair.tile"),
            "--target".into(),
            "interp".into(),
            "--input".into(),
            format!("x={}", fifo.display()),
            "--out-dir".into(),
            d.join("out").display().to_string(),
        ]);
    } else {
        eprintln!("SKIPPED the FIFO cases: mkfifo is not available");
    }
    cases.push(vec!["check".into(), d.display().to_string()]);
    for args in cases {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let o = tile_within(&args, limit);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("not a regular file"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    assert!(!d.join("out").exists());
}

#[test]
fn outputs_are_committed_as_a_set() {
    let d = scratch("set");
    let x = save(
        &d,
        "x.npy",
        &Array::from_f64(DType::F32, &[2, 3], &[0.25; 6]),
    );
    let out = d.join("out");
    std::fs::create_dir_all(out.join("grad.npy")).unwrap();
    std::fs::write(out.join("value.npy"), b"old").unwrap();
    let run = |target: &str| {
        tile(&[
            "run",
            &example("sigmoid_pair.tile"),
            "--target",
            target,
            "--input",
            &format!("x={x}"),
            "--out-dir",
            out.to_str().unwrap(),
        ])
    };
    for target in ["interp", "cpu"] {
        let o = run(target);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("is not a regular file"),
            "{}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(out.join("value.npy")).unwrap(), b"old");
    }
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "staging left behind: {left:?}");
    std::fs::remove_dir(out.join("grad.npy")).unwrap();
    let o = run("cpu");
    assert!(o.status.success(), "{}", stderr(&o));
    let v = npy::read_npy(&std::fs::read(out.join("value.npy")).unwrap()).unwrap();
    let want = 1.0 / (1.0 + (-0.25f64).exp());
    assert!((v.to_f64()[0] - want).abs() < 1e-6);
    assert!(out.join("grad.npy").is_file());
}

#[test]
fn a_malformed_memory_ceiling_is_an_error() {
    let d = scratch("ceiling");
    let x = save(
        &d,
        "x.npy",
        &Array::from_f64(DType::F32, &[2, 3], &[0.25; 6]),
    );
    for bad in ["abc", "1Gx", "-1", "0", ""] {
        let o = Command::new(env!("CARGO_BIN_EXE_tile"))
            .args([
                "run",
                &example("sigmoid_pair.tile"),
                "--target",
                "cpu",
                "--input",
                &format!("x={x}"),
                "--out-dir",
                d.join("out").to_str().unwrap(),
            ])
            .env("TILE_MAX_MEMORY", bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "TILE_MAX_MEMORY={bad:?}");
        assert!(
            stderr(&o).contains("is not a byte count"),
            "TILE_MAX_MEMORY={bad:?}: {}",
            stderr(&o)
        );
        assert!(!d.join("out").exists());
    }
}

#[test]
fn npy_headers_numpy_refuses_are_refused() {
    let d = scratch("npy");
    let file = |header: &str| {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(&[0u8; 24]);
        let p = d.join("x.npy");
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    };
    for header in [
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (6,), }\n",
        "{'descr': '<f4', 'fortran_order': 'False', 'shape': (2, 3), }\n",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ((2, 3),), }\n",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk\n",
    ] {
        let x = file(header);
        let o = tile(&[
            "run",
            &example("sigmoid_pair.tile"),
            "--target",
            "interp",
            "--input",
            &format!("x={x}"),
            "--out-dir",
            d.join("out").to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{header}");
        assert!(stderr(&o).contains("x.npy: error:"), "{}", stderr(&o));
        assert!(!d.join("out").exists());
    }
}

/// A run stopped by SIGTERM (or Ctrl-C) after its staging directory was
/// made leaves no staging directory: the command's handler removes it.
#[test]
fn a_signal_leaves_no_staging_directory() {
    let d = scratch("signal");
    let prog = d.join("slow.tile");
    std::fs::write(
        &prog,
        "program slow(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = sum(j in 0..N: sum(k in 0..N: x[j] * x[k]))\n  }\n}\n",
    )
    .unwrap();
    let x = save(
        &d,
        "x.npy",
        &Array::from_f64(DType::F32, &[4000], &[0.5; 4000]),
    );
    for sig in ["-TERM", "-INT"] {
        let out = d.join("out");
        let mut child = Command::new(env!("CARGO_BIN_EXE_tile"))
            .args([
                "run",
                prog.to_str().unwrap(),
                "--target",
                "interp",
                "--input",
                &format!("x={x}"),
                "--out-dir",
                out.to_str().unwrap(),
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let staging = || {
            std::fs::read_dir(&d)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .contains("tile-staging")
                })
                .count()
        };
        let start = Instant::now();
        while staging() == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no staging directory appeared"
            );
            assert!(child.try_wait().unwrap().is_none(), "the run ended early");
            std::thread::sleep(Duration::from_millis(5));
        }
        let killed = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert_eq!(staging(), 0, "{sig}: the staging directory was left behind");
        assert!(!out.exists());
    }
}
