//! Tile's program model.
//!
//! A [`Program`] has typed parameters (each with a role and a box over size
//! symbols) and a body of statements. Programs come from the [`builder`] API
//! or from `.tile` text ([`parse_file`]); [`Program`]'s `Display` prints the
//! normalised text back. [`verify`] collects every problem with its location,
//! and [`interp`] runs any verified program in plain sequential order in FP64:
//! the oracle every back end is tested against.
//!
//! ```
//! use tile_ir::builder::*;
//! use tile_ir::{DType, Role};
//!
//! // Value and derivative of the logistic sigmoid.
//! let mut b = ProgramBuilder::new("sigmoid_pair");
//! let x = b.param("x", Role::In, DType::F32, &["M", "N"]);
//! let value = b.param("value", Role::Out, DType::F32, &["M", "N"]);
//! let grad = b.param("grad", Role::Out, DType::F32, &["M", "N"]);
//! b.for_each(&[("i", "M"), ("j", "N")], |body| {
//!     let s = body.bind("s", sigmoid(x.at(&[v("i"), v("j")])));
//!     body.store(&value, &[v("i"), v("j")], s.clone());
//!     body.store(&grad, &[v("i"), v("j")], s.clone() * (lit(1.0) - s));
//! });
//! let program = b.finish();
//! tile_ir::verify(&program).unwrap();
//! assert!(program.to_string().contains("grad[i, j] = s * (1.0 - s)"));
//! ```
#![deny(missing_docs)]

pub mod args;
mod array;
pub mod builder;
mod diag;
pub mod differentiate;
mod expr;
pub mod fixture;
pub mod interp;
mod lex;
pub mod limits;
pub mod load;
pub mod names;
mod node_id;
pub mod npy;
mod parse;
mod print;
mod program;
pub mod scope;
mod span;
pub mod temp_paths;
mod types;
mod verify;

pub use args::{ArgError, Sizes};
pub use array::{shape_bytes, Array, ArrayData, ArrayError};
pub use diag::Diagnostic;
pub use differentiate::{derive, differentiate, Derivative, GradError, GradOptions, Saves};
pub use expr::{BinOp, Expr, Func, ReduceOp, UnOp};
pub use node_id::NodeId;
pub use parse::{parse_file, parse_program};
pub use print::print_file;
pub use program::{Dim, LoopVar, Param, ParamIndex, Program, Stmt};
pub use span::Span;
pub use types::{DType, Role};
pub use verify::{infer_type, verify, verify_generated, VerifyError};
