//! An attention head's tiled entry points, `tile_kN_att64` (64 query rows
//! per block) and `tile_kN_att32` (32 rows, where 64-row blocks would
//! leave multiprocessors idle; the only one for `f64`), from
//! `LoweredKernel::attention` on the CUDA target.
//!
//! A block of 256 threads (16 x 16) owns `16 R` query rows; each thread
//! holds `R` rows by 4 keys of each block of 64 keys, and `R` rows by 8
//! output columns. No score is ever stored outside registers and one
//! 64-key block in shared memory:
//!
//! For each block of 128 output columns, one sweep over the keys (an
//! online softmax), 64 keys at a time:
//!
//! 1. The block's dot products as a tiled product (`q` and `k` slices of
//!    32 `d`, 8 for `f64`, in shared memory, each product summed over `d`
//!    in order), then `F` on each (the program's expression, printed with
//!    its checks) and the block's maximum of each row; the 16 threads of a
//!    row combine theirs (`fmax`: any order gives the same value).
//! 2. The row's running maximum `m` grows to include it; what was summed
//!    against the old maximum is scaled by `exp(old - new)` (exactly 1
//!    where it did not grow).
//! 3. The weights `exp(F - m)` (the program's expression) into shared
//!    memory, each thread's share of the row sum, and the weights times
//!    `v`'s rows (16 keys at a time in shared memory), each output summed
//!    over the keys in order.
//!
//! Then the row sum's 16 shares add in a fixed tree (the result is
//! deterministic) and `G` of the weighted sums and the row sum is stored
//! as the program says. A weight against a running maximum differs from
//! the program's (against the row's final maximum) by the rounding of the
//! scale factors: a few units in the last place (and a sum of values near
//! the float type's largest can overflow against a running maximum where
//! it would not against the final one). A row whose scores are all `-inf`
//! gets NaN sums, as the program's `exp(-inf - -inf)` gives, and so does a
//! row with a NaN score, whose weight is NaN against any maximum (it is
//! remembered: while the running maximum is `-inf` weights are taken as
//! 0).

use tile_emit::Printer;
use tile_ir::DType;
use tile_plan::{Attention, Kernel};

use crate::print_contraction::{element, read4, THREADS};

/// Keys per block of keys (16 threads x 4).
const KEYS: i64 = 64;
/// `d` per shared slice of `q` and `k`: 32 for `f32` (four barriers per
/// block of keys at `D = 64`), 8 for `f64` (within 48 KiB of shared
/// memory).
fn depth(f64: bool) -> i64 {
    if f64 {
        8
    } else {
        32
    }
}
/// Keys of `v` per shared slice.
const VKEYS: i64 = 16;
/// Output columns per pass (16 threads x 8).
const COLS: i64 = 128;
/// Padding after each shared row (rows stay 16-byte aligned).
const PAD: i64 = 4;

/// The entry points' query rows per block and output columns per pass
/// (`_att64` and `_att32` for `f32`, `_att32` alone for `f64`, whose
/// 64-row buffers would pass 48 KiB of shared memory).
pub(crate) fn entries(dtype: DType) -> &'static [(i64, i64)] {
    if dtype == DType::F64 {
        &[(32, COLS)]
    } else {
        &[(64, COLS), (32, COLS)]
    }
}

