//! A contraction kernel in C (`tile_plan::Form::Contraction`): the row
//! slice in blocks of [`ROWS`] rows by 512 columns; each block's products
//! computed by `tile_gemm_f32` (packed panels of both operands, a register
//! tile of `TILE_GEMM_MR` rows by two vectors of columns, each product
//! summed over `k` in order in one `f32` accumulator) into a scratch tile,
//! then each row's epilogue (the plan's loop over the block's columns,
//! on vector lanes) reading its row of the tile.

use tile_emit::Printer;
use tile_ir::{DType, Expr};
use tile_plan::kernel_ir::LoweredKernel;
use tile_plan::{Contraction, Kernel, Operand, ScratchRow};

/// Rows of products per block (a multiple of the register tile's 6).
pub(crate) const ROWS: i64 = 960;
/// `k` per packed panel.
pub(crate) const DEPTH: i64 = 256;
/// Register tile rows.
pub(crate) const MR: i64 = 6;

/// The per-thread buffers a contraction kernel allocates, as scratch rows
/// (so the host sizes them under the memory ceiling before any launch):
/// the tile of products, the packed panel of the right operand, the
/// packed strip of the left one.
pub(crate) fn scratch(c: &Contraction) -> Vec<ScratchRow> {
    let cols = tile_plan::CONTRACTION_COLUMNS;
    let row = |name: &str, len: i64| ScratchRow {
        name: format!("{}_{name}", c.scratch.name),
        dtype: c.dtype,
        lo: Expr::Int(0),
        hi: Expr::Int(len),
    };
    vec![
        row("tile", ROWS * cols),
        row("packed_b", DEPTH * cols),
        row("packed_a", DEPTH * MR),
    ]
}

/// Columns per work item of a contraction's `_cols` function (a multiple
/// of every register tile's width).
pub(crate) const CHUNK: i64 = 128;

