//! Text fixtures: every `tests/programs/**/*.tile` with its expected plans
//! and outputs in a `.expected` file beside it.
//!
//! For each fixture this checks: the plan with fusion on and off against the
//! expectation; single-store programs plan identically with fusion on and
//! off; and, for every `# run:` line, that the plan executed with its work
//! items in shuffled orders gives the interpreter's sequential result bit for
//! bit, and that the outputs match the expectation. `TILE_BLESS=1` rewrites
//! the `.expected` files; a mismatch prints a diff.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use tile_ir::{fixture, interp, Array, Program, Stmt};
use tile_plan::kernel_ir::{Form, Target};
use tile_plan::{
    compile, execute_lowered, execute_plan, lower_kernels, EntryPoint, Options, Order,
};

fn fixtures() -> Vec<PathBuf> {
    tile_ir::fixture::tile_files(&[
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
    ])
}

fn store_count(p: &Program) -> usize {
    let mut n = 0;
    p.walk(&mut |s| n += matches!(s, Stmt::Store { .. }) as usize);
    n
}

fn bits(a: &Array) -> Vec<u64> {
    (0..a.len()).map(|i| a.get_f64(i).to_bits()).collect()
}

fn show_array(out: &mut String, name: &str, a: &Array) {
    let _ = writeln!(out, "{name}: {} {:?}", a.dtype(), a.shape());
    let v = a.to_f64();
    let shown: Vec<String> = v
        .iter()
        .take(24)
        .map(|x| format!("{}", *x as f32))
        .collect();
    let _ = writeln!(out, "  {}", shown.join(" "));
    if v.len() > 24 {
        let sum: f64 = v.iter().sum();
        let sumsq: f64 = v.iter().map(|x| x * x).sum();
        let _ = writeln!(
            out,
            "  ... {} more; sum {:.9e} sumsq {:.9e}",
            v.len() - 24,
            sum,
            sumsq
        );
    }
}

fn check_fixture(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let program = tile_ir::parse_program(&text).map_err(|d| format!("parse: {d}"))?;
    let on = compile(&program, &Options { fusion: true }).map_err(|e| e.to_string())?;
    let off = compile(&program, &Options { fusion: false }).map_err(|e| e.to_string())?;
    if store_count(&program) <= 1 && on.kernels != off.kernels {
        return Err("a single-store program must plan identically with fusion on and off".into());
    }
    let mut actual = String::new();
    let _ = writeln!(actual, "== plan ==\n{on}== plan --fusion off ==\n{off}");
    for sizes in fixture::run_lines(&text) {
        let args =
            fixture::arguments(&program, &sizes).ok_or("a run line gives a negative extent")?;
        let mut oracle = args.clone();
        interp::interpret(&program, &mut oracle, &sizes).map_err(|e| format!("interpret: {e}"))?;
        let runs = [
            (&on, Order::Sequential),
            (&on, Order::Shuffled(1)),
            (&on, Order::Shuffled(7)),
            (&off, Order::Shuffled(3)),
        ];
        for (plan, order) in runs {
            let mut got = args.clone();
            execute_plan(plan, &mut got, &sizes, order).map_err(|e| format!("execute: {e}"))?;
            for (name, a) in &oracle {
                if bits(a) != bits(&got[name]) {
                    return Err(format!(
                        "`{name}` differs from sequential execution with fusion {} and order {order:?} at sizes {sizes:?}",
                        if plan.fusion { "on" } else { "off" }
                    ));
                }
            }
        }
        // What each target runs, every entry point, in order and shuffled.
        for target in [Target::CPU, Target::cuda(8)] {
            let lowered = lower_kernels(&on, target);
            let rounds = lowered.kernels.iter().any(|k| k.form == Form::Interchanged);
            for entry in [EntryPoint::General, EntryPoint::Rows] {
                for order in [Order::Sequential, Order::Shuffled(11)] {
                    let mut got = args.clone();
                    execute_lowered(&on, &lowered, entry, &mut got, &sizes, order)
                        .map_err(|e| format!("execute lowered: {e}"))?;
                    for (name, a) in &oracle {
                        let b = &got[name];
                        // Interchanged columns round each sum to the
                        // column's type before the statements reading it.
                        let close = (0..a.len()).all(|i| {
                            let (x, y) = (a.get_f64(i), b.get_f64(i));
                            x.to_bits() == y.to_bits()
                                || (rounds && (x - y).abs() <= 1e-5 * x.abs().max(1.0))
                        });
                        if !close {
                            return Err(format!(
                                "`{name}` differs from sequential execution lowered for {} ({entry:?}, order {order:?}) at sizes {sizes:?}",
                                target.name
                            ));
                        }
                    }
                }
            }
        }
        let shown: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(actual, "== run {} ==", shown.join(" "));
        for p in program.params.iter().filter(|p| p.role.is_written()) {
            show_array(&mut actual, &p.name, &oracle[&p.name]);
        }
    }
    let expected_path = path.with_extension("expected");
    if std::env::var("TILE_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&expected_path, &actual).map_err(|e| e.to_string())?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expected_path).map_err(|_| {
        format!(
            "{} is missing; run with TILE_BLESS=1 to create it",
            expected_path.display()
        )
    })?;
    if expected != actual {
        return Err(format!(
            "output differs from {}:\n{}",
            expected_path.display(),
            fixture::line_diff(&expected, &actual)
        ));
    }
    Ok(())
}

