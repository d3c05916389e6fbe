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
//! product (`fmaf`, exact FP32; with `--allow-tf32` the warps use TF32
//! tensor cores instead, see [`print`]), reading its rows and
//! columns from shared memory as 16-byte vectors. Then each thread runs
//! the epilogue ([`tile_plan::Contraction::per_element`]) on each of its
//! products inside the matrix, through the printer, so the epilogue's
//! checks and failure sites are the plain entry point's kind.
//!
//! Grid: `x` over blocks of columns (of each batch in turn, for a batched
//! product), `y` over blocks of rows (`configure.rs`). A batched product's
//! block reads its batch's matrices of the batched operands.

use tile_emit::Printer;
use tile_ir::DType;
use tile_plan::{Contraction, Operand};

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
/// The padding of the tensor-core entry points: rows 8 banks apart, so a
/// warp's fragment reads (lane `4 g + t` reads row `t`, element `g`) hit
/// 32 different banks.
const MMA_PAD: i64 = 8;

/// The pointer of an operand's matrix: its parameter's, or for a batched
/// operand the block's batch's matrix (declared by [`print`]).
pub(crate) fn matrix(op: &Operand) -> String {
    if op.batched {
        format!("tile_{}_h", op.buf)
    } else {
        Printer::ptr_name(&op.buf)
    }
}

/// The row stride of an operand's matrix: its last dimension's extent.
pub(crate) fn row_len(op: &Operand) -> String {
    Printer::box_n(&op.buf, if op.batched { 2 } else { 1 })
}

