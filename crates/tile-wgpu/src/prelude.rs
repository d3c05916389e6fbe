//! The helper library every generated WGSL module carries: the failure
//! report, infinities and NaN (WGSL has no literals for them, and a
//! constant expression may not overflow), the math functions the printer's
//! names refer to with the C library's meaning (`min`/`max` skip a NaN,
//! `pow` of a negative base with an integer exponent, `log1p`, `expm1` and
//! `erf`, which WGSL lacks), and integer helpers (truncating division
//! that reports a zero divisor, saturating conversion).

/// The helper names the prelude defines (the printer's calls are checked
/// against it before a module is returned).
pub const DEFINED: &[&str] = &[
    "tile_exp_f32",
    "tile_exp2_f32",
    "tile_log_f32",
    "tile_log2_f32",
    "tile_log1p_f32",
    "tile_expm1_f32",
    "tile_sqrt_f32",
    "tile_rsqrt_f32",
    "tile_tanh_f32",
    "tile_sigmoid_f32",
    "tile_erf_f32",
    "tile_sin_f32",
    "tile_cos_f32",
    "tile_floor_f32",
    "tile_ceil_f32",
    "tile_abs_f32",
    "tile_min_f32",
    "tile_max_f32",
    "tile_pow_f32",
    "tile_fma_f32",
    "tile_abs_i64",
    "tile_min_i64",
    "tile_max_i64",
    "tile_sat_i32",
    "tile_clampi_i64",
    "tile_f2i_f32",
    "tile_idiv_i64",
    "tile_irem_i64",
    "tile_block_sum_f32",
    "tile_block_max_f32",
    "tile_block_min_f32",
    "tile_col_sum_f32",
    "tile_col_max_f32",
    "tile_col_min_f32",
    "tile_col_sum_i64",
    "tile_col_max_i64",
    "tile_col_min_i64",
];

/// Everything a module carries after its bindings (the same for every
/// program): [`PRELUDE`], then [`block_helpers`].
pub fn prelude() -> String {
    let mut s = PRELUDE.to_string();
    s.push_str(&block_helpers());
    s
}

/// The block reductions of row kernels and the slice combinations of
/// column kernels (`tile_block_*` and `tile_col_*`), for `f32` and `i32`
/// (named `_i64`, as above), `sum`, `max` and `min`, over the slot sets of
/// `tile_smem` and `tile_smem_i` (workgroup memory: two sets of one slot
/// per thread; consecutive reductions alternate between them, so a set is
/// written again only after the next reduction's barriers, which every
/// thread reaches after reading it).
///
/// A row kernel's block (256 threads) adds its threads' values in a fixed
/// tree, and every thread gets the root through `workgroupUniformLoad`
/// (so the result counts as uniform, and may decide a later branch that
/// reaches a barrier). A column kernel's block is 32 columns by 8 slices;
/// the column's first thread combines the slices in slice order. Either
/// way the result does not depend on timing.
pub fn block_helpers() -> String {
    // Two sets of the larger block's slots.
    let (rx, (cx, cy)) = (crate::emit::ROW_THREADS, crate::emit::COL_THREADS);
    let slots = 2 * rx.max(cx * cy);
    let mut out = format!(
        "\nvar<workgroup> tile_smem: array<f32, {slots}>;\nvar<workgroup> tile_smem_i: array<i32, {slots}>;\n"
    );
    for (t, sfx, mem) in [("f32", "f32", "tile_smem"), ("i32", "i64", "tile_smem_i")] {
        for op in ["sum", "max", "min"] {
            let combine = |a: &str, b: &str| match op {
                "sum" => format!("{a} + {b}"),
                _ => format!("tile_{op}_{sfx}({a}, {b})"),
            };
            out.push_str(&format!(
                "fn tile_block_{op}_{sfx}(v: {t}, base: i32, lid: vec3<u32>) -> {t} {{\n  \
                 let t = i32(lid.x);\n  {mem}[base + t] = v;\n  workgroupBarrier();\n  \
                 for (var s: i32 = {half}; s > 0; s = s / 2) {{\n    \
                 if (t < s) {{ {mem}[base + t] = {}; }}\n    workgroupBarrier();\n  }}\n  \
                 return workgroupUniformLoad(&{mem}[base]);\n}}\n",
                combine(&format!("{mem}[base + t]"), &format!("{mem}[base + t + s]")),
                half = crate::emit::ROW_THREADS / 2,
            ));
            let (cx, cy) = crate::emit::COL_THREADS;
            out.push_str(&format!(
                "fn tile_col_{op}_{sfx}(v: {t}, base: i32, lid: vec3<u32>) -> {t} {{\n  \
                 let x = i32(lid.x);\n  {mem}[base + i32(lid.y) * {cx} + x] = v;\n  workgroupBarrier();\n  \
                 if (lid.y == 0u) {{\n    var u: {t} = {mem}[base + x];\n    \
                 for (var y: i32 = 1; y < {cy}; y++) {{ u = {}; }}\n    {mem}[base + x] = u;\n  }}\n  \
                 workgroupBarrier();\n  return {mem}[base + x];\n}}\n",
                combine("u", &format!("{mem}[base + y * {cx} + x]")),
            ));
        }
    }
    out
}