/// Prints the body of a contraction kernel's C function (its arguments
/// already declared): `k`'s row slice `[lo, hi)`, or with `columns` (the
/// `_cols` function, for few rows) every row over the column chunks
/// `[lo, hi)` of [`CHUNK`] columns.
pub(crate) fn print(
    p: &mut Printer,
    k: &Kernel,
    lowered: &LoweredKernel,
    c: &Contraction,
    columns: bool,
) {
    let Some(dom) = k.domain.first() else {
        p.refuse(format!("contraction kernel {} has no row variable", k.name));
        return;
    };
    let cols = tile_plan::CONTRACTION_COLUMNS;
    let (elem, size) = scalar(c.dtype);
    let (tile_b, pack_b, pack_a) = (ROWS * cols * size, DEPTH * cols * size, DEPTH * MR * size);
    p.line(format!(
        "const int64_t dl0 = {}, dn0 = {};",
        p.size_expr(&dom.lo),
        p.extent(&dom.lo, &dom.hi)
    ));
    p.line("if (lo >= hi || dn0 <= 0) return;");
    p.set_line(c.line);
    let site = p.new_site(&c.scratch.name, "scratch");
    let alloc = p.helper_call("tile_scratch");
    p.line(format!(
        "char *const tile_scr = (char *){alloc}((size_t){} + 64);",
        tile_b + pack_b + pack_a
    ));
    p.line(format!("if (!tile_scr) TILE_FAIL({site});"));
    let gemm = p.helper_call(gemm_name(c.dtype));
    p.line(format!("{elem} *const tile_tile = ({elem} *)tile_scr;"));
    p.line(format!(
        "{elem} *const tile_pb = ({elem} *)(tile_scr + {tile_b});"
    ));
    p.line(format!(
        "{elem} *const tile_pa = ({elem} *)(tile_scr + {});",
        tile_b + pack_b
    ));
    p.line(format!(
        "const int64_t tile_n = {}, tile_k = {};",
        p.extent(&c.col.lo, &c.col.hi),
        p.extent(&c.k.lo, &c.k.hi)
    ));
    // The product's rows: the kernel's slice of them, or (`columns`)
    // all of them; in a batched product, the slice (or all) of the
    // batches, each with every row.
    let slice = if columns {
        ("dl0".to_string(), "dl0 + dn0".to_string())
    } else {
        ("dl0 + lo".to_string(), "dl0 + hi".to_string())
    };
    let (rs, re) = match &c.batch {
        Some(_) => {
            p.line(format!(
                "const int64_t tile_hs = {}, tile_he = {};",
                slice.0, slice.1
            ));
            let lo = p.size_expr(&c.row.lo);
            let n = p.extent(&c.row.lo, &c.row.hi);
            (lo.clone(), format!("{lo} + {n}"))
        }
        None => slice,
    };
    p.line(if columns {
        format!("const int64_t rs = {rs}, re = {re}, tile_cs = lo * {CHUNK}, tile_ce = tile_n - tile_cs < (hi - lo) * {CHUNK} ? tile_n : hi * {CHUNK};")
    } else {
        format!("const int64_t rs = {rs}, re = {re}, tile_cs = 0, tile_ce = tile_n;")
    });
    if let Some(h) = &c.batch {
        p.open("for (int64_t tile_h = tile_hs; tile_h < tile_he; tile_h++)");
        p.bind_loop(&h.name, "tile_h");
    }
    // Element (i, k) of the left operand and (k, j) of the right one, as
    // offsets: row-major boxes from 0 (find_contractions requires it), a
    // batched operand's matrix `tile_h` of them.
    let base = |op: &Operand| {
        let ptr = Printer::ptr_name(&op.buf);
        if op.batched {
            format!(
                "({ptr} + tile_h * ({} * {}))",
                Printer::box_n(&op.buf, 1),
                Printer::box_n(&op.buf, 2)
            )
        } else {
            ptr
        }
    };
    let (a_at, a_rs, a_ks) = left(&c.a, &base(&c.a), "tile_ib");
    let (b_at, b_ks, b_cs) = right(&c.b, &base(&c.b), "tile_jb");
    p.open(format!(
        "for (int64_t tile_ib = rs; tile_ib < re; tile_ib += {ROWS})"
    ));
    p.line(format!(
        "const int64_t tile_ie = re - tile_ib < {ROWS} ? re : tile_ib + {ROWS};"
    ));
    p.open(format!(
        "for (int64_t tile_jb = tile_cs; tile_jb < tile_ce; tile_jb += {cols})"
    ));
    p.line(format!(
        "const int64_t tile_je = tile_ce - tile_jb < {cols} ? tile_ce : tile_jb + {cols};"
    ));
    p.line(format!(
        "{gemm}(tile_ie - tile_ib, tile_je - tile_jb, tile_k, {a_at}, {a_rs}, {a_ks}, {b_at}, {b_ks}, {b_cs}, tile_tile, {cols}, tile_pb, tile_pa);"
    ));
    p.open("for (int64_t tile_ii = tile_ib; tile_ii < tile_ie; tile_ii++)");
    let depth = p.scope_len();
    if let Some(q) = p.param(&c.scratch.name).cloned() {
        p.declare_param(
            &q,
            true,
            &format!("(tile_tile + (tile_ii - tile_ib) * {cols})"),
        );
    }
    let (jb, je) = tile_plan::contraction_block_names();
    p.bind_loop(&jb, "tile_jb");
    p.bind_loop(&je, "tile_je");
    p.loop_level(&c.row.name, "tile_ii", "tile_ii + 1", &lowered.body, false);
    p.truncate_scope(depth);
    p.close();
    p.close();
    p.close();
    if c.batch.is_some() {
        p.close();
    }
}

/// The row stride of an operand's matrix: its last dimension's extent (a
/// row-major box from 0).
fn row_len(op: &Operand) -> String {
    Printer::box_n(&op.buf, if op.batched { 2 } else { 1 })
}

/// A left operand from its row `row` on, as `tile_gemm_f32` takes it: the
/// pointer (from `ptr`, its matrix's first element) and the strides of its
/// rows and of `k` (a row-major box from 0, the operand indexed `[row,
/// k]`, or `[k, row]` when transposed).
pub(crate) fn left(op: &Operand, ptr: &str, row: &str) -> (String, String, String) {
    let cols = row_len(op);
    if op.transposed {
        (format!("{ptr} + {row}"), "1".into(), cols)
    } else {
        (format!("{ptr} + {row} * {cols}"), cols, "1".into())
    }
}