/// The C expression of an operand's element at
/// (`outer`, `k`) (the left operand's row or the right one's column):
/// row-major boxes from 0, indexed `[outer, k]` (left, not transposed;
/// right, transposed) or `[k, outer]`; a batched operand's in the block's
/// batch's matrix.
pub(crate) fn element(op: &Operand, outer_first: bool, outer: &str, k: &str) -> String {
    let (ptr, cols) = (matrix(op), row_len(op));
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
/// With `tf32` (an `f32` contraction the user allowed TF32 for), the
/// warps multiply on tensor cores instead ([`mma_slice`]).
pub(crate) fn print(p: &mut Printer, c: &Contraction, tile: i64, tf32: bool) {
    let per = tile / 16;
    let f64 = c.dtype == DType::F64;
    let mma = tf32 && !f64;
    let dd = depth(f64);
    // Elements per 16-byte run, and runs per thread per operand.
    let (w, vec) = if f64 { (2, "double2") } else { (4, "float4") };
    let stage = tile * dd / THREADS as i64;
    let groups = stage / w;
    let row = &c.row;
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
    match &c.batch {
        None => p.line(format!(
            "const long long tile_r0 = (long long)blockIdx.y * {tile}, tile_c0 = (long long)blockIdx.x * {tile};"
        )),
        Some(h) => {
            // `x` runs over each batch's blocks of columns in turn.
            p.line(format!(
                "const long long tile_nb = tile_n > 0 ? (tile_n + {}) / {tile} : 1;",
                tile - 1
            ));
            p.line(format!(
                "const long long tile_bt = (long long)blockIdx.x / tile_nb, tile_r0 = (long long)blockIdx.y * {tile}, tile_c0 = ((long long)blockIdx.x % tile_nb) * {tile};"
            ));
            p.line(format!(
                "if (tile_bt >= {}) return;",
                p.extent(&h.lo, &h.hi)
            ));
            p.line(format!(
                "const long long tile_btv = tile_bt + {};",
                p.size_expr(&h.lo)
            ));
            // Each batched operand's matrix of this batch (its first
            // index runs from 0: find_contractions requires it).
            let mut declared = std::collections::BTreeSet::new();
            for op in [&c.a, &c.b] {
                if op.batched && declared.insert(&op.buf) {
                    let buf = &op.buf;
                    p.line(format!(
                        "const {elem} *const {} = {} + tile_bt * ({} * {});",
                        matrix(op),
                        Printer::ptr_name(buf),
                        Printer::box_n(buf, 1),
                        Printer::box_n(buf, 2)
                    ));
                }
            }
        }
    }
    p.line("if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;");
    let width = tile + if mma { MMA_PAD } else { PAD };
    p.line(format!(
        "__shared__ __align__(16) {elem} tile_as[2][{dd}][{width}], tile_bs[2][{dd}][{width}];"
    ));
    p.line("const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;");
    if mma {
        mma_accumulators(p, tile);
    } else {
        p.line(format!("{elem} tile_acc[{per}][{per}];"));
        p.line("#pragma unroll");
        p.open(format!("for (int tile_r = 0; tile_r < {per}; tile_r++)"));
        p.line("#pragma unroll");
        p.line(format!(
            "for (int tile_q = 0; tile_q < {per}; tile_q++) tile_acc[tile_r][tile_q] = {zero};"
        ));
        p.close();
    }
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
        let (ptr, cols) = (matrix(op), row_len(op));
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
    // For tensor cores each value is rounded to TF32 first (to nearest,
    // ties away from zero, as cuBLAS's TF32 mode), once per element.
    let store = |p: &mut Printer, buf: &str| {
        p.line("#pragma unroll");
        p.open(format!("for (int tile_v = 0; tile_v < {groups}; tile_v++)"));
        if mma {
            p.line("#pragma unroll");
            p.line(format!(
                "for (int tile_u = 0; tile_u < {w}; tile_u++) {{ tile_ra[tile_v * {w} + tile_u] = tile_tf32(tile_ra[tile_v * {w} + tile_u]); tile_rb[tile_v * {w} + tile_u] = tile_tf32(tile_rb[tile_v * {w} + tile_u]); }}"
            ));
        }
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
    if mma {
        // TF32 rounding of one value (a register holding its bits).
        p.line("auto tile_tf32 = [](float x) { unsigned u; asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(u) : \"f\"(x)); return __uint_as_float(u); };");
    }
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
    if mma {
        mma_slice(p, tile, dd);
    } else {
        fma_slice(p, f64, (per, dd), (elem, fma));
    }
    // The next slice into the other buffer, which every thread finished
    // reading before the previous barrier.
    p.open("if (tile_more)");
    store(p, "tile_cur ^ 1");
    p.close();
    p.line("__syncthreads();");
    p.close();
    if mma {
        mma_epilogue(p, c, tile);
        return;
    }
    // The epilogue, per product inside the matrix.
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {per}; tile_r++)"));
    p.line("const long long tile_i = tile_r0 + (tile_r / 4) * 64 + tile_ty * 4 + tile_r % 4;");
    p.line("if (tile_i >= tile_m) continue;");
    p.line("#pragma unroll");
    p.open(format!("for (int tile_q = 0; tile_q < {per}; tile_q++)"));
    p.line("const long long tile_j = tile_c0 + (tile_q / 4) * 64 + tile_tx * 4 + tile_q % 4;");
    p.line("if (tile_j >= tile_n) continue;");
    epilogue(p, c, "tile_acc[tile_r][tile_q]");
    p.close();
    p.close();
}

/// One slice of `dd` `k` on the FMA units: each thread's rows are groups
/// of 4 (`tile_ty * 4` on, 64 apart), its columns likewise from `tile_tx *
/// 4`: 16-byte shared reads, a warp's 16 column groups side by side and 2
/// row groups (broadcasts); one `fmaf` (`fma`) per product, in `k` order.
fn fma_slice(p: &mut Printer, f64: bool, (per, dd): (i64, i64), (elem, fma): (&str, &str)) {
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
}

/// The tensor cores' warp tiles: 8 warps as 2 rows by 4 columns of the
/// block's tile, each `tile / 2` rows by `tile / 4` columns, as `tile /
/// 32` by `tile / 32` products of 16 x 8 (`mma.sync` m16n8k8, TF32 in,
/// FP32 accumulators, four per thread each).
fn mma_accumulators(p: &mut Printer, tile: i64) {
    let n = tile / 32;
    p.line("const int tile_w = tile_t / 32, tile_g = (tile_t % 32) / 4, tile_h = tile_t % 4;");
    p.line(format!(
        "const int tile_wr = (tile_w / 4) * {}, tile_wc = (tile_w % 4) * {};",
        tile / 2,
        tile / 4
    ));
    p.line(format!("float tile_acc[{n}][{n}][4];"));
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {n}; tile_r++)"));
    p.line("#pragma unroll");
    p.line(format!(
        "for (int tile_q = 0; tile_q < {n}; tile_q++) tile_acc[tile_r][tile_q][0] = tile_acc[tile_r][tile_q][1] = tile_acc[tile_r][tile_q][2] = tile_acc[tile_r][tile_q][3] = 0.0f;"
    ));
    p.close();
}

