//! The C target's thin layer over the printer: one C function per kernel,
//! taking a `[lo, hi)` slice of its work, plus the prelude.
//!
//! Every kernel has the same signature:
//!
//! ```c
//! void tile_k0(int64_t lo, int64_t hi, const int64_t *S, void *const *A, int32_t *err);
//! ```
//!
//! `S` holds the size symbols in the program's order, `A` the data pointers
//! of the kernel's parameters in declaration order (unused inputs are never
//! passed), `err` receives the 1-based failure site of a failed check.
//! - `element_grid` / `split`: `[lo, hi)` is a slice of the flattened
//!   domain (row-major); the slice is walked in row segments, each segment's
//!   innermost variable as a vector loop with a scalar tail.
//! - `row_reduction`: `[lo, hi)` are rows (offsets into the row variable's
//!   range); each row runs the body in program order, inner loops and
//!   reductions on vectors. An inner loop whose reduction reads down
//!   columns (a matrix product) runs in blocks of iterations, each
//!   statement over the block (tile-plan's `interchange_row_loops.rs`).
//! - `column_reduction`: `[lo, hi)` are columns (offsets into the row
//!   variable's range), in blocks of up to 2048 whose statements run
//!   interchanged (tile-plan's `interchange_columns.rs`: for each reduction, rows
//!   outer and the block's columns inner, as vectors, accumulating in
//!   per-thread scratch rows). Bodies the interchange does not cover walk
//!   the slice as one vector loop with a scalar tail: each lane is one
//!   column, its reductions run down the column with one accumulator per
//!   lane.
//! - `full_reduction`: `[lo, hi)` are chunks of the reduction's range
//!   (`tile_plan::full_chunks`), each reduced (on vectors) into `tile_part[c]`
//!   (a `double` array the runtime passes after the parameters); then
//!   `tile_kN_fin(0, chunks, ...)` combines them in order and stores
//!   (`split_full.rs`).
//! - `serial`: the runtime passes `[0, 1)`; the body runs in program order.

use crate::CpuError;
use std::collections::BTreeSet;
use tile_emit::{dialect, Printer, Site, VTy};
use tile_ir::Program;
use tile_plan::kernel_ir::{Form, LoweredKernel, Reassociation, Target};
use tile_plan::{Kernel, Mapping, Plan};

/// What emission produced: the source and, per kernel, its failure sites
/// and its scratch rows.
pub(crate) struct Emitted {
    pub source: String,
    pub sites: Vec<Vec<Site>>,
    pub scratch: Vec<Vec<tile_plan::ScratchRow>>,
}

/// The C symbol of a kernel.
pub(crate) fn symbol(k: &Kernel) -> String {
    format!("tile_{}", k.name)
}

/// Prints the whole C file for `plan`.
pub(crate) fn emit(plan: &Plan) -> Result<Emitted, CpuError> {
    let program = &plan.program;
    // Built once: each kernel's printing then costs its own size.
    let index = tile_ir::ParamIndex::of(program);
    let mut helpers = BTreeSet::new();
    let mut bodies = Vec::new();
    let mut sites = Vec::new();
    let mut scratch = Vec::new();
    for k in &plan.kernels {
        let (printed, rows) = kernel(program, &index, k);
        scratch.push(rows);
        if !printed.errors.is_empty() {
            return Err(CpuError::Unsupported(format!(
                "kernel {} of `{}`: {}",
                k.name,
                program.name,
                printed.errors.join("; ")
            )));
        }
        helpers.extend(printed.helpers);
        bodies.push(printed.code);
        sites.push(printed.sites);
    }
    let mut source = dialect::C.file_header(&program.name, plan.kernels.len());
    source.push_str(&crate::prelude::prelude(
        VTy::of(program.float_type()),
        &helpers,
    ));
    for b in bodies {
        source.push('\n');
        source.push_str(&b);
    }
    Ok(Emitted {
        source,
        sites,
        scratch,
    })
}

fn kernel(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
) -> (tile_emit::Printed, Vec<tile_plan::ScratchRow>) {
    // Every choice is the lowering's: the body (row kernels may compute a
    // reduced value once into a scratch row, softmax's exponentials; column
    // kernels and row kernels' inner loops that read down columns may run
    // in blocks), the loops that run as lanes, the reductions' order.
    let lowered = tile_plan::lower_kernel(program, index, k, Target::CPU);
    let printed = print_kernel(program, index, k, &lowered);
    // A contraction's buffers are its own (emit_contraction.rs), sized
    // like scratch rows.
    let scratch = match (&lowered.contraction, &lowered.attention) {
        (Some(c), _) => crate::emit_contraction::scratch(c),
        (None, Some(a)) => crate::emit_attention::scratch(a),
        (None, None) => lowered.scratch,
    };
    (printed, scratch)
}

