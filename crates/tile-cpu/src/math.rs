//! Math helpers of the generated C.
//!
//! - Scalars (`tile_exp_f32`, ...) call the C library (correctly rounded or
//!   nearly so); they serve scalar code and vector tails.
//! - `f32` vectors: `exp exp2 log log2 tanh sigmoid erf` are polynomials
//!   with range reduction (Cody-Waite for exp, exponent split for log,
//!   Cephes-style coefficients; tanh is a rational function), written with plain vector arithmetic and
//!   bitwise selects; NaN propagates, infinities and saturation are exact.
//!   `sin cos` reduce by pi/2 (Cody-Waite, three parts) onto Cephes'
//!   minimax polynomials; `pow` is computed in `f64` and rounded once.
//!   `floor ceil abs min max` are exact vector code; `sqrt rsqrt fma` are
//!   lane loops over compiler builtins that the C compiler turns into vector
//!   instructions.
//! - `f64` vectors: `exp exp2 log log2 tanh sigmoid erf sin cos pow` are
//!   vector code in the same style, with Taylor polynomials (exact
//!   coefficients, generated here) where a minimax fit would need tables
//!   of constants: within a few ulp, except `erf` (below 1e-14 relative)
//!   and `pow` (below 4e-13).
//! - The C library still serves the lanes vector code cannot do well: `sin`
//!   and `cos` of huge arguments (|x| > 16384 in `f32`, 1e5 in `f64`) and
//!   `pow` results next to the overflow and subnormal thresholds, each
//!   only when some lane needs it.
//!
//! No helper relies on `-ffast-math`: the compiler keeps IEEE semantics.

use crate::prelude::{helper, Helper};

/// Every math helper, callees first.
pub(crate) fn library() -> Vec<Helper> {
    let mut v = Vec::new();
    // Scalars, through the C library.
    for (s, t, f) in [("f32", "float", "f"), ("f64", "double", "")] {
        let one = if f == "f" { "1.0f" } else { "1.0" };
        let simple = [
            ("exp", format!("exp{f}(x)")),
            ("exp2", format!("exp2{f}(x)")),
            ("log", format!("log{f}(x)")),
            ("log2", format!("log2{f}(x)")),
            ("log1p", format!("log1p{f}(x)")),
            ("expm1", format!("expm1{f}(x)")),
            ("tanh", format!("tanh{f}(x)")),
            ("sigmoid", format!("{one} / ({one} + exp{f}(-x))")),
            ("erf", format!("erf{f}(x)")),
            ("sin", format!("sin{f}(x)")),
            ("cos", format!("cos{f}(x)")),
            ("sqrt", format!("sqrt{f}(x)")),
            ("rsqrt", format!("{one} / sqrt{f}(x)")),
            ("floor", format!("floor{f}(x)")),
            ("ceil", format!("ceil{f}(x)")),
            ("abs", format!("fabs{f}(x)")),
        ];
        for (name, body) in simple {
            v.push(helper(
                &format!("tile_{name}_{s}"),
                &[],
                &format!("static inline {t} tile_{name}_{s}({t} x) {{ return {body}; }}"),
            ));
        }
        for (name, body) in [
            ("pow", format!("pow{f}(a, b)")),
            ("min", format!("fmin{f}(a, b)")),
            ("max", format!("fmax{f}(a, b)")),
        ] {
            v.push(helper(
                &format!("tile_{name}_{s}"),
                &[],
                &format!("static inline {t} tile_{name}_{s}({t} a, {t} b) {{ return {body}; }}"),
            ));
        }
        v.push(helper(
            &format!("tile_fma_{s}"),
            &[],
            &format!(
                "static inline {t} tile_fma_{s}({t} a, {t} b, {t} c) {{ return fma{f}(a, b, c); }}"
            ),
        ));
    }
    // Exact vector helpers for both float types.
    for (s, m, absmask, big) in [
        ("f32", "tile_vm4", "0x7fffffff", "8388608.0f"),
        (
            "f64",
            "tile_vm8",
            "0x7fffffffffffffffLL",
            "4503599627370496.0",
        ),
    ] {
        let vt = format!("tile_v{s}");
        let it = if s == "f32" { "tile_vm4" } else { "tile_vi64" };
        let one = if s == "f32" { "1.0f" } else { "1.0" };
        let zero = if s == "f32" { "0.0f" } else { "0.0" };
        v.push(helper(
            &format!("tile_abs_v{s}"),
            &[],
            &format!(
                "static inline {vt} tile_abs_v{s}({vt} x) {{ return ({vt})(({m})x & {absmask}); }}"
            ),
        ));
        for (name, cmp, first, second) in [("max", ">", "a", "b"), ("min", "<", "a", "b")] {
            v.push(helper(
                &format!("tile_{name}_v{s}"),
                &[&format!("tile_sel_v{s}")],
                &format!(
                    r#"
/* IEEE {name}: a NaN operand yields the other operand. */
static inline {vt} tile_{name}_v{s}({vt} a, {vt} b) {{
  {vt} r = tile_sel_v{s}(({m})({first} {cmp} {second}), a, b);
  r = tile_sel_v{s}(({m})(b != b), a, r);
  return tile_sel_v{s}(({m})(a != a), b, r);
}}"#
                ),
            ));
        }
        for (name, adjust) in [("floor", ">"), ("ceil", "<")] {
            let step = if name == "floor" { "-" } else { "+" };
            v.push(helper(
                &format!("tile_{name}_v{s}"),
                &[
                    &format!("tile_sel_v{s}"),
                    &format!("tile_abs_v{s}"),
                    &format!("tile_splat_v{s}"),
                ],
                &format!(
                    r#"
/* Exact: integral values (and NaN, infinities) pass through. */
static inline {vt} tile_{name}_v{s}({vt} x) {{
  {m} small = ({m})(tile_abs_v{s}(x) < {big});
  {vt} xs = tile_sel_v{s}(small, x, tile_splat_v{s}({zero}));
  {vt} t = __builtin_convertvector(__builtin_convertvector(xs, {it}), {vt});
  t = tile_sel_v{s}(({m})(t {adjust} xs), t {step} {one}, t);
  return tile_sel_v{s}(small, t, x);
}}"#
                ),
            ));
        }
        let fsfx = if s == "f32" { "f" } else { "" };
        for (name, body) in [
            ("sqrt", format!("__builtin_sqrt{fsfx}(x[l])")),
            ("rsqrt", format!("{one} / __builtin_sqrt{fsfx}(x[l])")),
        ] {
            v.push(helper(
                &format!("tile_{name}_v{s}"),
                &[],
                &format!(
                    r#"
static inline {vt} tile_{name}_v{s}({vt} x) {{
  {vt} r;
  for (int l = 0; l < TILE_L; l++) r[l] = {body};
  return r;
}}"#
                ),
            ));
        }
        v.push(helper(
            &format!("tile_fma_v{s}"),
            &[],
            &format!(
                r#"
static inline {vt} tile_fma_v{s}({vt} a, {vt} b, {vt} c) {{
  {vt} r;
  for (int l = 0; l < TILE_L; l++) r[l] = __builtin_fma{fsfx}(a[l], b[l], c[l]);
  return r;
}}"#
            ),
        ));
    }
    v.extend(f32_polynomials());
    v.extend(f64_polynomials());
    for s in ["f32", "f64"] {
        v.extend(near_one(s));
    }
    v
}

