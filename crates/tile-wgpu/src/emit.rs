//! WGSL from a plan: the WGSL dialect of the shared printer and the module
//! around its kernels.
//!
//! One module per program:
//!
//! ```wgsl
//! @group(0) @binding(0) var<storage, read> tile_sizes: array<i32>;       // size symbols, program order
//! @group(0) @binding(1) var<storage, read_write> tile_err: atomic<i32>;  // failure site
//! @group(0) @binding(2) var<storage, read> p_x: array<f32>;              // parameter 0, and so on
//! ```
//!
//! then, where a kernel reduces a whole array, `tile_part` (its chunks'
//! results) after the parameters; the helper library ([`crate::prelude`]);
//! and an entry point per kernel, `tile_kN` (and `tile_kN_fin` after a
//! whole-array reduction's), with the workgroup [`workgroup`] gives it:
//! 256 threads for element, row, serial and whole-array kernels, 32
//! columns by 8 slices for shared column kernels, 64 for column kernels
//! run one column per thread. The bodies are `tile_emit::gpu`'s, as on
//! CUDA. `bool` parameters are stored as `i32` (0 or 1), since WGSL
//! storage holds no booleans. Failure ids number a kernel's sites from
//! `n * 1000000 + 1`, as on CUDA.

use crate::prelude::DEFINED;
use crate::WgpuError;
use tile_emit::gpu::FullPrint;
use tile_emit::{Dialect, GpuSpelling, Printer, Syntax};
use tile_ir::{DType, Expr, Func, Program, Role};
use tile_plan::kernel_ir::{QuadCondition, Target};
use tile_plan::{Kernel, Mapping, Plan};

/// Failure ids: kernel `n`'s sites are numbered from `n * KERNEL_SITES + 1`.
pub(crate) const KERNEL_SITES: i32 = 1_000_000;

/// WGSL: 32-bit scalars only, one work item per thread.
pub const WGSL: Dialect = Dialect {
    name: "wgsl",
    language: "WGSL",
    f32: "f32",
    // Refused before printing (WGSL has no 64-bit floats).
    f64: "f64",
    int: "i32",
    bool_: "bool",
    store_i32: "i32",
    store_bool: "i32",
    f32_suffix: "f",
    f64_suffix: "",
    f32_inf: "tile_inf_f32()",
    f32_nan: "tile_nan_f32()",
    f64_inf: "tile_inf_f32()",
    f64_nan: "tile_nan_f32()",
    f32_ninf: "(-tile_inf_f32())",
    f64_ninf: "(-tile_inf_f32())",
    restrict: "",
    kernel_qualifier: "",
    helper_qualifier: "",
    work_item: None,
    vector: None,
    math_scalar: "tile_{f}_{t}",
    math_vector: "tile_{f}_{t}",
    convert: "{t}({x})",
    unroll: None,
    gpu: Some(GpuSpelling {
        thread_x: "i32(tile_lid.x)",
        thread_y: "i32(tile_lid.y)",
        block_x: "i32(tile_wg.x)",
        block_y: "i32(tile_wg.y)",
        threads_x: "TILE_WX",
        threads_y: "TILE_WY",
        blocks_x: "i32(tile_nwg.x)",
        blocks_y: "i32(tile_nwg.y)",
        barrier: "workgroupBarrier();",
        shared: "var<workgroup>",
        shared_rows: "",
        int32: "i32",
        quad: "vec4<f32>",
        quad_of: "vec4<f32>({v})",
        quad_load: "{a}",
        quad_store: "{a} = {v};",
        aligned16: "false",
        quad_at: "{p}_v4[({o}) >> 2u]",
        quad_elem: None,
        buffer: "",
        min: "min({a}, {v})",
        unroll_fully: "",
        fail: "{ tile_fail({n}); return; }",
        smem_decl: "",
        smem_at: "{n}, tile_lid",
        smem_base: "0, tile_lid",
        row_set: ROW_SET,
        col_set: COL_SET,
    }),
    syntax: Syntax::Wgsl,
    fail_site: "{ tile_fail({n}); return; }",
    f32_sums_in_f64: false,
};

