/* Tile: C kernels of program `attention` (1 kernel). */
#include <stdint.h>
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
#define TILE_L (TILE_VBYTES / 4)

typedef float tile_vf32 __attribute__((vector_size(TILE_L * 4)));
typedef double tile_vf64 __attribute__((vector_size(TILE_L * 8)));
typedef int64_t tile_vi64 __attribute__((vector_size(TILE_L * 8)));
typedef int32_t tile_vm4 __attribute__((vector_size(TILE_L * 4)));
typedef int64_t tile_vm8 __attribute__((vector_size(TILE_L * 8)));
typedef uint8_t tile_vu8 __attribute__((vector_size(TILE_L)));
typedef tile_vm4 tile_vmd;

/* A failed check reports its site (1-based) and abandons the slice. */
#define TILE_FAIL(id) do { __atomic_store_n(err, (id), __ATOMIC_RELAXED); return; } while (0)

int32_t tile_lanes(void) { return TILE_L; }

static inline tile_vf32 tile_splat_vf32(float x) { return (tile_vf32){0} + x; }

static inline tile_vf64 tile_splat_vf64(double x) { return (tile_vf64){0} + x; }

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_sel_vf32(tile_vm4 m, tile_vf32 a, tile_vf32 b) { return (tile_vf32)((m & (tile_vm4)a) | (~m & (tile_vm4)b)); }

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline double tile_hsum_vf64(tile_vf64 v) {
  double s = 0.0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

static inline float tile_exp_f32(float x) { return expf(x); }

static inline float tile_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }

static inline float tile_max_f32(float a, float b) { return fmaxf(a, b); }

/* IEEE max: a NaN operand yields the other operand. */
static inline tile_vf32 tile_max_vf32(tile_vf32 a, tile_vf32 b) {
  tile_vf32 r = tile_sel_vf32((tile_vm4)(a > b), a, b);
  r = tile_sel_vf32((tile_vm4)(b != b), a, r);
  return tile_sel_vf32((tile_vm4)(a != a), b, r);
}

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
}

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
}

static inline float tile_hmax_vf32(tile_vf32 v) {
  float m = v[0];
  for (int l = 1; l < TILE_L; l++) m = tile_max_f32(m, v[l]);
  return m;
}

