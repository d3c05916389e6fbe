//! An attention head's staged entry points (an experiment: printed
//! instead of [`crate::print_attention`]'s under `TILE_CUDA_ATT_STAGED=1`,
//! not yet run on a GPU), `tile_kN_att{R}x{C}`: `R`
//! query rows per block (64, or 32 where 64-row blocks would leave
//! multiprocessors idle; 32 alone for `f64`) and `C` output columns per
//! pass (128, or 64 where the output has at most 64 columns), from
//! `LoweredKernel::attention` on the CUDA target.
//!
//! Where 64-row blocks' shared memory would not fit the device, 32-row
//! ones run; where neither fits, the row kernel.
//!
//! A block of 256 threads (16 x 16) owns the `R` rows; each thread holds
//! `R / 16` consecutive rows by 4 keys of each block of 64 keys (keys
//! `tx`, `tx + 16`, `tx + 32`, `tx + 48`), and the same rows by `C / 16`
//! output columns. Dynamic shared memory ([`shared_bytes`]) holds the
//! block's rows of `q` (whole rows of `d`, loaded once), one block of
//! keys' rows of `k` and of `v`, and the block's weights. Copies into it
//! are asynchronous (`cp.async`, 16 bytes where the operand's layout and
//! alignment allow, else an element at a time, zeros outside the
//! matrices): `v`'s rows load while the scores are computed, the next
//! block of keys while the weights multiply `v`. No score is ever stored
//! outside registers and the one block of weights.
//!
//! For each pass of `C` output columns, one sweep over the keys (an
//! online softmax), 64 keys at a time:
//!
//! 1. The block's dot products (each summed over `d` in order, 16-byte
//!    shared reads), then `F` on each (the program's expression, printed
//!    with its checks) and the block's maximum of each row; the 16 threads
//!    of a row combine theirs (`fmax`: any order gives the same value).
//! 2. The row's running maximum `m` grows to include it; what was summed
//!    against the old maximum is scaled by `exp(old - new)` (exactly 1
//!    where it did not grow).
//! 3. The weights `exp(F - m)` (the program's expression) into shared
//!    memory, each thread's share of the row sum, and the weights times
//!    `v`'s rows, each output summed over the keys in order.
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
use tile_plan::{Attention, Kernel, Operand};

use crate::print_attention::{bind_row, finish, open_row};
use crate::print_contraction::{element, read4, THREADS};

/// Keys per block of keys (16 threads x 4).
const KEYS: i64 = 64;
/// Padding after each shared row of `v` and of the weights (rows stay
/// 16-byte aligned).
const PAD: i64 = 4;

/// The entry points' query rows per block and output columns per pass,
/// in the order printed: `f32` has all four, `f64` the 32-row ones.
pub(crate) fn entries(dtype: DType) -> &'static [(i64, i64)] {
    if dtype == DType::F64 {
        &[(32, 128), (32, 64)]
    } else {
        &[(64, 128), (64, 64), (32, 128), (32, 64)]
    }
}

/// Elements per 16 bytes.
fn width(elem_bytes: i64) -> i64 {
    16 / elem_bytes
}

/// The row stride of the shared rows of `q` and `k` at depth `d`: `d`
/// rounded up to 16 bytes, plus one or two 16-byte runs to make an odd
/// number of runs, so the 8 threads of a quarter warp reading 8 keys'
/// runs hit different banks.
fn depth_stride(d: i64, elem_bytes: i64) -> i64 {
    let w = width(elem_bytes);
    let runs = (d + w - 1) / w;
    (runs + 1 + (runs & 1)) * w
}

/// Dynamic shared memory of an entry point with `rows` query rows and
/// `cols` columns per pass at depth `d` (elements of `elem_bytes`): the
/// rows of `q`, one block of keys' rows of `k` and of `v`, and the
/// block's weights (`None` past `u64`).
pub(crate) fn shared_bytes(rows: i64, cols: i64, d: i64, elem_bytes: i64) -> Option<u64> {
    let qst = depth_stride(d.max(0), elem_bytes);
    let elems = (rows + KEYS)
        .checked_mul(qst)?
        .checked_add(KEYS * (cols + PAD) + KEYS * (rows + PAD))?;
    u64::try_from(elems.checked_mul(elem_bytes)?).ok()
}

