//! A contraction's tiled entry points, `tile_kN_mm` and `tile_kN_mm64`
//! (`LoweredKernel::contraction` on the CUDA target). Each block of 256
//! threads computes a tile of 128 x 128 (or 64 x 64) products. The two
//! operands' slices of 16 `k` (8 for `f64`) pass through two shared-memory
//! buffers: while the block works on one, the next slice is loaded from
//! global memory into registers and then stored into the other, so one
//! barrier per slice suffices. Global reads are 16-byte vectors where an
//! operand's base is aligned, its rows a multiple of 16 bytes long, and
//! the slice inside the matrix; elsewhere (ragged edges, odd strides)
//! each element is read alone and checked. Each thread sums an 8 x 8 (or 4 x 4)
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
/// `k` per shared-memory slice: 16 for `f32`, 8 for `f64` (two buffers
/// of both operands' slices then take 33 KiB either way).
fn depth(f64: bool) -> i64 {
    if f64 {
        8
    } else {
        16
    }
}
/// Threads per block (the attention entry points' too).
pub(crate) const THREADS: u32 = 256;
/// Elements of padding after each shared row of a slice: staging stores
/// that walk `k` fastest spread over the banks (row stride 4 banks
/// apart: at most two of a warp's stores share one), and rows stay
/// 16-byte aligned.
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
    let f64 = c.dtype == DType::F64;
    let dd = depth(f64);
    // Elements per 16-byte run, and runs per thread per operand.
    let (w, vec) = if f64 { (2, "double2") } else { (4, "float4") };
    let stage = tile * dd / THREADS as i64;
    let groups = stage / w;
    let Some(row) = k.domain.first() else {
        p.refuse(format!("contraction kernel {} has no row variable", k.name));
        return;
    };
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
        "__shared__ __align__(16) {elem} tile_as[2][{dd}][{width}], tile_bs[2][{dd}][{width}];"
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
    // Staging: each thread moves `groups` runs of `w` consecutive elements
    // of each operand per slice (16 bytes). Run `v` of thread `t` is
    // number `t + v * 256` of the slice's runs, which lie along `k` for a
    // row-major left operand (or a transposed right one), else along the
    // rows (columns). A run is one 16-byte load where the operand allows
    // it (`tile_afast`, `tile_bfast`: aligned base, rows a multiple of
    // `w` long, the block's rows inside) and the slice lies inside `k`;
    // otherwise `w` loads, each checked against the edges.
    let a_k_fast = !c.a.transposed;
    let b_k_fast = c.b.transposed;
    p.line(format!("{elem} tile_ra[{stage}], tile_rb[{stage}];"));
    let fast = |p: &mut Printer, name: &str, op: &Operand, edge: &str| {
        let ptr = Printer::ptr_name(&op.buf);
        let cols = Printer::box_n(&op.buf, 1);
        p.line(format!(
            "const bool {name} = ({cols}) % {w} == 0 && ((unsigned long long)(const void *){ptr} & 15ull) == 0 && {edge};"
        ));
    };
    fast(
        p,
        "tile_afast",
        &c.a,
        &format!("tile_r0 + {tile} <= tile_m"),
    );
    fast(
        p,
        "tile_bfast",
        &c.b,
        &format!("tile_c0 + {tile} <= tile_n"),
    );
    // Where run `tile_v` of this thread starts: outer index and `k`.
    let coords = |p: &mut Printer, o: &str, kv: &str, k_fast: bool| {
        if k_fast {
            p.line(format!(
                "const int {o} = tile_sq / {runs_k}, {kv} = (tile_sq % {runs_k}) * {w};",
                runs_k = dd / w
            ));
        } else {
            p.line(format!(
                "const int {kv} = tile_sq / {runs_o}, {o} = (tile_sq % {runs_o}) * {w};",
                runs_o = tile / w
            ));
        }
    };
    let all_coords = |p: &mut Printer| {
        p.line(format!("const int tile_sq = tile_t + tile_v * {THREADS};"));
        coords(p, "tile_ao", "tile_ak", a_k_fast);
        coords(p, "tile_bo", "tile_bk", b_k_fast);
    };
    // One operand's run from `tile_kf` into registers `regs`: `names` are
    // its fast flag, the block's first outer index, the run's outer index
    // and `k`, and the outer extent.
    let load = |p: &mut Printer, op: &Operand, k_fast: bool, regs: &str, names: [&str; 5]| {
        let [fast, o0, o, kv, bound] = names;
        // Element `u` of the run: its outer index and `k`.
        let at = |u: i64| {
            if k_fast {
                (format!("{o0} + {o}"), format!("tile_kf + {kv} + {u}"))
            } else {
                (format!("{o0} + {o} + {u}"), format!("tile_kf + {kv}"))
            }
        };
        let (o_first, k_first) = at(0);
        p.open(format!("if ({fast} && tile_kin)"));
        p.line(format!(
            "const {vec} tile_x = *reinterpret_cast<const {vec} *>(&{});",
            element(op, k_fast, &o_first, &k_first)
        ));
        for (u, field) in ["x", "y", "z", "w"].iter().take(w as usize).enumerate() {
            p.line(format!("{regs}[tile_v * {w} + {u}] = tile_x.{field};"));
        }
        p.close();
        p.open("else");
        for u in 0..w {
            let (ou, ku) = at(u);
            p.line(format!(
                "{regs}[tile_v * {w} + {u}] = ({ou} < {bound} && {ku} < tile_k) ? {} : {zero};",
                element(op, k_fast, &ou, &ku)
            ));
        }
        p.close();
    };
    // The slice from `k0` into registers (`tile_ra`, `tile_rb`).
    let fetch = |p: &mut Printer, k0: &str| {
        p.open("");
        p.line(format!("const long long tile_kf = {k0};"));
        p.line(format!("const bool tile_kin = tile_kf + {dd} <= tile_k;"));
        p.line("#pragma unroll");
        p.open(format!("for (int tile_v = 0; tile_v < {groups}; tile_v++)"));
        all_coords(p);
        let a = ["tile_afast", "tile_r0", "tile_ao", "tile_ak", "tile_m"];
        load(p, &c.a, a_k_fast, "tile_ra", a);
        let b = ["tile_bfast", "tile_c0", "tile_bo", "tile_bk", "tile_n"];
        load(p, &c.b, b_k_fast, "tile_rb", b);
        p.close();
        p.close();
    };
    // The registers into shared buffer `buf`, `k`-major: a run along the
    // rows (columns) as one 16-byte store, one along `k` as `w` stores.
    let store = |p: &mut Printer, buf: &str| {
        p.line("#pragma unroll");
        p.open(format!("for (int tile_v = 0; tile_v < {groups}; tile_v++)"));
        all_coords(p);
        for (shared, regs, o, kv, k_fast) in [
            ("tile_as", "tile_ra", "tile_ao", "tile_ak", a_k_fast),
            ("tile_bs", "tile_rb", "tile_bo", "tile_bk", b_k_fast),
        ] {
            if k_fast {
                for u in 0..w {
                    p.line(format!(
                        "{shared}[{buf}][{kv} + {u}][{o}] = {regs}[tile_v * {w} + {u}];"
                    ));
                }
            } else {
                let parts: Vec<String> = (0..w)
                    .map(|u| format!("{regs}[tile_v * {w} + {u}]"))
                    .collect();
                p.line(format!(
                    "*reinterpret_cast<{vec} *>(&{shared}[{buf}][{kv}][{o}]) = make_{vec}({});",
                    parts.join(", ")
                ));
            }
        }
        p.close();
    };
    fetch(p, "0");
    store(p, "0");
    p.line("__syncthreads();");
    p.open(format!(
        "for (long long tile_k0 = 0; tile_k0 < tile_k; tile_k0 += {dd})"
    ));
    p.line(format!("const int tile_cur = (int)((tile_k0 / {dd}) & 1);"));
    p.line(format!("const bool tile_more = tile_k0 + {dd} < tile_k;"));
    p.open("if (tile_more)");
    fetch(p, &format!("tile_k0 + {dd}"));
    p.close();
    // Each thread's rows are groups of 4 (`tile_ty * 4` on, 64 apart), its
    // columns likewise from `tile_tx * 4`: 16-byte shared reads, a warp's
    // 16 column groups side by side and 2 row groups (broadcasts).
    p.line("#pragma unroll");
    p.open(format!("for (int tile_kk = 0; tile_kk < {dd}; tile_kk++)"));
    p.line(format!("{elem} tile_fa[{per}], tile_fb[{per}];"));
    p.line("#pragma unroll");
    p.open(format!(
        "for (int tile_g = 0; tile_g < {}; tile_g++)",
        per / 4
    ));
    read4(
        p,
        f64,
        "tile_fa",
        "tile_g * 4",
        "tile_as[tile_cur][tile_kk][tile_g * 64 + tile_ty * 4]",
    );
    read4(
        p,
        f64,
        "tile_fb",
        "tile_g * 4",
        "tile_bs[tile_cur][tile_kk][tile_g * 64 + tile_tx * 4]",
    );
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

/// Four consecutive shared elements from `at` into `dst[off]` to
/// `dst[off + 3]`: one 16-byte read for `f32`, four reads for `f64`.
pub(crate) fn read4(p: &mut Printer, f64: bool, dst: &str, off: &str, at: &str) {
    if f64 {
        p.line("#pragma unroll");
        p.line(format!(
            "for (int tile_y = 0; tile_y < 4; tile_y++) {dst}[{off} + tile_y] = (&{at})[tile_y];"
        ));
    } else {
        p.line(format!(
            "{{ const float4 tile_v4 = *reinterpret_cast<const float4 *>(&{at}); {dst}[{off}] = tile_v4.x; {dst}[{off} + 1] = tile_v4.y; {dst}[{off} + 2] = tile_v4.z; {dst}[{off} + 3] = tile_v4.w; }}"
        ));
    }
}
