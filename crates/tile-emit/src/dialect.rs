//! Dialects as data: how one C-like target spells types, literals,
//! qualifiers, vectors and math functions.
//!
//! The printer never tests which target it prints for; everything that
//! differs between C for CPUs, CUDA C and (later) Metal is a field here.
//! A target adds a thin layer on top (the kernel skeleton and the helper
//! library its names refer to).

/// Spelling of one C-like dialect.
#[derive(Clone, Debug)]
pub struct Dialect {
    /// A short name, for messages.
    pub name: &'static str,
    /// The language's name in the file header (`C`, `CUDA`).
    pub language: &'static str,
    /// Scalar value type of `f32` values.
    pub f32: &'static str,
    /// Scalar value type of `f64` values.
    pub f64: &'static str,
    /// Scalar value type of integers (`i32` in the IR, held in 64 bits so
    /// that index arithmetic cannot overflow where the interpreter's does not).
    pub int: &'static str,
    /// Scalar value type of booleans.
    pub bool_: &'static str,
    /// Storage element type of `i32` buffers.
    pub store_i32: &'static str,
    /// Storage element type of `bool` buffers (one byte, 0 or 1).
    pub store_bool: &'static str,
    /// Suffix of `f32` literals (`1.5f`).
    pub f32_suffix: &'static str,
    /// Suffix of `f64` literals.
    pub f64_suffix: &'static str,
    /// `f32` infinity and quiet NaN.
    pub f32_inf: &'static str,
    /// See [`Dialect::f32_inf`].
    pub f32_nan: &'static str,
    /// `f64` infinity and quiet NaN.
    pub f64_inf: &'static str,
    /// See [`Dialect::f64_inf`].
    pub f64_nan: &'static str,
    /// `f32` and `f64` negative infinity.
    pub f32_ninf: &'static str,
    /// See [`Dialect::f32_ninf`].
    pub f64_ninf: &'static str,
    /// The no-alias pointer qualifier.
    pub restrict: &'static str,
    /// Qualifiers before a kernel's return type.
    pub kernel_qualifier: &'static str,
    /// Qualifiers before a helper function.
    pub helper_qualifier: &'static str,
    /// The global work-item index, where the hardware numbers work items
    /// (`None`: the kernel loops over a `[lo, hi)` slice it is given).
    pub work_item: Option<&'static str>,
    /// Explicit vectors, where the target has them.
    pub vector: Option<VectorSpelling>,
    /// Helper-name pattern for a math function on scalars: `{f}` is the
    /// function (`exp`), `{t}` the type suffix (`f32`).
    pub math_scalar: &'static str,
    /// Helper-name pattern for a math function on vectors (`{t}` is `vf32`).
    pub math_vector: &'static str,
    /// Converts a value to another element type (vectors), as a call
    /// pattern: `{x}` the value, `{t}` the target type.
    pub convert: &'static str,
    /// The line before a loop asking the compiler to unroll it `{n}`
    /// times, where the dialect has one.
    pub unroll: Option<&'static str>,
    /// Blocks of threads, shared memory and barriers, where the target is
    /// a GPU (the printers of [`crate::gpu`]).
    pub gpu: Option<GpuSpelling>,
    /// How declarations, loops, conversions and choices are written.
    pub syntax: Syntax,
    /// The statement that reports failure site `{n}` after a check fails,
    /// and leaves the kernel (or the slice) where the dialect can (WGSL's
    /// kernels with barriers go on: `tile_wgpu::WGSL_BLOCKS`).
    pub fail_site: &'static str,
    /// Whether `f32` sums accumulate in `f64` (a dialect without 64-bit
    /// floats accumulates in `f32`).
    pub f32_sums_in_f64: bool,
}

/// How a dialect writes declarations, loop headers, conversions, choices
/// and integer literals: C's family (C, CUDA C, Metal) or WGSL's. The
/// printers write these through [`Syntax`] and never spell them
/// themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// `const T x = v;`, `for (T i = lo; ...)`, `(T)x`, `c ? a : b`.
    C,
    /// `let x: T = v;`, `for (var i: T = lo; ...)`, `T(x)`,
    /// `select(b, a, c)`.
    Wgsl,
}

impl Syntax {
    /// The statement binding `name` (of type `t`) to `v` for good.
    pub fn decl(self, t: &str, name: &str, v: &str) -> String {
        match self {
            Syntax::C => format!("const {t} {name} = {v};"),
            Syntax::Wgsl => format!("let {name}: {t} = {v};"),
        }
    }

