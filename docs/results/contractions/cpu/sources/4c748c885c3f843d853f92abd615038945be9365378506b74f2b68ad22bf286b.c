/* Tile: C kernels of program `gemm_gelu_pair` (1 kernel). */
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

#include <stdlib.h>
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
}

static inline tile_vf32 tile_splat_vf32(float x) { return (tile_vf32){0} + x; }

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

/* A block of a contraction's products: t[i * ldt + j] = sum over k in
   0..kk, in order, of A(i, k) * B(k, j), for i < mb, j < nb (<= 512), with
   room for whole register tiles (rows up to a multiple of 6, columns of
   TILE_GEMM_NR); A(i, k) = a[i * ars + k * aks], B(k, j) = b[k * bks + j * bcs].
   Both operands are packed (zero-padded) a panel of 256 k at a time; a
   register tile of TILE_GEMM_MR rows by two vectors of columns holds one
   f32 accumulator per product. */
#define TILE_GEMM_MR 6
#define TILE_GEMM_NR (2 * TILE_L)
#define TILE_GEMM_KC 256
static inline tile_vf32 tile_gemm_ld(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline void tile_gemm_st(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }
static inline void tile_gemm_micro(int64_t kc, const float *restrict pa, const float *restrict pb,
                                   int64_t ldb, float *restrict t, int64_t ldt, int first) {
  tile_vf32 c0[TILE_GEMM_MR], c1[TILE_GEMM_MR];
#pragma GCC unroll 6
  for (int r = 0; r < TILE_GEMM_MR; r++) {
    if (first) { c0[r] = (tile_vf32){0}; c1[r] = (tile_vf32){0}; }
    else { c0[r] = tile_gemm_ld(t + r * ldt); c1[r] = tile_gemm_ld(t + r * ldt + TILE_L); }
  }
  for (int64_t k = 0; k < kc; k++) {
    const tile_vf32 b0 = tile_gemm_ld(pb + k * ldb), b1 = tile_gemm_ld(pb + k * ldb + TILE_L);
#pragma GCC unroll 6
    for (int r = 0; r < TILE_GEMM_MR; r++) {
      const tile_vf32 av = (tile_vf32){0} + pa[k * TILE_GEMM_MR + r];
      c0[r] += av * b0;
      c1[r] += av * b1;
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < TILE_GEMM_MR; r++) {
    tile_gemm_st(t + r * ldt, c0[r]);
    tile_gemm_st(t + r * ldt + TILE_L, c1[r]);
  }
}
static void tile_gemm_f32(int64_t mb, int64_t nb, int64_t kk,
                          const float *restrict a, int64_t ars, int64_t aks,
                          const float *restrict b, int64_t bks, int64_t bcs,
                          float *restrict t, int64_t ldt, float *restrict pb, float *restrict pa) {
  if (kk <= 0) {
    for (int64_t i = 0; i < mb; i++)
      for (int64_t j = 0; j < nb; j++) t[i * ldt + j] = 0.0f;
    return;
  }
  /* A few rows read a row-major right operand in place: packing it would
     cost as much as the products (its ragged last panel is still packed). */
  const int direct = bcs == 1 && mb <= 2 * TILE_GEMM_MR;
  for (int64_t pc = 0; pc < kk; pc += TILE_GEMM_KC) {
    const int64_t kc = kk - pc < TILE_GEMM_KC ? kk - pc : TILE_GEMM_KC;
    for (int64_t jr = 0; jr < nb; jr += TILE_GEMM_NR) {
      float *restrict q = pb + jr * kc;
      const int64_t nr = nb - jr < TILE_GEMM_NR ? nb - jr : TILE_GEMM_NR;
      if (direct && nr == TILE_GEMM_NR) continue;
      if (bcs == 1) {
        for (int64_t k = 0; k < kc; k++) {
          const float *restrict s = b + (pc + k) * bks + jr;
          for (int64_t c = 0; c < TILE_GEMM_NR; c++) q[k * TILE_GEMM_NR + c] = c < nr ? s[c] : 0.0f;
        }
      } else {
        for (int64_t c = 0; c < TILE_GEMM_NR; c++) {
          if (c >= nr) { for (int64_t k = 0; k < kc; k++) q[k * TILE_GEMM_NR + c] = 0.0f; continue; }
          const float *restrict s = b + (jr + c) * bcs + pc * bks;
          for (int64_t k = 0; k < kc; k++) q[k * TILE_GEMM_NR + c] = s[k * bks];
        }
      }
    }
    for (int64_t ir = 0; ir < mb; ir += TILE_GEMM_MR) {
      const int64_t mr = mb - ir < TILE_GEMM_MR ? mb - ir : TILE_GEMM_MR;
      if (aks == 1) {
        for (int64_t r = 0; r < TILE_GEMM_MR; r++) {
          if (r >= mr) { for (int64_t k = 0; k < kc; k++) pa[k * TILE_GEMM_MR + r] = 0.0f; continue; }
          const float *restrict s = a + (ir + r) * ars + pc;
          for (int64_t k = 0; k < kc; k++) pa[k * TILE_GEMM_MR + r] = s[k];
        }
      } else {
        for (int64_t k = 0; k < kc; k++) {
          const float *restrict s = a + (pc + k) * aks + ir * ars;
          for (int64_t r = 0; r < TILE_GEMM_MR; r++) pa[k * TILE_GEMM_MR + r] = r < mr ? s[r * ars] : 0.0f;
        }
      }
      for (int64_t jr = 0; jr < nb; jr += TILE_GEMM_NR) {
        if (direct && nb - jr >= TILE_GEMM_NR)
          tile_gemm_micro(kc, pa, b + pc * bks + jr, bks, t + ir * ldt + jr, ldt, pc == 0);
        else
          tile_gemm_micro(kc, pa, pb + jr * kc, TILE_GEMM_NR, t + ir * ldt + jr, ldt, pc == 0);
      }
    }
  }
}

static inline tile_vf32 tile_sel_vf32(tile_vm4 m, tile_vf32 a, tile_vf32 b) { return (tile_vf32)((m & (tile_vm4)a) | (~m & (tile_vm4)b)); }

static inline bool tile_any_vm4(tile_vm4 m) {
  uint64_t q[sizeof m / 8], r = 0;
  __builtin_memcpy(q, &m, sizeof m);
  for (unsigned k = 0; k < sizeof m / 8; k++) r |= q[k];
  return r != 0;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline float tile_tanh_f32(float x) { return tanhf(x); }

static inline tile_vf32 tile_abs_vf32(tile_vf32 x) { return (tile_vf32)((tile_vm4)x & 0x7fffffff); }

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
}

/* k0: row_reduction over i in 0..M; stores y, dy; reads a, b, bias */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_K = S[1];
  const int64_t s_N = S[2];
  const float *restrict p_a = (const float *)A[0];
  const int64_t n0_a = s_M;
  const int64_t n1_a = s_K;
  const float *restrict p_b = (const float *)A[1];
  const int64_t n0_b = s_K;
  const int64_t n1_b = s_N;
  const float *restrict p_bias = (const float *)A[2];
  const int64_t n0_bias = s_N;
  float *restrict p_y = (float *)A[3];
  const int64_t n0_y = s_M;
  const int64_t n1_y = s_N;
  float *restrict p_dy = (float *)A[4];
  const int64_t n0_dy = s_M;
  const int64_t n1_dy = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  char *const tile_scr = (char *)tile_scratch((size_t)2496512 + 64);
  if (!tile_scr) TILE_FAIL(1);
  float *const tile_tile = (float *)tile_scr;
  float *const tile_pb = (float *)(tile_scr + 1966080);
  float *const tile_pa = (float *)(tile_scr + 2490368);
  const int64_t tile_n = s_N, tile_k = s_K;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  for (int64_t tile_ib = rs; tile_ib < re; tile_ib += 960) {
    const int64_t tile_ie = re - tile_ib < 960 ? re : tile_ib + 960;
    for (int64_t tile_jb = 0; tile_jb < tile_n; tile_jb += 512) {
      const int64_t tile_je = tile_n - tile_jb < 512 ? tile_n : tile_jb + 512;
      tile_gemm_f32(tile_ie - tile_ib, tile_je - tile_jb, tile_k, p_a + tile_ib * n1_a, n1_a, 1, p_b + tile_jb, n1_b, 1, tile_tile, 512, tile_pb, tile_pa);
      for (int64_t tile_ii = tile_ib; tile_ii < tile_ie; tile_ii++) {
        float *restrict p___dot0 = (float *)(tile_tile + (tile_ii - tile_ib) * 512);
        const int64_t n0___dot0 = 512;
        {
          for (int64_t v_i = tile_ii; v_i < tile_ii + 1; v_i++) {
            {
              const int64_t bnd0 = tile_jb, bnd1 = tile_je;
              {
                if (bnd1 > bnd0) {
                  if (!((-tile_jb + bnd0) >= 0 && (-tile_jb + (bnd1 - 1)) < n0___dot0)) TILE_FAIL(2);
                  if (!(bnd0 >= 0 && (bnd1 - 1) < n0_bias)) TILE_FAIL(3);
                  if (!(v_i >= 0 && v_i < n0_y && bnd0 >= 0 && (bnd1 - 1) < n1_y)) TILE_FAIL(4);
                  if (!(v_i >= 0 && v_i < n0_dy && bnd0 >= 0 && (bnd1 - 1) < n1_dy)) TILE_FAIL(5);
                }
                int64_t v_j = bnd0;
                for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
                  const int64_t alu0 = (v_j - tile_jb);
                  const tile_vf32 ld0 = tile_ld_vf32(p___dot0 + alu0);
                  const tile_vf32 ld1 = tile_ld_vf32(p_bias + v_j);
                  const tile_vf32 val0 = (ld0 + ld1); /* z */
                  const tile_vf32 val1 = tile_tanh_vf32((0.7978846f * (val0 + (((0.044715f * val0) * val0) * val0)))); /* t */
                  const tile_vf32 val2 = (1.0f + val1); /* c0 */
                  const tile_vf32 val3 = (0.5f * val0); /* c1 */
                  const tile_vf32 alu1 = (val3 * val2);
                  tile_st_vf32(p_y + (v_i * n1_y + v_j), alu1);
                  const tile_vf32 alu2 = ((0.5f * val2) + (((val3 * (1.0f - (val1 * val1))) * 0.7978846f) * (1.0f + ((0.134145f * val0) * val0))));
                  tile_st_vf32(p_dy + (v_i * n1_dy + v_j), alu2);
                }
                for (; v_j < bnd1; v_j++) {
                  const int64_t alu3 = (v_j - tile_jb);
                  const float ld2 = p___dot0[alu3];
                  const float ld3 = p_bias[v_j];
                  const float val4 = (ld2 + ld3); /* z */
                  const float val5 = tile_tanh_f32((0.7978846f * (val4 + (((0.044715f * val4) * val4) * val4)))); /* t */
                  const float val6 = (1.0f + val5); /* c0 */
                  const float val7 = (0.5f * val4); /* c1 */
                  p_y[(v_i * n1_y + v_j)] = (val7 * val6);
                  p_dy[(v_i * n1_dy + v_j)] = ((0.5f * val6) + (((val7 * (1.0f - (val5 * val5))) * 0.7978846f) * (1.0f + ((0.134145f * val4) * val4))));
                }
              }
            }
          }
        }
      }
    }
  }
}