/// The dialect of kernels whose threads wait at barriers (row and column
/// reductions): a failed check reports its site and the thread goes on,
/// since WGSL allows a barrier only where every thread of the workgroup
/// reaches it (uniform control flow), and a thread that returned would
/// not. Going on is safe: WGSL clamps or discards every access outside a
/// buffer (robust buffer access), the reported failure makes the runtime
/// discard every output, and every later failure reports a site too.
pub const WGSL_BLOCKS: Dialect = {
    let mut d = WGSL;
    d.fail_site = "{ tile_fail({n}); }";
    if let Some(g) = &mut d.gpu {
        g.fail = "{ tile_fail({n}); }";
    }
    d
};

/// The dialect of element kernels' `_v4` entry points: every `f32`
/// buffer read and written through its `vec4<f32>` view (`p_x_v4`,
/// [`view_binding`]), scalar elements as components of it, so no buffer
/// is reached through two bindings in one dispatch.
pub const WGSL_QUADS: Dialect = {
    let mut d = WGSL;
    if let Some(g) = &mut d.gpu {
        g.quad_elem = Some("{p}_v4[({o}) >> 2u][({o}) & 3]");
    }
    d
};

/// The binding of parameter `i`'s 16-byte view, of a program of
/// `params` parameters: after the parameters and the chunk results.
pub(crate) fn view_binding(params: usize, i: usize) -> usize {
    params + 3 + i
}

/// The binding through which a `_v4` entry point reaches parameter `i`
/// of `program`: its view's for an `f32` one, its own otherwise.
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
pub(crate) fn quad_binding(program: &Program, i: usize) -> usize {
    match program.params[i].dtype {
        DType::F32 => view_binding(program.params.len(), i),
        _ => i + 2,
    }
}

/// Offset of the `_v4` entry points' own sites (their 16-byte accesses)
/// within a kernel's, as on CUDA.
pub(crate) const V4_SITE_BASE: i32 = 100_000;

/// Threads of a row kernel's workgroup (and of element and serial
/// kernels'), along x.
pub(crate) const ROW_THREADS: u32 = 256;
/// A shared column kernel's workgroup: columns along x, slices along y.
pub(crate) const COL_THREADS: (u32, u32) = (32, 8);
/// Slots of one set of a row kernel's block reductions (one per thread).
const ROW_SET: usize = ROW_THREADS as usize;
/// Slots of one set of a column kernel's slice combinations.
const COL_SET: usize = (COL_THREADS.0 * COL_THREADS.1) as usize;

/// The workgroup of kernel `k`: (x, y) threads.
pub(crate) fn workgroup(k: &Kernel) -> (u32, u32) {
    match k.mapping {
        Mapping::ColumnReduction if tile_emit::gpu::shares(k) => COL_THREADS,
        Mapping::ColumnReduction => (64, 1),
        _ => (ROW_THREADS, 1),
    }
}

/// Prints the WGSL module for `plan`, or says what it needs that this
/// target does not print.
pub fn emit_wgsl(plan: &Plan) -> Result<String, WgpuError> {
    emit(plan).map(|e| e.source)
}

/// A module and, per kernel, its failure sites.
pub(crate) struct Emitted {
    pub source: String,
    /// Read by the runtime, to name a failed check.
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub sites: Vec<Vec<tile_emit::Site>>,
    /// Per kernel, where it has a `_v4` entry point: the conditions under
    /// which it runs and the buffer each of its own sites names.
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    pub quads: Vec<Option<(Vec<QuadCondition>, Vec<String>)>>,
}

