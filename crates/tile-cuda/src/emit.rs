//! CUDA C from a plan: the CUDA dialect of the shared printer plus the
//! kernel skeletons for each mapping.
//!
//! Every kernel takes one by-value parameter block, mirrored by
//! `launch.rs`'s `TileArgs`:
//!
//! ```c
//! struct TileArgs { long long lo, hi; long long S[16]; void *A[32]; int *err; };
//! ```
//!
//! `S` holds the size symbols in program order, `A` the device pointers of
//! the kernel's parameters in declaration order (unused inputs are never
//! passed), `err` receives the failure site of a failed bounds check.
//! - `element_grid` / `split`: a grid-stride loop, one element per thread
//!   (`tile_kN`), and where the accesses allow it a second entry point
//!   (`tile_kN_v4`) in which each thread handles four consecutive elements
//!   of the innermost variable with 16-byte loads and stores. The runtime
//!   picks `_v4` when the sizes put every access on a 16-byte boundary, so
//!   two aligned shapes share one source and differ only in launch size.
//! - `row_reduction`: one block per row ([`crate::print_rows`]), and where
//!   the rows it reads whole fit in shared memory a second entry point
//!   (`tile_kN_rows`, [`crate::stage_rows`]) that stages them there.
//!   A row kernel that is a contraction has a third entry point
//!   (`tile_kN_mm`, [`crate::print_contraction`]): a tile of products per
//!   block of threads, then the epilogue on each.
//! - `serial`: one thread runs the statements in program order.
//!
//! Parameters are `__restrict__`: the runtime gives each parameter its own
//! device allocation and checks host arguments for overlap before upload.

use crate::CudaError;
use tile_emit::gpu::{FullPrint, Unroll};
use tile_emit::{dialect, Printer, Site};
use tile_ir::Program;
use tile_plan::kernel_ir::{LoweredKernel, QuadCondition, RowEntry};
use tile_plan::{Kernel, Mapping, Plan};

/// Failure ids: kernel `n`'s sites are numbered from `n * KERNEL_SITES +
/// 1`, those of its `_v4` entry point from `... + V4_SITE_BASE + 1` and
/// those of its `_rows` entry point from `... + ROWS_SITE_BASE + 1`, so the
/// one failure word names the kernel and entry point that failed.
pub(crate) const KERNEL_SITES: i32 = 1_000_000;
/// Offset of the `_v4` entry points' sites within a kernel's.
pub(crate) const V4_SITE_BASE: i32 = 100_000;
/// Offset of the `_rows` entry points' sites within a kernel's.
pub(crate) const ROWS_SITE_BASE: i32 = 200_000;
/// Offset of the `_mm` entry points' sites within a kernel's.
pub(crate) const MM_SITE_BASE: i32 = 300_000;

/// Per kernel: what the runtime needs to launch it.
#[derive(Clone, Debug)]
pub(crate) struct KernelInfo {
    pub name: String,
    pub sites: Vec<Site>,
    /// Present when a `_v4` entry point exists: its alignment conditions
    /// ([`tile_plan::kernel_ir::quads_aligned`] decides at launch sizes).
    pub v4: Option<Vec<QuadCondition>>,
    pub v4_sites: Vec<String>,
    /// Present when a `_rows` entry point exists: the lowering's entry
    /// (its rows size the dynamic shared memory; [`RowEntry::stages`]
    /// decides at launch sizes whether it runs).
    pub rows: Option<RowEntry>,
    /// Failure sites of the `_rows` entry point.
    pub rows_sites: Vec<Site>,
    /// Present when a `_mm` entry point exists (a contraction): its
    /// columns' range, which sizes the grid with the rows.
    pub mm: Option<MmGrid>,
    /// Failure sites of the `_mm` entry points (or the `_att` ones).
    pub mm_sites: Vec<Site>,
    /// An attention head's `_att` entry points, when it has them: what
    /// sizes their launches.
    pub att: Option<AttEntries>,
    /// Whether a `_fin` entry point follows (a full reduction's second
    /// stage; its sites are the plain entry point's).
    pub fin: bool,
    /// [`LoweredKernel::check_then_wait`]: refused at sizes where a check
    /// may fail.
    pub check_then_wait: bool,
}

