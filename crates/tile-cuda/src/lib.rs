//! Tile's CUDA back end: CUDA C printed from a plan through the shared
//! C-family printer (`tile_emit::dialect::CUDA`), compiled at run time by
//! NVRTC for the device's compute capability, loaded and launched through
//! the driver API.
//!
//! Both libraries are loaded at run time (`libcuda.so.1`, `libnvrtc.so.13`
//! or `.12`), so this crate builds and its tests run on machines without
//! CUDA; there, [`emit_cuda`] still works and everything else returns a
//! plain [`CudaError`] saying what is missing.
//!
//! ```
//! let program = tile_ir::parse_program(
//!     "program add(a: in f32[N], b: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = a[i] + b[i] } }",
//! ).unwrap();
//! let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
//! let source = tile_cuda::emit_cuda(&plan).unwrap();
//! assert!(source.contains("extern \"C\" __global__ void tile_k0(const TileArgs a)"));
//! ```
#![deny(missing_docs)]

mod compile;
mod configure;
pub mod driver;
mod emit;
mod launch;
pub mod nvrtc;
mod options;
mod prelude;
mod print_attention;
mod print_attention_staged;
mod print_contraction;
mod read_failure;
pub mod runtime;

pub use compile::{compile, CudaModule};
pub use launch::Bound;
pub use options::{
    CudaOptions, RowStaging, DEFAULT_ROW_HOLD, DEFAULT_ROW_UNROLL, STAGE_ROWS_LONGER_THAN,
};
pub use prelude::PRELUDE;
pub use runtime::{gpu, DeviceBuffer, Gpu};
pub use tile_emit::gpu::{LOCKSTEP_ROW, SERIAL_ROW};

/// Everything that can go wrong on the CUDA path.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CudaError {
    /// `libcuda` could not be loaded.
    #[error("no CUDA driver: {0}")]
    NoDriver(String),
    /// The driver found no usable device.
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    /// NVRTC could not be loaded.
    #[error("no NVRTC: {0}")]
    NoNvrtc(String),
    /// NVRTC rejected the generated source.
    #[error("NVRTC could not compile the generated CUDA C (`tile emit FILE --target cuda` prints it):\n{log}")]
    Compile {
        /// NVRTC's log.
        log: String,
    },
    /// A driver call failed.
    #[error("CUDA driver call {call} failed with error {code}: {message}")]
    Driver {
        /// The call.
        call: String,
        /// The `CUresult`.
        code: i32,
        /// The driver's description.
        message: String,
    },
    /// The arguments do not fit the program.
    #[error(transparent)]
    Args(#[from] tile_ir::ArgError),
    /// The sizes would let the kernels' integer arithmetic wrap (refused
    /// before launch; nothing ran).
    #[error(transparent)]
    Range(#[from] tile_plan::RangeError),
    /// A bounds check failed on the device.
    #[error("line {line}: a {what} index is outside the box of `{buf}` (kernel {kernel})")]
    OutOfBounds {
        /// The kernel.
        kernel: String,
        /// `load`, `store` or `div`.
        what: String,
        /// The buffer.
        buf: String,
        /// The source line.
        line: u32,
    },
    /// An integer division by zero on the device.
    #[error("line {line}: integer division by zero or overflow (`/` or `%`) (kernel {kernel})")]
    IntArith {
        /// The kernel.
        kernel: String,
        /// The source line.
        line: u32,
    },
    /// The program uses something this back end does not support.
    #[error("unsupported on cuda: {0}")]
    Unsupported(String),
}

/// The CUDA C source for `plan` (needs no GPU). Deterministic: the same
/// plan gives the same bytes.
pub fn emit_cuda(plan: &tile_plan::Plan) -> Result<String, CudaError> {
    emit::emit(plan, emit::DEFAULT_UNROLL, emit::DEFAULT_TILING).map(|e| e.source)
}

/// What the CUDA back end prints for `plan` under `opts`, every choice
/// made: the lowered kernels (`tile plan --target cuda`).
pub fn lower_cuda(plan: &tile_plan::Plan, opts: &CudaOptions) -> tile_plan::kernel_ir::Lowered {
    tile_plan::lower_kernels(
        plan,
        tile_plan::kernel_ir::Target::cuda(opts.unrolls().held).with_tiles(opts.tiles),
    )
}

/// The CUDA C for `plan` under `opts` (the unroll factors change the
/// loops printed).
pub fn emit_cuda_with(plan: &tile_plan::Plan, opts: &CudaOptions) -> Result<String, CudaError> {
    emit::emit(plan, opts.unrolls(), opts.tiling()).map(|e| e.source)
}