pub(crate) fn emit(plan: &Plan) -> Result<Emitted, WgpuError> {
    let program = &plan.program;
    refuse_unsupported(plan)?;
    let index = tile_ir::ParamIndex::of(program);
    let mut source = WGSL.file_header(&program.name, plan.kernels.len());
    source.push_str("@group(0) @binding(0) var<storage, read> tile_sizes: array<i32>;\n");
    source.push_str("@group(0) @binding(1) var<storage, read_write> tile_err: atomic<i32>;\n");
    for (i, q) in program.params.iter().enumerate() {
        let access = if q.role == Role::In {
            "read"
        } else {
            "read_write"
        };
        let elem = match q.dtype {
            DType::F32 => "f32",
            DType::I32 | DType::Bool => "i32",
            DType::F64 => "f64",
        };
        source.push_str(&format!(
            "@group(0) @binding({}) var<storage, {access}> {}: array<{elem}>;\n",
            i + 2,
            Printer::ptr_name(&q.name)
        ));
    }
    if plan
        .kernels
        .iter()
        .any(|k| k.mapping == Mapping::FullReduction)
    {
        // Whole-array reductions' chunk results (one per workgroup of
        // the first entry point; `tile_plan::PARTIALS` of them).
        source.push_str(&format!(
            "@group(0) @binding({}) var<storage, read_write> tile_part: array<f32>;\n",
            program.params.len() + 2
        ));
    }
    let lowered: Vec<_> = plan
        .kernels
        .iter()
        .map(|k| tile_plan::lower_kernel(program, &index, k, Target::WGPU))
        .collect();
    if lowered.iter().any(|l| l.quads().is_some()) {
        // The 16-byte views the `_v4` entry points use instead.
        for (i, q) in program.params.iter().enumerate() {
            if q.dtype == DType::F32 {
                let access = if q.role == Role::In {
                    "read"
                } else {
                    "read_write"
                };
                source.push_str(&format!(
                    "@group(0) @binding({}) var<storage, {access}> {}_v4: array<vec4<f32>>;\n",
                    view_binding(program.params.len(), i),
                    Printer::ptr_name(&q.name)
                ));
            }
        }
    }
    source.push_str(&crate::prelude::prelude());
    let mut sites = Vec::new();
    let mut quads = Vec::new();
    for (n, (k, lowered)) in plan.kernels.iter().zip(&lowered).enumerate() {
        let blocks = matches!(
            k.mapping,
            Mapping::RowReduction | Mapping::ColumnReduction | Mapping::FullReduction
        );
        let dialect = if blocks { &WGSL_BLOCKS } else { &WGSL };
        let mut p = Printer::with_index(dialect, program, &index);
        p.set_site_base((n as i32 * KERNEL_SITES) as u32);
        p.line(format!(
            "/* {}: {}{}; stores {}; reads {} */",
            k.name,
            k.mapping.name(),
            k.over(),
            k.stores.join(", "),
            k.reads.join(", ")
        ));
        let (wx, wy) = workgroup(k);
        p.line(format!("@compute @workgroup_size({wx}, {wy})"));
        let params = k.params_in(program, &index);
        let depth = p.scope_len();
        let full = k.full_parts().map(in_f32);
        open_entry(&mut p, &format!("tile_{}", k.name), (wx, wy), &params);
        match k.mapping {
            Mapping::ElementGrid | Mapping::Split => tile_emit::gpu::element_grid(&mut p, k),
            Mapping::RowReduction => {
                let unroll = tile_emit::gpu::Unroll {
                    quads: 1,
                    rows: 1,
                    held: 0,
                };
                tile_emit::gpu::row_reduction(&mut p, k, lowered, None, program, unroll)
            }
            Mapping::ColumnReduction => tile_emit::gpu::column_reduction(&mut p, k, lowered),
            Mapping::FullReduction => match &full {
                Some(f) => FullPrint(f).print_chunks(&mut p, params.len(), program, lowered),
                None => p.refuse(format!("kernel {} is not a full reduction", k.name)),
            },
            Mapping::Serial => tile_emit::gpu::one_thread(&mut p, &k.body),
        }
        p.close();
        p.truncate_scope(depth);
        if let Some(f) = &full {
            // The chunks' results combined in a fixed tree, then the store
            // (its sites are the chunks' entry point's, as on CUDA).
            p.line(format!(
                "/* {}_fin: the chunks' results combined in order, then the store */",
                k.name
            ));
            p.line(format!("@compute @workgroup_size({ROW_THREADS}, 1)"));
            open_entry(
                &mut p,
                &format!("tile_{}_fin", k.name),
                (ROW_THREADS, 1),
                &params,
            );
            FullPrint(f).print_finish(&mut p, params.len());
            p.close();
            p.truncate_scope(depth);
        }
        let printed = p.finish();
        accept(&printed, k, program)?;
        source.push('\n');
        source.push_str(&printed.code);
        let mut kernel_sites = printed.sites;
        let base = n as i32 * KERNEL_SITES;
        let quad = lowered
            .quads()
            .and_then(|(conditions, own)| {
                let printed = print_quads(program, &index, k, &params, base);
                accept(&printed, k, program).ok()?;
                Some((printed, (conditions.to_vec(), own.to_vec())))
            })
            .map(|(printed, quad)| {
                source.push('\n');
                source.push_str(&printed.code);
                // Its ragged tail is printed first, so its checks number
                // as the plain entry point's; the lanes' scalar checks
                // follow them.
                let m = kernel_sites.len();
                if printed.sites.len() > m && printed.sites[..m] == kernel_sites[..] {
                    kernel_sites.extend_from_slice(&printed.sites[m..]);
                }
                quad
            });
        sites.push(kernel_sites);
        quads.push(quad);
    }
    Ok(Emitted {
        source,
        sites,
        quads,
    })
}

