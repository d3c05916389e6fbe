//! A contraction's tiled entry point, `tile_kN_mm`
//! (`LoweredKernel::contraction` on the CUDA target). Each block of 256
//! threads computes a tile of [`TILE`] x [`TILE`] products: the two
//! operands' slices of [`DEPTH`] `k` are staged in shared memory (the next
//! slice loaded into registers while the current one is used), each
//! thread sums an 8 x 8 register tile of products over `k` in order, one
//! accumulator per product (`fmaf`, exact FP32: no tensor cores). Then
//! each thread runs the epilogue ([`tile_plan::Contraction::per_element`])
//! on each of its products inside the matrix, through the printer, so the
//! epilogue's checks and failure sites are the plain entry point's kind.
//!
//! Grid: `x` over blocks of columns, `y` over blocks of rows
//! (`configure.rs`).

use tile_emit::Printer;
use tile_ir::DType;
use tile_plan::{Contraction, Kernel, Operand};

/// Rows and columns of products per block.
pub(crate) const TILE: i64 = 128;
/// `k` per shared-memory slice.
const DEPTH: i64 = 8;
/// Threads per block.
pub(crate) const THREADS: u32 = 256;

/// The pointer of an operand and the C expression of its element at
/// (`outer`, `k`) (the left operand's row or the right one's column):
/// row-major boxes from 0, indexed `[outer, k]` (left, not transposed;
/// right, transposed) or `[k, outer]`.
fn element(op: &Operand, outer_first: bool, outer: &str, k: &str) -> String {
    let (ptr, cols) = (Printer::ptr_name(&op.buf), Printer::box_n(&op.buf, 1));
    if outer_first {
        format!("{ptr}[({outer}) * {cols} + ({k})]")
    } else {
        format!("{ptr}[({k}) * {cols} + ({outer})]")
    }
}