/// One slice of `dd` `k` on the tensor cores, 8 `k` per step: each warp
/// reads its fragments from shared memory (already TF32; lane `4 g + h`
/// reads `k` `h` and `h + 4`, rows `g` and `g + 8` of each 16, columns
/// `g` of each 8) and issues `tile / 32` squared `mma.sync`s.
fn mma_slice(p: &mut Printer, tile: i64, dd: i64) {
    let n = tile / 32;
    p.line("#pragma unroll");
    p.open(format!(
        "for (int tile_kk = 0; tile_kk < {dd}; tile_kk += 8)"
    ));
    p.line(format!("unsigned tile_fa[{n}][4], tile_fb[{n}][2];"));
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {n}; tile_r++)"));
    p.line("const int tile_ar = tile_wr + tile_r * 16 + tile_g;");
    p.line("tile_fa[tile_r][0] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h][tile_ar]);");
    p.line(
        "tile_fa[tile_r][1] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h][tile_ar + 8]);",
    );
    p.line(
        "tile_fa[tile_r][2] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h + 4][tile_ar]);",
    );
    p.line("tile_fa[tile_r][3] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h + 4][tile_ar + 8]);");
    p.close();
    p.line("#pragma unroll");
    p.open(format!("for (int tile_q = 0; tile_q < {n}; tile_q++)"));
    p.line("const int tile_bc = tile_wc + tile_q * 8 + tile_g;");
    p.line("tile_fb[tile_q][0] = __float_as_uint(tile_bs[tile_cur][tile_kk + tile_h][tile_bc]);");
    p.line(
        "tile_fb[tile_q][1] = __float_as_uint(tile_bs[tile_cur][tile_kk + tile_h + 4][tile_bc]);",
    );
    p.close();
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {n}; tile_r++)"));
    p.line("#pragma unroll");
    p.open(format!("for (int tile_q = 0; tile_q < {n}; tile_q++)"));
    p.line("float *const tile_d = tile_acc[tile_r][tile_q];");
    p.line("asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\" : \"+f\"(tile_d[0]), \"+f\"(tile_d[1]), \"+f\"(tile_d[2]), \"+f\"(tile_d[3]) : \"r\"(tile_fa[tile_r][0]), \"r\"(tile_fa[tile_r][1]), \"r\"(tile_fa[tile_r][2]), \"r\"(tile_fa[tile_r][3]), \"r\"(tile_fb[tile_q][0]), \"r\"(tile_fb[tile_q][1]));");
    p.close();
    p.close();
    p.close();
}

/// The epilogue of the tensor-core entry points, per product inside the
/// matrix: accumulator `e` of product tile (`tile_r`, `tile_q`) is row
/// `g` (`g + 8` for `e` 2 and 3), column `2 h + e % 2` of it.
fn mma_epilogue(p: &mut Printer, c: &Contraction, tile: i64) {
    let n = tile / 32;
    p.line("#pragma unroll");
    p.open(format!("for (int tile_r = 0; tile_r < {n}; tile_r++)"));
    p.line("#pragma unroll");
    p.open(format!("for (int tile_q = 0; tile_q < {n}; tile_q++)"));
    p.line("#pragma unroll");
    p.open("for (int tile_e = 0; tile_e < 4; tile_e++)");
    p.line("const long long tile_i = tile_r0 + tile_wr + tile_r * 16 + tile_g + (tile_e / 2) * 8;");
    p.line("const long long tile_j = tile_c0 + tile_wc + tile_q * 8 + tile_h * 2 + tile_e % 2;");
    p.line("if (tile_i >= tile_m || tile_j >= tile_n) continue;");
    epilogue(p, c, "tile_acc[tile_r][tile_q][tile_e]");
    p.close();
    p.close();
    p.close();
}

/// The contraction's epilogue on one product, `value` (C code), at
/// `tile_i`, `tile_j` (from the matrix's corner): the program's
/// statements through the printer.
fn epilogue(p: &mut Printer, c: &Contraction, value: &str) {
    let row = &c.row;
    let depth = p.scope_len();
    p.line(format!(
        "const long long tile_iv = tile_i + {}, tile_jv = tile_j + {};",
        p.size_expr(&row.lo),
        p.size_expr(&c.col.lo)
    ));
    if let Some(h) = &c.batch {
        p.bind_loop(&h.name, "tile_btv");
    }
    p.bind_loop(&row.name, "tile_iv");
    p.bind_loop(&c.col.name, "tile_jv");
    let ty = tile_emit::VTy::of(c.dtype);
    p.bind_value(&Contraction::value_name(), value, ty);
    p.stmts(&c.per_element);
    p.truncate_scope(depth);
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