/// Prints the body of an attention entry point with `r` rows per thread
/// (`16 r` per block), its arguments already declared.
pub(crate) fn print(p: &mut Printer, k: &Kernel, a: &Attention, (rows, _): (i64, i64)) {
    let r = rows / 16;
    let Some(row) = k.domain.first() else {
        p.refuse(format!("attention kernel {} has no row variable", k.name));
        return;
    };
    let dtype = p.param(&a.q.buf).map(|q| q.dtype).unwrap_or(DType::F32);
    let f64 = dtype == DType::F64;
    let (elem, zero, fma, fmax, exp, nan, ninf) = if f64 {
        (
            "double",
            "0.0",
            "fma",
            "fmax",
            "exp",
            "__longlong_as_double(0x7ff8000000000000LL)",
            "(-__longlong_as_double(0x7ff0000000000000LL))",
        )
    } else {
        (
            "float",
            "0.0f",
            "fmaf",
            "fmaxf",
            "expf",
            "__int_as_float(0x7fc00000)",
            "(-__int_as_float(0x7f800000))",
        )
    };
    let ty = tile_emit::VTy::of(dtype);
    let dd = depth(f64);
    p.line(format!(
        "const long long att_m = {}, att_n = {}, att_d = {}, att_e = {};",
        p.extent(&row.lo, &row.hi),
        p.extent(&a.key.lo, &a.key.hi),
        p.extent(&a.depth.lo, &a.depth.hi),
        p.extent(&a.col.lo, &a.col.hi)
    ));
    p.line(format!(
        "const long long att_r0 = (long long)blockIdx.x * {rows};"
    ));
    p.line("if (att_r0 >= att_m) return;");
    p.line(format!(
        "__shared__ __align__(16) {elem} att_qs[{dd}][{}], att_ks[{dd}][{}], att_pt[{KEYS}][{}], att_vs[{VKEYS}][{}];",
        rows + PAD,
        KEYS + PAD,
        rows + PAD,
        COLS + PAD
    ));
    p.line("const int att_t = threadIdx.x, att_tx = att_t % 16, att_ty = att_t / 16;");
    let q_at = element(&a.q, !a.q.transposed, "att_r0 + att_qr", "att_d0 + att_qd");
    let k_at = element(&a.k, a.k.transposed, "att_j0 + att_kj", "att_d0 + att_kd");
    let v_at = element(
        &a.v,
        a.v.transposed,
        "att_c0 + att_vc",
        "att_j0 + att_jj0 + att_vk",
    );
    let row_lo = p.size_expr(&row.lo);
    let col_lo = p.size_expr(&a.col.lo);
    // The dot products of this thread's scores in the block of keys at
    // `att_j0`, into `att_s`.
    let scores = |p: &mut Printer| {
        p.line(format!("{elem} att_s[{r}][4];"));
        p.line("#pragma unroll");
        p.line(format!(
            "for (int att_a = 0; att_a < {r}; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = {zero};"
        ));
        p.open(format!(
            "for (long long att_d0 = 0; att_d0 < att_d; att_d0 += {dd})"
        ));
        p.line("__syncthreads();");
        p.open(format!(
            "for (int att_x = att_t; att_x < {}; att_x += {THREADS})",
            rows * dd
        ));
        if a.q.transposed {
            p.line(format!(
                "const int att_qd = att_x / {rows}, att_qr = att_x % {rows};"
            ));
        } else {
            p.line(format!(
                "const int att_qr = att_x / {dd}, att_qd = att_x % {dd};"
            ));
        }
        p.line(format!(
            "att_qs[att_qd][att_qr] = (att_r0 + att_qr < att_m && att_d0 + att_qd < att_d) ? {q_at} : {zero};"
        ));
        p.close();
        p.open(format!(
            "for (int att_x = att_t; att_x < {}; att_x += {THREADS})",
            KEYS * dd
        ));
        if a.k.transposed {
            p.line(format!(
                "const int att_kj = att_x / {dd}, att_kd = att_x % {dd};"
            ));
        } else {
            p.line(format!(
                "const int att_kd = att_x / {KEYS}, att_kj = att_x % {KEYS};"
            ));
        }
        p.line(format!(
            "att_ks[att_kd][att_kj] = (att_j0 + att_kj < att_n && att_d0 + att_kd < att_d) ? {k_at} : {zero};"
        ));
        p.close();
        p.line("__syncthreads();");
        p.line("#pragma unroll");
        p.open(format!("for (int att_kk = 0; att_kk < {dd}; att_kk++)"));
        p.line(format!("{elem} att_fa[{r}], att_fb[4];"));
        p.line("#pragma unroll");
        p.line(format!(
            "for (int att_a = 0; att_a < {r}; att_a++) att_fa[att_a] = att_qs[att_kk][att_ty * {r} + att_a];"
        ));
        read4(p, f64, "att_fb", "0", "att_ks[att_kk][att_tx * 4]");
        p.line("#pragma unroll");
        p.line(format!("for (int att_a = 0; att_a < {r}; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = {fma}(att_fa[att_a], att_fb[att_u], att_s[att_a][att_u]);"));
        p.close();
        p.close();
    };
    // Opens this thread's rows (`att_a`), skipping those past the end,
    // with the row bound and the leading bindings printed.
    let open_row = |p: &mut Printer| open_row(p, r);
    let bind_row = |p: &mut Printer| bind_row(p, a, &row.name, &row_lo);
    // Opens this thread's keys (`att_u`) of the block, with the key bound
    // and the dot product named.
    let open_key = |p: &mut Printer| {
        p.line("#pragma unroll");
        p.open("for (int att_u = 0; att_u < 4; att_u++)");
        p.line("const long long att_j = att_j0 + att_tx * 4 + att_u;");
    };
    let bind_key = |p: &mut Printer| {
        p.bind_loop(&a.key.name, "att_j");
        p.bind_value(&Attention::dot_name(), "att_s[att_a][att_u]", ty);
    };
    // One sweep over the keys per block of 128 output columns: each block
    // of keys' scores, the rows' running maxima, the weights against them
    // into shared memory, the running sums and weighted rows rescaled
    // where a maximum grew.
    p.open(format!(
        "for (long long att_c0 = 0; att_c0 < att_e; att_c0 += {COLS})"
    ));
    // `att_nan`: whether this thread saw a NaN score in the row (its
    // weight is NaN whatever the maximum, so are the row's sums; a weight
    // taken while the running maximum is -inf is 0 instead, below).
    p.line(format!(
        "{elem} att_mx[{r}], att_z[{r}], att_acc[{r}][8]; int att_nan[{r}];"
    ));
    p.line("#pragma unroll");
    p.open(format!("for (int att_a = 0; att_a < {r}; att_a++)"));
    p.line(format!("att_mx[att_a] = {nan};"));
    p.line("att_nan[att_a] = 0;");
    p.line(format!("att_z[att_a] = {zero};"));
    p.line(format!(
        "for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = {zero};"
    ));
    p.close();
    p.open(format!(
        "for (long long att_j0 = 0; att_j0 < att_n; att_j0 += {KEYS})"
    ));
    scores(p);
    let depth = p.scope_len();
    open_row(p);
    // The block's maximum of the row: this thread's keys, then the 16
    // threads of the row (every lane takes part in the shuffles).
    p.line(format!("{elem} att_bm = {nan};"));
    p.open("if (att_i < att_m)");
    bind_row(p);
    open_key(p);
    p.line("if (att_j >= att_n) continue;");
    bind_key(p);
    let (score, _) = p.lower_as(&a.score, ty);
    p.line(format!("const {elem} att_f = {score};"));
    p.line(format!("att_bm = {fmax}(att_bm, att_f);"));
    p.line("att_nan[att_a] |= att_f != att_f;");
    p.close();
    p.close();
    p.truncate_scope(depth);
    p.line(format!(
        "for (int att_o = 8; att_o >= 1; att_o >>= 1) att_bm = {fmax}(att_bm, __shfl_xor_sync(0xffffffffu, att_bm, att_o));"
    ));
    // The new running maximum, and the factor of what was summed against
    // the old one: 0 before the first key (nothing summed) and while the
    // maximum was -inf (nothing was added then, see below); a NaN summed
    // stays NaN.
    p.line(format!(
        "const {elem} att_mn = {fmax}(att_mx[att_a], att_bm);"
    ));
    p.line(format!(
        "const {elem} att_sc = (att_mx[att_a] != att_mx[att_a] || att_mx[att_a] == {ninf}) ? {zero} : {exp}(att_mx[att_a] - att_mn);"
    ));
    p.line("att_mx[att_a] = att_mn;");
    p.line("att_z[att_a] *= att_sc;");
    p.line("#pragma unroll");
    p.line("for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] *= att_sc;");
    // The weights: the program's `exp(F - m)` against the running
    // maximum (0 while it is -inf: against a later finite maximum those
    // keys' weights are 0, except NaN scores, which `att_nan` remembers;
    // a maximum still -inf at the end makes the row NaN, below).
    p.line(format!(
        "{elem} att_p[4] = {{{zero}, {zero}, {zero}, {zero}}};"
    ));
    p.open(format!("if (att_i < att_m && att_mn != {ninf})"));
    bind_row(p);
    p.bind_value(&a.max, "att_mx[att_a]", ty);
    open_key(p);
    p.line("if (att_j >= att_n) continue;");
    bind_key(p);
    let (weight, _) = p.lower_as(&a.weight, ty);
    p.line(format!("att_p[att_u] = {weight};"));
    p.close();
    p.close();
    p.truncate_scope(depth);
    p.line("#pragma unroll");
    p.open("for (int att_u = 0; att_u < 4; att_u++)");
    p.line(format!(
        "att_pt[att_tx * 4 + att_u][att_ty * {r} + att_a] = att_p[att_u];"
    ));
    p.line("att_z[att_a] += att_p[att_u];");
    p.close();
    p.close();
    p.truncate_scope(depth);
    // The weights times v's rows, 16 keys at a time.
    p.line(format!(
        "const int att_kn = (int)(att_n - att_j0 < {KEYS} ? att_n - att_j0 : {KEYS});"
    ));
    p.open(format!(
        "for (int att_jj0 = 0; att_jj0 < att_kn; att_jj0 += {VKEYS})"
    ));
    p.line("__syncthreads();");
    p.open(format!(
        "for (int att_x = att_t; att_x < {}; att_x += {THREADS})",
        VKEYS * COLS
    ));
    if a.v.transposed {
        p.line(format!(
            "const int att_vc = att_x / {VKEYS}, att_vk = att_x % {VKEYS};"
        ));
    } else {
        p.line(format!(
            "const int att_vk = att_x / {COLS}, att_vc = att_x % {COLS};"
        ));
    }
    p.line(format!(
        "att_vs[att_vk][att_vc] = (att_jj0 + att_vk < att_kn && att_c0 + att_vc < att_e) ? {v_at} : {zero};"
    ));
    p.close();
    p.line("__syncthreads();");
    // Weights of keys past the end are 0 and so are their rows of v:
    // their products add nothing.
    p.line("#pragma unroll");
    p.open(format!("for (int att_kk = 0; att_kk < {VKEYS}; att_kk++)"));
    p.line(format!("{elem} att_fa[{r}], att_fb[8];"));
    p.line("#pragma unroll");
    p.line(format!(
        "for (int att_a = 0; att_a < {r}; att_a++) att_fa[att_a] = att_pt[att_jj0 + att_kk][att_ty * {r} + att_a];"
    ));
    read4(p, f64, "att_fb", "0", "att_vs[att_kk][att_tx * 4]");
    read4(p, f64, "att_fb", "4", "att_vs[att_kk][64 + att_tx * 4]");
    p.line("#pragma unroll");
    p.line(format!("for (int att_a = 0; att_a < {r}; att_a++) for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = {fma}(att_fa[att_a], att_fb[att_w], att_acc[att_a][att_w]);"));
    p.close();
    p.close();
    p.line("__syncthreads();");
    p.close();
    finish(p, a, (&row.name, &row_lo, &col_lo), (r, 8), (nan, ninf, ty));
    p.close();
}