/// `log1p` and `expm1` on vectors of `s` (`f32` or `f64`) from the vector
/// `log` and `exp`, by the classic corrections that cancel their rounding
/// near 0 (Goldberg's for log1p, Kahan's for expm1: a few ulp). With
/// `u = 1 + x`: `log1p(x) = x` where `u == 1`, else `log(u) * (x / (u -
/// 1))`; with `u = e^x`: `expm1(x) = x` where `u == 1`, `-1` where `u - 1
/// == -1`, else `(u - 1) * (x / log(u))`. Infinite `u` gives `u` (`+inf`
/// and overflow), NaN stays NaN, -0 stays -0, `log1p(-1) = -inf` and
/// `log1p(x < -1)` is NaN from `log`.
fn near_one(s: &str) -> Vec<Helper> {
    let (vt, m, one, inf) = match s {
        "f32" => ("tile_vf32", "tile_vm4", "1.0f", "__builtin_inff()"),
        _ => ("tile_vf64", "tile_vm8", "1.0", "__builtin_inf()"),
    };
    let sel = format!("tile_sel_v{s}");
    vec![
        helper(
            &format!("tile_log1p_v{s}"),
            &[&format!("tile_log_v{s}"), &sel],
            &format!(
                r#"
static inline {vt} tile_log1p_v{s}({vt} x) {{
  {vt} u = {one} + x;
  {vt} r = tile_log_v{s}(u) * (x / (u - {one}));
  r = {sel}(({m})(u == {one}), x, r);
  return {sel}(({m})(u == {inf}), u, r);
}}"#
            ),
        ),
        helper(
            &format!("tile_expm1_v{s}"),
            &[&format!("tile_exp_v{s}"), &format!("tile_log_v{s}"), &sel],
            &format!(
                r#"
static inline {vt} tile_expm1_v{s}({vt} x) {{
  {vt} u = tile_exp_v{s}(x);
  {vt} um = u - {one};
  {vt} r = um * (x / tile_log_v{s}(u));
  r = {sel}(({m})(u == {one}), x, r);
  r = {sel}(({m})(um == -{one}), um, r);
  return {sel}(({m})(u == {inf}), u, r);
}}"#
            ),
        ),
    ]
}

