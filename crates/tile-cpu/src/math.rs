//! Math helpers of the generated C.
//!
//! - Scalars (`tile_exp_f32`, ...) call the C library (correctly rounded or
//!   nearly so); they serve scalar code and vector tails.
//! - `f32` vectors: `exp exp2 log log2 tanh sigmoid erf` are polynomials
//!   with range reduction (Cody-Waite for exp, exponent split for log,
//!   Cephes-style coefficients; tanh is a rational function), written with plain vector arithmetic and
//!   bitwise selects; NaN propagates, infinities and saturation are exact.
//!   `floor ceil abs min max` are exact vector code; `sqrt rsqrt fma` are
//!   lane loops over compiler builtins that the C compiler turns into vector
//!   instructions.
//! - `sin cos pow` on `f32` vectors and the transcendental functions on
//!   `f64` vectors run lane by lane through the C library (correct, not
//!   fast; none is on the benchmark's hot path).
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
    // Lane-by-lane through the C library.
    let lanewise: &[(&str, &str)] = &[
        ("f32", "sin"),
        ("f32", "cos"),
        ("f64", "exp"),
        ("f64", "exp2"),
        ("f64", "log"),
        ("f64", "log2"),
        ("f64", "tanh"),
        ("f64", "sigmoid"),
        ("f64", "erf"),
        ("f64", "sin"),
        ("f64", "cos"),
    ];
    for (s, name) in lanewise {
        let vt = format!("tile_v{s}");
        v.push(helper(
            &format!("tile_{name}_v{s}"),
            &[&format!("tile_{name}_{s}")],
            &format!(
                r#"
static inline {vt} tile_{name}_v{s}({vt} x) {{
  {vt} r;
  for (int l = 0; l < TILE_L; l++) r[l] = tile_{name}_{s}(x[l]);
  return r;
}}"#
            ),
        ));
    }
    for s in ["f32", "f64"] {
        let vt = format!("tile_v{s}");
        v.push(helper(
            &format!("tile_pow_v{s}"),
            &[&format!("tile_pow_{s}")],
            &format!(
                r#"
static inline {vt} tile_pow_v{s}({vt} a, {vt} b) {{
  {vt} r;
  for (int l = 0; l < TILE_L; l++) r[l] = tile_pow_{s}(a[l], b[l]);
  return r;
}}"#
            ),
        ));
    }
    v.extend(f32_polynomials());
    v
}

/// `exp exp2 log log2 tanh sigmoid erf` on `f32` vectors.
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
    v
}