/// Prints the body of `tile_kN_mm` (its arguments already declared).
pub(crate) fn print(p: &mut Printer, k: &Kernel, c: &Contraction) {
    let Some(row) = k.domain.first() else {
        p.refuse(format!("contraction kernel {} has no row variable", k.name));
        return;
    };
    let elem = if c.dtype == DType::F64 {
        "double"
    } else {
        "float"
    };
    let zero = if c.dtype == DType::F64 { "0.0" } else { "0.0f" };
    let fma = if c.dtype == DType::F64 { "fma" } else { "fmaf" };
    p.line(format!(
        "const long long tile_m = {}, tile_n = {}, tile_k = {};",
        p.extent(&row.lo, &row.hi),
        p.extent(&c.col.lo, &c.col.hi),
        p.extent(&c.k.lo, &c.k.hi)
    ));
    p.line(format!(
        "const long long tile_r0 = (long long)blockIdx.y * {TILE}, tile_c0 = (long long)blockIdx.x * {TILE};"
    ));
    p.line("if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;");
    p.line(format!(
        "__shared__ {elem} tile_as[{DEPTH}][{TILE}], tile_bs[{DEPTH}][{TILE}];"
    ));
    p.line("const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;");
    p.line(format!("{elem} tile_acc[8][8];"));
    p.line("#pragma unroll");
    p.open("for (int tile_r = 0; tile_r < 8; tile_r++)");
    p.line("#pragma unroll");
    p.line(format!(
        "for (int tile_q = 0; tile_q < 8; tile_q++) tile_acc[tile_r][tile_q] = {zero};"
    ));
    p.close();
    // Staging: 4 elements of each operand per thread, consecutive threads
    // on consecutive addresses (along k for a row-major left operand,
    // along the rows otherwise; likewise for the right operand).
    let a_k_fast = !c.a.transposed;
    let b_col_fast = !c.b.transposed;
    let a_at = element(
        &c.a,
        !c.a.transposed,
        "tile_r0 + tile_ar",
        "tile_kf + tile_ak",
    );
    let b_at = element(
        &c.b,
        c.b.transposed,
        "tile_c0 + tile_bc",
        "tile_kf + tile_bk",
    );
    p.line(format!("{elem} tile_ra[4], tile_rb[4];"));
    // The next slice into registers (`tile_ra`, `tile_rb`).
    let fetch = |p: &mut Printer, k0: &str| {
        p.open("");
        p.line(format!("const long long tile_kf = {k0};"));
        p.line("#pragma unroll");
        p.open("for (int tile_s = 0; tile_s < 4; tile_s++)");
        p.line(format!("const int tile_e = tile_t + tile_s * {THREADS};"));
        if a_k_fast {
            p.line(format!(
                "const int tile_ar = tile_e / {DEPTH}, tile_ak = tile_e % {DEPTH};"
            ));
        } else {
            p.line(format!(
                "const int tile_ak = tile_e / {TILE}, tile_ar = tile_e % {TILE};"
            ));
        }
        if b_col_fast {
            p.line(format!(
                "const int tile_bk = tile_e / {TILE}, tile_bc = tile_e % {TILE};"
            ));
        } else {
            p.line(format!(
                "const int tile_bc = tile_e / {DEPTH}, tile_bk = tile_e % {DEPTH};"
            ));
        }
        p.line(format!(
            "tile_ra[tile_s] = (tile_r0 + tile_ar < tile_m && tile_kf + tile_ak < tile_k) ? {a_at} : {zero};"
        ));
        p.line(format!(
            "tile_rb[tile_s] = (tile_c0 + tile_bc < tile_n && tile_kf + tile_bk < tile_k) ? {b_at} : {zero};"
        ));
        p.close();
        p.close();
    };
    fetch(p, "0");
    p.open(format!(
        "for (long long tile_k0 = 0; tile_k0 < tile_k; tile_k0 += {DEPTH})"
    ));
    p.line("__syncthreads();");
    // The registers into shared memory, `k`-major.
    p.line("#pragma unroll");
    p.open("for (int tile_s = 0; tile_s < 4; tile_s++)");
    p.line(format!("const int tile_e = tile_t + tile_s * {THREADS};"));
    if a_k_fast {
        p.line(format!(
            "tile_as[tile_e % {DEPTH}][tile_e / {DEPTH}] = tile_ra[tile_s];"
        ));
    } else {
        p.line(format!(
            "tile_as[tile_e / {TILE}][tile_e % {TILE}] = tile_ra[tile_s];"
        ));
    }
    if b_col_fast {
        p.line(format!(
            "tile_bs[tile_e / {TILE}][tile_e % {TILE}] = tile_rb[tile_s];"
        ));
    } else {
        p.line(format!(
            "tile_bs[tile_e % {DEPTH}][tile_e / {DEPTH}] = tile_rb[tile_s];"
        ));
    }
    p.close();
    p.line("__syncthreads();");
    p.open(format!("if (tile_k0 + {DEPTH} < tile_k)"));
    fetch(p, &format!("tile_k0 + {DEPTH}"));
    p.close();
    // Each thread's rows are tile_ty + 16 r and its columns tile_tx + 16 q:
    // a warp reads 16 consecutive columns (no bank conflicts) and 2 rows
    // (broadcasts).
    p.line("#pragma unroll");
    p.open(format!(
        "for (int tile_kk = 0; tile_kk < {DEPTH}; tile_kk++)"
    ));
    p.line(format!("{elem} tile_fa[8], tile_fb[8];"));
    p.line("#pragma unroll");
    p.line("for (int tile_r = 0; tile_r < 8; tile_r++) tile_fa[tile_r] = tile_as[tile_kk][tile_ty + 16 * tile_r];");
    p.line("#pragma unroll");
    p.line("for (int tile_q = 0; tile_q < 8; tile_q++) tile_fb[tile_q] = tile_bs[tile_kk][tile_tx + 16 * tile_q];");
    p.line("#pragma unroll");
    p.open("for (int tile_r = 0; tile_r < 8; tile_r++)");
    p.line("#pragma unroll");
    p.line(format!("for (int tile_q = 0; tile_q < 8; tile_q++) tile_acc[tile_r][tile_q] = {fma}(tile_fa[tile_r], tile_fb[tile_q], tile_acc[tile_r][tile_q]);"));
    p.close();
    p.close();
    p.close();
    // The epilogue, per product inside the matrix.
    p.line("#pragma unroll");
    p.open("for (int tile_r = 0; tile_r < 8; tile_r++)");
    p.line("const long long tile_i = tile_r0 + tile_ty + 16 * tile_r;");
    p.line("if (tile_i >= tile_m) continue;");
    p.line("#pragma unroll");
    p.open("for (int tile_q = 0; tile_q < 8; tile_q++)");
    p.line("const long long tile_j = tile_c0 + tile_tx + 16 * tile_q;");
    p.line("if (tile_j >= tile_n) continue;");
    let depth = p.scope_len();
    p.line(format!(
        "const long long tile_iv = tile_i + {}, tile_jv = tile_j + {};",
        p.size_expr(&row.lo),
        p.size_expr(&c.col.lo)
    ));
    p.bind_loop(&row.name, "tile_iv");
    p.bind_loop(&c.col.name, "tile_jv");
    let ty = tile_emit::VTy::of(c.dtype);
    p.bind_value(&Contraction::value_name(), "tile_acc[tile_r][tile_q]", ty);
    p.stmts(&c.per_element);
    p.truncate_scope(depth);
    p.close();
    p.close();
}