/// One operand's tile into shared memory: `outer_n` rows of the tile
/// (from `outer0`, within `outer_lim`) by `inner_n` elements (from
/// `inner0`, within `inner_lim`; `inner_n` a multiple of 16 bytes), row
/// stride `stride`; the operand's element at (outer, inner) is
/// `element(op, first, ..)`. Where `first` (the tile's rows are the
/// operand's rows) and the operand's rows are 16-byte aligned (`fast`,
/// printed here), each thread copies 16-byte runs; otherwise one element
/// at a time, consecutive threads at consecutive addresses of the
/// operand. Elements outside become zeros.
struct Tile<'a> {
    smem: &'a str,
    stride: String,
    op: &'a Operand,
    first: bool,
    outer_n: i64,
    outer0: String,
    outer_lim: &'a str,
    inner_n: String,
    inner0: &'a str,
    inner_lim: &'a str,
}

fn copy(p: &mut Printer, t: &Tile, es: i64) {
    let w = width(es);
    let base = crate::print_contraction::matrix(t.op);
    let at = |o: &str, i: &str| element(t.op, t.first, o, i);
    let (outer0, outer_n, stride, inner_n) = (&t.outer0, t.outer_n, &t.stride, &t.inner_n);
    let (inner0, inner_lim, outer_lim, smem) = (t.inner0, t.inner_lim, t.outer_lim, t.smem);
    p.open("");
    let mut slow = "";
    if t.first {
        let cols = crate::print_contraction::row_len(t.op);
        p.open(format!(
            "if (({cols}) % {w} == 0 && ((unsigned long long)(const void *){base} & 15ull) == 0)"
        ));
        p.line(format!("const int att_runs = ({inner_n}) / {w};"));
        p.open(format!(
            "for (int att_x = att_t; att_x < {outer_n} * att_runs; att_x += {THREADS})"
        ));
        p.line(format!(
            "const int att_o = att_x / att_runs, att_c = (att_x % att_runs) * {w};"
        ));
        p.line(format!(
            "const long long att_go = {outer0} + att_o, att_gi = {inner0} + att_c;"
        ));
        p.line(format!("const bool att_oin = att_go < {outer_lim};"));
        p.line(format!(
            "if (att_gi + {w} <= {inner_lim}) tile_cpz<16>(&{smem}[att_o * {stride} + att_c], att_oin ? &{} : {base}, att_oin);",
            at("att_go", "att_gi")
        ));
        p.open("else");
        p.line("#pragma unroll");
        p.open(format!("for (int att_ee = 0; att_ee < {w}; att_ee++)"));
        p.line(format!(
            "const bool att_in = att_oin && att_gi + att_ee < {inner_lim};"
        ));
        p.line(format!(
            "tile_cpz<{es}>(&{smem}[att_o * {stride} + att_c + att_ee], att_in ? &{} : {base}, att_in);",
            at("att_go", "att_gi + att_ee")
        ));
        p.close();
        p.close();
        p.close();
        p.close();
        slow = "else ";
    }
    p.open(format!(
        "{slow}for (int att_x = att_t; att_x < {outer_n} * ({inner_n}); att_x += {THREADS})"
    ));
    if t.first {
        p.line(format!(
            "const int att_o = att_x / ({inner_n}), att_c = att_x % ({inner_n});"
        ));
    } else {
        p.line(format!(
            "const int att_c = att_x / {outer_n}, att_o = att_x % {outer_n};"
        ));
    }
    p.line(format!(
        "const long long att_go = {outer0} + att_o, att_gi = {inner0} + att_c;"
    ));
    p.line(format!(
        "const bool att_in = att_go < {outer_lim} && att_gi < {inner_lim};"
    ));
    p.line(format!(
        "tile_cpz<{es}>(&{smem}[att_o * {stride} + att_c], att_in ? &{} : {base}, att_in);",
        at("att_go", "att_gi")
    ));
    p.close();
    p.close();
}

/// `n` consecutive shared elements from `at` into `dst[0..n]`: 16-byte
/// (or 8-byte) reads where they fit, else one at a time.
fn read_n(p: &mut Printer, f64: bool, dst: &str, n: i64, at: &str) {
    match (f64, n) {
        (false, 4) => read4(p, false, dst, "0", at),
        (false, 2) => p.line(format!(
            "{{ const float2 att_v2 = *reinterpret_cast<const float2 *>(&{at}); {dst}[0] = att_v2.x; {dst}[1] = att_v2.y; }}"
        )),
        (true, 2) => p.line(format!(
            "{{ const double2 att_v2 = *reinterpret_cast<const double2 *>(&{at}); {dst}[0] = att_v2.x; {dst}[1] = att_v2.y; }}"
        )),
        _ => {
            p.line("#pragma unroll");
            p.line(format!(
                "for (int att_y = 0; att_y < {n}; att_y++) {dst}[att_y] = (&{at})[att_y];"
            ));
        }
    }
}