/// Opens this thread's rows (`att_a`, `r` of them), with the row bound.
pub(crate) fn open_row(p: &mut Printer, r: i64) {
    p.line("#pragma unroll");
    p.open(format!("for (int att_a = 0; att_a < {r}; att_a++)"));
    p.line(format!(
        "const long long att_i = att_r0 + att_ty * {r} + att_a;"
    ));
}

/// Binds the row variable `row_name` (from `row_lo`) and prints the
/// leading bindings, bound for what follows (`stmts` would end their
/// scope with its list).
pub(crate) fn bind_row(p: &mut Printer, a: &Attention, row_name: &str, row_lo: &str) {
    p.line(format!("const long long att_iv = att_i + {row_lo};"));
    p.bind_loop(row_name, "att_iv");
    for (n, s) in a.lets.iter().enumerate() {
        if let tile_ir::Stmt::Let { name, value, .. } = s {
            let (code, t) = p.lower(value);
            let var = format!("att_let{n}");
            p.line(format!(
                "const {} {var} = {code}; /* {name} */",
                p.scalar_type(t)
            ));
            p.bind_value(name, &var, t);
        }
    }
}

/// After a pass's sweep: the row sums' shares combined, NaN rows, and `G`
/// on each of the thread's `cw` outputs of its `r` rows (columns in
/// groups of 4, 64 apart).
pub(crate) fn finish(
    p: &mut Printer,
    a: &Attention,
    (row_name, row_lo, col_lo): (&str, &str, &str),
    (r, cw): (i64, i64),
    (nan, ninf, ty): (&str, &str, tile_emit::VTy),
) {
    // The row sums' 16 shares, in a fixed tree.
    p.line("#pragma unroll");
    p.line(format!(
        "for (int att_a = 0; att_a < {r}; att_a++) for (int att_o = 1; att_o <= 8; att_o <<= 1) att_z[att_a] += __shfl_xor_sync(0xffffffffu, att_z[att_a], att_o);"
    ));
    // A row whose maximum is -inf (every score -inf): each weight
    // `exp(-inf - -inf)` is NaN, so are the sums; likewise a row with a
    // NaN score (any of its 16 threads').
    p.line("#pragma unroll");
    p.open(format!("for (int att_a = 0; att_a < {r}; att_a++)"));
    p.line(
        "for (int att_o = 1; att_o <= 8; att_o <<= 1) att_nan[att_a] |= __shfl_xor_sync(0xffffffffu, att_nan[att_a], att_o);",
    );
    p.open(format!(
        "if (att_nan[att_a] || (att_n > 0 && att_mx[att_a] == {ninf}))"
    ));
    p.line(format!("att_z[att_a] = {nan};"));
    p.line(format!(
        "for (int att_w = 0; att_w < {cw}; att_w++) att_acc[att_a][att_w] = {nan};"
    ));
    p.close();
    p.close();
    // 3. G on each output of the pass's columns.
    let depth = p.scope_len();
    open_row(p, r);
    p.line("if (att_i >= att_m) continue;");
    bind_row(p, a, row_name, row_lo);
    p.bind_value(&a.sum, "att_z[att_a]", ty);
    p.line("#pragma unroll");
    p.open(format!("for (int att_w = 0; att_w < {cw}; att_w++)"));
    p.line("const long long att_c = att_c0 + (att_w / 4) * 64 + att_tx * 4 + att_w % 4;");
    p.line("if (att_c >= att_e) continue;");
    p.line(format!("const long long att_cv = att_c + {col_lo};"));
    p.bind_loop(&a.col.name, "att_cv");
    p.bind_value(&Attention::weighted_name(), "att_acc[att_a][att_w]", ty);
    p.stmts(std::slice::from_ref(&a.finish));
    p.close();
    p.close();
    p.truncate_scope(depth);
}