/// The ranges that size a contraction's grid ([`KernelInfo::mm`]).
#[derive(Clone, Debug)]
pub(crate) struct MmGrid {
    /// The product's columns.
    pub cols: (tile_ir::Expr, tile_ir::Expr),
    /// A batched product's rows (the kernel's rows are its batches);
    /// `None` when the kernel's rows are the product's.
    pub rows: Option<(tile_ir::Expr, tile_ir::Expr)>,
}

/// An attention head's entry points ([`KernelInfo::att`]).
#[derive(Clone, Debug)]
pub(crate) struct AttEntries {
    /// Query rows per block and output columns per pass of each, in the
    /// order printed (`_att64`, `_att32`; staged: `_att64x128`,
    /// `_att64x64`, `_att32x128`, `_att32x64`; the 32-row ones alone for
    /// `f64`).
    pub shapes: Vec<(i64, i64)>,
    /// The staged entry points ([`Tiling::att_staged`]), which take
    /// dynamic shared memory.
    pub staged: bool,
    /// The dot products' depth and the output columns' range: with the
    /// rows and columns, they size the dynamic shared memory
    /// ([`crate::print_attention_staged::shared_bytes`]).
    pub depth: (tile_ir::Expr, tile_ir::Expr),
    pub cols: (tile_ir::Expr, tile_ir::Expr),
    /// Bytes per element (8 for `f64`, else 4).
    pub elem_bytes: i64,
}

/// The whole CUDA file for a plan.
pub(crate) struct Emitted {
    pub source: String,
    pub kernels: Vec<KernelInfo>,
}

/// What `tile emit` prints and `tile bench` runs.
pub(crate) const DEFAULT_UNROLL: Unroll = Unroll {
    quads: 1,
    rows: crate::options::DEFAULT_ROW_UNROLL,
    held: crate::options::DEFAULT_ROW_HOLD,
};

/// How contractions' and attention heads' tiled entry points print
/// ([`crate::CudaOptions::tiles`], `allow_tf32`, `mm_blocks`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tiling {
    /// Print them at all.
    pub on: bool,
    /// `f32` products on TF32 tensor cores (the user's `--allow-tf32`).
    pub tf32: bool,
    /// Blocks per multiprocessor the 128-tile entry point's launch
    /// bounds ask for; `None`: the default ([`mm_blocks`]).
    pub mm_blocks: Option<u32>,
    /// Attention heads through the staged entry points
    /// (`print_attention_staged.rs`; `TILE_CUDA_ATT_STAGED=1`).
    pub att_staged: bool,
}

/// What `tile emit` prints: tiled entry points, exact FP32.
pub(crate) const DEFAULT_TILING: Tiling = Tiling {
    on: true,
    tf32: false,
    mm_blocks: None,
    att_staged: false,
};

/// Blocks of 256 threads per multiprocessor the `_mm` entry point's
/// launch bounds ask for, unless the options say: one for FP32 and `f64`
/// (their 64 accumulators a thread spilled under two blocks' 128
/// registers, ptxas on sm_90), two on tensor cores (128 registers, no
/// spills).
fn mm_blocks(tiling: Tiling, tf32: bool) -> u32 {
    tiling.mm_blocks.unwrap_or(if tf32 { 2 } else { 1 })
}

