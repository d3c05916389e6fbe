//! The CPU back end's errors.

use tile_ir::ArgError;

/// Why a program could not be compiled, loaded or run on the CPU.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// No C compiler could be run.
    #[error(
        "no C compiler found (tried {tried}): install gcc or clang, or set TILE_CC to a C compiler"
    )]
    NoCompiler {
        /// The commands tried, in order.
        tried: String,
    },
    /// The C compiler rejected the generated source (a Tile bug).
    #[error("the C compiler failed on the generated source (`tile emit FILE --target cpu` prints it):\n{log}")]
    CompileFailed {
        /// The compiler's messages.
        log: String,
    },
    /// The shared object could not be loaded or lacks a kernel.
    #[error("cannot load the compiled kernels: {0}")]
    Load(String),
    /// The arguments do not fit the program.
    #[error(transparent)]
    Args(#[from] ArgError),
    /// The sizes would let the kernels' integer arithmetic wrap (refused
    /// before launch; nothing ran).
    #[error(transparent)]
    Range(#[from] tile_plan::RangeError),
    /// The program uses something the CPU back end cannot print.
    #[error("the CPU back end cannot run this program: {0}")]
    Unsupported(String),
    /// An index fell outside a parameter's box while running.
    #[error(
        "line {line}: a {what} index is outside the box of `{buf}`; the run stopped there, so written arrays may hold partial results"
    )]
    OutOfBounds {
        /// The parameter.
        buf: String,
        /// The statement's line.
        line: u32,
        /// `load` or `store`.
        what: &'static str,
    },
    /// Integer division by zero or overflow while running.
    #[error(
        "line {line}: integer division by zero or overflow (`/` or `%`); the run stopped there, so written arrays may hold partial results"
    )]
    IntArith {
        /// The statement's line.
        line: u32,
    },
    /// A row kernel could not allocate its scratch rows.
    #[error(
        "line {line}: out of memory for a row's scratch storage; the run stopped there, so written arrays may hold partial results"
    )]
    Scratch {
        /// The line of the row's first statement.
        line: u32,
    },
    /// A row kernel's scratch storage would exceed the memory ceiling
    /// (refused before launch; nothing ran).
    #[error("line {line}: a row's scratch storage needs {bytes} bytes per thread, above the memory ceiling of {ceiling} bytes (set TILE_MAX_MEMORY to change it); nothing ran")]
    ScratchTooLarge {
        /// The line of the row's first statement.
        line: u32,
        /// Bytes one thread needs.
        bytes: u128,
        /// The ceiling.
        ceiling: u64,
    },
    /// The cache or a temporary directory could not be used.
    #[error("{0}")]
    Io(String),
}