/// A right operand from its column `col` on: the pointer (from `ptr`) and
/// the strides of `k` and of its columns (indexed `[k, col]`, or `[col,
/// k]` when transposed).
pub(crate) fn right(op: &Operand, ptr: &str, col: &str) -> (String, String, String) {
    let cols = row_len(op);
    if op.transposed {
        (format!("{ptr} + {col} * {cols}"), "1".into(), cols)
    } else {
        (format!("{ptr} + {col}"), cols, "1".into())
    }
}

/// The C type and byte size of `dtype`'s elements (`f32` or `f64`).
pub(crate) fn scalar(dtype: DType) -> (&'static str, i64) {
    if dtype == DType::F64 {
        ("double", 8)
    } else {
        ("float", 4)
    }
}

/// The helper multiplying blocks of `dtype` (`tile_gemm_f32`,
/// `tile_gemm_f64`).
pub(crate) fn gemm_name(dtype: DType) -> &'static str {
    if dtype == DType::F64 {
        "tile_gemm_f64"
    } else {
        "tile_gemm_f32"
    }
}

/// The C helper `tile_gemm_f32`, or `tile_gemm_f64` (the same code over
/// `double` and `tile_vf64`, whose vectors hold `TILE_L` lanes in an `f64`
/// program).
pub(crate) fn gemm(dtype: DType) -> String {
    if dtype == DType::F64 {
        GEMM.replace("float", "double")
            .replace("tile_vf32", "tile_vf64")
            .replace("0.0f", "0.0")
            .replace("tile_gemm_", "tile_gemm64_")
            .replace("tile_gemm64_f32", "tile_gemm_f64")
            .replace("TILE_GEMM_", "TILE_GEMM64_")
            .replace("f32 accumulator", "f64 accumulator")
    } else {
        GEMM.to_string()
    }
}

/// The C helper computing a block of products (`tile_gemm_f32`).
const GEMM: &str = r#"/* A block of a contraction's products: t[i * ldt + j] = sum over k in
   0..kk, in order, of A(i, k) * B(k, j), for i < mb, j < nb (<= 512), with
   room for whole register tiles (rows up to a multiple of 6, columns of
   TILE_GEMM_NR); A(i, k) = a[i * ars + k * aks], B(k, j) = b[k * bks + j * bcs].
   Both operands are packed (zero-padded) a panel of 256 k at a time; a
   register tile of TILE_GEMM_MR rows by two vectors of columns holds one
   f32 accumulator per product. */