    /// Several bindings of type `t` on one line.
    pub fn decls(self, t: &str, items: &[(&str, &str)]) -> String {
        match self {
            Syntax::C => {
                let list: Vec<String> = items.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                format!("const {t} {};", list.join(", "))
            }
            Syntax::Wgsl => {
                let list: Vec<String> = items.iter().map(|(n, v)| self.decl(t, n, v)).collect();
                list.join(" ")
            }
        }
    }

    /// The statement declaring the variable `name` (of type `t`), set to
    /// `v` where given.
    pub fn var(self, t: &str, name: &str, v: Option<&str>) -> String {
        match (self, v) {
            (Syntax::C, Some(v)) => format!("{t} {name} = {v};"),
            (Syntax::C, None) => format!("{t} {name};"),
            (Syntax::Wgsl, Some(v)) => format!("var {name}: {t} = {v};"),
            (Syntax::Wgsl, None) => format!("var {name}: {t};"),
        }
    }

    /// A loop's header: `name` (of type `t`) from `lo` while `cond`,
    /// advanced by the statement `step`.
    pub fn for_head(self, t: &str, name: &str, lo: &str, cond: &str, step: &str) -> String {
        match self {
            Syntax::C => format!("for ({t} {name} = {lo}; {cond}; {step})"),
            Syntax::Wgsl => format!("for (var {name}: {t} = {lo}; {cond}; {step})"),
        }
    }

    /// An integer literal of the dialect's integer type (64-bit in C:
    /// `-5LL`; WGSL's `i32` takes the digits, which the range proof keeps
    /// within 32 bits).
    pub fn int_lit(self, v: i64) -> String {
        match self {
            Syntax::C if v == i64::MIN => "(-9223372036854775807LL - 1)".to_string(),
            Syntax::C if v < 0 => format!("(-{}LL)", -(v as i128)),
            Syntax::C if v > i32::MAX as i64 => format!("{v}LL"),
            Syntax::Wgsl if v < 0 => format!("({v})"),
            _ => v.to_string(),
        }
    }

    /// A condition that always holds.
    pub fn always(self) -> &'static str {
        match self {
            Syntax::C => "1",
            Syntax::Wgsl => "true",
        }
    }

    /// The statement that leaves the kernel where `c` holds.
    pub fn leave_if(self, c: &str) -> String {
        match self {
            Syntax::C => format!("if ({c}) return;"),
            Syntax::Wgsl => format!("if ({c}) {{ return; }}"),
        }
    }

    /// The statement `s` where `c` holds.
    pub fn when(self, c: &str, s: &str) -> String {
        match self {
            Syntax::C => format!("if ({c}) {s}"),
            Syntax::Wgsl => format!("if ({c}) {{ {s} }}"),
        }
    }

    /// The integer 1 where the condition `c` holds, else 0,
    /// parenthesised.
    pub fn as_int(self, c: &str) -> String {
        match self {
            Syntax::C => format!("({c})"),
            Syntax::Wgsl => format!("select(0, 1, {c})"),
        }
    }

    /// The least (or, with `max`, the greatest) value of the dialect's
    /// integer type, as an expression.
    pub fn int_extreme(self, max: bool) -> String {
        match (self, max) {
            (Syntax::C, true) => self.int_lit(i64::MAX),
            (Syntax::C, false) => self.int_lit(i64::MIN),
            (Syntax::Wgsl, true) => "2147483647".to_string(),
            (Syntax::Wgsl, false) => "(-2147483647 - 1)".to_string(),
        }
    }

    /// `x` converted to the scalar type `t`, unparenthesised.
    pub fn cast(self, t: &str, x: &str) -> String {
        match self {
            Syntax::C => format!("({t}){x}"),
            Syntax::Wgsl => format!("{t}({x})"),
        }
    }

    /// `a` where `c` holds, else `b`, unparenthesised.
    pub fn select(self, c: &str, a: &str, b: &str) -> String {
        match self {
            Syntax::C => format!("{c} ? {a} : {b}"),
            Syntax::Wgsl => format!("select({b}, {a}, {c})"),
        }
    }
}

