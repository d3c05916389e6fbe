//! Tile's C-family printer: one lowering of a kernel's statements to C-like
//! text, shared by every back end that prints C, CUDA C or (later) Metal.
//!
//! What differs between targets is data: a [`Dialect`] spells the types,
//! literal suffixes, qualifiers, vector types and helper names. A target
//! adds a thin layer: the kernel skeleton (how work items are enumerated)
//! and the helper library its names refer to. The printer decides how
//! values map to lanes, which accesses are contiguous vector loads and
//! stores, how lane masks guard conditional code, how reductions keep
//! partial results, and where bounds are checked; it never calls a
//! compiler.
//!
//! Output is deterministic: temporaries are named by kind and numbered in
//! printing order (`ld0`, `alu1`, `val2`, `msk3`, `red4`, `acc5`), every
//! collection is ordered, and nothing depends on addresses or time.
//!
//! ```
//! use tile_emit::{dialect, Printer};
//! let text = "program add(x: in f32[N], y: out f32[N]) {
//!   for i in 0..N { y[i] = x[i] + 1.0 }
//! }";
//! let program = tile_ir::parse_program(text).unwrap();
//! let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
//! let k = &plan.kernels[0];
//! let mut p = Printer::new(&dialect::C, &plan.program);
//! p.bind_size("N");
//! p.loop_level(&k.domain[0].name, "lo", "hi", &k.body, true);
//! let out = p.finish();
//! assert!(out.errors.is_empty());
//! assert!(out.code.contains("tile_ld_vf32(p_x + v_i)"));
//! assert!(out.code.contains("(ld1 + 1.0f)"));
//! ```
#![deny(missing_docs)]

mod access;
mod api;
mod control;
pub mod dialect;
pub mod gpu;
mod lower_expr;
mod printer;
mod split_full;

pub use dialect::{Dialect, GpuSpelling, Syntax, VectorSpelling};
pub use printer::{Printed, Printer, Site, VTy};