/// Kernel `k`'s `_v4` entry point (`tile_kN_v4`): four consecutive
/// elements per thread, every `f32` buffer through its 16-byte view, the
/// row's ragged end first; its 16-byte accesses report `base +
/// V4_SITE_BASE + 1, + 2, ...`.
fn print_quads(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
    params: &[&tile_ir::Param],
    base: i32,
) -> tile_emit::Printed {
    let mut p = Printer::with_index(&WGSL_QUADS, program, index);
    p.set_site_base(base as u32);
    p.line(format!(
        "/* {} (4 elements per thread, 16-byte accesses): {}{}; stores {}; reads {} */",
        k.name,
        k.mapping.name(),
        k.over(),
        k.stores.join(", "),
        k.reads.join(", ")
    ));
    let (wx, wy) = workgroup(k);
    p.line(format!("@compute @workgroup_size({wx}, {wy})"));
    let depth = p.scope_len();
    open_entry(&mut p, &format!("tile_{}_v4", k.name), (wx, wy), params);
    tile_emit::gpu::element_grid_v4(&mut p, k, 1, base + V4_SITE_BASE);
    p.close();
    p.truncate_scope(depth);
    p.finish()
}

/// Checks a printed entry point of kernel `k`: nothing refused, and every
/// helper it calls defined in WGSL.
fn accept(printed: &tile_emit::Printed, k: &Kernel, program: &Program) -> Result<(), WgpuError> {
    if !printed.errors.is_empty() {
        return Err(WgpuError::Unsupported(format!(
            "kernel {} of `{}`: {}",
            k.name,
            program.name,
            printed.errors.join("; ")
        )));
    }
    if let Some(h) = printed
        .helpers
        .iter()
        .find(|h| !DEFINED.contains(&h.as_str()))
    {
        return Err(WgpuError::Unsupported(format!(
            "kernel {} of `{}` calls `{h}`, which has no WGSL definition yet",
            k.name, program.name
        )));
    }
    Ok(())
}

