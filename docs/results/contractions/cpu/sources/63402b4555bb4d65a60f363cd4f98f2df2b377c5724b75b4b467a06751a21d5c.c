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

static inline tile_vf64 tile_splat_vf64(double x) { return (tile_vf64){0} + x; }

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
  const int64_t tile_n = s_N, tile_d = s_D, tile_e = s_D;
  const int64_t tile_lds = (tile_n + 31) / 32 * 32, tile_ldo = (tile_e + 31) / 32 * 32;
  char *const tile_scr = (char *)tile_scratch((size_t)((48 * tile_lds + 48 * tile_ldo + 64 + 132608) * 4) + 64);
  if (!tile_scr) TILE_FAIL(1);
  float *const tile_s = (float *)tile_scr;
  float *const tile_o = tile_s + 48 * tile_lds;
  float *const tile_z = tile_o + 48 * tile_ldo;
  float *const tile_pb = tile_z + 64;
  float *const tile_pa = tile_pb + 131072;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  for (int64_t tile_ib = rs; tile_ib < re; tile_ib += 48) {
    const int64_t tile_ie = re - tile_ib < 48 ? re : tile_ib + 48;
    for (int64_t tile_jb = 0; tile_jb < tile_n; tile_jb += 512) {
      const int64_t tile_je = tile_n - tile_jb < 512 ? tile_n : tile_jb + 512;
      tile_gemm_f32(tile_ie - tile_ib, tile_je - tile_jb, tile_d, p_q + tile_ib * n1_q, n1_q, 1, p_k + tile_jb * n1_k, 1, n1_k, tile_s + tile_jb, tile_lds, tile_pb, tile_pa);
    }
    for (int64_t tile_ii = tile_ib; tile_ii < tile_ie; tile_ii++) {
      float *restrict p___att0 = (float *)(tile_s + (tile_ii - tile_ib) * tile_lds);
      const int64_t n0___att0 = s_N;
      float *restrict p___attz0 = (float *)(tile_z + (tile_ii - tile_ib));
      const int64_t n0___attz0 = 1;
      {
        if (tile_ii + 1 > tile_ii) {
          if (!(0 >= 0 && 0 < n0___attz0)) TILE_FAIL(2);
        }
        for (int64_t v_i = tile_ii; v_i < tile_ii + 1; v_i++) {
          const float val0 = tile_rsqrt_f32(((float)s_D)); /* scale */
          {
            const int64_t bnd0 = 0, bnd1 = s_N;
            {
              if (bnd1 > bnd0) {
                if (!(bnd0 >= 0 && (bnd1 - 1) < n0___att0)) TILE_FAIL(3);
              }
              int64_t v_j = bnd0;
              for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
                const tile_vf32 ld0 = tile_ld_vf32(p___att0 + v_j);
                const tile_vf32 alu0 = (ld0 * tile_splat_vf32(val0));
                tile_st_vf32(p___att0 + v_j, alu0);
              }
              for (; v_j < bnd1; v_j++) {
                const float ld1 = p___att0[v_j];
                p___att0[v_j] = (ld1 * val0);
              }
            }
          }
          float red0;
          {
            const int64_t bnd2 = 0, bnd3 = s_N;
            if (bnd3 > bnd2) {
              if (!(bnd2 >= 0 && (bnd3 - 1) < n0___att0)) TILE_FAIL(5);
            }
            tile_vf32 acc1 = tile_splat_vf32(__builtin_nanf(""));
            int64_t v_j = bnd2;
            tile_vf32 acc2 = tile_splat_vf32(__builtin_nanf(""));
            tile_vf32 acc3 = tile_splat_vf32(__builtin_nanf(""));
            tile_vf32 acc4 = tile_splat_vf32(__builtin_nanf(""));
            for (; v_j + 4 * TILE_L <= bnd3; v_j += 4 * TILE_L) {
              const tile_vf32 ld2 = tile_ld_vf32(p___att0 + v_j);
              acc1 = tile_max_vf32(acc1, ld2);
              const int64_t cv0 = v_j + 1 * TILE_L;
              const tile_vf32 ld3 = tile_ld_vf32(p___att0 + cv0);
              acc2 = tile_max_vf32(acc2, ld3);
              const int64_t cv1 = v_j + 2 * TILE_L;
              const tile_vf32 ld4 = tile_ld_vf32(p___att0 + cv1);
              acc3 = tile_max_vf32(acc3, ld4);
              const int64_t cv2 = v_j + 3 * TILE_L;
              const tile_vf32 ld5 = tile_ld_vf32(p___att0 + cv2);
              acc4 = tile_max_vf32(acc4, ld5);
            }
            acc1 = tile_max_vf32(acc1, acc2);
            acc3 = tile_max_vf32(acc3, acc4);
            acc1 = tile_max_vf32(acc1, acc3);
            for (; v_j + TILE_L <= bnd3; v_j += TILE_L) {
              const tile_vf32 ld6 = tile_ld_vf32(p___att0 + v_j);
              acc1 = tile_max_vf32(acc1, ld6);
            }
            float acc0 = tile_hmax_vf32(acc1);
            for (; v_j < bnd3; v_j++) {
              const float ld7 = p___att0[v_j];
              acc0 = tile_max_f32(acc0, ld7);
            }
            red0 = bnd3 > bnd2 ? acc0 : (-__builtin_inff());
          }
          const float val1 = red0; /* m */
          {
            const int64_t bnd4 = 0, bnd5 = s_N;
            {
              if (bnd5 > bnd4) {
                if (!(bnd4 >= 0 && (bnd5 - 1) < n0___att0)) TILE_FAIL(6);
              }
              int64_t v_j = bnd4;
              for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
                const tile_vf32 ld8 = tile_ld_vf32(p___att0 + v_j);
                const tile_vf32 alu1 = tile_exp_vf32((ld8 - tile_splat_vf32(val1)));
                tile_st_vf32(p___att0 + v_j, alu1);
              }
              for (; v_j < bnd5; v_j++) {
                const float ld9 = p___att0[v_j];
                p___att0[v_j] = tile_exp_f32((ld9 - val1));
              }
            }
          }
          float red1;
          {
            const int64_t bnd6 = 0, bnd7 = s_N;
            if (bnd7 > bnd6) {
              if (!(bnd6 >= 0 && (bnd7 - 1) < n0___att0)) TILE_FAIL(8);
            }
            tile_vf64 acc6 = tile_splat_vf64(0.0);
            int64_t v_j = bnd6;
            tile_vf64 acc7 = tile_splat_vf64(0.0);
            tile_vf64 acc8 = tile_splat_vf64(0.0);
            tile_vf64 acc9 = tile_splat_vf64(0.0);
            for (; v_j + 4 * TILE_L <= bnd7; v_j += 4 * TILE_L) {
              const tile_vf32 ld10 = tile_ld_vf32(p___att0 + v_j);
              acc6 = acc6 + __builtin_convertvector(ld10, tile_vf64);
              const int64_t cv3 = v_j + 1 * TILE_L;
              const tile_vf32 ld11 = tile_ld_vf32(p___att0 + cv3);
              acc7 = acc7 + __builtin_convertvector(ld11, tile_vf64);
              const int64_t cv4 = v_j + 2 * TILE_L;
              const tile_vf32 ld12 = tile_ld_vf32(p___att0 + cv4);
              acc8 = acc8 + __builtin_convertvector(ld12, tile_vf64);
              const int64_t cv5 = v_j + 3 * TILE_L;
              const tile_vf32 ld13 = tile_ld_vf32(p___att0 + cv5);
              acc9 = acc9 + __builtin_convertvector(ld13, tile_vf64);
            }
            acc6 = acc6 + acc7;
            acc8 = acc8 + acc9;
            acc6 = acc6 + acc8;
            for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
              const tile_vf32 ld14 = tile_ld_vf32(p___att0 + v_j);
              acc6 = acc6 + __builtin_convertvector(ld14, tile_vf64);
            }
            double acc5 = tile_hsum_vf64(acc6);
            for (; v_j < bnd7; v_j++) {
              const float ld15 = p___att0[v_j];
              acc5 = acc5 + ((double)ld15);
            }
            red1 = ((float)acc5);
          }
          const float val2 = red1; /* z */
          p___attz0[0] = val2;
        }
      }
    }
    for (int64_t tile_cb = 0; tile_cb < tile_e; tile_cb += 512) {
      const int64_t tile_ce = tile_e - tile_cb < 512 ? tile_e : tile_cb + 512;
      tile_gemm_f32(tile_ie - tile_ib, tile_ce - tile_cb, tile_n, tile_s, tile_lds, 1, p_v + tile_cb, n1_v, 1, tile_o + tile_cb, tile_ldo, tile_pb, tile_pa);
    }
    for (int64_t tile_ii = tile_ib; tile_ii < tile_ie; tile_ii++) {
      float *restrict p___atto0 = (float *)(tile_o + (tile_ii - tile_ib) * tile_ldo);
      const int64_t n0___atto0 = s_D;
      float *restrict p___attz0 = (float *)(tile_z + (tile_ii - tile_ib));
      const int64_t n0___attz0 = 1;
      {
        if (tile_ii + 1 > tile_ii) {
          if (!(0 >= 0 && 0 < n0___attz0)) TILE_FAIL(9);
        }
        for (int64_t v_i = tile_ii; v_i < tile_ii + 1; v_i++) {
          const float val3 = tile_rsqrt_f32(((float)s_D)); /* scale */
          const float ld16 = p___attz0[0];
          const float val4 = ld16; /* z */
          {
            const int64_t bnd8 = 0, bnd9 = s_D;
            {
              if (bnd9 > bnd8) {
                if (!(bnd8 >= 0 && (bnd9 - 1) < n0___atto0)) TILE_FAIL(10);
                if (!(v_i >= 0 && v_i < n0_o && bnd8 >= 0 && (bnd9 - 1) < n1_o)) TILE_FAIL(11);
              }
              int64_t v_c = bnd8;
              for (; v_c + TILE_L <= bnd9; v_c += TILE_L) {
                const tile_vf32 ld17 = tile_ld_vf32(p___atto0 + v_c);
                const tile_vf32 alu2 = (ld17 / tile_splat_vf32(val4));
                tile_st_vf32(p_o + (v_i * n1_o + v_c), alu2);
              }
              for (; v_c < bnd9; v_c++) {
                const float ld18 = p___atto0[v_c];
                p_o[(v_i * n1_o + v_c)] = (ld18 / val4);
              }
            }
          }
        }
      }
    }
  }
}
