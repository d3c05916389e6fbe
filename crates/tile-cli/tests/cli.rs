//! The `tile` command as users run it: outputs, JSON plans, and errors with
//! locations, non-zero exits and no partial output directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tile_ir::{npy, Array, DType};

fn tile(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tile"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tile-cli-{}-{name}", std::process::id()));
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

fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

fn save(dir: &Path, name: &str, a: &Array) -> String {
    let p = dir.join(name);
    std::fs::write(&p, npy::write_npy(a)).unwrap();
    p.display().to_string()
}

#[test]
fn plan_json_records_each_kernel_rewrite() {
    let fixture = |f: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/programs")
            .join(f)
            .display()
            .to_string()
    };
    let plan = |f: &str| -> serde_json::Value {
        let o = tile(&["plan", "--json", &fixture(f)]);
        assert!(o.status.success(), "{:?}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // softmax caches its exponentials; col_sum runs in blocks of columns
    // and matmul its inner loop in blocks of iterations; row_lse is
    // rewritten by none.
    let softmax = plan("controls/softmax.tile");
    assert_eq!(softmax["kernels"][0]["caches"][0]["scratch"], "__scr0");
    assert_eq!(
        softmax["kernels"][0]["interchanged"],
        serde_json::Value::Null
    );
    let col = plan("reductions/col_sum.tile");
    assert_eq!(
        col["kernels"][0]["interchanged"],
        serde_json::json!({"block": 2048, "loops": [], "scratch": ["__cacc0"], "sweeps": []})
    );
    assert_eq!(col["kernels"][0]["caches"], serde_json::json!([]));
    let matmul = plan("matrix/matmul.tile");
    assert_eq!(
        matmul["kernels"][0]["interchanged"],
        serde_json::json!({
            "block": 2048,
            "loops": ["the loop over `j` at line 10"],
            "scratch": ["__cacc0"],
            "sweeps": []
        })
    );
    // Four sibling reductions share one sweep over the rows per block.
    let siblings = plan("reductions/col_siblings.tile");
    assert_eq!(
        siblings["kernels"][0]["interchanged"]["sweeps"],
        serde_json::json!([4])
    );
    let lse = plan("reductions/row_lse.tile");
    assert_eq!(lse["kernels"][0]["caches"], serde_json::json!([]));
    assert_eq!(lse["kernels"][0]["interchanged"], serde_json::Value::Null);
}

#[test]
fn plan_json_shows_one_fused_kernel_and_two_split_ones() {
    for f in ["sigmoid_pair.tile", "gelu_pair.tile"] {
        let o = tile(&["plan", "--json", &example(f)]);
        assert!(o.status.success(), "{:?}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["kernels"].as_array().unwrap().len(), 1);
        assert_eq!(v["kernels"][0]["mapping"], "element_grid");
        assert_eq!(
            v["kernels"][0]["stores"],
            serde_json::json!(["value", "grad"])
        );
        assert_eq!(v["fallbacks"], serde_json::json!([]));
        assert_eq!(v["unused_inputs"], serde_json::json!([]));
        let o = tile(&["plan", "--json", "--fusion", "off", &example(f)]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let maps: Vec<&str> = v["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["mapping"].as_str().unwrap())
            .collect();
        assert_eq!(maps, ["split", "split"]);
    }
}

#[test]
fn check_prints_the_normalised_program() {
    let d = scratch("check");
    let f = write(
        &d,
        "p.tile",
        "program p(x: in f32[0..N], y: out f32[N]) { for i in 0..N { y[i] = ((x[i])) * 2.0 } }",
    );
    let o = tile(&["check", &f]);
    assert!(o.status.success());
    assert_eq!(
        text(&o).0,
        "program p(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i] * 2.0\n  }\n}\n"
    );
}

#[test]
fn parse_errors_give_file_line_and_column() {
    let d = scratch("parse");
    let f = write(
        &d,
        "bad.tile",
        "program p(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i] +\n  }\n}\n",
    );
    let o = tile(&["check", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o).1;
    assert!(
        err.starts_with(&format!("{f}:3:18: error: expected an expression")),
        "{err}"
    );
}

#[test]
fn verifier_errors_name_the_culprit() {
    let d = scratch("verify");
    let f = write(
        &d,
        "bad.tile",
        "program p(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    x[i] = y[i]\n  }\n}\n",
    );
    for cmd in ["check", "plan"] {
        let o = tile(&[cmd, &f]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            text(&o).1.contains(&format!(
                "{f}:3:5: error: store to `x`, which is an `in` parameter"
            )),
            "{:?}",
            text(&o)
        );
    }
}

#[test]
fn several_programs_need_a_choice() {
    let d = scratch("multi");
    let f = write(
        &d,
        "two.tile",
        "program a(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }\nprogram b(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = -x[i] } }\n",
    );
    let o = tile(&["plan", &f]);
    assert!(
        text(&o).1.contains("choose one with --program NAME"),
        "{:?}",
        text(&o)
    );
    let o = tile(&["plan", &f, "--program", "b"]);
    assert!(o.status.success());
    assert!(text(&o).0.contains("program b: 1 kernel"));
}

#[test]
fn run_writes_outputs_that_match_fp64_formulas() {
    let d = scratch("run");
    let n = 37 * 15;
    let xs: Vec<f64> = (0..n)
        .map(|k| tile_ir::fixture::input_value(k, 0))
        .collect();
    let x = save(&d, "x.npy", &Array::from_f64(DType::F32, &[37, 15], &xs));
    let out = d.join("out");
    for fusion in ["on", "off"] {
        let o = tile(&[
            "run",
            &example("sigmoid_pair.tile"),
            "--target",
            "interp",
            "--input",
            &format!("x={x}"),
            "--fusion",
            fusion,
            "--out-dir",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{:?}", text(&o));
        let value = npy::read_npy(&std::fs::read(out.join("value.npy")).unwrap()).unwrap();
        let grad = npy::read_npy(&std::fs::read(out.join("grad.npy")).unwrap()).unwrap();
        assert_eq!(value.shape(), [37, 15]);
        for (k, &x) in xs.iter().enumerate() {
            let s = 1.0 / (1.0 + (-(x as f32 as f64)).exp());
            assert!((value.get_f64(k) - s).abs() <= 2e-6 + 2e-5 * s.abs());
            assert!((grad.get_f64(k) - s * (1.0 - s)).abs() <= 2e-6 + 2e-5 * (s * (1.0 - s)).abs());
        }
    }
}

#[test]
fn run_rejects_bad_arguments_before_writing_anything() {
    let d = scratch("badrun");
    let good = save(
        &d,
        "good.npy",
        &Array::from_f64(DType::F32, &[2, 3], &[0.5; 6]),
    );
    let wrong_dtype = save(
        &d,
        "f64.npy",
        &Array::from_f64(DType::F64, &[2, 3], &[0.5; 6]),
    );
    let wrong_shape = save(
        &d,
        "init.npy",
        &Array::from_f64(DType::F32, &[3, 2], &[0.5; 6]),
    );
    let junk = write(&d, "junk.npy", "not an array");
    let out = d.join("out");
    let o = out.to_str().unwrap();
    let p = example("sigmoid_pair.tile");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![], "missing input `x`: pass --input x=FILE.npy"),
        (
            vec!["--input".into(), format!("x={wrong_dtype}")],
            "argument `x` has dtype f64, but the parameter is f32",
        ),
        (
            vec![
                "--input".into(),
                format!("x={good}"),
                "--init".into(),
                format!("value={wrong_shape}"),
            ],
            "argument `value` has shape [3, 2]",
        ),
        (
            vec!["--input".into(), format!("x={junk}")],
            "not a .npy file",
        ),
        (
            vec![
                "--input".into(),
                format!("x={}", d.join("absent.npy").display()),
            ],
            "cannot read",
        ),
        (
            vec!["--input".into(), format!("q={good}")],
            "the program has no parameter `q`",
        ),
        (
            vec!["--input".into(), format!("value={good}")],
            "is written by the program; give its initial content with --init",
        ),
        (
            vec![
                "--input".into(),
                format!("x={good}"),
                "--bind".into(),
                "K=3".into(),
            ],
            "the program has no size symbol `K`",
        ),
    ];
    for (extra, want) in cases {
        let mut args: Vec<String> = vec!["run".into(), p.clone(), "--out-dir".into(), o.into()];
        args.extend(extra);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let r = tile(&args);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = text(&r).1;
        assert!(err.contains(want), "{args:?}: wanted `{want}`, got `{err}`");
        assert!(
            !out.exists(),
            "a failed run must not create the output directory"
        );
    }
}

#[test]
fn run_binds_symbols_no_shape_determines() {
    let d = scratch("bind");
    let f = write(
        &d,
        "iota.tile",
        "program iota(y: out f32[N]) {\n  for i in 0..N {\n    y[i] = f32(i) * 0.5\n  }\n}\n",
    );
    let out = d.join("o");
    let r = tile(&["run", &f, "--out-dir", out.to_str().unwrap()]);
    assert!(
        text(&r).1.contains("size symbol `N` is not determined"),
        "{:?}",
        text(&r)
    );
    let r = tile(&[
        "run",
        &f,
        "--bind",
        "N=4",
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{:?}", text(&r));
    let y = npy::read_npy(&std::fs::read(out.join("y.npy")).unwrap()).unwrap();
    assert_eq!(y.to_f64(), [0.0, 0.5, 1.0, 1.5]);
}

#[test]
fn bench_runs_a_users_own_suite_against_the_interpreter() {
    let d = scratch("my-suite");
    write(
        &d,
        "swish.tile",
        "program swish(x: in f32[M, N], w: in f32[N], y: out f32[M, N], s: out f32[M]) {\n  for i in 0..M {\n    s[i] = sum(j in 0..N: x[i, j] * w[j])\n    for j in 0..N {\n      y[i, j] = x[i, j] * sigmoid(x[i, j] * w[j])\n    }\n  }\n}\n",
    );
    let suite = write(
        &d,
        "suite.json",
        r#"{"graphs": [{"graph": "swish", "program": "swish.tile", "group": "mine", "outputs": ["y", "s"], "atol": 1e-5, "rtol": 1e-4, "shapes": [[3, 37]]}]}"#,
    );
    let out = d.join("out");
    let o = tile(&[
        "bench",
        "--suite",
        &suite,
        "--cases",
        "mine",
        "--peers",
        "none",
        "--quick",
        "--out",
        &out.display().to_string(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let rows = results["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        let outs = r["validation"]["outputs"].as_array().unwrap();
        // The copy entry checks its one output exactly.
        let want = if r["variant"] == "copy" { 1 } else { 2 };
        assert_eq!(outs.len(), want, "{r}");
        assert!(
            outs.iter()
                .all(|o| o["pass"] == true && o["count"].as_u64().unwrap() > 0),
            "{r}"
        );
    }
    let audit = tile(&["audit", &out.join("results.json").display().to_string()]);
    assert!(audit.status.success(), "{}", text(&audit).0);
}

#[test]
fn bench_file_starts_inout_state_alike_and_takes_any_size_names() {
    let d = scratch("bench-file-inout");
    // Adam updates three inout arrays: validated from the same start as
    // the FP64 reference.
    let adam = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/programs/neural/adam.tile")
        .display()
        .to_string();
    // Sizes named T and H; the shape gives them in order.
    let apart = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/programs/legality/apart.tile")
        .display()
        .to_string();
    for (file, shape, case) in [(&adam, "37", "adam_1x37"), (&apart, "3x5", "apart_3x5")] {
        let out = d.join(case);
        let o = tile(&[
            "bench",
            file,
            "--shape",
            shape,
            "--quick",
            "--out",
            &out.display().to_string(),
        ]);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stdout}\n{stderr}");
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        let rows = results["rows"].as_array().unwrap();
        for entry in ["fused", "split"] {
            assert!(
                rows.iter()
                    .any(|r| r["variant"] == entry && r["status"] == "ok"),
                "{case} {entry}: {stdout}"
            );
        }
    }
    // A shape that does not match the free symbols is refused, naming them.
    let o = tile(&[
        "bench",
        &apart,
        "--shape",
        "7",
        "--out",
        &d.join("x").display().to_string(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("(T, H)"), "{}", text(&o).1);
    // A failed validation says which output, by how much, against what.
    let strict = d.join("strict");
    let file = write(
        &d,
        "e.tile",
        "program e(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = exp(x[i]) * 1.1\n  }\n}\n",
    );
    let o = tile(&[
        "bench",
        &file,
        "--shape",
        "1000",
        "--atol",
        "0",
        "--rtol",
        "0",
        "--quick",
        "--out",
        &strict.display().to_string(),
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let md = std::fs::read_to_string(strict.join("results.md")).unwrap();
    assert!(
        md.contains("validation failed: `y` over 1000 elements: max abs error"),
        "{md}"
    );
}

#[test]
fn bench_runs_one_program_file_with_a_copy_of_its_bytes() {
    let d = scratch("bench-file");
    let file = write(
        &d,
        "cols.tile",
        "program other(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i]\n  }\n}\nprogram cols(x: in f32[M, N], y: out f32[N]) {\n  for j in 0..N {\n    y[j] = sum(i in 0..M: x[i, j])\n  }\n}\n",
    );
    // Every mistake is reported before any work, and writes nothing.
    let out = d.join("out");
    let o_ = out.display().to_string();
    for (args, says) in [
        (
            vec!["bench", &file, "--program", "cols", "--quick", "--out", &o_],
            "--shape 4096x4096",
        ),
        (
            vec![
                "bench",
                &file,
                "--program",
                "cols",
                "--shape",
                "3x",
                "--out",
                &o_,
            ],
            "write AxB",
        ),
        (
            vec!["bench", &file, "--shape", "3x5", "--out", &o_],
            "choose one with --program",
        ),
        (
            vec![
                "bench",
                &file,
                "--program",
                "cols",
                "--shape",
                "3x5",
                "--cases",
                "seed",
                "--out",
                &o_,
            ],
            "not both",
        ),
        (
            vec!["bench", "--shape", "3x5", "--out", &o_],
            "go with a .tile FILE",
        ),
    ] {
        let o = tile(&args);
        let (stdout, stderr) = text(&o);
        assert!(!o.status.success(), "{args:?}: {stdout}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    let o = tile(&[
        "bench",
        &file,
        "--program",
        "cols",
        "--shape",
        "5x7,1x3",
        "--quick",
        "--out",
        &o_,
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        results["meta"]["cases"],
        serde_json::json!(["cols_5x7", "cols_1x3"])
    );
    // 5x7: x read (35 floats) and y written (7 floats).
    assert_eq!(results["meta"]["moved_bytes"]["cols_5x7"], 168);
    let rows = results["rows"].as_array().unwrap();
    for entry in ["fused", "split", "copy"] {
        assert!(
            rows.iter()
                .any(|r| r["variant"] == entry && r["status"] == "ok"),
            "{entry}"
        );
    }
    assert!(
        rows.iter().all(|r| r["framework"] == "tile"),
        "no peers by default"
    );
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(
        md.contains("| GB/s |") && md.contains("Entries:") && md.contains("- `copy`:"),
        "{md}"
    );
    let audit = tile(&["audit", &out.join("results.json").display().to_string()]);
    assert!(audit.status.success(), "{}", text(&audit).0);
}

/// `tile grad` prints the derivative program (the fixture
/// `tests/programs/derivatives/softmax_grad.tile` after its header), which
/// `tile run` then runs; a refusal names the file, line and column and
/// exits 1 with nothing on stdout.
#[test]
fn grad_save_reductions_prints_the_saving_forward_and_the_derivative() {
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let ln = programs
        .join("controls/layernorm.tile")
        .display()
        .to_string();
    let o = tile(&["grad", &ln, "--wrt", "x,w,b", "--save", "reductions"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let file = tile_ir::parse_file(&out).unwrap();
    assert_eq!(file.len(), 2, "{out}");
    assert_eq!(file[0].name, "layernorm_forward");
    assert_eq!(file[1].name, "layernorm_grad");
    assert!(out.contains("saved_mean_sum: out f32[M]"), "{out}");
    assert!(out.contains("saved_mean_sum: in f32[M]"), "{out}");
    assert!(out.contains("mean_sum = saved_mean_sum[i]"), "{out}");
    let o = tile(&["grad", &ln, "--wrt", "x", "--save", "outputs"]);
    assert_eq!(o.status.code(), Some(2), "{:?}", text(&o));
}

#[test]
fn grad_prints_a_program_that_runs_and_refusals_have_locations() {
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let softmax = programs.join("controls/softmax.tile").display().to_string();
    let o = tile(&["grad", &softmax, "--wrt", "x"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let fixture = std::fs::read_to_string(programs.join("derivatives/softmax_grad.tile")).unwrap();
    let body: String = fixture
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(out, body);

    let dir = scratch("grad");
    let grad = write(&dir, "softmax_grad.tile", &out);
    let x = Array::from_f64(DType::F32, &[2, 3], &[0.5, -1.0, 2.0, 0.0, 0.25, -0.75]);
    let gy = Array::from_f64(DType::F32, &[2, 3], &[1.0, 0.0, 0.0, 0.5, -0.5, 2.0]);
    let (xp, gp) = (save(&dir, "x.npy", &x), save(&dir, "gy.npy", &gy));
    let outd = dir.join("out").display().to_string();
    let o = tile(&[
        "run",
        &grad,
        "--target",
        "cpu",
        "--input",
        &format!("x={xp}"),
        "--input",
        &format!("grad_y={gp}"),
        "--out-dir",
        &outd,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let got = npy::read_npy(&std::fs::read(dir.join("out/grad_x.npy")).unwrap()).unwrap();
    // d/dx of sum(gy * softmax(x)) = s * (gy - sum(gy * s)), row by row.
    for i in 0..2 {
        let xs: Vec<f64> = (0..3).map(|j| x.get_f64(i * 3 + j)).collect();
        let m = xs.iter().cloned().fold(f64::MIN, f64::max);
        let z: f64 = xs.iter().map(|v| (v - m).exp()).sum();
        let s: Vec<f64> = xs.iter().map(|v| (v - m).exp() / z).collect();
        let dot: f64 = (0..3).map(|j| gy.get_f64(i * 3 + j) * s[j]).sum();
        for (j, sj) in s.iter().enumerate() {
            let want = sj * (gy.get_f64(i * 3 + j) - dot);
            assert!((got.get_f64(i * 3 + j) - want).abs() < 1e-6, "({i}, {j})");
        }
    }

    let bad = write(
        &dir,
        "acc.tile",
        "program acc(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[0] = x[i]\n  }\n}\n",
    );
    let o = tile(&["grad", &bad, "--wrt", "x"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.is_empty());
    assert!(
        err.starts_with(&format!(
            "{bad}:3:5: error: the store to `y` does not index by the loop variable `i`"
        )),
        "{err}"
    );
}

#[test]
fn emit_prints_wgsl_and_refuses_what_the_wgpu_target_cannot_run() {
    let o = tile(&["emit", "--target", "wgpu", &example("sigmoid_pair.tile")]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("@compute @workgroup_size(256, 1)"), "{out}");
    assert!(
        out.contains("var<storage, read_write> p_grad: array<f32>;"),
        "{out}"
    );
    let dir = scratch("wgpu-refusals");
    let f = write(
        &dir,
        "rows.tile",
        "program r(x: in f64[M, N], y: out f64[M]) {\n  for i in 0..M {\n    y[i] = sum(j in 0..N: x[i, j])\n  }\n}\n",
    );
    let o = tile(&["emit", "--target", "wgpu", &f]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("rows.tile: error: the wgpu target cannot run this program: parameter `x` (line 1) is f64"), "{err}");
    // `run` says first what the target cannot print; without the runtime
    // feature, it says how to build it.
    let x64 = save(
        &dir,
        "x64.npy",
        &Array::from_f64(tile_ir::DType::F64, &[2, 3], &[1.0; 6]),
    );
    let x = save(
        &dir,
        "x.npy",
        &Array::from_f64(tile_ir::DType::F32, &[2, 3], &[1.0; 6]),
    );
    let input64 = format!("x={x64}");
    let input = format!("x={x}");
    let o = tile(&[
        "run",
        "--target",
        "wgpu",
        &f,
        "--input",
        &input64,
        "--out-dir",
        dir.join("o1").to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("is f64, and WGSL has no 64-bit floats"),
        "{err}"
    );
    let out = dir.join("o2");
    let o = tile(&[
        "run",
        "--target",
        "wgpu",
        &example("sigmoid_pair.tile"),
        "--input",
        &input,
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    if o.status.success() {
        assert!(out.join("grad.npy").exists());
    } else {
        assert!(
            err.contains("--features wgpu") || err.contains("no wgpu adapter"),
            "{err}"
        );
        assert!(!out.exists(), "a failed run wrote {}", out.display());
    }
}
