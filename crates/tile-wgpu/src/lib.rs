//! Tile's portable GPU back end: WGSL printed from the plan by the shared
//! printer (`tile_emit`) in the [`WGSL`] dialect, for `wgpu`, which runs it
//! on Metal, Vulkan and DirectX 12.
//!
//! Every mapping prints: element grids, row reductions (a workgroup per
//! row), column reductions (32 columns by 8 slices per workgroup where
//! the block shares a column, else 64 columns, one per thread),
//! whole-array reductions (chunks, then a `_fin` entry point) and serial
//! kernels, over `f32`, `i32` and `bool` buffers, lowered for
//! [`tile_plan::kernel_ir::Target::WGPU`]. Refused with
//! [`WgpuError::Unsupported`], naming the parameter or line: 64-bit floats
//! (WGSL has none), integer literals beyond 32 bits, and (a Tile bug, named
//! by the message) a helper the prelude does not define. The runtime (cargo
//! feature `runtime`) also refuses, before any upload, sizes the 32-bit
//! range proof cannot keep below 2^30.
mod emit;
mod prelude;
#[cfg(feature = "runtime")]
mod runtime;

pub use emit::{emit_wgsl, WGSL, WGSL_BLOCKS};
pub use prelude::prelude;
#[cfg(feature = "runtime")]
pub use runtime::{adapter, WgpuBound, WgpuModule};

/// The plan's kernels lowered for this target (what `tile plan --target
/// wgpu` prints): blocks and barriers, scalar accesses, no staged rows.
pub fn lower_wgsl(plan: &tile_plan::Plan) -> tile_plan::kernel_ir::Lowered {
    tile_plan::lower_kernels(plan, tile_plan::kernel_ir::Target::WGPU)
}

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
    #[error("no wgpu adapter: {0} (on Linux without a GPU, install Mesa's lavapipe: apt-get install mesa-vulkan-drivers; for TILE_WGPU_BACKEND=gl, Mesa's EGL: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri)")]
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
