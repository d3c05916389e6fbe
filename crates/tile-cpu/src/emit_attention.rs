//! An attention head in C (`tile_plan::Form::Attention`). The row slice
//! runs in blocks of [`ROWS`] query rows. For each block:
//! - `tile_gemm_f32` computes the block's dot products `q k^T` into a
//!   per-thread tile, one row of scores per query row;
//! - each row's scores body runs through the printer, on vector lanes:
//!   the score function in place, the maximum, the exponentials in place,
//!   their sum, kept per row;
//! - a second `tile_gemm_f32` multiplies the block's rows of exponentials
//!   by `v`;
//! - each row's output body writes the outputs from those sums.
//!
//! Nothing of size `M x N` is in memory: the tiles hold [`ROWS`] rows.

use crate::emit_contraction::{gemm_name, left, right, scalar, DEPTH, MR};
use tile_emit::Printer;
use tile_ir::{BinOp, Expr};
use tile_plan::{Attention, Kernel, Operand, ScratchRow};

/// Query rows per block (a multiple of the register tile's 6 rows).
const ROWS: i64 = 48;

/// `n` rounded up to a multiple of 32, as a size expression.
fn padded(n: &Expr) -> Expr {
    Expr::binary(
        BinOp::Mul,
        Expr::binary(
            BinOp::Div,
            Expr::binary(BinOp::Add, n.clone(), Expr::Int(31)),
            Expr::Int(32),
        ),
        Expr::Int(32),
    )
}

/// The per-thread buffers an attention kernel allocates, as scratch rows
/// (so the host sizes them under the memory ceiling before any launch):
/// the scores tile, the weighted sums' tile, the rows' sums, the packed
/// panels.
pub(crate) fn scratch(a: &Attention) -> Vec<ScratchRow> {
    let row = |name: &str, hi: Expr| ScratchRow {
        name: format!("{}_{name}", a.scratch[0].name),
        dtype: a.scratch[0].dtype,
        lo: Expr::Int(0),
        hi,
    };
    let rows = |n: &Expr| Expr::binary(BinOp::Mul, Expr::Int(ROWS), padded(n));
    vec![
        row("scores", rows(&a.key.hi)),
        row("sums", rows(&a.col.hi)),
        row("totals", Expr::Int(64)),
        row(
            "packed_b",
            Expr::Int(DEPTH * tile_plan::CONTRACTION_COLUMNS),
        ),
        row("packed_a", Expr::Int(DEPTH * MR)),
    ]
}

