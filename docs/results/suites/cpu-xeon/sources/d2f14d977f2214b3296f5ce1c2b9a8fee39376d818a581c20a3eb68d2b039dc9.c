/* Tile: C kernels of program `cross_entropy` (1 kernel). */
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

static inline tile_vf32 tile_sel_vf32(tile_vm4 m, tile_vf32 a, tile_vf32 b) { return (tile_vf32)((m & (tile_vm4)a) | (~m & (tile_vm4)b)); }

static inline tile_vm4 tile_m8_to_m4(tile_vm8 m) { return __builtin_convertvector(m, tile_vm4); }

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline tile_vm8 tile_eq_vi64(tile_vi64 a, tile_vi64 b) {
  typedef int64_t half __attribute__((vector_size(TILE_VBYTES)));
  enum { n = sizeof(tile_vi64) / sizeof(half) };
  half x[n], y[n];
  __builtin_memcpy(x, &a, sizeof a);
  __builtin_memcpy(y, &b, sizeof b);
  for (int h = 0; h < n; h++) x[h] = (half)(x[h] == y[h]);
  tile_vm8 r;
  __builtin_memcpy(&r, x, sizeof r);
  return r;
}

static inline double tile_hsum_vf64(tile_vf64 v) {
  double s = 0.0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

static inline float tile_exp_f32(float x) { return expf(x); }

static inline float tile_log_f32(float x) { return logf(x); }

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

/* k0: row_reduction over i in 0..M; stores loss, dx; reads x, label */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  const int32_t *restrict p_label = (const int32_t *)A[1];
  const int64_t n0_label = s_M;
  float *restrict p_loss = (float *)A[2];
  const int64_t n0_loss = s_M;
  float *restrict p_dx = (float *)A[3];
  const int64_t n0_dx = s_M;
  const int64_t n1_dx = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t sb0 = (((s_N) > 0 ? (s_N) : 0) * 4 + 63) & ~(int64_t)63;
  char *const tile_scr = (char *)tile_scratch((size_t)(0 + sb0) + 64);
  if (!tile_scr) TILE_FAIL(1);
  float *restrict p___scr0 = (float *)(tile_scr + 0);
  const int64_t n0___scr0 = s_N;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    if (re > rs) {
      if (!(rs >= 0 && (re - 1) < n0_loss)) TILE_FAIL(2);
    }
    for (int64_t v_i = rs; v_i < re; v_i++) {
      float red0;
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        if (bnd1 > bnd0) {
          if (!(v_i >= 0 && v_i < n0_x && bnd0 >= 0 && (bnd1 - 1) < n1_x)) TILE_FAIL(3);
        }
        tile_vf32 acc1 = tile_splat_vf32(__builtin_nanf(""));
        int64_t v_j = bnd0;
        tile_vf32 acc2 = tile_splat_vf32(__builtin_nanf(""));
        tile_vf32 acc3 = tile_splat_vf32(__builtin_nanf(""));
        tile_vf32 acc4 = tile_splat_vf32(__builtin_nanf(""));
        for (; v_j + 4 * TILE_L <= bnd1; v_j += 4 * TILE_L) {
          const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc1 = tile_max_vf32(acc1, ld0);
          const int64_t cv0 = v_j + 1 * TILE_L;
          const tile_vf32 ld1 = tile_ld_vf32(p_x + (v_i * n1_x + cv0));
          acc2 = tile_max_vf32(acc2, ld1);
          const int64_t cv1 = v_j + 2 * TILE_L;
          const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + cv1));
          acc3 = tile_max_vf32(acc3, ld2);
          const int64_t cv2 = v_j + 3 * TILE_L;
          const tile_vf32 ld3 = tile_ld_vf32(p_x + (v_i * n1_x + cv2));
          acc4 = tile_max_vf32(acc4, ld3);
        }
        acc1 = tile_max_vf32(acc1, acc2);
        acc3 = tile_max_vf32(acc3, acc4);
        acc1 = tile_max_vf32(acc1, acc3);
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          const tile_vf32 ld4 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc1 = tile_max_vf32(acc1, ld4);
        }
        float acc0 = tile_hmax_vf32(acc1);
        for (; v_j < bnd1; v_j++) {
          const float ld5 = p_x[(v_i * n1_x + v_j)];
          acc0 = tile_max_f32(acc0, ld5);
        }
        red0 = bnd1 > bnd0 ? acc0 : (-__builtin_inff());
      }
      const float val0 = red0; /* m */
      {
        const int64_t bnd2 = 0, bnd3 = s_N;
        {
          if (bnd3 > bnd2) {
            if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(4);
            if (!(bnd2 >= 0 && (bnd3 - 1) < n0___scr0)) TILE_FAIL(5);
          }
          int64_t v_j = bnd2;
          for (; v_j + TILE_L <= bnd3; v_j += TILE_L) {
            const tile_vf32 ld6 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
            const tile_vf32 alu0 = tile_exp_vf32((ld6 - tile_splat_vf32(val0)));
            tile_st_vf32(p___scr0 + v_j, alu0);
          }
          for (; v_j < bnd3; v_j++) {
            const float ld7 = p_x[(v_i * n1_x + v_j)];
            p___scr0[v_j] = tile_exp_f32((ld7 - val0));
          }
        }
      }
      float red1;
      {
        const int64_t bnd4 = 0, bnd5 = s_N;
        if (bnd5 > bnd4) {
          if (!(bnd4 >= 0 && (bnd5 - 1) < n0___scr0)) TILE_FAIL(6);
        }
        tile_vf64 acc6 = tile_splat_vf64(0.0);
        int64_t v_j = bnd4;
        tile_vf64 acc7 = tile_splat_vf64(0.0);
        tile_vf64 acc8 = tile_splat_vf64(0.0);
        tile_vf64 acc9 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd5; v_j += 4 * TILE_L) {
          const tile_vf32 ld8 = tile_ld_vf32(p___scr0 + v_j);
          acc6 = acc6 + __builtin_convertvector(ld8, tile_vf64);
          const int64_t cv3 = v_j + 1 * TILE_L;
          const tile_vf32 ld9 = tile_ld_vf32(p___scr0 + cv3);
          acc7 = acc7 + __builtin_convertvector(ld9, tile_vf64);
          const int64_t cv4 = v_j + 2 * TILE_L;
          const tile_vf32 ld10 = tile_ld_vf32(p___scr0 + cv4);
          acc8 = acc8 + __builtin_convertvector(ld10, tile_vf64);
          const int64_t cv5 = v_j + 3 * TILE_L;
          const tile_vf32 ld11 = tile_ld_vf32(p___scr0 + cv5);
          acc9 = acc9 + __builtin_convertvector(ld11, tile_vf64);
        }
        acc6 = acc6 + acc7;
        acc8 = acc8 + acc9;
        acc6 = acc6 + acc8;
        for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
          const tile_vf32 ld12 = tile_ld_vf32(p___scr0 + v_j);
          acc6 = acc6 + __builtin_convertvector(ld12, tile_vf64);
        }
        double acc5 = tile_hsum_vf64(acc6);
        for (; v_j < bnd5; v_j++) {
          const float ld13 = p___scr0[v_j];
          acc5 = acc5 + ((double)ld13);
        }
        red1 = ((float)acc5);
      }
      const float val1 = red1; /* s */
      float red2;
      {
        const int64_t bnd6 = 0, bnd7 = s_N;
        if (bnd7 > bnd6) {
          if (!(v_i >= 0 && v_i < n0_label)) TILE_FAIL(7);
          if (!(v_i >= 0 && v_i < n0_x && bnd6 >= 0 && (bnd7 - 1) < n1_x)) TILE_FAIL(8);
        }
        tile_vf64 acc11 = tile_splat_vf64(0.0);
        int64_t v_j = bnd6;
        tile_vf64 acc12 = tile_splat_vf64(0.0);
        tile_vf64 acc13 = tile_splat_vf64(0.0);
        tile_vf64 acc14 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd7; v_j += 4 * TILE_L) {
          const int64_t ld14 = ((int64_t)p_label[v_i]);
          const tile_vf32 ld15 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc11 = acc11 + __builtin_convertvector(tile_sel_vf32(tile_m8_to_m4(tile_eq_vi64((tile_splat_vi64(v_j) + tile_iota_vi64()), tile_splat_vi64(ld14))), ld15, tile_splat_vf32(0.0f)), tile_vf64);
          const int64_t cv6 = v_j + 1 * TILE_L;
          const int64_t ld16 = ((int64_t)p_label[v_i]);
          const tile_vf32 ld17 = tile_ld_vf32(p_x + (v_i * n1_x + cv6));
          acc12 = acc12 + __builtin_convertvector(tile_sel_vf32(tile_m8_to_m4(tile_eq_vi64((tile_splat_vi64(cv6) + tile_iota_vi64()), tile_splat_vi64(ld16))), ld17, tile_splat_vf32(0.0f)), tile_vf64);
          const int64_t cv7 = v_j + 2 * TILE_L;
          const int64_t ld18 = ((int64_t)p_label[v_i]);
          const tile_vf32 ld19 = tile_ld_vf32(p_x + (v_i * n1_x + cv7));
          acc13 = acc13 + __builtin_convertvector(tile_sel_vf32(tile_m8_to_m4(tile_eq_vi64((tile_splat_vi64(cv7) + tile_iota_vi64()), tile_splat_vi64(ld18))), ld19, tile_splat_vf32(0.0f)), tile_vf64);
          const int64_t cv8 = v_j + 3 * TILE_L;
          const int64_t ld20 = ((int64_t)p_label[v_i]);
          const tile_vf32 ld21 = tile_ld_vf32(p_x + (v_i * n1_x + cv8));
          acc14 = acc14 + __builtin_convertvector(tile_sel_vf32(tile_m8_to_m4(tile_eq_vi64((tile_splat_vi64(cv8) + tile_iota_vi64()), tile_splat_vi64(ld20))), ld21, tile_splat_vf32(0.0f)), tile_vf64);
        }
        acc11 = acc11 + acc12;
        acc13 = acc13 + acc14;
        acc11 = acc11 + acc13;
        for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
          const int64_t ld22 = ((int64_t)p_label[v_i]);
          const tile_vf32 ld23 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc11 = acc11 + __builtin_convertvector(tile_sel_vf32(tile_m8_to_m4(tile_eq_vi64((tile_splat_vi64(v_j) + tile_iota_vi64()), tile_splat_vi64(ld22))), ld23, tile_splat_vf32(0.0f)), tile_vf64);
        }
        double acc10 = tile_hsum_vf64(acc11);
        for (; v_j < bnd7; v_j++) {
          const int64_t ld24 = ((int64_t)p_label[v_i]);
          const float ld25 = p_x[(v_i * n1_x + v_j)];
          acc10 = acc10 + ((double)((v_j == ld24) ? ld25 : 0.0f));
        }
        red2 = ((float)acc10);
      }
      const float val2 = red2; /* picked */
      p_loss[v_i] = ((val0 + tile_log_f32(val1)) - val2);
      {
        const int64_t bnd8 = 0, bnd9 = s_N;
        {
          if (bnd9 > bnd8) {
            if (!(bnd8 >= 0 && (bnd9 - 1) < n0___scr0)) TILE_FAIL(9);
            if (!(v_i >= 0 && v_i < n0_label)) TILE_FAIL(10);
            if (!(v_i >= 0 && v_i < n0_dx && bnd8 >= 0 && (bnd9 - 1) < n1_dx)) TILE_FAIL(11);
          }
          int64_t v_j = bnd8;
          for (; v_j + TILE_L <= bnd9; v_j += TILE_L) {
            const tile_vf32 ld26 = tile_ld_vf32(p___scr0 + v_j);
            const int64_t ld27 = ((int64_t)p_label[v_i]);
            const tile_vf32 alu1 = ((ld26 / tile_splat_vf32(val1)) - tile_sel_vf32(tile_m8_to_m4(tile_eq_vi64((tile_splat_vi64(v_j) + tile_iota_vi64()), tile_splat_vi64(ld27))), tile_splat_vf32(1.0f), tile_splat_vf32(0.0f)));
            tile_st_vf32(p_dx + (v_i * n1_dx + v_j), alu1);
          }
          for (; v_j < bnd9; v_j++) {
            const float ld28 = p___scr0[v_j];
            const int64_t ld29 = ((int64_t)p_label[v_i]);
            p_dx[(v_i * n1_dx + v_j)] = ((ld28 / val1) - ((v_j == ld29) ? 1.0f : 0.0f));
          }
        }
      }
    }
  }
}