fn print_kernel(
    program: &Program,
    index: &tile_ir::ParamIndex,
    k: &Kernel,
    lowered: &LoweredKernel,
) -> tile_emit::Printed {
    let body = &lowered.body[..];
    let scratch = &lowered.scratch[..];
    let blocks = lowered.form == Form::Interchanged;
    // A full reduction's parts, built by tile-plan.
    let full = k.full_parts().map(crate::split_full::FullPrint);
    let mut p = Printer::with_index(&dialect::C, program, index);
    p.add_params(tile_plan::scratch_params(program, scratch));
    p.lane_loops = lowered.lane_loops();
    p.accumulators = match lowered.reassociation {
        Reassociation::Vectors { accumulators } => accumulators as usize,
        Reassociation::InOrder | Reassociation::Threads => 1,
    };
    let inner_lanes = lowered.inner == Some(None);
    let over = k.over();
    p.line(format!(
        "/* {}: {}{}; stores {}; reads {} */",
        k.name,
        k.mapping.name(),
        over,
        list(&k.stores),
        list(&k.reads)
    ));
    p.open(format!(
        "void {}(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err)",
        symbol(k)
    ));
    let params = k.params_in(program, index);
    p.declare_arguments(&params, &k.stores, &|n| format!("S[{n}]"), &|i| {
        format!("A[{i}]")
    });
    match k.mapping {
        Mapping::ColumnReduction if blocks => column_blocks(&mut p, k, body, scratch),
        // Otherwise a column kernel's domain is its one row variable: the
        // element grid's one-variable loop, lanes across columns.
        Mapping::ElementGrid | Mapping::Split | Mapping::ColumnReduction => {
            element_grid(&mut p, k, inner_lanes)
        }
        Mapping::RowReduction if lowered.form == Form::Contraction => match &lowered.contraction {
            Some(c) => crate::emit_contraction::print(&mut p, k, lowered, c, false),
            None => p.refuse(format!("kernel {} has no contraction", k.name)),
        },
        Mapping::RowReduction if lowered.form == Form::Attention => match &lowered.attention {
            Some(a) => crate::emit_attention::print(&mut p, k, a),
            None => p.refuse(format!("kernel {} has no attention", k.name)),
        },
        Mapping::RowReduction => {
            let Some(row) = k.domain.first() else {
                p.line("return; /* a row kernel without a row variable */");
                p.close();
                let mut printed = p.finish();
                printed
                    .errors
                    .push(format!("row kernel {} has no row variable", k.name));
                return printed;
            };
            p.line(format!(
                "const int64_t dl0 = {}, dn0 = {};",
                p.size_expr(&row.lo),
                p.extent(&row.lo, &row.hi)
            ));
            p.line("if (lo >= hi || dn0 <= 0) return;");
            if !scratch.is_empty() {
                p.set_line(k.body.first().map_or(0, |s| s.span().line));
                declare_scratch(&mut p, scratch);
            }
            p.line("const int64_t rs = dl0 + lo, re = dl0 + hi;");
            p.loop_level(&row.name, "rs", "re", body, false);
        }
        Mapping::Serial => {
            p.line("if (lo >= hi) return;");
            p.stmts(body);
        }
        Mapping::FullReduction => match &full {
            Some(f) => f.print_chunks(&mut p, params.len()),
            None => p.line("return; /* not a full reduction */"),
        },
    }
    p.close();
    // A contraction's second function: every row, over chunks of columns
    // (the runtime's pick when the rows are too few to share).
    if let (Form::Contraction, Some(c)) = (lowered.form, &lowered.contraction) {
        p.line(format!(
            "/* {}_cols: every row, over chunks of {} columns */",
            k.name,
            crate::emit_contraction::CHUNK
        ));
        p.open(format!(
            "void {}_cols(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err)",
            symbol(k)
        ));
        let depth = p.scope_len();
        p.declare_arguments(&params, &k.stores, &|n| format!("S[{n}]"), &|i| {
            format!("A[{i}]")
        });
        crate::emit_contraction::print(&mut p, k, lowered, c, true);
        p.truncate_scope(depth);
        p.close();
    }
    if let Some(f) = &full {
        f.print_finish(&mut p, k, &params);
    } else if k.mapping == Mapping::FullReduction {
        let mut printed = p.finish();
        printed
            .errors
            .push(format!("kernel {} is not a full reduction", k.name));
        return printed;
    }
    p.finish()
}

/// The scratch rows of a row kernel: one per-thread buffer (`tile_scratch`,
/// kept between calls) cut into rows of 64-byte multiples.
fn declare_scratch(p: &mut Printer, scratch: &[tile_plan::ScratchRow]) {
    let mut offset = "0".to_string();
    let mut rows = Vec::new();
    for (n, s) in scratch.iter().enumerate() {
        let size = if s.dtype == tile_ir::DType::F64 { 8 } else { 4 };
        let len = p.extent(&s.lo, &s.hi);
        p.line(format!(
            "const int64_t sb{n} = ((({len}) > 0 ? ({len}) : 0) * {size} + 63) & ~(int64_t)63;"
        ));
        rows.push(offset.clone());
        offset = format!("{offset} + sb{n}");
    }
    let site = p.new_site(&scratch[0].name, "scratch");
    let alloc = p.helper_call("tile_scratch");
    p.line(format!(
        "char *const tile_scr = (char *){alloc}((size_t)({offset}) + 64);"
    ));
    p.line(format!("if (!tile_scr) TILE_FAIL({site});"));
    for (s, off) in scratch.iter().zip(rows) {
        if let Some(q) = p.param(&s.name).cloned() {
            p.declare_param(&q, true, &format!("(tile_scr + {off})"));
        }
    }
}