/// The prelude text (the same for every program). Integer helpers keep
/// the C back ends' names (`_i64`: Tile's integer type), on WGSL's `i32`.
pub const PRELUDE: &str = r#"
/* A failed check reports its site (1-based), unless one is reported
   already: a thread of a kernel with barriers goes on after a failure,
   and a later check it fails (on a value read out of bounds) must not
   hide the first. */
fn tile_fail(id: i32) {
  loop {
    let r = atomicCompareExchangeWeak(&tile_err, 0, id);
    if (r.exchanged || r.old_value != 0) { break; }
  }
}

fn tile_inf_f32() -> f32 { var b = 0x7f800000u; return bitcast<f32>(b); }
fn tile_nan_f32() -> f32 { var b = 0x7fc00000u; return bitcast<f32>(b); }
fn tile_isnan_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }

fn tile_exp_f32(x: f32) -> f32 { return exp(x); }
fn tile_exp2_f32(x: f32) -> f32 { return exp2(x); }
fn tile_log_f32(x: f32) -> f32 {
  if (x < 0.0) { return tile_nan_f32(); }
  if (x == 0.0) { return -tile_inf_f32(); }
  return log(x);
}
fn tile_log2_f32(x: f32) -> f32 {
  if (x < 0.0) { return tile_nan_f32(); }
  if (x == 0.0) { return -tile_inf_f32(); }
  return log2(x);
}
/* log(1 + x) without losing x's digits near zero (Goldberg's form). */
fn tile_log1p_f32(x: f32) -> f32 {
  if (tile_isnan_f32(x) || x > 1.0e30) { return tile_log_f32(x); }
  let u = 1.0 + x;
  if (u == 1.0) { return x; }
  return tile_log_f32(u) * (x / (u - 1.0));
}
/* exp(x) - 1 near zero (Kahan's form). */
fn tile_expm1_f32(x: f32) -> f32 {
  if (tile_isnan_f32(x) || x > 80.0) { return exp(x); }
  if (x < -30.0) { return -1.0; }
  let u = exp(x);
  if (u == 1.0) { return x; }
  let um1 = u - 1.0;
  if (um1 == -1.0) { return -1.0; }
  return um1 * (x / log(u));
}
fn tile_sqrt_f32(x: f32) -> f32 {
  if (x < 0.0) { return tile_nan_f32(); }
  return sqrt(x);
}
fn tile_rsqrt_f32(x: f32) -> f32 { return 1.0 / tile_sqrt_f32(x); }
fn tile_tanh_f32(x: f32) -> f32 {
  if (tile_isnan_f32(x)) { return x; }
  if (abs(x) > 10.0) { return sign(x); }
  let e = tile_expm1_f32(2.0 * x);
  return e / (e + 2.0);
}
fn tile_sigmoid_f32(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }
/* erf: its Taylor series to x^13 below 0.5 (the next term is below
   5e-10), then Abramowitz and Stegun 7.1.26 (absolute error below
   1.5e-7, about 3 ulp at erf(0.5)). */