#define TILE_GEMM_MR 6
#define TILE_GEMM_NR (2 * TILE_L)
#define TILE_GEMM_KC 256
static inline tile_vf32 tile_gemm_ld(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline void tile_gemm_st(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }
static inline void tile_gemm_micro(int64_t kc, const float *restrict pa, const float *restrict pb,
                                   int64_t ldb, float *restrict t, int64_t ldt, int first) {
  tile_vf32 c0[TILE_GEMM_MR], c1[TILE_GEMM_MR];
#pragma GCC unroll 6
  for (int r = 0; r < TILE_GEMM_MR; r++) {
    if (first) { c0[r] = (tile_vf32){0}; c1[r] = (tile_vf32){0}; }
    else { c0[r] = tile_gemm_ld(t + r * ldt); c1[r] = tile_gemm_ld(t + r * ldt + TILE_L); }
  }
  for (int64_t k = 0; k < kc; k++) {
    const tile_vf32 b0 = tile_gemm_ld(pb + k * ldb), b1 = tile_gemm_ld(pb + k * ldb + TILE_L);
#pragma GCC unroll 6
    for (int r = 0; r < TILE_GEMM_MR; r++) {
      const tile_vf32 av = (tile_vf32){0} + pa[k * TILE_GEMM_MR + r];
      c0[r] += av * b0;
      c1[r] += av * b1;
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < TILE_GEMM_MR; r++) {
    tile_gemm_st(t + r * ldt, c0[r]);
    tile_gemm_st(t + r * ldt + TILE_L, c1[r]);
  }
}
static void tile_gemm_f32(int64_t mb, int64_t nb, int64_t kk,
                          const float *restrict a, int64_t ars, int64_t aks,
                          const float *restrict b, int64_t bks, int64_t bcs,
                          float *restrict t, int64_t ldt, float *restrict pb, float *restrict pa) {
  if (kk <= 0) {
    for (int64_t i = 0; i < mb; i++)
      for (int64_t j = 0; j < nb; j++) t[i * ldt + j] = 0.0f;
    return;
  }
  /* A few rows read a row-major right operand in place: packing it would
     cost as much as the products (its ragged last panel is still packed). */
  const int direct = bcs == 1 && mb <= 2 * TILE_GEMM_MR;
  for (int64_t pc = 0; pc < kk; pc += TILE_GEMM_KC) {
    const int64_t kc = kk - pc < TILE_GEMM_KC ? kk - pc : TILE_GEMM_KC;
    for (int64_t jr = 0; jr < nb; jr += TILE_GEMM_NR) {
      float *restrict q = pb + jr * kc;
      const int64_t nr = nb - jr < TILE_GEMM_NR ? nb - jr : TILE_GEMM_NR;
      if (direct && nr == TILE_GEMM_NR) continue;
      if (bcs == 1) {
        for (int64_t k = 0; k < kc; k++) {
          const float *restrict s = b + (pc + k) * bks + jr;
          for (int64_t c = 0; c < TILE_GEMM_NR; c++) q[k * TILE_GEMM_NR + c] = c < nr ? s[c] : 0.0f;
        }
      } else {
        for (int64_t c = 0; c < TILE_GEMM_NR; c++) {
          if (c >= nr) { for (int64_t k = 0; k < kc; k++) q[k * TILE_GEMM_NR + c] = 0.0f; continue; }
          const float *restrict s = b + (jr + c) * bcs + pc * bks;
          for (int64_t k = 0; k < kc; k++) q[k * TILE_GEMM_NR + c] = s[k * bks];
        }
      }
    }
    for (int64_t ir = 0; ir < mb; ir += TILE_GEMM_MR) {
      const int64_t mr = mb - ir < TILE_GEMM_MR ? mb - ir : TILE_GEMM_MR;
      if (aks == 1) {
        for (int64_t r = 0; r < TILE_GEMM_MR; r++) {
          if (r >= mr) { for (int64_t k = 0; k < kc; k++) pa[k * TILE_GEMM_MR + r] = 0.0f; continue; }
          const float *restrict s = a + (ir + r) * ars + pc;
          for (int64_t k = 0; k < kc; k++) pa[k * TILE_GEMM_MR + r] = s[k];
        }
      } else {
        for (int64_t k = 0; k < kc; k++) {
          const float *restrict s = a + (pc + k) * aks + ir * ars;
          for (int64_t r = 0; r < TILE_GEMM_MR; r++) pa[k * TILE_GEMM_MR + r] = r < mr ? s[r * ars] : 0.0f;
        }
      }
      for (int64_t jr = 0; jr < nb; jr += TILE_GEMM_NR) {
        if (direct && nb - jr >= TILE_GEMM_NR)
          tile_gemm_micro(kc, pa, b + pc * bks + jr, bks, t + ir * ldt + jr, ldt, pc == 0);
        else
          tile_gemm_micro(kc, pa, pb + jr * kc, TILE_GEMM_NR, t + ir * ldt + jr, ldt, pc == 0);
      }
    }
  }
}"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// Widest register tile's columns (two AVX-512 vectors of `f32`).
    const MAX_NR: i64 = 32;

    #[test]
    fn the_tile_holds_whole_register_tiles() {
        // Register tiles are stored whole: a block's rows round up to a
        // multiple of MR within ROWS, its columns to MAX_NR within 512.
        assert_eq!(ROWS % MR, 0);
        assert_eq!(tile_plan::CONTRACTION_COLUMNS % MAX_NR, 0);
    }
}