/// Prints the body of the entry point with `rows` query rows per block
/// and `cols` output columns per pass, its arguments already declared.
pub(crate) fn print(p: &mut Printer, k: &Kernel, a: &Attention, (rows, cols): (i64, i64)) {
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
    let es = if f64 { 8 } else { 4 };
    let w = width(es);
    let ty = tile_emit::VTy::of(dtype);
    let r = rows / 16;
    // Output columns per thread: groups of 4, 64 apart.
    let cw = cols / 16;
    let (vst, pst) = (cols + PAD, rows + PAD);
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
    // The shared layout of `shared_bytes` (the launch sized it at this
    // depth, so the runs of `d` fit an int).
    p.line(format!(
        "const int att_dr = (int)(((att_d > 0 ? att_d : 0) + {}) / {w}), att_d4 = att_dr * {w}, att_qst = (att_dr + 1 + (att_dr & 1)) * {w};",
        w - 1
    ));
    p.line("extern __shared__ __align__(16) unsigned char att_sm[];");
    p.line(format!(
        "{elem} *const att_qs = reinterpret_cast<{elem} *>(att_sm);"
    ));
    p.line(format!("{elem} *const att_ks = att_qs + {rows} * att_qst;"));
    p.line(format!("{elem} *const att_vs = att_ks + {KEYS} * att_qst;"));
    p.line(format!("{elem} *const att_pt = att_vs + {};", KEYS * vst));
    p.line("const int att_t = threadIdx.x, att_tx = att_t % 16, att_ty = att_t / 16;");
    let row_lo = p.size_expr(&row.lo);
    let col_lo = p.size_expr(&a.col.lo);
    let q_tile = Tile {
        smem: "att_qs",
        stride: "att_qst".into(),
        op: &a.q,
        first: !a.q.transposed,
        outer_n: rows,
        outer0: "att_r0".into(),
        outer_lim: "att_m",
        inner_n: "att_d4".into(),
        inner0: "0",
        inner_lim: "att_d",
    };
    let k_tile = |j0: &str| Tile {
        smem: "att_ks",
        stride: "att_qst".into(),
        op: &a.k,
        first: a.k.transposed,
        outer_n: KEYS,
        outer0: j0.into(),
        outer_lim: "att_n",
        inner_n: "att_d4".into(),
        inner0: "0",
        inner_lim: "att_d",
    };
    let v_tile = Tile {
        smem: "att_vs",
        stride: vst.to_string(),
        op: &a.v,
        first: !a.v.transposed,
        outer_n: KEYS,
        outer0: "att_j0".into(),
        outer_lim: "att_n",
        inner_n: cols.to_string(),
        inner0: "att_c0",
        inner_lim: "att_e",
    };
    // The block's rows of q, once.
    copy(p, &q_tile, es);
    p.line("tile_cp_commit();");
    // The dot products of this thread's scores in the block of keys at
    // `att_j0`, into `att_s`, over `d` in order, a 16-byte run at a time.
    let scores = |p: &mut Printer| {
        p.line(format!("{elem} att_s[{r}][4];"));
        p.line("#pragma unroll");
        p.line(format!(
            "for (int att_a = 0; att_a < {r}; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = {zero};"
        ));
        p.line("#pragma unroll 2");
        p.open("for (int att_dq = 0; att_dq < att_dr; att_dq++)");
        p.line(format!("{elem} att_fa[{r}][{w}], att_fb[4][{w}];"));
        p.line("#pragma unroll");
        p.open(format!("for (int att_a = 0; att_a < {r}; att_a++)"));
        read_n(
            p,
            f64,
            "att_fa[att_a]",
            w,
            &format!("att_qs[(att_ty * {r} + att_a) * att_qst + att_dq * {w}]"),
        );
        p.close();
        p.line("#pragma unroll");
        p.open("for (int att_u = 0; att_u < 4; att_u++)");
        read_n(
            p,
            f64,
            "att_fb[att_u]",
            w,
            &format!("att_ks[(att_tx + 16 * att_u) * att_qst + att_dq * {w}]"),
        );
        p.close();
        p.line("#pragma unroll");
        p.line(format!("for (int att_ee = 0; att_ee < {w}; att_ee++) for (int att_a = 0; att_a < {r}; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = {fma}(att_fa[att_a][att_ee], att_fb[att_u][att_ee], att_s[att_a][att_u]);"));
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
        p.line("const long long att_j = att_j0 + att_tx + 16 * att_u;");
    };
    let bind_key = |p: &mut Printer| {
        p.bind_loop(&a.key.name, "att_j");
        p.bind_value(&Attention::dot_name(), "att_s[att_a][att_u]", ty);
    };
    // One sweep over the keys per pass of output columns: each block of
    // keys' scores, the rows' running maxima, the weights against them
    // into shared memory, the running sums and weighted rows rescaled
    // where a maximum grew.
    p.open(format!(
        "for (long long att_c0 = 0; att_c0 < att_e; att_c0 += {cols})"
    ));
    // `att_nan`: whether this thread saw a NaN score in the row (its
    // weight is NaN whatever the maximum, so are the row's sums; a weight
    // taken while the running maximum is -inf is 0 instead, below).
    p.line(format!(
        "{elem} att_mx[{r}], att_z[{r}], att_acc[{r}][{cw}]; int att_nan[{r}];"
    ));
    p.line("#pragma unroll");
    p.open(format!("for (int att_a = 0; att_a < {r}; att_a++)"));
    p.line(format!("att_mx[att_a] = {nan};"));
    p.line("att_nan[att_a] = 0;");
    p.line(format!("att_z[att_a] = {zero};"));
    p.line(format!(
        "for (int att_w = 0; att_w < {cw}; att_w++) att_acc[att_a][att_w] = {zero};"
    ));
    p.close();
    // The first block of keys' rows of k (none without keys: a pass
    // would then write what the previous one's copy may still write).
    p.open("if (att_n > 0)");
    copy(p, &k_tile("0"), es);
    p.close();
    p.line("tile_cp_commit();");
    p.open(format!(
        "for (long long att_j0 = 0; att_j0 < att_n; att_j0 += {KEYS})"
    ));
    // q's and this block's k's rows arrived, and every thread is done
    // with the previous block's v and weights.
    p.line("tile_cp_wait_n<0>();");
    p.line("__syncthreads();");
    copy(p, &v_tile, es);
    p.line("tile_cp_commit();");
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
    p.line(format!(
        "for (int att_w = 0; att_w < {cw}; att_w++) att_acc[att_a][att_w] *= att_sc;"
    ));
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
        "att_pt[(att_tx + 16 * att_u) * {pst} + att_ty * {r} + att_a] = att_p[att_u];"
    ));
    p.line("att_z[att_a] += att_p[att_u];");
    p.close();
    p.close();
    p.truncate_scope(depth);
    // Every thread is done with this block's k and its weights are in
    // shared memory: the next block's k loads while the weights multiply
    // v's rows (a group is committed either way, so waiting for all but
    // the latest waits for v).
    p.line("__syncthreads();");
    p.open(format!("if (att_j0 + {KEYS} < att_n)"));
    copy(p, &k_tile(&format!("att_j0 + {KEYS}")), es);
    p.close();
    p.line("tile_cp_commit();");
    p.line("tile_cp_wait_n<1>();");
    p.line("__syncthreads();");
    // Weights of keys past the end are 0 and so are their rows of v:
    // their products add nothing.
    p.line("#pragma unroll 4");
    p.open(format!("for (int att_kk = 0; att_kk < {KEYS}; att_kk++)"));
    p.line(format!("{elem} att_fa[{r}], att_fb[{cw}];"));
    read_n(
        p,
        f64,
        "att_fa",
        r,
        &format!("att_pt[att_kk * {pst} + att_ty * {r}]"),
    );
    for g in 0..cw / 4 {
        read4(
            p,
            f64,
            "att_fb",
            &(g * 4).to_string(),
            &format!("att_vs[att_kk * {vst} + {} + att_tx * 4]", g * 64),
        );
    }
    p.line("#pragma unroll");
    p.line(format!("for (int att_a = 0; att_a < {r}; att_a++) for (int att_w = 0; att_w < {cw}; att_w++) att_acc[att_a][att_w] = {fma}(att_fa[att_a], att_fb[att_w], att_acc[att_a][att_w]);"));
    p.close();
    p.close();
    finish(
        p,
        a,
        (&row.name, &row_lo, &col_lo),
        (r, cw),
        (nan, ninf, ty),
    );
    p.close();
    // No copy outlives the block (q's when there are no keys or no
    // output columns).
    p.line("tile_cp_wait_n<0>();");
}
