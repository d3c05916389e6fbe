//! Tile's CPU back end: a plan becomes C source (through the shared
//! C-family printer), the system C compiler turns it into a shared object,
//! and the Rust runtime runs its kernels on a persistent thread pool.
//!
//! ```
//! use std::collections::BTreeMap;
//! use tile_ir::{Array, DType, Sizes};
//!
//! let text = "program add1(x: in f32[N], y: out f32[N]) {
//!   for i in 0..N { y[i] = x[i] + 1.0 }
//! }";
//! let program = tile_ir::parse_program(text).unwrap();
//! let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
//! let module = tile_cpu::compile(&plan, &tile_cpu::CpuOptions::default()).unwrap();
//! let mut arrays = BTreeMap::from([
//!     ("x".to_string(), Array::from_f64(DType::F32, &[3], &[1.0, 2.0, 3.0])),
//!     ("y".to_string(), Array::zeros(DType::F32, &[3])),
//! ]);
//! module.run(&mut arrays, &Sizes::new()).unwrap();
//! assert_eq!(arrays["y"].to_f64(), [2.0, 3.0, 4.0]);
//! assert!(module.source().contains("void tile_k0("));
//! ```
//!
//! - [`emit_c`] prints the C source (deterministic: the same plan gives the
//!   same bytes; the vector width is chosen inside the source from the
//!   compiler's predefined macros).
//! - [`compile`] prints, compiles (or finds the object in the on-disk cache)
//!   and loads: a [`CpuModule`].
//! - [`CpuModule::run`] checks every argument before any work, then
//!   launches the kernels in plan order.
#![deny(missing_docs)]

mod cc;
mod count_free_cores;
mod emit;
mod emit_attention;
mod emit_contraction;
mod error;
mod math;
mod module;
mod pool;
mod prelude;
mod split_full;

pub use cc::{AVX512_FLAGS, FLAGS, LIBS, SANITIZE_FLAGS};
pub use error::CpuError;
pub use module::{CpuModule, RawArg};

use std::path::PathBuf;

/// How to compile and run.
#[derive(Clone, Debug)]
pub struct CpuOptions {
    /// Reuse compiled objects from the on-disk cache (default: on; the
    /// environment variable `TILE_CACHE=0` turns it off).
    pub cache: bool,
    /// Worker threads per launch (default: `$TILE_THREADS`, else the
    /// machine's available parallelism).
    pub threads: Option<usize>,
    /// The C compiler (default: `$TILE_CC`, else `cc`, `gcc`, `clang`).
    pub cc: Option<PathBuf>,
    /// The cache directory (default: `$TILE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/tile`, else `~/.cache/tile`; with none of them,
    /// no disk cache).
    pub cache_dir: Option<PathBuf>,
    /// Build the kernels with AddressSanitizer ([`SANITIZE_FLAGS`]), for
    /// the fuzz harness: the process must have the sanitizer's runtime
    /// loaded (`LD_PRELOAD` of the compiler's `libasan.so`).
    pub sanitize: bool,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions {
            cache: std::env::var("TILE_CACHE").map_or(true, |v| v.trim() != "0"),
            threads: None,
            cc: None,
            cache_dir: None,
            sanitize: false,
        }
    }
}

impl CpuOptions {
    /// The thread count these options give.
    pub fn thread_count(&self) -> usize {
        self.threads
            .or_else(|| {
                std::env::var("TILE_THREADS")
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
            })
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1)
            .max(1)
    }
}

/// What the C back end prints for `plan`, every choice made: the lowered
/// kernels (`tile plan --target cpu`).
pub fn lower_c(plan: &tile_plan::Plan) -> tile_plan::kernel_ir::Lowered {
    tile_plan::lower_kernels(plan, tile_plan::kernel_ir::Target::CPU)
}

/// The C source of `plan`'s kernels.
pub fn emit_c(plan: &tile_plan::Plan, opts: &CpuOptions) -> Result<String, CpuError> {
    let _ = opts;
    Ok(emit::emit(plan)?.source)
}

/// Prints, compiles (or takes from the cache) and loads `plan`'s kernels.
pub fn compile(plan: &tile_plan::Plan, opts: &CpuOptions) -> Result<CpuModule, CpuError> {
    let emitted = emit::emit(plan)?;
    let built = cc::build(&emitted.source, opts)?;
    CpuModule::new(plan, emitted, built.library, opts.thread_count())
}

/// The flags builds with the compiler these options select pass (for
/// benchmark records): [`FLAGS`], plus [`AVX512_FLAGS`] where the native
/// target has AVX-512.
pub fn compiler_flags(opts: &CpuOptions) -> Result<Vec<&'static str>, CpuError> {
    Ok(cc::find(opts)?.flags())
}

/// The C compiler these options select: its path and version line (for
/// benchmark records).
pub fn compiler_identity(opts: &CpuOptions) -> Result<String, CpuError> {
    let c = cc::find(opts)?;
    Ok(format!(
        "{} ({})",
        c.path.display(),
        c.identity.lines().next().unwrap_or("unknown version")
    ))
}