#[test]
fn every_fixture_matches_its_expectation() {
    let all = fixtures();
    assert!(
        all.len() >= 20,
        "expected the fixture set, found {}",
        all.len()
    );
    let failures: Vec<String> = all
        .iter()
        .filter_map(|p| {
            check_fixture(p)
                .err()
                .map(|e| format!("{}: {e}", p.display()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} fixture(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn fixture_plans_are_as_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let plan = |f: &str, fusion: bool| {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        compile(&tile_ir::parse_program(&text).unwrap(), &Options { fusion }).unwrap()
    };
    let mappings = |p: &tile_plan::Plan| {
        p.kernels
            .iter()
            .map(|k| k.mapping.name())
            .collect::<Vec<_>>()
    };
    let rules = |p: &tile_plan::Plan| {
        p.fallbacks
            .iter()
            .map(|f| f.rule.name())
            .collect::<Vec<_>>()
    };
    for f in ["fusion/sigmoid_pair.tile", "fusion/gelu_pair.tile"] {
        assert_eq!(mappings(&plan(f, true)), ["element_grid"]);
        assert_eq!(plan(f, true).kernels[0].stores, ["value", "grad"]);
        assert_eq!(mappings(&plan(f, false)), ["split", "split"]);
    }
    assert_eq!(
        mappings(&plan("fusion/three_interleaved.tile", true)),
        ["element_grid"]
    );
    assert_eq!(
        mappings(&plan("fusion/independent_nests.tile", true)),
        ["element_grid"]
    );
    assert_eq!(
        mappings(&plan("fusion/dependent_nests.tile", true)),
        ["element_grid", "element_grid"]
    );
    assert_eq!(rules(&plan("fusion/dependent_nests.tile", true)), ["raw"]);
    assert_eq!(
        rules(&plan("fusion/different_domains.tile", true)),
        ["different_domain"]
    );
    assert_eq!(
        mappings(&plan("layout/permuted_store.tile", true)),
        ["element_grid"]
    );
    assert_eq!(
        mappings(&plan("layout/conditional_store.tile", true)),
        ["element_grid"]
    );
    assert_eq!(
        mappings(&plan("layout/inplace.tile", true)),
        ["element_grid"]
    );
    assert_eq!(mappings(&plan("layout/inplace.tile", false)), ["serial"]);
    for (f, rule) in [
        ("legality/raw.tile", "raw"),
        ("legality/war.tile", "war"),
        ("legality/waw.tile", "waw"),
        ("legality/non_injective.tile", "non_injective"),
        ("legality/unknown_index.tile", "unknown"),
    ] {
        let p = plan(f, true);
        assert_eq!(mappings(&p), ["serial"], "{f}");
        assert!(rules(&p).contains(&rule), "{f}: {:?}", rules(&p));
    }
    assert_eq!(
        plan("simplify/fold_removes_input.tile", true).unused_inputs,
        ["x"]
    );
    for f in [
        "controls/softmax.tile",
        "controls/rmsnorm.tile",
        "controls/layernorm.tile",
    ] {
        assert_eq!(mappings(&plan(f, true)), ["row_reduction"], "{f}");
    }
    // Reductions down the rows, the row variable indexing the innermost
    // dimension: adjacent columns on adjacent lanes.
    for f in [
        "reductions/col_sum.tile",
        "reductions/col_moments.tile",
        "reductions/col_clipped_max.tile",
    ] {
        assert_eq!(mappings(&plan(f, true)), ["column_reduction"], "{f}");
    }
    assert_eq!(
        mappings(&plan("reductions/names_like_accumulators.tile", true)),
        ["row_reduction", "column_reduction"]
    );
}