/// How a GPU dialect spells what the block printers of [`crate::gpu`]
/// print beyond plain C: thread and block indices, shared memory,
/// barriers, 16-byte vectors of four `f32` and the kernel's buffers.
/// Patterns: `{a}` an address expression, `{v}` a value, `{n}` a number.
#[derive(Clone, Debug)]
pub struct GpuSpelling {
    /// The thread's index in its block along x, and along y.
    pub thread_x: &'static str,
    /// See [`GpuSpelling::thread_x`].
    pub thread_y: &'static str,
    /// The block's index in the grid along x, and along y.
    pub block_x: &'static str,
    /// See [`GpuSpelling::block_x`].
    pub block_y: &'static str,
    /// Threads per block along x, and along y.
    pub threads_x: &'static str,
    /// See [`GpuSpelling::threads_x`].
    pub threads_y: &'static str,
    /// Blocks in the grid along x, and along y.
    pub blocks_x: &'static str,
    /// See [`GpuSpelling::blocks_x`].
    pub blocks_y: &'static str,
    /// The statement every thread of a block waits at.
    pub barrier: &'static str,
    /// The qualifier of an array the block's threads share.
    pub shared: &'static str,
    /// Declares `tile_rows`, the `float` view of the block's dynamically
    /// sized shared memory (staged rows), aligned to 16 bytes.
    pub shared_rows: &'static str,
    /// A 32-bit integer (counters within a row staged in shared memory).
    pub int32: &'static str,
    /// Four `f32` in one 16-byte value.
    pub quad: &'static str,
    /// A quad made of four values (`{v}`: them, comma-separated).
    pub quad_of: &'static str,
    /// The quad at address `{a}` (16-byte aligned).
    pub quad_load: &'static str,
    /// Stores the quad `{v}` at address `{a}` (16-byte aligned).
    pub quad_store: &'static str,
    /// Whether address `{a}` is 16-byte aligned.
    pub aligned16: &'static str,
    /// The address (`{a}` of [`GpuSpelling::quad_load`]) of element `{o}`
    /// of the buffer `{p}`: a pointer in C, the `vec4<f32>` element of
    /// WGSL's 16-byte view of it.
    pub quad_at: &'static str,
    /// Where a dialect reads `f32` buffers through 16-byte views (WGSL's
    /// `_v4` entry points, whose storage arrays are typed): element `{o}`
    /// of the buffer `{p}` in its view. `None` reads them directly.
    pub quad_elem: Option<&'static str>,
    /// The kernel's buffer number `{n}` (an untyped pointer).
    pub buffer: &'static str,
    /// The smaller of two integers `{a}` and `{v}`.
    pub min: &'static str,
    /// The line before a loop of a fixed count asking the compiler to
    /// unroll it fully (register arrays indexed by its counter).
    pub unroll_fully: &'static str,
    /// Reports failure site `{n}` and leaves the kernel where the dialect
    /// can, as [`Dialect::fail_site`] (a block, after a check the printer
    /// spelled out itself).
    pub fail: &'static str,
    /// Declares the block's reduction slots, `{n}` of them, in the
    /// kernel (empty where the target declares them outside: WGSL's
    /// workgroup variables live at module scope).
    pub smem_decl: &'static str,
    /// The argument of a block or column reduction helper that names
    /// its slot set starting at slot `{n}`.
    pub smem_at: &'static str,
    /// The argument of a whole-array reduction's block helper (one set,
    /// from the first slot).
    pub smem_base: &'static str,
    /// Slots of one set of a row kernel's block reductions.
    pub row_set: usize,
    /// Slots of one set of a column kernel's slice combinations (one per
    /// thread of the largest block).
    pub col_set: usize,
}

/// How a dialect spells explicit vectors of the kernel's lane count.
#[derive(Clone, Debug)]
pub struct VectorSpelling {
    /// The lane count, as an expression of the generated source (a macro
    /// decided by the target compiler's predefined macros).
    pub lanes: &'static str,
    /// Vector of `f32` values.
    pub f32: &'static str,
    /// Vector of `f64` values.
    pub f64: &'static str,
    /// Vector of integers (64-bit lanes).
    pub int: &'static str,
    /// Mask with 32-bit lanes (all ones or zero), from `f32` comparisons.
    pub mask4: &'static str,
    /// Mask with 64-bit lanes, from `f64` and integer comparisons.
    pub mask8: &'static str,
}

impl Dialect {
    /// The statement that fails site `id` unless `cond` holds.
    pub fn check(&self, cond: &str, id: impl std::fmt::Display) -> String {
        let fail = self.fail_site.replace("{n}", &id.to_string());
        format!("if (!({cond})) {fail}")
    }