/// `exp exp2 log log2 tanh sigmoid erf sin cos` on `f32` vectors.
fn f32_polynomials() -> Vec<Helper> {
    let sel = "tile_sel_vf32";
    let splat = "tile_splat_vf32";
    let mut v = vec![
        helper(
            "tile_expcore_vf32",
            &[],
            r#"
/* 2^n * e^r for integral n in [-151, 129] and |r| <= ln(2)/2: a degree-6
   polynomial for e^r (Cephes' expf coefficients), and 2^n applied as two
   factors so that results in the subnormal range and overflow to infinity
   come out right. NaN in r gives NaN. */
static inline tile_vf32 tile_expcore_vf32(tile_vf32 n, tile_vf32 r) {
  tile_vf32 p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  tile_vm4 k = __builtin_convertvector(n, tile_vm4);
  tile_vm4 k1 = k >> 1;
  tile_vm4 k2 = k - k1;
  tile_vf32 s1 = (tile_vf32)((k1 + 127) << 23);
  tile_vf32 s2 = (tile_vf32)((k2 + 127) << 23);
  return p * s1 * s2;
}"#,
        ),
        helper(
            "tile_exp_vf32",
            &["tile_expcore_vf32", sel, splat],
            r#"
/* e^x: x = n ln(2) + r with a two-part ln(2) (Cody-Waite), n rounded by
   the 1.5 * 2^23 trick. Clamping keeps n in range; beyond it the result is
   0 or infinity anyway. */
static inline tile_vf32 tile_exp_vf32(tile_vf32 x) {
  tile_vf32 xc = tile_sel_vf32((tile_vm4)(x > 88.8f), tile_splat_vf32(88.8f), x);
  xc = tile_sel_vf32((tile_vm4)(xc < -104.0f), tile_splat_vf32(-104.0f), xc);
  tile_vf32 n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  tile_vf32 r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  return tile_expcore_vf32(n, r);
}"#,
        ),
        helper(
            "tile_exp2_vf32",
            &["tile_expcore_vf32", sel, splat],
            r#"
/* 2^x = 2^n * e^((x - n) ln 2), n = round(x). */
static inline tile_vf32 tile_exp2_vf32(tile_vf32 x) {
  tile_vf32 xc = tile_sel_vf32((tile_vm4)(x > 129.0f), tile_splat_vf32(129.0f), x);
  xc = tile_sel_vf32((tile_vm4)(xc < -151.0f), tile_splat_vf32(-151.0f), xc);
  tile_vf32 n = (xc + 12582912.0f) - 12582912.0f;
  return tile_expcore_vf32(n, (xc - n) * 0.693147180559945309f);
}"#,
        ),
        helper(
            "tile_logparts_vf32",
            &[sel],
            r#"
/* x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = t + c with t = m - 1
   and c = t^3 P(t) - t^2/2 (Cephes' logf polynomial). Subnormal x is
   scaled first. Valid for finite x > 0. */
static inline void tile_logparts_vf32(tile_vf32 x, tile_vf32 *t, tile_vf32 *c, tile_vf32 *e) {
  tile_vm4 sub = (tile_vm4)(x < 1.17549435e-38f);
  tile_vf32 xs = tile_sel_vf32(sub, x * 16777216.0f, x);
  tile_vm4 bits = (tile_vm4)xs;
  tile_vm4 ex = ((bits >> 23) & 0xff) - 126 - (sub & 24);
  tile_vf32 m = (tile_vf32)((bits & 0x007fffff) | 0x3f000000);
  tile_vm4 low = (tile_vm4)(m < 0.707106781186547524f);
  ex = ex + low;
  tile_vf32 u = tile_sel_vf32(low, (m + m) - 1.0f, m - 1.0f);
  tile_vf32 z = u * u;
  tile_vf32 y = u * 7.0376836292e-2f - 1.1514610310e-1f;
  y = y * u + 1.1676998740e-1f;
  y = y * u - 1.2420140846e-1f;
  y = y * u + 1.4249322787e-1f;
  y = y * u - 1.6668057665e-1f;
  y = y * u + 2.0000714765e-1f;
  y = y * u - 2.4999993993e-1f;
  y = y * u + 3.3333331174e-1f;
  *t = u;
  *c = y * u * z - 0.5f * z;
  *e = __builtin_convertvector(ex, tile_vf32);
}"#,
        ),
        helper(
            "tile_logfix_vf32",
            &[sel, splat],
            r#"
/* log of 0 is -inf, of negatives NaN, of +inf +inf; NaN stays NaN. */
static inline tile_vf32 tile_logfix_vf32(tile_vf32 x, tile_vf32 r) {
  r = tile_sel_vf32((tile_vm4)(x == 0.0f), tile_splat_vf32(-__builtin_inff()), r);
  r = tile_sel_vf32((tile_vm4)(x < 0.0f), tile_splat_vf32(__builtin_nanf("")), r);
  r = tile_sel_vf32((tile_vm4)(x == __builtin_inff()), x, r);
  return tile_sel_vf32((tile_vm4)(x != x), x, r);
}"#,
        ),
        helper(
            "tile_log_vf32",
            &["tile_logparts_vf32", "tile_logfix_vf32"],
            r#"
static inline tile_vf32 tile_log_vf32(tile_vf32 x) {
  tile_vf32 t, c, e;
  tile_logparts_vf32(x, &t, &c, &e);
  tile_vf32 r = (t + (c + e * -2.12194440e-4f)) + e * 0.693359375f;
  return tile_logfix_vf32(x, r);
}"#,
        ),
        helper(
            "tile_log2_vf32",
            &["tile_logparts_vf32", "tile_logfix_vf32"],
            r#"
static inline tile_vf32 tile_log2_vf32(tile_vf32 x) {
  tile_vf32 t, c, e;
  tile_logparts_vf32(x, &t, &c, &e);
  tile_vf32 r = (t * 1.44269504088896341f + c * 1.44269504088896341f) + e;
  return tile_logfix_vf32(x, r);
}"#,
        ),
        helper(
            "tile_tanh_vf32",
            &["tile_exp_vf32", "tile_abs_vf32", sel, "tile_any_vm4"],
            r#"
/* |x| < 3: x P(x^2) / Q(x^2) (Eigen's rational approximation, a few ulp:
   one division and eleven multiply-adds, GELU's hot path). Lanes with
   |x| >= 3, computed only when some lane has one: 1 - 2 / (e^(2|x|) + 1)
   with the sign of x, within half an ulp of +-1, so 1 - t^2 keeps its
   accuracy near saturation and +-1 is exact there. NaN stays NaN. */
static inline tile_vf32 tile_tanh_vf32(tile_vf32 x) {
  tile_vf32 z = x * x;
  tile_vf32 p = z * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = p * z - 8.60467152213735e-11f;
  p = p * z + 5.12229709037114e-08f;
  p = p * z + 1.48572235717979e-05f;
  p = p * z + 6.37261928875436e-04f;
  p = p * z + 4.89352455891786e-03f;
  tile_vf32 q = z * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = q * z + 2.26843463243900e-03f;
  q = q * z + 4.89352518554385e-03f;
  tile_vf32 r = (x * p) / q;
  tile_vf32 a = tile_abs_vf32(x);
  tile_vm4 big = (tile_vm4)(a >= 3.0f);
  if (tile_any_vm4(big)) {
    tile_vf32 e = 1.0f - 2.0f / (tile_exp_vf32(a + a) + 1.0f);
    e = tile_sel_vf32((tile_vm4)(x < 0.0f), -e, e);
    r = tile_sel_vf32(big, e, r);
  }
  return r;
}"#,
        ),
        helper(
            "tile_sigmoid_vf32",
            &["tile_exp_vf32"],
            r#"
/* 1 / (1 + e^-x): exactly 1 and 0 at saturation, NaN for NaN. */
static inline tile_vf32 tile_sigmoid_vf32(tile_vf32 x) {
  return 1.0f / (1.0f + tile_exp_vf32(-x));
}"#,
        ),
    ];
    // erf: |x| < 1 by its Taylor series (x P(x^2), degree 21: error below
    // 2e-9); else 1 - erfc with the Chebyshev-fitted erfc of Numerical
    // Recipes (relative error below 1.2e-7).
    let mut taylor = String::new();
    let coeff = |n: i32| {
        let mut fact = 1.0f64;
        for k in 1..=n {
            fact *= k as f64;
        }
        let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
        sign * 2.0 / std::f64::consts::PI.sqrt() / (fact * (2 * n + 1) as f64)
    };
    taylor.push_str(&format!(
        "  tile_vf32 p = z * {:e}f + {:e}f;\n",
        coeff(10) as f32,
        coeff(9) as f32
    ));
    for n in (0..9).rev() {
        taylor.push_str(&format!("  p = p * z + {:e}f;\n", coeff(n) as f32));
    }
    v.push(helper(
        "tile_erf_vf32",
        &["tile_exp_vf32", "tile_abs_vf32", sel],
        &format!(
            r#"
/* |x| < 1: the Taylor series x P(x^2); else 1 - erfc(|x|) with the sign of
   x, erfc by the Chebyshev fit of Numerical Recipes (relative error below
   1.2e-7). */
static inline tile_vf32 tile_erf_vf32(tile_vf32 x) {{
  tile_vf32 a = tile_abs_vf32(x);
  tile_vf32 z = x * x;
{taylor}  tile_vf32 small = x * p;
  tile_vf32 t = 1.0f / (1.0f + 0.5f * a);
  tile_vf32 q = t * 0.17087277f - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  q = q * t - 1.26551223f;
  tile_vf32 big = 1.0f - t * tile_exp_vf32(q - a * a);
  big = tile_sel_vf32((tile_vm4)(x < 0.0f), -big, big);
  big = tile_sel_vf32((tile_vm4)(x != x), x, big);
  return tile_sel_vf32((tile_vm4)(a < 1.0f), small, big);
}}"#
        ),
    ));
    v.push(helper(
        "tile_sincos_vf32",
        &[
            "tile_sin_f32",
            "tile_cos_f32",
            "tile_abs_vf32",
            "tile_any_vm4",
            sel,
        ],
        r#"
/* sin x (off = 0) or cos x (off = 1): x = q pi/2 + r with a three-part
   pi/2 (Cody-Waite: q times each of the first two parts is exact for
   |q| < 2^13), |r| <= pi/4, Cephes' sinf and cosf minimax polynomials,
   the quadrant (q + off) mod 4 picking one and its sign. Lanes with
   |x| > 16384 (and infinities) go to the C library. NaN stays NaN. */
static inline tile_vf32 tile_sincos_vf32(tile_vf32 x, int32_t off) {
  tile_vf32 q = (x * 0.636619772367581343f + 12582912.0f) - 12582912.0f;
  tile_vf32 r = x - q * 1.5703125f;
  r = r - q * 4.837512969970703125e-4f;
  r = r - q * 7.549790126e-8f;
  tile_vf32 z = r * r;
  tile_vf32 s = z * -1.9515295891e-4f + 8.3321608736e-3f;
  s = s * z - 1.6666654611e-1f;
  tile_vf32 sn = tile_sel_vf32((tile_vm4)(r == 0.0f), r, r + r * z * s); /* sin(-0) = -0 */
  tile_vf32 c = z * 2.443315711809948e-5f - 1.388731625493765e-3f;
  c = c * z + 4.166664568298827e-2f;
  tile_vf32 cs = (1.0f - 0.5f * z) + z * z * c;
  tile_vm4 j = __builtin_convertvector(q, tile_vm4) + off;
  tile_vf32 v = tile_sel_vf32((tile_vm4)((j & 1) != 0), cs, sn);
  v = tile_sel_vf32((tile_vm4)((j & 2) != 0), -v, v);
  tile_vm4 big = (tile_vm4)(tile_abs_vf32(x) > 16384.0f);
  if (tile_any_vm4(big))
    for (int l = 0; l < TILE_L; l++)
      if (big[l]) v[l] = off ? tile_cos_f32(x[l]) : tile_sin_f32(x[l]);
  return v;
}"#,
    ));
    v.push(helper(
        "tile_sin_vf32",
        &["tile_sincos_vf32"],
        "static inline tile_vf32 tile_sin_vf32(tile_vf32 x) { return tile_sincos_vf32(x, 0); }",
    ));
    v.push(helper(
        "tile_cos_vf32",
        &["tile_sincos_vf32"],
        "static inline tile_vf32 tile_cos_vf32(tile_vf32 x) { return tile_sincos_vf32(x, 1); }",
    ));
    v
}

