//! The top of every generated C file: headers, the lane count (decided by
//! the C compiler's predefined macros, so the text is the same on every
//! machine), vector types, and the helper library the printer's names refer
//! to. Only helpers a program uses (and what they use) are printed, in one
//! fixed order.

use crate::math;
use std::collections::BTreeSet;
use tile_emit::VTy;

/// One helper: its name, the helpers it calls, and its C definition.
pub(crate) struct Helper {
    pub name: String,
    pub deps: Vec<String>,
    pub code: String,
}

pub(crate) fn helper(name: &str, deps: &[&str], code: &str) -> Helper {
    Helper {
        name: name.to_string(),
        deps: deps.iter().map(|d| d.to_string()).collect(),
        code: code.trim_start_matches('\n').to_string(),
    }
}

/// The prelude for a program whose lanes are sized for `basis` (its float
/// type) and which calls `used`.
pub(crate) fn prelude(basis: VTy, used: &BTreeSet<String>) -> String {
    let lanes_div = if basis == VTy::F64 { 8 } else { 4 };
    let mask_default = if basis == VTy::F64 {
        "tile_vm8"
    } else {
        "tile_vm4"
    };
    let mut out = format!(
        r#"#include <stdint.h>
#include <stdbool.h>
#include <math.h>

/* Lanes: the host's native vector width, from the compiler's macros. */
#if defined(__AVX512F__)
#define TILE_VBYTES 64
#elif defined(__AVX__)
#define TILE_VBYTES 32
#else
#define TILE_VBYTES 16
#endif
#define TILE_L (TILE_VBYTES / {lanes_div})

typedef float tile_vf32 __attribute__((vector_size(TILE_L * 4)));
typedef double tile_vf64 __attribute__((vector_size(TILE_L * 8)));
typedef int64_t tile_vi64 __attribute__((vector_size(TILE_L * 8)));
typedef int32_t tile_vm4 __attribute__((vector_size(TILE_L * 4)));
typedef int64_t tile_vm8 __attribute__((vector_size(TILE_L * 8)));
typedef uint8_t tile_vu8 __attribute__((vector_size(TILE_L)));
typedef {mask_default} tile_vmd;

/* A failed check reports its site (1-based) and abandons the slice. */
#define TILE_FAIL(id) do {{ __atomic_store_n(err, (id), __ATOMIC_RELAXED); return; }} while (0)

int32_t tile_lanes(void) {{ return TILE_L; }}
"#
    );
    let lib = library();
    // Close `used` over dependencies.
    let mut need: BTreeSet<String> = used.clone();
    loop {
        let before = need.len();
        for h in &lib {
            if need.contains(&h.name) {
                need.extend(h.deps.iter().cloned());
            }
        }
        if need.len() == before {
            break;
        }
    }
    for h in &lib {
        if need.contains(&h.name) {
            out.push('\n');
            out.push_str(&h.code);
            if !h.code.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

/// Every helper, callees before callers.
pub(crate) fn library() -> Vec<Helper> {
    let mut v = vec![
        helper(
            "tile_scratch",
            &[],
            r#"#include <stdlib.h>
/* Scratch rows of row kernels: one buffer per thread, grown when a call
   needs more and kept for later calls. NULL when memory runs out. */
static __thread void *tile_scr_buf;
static __thread size_t tile_scr_cap;
static void *tile_scratch(size_t bytes) {
  if (bytes > tile_scr_cap) {
    const size_t n = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n);
    if (!p) return 0;
    free(tile_scr_buf);
    tile_scr_buf = p;
    tile_scr_cap = n;
  }
  return tile_scr_buf;
}"#,
        ),
        helper(
            "tile_splat_vf32",
            &[],
            "static inline tile_vf32 tile_splat_vf32(float x) { return (tile_vf32){0} + x; }",
        ),
        helper(
            "tile_splat_vf64",
            &[],
            "static inline tile_vf64 tile_splat_vf64(double x) { return (tile_vf64){0} + x; }",
        ),
        helper(
            "tile_splat_vi64",
            &[],
            "static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }",
        ),
        helper(
            "tile_splat_vm4",
            &[],
            "static inline tile_vm4 tile_splat_vm4(bool b) { return (tile_vm4){0} - (int32_t)b; }",
        ),
        helper(
            "tile_splat_vm8",
            &[],
            "static inline tile_vm8 tile_splat_vm8(bool b) { return (tile_vm8){0} - (int64_t)b; }",
        ),
        helper(
            "tile_iota_vi64",
            &[],
            r#"
static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}"#,
        ),
    ];
    for dtype in [tile_ir::DType::F32, tile_ir::DType::F64] {
        v.push(helper(
            crate::emit_contraction::gemm_name(dtype),
            &[],
            &crate::emit_contraction::gemm(dtype),
        ));
    }
    for (sfx, vt, mt) in [
        ("vf32", "tile_vf32", "tile_vm4"),
        ("vf64", "tile_vf64", "tile_vm8"),
        ("vi64", "tile_vi64", "tile_vm8"),
        ("vm4", "tile_vm4", "tile_vm4"),
        ("vm8", "tile_vm8", "tile_vm8"),
    ] {
        v.push(helper(
            &format!("tile_sel_{sfx}"),
            &[],
            &format!(
                "static inline {vt} tile_sel_{sfx}({mt} m, {vt} a, {vt} b) {{ return ({vt})((m & ({mt})a) | (~m & ({mt})b)); }}"
            ),
        ));
    }
    for w in ["4", "8"] {
        v.push(helper(
            &format!("tile_any_vm{w}"),
            &[],
            &format!(
                r#"
static inline bool tile_any_vm{w}(tile_vm{w} m) {{
  uint64_t q[sizeof m / 8], r = 0;
  __builtin_memcpy(q, &m, sizeof m);
  for (unsigned k = 0; k < sizeof m / 8; k++) r |= q[k];
  return r != 0;
}}"#
            ),
        ));
        v.push(helper(
            &format!("tile_all_vm{w}"),
            &[],
            &format!(
                r#"
static inline bool tile_all_vm{w}(tile_vm{w} m) {{
  uint64_t q[sizeof m / 8], r = ~0ull;
  __builtin_memcpy(q, &m, sizeof m);
  for (unsigned k = 0; k < sizeof m / 8; k++) r &= q[k];
  return r == ~0ull;
}}"#
            ),
        ));
        // The first set lane of a mask (TILE_L when none) and the last
        // (-1 when none): index searches (`control.rs`).
        v.push(helper(
            &format!("tile_first_vm{w}"),
            &[],
            &format!(
                r#"
static inline int64_t tile_first_vm{w}(tile_vm{w} m) {{
  for (int l = 0; l < TILE_L; l++) if (m[l]) return l;
  return TILE_L;
}}"#
            ),
        ));
        v.push(helper(
            &format!("tile_last_vm{w}"),
            &[],
            &format!(
                r#"
static inline int64_t tile_last_vm{w}(tile_vm{w} m) {{
  for (int l = TILE_L - 1; l >= 0; l--) if (m[l]) return l;
  return -1;
}}"#
            ),
        ));
    }
    v.push(helper(
        "tile_m4_to_m8",
        &[],
        "static inline tile_vm8 tile_m4_to_m8(tile_vm4 m) { return __builtin_convertvector(m, tile_vm8); }",
    ));
    v.push(helper(
        "tile_m8_to_m4",
        &[],
        "static inline tile_vm4 tile_m8_to_m4(tile_vm8 m) { return __builtin_convertvector(m, tile_vm4); }",
    ));
    // Loads and stores (unaligned, through memcpy).
    for (sfx, vt, et) in [
        ("vf32", "tile_vf32", "float"),
        ("vf64", "tile_vf64", "double"),
    ] {
        v.push(helper(
            &format!("tile_ld_{sfx}"),
            &[],
            &format!(
                "static inline {vt} tile_ld_{sfx}(const {et} *p) {{ {vt} v; __builtin_memcpy(&v, p, sizeof v); return v; }}"
            ),
        ));
        v.push(helper(
            &format!("tile_st_{sfx}"),
            &[],
            &format!(
                "static inline void tile_st_{sfx}({et} *p, {vt} v) {{ __builtin_memcpy(p, &v, sizeof v); }}"
            ),
        ));
    }
    v.push(helper(
        "tile_sat_i32",
        &[],
        r#"
static inline int32_t tile_sat_i32(int64_t x) {
  return x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : (int32_t)x;
}"#,
    ));
    v.push(helper(
        "tile_ld_vi32",
        &[],
        r#"
static inline tile_vi64 tile_ld_vi32(const int32_t *p) {
  tile_vm4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, tile_vi64);
}"#,
    ));
    v.push(helper(
        "tile_st_vi32",
        &["tile_sat_i32"],
        r#"
static inline void tile_st_vi32(int32_t *p, tile_vi64 v) {
  tile_vm4 w;
  for (int l = 0; l < TILE_L; l++) w[l] = tile_sat_i32(v[l]);
  __builtin_memcpy(p, &w, sizeof w);
}"#,
    ));
    v.push(helper(
        "tile_ld_vb8",
        &[],
        r#"
static inline tile_vmd tile_ld_vb8(const uint8_t *p) {
  tile_vu8 v;
  __builtin_memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v != 0, tile_vmd);
}"#,
    ));
    v.push(helper(
        "tile_st_vb8",
        &[],
        r#"
static inline void tile_st_vb8(uint8_t *p, tile_vmd m) {
  tile_vu8 v = __builtin_convertvector(m & 1, tile_vu8);
  __builtin_memcpy(p, &v, sizeof v);
}"#,
    ));
    // Integers: conversions, division, abs/min/max.
    v.push(helper(
        "tile_clampi_i64",
        &["tile_sat_i32"],
        "static inline int64_t tile_clampi_i64(int64_t x) { return tile_sat_i32(x); }",
    ));
    v.push(helper(
        "tile_clampi_vi64",
        &["tile_sat_i32"],
        r#"
static inline tile_vi64 tile_clampi_vi64(tile_vi64 x) {
  for (int l = 0; l < TILE_L; l++) x[l] = tile_sat_i32(x[l]);
  return x;
}"#,
    ));
    for (sfx, et, hi, lo) in [
        ("f32", "float", "2147483648.0f", "-2147483649.0f"),
        ("f64", "double", "2147483648.0", "-2147483649.0"),
    ] {
        v.push(helper(
            &format!("tile_f2i_{sfx}"),
            &[],
            &format!(
                r#"
/* Truncates toward zero and saturates to i32; NaN is 0. */
static inline int64_t tile_f2i_{sfx}({et} x) {{
  if (!(x == x)) return 0;
  if (x >= {hi}) return INT32_MAX;
  if (x <= {lo}) return INT32_MIN;
  return (int64_t)x;
}}"#
            ),
        ));
    }
    // The vector conversions give every lane `tile_f2i_*`'s value without a
    // loop over lanes: NaN and out-of-range lanes are zeroed before the
    // converting instruction, then replaced by 0 or the bound. When they
    // were written, a C harness compared them with the scalar forms over
    // every f32 bit pattern and 1.6e9 random f64 lanes; the test
    // `tests/conversions.rs` keeps the edges (NaN, infinities, the i32
    // bounds) against the interpreter.
    v.push(helper(
        "tile_f2i_vf32",
        &[],
        r#"
static inline tile_vi64 tile_f2i_vf32(tile_vf32 x) {
  const tile_vm4 big = x >= 2147483648.0f;
  const tile_vm4 small = x <= -2147483649.0f;
  const tile_vm4 keep = (x == x) & ~big & ~small;
  const tile_vm4 t = __builtin_convertvector((tile_vf32)((tile_vm4)x & keep), tile_vm4);
  return __builtin_convertvector((t & keep) | (big & INT32_MAX) | (small & INT32_MIN), tile_vi64);
}"#,
    ));
    v.push(helper(
        "tile_f2i_vf64",
        &[],
        r#"
static inline tile_vi64 tile_f2i_vf64(tile_vf64 x) {
  const tile_vm8 big = x >= 2147483648.0;
  const tile_vm8 small = x <= -2147483649.0;
  const tile_vm8 keep = (x == x) & ~big & ~small;
  const tile_vm4 t = __builtin_convertvector((tile_vf64)((tile_vm8)x & keep), tile_vm4);
  return (__builtin_convertvector(t, tile_vi64) & keep) | (big & INT32_MAX) | (small & INT32_MIN);
}"#,
    ));
    v.push(helper(
        "tile_idiv_i64",
        &[],
        r#"
/* Truncating division; division by zero or overflow reports its site. */
static inline int64_t tile_idiv_i64(int64_t a, int64_t b, int32_t *err, int32_t id) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) {
    __atomic_store_n(err, id, __ATOMIC_RELAXED);
    return 0;
  }
  return a / b;
}"#,
    ));
    v.push(helper(
        "tile_idiv_vi64",
        &["tile_idiv_i64"],
        r#"
static inline tile_vi64 tile_idiv_vi64(tile_vi64 a, tile_vi64 b, int32_t *err, int32_t id) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = tile_idiv_i64(a[l], b[l], err, id);
  return r;
}"#,
    ));
    v.push(helper(
        "tile_irem_i64",
        &[],
        r#"
/* Remainder of the truncating division (the dividend's sign); a zero
   divisor or overflow reports its site. */
static inline int64_t tile_irem_i64(int64_t a, int64_t b, int32_t *err, int32_t id) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) {
    __atomic_store_n(err, id, __ATOMIC_RELAXED);
    return 0;
  }
  return a % b;
}"#,
    ));
    v.push(helper(
        "tile_irem_vi64",
        &["tile_irem_i64"],
        r#"
static inline tile_vi64 tile_irem_vi64(tile_vi64 a, tile_vi64 b, int32_t *err, int32_t id) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = tile_irem_i64(a[l], b[l], err, id);
  return r;
}"#,
    ));
    v.push(helper(
        "tile_abs_i64",
        &[],
        "static inline int64_t tile_abs_i64(int64_t x) { return x < 0 ? -x : x; }",
    ));
    v.push(helper(
        "tile_min_i64",
        &[],
        "static inline int64_t tile_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }",
    ));
    v.push(helper(
        "tile_max_i64",
        &[],
        "static inline int64_t tile_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }",
    ));
    v.push(helper(
        "tile_abs_vi64",
        &["tile_sel_vi64"],
        "static inline tile_vi64 tile_abs_vi64(tile_vi64 x) { return tile_sel_vi64((tile_vm8)(x < 0), -x, x); }",
    ));
    // Integer min, max and comparisons on native-width pieces (two for f32
    // programs, whose 64-bit vectors are twice the native width; one for
    // f64): GCC lowers a min or a compare of a double-width vector lane by
    // lane through the stack (argmax's index reduction ran seven times
    // slower than its float max, a histogram's bin test at a fifth of the
    // speed of its pieces). On native pieces each stays a vector compare
    // (and blend). Each entry: name, result type, a piece's value from `x`
    // and `y`.
    let pieces = [
        (
            "tile_min_vi64",
            "tile_vi64",
            "y[h] ^ ((x[h] ^ y[h]) & (half)(x[h] < y[h]))",
        ),
        (
            "tile_max_vi64",
            "tile_vi64",
            "y[h] ^ ((x[h] ^ y[h]) & (half)(x[h] > y[h]))",
        ),
        ("tile_lt_vi64", "tile_vm8", "(half)(x[h] < y[h])"),
        ("tile_le_vi64", "tile_vm8", "(half)(x[h] <= y[h])"),
        ("tile_gt_vi64", "tile_vm8", "(half)(x[h] > y[h])"),
        ("tile_ge_vi64", "tile_vm8", "(half)(x[h] >= y[h])"),
        ("tile_eq_vi64", "tile_vm8", "(half)(x[h] == y[h])"),
        ("tile_ne_vi64", "tile_vm8", "(half)(x[h] != y[h])"),
    ];
    for (name, ret, piece) in pieces {
        v.push(helper(
            name,
            &[],
            &format!(
                r#"
static inline {ret} {name}(tile_vi64 a, tile_vi64 b) {{
  typedef int64_t half __attribute__((vector_size(TILE_VBYTES)));
  enum {{ n = sizeof(tile_vi64) / sizeof(half) }};
  half x[n], y[n];
  __builtin_memcpy(x, &a, sizeof a);
  __builtin_memcpy(y, &b, sizeof b);
  for (int h = 0; h < n; h++) x[h] = {piece};
  {ret} r;
  __builtin_memcpy(&r, x, sizeof r);
  return r;
}}"#
            ),
        ));
    }
    // Horizontal reductions of partial results.
    v.push(helper(
        "tile_hsum_vf64",
        &[],
        r#"
static inline double tile_hsum_vf64(tile_vf64 v) {
  double s = 0.0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}"#,
    ));
    v.push(helper(
        "tile_hsum_vi64",
        &[],
        r#"
static inline int64_t tile_hsum_vi64(tile_vi64 v) {
  int64_t s = 0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}"#,
    ));
    v.extend(math::library());
    for (op, f) in [("hmax", "max"), ("hmin", "min")] {
        for (sfx, et) in [("vf32", "float"), ("vf64", "double"), ("vi64", "int64_t")] {
            let s = &sfx[1..];
            v.push(helper(
                &format!("tile_{op}_{sfx}"),
                &[&format!("tile_{f}_{s}")],
                &format!(
                    r#"
static inline {et} tile_{op}_{sfx}(tile_{sfx} v) {{
  {et} m = v[0];
  for (int l = 1; l < TILE_L; l++) m = tile_{f}_{s}(m, v[l]);
  return m;
}}"#
                ),
            ));
        }
    }
    v
}