    /// The first line of every kernel file: the language, the program and
    /// how many kernels follow.
    pub fn file_header(&self, program: &str, kernels: usize) -> String {
        format!(
            "/* Tile: {} kernels of program `{program}` ({kernels} kernel{}). */\n",
            self.language,
            if kernels == 1 { "" } else { "s" }
        )
    }
}

/// C for CPUs: GCC/Clang vector extensions, helpers named `tile_*`.
pub const C: Dialect = Dialect {
    name: "c",
    language: "C",
    f32: "float",
    f64: "double",
    int: "int64_t",
    bool_: "bool",
    store_i32: "int32_t",
    store_bool: "uint8_t",
    f32_suffix: "f",
    f64_suffix: "",
    f32_inf: "__builtin_inff()",
    f32_nan: "__builtin_nanf(\"\")",
    f64_inf: "__builtin_inf()",
    f64_nan: "__builtin_nan(\"\")",
    f32_ninf: "(-__builtin_inff())",
    f64_ninf: "(-__builtin_inf())",
    restrict: "restrict",
    kernel_qualifier: "",
    helper_qualifier: "static inline",
    work_item: None,
    vector: Some(VectorSpelling {
        lanes: "TILE_L",
        f32: "tile_vf32",
        f64: "tile_vf64",
        int: "tile_vi64",
        mask4: "tile_vm4",
        mask8: "tile_vm8",
    }),
    math_scalar: "tile_{f}_{t}",
    math_vector: "tile_{f}_{t}",
    convert: "__builtin_convertvector({x}, {t})",
    unroll: None,
    gpu: None,
    syntax: Syntax::C,
    fail_site: "TILE_FAIL({n});",
    f32_sums_in_f64: true,
};

/// CUDA C: one work item per thread, scalar code, device helpers.
pub const CUDA: Dialect = Dialect {
    name: "cuda",
    language: "CUDA",
    f32: "float",
    f64: "double",
    int: "long long",
    bool_: "bool",
    store_i32: "int",
    store_bool: "unsigned char",
    f32_suffix: "f",
    f64_suffix: "",
    f32_inf: "__int_as_float(0x7f800000)",
    f32_nan: "__int_as_float(0x7fc00000)",
    f64_inf: "__longlong_as_double(0x7ff0000000000000LL)",
    f64_nan: "__longlong_as_double(0x7ff8000000000000LL)",
    f32_ninf: "__int_as_float(0xff800000)",
    f64_ninf: "__longlong_as_double(0xfff0000000000000LL)",
    restrict: "__restrict__",
    kernel_qualifier: "extern \"C\" __global__",
    helper_qualifier: "static __device__ __forceinline__",
    work_item: Some("((long long)blockIdx.x * blockDim.x + threadIdx.x)"),
    vector: None,
    math_scalar: "tile_{f}_{t}",
    math_vector: "tile_{f}_{t}",
    convert: "({t})({x})",
    unroll: Some("#pragma unroll {n}"),
    gpu: Some(GpuSpelling {
        thread_x: "threadIdx.x",
        thread_y: "threadIdx.y",
        block_x: "blockIdx.x",
        block_y: "blockIdx.y",
        threads_x: "blockDim.x",
        threads_y: "blockDim.y",
        blocks_x: "gridDim.x",
        blocks_y: "gridDim.y",
        barrier: "__syncthreads();",
        shared: "__shared__",
        shared_rows: "extern __shared__ float4 tile_rows4[];\nfloat *const tile_rows = reinterpret_cast<float *>(tile_rows4);",
        int32: "int",
        quad: "float4",
        quad_of: "make_float4({v})",
        quad_load: "*reinterpret_cast<const float4 *>{a}",
        quad_store: "*reinterpret_cast<float4 *>{a} = {v};",
        aligned16: "(reinterpret_cast<unsigned long long>{a} & 15ULL) == 0",
        quad_at: "({p} + {o})",
        quad_elem: None,
        buffer: "a.A[{n}]",
        min: "min({a}, {v})",
        unroll_fully: "#pragma unroll",
        fail: "{ atomicExch(err, {n}); return; }",
        smem_decl: "__shared__ double tile_smem[{n}];",
        smem_at: "tile_smem + {n}",
        smem_base: "tile_smem",
        row_set: 32,
        col_set: 1024,
    }),
    syntax: Syntax::C,
    fail_site: "TILE_FAIL({n});",
    f32_sums_in_f64: true,
};
