//! A contraction's tiled entry points, `tile_kN_mm` and `tile_kN_mm64`
//! (`LoweredKernel::contraction` on the CUDA target). Each block of 256
//! threads computes a tile of 128 x 128 (or 64 x 64) products. The two
//! operands' slices of [`DEPTH`] `k` pass through two shared-memory
//! buffers: while the block works on one, the next slice is loaded from
//! global memory into registers and then stored into the other, so one
//! barrier per slice suffices. Each thread sums an 8 x 8 (or 4 x 4)
//! register tile of products over `k` in order, one accumulator per
//! product (`fmaf`, exact FP32: no tensor cores), reading its rows and
//! columns from shared memory as 16-byte vectors. Then each thread runs
//! the epilogue ([`tile_plan::Contraction::per_element`]) on each of its
//! products inside the matrix, through the printer, so the epilogue's
//! checks and failure sites are the plain entry point's kind.
//!
//! Grid: `x` over blocks of columns, `y` over blocks of rows
//! (`configure.rs`).

use tile_emit::Printer;
use tile_ir::DType;
use tile_plan::{Contraction, Kernel, Operand};

/// Rows and columns of products per block: the `_mm` entry point's, and
/// the `_mm64` one's for grids too small to fill the GPU.
pub(crate) const TILES: [i64; 2] = [128, 64];
/// `k` per shared-memory slice.
const DEPTH: i64 = 8;
/// Threads per block.
pub(crate) const THREADS: u32 = 256;
/// Elements of padding after each shared row of a slice: staging stores
/// that walk `k` fastest land in distinct banks (row stride 4 banks
/// apart), and rows stay 16-byte aligned.
const PAD: i64 = 4;

/// The pointer of an operand and the C expression of its element at
/// (`outer`, `k`) (the left operand's row or the right one's column):
/// row-major boxes from 0, indexed `[outer, k]` (left, not transposed;
/// right, transposed) or `[k, outer]`.
pub(crate) fn element(op: &Operand, outer_first: bool, outer: &str, k: &str) -> String {
    let (ptr, cols) = (Printer::ptr_name(&op.buf), Printer::box_n(&op.buf, 1));
    if outer_first {
        format!("{ptr}[({outer}) * {cols} + ({k})]")
    } else {
        format!("{ptr}[({k}) * {cols} + ({outer})]")
    }
}

