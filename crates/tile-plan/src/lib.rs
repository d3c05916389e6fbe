//! Tile's middle end: simplify a verified program, analyse its accesses and
//! plan it into kernels.
//!
//! [`compile`] is the whole pipeline, in order:
//! `verify -> fold_constants -> share_common_values -> remove_dead_code ->
//! find_unused_inputs -> plan_groups -> split_full_reductions -> find_lane_loops
//! -> find_row_forms -> find_reread_rows -> cache_reduced_values -> interchange_columns ->
//! interchange_row_loops -> find_contractions -> find_attention -> find_costs`. With `TILE_LOG=passes` in the
//! environment it prints the program after each pass to stderr.
//!
//! ```
//! let text = "program sigmoid_pair(x: in f32[M, N], value: out f32[M, N], grad: out f32[M, N]) {
//!   for i in 0..M, j in 0..N {
//!     value[i, j] = sigmoid(x[i, j])
//!     grad[i, j] = sigmoid(x[i, j]) * (1.0 - sigmoid(x[i, j]))
//!   }
//! }";
//! let program = tile_ir::parse_program(text).unwrap();
//! let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
//! assert_eq!(plan.kernels.len(), 1);
//! assert_eq!(plan.kernels[0].mapping, tile_plan::Mapping::ElementGrid);
//! assert_eq!(plan.kernels[0].stores, ["value", "grad"]);
//! ```
#![deny(missing_docs)]

pub mod affine;
mod cache_reduced_values;
mod check_ranges;
mod execute;
mod find_attention;
mod find_contractions;
mod find_costs;
mod find_failing_checks;
mod find_hazards;
mod find_lane_loops;
mod find_quad_accesses;
mod find_reread_rows;
mod find_row_forms;
mod find_unused_inputs;
mod fold_constants;
mod hoist_sibling_reductions;
mod interchange_columns;
mod interchange_row_loops;
pub mod kernel_ir;
mod lower_kernels;
pub mod orient_rows;
mod plan;
mod plan_groups;
mod remove_dead_code;
mod share_common_values;
pub mod split_reductions;
mod verify_kernels;

pub use cache_reduced_values::{
    cache_reduced_values, cache_row, fill_read_back, replace_read_back, scratch_params,
    with_scratch, Cached, ScratchRow,
};
pub use check_ranges::{check_ranges, check_ranges_within, RangeError, RangeProof, INDEX_LIMIT};
pub use execute::{execute_lowered, execute_plan, EntryPoint, Order};
pub use find_attention::{find_attention, Attention};
pub use find_contractions::{
    contraction_block_names, find_contractions, Contraction, Operand, CONTRACTION_COLUMNS,
};
pub use find_hazards::{
    find_element_hazards, find_nest_dependency, find_row_hazards, find_split_hazards,
};
pub use find_lane_loops::{
    batch_refusal, find_lane_loops, lane_refusal, lanes_independent, LaneLoop,
};
pub use find_quad_accesses::{find_quad_accesses, level_accesses, LevelAccess};
pub use find_reread_rows::{find_reread_rows, row_level_loads, Reread};
pub use find_row_forms::{find_row_forms, plain_if, sharing, Sharing};
pub use find_unused_inputs::find_unused_inputs;
pub use fold_constants::{fold_constants, fold_expr};
pub use interchange_columns::{
    column_block_names, interchange_columns, Interchanged, COLUMN_BLOCK,
};
pub use interchange_row_loops::interchange_row_loops;
pub use lower_kernels::{lower_kernel, lower_kernels, reread_rows};
pub use plan::{Fallback, Kernel, Mapping, Plan, Rule};
pub use plan_groups::plan_groups;
pub use remove_dead_code::remove_dead_code;
pub use share_common_values::share_common_values;
pub use split_reductions::{full_chunks, full_names, split_full_reductions, FullParts, PARTIALS};

use tile_ir::{Program, VerifyError};

/// Planner options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Merge stores into one kernel where legal (`--fusion off` clears it).
    pub fusion: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { fusion: true }
    }
}

/// A rewrite of the program, in place.
pub type Rewrite = fn(&mut Program);

/// The rewrites `compile` runs, in order, by name.
pub const REWRITES: &[(&str, Rewrite)] = &[
    ("fold_constants", fold_constants),
    ("share_common_values", share_common_values),
    ("remove_dead_code", remove_dead_code),
];

/// The rewrites of planned kernels `compile` runs after `find_row_forms`,
/// in order, by name: each records a rewritten body beside a kernel's own
/// for the targets to run ([`Kernel::cached`], [`Kernel::interchanged`]).
pub const KERNEL_REWRITES: &[&str] = &[
    "cache_reduced_values",
    "interchange_columns",
    "interchange_row_loops",
    "find_contractions",
    "find_attention",
];

