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
#[cfg(feature = "runtime")]
mod runtime;

pub use emit::{emit_wgsl, WGSL};
#[cfg(feature = "runtime")]
pub use runtime::{adapter, WgpuBound, WgpuModule};

/// Bits the range proof keeps every kernel integer under (`i32`, with
/// room for a check's sum of two: see `tile_plan::check_ranges_within`).
pub const INDEX_BITS: u32 = 30;

/// Why WGSL could not be printed or run.
#[derive(Debug, thiserror::Error)]
pub enum WgpuError {
    /// The program needs something this target does not print (yet).
    #[error("the wgpu target cannot run this program: {0}")]
    Unsupported(String),
    /// No adapter (GPU, or a software driver such as Mesa's lavapipe).
    #[error("no wgpu adapter: {0} (on Linux without a GPU, install Mesa's lavapipe: apt-get install mesa-vulkan-drivers)")]
    NoAdapter(String),
    /// The adapter refused a device, or the device failed.
    #[error("wgpu device: {0}")]
    Device(String),
    /// wgpu rejected the generated WGSL or a pipeline.
    #[error("wgpu rejected the generated WGSL (`tile emit FILE --target wgpu` prints it): {0}")]
    Compile(String),
    /// The arguments do not fit the program.
    #[error(transparent)]
    Args(#[from] tile_ir::ArgError),
    /// The sizes would let the kernels' 32-bit integers wrap (refused
    /// before launch; nothing ran).
    #[error(transparent)]
    Range(#[from] tile_plan::RangeError),
    /// A bounds check failed on the device (outputs left unchanged).
    #[error("line {line}: a {what} index is outside the box of `{buf}` (kernel {kernel})")]
    OutOfBounds {
        /// The kernel.
        kernel: String,
        /// `load` or `store`.
        what: String,
        /// The buffer.
        buf: String,
        /// The source line.
        line: u32,
    },
    /// An integer division by zero or overflow on the device.
    #[error("line {line}: integer division by zero or overflow (`/` or `%`) (kernel {kernel})")]
    IntArith {
        /// The kernel.
        kernel: String,
        /// The source line.
        line: u32,
    },
}