/// Prints the body of `tile_kN_mm` (`tile` 128) or `tile_kN_mm64` (`tile`
/// 64), its arguments already declared. Each of the 16 x 16 threads holds
/// `tile / 16` rows by as many columns: groups of 4 consecutive rows (and
/// columns) 64 apart, so its shared-memory reads are 16-byte vectors.
pub(crate) fn print(p: &mut Printer, k: &Kernel, c: &Contraction, tile: i64) {
    let per = tile / 16;
    let stage = tile * DEPTH / THREADS as i64;
    let Some(row) = k.domain.first() else {
        p.refuse(format!("contraction kernel {} has no row variable", k.name));
        return;
    };
    let f64 = c.dtype == DType::F64;
    let (elem, zero, fma) = if f64 {
        ("double", "0.0", "fma")
    } else {
        ("float", "0.0f", "fmaf")
    };
    p.line(format!(
        "const long long tile_m = {}, tile_n = {}, tile_k = {};",
        p.extent(&row.lo, &row.hi),
        p.extent(&c.col.lo, &c.col.hi),
        p.extent(&c.k.lo, &c.k.hi)
    ));
    p.line(format!(
        "const long long tile_r0 = (long long)blockIdx.y * {tile}, tile_c0 = (long long)blockIdx.x * {tile};"
    ));
    p.line("if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;");
    let width = tile + PAD;
    p.line(format!(
        "__shared__ __align__(16) {elem} tile_as[2][{DEPTH}][{width}], tile_bs[2][{DEPTH}][{width}];"
    ));
    p.line("const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;");
    p.line(format!("{elem} tile_acc[{per}][{per}];"));
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {per}; tile_r++)"));
    p.line("#pragma unroll");
    p.line(format!(
        "for (int tile_q = 0; tile_q < {per}; tile_q++) tile_acc[tile_r][tile_q] = {zero};"
    ));
    p.close();
    // Staging: `stage` elements of each operand per thread, consecutive
    // threads on consecutive addresses (along k for a row-major left
    // operand, along the rows otherwise; likewise for the right operand).
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
    p.line(format!("{elem} tile_ra[{stage}], tile_rb[{stage}];"));
    // Where staging element `tile_s` of this thread sits in a slice.
    let coords = |p: &mut Printer| {
        p.line(format!("const int tile_e = tile_t + tile_s * {THREADS};"));
        if a_k_fast {
            p.line(format!(
                "const int tile_ar = tile_e / {DEPTH}, tile_ak = tile_e % {DEPTH};"
            ));
        } else {
            p.line(format!(
                "const int tile_ak = tile_e / {tile}, tile_ar = tile_e % {tile};"
            ));
        }
        if b_col_fast {
            p.line(format!(
                "const int tile_bk = tile_e / {tile}, tile_bc = tile_e % {tile};"
            ));
        } else {
            p.line(format!(
                "const int tile_bc = tile_e / {DEPTH}, tile_bk = tile_e % {DEPTH};"
            ));
        }
    };
    // The slice from `k0` into registers (`tile_ra`, `tile_rb`).
    let fetch = |p: &mut Printer, k0: &str| {
        p.open("");
        p.line(format!("const long long tile_kf = {k0};"));
        p.line("#pragma unroll");
        p.open(format!("for (int tile_s = 0; tile_s < {stage}; tile_s++)"));
        coords(p);
        p.line(format!(
            "tile_ra[tile_s] = (tile_r0 + tile_ar < tile_m && tile_kf + tile_ak < tile_k) ? {a_at} : {zero};"
        ));
        p.line(format!(
            "tile_rb[tile_s] = (tile_c0 + tile_bc < tile_n && tile_kf + tile_bk < tile_k) ? {b_at} : {zero};"
        ));
        p.close();
        p.close();
    };
    // The registers into shared buffer `buf`, `k`-major.
    let store = |p: &mut Printer, buf: &str| {
        p.line("#pragma unroll");
        p.open(format!("for (int tile_s = 0; tile_s < {stage}; tile_s++)"));
        coords(p);
        p.line(format!(
            "tile_as[{buf}][tile_ak][tile_ar] = tile_ra[tile_s];"
        ));
        p.line(format!(
            "tile_bs[{buf}][tile_bk][tile_bc] = tile_rb[tile_s];"
        ));
        p.close();
    };
    fetch(p, "0");
    store(p, "0");
    p.line("__syncthreads();");
    p.open(format!(
        "for (long long tile_k0 = 0; tile_k0 < tile_k; tile_k0 += {DEPTH})"
    ));
    p.line(format!(
        "const int tile_cur = (int)((tile_k0 / {DEPTH}) & 1);"
    ));
    p.line(format!(
        "const bool tile_more = tile_k0 + {DEPTH} < tile_k;"
    ));
    p.open("if (tile_more)");
    fetch(p, &format!("tile_k0 + {DEPTH}"));
    p.close();
    // Each thread's rows are groups of 4 (`tile_ty * 4` on, 64 apart), its
    // columns likewise from `tile_tx * 4`: 16-byte shared reads, a warp's
    // 16 column groups side by side and 2 row groups (broadcasts).
    p.line("#pragma unroll");
    p.open(format!(
        "for (int tile_kk = 0; tile_kk < {DEPTH}; tile_kk++)"
    ));
    p.line(format!("{elem} tile_fa[{per}], tile_fb[{per}];"));
    p.line("#pragma unroll");
    p.open(format!(
        "for (int tile_g = 0; tile_g < {}; tile_g++)",
        per / 4
    ));
    if f64 {
        p.line("#pragma unroll");
        p.line("for (int tile_u = 0; tile_u < 4; tile_u++) tile_fa[tile_g * 4 + tile_u] = tile_as[tile_cur][tile_kk][tile_g * 64 + tile_ty * 4 + tile_u];");
        p.line("#pragma unroll");
        p.line("for (int tile_u = 0; tile_u < 4; tile_u++) tile_fb[tile_g * 4 + tile_u] = tile_bs[tile_cur][tile_kk][tile_g * 64 + tile_tx * 4 + tile_u];");
    } else {
        p.line("const float4 tile_va = *reinterpret_cast<const float4 *>(&tile_as[tile_cur][tile_kk][tile_g * 64 + tile_ty * 4]);");
        p.line("const float4 tile_vb = *reinterpret_cast<const float4 *>(&tile_bs[tile_cur][tile_kk][tile_g * 64 + tile_tx * 4]);");
        p.line("tile_fa[tile_g * 4] = tile_va.x; tile_fa[tile_g * 4 + 1] = tile_va.y; tile_fa[tile_g * 4 + 2] = tile_va.z; tile_fa[tile_g * 4 + 3] = tile_va.w;");
        p.line("tile_fb[tile_g * 4] = tile_vb.x; tile_fb[tile_g * 4 + 1] = tile_vb.y; tile_fb[tile_g * 4 + 2] = tile_vb.z; tile_fb[tile_g * 4 + 3] = tile_vb.w;");
    }
    p.close();
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {per}; tile_r++)"));
    p.line("#pragma unroll");
    p.line(format!("for (int tile_q = 0; tile_q < {per}; tile_q++) tile_acc[tile_r][tile_q] = {fma}(tile_fa[tile_r], tile_fb[tile_q], tile_acc[tile_r][tile_q]);"));
    p.close();
    p.close();
    // The next slice into the other buffer, which every thread finished
    // reading before the previous barrier.
    p.open("if (tile_more)");
    store(p, "tile_cur ^ 1");
    p.close();
    p.line("__syncthreads();");
    p.close();
    // The epilogue, per product inside the matrix.
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {per}; tile_r++)"));
    p.line("const long long tile_i = tile_r0 + (tile_r / 4) * 64 + tile_ty * 4 + tile_r % 4;");
    p.line("if (tile_i >= tile_m) continue;");
    p.line("#pragma unroll");
    p.open(format!("for (int tile_q = 0; tile_q < {per}; tile_q++)"));
    p.line("const long long tile_j = tile_c0 + (tile_q / 4) * 64 + tile_tx * 4 + tile_q % 4;");
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