/// 1 / k!.
fn inv_fact(k: u32) -> f64 {
    let mut f = 1.0f64;
    for i in 1..=k {
        f *= i as f64;
    }
    1.0 / f
}

/// C statements declaring `{p}` as the polynomial in `{var}` with
/// coefficients `cs` (highest first), by Horner's rule.
fn horner(p: &str, var: &str, cs: &[f64]) -> String {
    let mut s = format!("  tile_vf64 {p} = {var} * {:e} + {:e};\n", cs[0], cs[1]);
    for c in &cs[2..] {
        s.push_str(&format!("  {p} = {p} * {var} + {c:e};\n"));
    }
    s
}

/// `exp exp2 log log2 tanh sigmoid erf sin cos pow` on `f64` vectors (and
/// `pow` on `f32` vectors, computed in `f64`).
fn f64_polynomials() -> Vec<Helper> {
    let sel = "tile_sel_vf64";
    let splat = "tile_splat_vf64";
    // e^r - 1 = r P(r), P the Taylor series to r^13 / 14!: below 1e-17
    // relative for |r| <= ln(2)/2.
    let em1: Vec<f64> = (1..=14).rev().map(inv_fact).collect();
    let em1 = horner("p", "r", &em1);
    // log(1 + f) = 2 atanh(s), s = f / (2 + f): 2 s (1 + z/3 + z^2/5 ...)
    // with z = s^2 <= 0.0295, to z^11 (below 1e-18).
    let atanh: Vec<f64> = (0..=11).rev().map(|k| 1.0 / (2 * k + 1) as f64).collect();
    let atanh = horner("p", "z", &atanh);
    // sin r = r + r z S(z), cos r = 1 - z/2 + z^2 C(z), z = r^2, |r| <= pi/4,
    // Taylor to r^19 and r^20.
    let sinc: Vec<f64> = (1..=9)
        .rev()
        .map(|k| if k % 2 == 1 { -1.0 } else { 1.0 } * inv_fact(2 * k + 1))
        .collect();
    let sinc = horner("s", "z", &sinc);
    let cosc: Vec<f64> = (2..=10)
        .rev()
        .map(|k| if k % 2 == 1 { -1.0 } else { 1.0 } * inv_fact(2 * k))
        .collect();
    let cosc = horner("c", "z", &cosc);
    let mut v = vec![
        helper(
            "tile_expm1core_vf64",
            &[],
            &format!(
                r#"
/* e^r - 1 for |r| <= ln(2)/2 (Taylor to r^14: below 1e-17 relative). */
static inline tile_vf64 tile_expm1core_vf64(tile_vf64 r) {{
{em1}  return p * r;
}}"#
            ),
        ),
        helper(
            "tile_expcore_vf64",
            &["tile_expm1core_vf64"],
            r#"
/* 2^n * e^r for integral n in [-1076, 1025] and |r| <= ln(2)/2; 2^n is
   applied as two factors so that subnormal results and overflow to
   infinity come out right. NaN in r gives NaN. */
static inline tile_vf64 tile_expcore_vf64(tile_vf64 n, tile_vf64 r) {
  tile_vf64 p = tile_expm1core_vf64(r) + 1.0;
  tile_vi64 k = __builtin_convertvector(n, tile_vi64);
  tile_vi64 k1 = k >> 1;
  tile_vi64 k2 = k - k1;
  tile_vf64 s1 = (tile_vf64)((k1 + 1023) << 52);
  tile_vf64 s2 = (tile_vf64)((k2 + 1023) << 52);
  return p * s1 * s2;
}"#,
        ),
        helper(
            "tile_exp_vf64",
            &["tile_expcore_vf64", sel, splat],
            r#"
/* e^x: x = n ln(2) + r with fdlibm's two-part ln(2) (n ln2_hi is exact),
   n rounded by the 1.5 * 2^52 trick. Clamping keeps n in range; beyond it
   the result is 0 or infinity anyway. */
static inline tile_vf64 tile_exp_vf64(tile_vf64 x) {
  tile_vf64 xc = tile_sel_vf64((tile_vm8)(x > 710.0), tile_splat_vf64(710.0), x);
  xc = tile_sel_vf64((tile_vm8)(xc < -746.0), tile_splat_vf64(-746.0), xc);
  tile_vf64 n = (xc * 1.4426950408889634074 + 6755399441055744.0) - 6755399441055744.0;
  tile_vf64 r = xc - n * 6.93147180369123816490e-01;
  r = r - n * 1.90821492927058770002e-10;
  return tile_expcore_vf64(n, r);
}"#,
        ),
        helper(
            "tile_exp2_vf64",
            &["tile_expcore_vf64", sel, splat],
            r#"
/* 2^x = 2^n * e^((x - n) ln 2), n = round(x), x - n exact. */
static inline tile_vf64 tile_exp2_vf64(tile_vf64 x) {
  tile_vf64 xc = tile_sel_vf64((tile_vm8)(x > 1025.0), tile_splat_vf64(1025.0), x);
  xc = tile_sel_vf64((tile_vm8)(xc < -1076.0), tile_splat_vf64(-1076.0), xc);
  tile_vf64 n = (xc + 6755399441055744.0) - 6755399441055744.0;
  return tile_expcore_vf64(n, (xc - n) * 0.69314718055994530942);
}"#,
        ),
        helper(
            "tile_logparts_vf64",
            &[sel],
            &format!(
                r#"
/* x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s) with
   s = (m - 1) / (m + 1), by its series (exact coefficients, below 1e-18).
   Subnormal x is scaled first. Valid for finite x > 0. */
static inline void tile_logparts_vf64(tile_vf64 x, tile_vf64 *lm, tile_vf64 *e) {{
  tile_vm8 sub = (tile_vm8)(x < 2.2250738585072014e-308);
  tile_vf64 xs = tile_sel_vf64(sub, x * 18014398509481984.0, x);
  tile_vi64 bits = (tile_vi64)xs;
  tile_vi64 ex = ((bits >> 52) & 0x7ff) - 1022 - (sub & 54);
  tile_vf64 m = (tile_vf64)((bits & 0x000fffffffffffffLL) | 0x3fe0000000000000LL);
  tile_vm8 low = (tile_vm8)(m < 0.70710678118654752440);
  ex = ex + low;
  tile_vf64 f = tile_sel_vf64(low, (m + m) - 1.0, m - 1.0);
  tile_vf64 s = f / (f + 2.0);
  tile_vf64 z = s * s;
{atanh}  *lm = (s + s) * p;
  *e = __builtin_convertvector(ex, tile_vf64);
}}"#
            ),
        ),
        helper(
            "tile_logfix_vf64",
            &[sel, splat],
            r#"
/* log of 0 is -inf, of negatives NaN, of +inf +inf; NaN stays NaN. */
static inline tile_vf64 tile_logfix_vf64(tile_vf64 x, tile_vf64 r) {
  r = tile_sel_vf64((tile_vm8)(x == 0.0), tile_splat_vf64(-__builtin_inf()), r);
  r = tile_sel_vf64((tile_vm8)(x < 0.0), tile_splat_vf64(__builtin_nan("")), r);
  r = tile_sel_vf64((tile_vm8)(x == __builtin_inf()), x, r);
  return tile_sel_vf64((tile_vm8)(x != x), x, r);
}"#,
        ),
        helper(
            "tile_log_vf64",
            &["tile_logparts_vf64", "tile_logfix_vf64"],
            r#"
static inline tile_vf64 tile_log_vf64(tile_vf64 x) {
  tile_vf64 lm, e;
  tile_logparts_vf64(x, &lm, &e);
  tile_vf64 r = (lm + e * 1.90821492927058770002e-10) + e * 6.93147180369123816490e-01;
  return tile_logfix_vf64(x, r);
}"#,
        ),
        helper(
            "tile_log2_vf64",
            &["tile_logparts_vf64", "tile_logfix_vf64"],
            r#"
static inline tile_vf64 tile_log2_vf64(tile_vf64 x) {
  tile_vf64 lm, e;
  tile_logparts_vf64(x, &lm, &e);
  tile_vf64 r = lm * 1.4426950408889634074 + e;
  return tile_logfix_vf64(x, r);
}"#,
        ),
        helper(
            "tile_tanh_vf64",
            &[
                "tile_exp_vf64",
                "tile_expm1core_vf64",
                "tile_abs_vf64",
                sel,
                splat,
            ],
            r#"
/* tanh |x| = t / (t + 2) with t = e^(2|x|) - 1: the Taylor polynomial of
   e^u - 1 for 2|x| < 0.34 (full relative accuracy near 0), else e^u - 1
   (at most a few ulp); 1 from |x| >= 20 on (exact there), then the sign
   of x. NaN stays NaN. */
static inline tile_vf64 tile_tanh_vf64(tile_vf64 x) {
  tile_vf64 a = tile_abs_vf64(x);
  tile_vf64 u = a + a;
  tile_vm8 small = (tile_vm8)(u < 0.34);
  tile_vf64 us = tile_sel_vf64(small, u, tile_splat_vf64(0.0));
  tile_vf64 ub = tile_sel_vf64(small, tile_splat_vf64(1.0), u);
  tile_vf64 t = tile_sel_vf64(small, tile_expm1core_vf64(us), tile_exp_vf64(ub) - 1.0);
  tile_vf64 r = t / (t + 2.0);
  r = tile_sel_vf64((tile_vm8)(a >= 20.0), tile_splat_vf64(1.0), r);
  return (tile_vf64)((tile_vm8)r | ((tile_vm8)x & INT64_MIN));
}"#,
        ),
        helper(
            "tile_sigmoid_vf64",
            &["tile_exp_vf64"],
            r#"
/* 1 / (1 + e^-x): exactly 1 and 0 at saturation, NaN for NaN. */
static inline tile_vf64 tile_sigmoid_vf64(tile_vf64 x) {
  return 1.0 / (1.0 + tile_exp_vf64(-x));
}"#,
        ),
        helper(
            "tile_sincos_vf64",
            &[
                "tile_sin_f64",
                "tile_cos_f64",
                "tile_abs_vf64",
                "tile_any_vm8",
                sel,
            ],
            &format!(
                r#"
/* sin x (off = 0) or cos x (off = 1): x = q pi/2 + r with a three-part
   pi/2 (fdlibm's pio2_1, pio2_2, pio2_2t; q pio2_1 and q pio2_2 are exact
   for |q| < 2^20), |r| <= pi/4, Taylor polynomials to r^19 and r^20, the
   quadrant (q + off) mod 4 picking one and its sign. Lanes with
   |x| > 1e5 (and infinities) go to the C library. NaN stays NaN. */
static inline tile_vf64 tile_sincos_vf64(tile_vf64 x, int64_t off) {{
  tile_vf64 q = (x * 0.63661977236758134308 + 6755399441055744.0) - 6755399441055744.0;
  tile_vf64 r = x - q * 1.5707963267341256;
  r = r - q * 6.077100506303966e-11;
  r = r - q * 2.0222662487959506e-21;
  tile_vf64 z = r * r;
{sinc}  tile_vf64 sn = tile_sel_vf64((tile_vm8)(r == 0.0), r, r + r * z * s); /* sin(-0) = -0 */
{cosc}  tile_vf64 cs = (1.0 - 0.5 * z) + z * z * c;
  tile_vi64 j = __builtin_convertvector(q, tile_vi64) + off;
  tile_vf64 v = tile_sel_vf64((tile_vm8)((j & 1) != 0), cs, sn);
  v = tile_sel_vf64((tile_vm8)((j & 2) != 0), -v, v);
  tile_vm8 big = (tile_vm8)(tile_abs_vf64(x) > 1e5);
  if (tile_any_vm8(big))
    for (int l = 0; l < TILE_L; l++)
      if (big[l]) v[l] = off ? tile_cos_f64(x[l]) : tile_sin_f64(x[l]);
  return v;
}}"#
            ),
        ),
        helper(
            "tile_sin_vf64",
            &["tile_sincos_vf64"],
            "static inline tile_vf64 tile_sin_vf64(tile_vf64 x) { return tile_sincos_vf64(x, 0); }",
        ),
        helper(
            "tile_cos_vf64",
            &["tile_sincos_vf64"],
            "static inline tile_vf64 tile_cos_vf64(tile_vf64 x) { return tile_sincos_vf64(x, 1); }",
        ),
        helper(
            "tile_pow_vf64",
            &[
                "tile_pow_f64",
                "tile_any_vm8",
                "tile_exp2_vf64",
                "tile_log2_vf64",
                "tile_abs_vf64",
                "tile_floor_vf64",
                sel,
                splat,
            ],
            r#"
/* C99 pow: |x|^y = 2^(y log2 |x|) (relative error below 4e-13 for normal
   results: |y log2 |x|| <= 1075), then the cases of C99: y = 0 or x = 1
   give 1, x = -1 with y = +-inf gives 1, a negative x (or -0, -inf) with
   an odd integer y negates, a finite negative x with a non-integer y gives
   NaN; zeros and infinities come out of log2 and exp2 themselves. Lanes
   near overflow and in the subnormal range (1000 < |y log2 |x|| < 1100),
   where the error of y log2 |x| would show, go to the C library. */
static inline tile_vf64 tile_pow_vf64(tile_vf64 x, tile_vf64 y) {
  tile_vf64 a = tile_abs_vf64(x);
  tile_vf64 ay = tile_abs_vf64(y);
  tile_vf64 t = y * tile_log2_vf64(a);
  tile_vf64 r = tile_exp2_vf64(t);
  tile_vm8 isint = (tile_vm8)(tile_floor_vf64(y) == y);
  tile_vf64 yh = tile_sel_vf64((tile_vm8)(ay < 9007199254740992.0), y, tile_splat_vf64(0.0));
  tile_vm8 odd = isint & (tile_vm8)((__builtin_convertvector(yh, tile_vi64) & 1) != 0);
  r = tile_sel_vf64(odd & (tile_vm8)((tile_vm8)x < 0), -r, r);
  tile_vm8 negfin = (tile_vm8)(x < 0.0) & (tile_vm8)(x > -__builtin_inf());
  r = tile_sel_vf64(negfin & ~isint, tile_splat_vf64(__builtin_nan("")), r);
  tile_vm8 one = ((tile_vm8)(a == 1.0) & (tile_vm8)(ay == __builtin_inf())) | (tile_vm8)(x == 1.0) | (tile_vm8)(y == 0.0);
  r = tile_sel_vf64(one, tile_splat_vf64(1.0), r);
  tile_vf64 at = tile_abs_vf64(t);
  tile_vm8 edge = (tile_vm8)(at > 1000.0) & (tile_vm8)(at < 1100.0);
  if (tile_any_vm8(edge))
    for (int l = 0; l < TILE_L; l++)
      if (edge[l]) r[l] = tile_pow_f64(x[l], y[l]);
  return r;
}"#,
        ),
        helper(
            "tile_pow_vf32",
            &["tile_pow_vf64"],
            r#"
/* In f64, then rounded once: within about 1e-13 relative before rounding. */
static inline tile_vf32 tile_pow_vf32(tile_vf32 a, tile_vf32 b) {
  tile_vf64 r = tile_pow_vf64(__builtin_convertvector(a, tile_vf64), __builtin_convertvector(b, tile_vf64));
  return __builtin_convertvector(r, tile_vf32);
}"#,
        ),
    ];
    // erf: the Taylor series x P(x^2) to x^81 for |x| < 2.5 (terms below
    // 1e-18; cancellation costs at most a factor 40); else 1 - erfc with
    // erfc(a) = e^(-a^2) / (sqrt(pi) K(a)), K the continued fraction
    // a + (1/2) / (a + 1 / (a + (3/2) / ...)) to 24 terms (erfc within
    // 1e-12 relative from 2.5 on, so erf within 1e-14).
    let taylor: Vec<f64> = (0..=40)
        .rev()
        .map(|n| {
            let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
            sign * std::f64::consts::FRAC_2_SQRT_PI * inv_fact(n) / (2 * n + 1) as f64
        })
        .collect();
    let taylor = horner("p", "z", &taylor);
    let mut frac = String::new();
    for n in (1..=24).rev() {
        frac.push_str(&format!("    k = b + {:e} / k;\n", n as f64 / 2.0));
    }
    v.push(helper(
        "tile_erf_vf64",
        &["tile_exp_vf64", "tile_abs_vf64", "tile_any_vm8", sel, splat],
        &format!(
            r#"
/* |x| < 2.5: the Taylor series x P(x^2); else 1 - erfc(|x|) with the sign
   of x, erfc by its continued fraction (computed only when some lane needs
   it; |x| is clamped to 6, where erf is 1 in f64). NaN stays NaN. */
static inline tile_vf64 tile_erf_vf64(tile_vf64 x) {{
  tile_vf64 a = tile_abs_vf64(x);
  tile_vm8 big = (tile_vm8)(a >= 2.5);
  tile_vf64 z = tile_sel_vf64(big, tile_splat_vf64(0.0), x * x);
{taylor}  tile_vf64 r = x * p;
  if (tile_any_vm8(big)) {{
    tile_vf64 b = tile_sel_vf64((tile_vm8)(a > 6.0), tile_splat_vf64(6.0), a);
    b = tile_sel_vf64(big, b, tile_splat_vf64(6.0));
    tile_vf64 k = b;
{frac}    tile_vf64 e = 1.0 - tile_exp_vf64(-(b * b)) * 0.56418958354775628695 / k;
    e = tile_sel_vf64((tile_vm8)(x < 0.0), -e, e);
    r = tile_sel_vf64(big, e, r);
  }}
  return r;
}}"#
        ),
    ));
    v
}
