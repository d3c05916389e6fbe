//! Tile's portable GPU back end: WGSL printed from the plan by the shared
//! printer (`tile_emit`) in the [`WGSL`] dialect, for `wgpu`, which runs it
//! on Metal, Vulkan and DirectX 12.
//!
//! What it prints so far: element kernels (`element_grid`, `split`) and
//! kernels that run on one thread (`serial`) over `f32`, `i32` and `bool`
//! buffers, without reductions. Anything else is refused with
//! [`WgpuError::Unsupported`] naming the kernel or the parameter: 64-bit
//! floats (WGSL has none), reductions (row, column and whole-array kernels,
//! and reductions inside an element's statements). There is no runtime yet:
//! the sources are checked by `naga` in this crate's tests (validated, then
//! translated to the Metal Shading Language).

mod emit;
mod prelude;

pub use emit::{emit_wgsl, WGSL};

/// Why WGSL could not be printed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WgpuError {
    /// The program needs something this target does not print (yet).
    #[error("the wgpu target cannot run this program: {0}")]
    Unsupported(String),
}