fn tile_erf_f32(x: f32) -> f32 {
  if (tile_isnan_f32(x)) { return x; }
  let a = abs(x);
  if (a < 0.5) {
    let z = x * x;
    return x * (1.1283791671 + z * (-0.3761263890 + z * (0.1128379167 + z * (-0.0268661706
      + z * (0.0052239776 + z * (-0.0008548327 + z * 0.0001205533))))));
  }
  if (a > 4.0) { return sign(x); }
  let t = 1.0 / (1.0 + 0.3275911 * a);
  let p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - p * exp(-a * a));
}
fn tile_sin_f32(x: f32) -> f32 { return sin(x); }
fn tile_cos_f32(x: f32) -> f32 { return cos(x); }
fn tile_floor_f32(x: f32) -> f32 { return floor(x); }
fn tile_ceil_f32(x: f32) -> f32 { return ceil(x); }
fn tile_abs_f32(x: f32) -> f32 { return abs(x); }
/* As C's fminf and fmaxf: a NaN operand gives the other. */
fn tile_min_f32(a: f32, b: f32) -> f32 {
  if (tile_isnan_f32(a)) { return b; }
  if (tile_isnan_f32(b)) { return a; }
  return min(a, b);
}
fn tile_max_f32(a: f32, b: f32) -> f32 {
  if (tile_isnan_f32(a)) { return b; }
  if (tile_isnan_f32(b)) { return a; }
  return max(a, b);
}
/* As C's powf where WGSL leaves pow undefined: an exponent of zero, a
   base of one (even with a NaN exponent), a base of -1 with an infinite
   exponent, zero bases (the sign kept for odd integer exponents), and
   negative bases. */
fn tile_pow_f32(a: f32, b: f32) -> f32 {
  if (b == 0.0 || a == 1.0) { return 1.0; }
  if (tile_isnan_f32(a) || tile_isnan_f32(b)) { return tile_nan_f32(); }
  let b_inf = abs(b) > 3.4028235e38;
  if (a == -1.0 && b_inf) { return 1.0; }
  let odd = !b_inf && floor(b) == b && floor(b * 0.5) * 2.0 != b;
  if (a == 0.0) {
    let neg = (bitcast<u32>(a) >> 31u) == 1u && odd;
    if (b < 0.0) { return select(tile_inf_f32(), -tile_inf_f32(), neg); }
    return select(0.0, -0.0, neg);
  }
  if (a < 0.0) {
    if (floor(b) != b) { return tile_nan_f32(); }
    let r = pow(-a, b);
    if (odd) { return -r; }
    return r;
  }
  return pow(a, b);
}
fn tile_fma_f32(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }

fn tile_abs_i64(x: i32) -> i32 { return select(x, -x, x < 0); }
fn tile_min_i64(a: i32, b: i32) -> i32 { return min(a, b); }
fn tile_max_i64(a: i32, b: i32) -> i32 { return max(a, b); }
fn tile_sat_i32(x: i32) -> i32 { return x; }
fn tile_clampi_i64(x: i32) -> i32 { return x; }
/* Truncates toward zero and saturates to i32; NaN is 0. */
fn tile_f2i_f32(x: f32) -> i32 {
  if (tile_isnan_f32(x)) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x <= -2147483648.0) { return -2147483647 - 1; }
  return i32(x);
}
/* Truncating division; a zero divisor or overflow reports site `id`. */
fn tile_idiv_i64(a: i32, b: i32, e: i32, id: i32) -> i32 {
  if (b == 0 || (b == -1 && a == -2147483647 - 1)) { tile_fail(id); return 0; }
  return a / b;
}
/* Remainder of the truncating division (the dividend's sign). */
fn tile_irem_i64(a: i32, b: i32, e: i32, id: i32) -> i32 {
  if (b == 0 || (b == -1 && a == -2147483647 - 1)) { tile_fail(id); return 0; }
  return a % b;
}
"#;