/// A whole-array reduction's parts with its chunks reduced in `f32`
/// (tile-plan converts their values to `f64`, which WGSL does not have).
fn in_f32(f: &tile_plan::FullParts) -> tile_plan::FullParts {
    fn narrow(e: &mut Expr) {
        if let Expr::Call(Func::Cast(t @ DType::F64), _) = e {
            *t = DType::F32;
        }
        for c in e.children_mut() {
            narrow(c);
        }
    }
    let mut f = f.clone();
    narrow(&mut f.chunk);
    narrow(&mut f.body);
    if let Some(flat) = &mut f.flat {
        narrow(flat);
    }
    f
}

/// Opens the entry point `name` with workgroups of `(wx, wy)` threads and
/// declares the sizes and the boxes of `params`.
fn open_entry(p: &mut Printer, name: &str, (wx, wy): (u32, u32), params: &[&tile_ir::Param]) {
    p.open(format!(
        "fn {name}(@builtin(local_invocation_id) tile_lid: vec3<u32>, \
         @builtin(workgroup_id) tile_wg: vec3<u32>, \
         @builtin(num_workgroups) tile_nwg: vec3<u32>)"
    ));
    // The integer helpers' failure argument (the C back ends' error
    // pointer; WGSL's helpers write `tile_err` themselves).
    p.line("let err: i32 = 0;");
    p.line(format!(
        "const TILE_WX: i32 = {wx}; const TILE_WY: i32 = {wy};"
    ));
    p.declare_sizes(&|n| format!("tile_sizes[{n}]"));
    for q in params {
        p.declare_box(q);
    }
}

/// Refuses, before any printing, what WGSL cannot hold or this target
/// does not print yet, naming the parameter, line or kernel.
fn refuse_unsupported(plan: &Plan) -> Result<(), WgpuError> {
    let program: &Program = &plan.program;
    if let Some(q) = program.params.iter().find(|q| q.dtype == DType::F64) {
        return Err(WgpuError::Unsupported(format!(
            "parameter `{}` (line {}) is f64, and WGSL has no 64-bit floats: declare it f32",
            q.name, q.span.line
        )));
    }
    for q in &program.params {
        for d in &q.dims {
            for e in [&d.lo, &d.hi] {
                let mut wide = None;
                e.walk(&mut |x| {
                    if let Expr::Int(v) = x {
                        if i32::try_from(*v).is_err() {
                            wide.get_or_insert(*v);
                        }
                    }
                });
                if let Some(v) = wide {
                    return Err(WgpuError::Unsupported(format!(
                        "parameter `{}` (line {}): the integer {v} in its shape does not fit WGSL's 32-bit integers",
                        q.name, q.span.line
                    )));
                }
            }
        }
    }
    let mut f64_line = None;
    for s in &program.body {
        s.walk(&mut |t| {
            for e in t.exprs() {
                e.walk(&mut |x| {
                    if matches!(x, Expr::Call(Func::Cast(DType::F64), _)) {
                        f64_line.get_or_insert(t.span().line);
                    }
                });
            }
        });
    }
    if let Some(line) = f64_line {
        return Err(WgpuError::Unsupported(format!(
            "line {line} converts to f64, and WGSL has no 64-bit floats"
        )));
    }
    for k in &plan.kernels {
        let mut wide = None;
        let mut note = |line: u32, e: &Expr| {
            e.walk(&mut |x| {
                if let Expr::Int(v) = x {
                    if i32::try_from(*v).is_err() {
                        wide.get_or_insert((line, *v));
                    }
                }
            })
        };
        for s in &k.body {
            s.walk(&mut |t| {
                for e in t.exprs() {
                    note(t.span().line, e);
                }
            });
        }
        // The loop bounds: named by the kernel's first statement.
        let first = k.body.first().map_or(0, |s| s.span().line);
        for lv in &k.domain {
            note(first, &lv.lo);
            note(first, &lv.hi);
        }
        if let Some((line, v)) = wide {
            return Err(WgpuError::Unsupported(format!(
                "line {line}: the integer {v} does not fit WGSL's 32-bit integers"
            )));
        }
    }
    Ok(())
}