/* k0: row_reduction over i in 0..M; stores o; reads q, k, v */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_D = S[1];
  const int64_t s_N = S[2];
  const float *restrict p_q = (const float *)A[0];
  const int64_t n0_q = s_M;
  const int64_t n1_q = s_D;
  const float *restrict p_k = (const float *)A[1];
  const int64_t n0_k = s_N;
  const int64_t n1_k = s_D;
  const float *restrict p_v = (const float *)A[2];
  const int64_t n0_v = s_N;
  const int64_t n1_v = s_D;
  float *restrict p_o = (float *)A[3];
  const int64_t n0_o = s_M;
  const int64_t n1_o = s_D;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    for (int64_t v_i = rs; v_i < re; v_i++) {
      const float val0 = tile_rsqrt_f32(((float)s_D)); /* scale */
      float red0;
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        tile_vf32 acc1 = tile_splat_vf32(__builtin_nanf(""));
        int64_t v_j = bnd0;
        tile_vf32 acc2 = tile_splat_vf32(__builtin_nanf(""));
        tile_vf32 acc3 = tile_splat_vf32(__builtin_nanf(""));
        tile_vf32 acc4 = tile_splat_vf32(__builtin_nanf(""));
        for (; v_j + 4 * TILE_L <= bnd1; v_j += 4 * TILE_L) {
          tile_vf32 red1;
          {
            const int64_t bnd2 = 0, bnd3 = s_D;
            if (bnd3 > bnd2) {
              if (!(v_i >= 0 && v_i < n0_q && bnd2 >= 0 && (bnd3 - 1) < n1_q)) TILE_FAIL(1);
              if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd2 >= 0 && (bnd3 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc5 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd2; v_d < bnd3; v_d++) {
              const float ld0 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld1;
              for (int l = 0; l < TILE_L; l++) {
                ld1[l] = p_k[((v_j + l) * n1_k + v_d)];
              }
              acc5 = acc5 + __builtin_convertvector((tile_splat_vf32(ld0) * ld1), tile_vf64);
            }
            red1 = __builtin_convertvector(acc5, tile_vf32);
          }
          acc1 = tile_max_vf32(acc1, (red1 * tile_splat_vf32(val0)));
          const int64_t cv0 = v_j + 1 * TILE_L;
          tile_vf32 red2;
          {
            const int64_t bnd4 = 0, bnd5 = s_D;
            if (bnd5 > bnd4) {
              if (!(v_i >= 0 && v_i < n0_q && bnd4 >= 0 && (bnd5 - 1) < n1_q)) TILE_FAIL(1);
              if (!(cv0 >= 0 && (cv0 + (TILE_L - 1)) < n0_k && bnd4 >= 0 && (bnd5 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc6 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd4; v_d < bnd5; v_d++) {
              const float ld2 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld3;
              for (int l = 0; l < TILE_L; l++) {
                ld3[l] = p_k[((cv0 + l) * n1_k + v_d)];
              }
              acc6 = acc6 + __builtin_convertvector((tile_splat_vf32(ld2) * ld3), tile_vf64);
            }
            red2 = __builtin_convertvector(acc6, tile_vf32);
          }
          acc2 = tile_max_vf32(acc2, (red2 * tile_splat_vf32(val0)));
          const int64_t cv1 = v_j + 2 * TILE_L;
          tile_vf32 red3;
          {
            const int64_t bnd6 = 0, bnd7 = s_D;
            if (bnd7 > bnd6) {
              if (!(v_i >= 0 && v_i < n0_q && bnd6 >= 0 && (bnd7 - 1) < n1_q)) TILE_FAIL(1);
              if (!(cv1 >= 0 && (cv1 + (TILE_L - 1)) < n0_k && bnd6 >= 0 && (bnd7 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc7 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd6; v_d < bnd7; v_d++) {
              const float ld4 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld5;
              for (int l = 0; l < TILE_L; l++) {
                ld5[l] = p_k[((cv1 + l) * n1_k + v_d)];
              }
              acc7 = acc7 + __builtin_convertvector((tile_splat_vf32(ld4) * ld5), tile_vf64);
            }
            red3 = __builtin_convertvector(acc7, tile_vf32);
          }
          acc3 = tile_max_vf32(acc3, (red3 * tile_splat_vf32(val0)));
          const int64_t cv2 = v_j + 3 * TILE_L;
          tile_vf32 red4;
          {
            const int64_t bnd8 = 0, bnd9 = s_D;
            if (bnd9 > bnd8) {
              if (!(v_i >= 0 && v_i < n0_q && bnd8 >= 0 && (bnd9 - 1) < n1_q)) TILE_FAIL(1);
              if (!(cv2 >= 0 && (cv2 + (TILE_L - 1)) < n0_k && bnd8 >= 0 && (bnd9 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc8 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd8; v_d < bnd9; v_d++) {
              const float ld6 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld7;
              for (int l = 0; l < TILE_L; l++) {
                ld7[l] = p_k[((cv2 + l) * n1_k + v_d)];
              }
              acc8 = acc8 + __builtin_convertvector((tile_splat_vf32(ld6) * ld7), tile_vf64);
            }
            red4 = __builtin_convertvector(acc8, tile_vf32);
          }
          acc4 = tile_max_vf32(acc4, (red4 * tile_splat_vf32(val0)));
        }
        acc1 = tile_max_vf32(acc1, acc2);
        acc3 = tile_max_vf32(acc3, acc4);
        acc1 = tile_max_vf32(acc1, acc3);
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          tile_vf32 red5;
          {
            const int64_t bnd10 = 0, bnd11 = s_D;
            if (bnd11 > bnd10) {
              if (!(v_i >= 0 && v_i < n0_q && bnd10 >= 0 && (bnd11 - 1) < n1_q)) TILE_FAIL(1);
              if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd10 >= 0 && (bnd11 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc9 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd10; v_d < bnd11; v_d++) {
              const float ld8 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld9;
              for (int l = 0; l < TILE_L; l++) {
                ld9[l] = p_k[((v_j + l) * n1_k + v_d)];
              }
              acc9 = acc9 + __builtin_convertvector((tile_splat_vf32(ld8) * ld9), tile_vf64);
            }
            red5 = __builtin_convertvector(acc9, tile_vf32);
          }
          acc1 = tile_max_vf32(acc1, (red5 * tile_splat_vf32(val0)));
        }
        float acc0 = tile_hmax_vf32(acc1);
        for (; v_j < bnd1; v_j++) {
          float red6;
          {
            const int64_t bnd12 = 0, bnd13 = s_D;
            if (bnd13 > bnd12) {
              if (!(v_i >= 0 && v_i < n0_q && bnd12 >= 0 && (bnd13 - 1) < n1_q)) TILE_FAIL(1);
              if (!(v_j >= 0 && v_j < n0_k && bnd12 >= 0 && (bnd13 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc11 = tile_splat_vf64(0.0);
            int64_t v_d = bnd12;
            tile_vf64 acc12 = tile_splat_vf64(0.0);
            tile_vf64 acc13 = tile_splat_vf64(0.0);
            tile_vf64 acc14 = tile_splat_vf64(0.0);
            for (; v_d + 4 * TILE_L <= bnd13; v_d += 4 * TILE_L) {
              const tile_vf32 ld10 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
              const tile_vf32 ld11 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
              acc11 = acc11 + __builtin_convertvector((ld10 * ld11), tile_vf64);
              const int64_t cv3 = v_d + 1 * TILE_L;
              const tile_vf32 ld12 = tile_ld_vf32(p_q + (v_i * n1_q + cv3));
              const tile_vf32 ld13 = tile_ld_vf32(p_k + (v_j * n1_k + cv3));
              acc12 = acc12 + __builtin_convertvector((ld12 * ld13), tile_vf64);
              const int64_t cv4 = v_d + 2 * TILE_L;
              const tile_vf32 ld14 = tile_ld_vf32(p_q + (v_i * n1_q + cv4));
              const tile_vf32 ld15 = tile_ld_vf32(p_k + (v_j * n1_k + cv4));
              acc13 = acc13 + __builtin_convertvector((ld14 * ld15), tile_vf64);
              const int64_t cv5 = v_d + 3 * TILE_L;
              const tile_vf32 ld16 = tile_ld_vf32(p_q + (v_i * n1_q + cv5));
              const tile_vf32 ld17 = tile_ld_vf32(p_k + (v_j * n1_k + cv5));
              acc14 = acc14 + __builtin_convertvector((ld16 * ld17), tile_vf64);
            }
            acc11 = acc11 + acc12;
            acc13 = acc13 + acc14;
            acc11 = acc11 + acc13;
            for (; v_d + TILE_L <= bnd13; v_d += TILE_L) {
              const tile_vf32 ld18 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
              const tile_vf32 ld19 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
              acc11 = acc11 + __builtin_convertvector((ld18 * ld19), tile_vf64);
            }
            double acc10 = tile_hsum_vf64(acc11);
            for (; v_d < bnd13; v_d++) {
              const float ld20 = p_q[(v_i * n1_q + v_d)];
              const float ld21 = p_k[(v_j * n1_k + v_d)];
              acc10 = acc10 + ((double)(ld20 * ld21));
            }
            red6 = ((float)acc10);
          }
          acc0 = tile_max_f32(acc0, (red6 * val0));
        }
        red0 = bnd1 > bnd0 ? acc0 : (-__builtin_inff());
      }
      const float val1 = red0; /* m */
      float red7;
      {
        const int64_t bnd14 = 0, bnd15 = s_N;
        tile_vf64 acc16 = tile_splat_vf64(0.0);
        int64_t v_j = bnd14;
        tile_vf64 acc17 = tile_splat_vf64(0.0);
        tile_vf64 acc18 = tile_splat_vf64(0.0);
        tile_vf64 acc19 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd15; v_j += 4 * TILE_L) {
          tile_vf32 red8;
          {
            const int64_t bnd16 = 0, bnd17 = s_D;
            if (bnd17 > bnd16) {
              if (!(v_i >= 0 && v_i < n0_q && bnd16 >= 0 && (bnd17 - 1) < n1_q)) TILE_FAIL(3);
              if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd16 >= 0 && (bnd17 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc20 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd16; v_d < bnd17; v_d++) {
              const float ld22 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld23;
              for (int l = 0; l < TILE_L; l++) {
                ld23[l] = p_k[((v_j + l) * n1_k + v_d)];
              }
              acc20 = acc20 + __builtin_convertvector((tile_splat_vf32(ld22) * ld23), tile_vf64);
            }
            red8 = __builtin_convertvector(acc20, tile_vf32);
          }
          acc16 = acc16 + __builtin_convertvector(tile_exp_vf32(((red8 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))), tile_vf64);
          const int64_t cv6 = v_j + 1 * TILE_L;
          tile_vf32 red9;
          {
            const int64_t bnd18 = 0, bnd19 = s_D;
            if (bnd19 > bnd18) {
              if (!(v_i >= 0 && v_i < n0_q && bnd18 >= 0 && (bnd19 - 1) < n1_q)) TILE_FAIL(3);
              if (!(cv6 >= 0 && (cv6 + (TILE_L - 1)) < n0_k && bnd18 >= 0 && (bnd19 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc21 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd18; v_d < bnd19; v_d++) {
              const float ld24 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld25;
              for (int l = 0; l < TILE_L; l++) {
                ld25[l] = p_k[((cv6 + l) * n1_k + v_d)];
              }
              acc21 = acc21 + __builtin_convertvector((tile_splat_vf32(ld24) * ld25), tile_vf64);
            }
            red9 = __builtin_convertvector(acc21, tile_vf32);
          }
          acc17 = acc17 + __builtin_convertvector(tile_exp_vf32(((red9 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))), tile_vf64);
          const int64_t cv7 = v_j + 2 * TILE_L;
          tile_vf32 red10;
          {
            const int64_t bnd20 = 0, bnd21 = s_D;
            if (bnd21 > bnd20) {
              if (!(v_i >= 0 && v_i < n0_q && bnd20 >= 0 && (bnd21 - 1) < n1_q)) TILE_FAIL(3);
              if (!(cv7 >= 0 && (cv7 + (TILE_L - 1)) < n0_k && bnd20 >= 0 && (bnd21 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc22 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd20; v_d < bnd21; v_d++) {
              const float ld26 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld27;
              for (int l = 0; l < TILE_L; l++) {
                ld27[l] = p_k[((cv7 + l) * n1_k + v_d)];
              }
              acc22 = acc22 + __builtin_convertvector((tile_splat_vf32(ld26) * ld27), tile_vf64);
            }
            red10 = __builtin_convertvector(acc22, tile_vf32);
          }
          acc18 = acc18 + __builtin_convertvector(tile_exp_vf32(((red10 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))), tile_vf64);
          const int64_t cv8 = v_j + 3 * TILE_L;
          tile_vf32 red11;
          {
            const int64_t bnd22 = 0, bnd23 = s_D;
            if (bnd23 > bnd22) {
              if (!(v_i >= 0 && v_i < n0_q && bnd22 >= 0 && (bnd23 - 1) < n1_q)) TILE_FAIL(3);
              if (!(cv8 >= 0 && (cv8 + (TILE_L - 1)) < n0_k && bnd22 >= 0 && (bnd23 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc23 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd22; v_d < bnd23; v_d++) {
              const float ld28 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld29;
              for (int l = 0; l < TILE_L; l++) {
                ld29[l] = p_k[((cv8 + l) * n1_k + v_d)];
              }
              acc23 = acc23 + __builtin_convertvector((tile_splat_vf32(ld28) * ld29), tile_vf64);
            }
            red11 = __builtin_convertvector(acc23, tile_vf32);
          }
          acc19 = acc19 + __builtin_convertvector(tile_exp_vf32(((red11 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))), tile_vf64);
        }
        acc16 = acc16 + acc17;
        acc18 = acc18 + acc19;
        acc16 = acc16 + acc18;
        for (; v_j + TILE_L <= bnd15; v_j += TILE_L) {
          tile_vf32 red12;
          {
            const int64_t bnd24 = 0, bnd25 = s_D;
            if (bnd25 > bnd24) {
              if (!(v_i >= 0 && v_i < n0_q && bnd24 >= 0 && (bnd25 - 1) < n1_q)) TILE_FAIL(3);
              if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd24 >= 0 && (bnd25 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc24 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd24; v_d < bnd25; v_d++) {
              const float ld30 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld31;
              for (int l = 0; l < TILE_L; l++) {
                ld31[l] = p_k[((v_j + l) * n1_k + v_d)];
              }
              acc24 = acc24 + __builtin_convertvector((tile_splat_vf32(ld30) * ld31), tile_vf64);
            }
            red12 = __builtin_convertvector(acc24, tile_vf32);
          }
          acc16 = acc16 + __builtin_convertvector(tile_exp_vf32(((red12 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))), tile_vf64);
        }
        double acc15 = tile_hsum_vf64(acc16);
        for (; v_j < bnd15; v_j++) {
          float red13;
          {
            const int64_t bnd26 = 0, bnd27 = s_D;
            if (bnd27 > bnd26) {
              if (!(v_i >= 0 && v_i < n0_q && bnd26 >= 0 && (bnd27 - 1) < n1_q)) TILE_FAIL(3);
              if (!(v_j >= 0 && v_j < n0_k && bnd26 >= 0 && (bnd27 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc26 = tile_splat_vf64(0.0);
            int64_t v_d = bnd26;
            tile_vf64 acc27 = tile_splat_vf64(0.0);
            tile_vf64 acc28 = tile_splat_vf64(0.0);
            tile_vf64 acc29 = tile_splat_vf64(0.0);
            for (; v_d + 4 * TILE_L <= bnd27; v_d += 4 * TILE_L) {
              const tile_vf32 ld32 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
              const tile_vf32 ld33 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
              acc26 = acc26 + __builtin_convertvector((ld32 * ld33), tile_vf64);
              const int64_t cv9 = v_d + 1 * TILE_L;
              const tile_vf32 ld34 = tile_ld_vf32(p_q + (v_i * n1_q + cv9));
              const tile_vf32 ld35 = tile_ld_vf32(p_k + (v_j * n1_k + cv9));
              acc27 = acc27 + __builtin_convertvector((ld34 * ld35), tile_vf64);
              const int64_t cv10 = v_d + 2 * TILE_L;
              const tile_vf32 ld36 = tile_ld_vf32(p_q + (v_i * n1_q + cv10));
              const tile_vf32 ld37 = tile_ld_vf32(p_k + (v_j * n1_k + cv10));
              acc28 = acc28 + __builtin_convertvector((ld36 * ld37), tile_vf64);
              const int64_t cv11 = v_d + 3 * TILE_L;
              const tile_vf32 ld38 = tile_ld_vf32(p_q + (v_i * n1_q + cv11));
              const tile_vf32 ld39 = tile_ld_vf32(p_k + (v_j * n1_k + cv11));
              acc29 = acc29 + __builtin_convertvector((ld38 * ld39), tile_vf64);
            }
            acc26 = acc26 + acc27;
            acc28 = acc28 + acc29;
            acc26 = acc26 + acc28;
            for (; v_d + TILE_L <= bnd27; v_d += TILE_L) {
              const tile_vf32 ld40 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
              const tile_vf32 ld41 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
              acc26 = acc26 + __builtin_convertvector((ld40 * ld41), tile_vf64);
            }
            double acc25 = tile_hsum_vf64(acc26);
            for (; v_d < bnd27; v_d++) {
              const float ld42 = p_q[(v_i * n1_q + v_d)];
              const float ld43 = p_k[(v_j * n1_k + v_d)];
              acc25 = acc25 + ((double)(ld42 * ld43));
            }
            red13 = ((float)acc25);
          }
          acc15 = acc15 + ((double)tile_exp_f32(((red13 * val0) - val1)));
        }
        red7 = ((float)acc15);
      }
      const float val2 = red7; /* z */
      {
        const int64_t bnd28 = 0, bnd29 = s_D;
        {
          if (bnd29 > bnd28) {
            if (!(v_i >= 0 && v_i < n0_o && bnd28 >= 0 && (bnd29 - 1) < n1_o)) TILE_FAIL(5);
          }
          int64_t v_c = bnd28;
          for (; v_c + TILE_L <= bnd29; v_c += TILE_L) {
            tile_vf32 red14;
            {
              const int64_t bnd30 = 0, bnd31 = s_N;
              if (bnd31 > bnd30) {
                if (!(bnd30 >= 0 && (bnd31 - 1) < n0_v && v_c >= 0 && (v_c + (TILE_L - 1)) < n1_v)) TILE_FAIL(6);
              }
              tile_vf64 acc30 = tile_splat_vf64(0.0);
              for (int64_t v_j = bnd30; v_j < bnd31; v_j++) {
                float red15;
                {
                  const int64_t bnd32 = 0, bnd33 = s_D;
                  if (bnd33 > bnd32) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd32 >= 0 && (bnd33 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && v_j < n0_k && bnd32 >= 0 && (bnd33 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc32 = tile_splat_vf64(0.0);
                  int64_t v_d = bnd32;
                  tile_vf64 acc33 = tile_splat_vf64(0.0);
                  tile_vf64 acc34 = tile_splat_vf64(0.0);
                  tile_vf64 acc35 = tile_splat_vf64(0.0);
                  for (; v_d + 4 * TILE_L <= bnd33; v_d += 4 * TILE_L) {
                    const tile_vf32 ld44 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
                    const tile_vf32 ld45 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
                    acc32 = acc32 + __builtin_convertvector((ld44 * ld45), tile_vf64);
                    const int64_t cv12 = v_d + 1 * TILE_L;
                    const tile_vf32 ld46 = tile_ld_vf32(p_q + (v_i * n1_q + cv12));
                    const tile_vf32 ld47 = tile_ld_vf32(p_k + (v_j * n1_k + cv12));
                    acc33 = acc33 + __builtin_convertvector((ld46 * ld47), tile_vf64);
                    const int64_t cv13 = v_d + 2 * TILE_L;
                    const tile_vf32 ld48 = tile_ld_vf32(p_q + (v_i * n1_q + cv13));
                    const tile_vf32 ld49 = tile_ld_vf32(p_k + (v_j * n1_k + cv13));
                    acc34 = acc34 + __builtin_convertvector((ld48 * ld49), tile_vf64);
                    const int64_t cv14 = v_d + 3 * TILE_L;
                    const tile_vf32 ld50 = tile_ld_vf32(p_q + (v_i * n1_q + cv14));
                    const tile_vf32 ld51 = tile_ld_vf32(p_k + (v_j * n1_k + cv14));
                    acc35 = acc35 + __builtin_convertvector((ld50 * ld51), tile_vf64);
                  }
                  acc32 = acc32 + acc33;
                  acc34 = acc34 + acc35;
                  acc32 = acc32 + acc34;
                  for (; v_d + TILE_L <= bnd33; v_d += TILE_L) {
                    const tile_vf32 ld52 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
                    const tile_vf32 ld53 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
                    acc32 = acc32 + __builtin_convertvector((ld52 * ld53), tile_vf64);
                  }
                  double acc31 = tile_hsum_vf64(acc32);
                  for (; v_d < bnd33; v_d++) {
                    const float ld54 = p_q[(v_i * n1_q + v_d)];
                    const float ld55 = p_k[(v_j * n1_k + v_d)];
                    acc31 = acc31 + ((double)(ld54 * ld55));
                  }
                  red15 = ((float)acc31);
                }
                const tile_vf32 ld56 = tile_ld_vf32(p_v + (v_j * n1_v + v_c));
                acc30 = acc30 + __builtin_convertvector((tile_splat_vf32(tile_exp_f32(((red15 * val0) - val1))) * ld56), tile_vf64);
              }
              red14 = __builtin_convertvector(acc30, tile_vf32);
            }
            const tile_vf32 alu0 = (red14 / tile_splat_vf32(val2));
            tile_st_vf32(p_o + (v_i * n1_o + v_c), alu0);
          }
          for (; v_c < bnd29; v_c++) {
            float red16;
            {
              const int64_t bnd34 = 0, bnd35 = s_N;
              if (bnd35 > bnd34) {
                if (!(bnd34 >= 0 && (bnd35 - 1) < n0_v && v_c >= 0 && v_c < n1_v)) TILE_FAIL(6);
              }
              tile_vf64 acc37 = tile_splat_vf64(0.0);
              int64_t v_j = bnd34;
              tile_vf64 acc38 = tile_splat_vf64(0.0);
              tile_vf64 acc39 = tile_splat_vf64(0.0);
              tile_vf64 acc40 = tile_splat_vf64(0.0);
              for (; v_j + 4 * TILE_L <= bnd35; v_j += 4 * TILE_L) {
                tile_vf32 red17;
                {
                  const int64_t bnd36 = 0, bnd37 = s_D;
                  if (bnd37 > bnd36) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd36 >= 0 && (bnd37 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd36 >= 0 && (bnd37 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc41 = tile_splat_vf64(0.0);
                  for (int64_t v_d = bnd36; v_d < bnd37; v_d++) {
                    const float ld57 = p_q[(v_i * n1_q + v_d)];
                    tile_vf32 ld58;
                    for (int l = 0; l < TILE_L; l++) {
                      ld58[l] = p_k[((v_j + l) * n1_k + v_d)];
                    }
                    acc41 = acc41 + __builtin_convertvector((tile_splat_vf32(ld57) * ld58), tile_vf64);
                  }
                  red17 = __builtin_convertvector(acc41, tile_vf32);
                }
                tile_vf32 ld59;
                for (int l = 0; l < TILE_L; l++) {
                  ld59[l] = p_v[((v_j + l) * n1_v + v_c)];
                }
                acc37 = acc37 + __builtin_convertvector((tile_exp_vf32(((red17 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))) * ld59), tile_vf64);
                const int64_t cv15 = v_j + 1 * TILE_L;
                tile_vf32 red18;
                {
                  const int64_t bnd38 = 0, bnd39 = s_D;
                  if (bnd39 > bnd38) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd38 >= 0 && (bnd39 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(cv15 >= 0 && (cv15 + (TILE_L - 1)) < n0_k && bnd38 >= 0 && (bnd39 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc42 = tile_splat_vf64(0.0);
                  for (int64_t v_d = bnd38; v_d < bnd39; v_d++) {
                    const float ld60 = p_q[(v_i * n1_q + v_d)];
                    tile_vf32 ld61;
                    for (int l = 0; l < TILE_L; l++) {
                      ld61[l] = p_k[((cv15 + l) * n1_k + v_d)];
                    }
                    acc42 = acc42 + __builtin_convertvector((tile_splat_vf32(ld60) * ld61), tile_vf64);
                  }
                  red18 = __builtin_convertvector(acc42, tile_vf32);
                }
                tile_vf32 ld62;
                for (int l = 0; l < TILE_L; l++) {
                  ld62[l] = p_v[((cv15 + l) * n1_v + v_c)];
                }
                acc38 = acc38 + __builtin_convertvector((tile_exp_vf32(((red18 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))) * ld62), tile_vf64);
                const int64_t cv16 = v_j + 2 * TILE_L;
                tile_vf32 red19;
                {
                  const int64_t bnd40 = 0, bnd41 = s_D;
                  if (bnd41 > bnd40) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd40 >= 0 && (bnd41 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(cv16 >= 0 && (cv16 + (TILE_L - 1)) < n0_k && bnd40 >= 0 && (bnd41 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc43 = tile_splat_vf64(0.0);
                  for (int64_t v_d = bnd40; v_d < bnd41; v_d++) {
                    const float ld63 = p_q[(v_i * n1_q + v_d)];
                    tile_vf32 ld64;
                    for (int l = 0; l < TILE_L; l++) {
                      ld64[l] = p_k[((cv16 + l) * n1_k + v_d)];
                    }
                    acc43 = acc43 + __builtin_convertvector((tile_splat_vf32(ld63) * ld64), tile_vf64);
                  }
                  red19 = __builtin_convertvector(acc43, tile_vf32);
                }
                tile_vf32 ld65;
                for (int l = 0; l < TILE_L; l++) {
                  ld65[l] = p_v[((cv16 + l) * n1_v + v_c)];
                }
                acc39 = acc39 + __builtin_convertvector((tile_exp_vf32(((red19 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))) * ld65), tile_vf64);
                const int64_t cv17 = v_j + 3 * TILE_L;
                tile_vf32 red20;
                {
                  const int64_t bnd42 = 0, bnd43 = s_D;
                  if (bnd43 > bnd42) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd42 >= 0 && (bnd43 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(cv17 >= 0 && (cv17 + (TILE_L - 1)) < n0_k && bnd42 >= 0 && (bnd43 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc44 = tile_splat_vf64(0.0);
                  for (int64_t v_d = bnd42; v_d < bnd43; v_d++) {
                    const float ld66 = p_q[(v_i * n1_q + v_d)];
                    tile_vf32 ld67;
                    for (int l = 0; l < TILE_L; l++) {
                      ld67[l] = p_k[((cv17 + l) * n1_k + v_d)];
                    }
                    acc44 = acc44 + __builtin_convertvector((tile_splat_vf32(ld66) * ld67), tile_vf64);
                  }
                  red20 = __builtin_convertvector(acc44, tile_vf32);
                }
                tile_vf32 ld68;
                for (int l = 0; l < TILE_L; l++) {
                  ld68[l] = p_v[((cv17 + l) * n1_v + v_c)];
                }
                acc40 = acc40 + __builtin_convertvector((tile_exp_vf32(((red20 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))) * ld68), tile_vf64);
              }
              acc37 = acc37 + acc38;
              acc39 = acc39 + acc40;
              acc37 = acc37 + acc39;
              for (; v_j + TILE_L <= bnd35; v_j += TILE_L) {
                tile_vf32 red21;
                {
                  const int64_t bnd44 = 0, bnd45 = s_D;
                  if (bnd45 > bnd44) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd44 >= 0 && (bnd45 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd44 >= 0 && (bnd45 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc45 = tile_splat_vf64(0.0);
                  for (int64_t v_d = bnd44; v_d < bnd45; v_d++) {
                    const float ld69 = p_q[(v_i * n1_q + v_d)];
                    tile_vf32 ld70;
                    for (int l = 0; l < TILE_L; l++) {
                      ld70[l] = p_k[((v_j + l) * n1_k + v_d)];
                    }
                    acc45 = acc45 + __builtin_convertvector((tile_splat_vf32(ld69) * ld70), tile_vf64);
                  }
                  red21 = __builtin_convertvector(acc45, tile_vf32);
                }
                tile_vf32 ld71;
                for (int l = 0; l < TILE_L; l++) {
                  ld71[l] = p_v[((v_j + l) * n1_v + v_c)];
                }
                acc37 = acc37 + __builtin_convertvector((tile_exp_vf32(((red21 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))) * ld71), tile_vf64);
              }
              double acc36 = tile_hsum_vf64(acc37);
              for (; v_j < bnd35; v_j++) {
                float red22;
                {
                  const int64_t bnd46 = 0, bnd47 = s_D;
                  if (bnd47 > bnd46) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd46 >= 0 && (bnd47 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && v_j < n0_k && bnd46 >= 0 && (bnd47 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc47 = tile_splat_vf64(0.0);
                  int64_t v_d = bnd46;
                  tile_vf64 acc48 = tile_splat_vf64(0.0);
                  tile_vf64 acc49 = tile_splat_vf64(0.0);
                  tile_vf64 acc50 = tile_splat_vf64(0.0);
                  for (; v_d + 4 * TILE_L <= bnd47; v_d += 4 * TILE_L) {
                    const tile_vf32 ld72 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
                    const tile_vf32 ld73 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
                    acc47 = acc47 + __builtin_convertvector((ld72 * ld73), tile_vf64);
                    const int64_t cv18 = v_d + 1 * TILE_L;
                    const tile_vf32 ld74 = tile_ld_vf32(p_q + (v_i * n1_q + cv18));
                    const tile_vf32 ld75 = tile_ld_vf32(p_k + (v_j * n1_k + cv18));
                    acc48 = acc48 + __builtin_convertvector((ld74 * ld75), tile_vf64);
                    const int64_t cv19 = v_d + 2 * TILE_L;
                    const tile_vf32 ld76 = tile_ld_vf32(p_q + (v_i * n1_q + cv19));
                    const tile_vf32 ld77 = tile_ld_vf32(p_k + (v_j * n1_k + cv19));
                    acc49 = acc49 + __builtin_convertvector((ld76 * ld77), tile_vf64);
                    const int64_t cv20 = v_d + 3 * TILE_L;
                    const tile_vf32 ld78 = tile_ld_vf32(p_q + (v_i * n1_q + cv20));
                    const tile_vf32 ld79 = tile_ld_vf32(p_k + (v_j * n1_k + cv20));
                    acc50 = acc50 + __builtin_convertvector((ld78 * ld79), tile_vf64);
                  }
                  acc47 = acc47 + acc48;
                  acc49 = acc49 + acc50;
                  acc47 = acc47 + acc49;
                  for (; v_d + TILE_L <= bnd47; v_d += TILE_L) {
                    const tile_vf32 ld80 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
                    const tile_vf32 ld81 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
                    acc47 = acc47 + __builtin_convertvector((ld80 * ld81), tile_vf64);
                  }
                  double acc46 = tile_hsum_vf64(acc47);
                  for (; v_d < bnd47; v_d++) {
                    const float ld82 = p_q[(v_i * n1_q + v_d)];
                    const float ld83 = p_k[(v_j * n1_k + v_d)];
                    acc46 = acc46 + ((double)(ld82 * ld83));
                  }
                  red22 = ((float)acc46);
                }
                const float ld84 = p_v[(v_j * n1_v + v_c)];
                acc36 = acc36 + ((double)(tile_exp_f32(((red22 * val0) - val1)) * ld84));
              }
              red16 = ((float)acc36);
            }
            p_o[(v_i * n1_o + v_c)] = (red16 / val2);
          }
        }
      }
    }
  }
}
