//! The derivative fixtures in `tests/programs/derivatives/` are what
//! `tile grad` makes of their sources today: each generated file is the
//! source's `# run:` lines and its derivative program, byte for byte.
//! Being fixtures, they also run on every target against the interpreter
//! and are planned and snapshotted like every program. `TILE_BLESS=1`
//! writes them again.

use std::path::Path;
use tile_ir::{differentiate, GradOptions};

/// (source under tests/programs, inputs, with value, generated file).
const GENERATED: [(&str, &[&str], bool, &str); 13] = [
    ("derivatives/sigmoid.tile", &["x"], true, "sigmoid_grad"),
    ("derivatives/gelu.tile", &["x"], true, "gelu_grad"),
    ("controls/softmax.tile", &["x"], false, "softmax_grad"),
    (
        "controls/layernorm.tile",
        &["x", "w", "b"],
        false,
        "layernorm_grad",
    ),
    ("controls/rmsnorm.tile", &["x", "w"], false, "rmsnorm_grad"),
    (
        "neural/cross_entropy.tile",
        &["x"],
        false,
        "cross_entropy_grad",
    ),
    (
        "derivatives/cross_entropy_loss.tile",
        &["x"],
        false,
        "cross_entropy_loss_grad",
    ),
    ("neural/mse.tile", &["p", "t"], false, "mse_grad"),
    (
        "matrix/matmul_bias_gelu.tile",
        &["a", "w", "bias"],
        false,
        "matmul_bias_gelu_grad",
    ),
    ("reductions/row_lse.tile", &["x"], true, "row_lse_grad"),
    (
        "layout/conditional_store.tile",
        &["x"],
        false,
        "conditional_store_grad",
    ),
    (
        "layout/gathered_rows.tile",
        &["x"],
        false,
        "gathered_rows_grad",
    ),
    (
        "contractions/batched_shared_weight.tile",
        &["x", "w"],
        false,
        "batched_shared_weight_grad",
    ),
];

#[test]
fn generated_derivative_fixtures_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let bless = std::env::var("TILE_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for (source, wrt, with_value, name) in GENERATED {
        let text = std::fs::read_to_string(root.join(source)).unwrap();
        let program = tile_ir::parse_program(&text).unwrap();
        let options = GradOptions {
            saves: Default::default(),
            wrt: wrt.iter().map(|s| s.to_string()).collect(),
            with_value,
        };
        let grad = differentiate(&program, &options).unwrap_or_else(|e| panic!("{source}: {e}"));
        let flags = if with_value { " --with-value" } else { "" };
        let mut want = format!(
            "# Generated: `tile grad tests/programs/{source} --wrt {}{flags}`\n\
             # (crates/tile-cli/tests/derivatives.rs keeps it current).\n",
            wrt.join(",")
        );
        for line in text.lines().filter(|l| l.starts_with("# run:")) {
            want.push_str(line);
            want.push('\n');
        }
        want.push_str(&tile_ir::print_file(std::slice::from_ref(&grad)));
        let path = root.join("derivatives").join(format!("{name}.tile"));
        if bless {
            std::fs::write(&path, &want).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(want.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale (TILE_BLESS=1 writes them again):\n{}",
        stale.join("\n")
    );
}