/// A column kernel's slice in blocks of columns, each running the
/// interchanged statements (rows outer, the block's columns inner).
fn column_blocks(
    p: &mut Printer,
    k: &Kernel,
    body: &[tile_ir::Stmt],
    scratch: &[tile_plan::ScratchRow],
) {
    let col = &k.domain[0];
    p.line(format!(
        "const int64_t dl0 = {}, dn0 = {};",
        p.size_expr(&col.lo),
        p.extent(&col.lo, &col.hi)
    ));
    p.line("if (lo >= hi || dn0 <= 0) return;");
    p.set_line(k.body.first().map_or(0, |s| s.span().line));
    declare_scratch(p, scratch);
    let block = tile_plan::COLUMN_BLOCK;
    p.line("const int64_t ce_all = dl0 + hi;");
    p.open(format!(
        "for (int64_t cb = dl0 + lo; cb < ce_all; cb += {block})"
    ));
    p.line(format!(
        "const int64_t ce = ce_all - cb < {block} ? ce_all : cb + {block};"
    ));
    let depth = p.scope_len();
    let (b, e) = tile_plan::column_block_names();
    // Uniform integers of the block: loop-like, so accesses at `j - cb`
    // are checked once per level.
    p.bind_loop(&b, "cb");
    p.bind_loop(&e, "ce");
    p.stmts(body);
    p.truncate_scope(depth);
    p.close();
}

/// An element (or column) kernel's slice; `lanes`: the innermost
/// variable runs as vector lanes.
fn element_grid(p: &mut Printer, k: &Kernel, lanes: bool) {
    let n = k.domain.len();
    if n == 0 {
        p.line("if (lo >= hi) return;");
        p.stmts(&k.body);
        return;
    }
    for (d, v) in k.domain.iter().enumerate() {
        p.line(format!(
            "const int64_t dl{d} = {}, dn{d} = {};",
            p.size_expr(&v.lo),
            p.extent(&v.lo, &v.hi)
        ));
    }
    let empty: Vec<String> = (0..n).map(|d| format!("dn{d} <= 0")).collect();
    p.line(format!("if (lo >= hi || {}) return;", empty.join(" || ")));
    let last = n - 1;
    let inner = &k.domain[last].name;
    if n == 1 {
        p.line("const int64_t js = dl0 + lo, je = dl0 + hi;");
        p.loop_level(inner, "js", "je", &k.body, lanes);
        return;
    }
    // Coordinates of the slice's first element.
    p.line("int64_t t = lo;");
    p.line(format!("int64_t c{last} = lo % dn{last};"));
    p.line(format!("int64_t q = lo / dn{last};"));
    for d in (1..last).rev() {
        p.line(format!("int64_t c{d} = q % dn{d};"));
        p.line(format!("q = q / dn{d};"));
    }
    p.line("int64_t c0 = q;");
    p.open("while (t < hi)");
    let depth = p.scope_len();
    for (d, v) in k.domain[..last].iter().enumerate() {
        let cv = Printer::var_name(&v.name);
        p.line(format!("const int64_t {cv} = dl{d} + c{d};"));
        p.bind_loop(&v.name, &cv);
    }
    p.line(format!(
        "const int64_t seg = dn{last} - c{last} < hi - t ? dn{last} - c{last} : hi - t;"
    ));
    p.line(format!(
        "const int64_t js = dl{last} + c{last}, je = js + seg;"
    ));
    p.loop_level(inner, "js", "je", &k.body, lanes);
    p.truncate_scope(depth);
    p.line("t += seg;");
    p.line(format!("c{last} = 0;"));
    for d in (1..last).rev() {
        p.line(format!("if (++c{d} < dn{d}) continue;"));
        p.line(format!("c{d} = 0;"));
    }
    p.line("++c0;");
    p.close();
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "nothing".to_string()
    } else {
        v.join(", ")
    }
}

/// Bytes of one thread's scratch buffer for a kernel's rows at `sizes`,
/// as the kernel computes them (each row rounded up to 64 bytes, plus 64),
/// in `u128` so no size wraps; `None` when a bound cannot be evaluated.
pub(crate) fn scratch_bytes(
    rows: &[tile_plan::ScratchRow],
    sizes: &tile_ir::Sizes,
) -> Option<u128> {
    if rows.is_empty() {
        return Some(0);
    }
    let mut total: u128 = 64;
    for r in rows {
        let lo = tile_ir::args::eval_int(&r.lo, sizes)? as i128;
        let hi = tile_ir::args::eval_int(&r.hi, sizes)? as i128;
        let size = if r.dtype == tile_ir::DType::F64 { 8 } else { 4 };
        let bytes = (hi - lo).max(0) as u128 * size;
        total += bytes.div_ceil(64) * 64;
    }
    Some(total)
}