/// Verifies, simplifies and plans `program`.
pub fn compile(program: &Program, options: &Options) -> Result<Plan, VerifyError> {
    compile_skipping(program, options, None)
}

/// [`compile`] with the rewrite named `skip` (one of [`REWRITES`] or
/// [`KERNEL_REWRITES`]) left out: how the snapshot tests prove that every
/// rewrite changes some fixture's output. Not for users: a skipped rewrite is a different
/// compiler.
pub fn compile_skipping(
    program: &Program,
    options: &Options,
    skip: Option<&str>,
) -> Result<Plan, VerifyError> {
    tile_ir::verify(program)?;
    let log = std::env::var("TILE_LOG").is_ok_and(|v| v.split(',').any(|p| p == "passes"));
    // Each pass must leave a valid program: in debug builds (every test)
    // the verifier runs after each one, and a pass that breaks an
    // invariant stops at once with its name (a Tile bug, not user error).
    let show = |pass: &str, p: &Program| {
        if log {
            eprintln!("== after {pass} ==\n{p}");
        }
        if cfg!(debug_assertions) {
            if let Err(e) = tile_ir::verify(p) {
                panic!("internal error: the program after {pass} does not verify:\n{e}\n{p}");
            }
        }
    };
    let mut p = program.clone();
    show("parse", &p);
    for (name, pass) in REWRITES {
        if skip != Some(*name) {
            pass(&mut p);
            show(name, &p);
        }
    }
    let unused = find_unused_inputs(&p);
    let mut plan = plan_groups(&p, unused, options.fusion);
    plan.shared = introduced_bindings(program, &p);
    split_full_reductions(&p, &mut plan.kernels);
    find_lane_loops(&mut plan.kernels);
    find_row_forms(&mut plan.kernels);
    find_reread_rows(&p, &mut plan.kernels);
    if log {
        eprintln!("== after plan_groups ==\n{plan}");
    }
    // Kernel-level passes are verified too: each kernel's bodies, as a
    // program over its domain (verify_kernels.rs).
    let check = |pass: &str, kernels: &[Kernel]| {
        if cfg!(debug_assertions) {
            verify_kernels::verify_kernels(pass, &p, kernels);
        }
    };
    check("plan_groups", &plan.kernels);
    if skip != Some("cache_reduced_values") {
        cache_reduced_values(&p, &mut plan.kernels);
        check("cache_reduced_values", &plan.kernels);
    }
    if skip != Some("interchange_columns") {
        interchange_columns(&p, &mut plan.kernels);
        check("interchange_columns", &plan.kernels);
    }
    if skip != Some("interchange_row_loops") {
        interchange_row_loops(&p, &mut plan.kernels);
        check("interchange_row_loops", &plan.kernels);
    }
    if skip != Some("find_contractions") {
        find_contractions(&p, &mut plan.kernels);
        check("find_contractions", &plan.kernels);
    }
    if skip != Some("find_attention") {
        find_attention(&p, &mut plan.kernels);
        check("find_attention", &plan.kernels);
    }
    plan.notes = find_costs::find_costs(&plan.kernels);
    let copies = find_failing_checks::find_failing_checks(&plan);
    plan.notes.extend(copies);
    if log {
        for k in &plan.kernels {
            if let Some(f) = &k.full {
                eprintln!("== after split_full_reductions: {} ==", k.name);
                eprintln!("chunk: {}", f.chunk);
                for s in &f.finish {
                    eprintln!("{s}");
                }
            }
            if let Some(c) = &k.cached {
                eprintln!("== after cache_reduced_values: {} ==", k.name);
                for s in &c.body {
                    eprintln!("{s}");
                }
            }
            if let Some(c) = &k.interchanged {
                let pass = if c.loops.is_empty() {
                    "interchange_columns"
                } else {
                    "interchange_row_loops"
                };
                eprintln!("== after {pass}: {} ==", k.name);
                for s in &c.body {
                    eprintln!("{s}");
                }
            }
        }
    }
    Ok(plan)
}

/// Names `after` binds that `before` does not: the bindings simplification
/// introduced ([`Plan::shared`]).
fn introduced_bindings(before: &Program, after: &Program) -> Vec<String> {
    let bound = |p: &Program| {
        let mut out = std::collections::BTreeSet::new();
        p.walk(&mut |s| {
            if let tile_ir::Stmt::Let { name, .. } = s {
                out.insert(name.clone());
            }
        });
        out
    };
    let user = bound(before);
    bound(after)
        .into_iter()
        .filter(|n| !user.contains(n))
        .collect()
}