/// Prints the CUDA C for `plan`, tiled entry points as `tiling` says.
pub(crate) fn emit(plan: &Plan, unroll: Unroll, tiling: Tiling) -> Result<Emitted, CudaError> {
    let (tiles, tf32) = (tiling.on, tiling.tf32);
    let unroll = Unroll {
        quads: unroll.quads.max(1),
        rows: unroll.rows.max(1),
        held: unroll.held,
    };
    let program = &plan.program;
    // Built once: each kernel's printing then costs its own size.
    let index = tile_ir::ParamIndex::of(program);
    let mut source = dialect::CUDA.file_header(&program.name, plan.kernels.len());
    source.push_str(crate::prelude::PRELUDE);
    let mut kernels = Vec::new();
    if plan.kernels.len() >= (i32::MAX / KERNEL_SITES) as usize {
        return Err(CudaError::Unsupported(format!(
            "`{}` has {} kernels (at most {})",
            program.name,
            plan.kernels.len(),
            i32::MAX / KERNEL_SITES - 1
        )));
    }
    let target = tile_plan::kernel_ir::Target::cuda(unroll.held).with_tiles(tiles);
    for (n, k) in plan.kernels.iter().enumerate() {
        let base = n as i32 * KERNEL_SITES;
        // Every choice is the lowering's: the entry points, the rows they
        // stage or hold, the loops whose quads load before they store.
        let lowered = tile_plan::lower_kernel(program, &index, k, target);
        let printed = kernel(program, &index, k, &lowered, Entry::Plain, base, unroll);
        if !printed.errors.is_empty() {
            return Err(CudaError::Unsupported(format!(
                "kernel {} of `{}`: {}",
                k.name,
                program.name,
                printed.errors.join("; ")
            )));
        }
        source.push('\n');
        source.push_str(&printed.code);
        let mut info = KernelInfo {
            name: symbol(k),
            sites: printed.sites,
            v4: None,
            v4_sites: vec![],
            rows: None,
            rows_sites: vec![],
            mm: None,
            mm_sites: vec![],
            att: None,
            fin: k.mapping == Mapping::FullReduction,
            check_then_wait: lowered.check_then_wait,
        };
        if let Some((conditions, sites)) = lowered.quads() {
            {
                let printed = kernel(program, &index, k, &lowered, Entry::Vec4, base, unroll);
                if printed.errors.is_empty() {
                    source.push('\n');
                    source.push_str(&printed.code);
                    info.v4 = Some(conditions.to_vec());
                    info.v4_sites = sites.to_vec();
                    // Its ragged tail is printed first, so its checks
                    // number as the plain entry point's; the lanes'
                    // scalar checks (loads that do not move with the
                    // innermost variable, divisions) follow them.
                    let n = info.sites.len();
                    if printed.sites.len() > n && printed.sites[..n] == info.sites[..] {
                        info.sites.extend_from_slice(&printed.sites[n..]);
                    }
                }
            }
        }
        {
            if let Some(plan) = lowered.rows() {
                let printed = kernel(
                    program,
                    &index,
                    k,
                    &lowered,
                    Entry::Rows,
                    base + ROWS_SITE_BASE,
                    unroll,
                );
                if printed.errors.is_empty() {
                    source.push('\n');
                    source.push_str(&printed.code);
                    info.rows = Some(plan.clone());
                    info.rows_sites = printed.sites;
                }
            }
        }
        if let Some(c) = &lowered.contraction {
            // Both tile sizes print the same epilogue, so their sites
            // number alike.
            let printed: Vec<_> = crate::print_contraction::TILES
                .iter()
                .map(|&t| {
                    kernel(
                        program,
                        &index,
                        k,
                        &lowered,
                        {
                            let mma = tf32 && c.dtype == tile_ir::DType::F32;
                            Entry::Tiled(t, mma, mm_blocks(tiling, mma))
                        },
                        base + MM_SITE_BASE,
                        unroll,
                    )
                })
                .collect();
            if printed.iter().all(|p| p.errors.is_empty()) {
                for p in &printed {
                    source.push('\n');
                    source.push_str(&p.code);
                }
                info.mm = Some(MmGrid {
                    cols: (c.col.lo.clone(), c.col.hi.clone()),
                    rows: c
                        .batch
                        .as_ref()
                        .map(|_| (c.row.lo.clone(), c.row.hi.clone())),
                });
                info.mm_sites = printed[0].sites.clone();
            }
        }
        if let Some(a) = &lowered.attention {
            // Every size prints the same statements in the same order, so
            // their sites number alike (the `_mm` range: a kernel is a
            // contraction or an attention head, not both).
            let dtype = program
                .params
                .iter()
                .find(|q| q.name == a.q.buf)
                .map_or(tile_ir::DType::F32, |q| q.dtype);
            let shapes = if tiling.att_staged {
                crate::print_attention_staged::entries(dtype)
            } else {
                crate::print_attention::entries(dtype)
            };
            let printed: Vec<_> = shapes
                .iter()
                .map(|&shape| {
                    kernel(
                        program,
                        &index,
                        k,
                        &lowered,
                        Entry::Attention(shape, tiling.att_staged),
                        base + MM_SITE_BASE,
                        unroll,
                    )
                })
                .collect();
            if printed.iter().all(|p| p.errors.is_empty()) {
                for p in &printed {
                    source.push('\n');
                    source.push_str(&p.code);
                }
                info.att = Some(AttEntries {
                    shapes: shapes.to_vec(),
                    staged: tiling.att_staged,
                    depth: (a.depth.lo.clone(), a.depth.hi.clone()),
                    cols: (a.col.lo.clone(), a.col.hi.clone()),
                    elem_bytes: if dtype == tile_ir::DType::F64 { 8 } else { 4 },
                });
                info.mm_sites = printed[0].sites.clone();
            }
        }
        kernels.push(info);
    }
    Ok(Emitted { source, kernels })
}