/// Prints the body of an attention kernel's C function (its arguments
/// already declared): `k`'s row slice `[lo, hi)`.
pub(crate) fn print(p: &mut Printer, k: &Kernel, a: &Attention) {
    let Some(row) = k.domain.first() else {
        p.refuse(format!("attention kernel {} has no row variable", k.name));
        return;
    };
    let cols = tile_plan::CONTRACTION_COLUMNS;
    p.line(format!(
        "const int64_t dl0 = {}, dn0 = {};",
        p.size_expr(&row.lo),
        p.extent(&row.lo, &row.hi)
    ));
    p.line("if (lo >= hi || dn0 <= 0) return;");
    p.set_line(a.line);
    p.line(format!(
        "const int64_t tile_n = {}, tile_d = {}, tile_e = {};",
        p.extent(&a.key.lo, &a.key.hi),
        p.extent(&a.depth.lo, &a.depth.hi),
        p.extent(&a.col.lo, &a.col.hi)
    ));
    p.line("const int64_t tile_lds = (tile_n + 31) / 32 * 32, tile_ldo = (tile_e + 31) / 32 * 32;");
    let site = p.new_site(&a.scratch[0].name, "scratch");
    let alloc = p.helper_call("tile_scratch");
    let (elem, size) = scalar(a.scratch[0].dtype);
    let gemm = p.helper_call(gemm_name(a.scratch[0].dtype));
    let packed = DEPTH * cols + DEPTH * MR;
    p.line(format!(
        "char *const tile_scr = (char *){alloc}((size_t)(({ROWS} * tile_lds + {ROWS} * tile_ldo + 64 + {packed}) * {size}) + 64);"
    ));
    p.line(format!("if (!tile_scr) TILE_FAIL({site});"));
    p.line(format!("{elem} *const tile_s = ({elem} *)tile_scr;"));
    p.line(format!(
        "{elem} *const tile_o = tile_s + {ROWS} * tile_lds;"
    ));
    p.line(format!(
        "{elem} *const tile_z = tile_o + {ROWS} * tile_ldo;"
    ));
    p.line(format!("{elem} *const tile_pb = tile_z + 64;"));
    p.line(format!(
        "{elem} *const tile_pa = tile_pb + {};",
        DEPTH * cols
    ));
    let ptr = |op: &Operand| Printer::ptr_name(&op.buf);
    let (q_at, q_rs, q_ks) = left(&a.q, &ptr(&a.q), "tile_ib");
    let (k_at, k_ks, k_cs) = right(&a.k, &ptr(&a.k), "tile_jb");
    let (v_at, v_ks, v_cs) = right(&a.v, &ptr(&a.v), "tile_cb");
    let (scores, sums, output) = (&a.scratch[0], &a.scratch[1], &a.scratch[2]);
    p.line("const int64_t rs = dl0 + lo, re = dl0 + hi;");
    p.open(format!(
        "for (int64_t tile_ib = rs; tile_ib < re; tile_ib += {ROWS})"
    ));
    p.line(format!(
        "const int64_t tile_ie = re - tile_ib < {ROWS} ? re : tile_ib + {ROWS};"
    ));
    // The block's dot products, 512 keys at a time.
    p.open(format!(
        "for (int64_t tile_jb = 0; tile_jb < tile_n; tile_jb += {cols})"
    ));
    p.line(format!(
        "const int64_t tile_je = tile_n - tile_jb < {cols} ? tile_n : tile_jb + {cols};"
    ));
    p.line(format!(
        "{gemm}(tile_ie - tile_ib, tile_je - tile_jb, tile_d, {q_at}, {q_rs}, {q_ks}, {k_at}, {k_ks}, {k_cs}, tile_s + tile_jb, tile_lds, tile_pb, tile_pa);"
    ));
    p.close();
    // Each row's scores, maximum, exponentials and sum.
    each_row(
        p,
        &row.name,
        &[
            (scores, "tile_s + (tile_ii - tile_ib) * tile_lds"),
            (sums, "tile_z + (tile_ii - tile_ib)"),
        ],
        &a.scores,
    );
    // The block's weighted sums of the rows of v, 512 columns at a time.
    p.open(format!(
        "for (int64_t tile_cb = 0; tile_cb < tile_e; tile_cb += {cols})"
    ));
    p.line(format!(
        "const int64_t tile_ce = tile_e - tile_cb < {cols} ? tile_e : tile_cb + {cols};"
    ));
    p.line(format!(
        "{gemm}(tile_ie - tile_ib, tile_ce - tile_cb, tile_n, tile_s, tile_lds, 1, {v_at}, {v_ks}, {v_cs}, tile_o + tile_cb, tile_ldo, tile_pb, tile_pa);"
    ));
    p.close();
    each_row(
        p,
        &row.name,
        &[
            (output, "tile_o + (tile_ii - tile_ib) * tile_ldo"),
            (sums, "tile_z + (tile_ii - tile_ib)"),
        ],
        &a.output,
    );
    p.close();
}

/// Runs `body` on each row of the block, with each scratch row's pointer
/// set to that row's part of its tile.
fn each_row(p: &mut Printer, row: &str, rows: &[(&ScratchRow, &str)], body: &[tile_ir::Stmt]) {
    p.open("for (int64_t tile_ii = tile_ib; tile_ii < tile_ie; tile_ii++)");
    let depth = p.scope_len();
    for (s, at) in rows {
        if let Some(q) = p.param(&s.name).cloned() {
            p.declare_param(&q, true, &format!("({at})"));
        }
    }
    p.loop_level(row, "tile_ii", "tile_ii + 1", body, false);
    p.truncate_scope(depth);
    p.close();
}
