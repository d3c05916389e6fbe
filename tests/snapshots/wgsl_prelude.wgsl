
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

var<workgroup> tile_smem: array<f32, 512>;
var<workgroup> tile_smem_i: array<i32, 512>;
fn tile_block_sum_f32(v: f32, base: i32, lid: vec3<u32>) -> f32 {
  let t = i32(lid.x);
  tile_smem[base + t] = v;
  workgroupBarrier();
  for (var s: i32 = 128; s > 0; s = s / 2) {
    if (t < s) { tile_smem[base + t] = tile_smem[base + t] + tile_smem[base + t + s]; }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&tile_smem[base]);
}
fn tile_col_sum_f32(v: f32, base: i32, lid: vec3<u32>) -> f32 {
  let x = i32(lid.x);
  tile_smem[base + i32(lid.y) * 32 + x] = v;
  workgroupBarrier();
  if (lid.y == 0u) {
    var u: f32 = tile_smem[base + x];
    for (var y: i32 = 1; y < 8; y++) { u = u + tile_smem[base + y * 32 + x]; }
    tile_smem[base + x] = u;
  }
  workgroupBarrier();
  return tile_smem[base + x];
}
fn tile_block_max_f32(v: f32, base: i32, lid: vec3<u32>) -> f32 {
  let t = i32(lid.x);
  tile_smem[base + t] = v;
  workgroupBarrier();
  for (var s: i32 = 128; s > 0; s = s / 2) {
    if (t < s) { tile_smem[base + t] = tile_max_f32(tile_smem[base + t], tile_smem[base + t + s]); }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&tile_smem[base]);
}
fn tile_col_max_f32(v: f32, base: i32, lid: vec3<u32>) -> f32 {
  let x = i32(lid.x);
  tile_smem[base + i32(lid.y) * 32 + x] = v;
  workgroupBarrier();
  if (lid.y == 0u) {
    var u: f32 = tile_smem[base + x];
    for (var y: i32 = 1; y < 8; y++) { u = tile_max_f32(u, tile_smem[base + y * 32 + x]); }
    tile_smem[base + x] = u;
  }
  workgroupBarrier();
  return tile_smem[base + x];
}
fn tile_block_min_f32(v: f32, base: i32, lid: vec3<u32>) -> f32 {
  let t = i32(lid.x);
  tile_smem[base + t] = v;
  workgroupBarrier();
  for (var s: i32 = 128; s > 0; s = s / 2) {
    if (t < s) { tile_smem[base + t] = tile_min_f32(tile_smem[base + t], tile_smem[base + t + s]); }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&tile_smem[base]);
}
fn tile_col_min_f32(v: f32, base: i32, lid: vec3<u32>) -> f32 {
  let x = i32(lid.x);
  tile_smem[base + i32(lid.y) * 32 + x] = v;
  workgroupBarrier();
  if (lid.y == 0u) {
    var u: f32 = tile_smem[base + x];
    for (var y: i32 = 1; y < 8; y++) { u = tile_min_f32(u, tile_smem[base + y * 32 + x]); }
    tile_smem[base + x] = u;
  }
  workgroupBarrier();
  return tile_smem[base + x];
}
fn tile_block_sum_i64(v: i32, base: i32, lid: vec3<u32>) -> i32 {
  let t = i32(lid.x);
  tile_smem_i[base + t] = v;
  workgroupBarrier();
  for (var s: i32 = 128; s > 0; s = s / 2) {
    if (t < s) { tile_smem_i[base + t] = tile_smem_i[base + t] + tile_smem_i[base + t + s]; }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&tile_smem_i[base]);
}
fn tile_col_sum_i64(v: i32, base: i32, lid: vec3<u32>) -> i32 {
  let x = i32(lid.x);
  tile_smem_i[base + i32(lid.y) * 32 + x] = v;
  workgroupBarrier();
  if (lid.y == 0u) {
    var u: i32 = tile_smem_i[base + x];
    for (var y: i32 = 1; y < 8; y++) { u = u + tile_smem_i[base + y * 32 + x]; }
    tile_smem_i[base + x] = u;
  }
  workgroupBarrier();
  return tile_smem_i[base + x];
}
fn tile_block_max_i64(v: i32, base: i32, lid: vec3<u32>) -> i32 {
  let t = i32(lid.x);
  tile_smem_i[base + t] = v;
  workgroupBarrier();
  for (var s: i32 = 128; s > 0; s = s / 2) {
    if (t < s) { tile_smem_i[base + t] = tile_max_i64(tile_smem_i[base + t], tile_smem_i[base + t + s]); }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&tile_smem_i[base]);
}
fn tile_col_max_i64(v: i32, base: i32, lid: vec3<u32>) -> i32 {
  let x = i32(lid.x);
  tile_smem_i[base + i32(lid.y) * 32 + x] = v;
  workgroupBarrier();
  if (lid.y == 0u) {
    var u: i32 = tile_smem_i[base + x];
    for (var y: i32 = 1; y < 8; y++) { u = tile_max_i64(u, tile_smem_i[base + y * 32 + x]); }
    tile_smem_i[base + x] = u;
  }
  workgroupBarrier();
  return tile_smem_i[base + x];
}
fn tile_block_min_i64(v: i32, base: i32, lid: vec3<u32>) -> i32 {
  let t = i32(lid.x);
  tile_smem_i[base + t] = v;
  workgroupBarrier();
  for (var s: i32 = 128; s > 0; s = s / 2) {
    if (t < s) { tile_smem_i[base + t] = tile_min_i64(tile_smem_i[base + t], tile_smem_i[base + t + s]); }
    workgroupBarrier();
  }
  return workgroupUniformLoad(&tile_smem_i[base]);
}
fn tile_col_min_i64(v: i32, base: i32, lid: vec3<u32>) -> i32 {
  let x = i32(lid.x);
  tile_smem_i[base + i32(lid.y) * 32 + x] = v;
  workgroupBarrier();
  if (lid.y == 0u) {
    var u: i32 = tile_smem_i[base + x];
    for (var y: i32 = 1; y < 8; y++) { u = tile_min_i64(u, tile_smem_i[base + y * 32 + x]); }
    tile_smem_i[base + x] = u;
  }
  workgroupBarrier();
  return tile_smem_i[base + x];
}