/// The symbol of a kernel's scalar entry point.
pub(crate) fn symbol(k: &Kernel) -> String {
    format!("tile_{}", k.name)
}

/// Which entry point of a kernel to print.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// The general one (`tile_kN`).
    Plain,
    /// Four elements per thread with 16-byte accesses (`tile_kN_v4`).
    Vec4,
    /// Rows staged in shared memory (`tile_kN_rows`).
    Rows,
    /// A contraction's tiles of products (`tile_kN_mm` for 128 x 128,
    /// `tile_kN_mm64` for 64 x 64), on tensor cores in TF32 where the
    /// second field allows it (and the contraction is `f32`); the third
    /// is the 128-tile entry point's blocks per multiprocessor.
    Tiled(i64, bool, u32),
    /// An attention head's blocks of query rows (`tile_kN_att{R}`, or
    /// staged `tile_kN_att{R}x{C}`), by rows per block and output columns
    /// per pass, and whether staged.
    Attention((i64, i64), bool),
}

fn kernel(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
    lowered: &LoweredKernel,
    entry: Entry,
    site_base: i32,
    unroll: Unroll,
) -> tile_emit::Printed {
    let v4 = entry == Entry::Vec4;
    // The `_rows` entry point's plan; its scratch rows are parameters of
    // the program the printer sees.
    let rows = match entry {
        Entry::Rows => lowered.rows(),
        _ => None,
    };
    let extended = match &rows {
        Some(r) => tile_plan::with_scratch(program, &r.scratch),
        None => std::borrow::Cow::Borrowed(program),
    };
    // A full reduction's parts, built by tile-plan.
    let full = k.full_parts().map(FullPrint);
    // `extended` is `program` or `program` with scratch rows appended:
    // `index` serves both.
    let mut p = Printer::with_index(&dialect::CUDA, &extended, index);
    p.set_site_base(site_base as u32);
    let over = k.over();
    p.line(format!(
        "/* {}{}: {}{}; stores {}; reads {} */",
        k.name,
        match entry {
            Entry::Plain => "",
            Entry::Vec4 => " (4 elements per thread, 16-byte accesses)",
            Entry::Rows => " (rows staged in shared memory)",
            Entry::Tiled(_, false, _) => " (a tile of products per block, then the epilogue)",
            Entry::Tiled(_, true, _) =>
                " (a tile of products per block, TF32 tensor cores for f32, then the epilogue)",
            Entry::Attention(..) =>
                " (attention: a block of query rows per block, scores in registers)",
        },
        k.mapping.name(),
        over,
        k.stores.join(", "),
        k.reads.join(", ")
    ));
    let name = match entry {
        Entry::Plain => symbol(k),
        Entry::Vec4 => format!("{}_v4", symbol(k)),
        Entry::Rows => format!("{}_rows", symbol(k)),
        Entry::Tiled(128, ..) => format!("{}_mm", symbol(k)),
        Entry::Tiled(t, ..) => format!("{}_mm{t}", symbol(k)),
        Entry::Attention((rows, cols), true) => format!("{}_att{rows}x{cols}", symbol(k)),
        Entry::Attention((rows, _), false) => format!("{}_att{rows}", symbol(k)),
    };
    // Tiled entry points hold tiles in registers: two blocks of 256
    // threads per multiprocessor (at most 128 registers each), except
    // the 128 x 128 products' entry point, as [`mm_blocks`] says.
    let bounds = match entry {
        Entry::Tiled(128, _, blocks) => format!(
            "__launch_bounds__({}, {blocks}) ",
            crate::print_contraction::THREADS
        ),
        // The staged 64-row attention entry points spilled 40 and 84
        // bytes under two blocks' 128 registers (ptxas, sm_90).
        Entry::Attention((64, _), true) => format!(
            "__launch_bounds__({}, 1) ",
            crate::print_contraction::THREADS
        ),
        Entry::Tiled(..) | Entry::Attention(..) => format!(
            "__launch_bounds__({}, 2) ",
            crate::print_contraction::THREADS
        ),
        _ => String::new(),
    };
    p.open(format!(
        "extern \"C\" __global__ void {bounds}{name}(const TileArgs a)"
    ));
    p.line("int *err = a.err;");
    let params = k.params_in(program, index);
    p.declare_arguments(&params, &k.stores, &|n| format!("a.S[{n}]"), &|i| {
        format!("a.A[{i}]")
    });
    match k.mapping {
        Mapping::RowReduction if matches!(entry, Entry::Tiled(..) | Entry::Attention(..)) => {
            match (&lowered.contraction, &lowered.attention, entry) {
                (Some(c), _, Entry::Tiled(t, tf32, _)) => {
                    crate::print_contraction::print(&mut p, c, t, tf32)
                }
                (_, Some(a), Entry::Attention(shape, false)) => {
                    crate::print_attention::print(&mut p, k, a, shape)
                }
                (_, Some(a), Entry::Attention(shape, true)) => {
                    crate::print_attention_staged::print(&mut p, k, a, shape)
                }
                _ => p.refuse(format!("kernel {} has no tiled form", k.name)),
            }
        }
        Mapping::ElementGrid | Mapping::Split if v4 => {
            let manual_sites = site_base + V4_SITE_BASE;
            tile_emit::gpu::element_grid_v4(&mut p, k, unroll.quads, manual_sites)
        }
        Mapping::ElementGrid | Mapping::Split => tile_emit::gpu::element_grid(&mut p, k),
        Mapping::RowReduction => {
            tile_emit::gpu::row_reduction(&mut p, k, lowered, rows, &extended, unroll)
        }
        Mapping::ColumnReduction => tile_emit::gpu::column_reduction(&mut p, k, lowered),
        Mapping::FullReduction => match &full {
            Some(f) => f.print_chunks(&mut p, params.len(), program, lowered),
            None => p.line("return; /* not a full reduction */"),
        },
        Mapping::Serial => tile_emit::gpu::one_thread(&mut p, &k.body),
    }
    p.close();
    match &full {
        Some(f) => print_fin(&mut p, k, f, &name, &params),
        None if k.mapping == Mapping::FullReduction => {
            let mut printed = p.finish();
            printed
                .errors
                .push(format!("kernel {} is not a full reduction", k.name));
            return printed;
        }
        None => {}
    }
    p.finish()
}

