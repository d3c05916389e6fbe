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

static inline tile_vi64 tile_splat_vi64(int64_t x) { return (tile_vi64){0} + x; }

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
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          tile_vf32 red1;
          {
            const int64_t bnd2 = 0, bnd3 = s_D;
            if (bnd3 > bnd2) {
              if (!(v_i >= 0 && v_i < n0_q && bnd2 >= 0 && (bnd3 - 1) < n1_q)) TILE_FAIL(1);
              if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd2 >= 0 && (bnd3 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc2 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd2; v_d < bnd3; v_d++) {
              const float ld0 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld1;
              for (int l = 0; l < TILE_L; l++) {
                ld1[l] = p_k[((v_j + l) * n1_k + v_d)];
              }
              acc2 = acc2 + __builtin_convertvector((tile_splat_vf32(ld0) * ld1), tile_vf64);
            }
            red1 = __builtin_convertvector(acc2, tile_vf32);
          }
          acc1 = tile_max_vf32(acc1, (red1 * tile_splat_vf32(val0)));
        }
        float acc0 = tile_hmax_vf32(acc1);
        for (; v_j < bnd1; v_j++) {
          float red2;
          {
            const int64_t bnd4 = 0, bnd5 = s_D;
            if (bnd5 > bnd4) {
              if (!(v_i >= 0 && v_i < n0_q && bnd4 >= 0 && (bnd5 - 1) < n1_q)) TILE_FAIL(1);
              if (!(v_j >= 0 && v_j < n0_k && bnd4 >= 0 && (bnd5 - 1) < n1_k)) TILE_FAIL(2);
            }
            tile_vf64 acc4 = tile_splat_vf64(0.0);
            int64_t v_d = bnd4;
            for (; v_d + TILE_L <= bnd5; v_d += TILE_L) {
              const tile_vf32 ld2 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
              const tile_vf32 ld3 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
              acc4 = acc4 + __builtin_convertvector((ld2 * ld3), tile_vf64);
            }
            double acc3 = tile_hsum_vf64(acc4);
            for (; v_d < bnd5; v_d++) {
              const float ld4 = p_q[(v_i * n1_q + v_d)];
              const float ld5 = p_k[(v_j * n1_k + v_d)];
              acc3 = acc3 + ((double)(ld4 * ld5));
            }
            red2 = ((float)acc3);
          }
          acc0 = tile_max_f32(acc0, (red2 * val0));
        }
        red0 = bnd1 > bnd0 ? acc0 : (-__builtin_inff());
      }
      const float val1 = red0; /* m */
      float red3;
      {
        const int64_t bnd6 = 0, bnd7 = s_N;
        tile_vf64 acc6 = tile_splat_vf64(0.0);
        int64_t v_j = bnd6;
        for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
          tile_vf32 red4;
          {
            const int64_t bnd8 = 0, bnd9 = s_D;
            if (bnd9 > bnd8) {
              if (!(v_i >= 0 && v_i < n0_q && bnd8 >= 0 && (bnd9 - 1) < n1_q)) TILE_FAIL(3);
              if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd8 >= 0 && (bnd9 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc7 = tile_splat_vf64(0.0);
            for (int64_t v_d = bnd8; v_d < bnd9; v_d++) {
              const float ld6 = p_q[(v_i * n1_q + v_d)];
              tile_vf32 ld7;
              for (int l = 0; l < TILE_L; l++) {
                ld7[l] = p_k[((v_j + l) * n1_k + v_d)];
              }
              acc7 = acc7 + __builtin_convertvector((tile_splat_vf32(ld6) * ld7), tile_vf64);
            }
            red4 = __builtin_convertvector(acc7, tile_vf32);
          }
          acc6 = acc6 + __builtin_convertvector(tile_exp_vf32(((red4 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))), tile_vf64);
        }
        double acc5 = tile_hsum_vf64(acc6);
        for (; v_j < bnd7; v_j++) {
          float red5;
          {
            const int64_t bnd10 = 0, bnd11 = s_D;
            if (bnd11 > bnd10) {
              if (!(v_i >= 0 && v_i < n0_q && bnd10 >= 0 && (bnd11 - 1) < n1_q)) TILE_FAIL(3);
              if (!(v_j >= 0 && v_j < n0_k && bnd10 >= 0 && (bnd11 - 1) < n1_k)) TILE_FAIL(4);
            }
            tile_vf64 acc9 = tile_splat_vf64(0.0);
            int64_t v_d = bnd10;
            for (; v_d + TILE_L <= bnd11; v_d += TILE_L) {
              const tile_vf32 ld8 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
              const tile_vf32 ld9 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
              acc9 = acc9 + __builtin_convertvector((ld8 * ld9), tile_vf64);
            }
            double acc8 = tile_hsum_vf64(acc9);
            for (; v_d < bnd11; v_d++) {
              const float ld10 = p_q[(v_i * n1_q + v_d)];
              const float ld11 = p_k[(v_j * n1_k + v_d)];
              acc8 = acc8 + ((double)(ld10 * ld11));
            }
            red5 = ((float)acc8);
          }
          acc5 = acc5 + ((double)tile_exp_f32(((red5 * val0) - val1)));
        }
        red3 = ((float)acc5);
      }
      const float val2 = red3; /* z */
      {
        const int64_t bnd12 = 0, bnd13 = s_D;
        {
          if (bnd13 > bnd12) {
            if (!(v_i >= 0 && v_i < n0_o && bnd12 >= 0 && (bnd13 - 1) < n1_o)) TILE_FAIL(5);
          }
          int64_t v_c = bnd12;
          for (; v_c + TILE_L <= bnd13; v_c += TILE_L) {
            tile_vf32 red6;
            {
              const int64_t bnd14 = 0, bnd15 = s_N;
              if (bnd15 > bnd14) {
                if (!(bnd14 >= 0 && (bnd15 - 1) < n0_v && v_c >= 0 && (v_c + (TILE_L - 1)) < n1_v)) TILE_FAIL(6);
              }
              tile_vf64 acc10 = tile_splat_vf64(0.0);
              for (int64_t v_j = bnd14; v_j < bnd15; v_j++) {
                float red7;
                {
                  const int64_t bnd16 = 0, bnd17 = s_D;
                  if (bnd17 > bnd16) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd16 >= 0 && (bnd17 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && v_j < n0_k && bnd16 >= 0 && (bnd17 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc12 = tile_splat_vf64(0.0);
                  int64_t v_d = bnd16;
                  for (; v_d + TILE_L <= bnd17; v_d += TILE_L) {
                    const tile_vf32 ld12 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
                    const tile_vf32 ld13 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
                    acc12 = acc12 + __builtin_convertvector((ld12 * ld13), tile_vf64);
                  }
                  double acc11 = tile_hsum_vf64(acc12);
                  for (; v_d < bnd17; v_d++) {
                    const float ld14 = p_q[(v_i * n1_q + v_d)];
                    const float ld15 = p_k[(v_j * n1_k + v_d)];
                    acc11 = acc11 + ((double)(ld14 * ld15));
                  }
                  red7 = ((float)acc11);
                }
                const tile_vf32 ld16 = tile_ld_vf32(p_v + (v_j * n1_v + v_c));
                acc10 = acc10 + __builtin_convertvector((tile_splat_vf32(tile_exp_f32(((red7 * val0) - val1))) * ld16), tile_vf64);
              }
              red6 = __builtin_convertvector(acc10, tile_vf32);
            }
            const tile_vf32 alu0 = (red6 / tile_splat_vf32(val2));
            tile_st_vf32(p_o + (v_i * n1_o + v_c), alu0);
          }
          for (; v_c < bnd13; v_c++) {
            float red8;
            {
              const int64_t bnd18 = 0, bnd19 = s_N;
              if (bnd19 > bnd18) {
                if (!(bnd18 >= 0 && (bnd19 - 1) < n0_v && v_c >= 0 && v_c < n1_v)) TILE_FAIL(6);
              }
              tile_vf64 acc14 = tile_splat_vf64(0.0);
              int64_t v_j = bnd18;
              for (; v_j + TILE_L <= bnd19; v_j += TILE_L) {
                tile_vf32 red9;
                {
                  const int64_t bnd20 = 0, bnd21 = s_D;
                  if (bnd21 > bnd20) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd20 >= 0 && (bnd21 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && (v_j + (TILE_L - 1)) < n0_k && bnd20 >= 0 && (bnd21 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc15 = tile_splat_vf64(0.0);
                  for (int64_t v_d = bnd20; v_d < bnd21; v_d++) {
                    const float ld17 = p_q[(v_i * n1_q + v_d)];
                    tile_vf32 ld18;
                    for (int l = 0; l < TILE_L; l++) {
                      ld18[l] = p_k[((v_j + l) * n1_k + v_d)];
                    }
                    acc15 = acc15 + __builtin_convertvector((tile_splat_vf32(ld17) * ld18), tile_vf64);
                  }
                  red9 = __builtin_convertvector(acc15, tile_vf32);
                }
                tile_vf32 ld19;
                for (int l = 0; l < TILE_L; l++) {
                  ld19[l] = p_v[((v_j + l) * n1_v + v_c)];
                }
                acc14 = acc14 + __builtin_convertvector((tile_exp_vf32(((red9 * tile_splat_vf32(val0)) - tile_splat_vf32(val1))) * ld19), tile_vf64);
              }
              double acc13 = tile_hsum_vf64(acc14);
              for (; v_j < bnd19; v_j++) {
                float red10;
                {
                  const int64_t bnd22 = 0, bnd23 = s_D;
                  if (bnd23 > bnd22) {
                    if (!(v_i >= 0 && v_i < n0_q && bnd22 >= 0 && (bnd23 - 1) < n1_q)) TILE_FAIL(7);
                    if (!(v_j >= 0 && v_j < n0_k && bnd22 >= 0 && (bnd23 - 1) < n1_k)) TILE_FAIL(8);
                  }
                  tile_vf64 acc17 = tile_splat_vf64(0.0);
                  int64_t v_d = bnd22;
                  for (; v_d + TILE_L <= bnd23; v_d += TILE_L) {
                    const tile_vf32 ld20 = tile_ld_vf32(p_q + (v_i * n1_q + v_d));
                    const tile_vf32 ld21 = tile_ld_vf32(p_k + (v_j * n1_k + v_d));
                    acc17 = acc17 + __builtin_convertvector((ld20 * ld21), tile_vf64);
                  }
                  double acc16 = tile_hsum_vf64(acc17);
                  for (; v_d < bnd23; v_d++) {
                    const float ld22 = p_q[(v_i * n1_q + v_d)];
                    const float ld23 = p_k[(v_j * n1_k + v_d)];
                    acc16 = acc16 + ((double)(ld22 * ld23));
                  }
                  red10 = ((float)acc16);
                }
                const float ld24 = p_v[(v_j * n1_v + v_c)];
                acc13 = acc13 + ((double)(tile_exp_f32(((red10 * val0) - val1)) * ld24));
              }
              red8 = ((float)acc13);
            }
            p_o[(v_i * n1_o + v_c)] = (red8 / val2);
          }
        }
      }
    }
  }
}
