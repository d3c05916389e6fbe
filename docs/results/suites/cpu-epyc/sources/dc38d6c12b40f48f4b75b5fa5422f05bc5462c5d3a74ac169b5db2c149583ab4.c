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

static inline tile_vi64 tile_splat_vi64(int64_t x) { return (tile_vi64){0} + x; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_sel_vf32(tile_vm4 m, tile_vf32 a, tile_vf32 b) { return (tile_vf32)((m & (tile_vm4)a) | (~m & (tile_vm4)b)); }

static inline tile_vm4 tile_m8_to_m4(tile_vm8 m) { return __builtin_convertvector(m, tile_vm4); }

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

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
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc1 = tile_max_vf32(acc1, ld0);
        }
        float acc0 = tile_hmax_vf32(acc1);
        for (; v_j < bnd1; v_j++) {
          const float ld1 = p_x[(v_i * n1_x + v_j)];
          acc0 = tile_max_f32(acc0, ld1);
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
            const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
            const tile_vf32 alu0 = tile_exp_vf32((ld2 - tile_splat_vf32(val0)));
            tile_st_vf32(p___scr0 + v_j, alu0);
          }
          for (; v_j < bnd3; v_j++) {
            const float ld3 = p_x[(v_i * n1_x + v_j)];
            p___scr0[v_j] = tile_exp_f32((ld3 - val0));
          }
        }
      }
      float red1;
      {
        const int64_t bnd4 = 0, bnd5 = s_N;
        if (bnd5 > bnd4) {
          if (!(bnd4 >= 0 && (bnd5 - 1) < n0___scr0)) TILE_FAIL(6);
        }
        tile_vf64 acc3 = tile_splat_vf64(0.0);
        int64_t v_j = bnd4;
        for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
          const tile_vf32 ld4 = tile_ld_vf32(p___scr0 + v_j);
          acc3 = acc3 + __builtin_convertvector(ld4, tile_vf64);
        }
        double acc2 = tile_hsum_vf64(acc3);
        for (; v_j < bnd5; v_j++) {
          const float ld5 = p___scr0[v_j];
          acc2 = acc2 + ((double)ld5);
        }
        red1 = ((float)acc2);
      }
      const float val1 = red1; /* s */
      float red2;
      {
        const int64_t bnd6 = 0, bnd7 = s_N;
        if (bnd7 > bnd6) {
          if (!(v_i >= 0 && v_i < n0_label)) TILE_FAIL(7);
          if (!(v_i >= 0 && v_i < n0_x && bnd6 >= 0 && (bnd7 - 1) < n1_x)) TILE_FAIL(8);
        }
        tile_vf64 acc5 = tile_splat_vf64(0.0);
        int64_t v_j = bnd6;
        for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
          const int64_t ld6 = ((int64_t)p_label[v_i]);
          const tile_vf32 ld7 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc5 = acc5 + __builtin_convertvector(tile_sel_vf32(tile_m8_to_m4(((tile_vm8)((tile_splat_vi64(v_j) + tile_iota_vi64()) == tile_splat_vi64(ld6)))), ld7, tile_splat_vf32(0.0f)), tile_vf64);
        }
        double acc4 = tile_hsum_vf64(acc5);
        for (; v_j < bnd7; v_j++) {
          const int64_t ld8 = ((int64_t)p_label[v_i]);
          const float ld9 = p_x[(v_i * n1_x + v_j)];
          acc4 = acc4 + ((double)((v_j == ld8) ? ld9 : 0.0f));
        }
        red2 = ((float)acc4);
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
            const tile_vf32 ld10 = tile_ld_vf32(p___scr0 + v_j);
            const int64_t ld11 = ((int64_t)p_label[v_i]);
            const tile_vf32 alu1 = ((ld10 / tile_splat_vf32(val1)) - tile_sel_vf32(tile_m8_to_m4(((tile_vm8)((tile_splat_vi64(v_j) + tile_iota_vi64()) == tile_splat_vi64(ld11)))), tile_splat_vf32(1.0f), tile_splat_vf32(0.0f)));
            tile_st_vf32(p_dx + (v_i * n1_dx + v_j), alu1);
          }
          for (; v_j < bnd9; v_j++) {
            const float ld12 = p___scr0[v_j];
            const int64_t ld13 = ((int64_t)p_label[v_i]);
            p_dx[(v_i * n1_dx + v_j)] = ((ld12 / val1) - ((v_j == ld13) ? 1.0f : 0.0f));
          }
        }
      }
    }
  }
}