/// A full reduction's second entry point, `NAME_fin`: the chunks' results
/// combined in order, then the store.
fn print_fin(p: &mut Printer, k: &Kernel, f: &FullPrint, name: &str, params: &[&tile_ir::Param]) {
    p.line(format!(
        "/* {}_fin: the chunks' results combined in order, then the store */",
        k.name
    ));
    p.open(format!(
        "extern \"C\" __global__ void {name}_fin(const TileArgs a)"
    ));
    let depth = p.scope_len();
    p.line("int *err = a.err;");
    p.declare_arguments(params, &k.stores, &|n| format!("a.S[{n}]"), &|i| {
        format!("a.A[{i}]")
    });
    f.print_finish(p, params.len());
    p.truncate_scope(depth);
    p.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every failure id below the `_v4` manual sites that a kernel's source
    /// can write names a recorded site (the lanes' scalar checks too).
    #[test]
    fn every_scalar_check_of_a_v4_entry_point_names_a_site() {
        let text = "program s(x: in f32[M, N], b: in f32[M], y: out f32[M, N]) {\n  for i in 0..M, j in 0..N {\n    y[i, j] = x[i, j] * 2.0 + b[i]\n  }\n}";
        let program = tile_ir::parse_program(text).unwrap();
        let plan = tile_plan::compile(&program, &tile_plan::Options::default()).unwrap();
        let off = Tiling {
            on: false,
            ..DEFAULT_TILING
        };
        let e = emit(&plan, DEFAULT_UNROLL, off).unwrap();
        assert!(e.kernels[0].v4.is_some(), "a _v4 entry point");
        let most = e
            .source
            .split("TILE_FAIL(")
            .skip(1)
            .filter_map(|r| r.split(')').next()?.parse::<usize>().ok())
            .max()
            .unwrap();
        assert!(most > 3, "the lanes check b[i]: {most}");
        assert!(
            most <= e.kernels[0].sites.len(),
            "{most} > {}",
            e.kernels[0].sites.len()
        );
        assert_eq!(e.kernels[0].sites[most - 1].buf, "b");
    }
}
