/* Tile: C kernels of program `histogram` (3 kernels). */
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

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_sel_vf32(tile_vm4 m, tile_vf32 a, tile_vf32 b) { return (tile_vf32)((m & (tile_vm4)a) | (~m & (tile_vm4)b)); }

static inline tile_vi64 tile_sel_vi64(tile_vm8 m, tile_vi64 a, tile_vi64 b) { return (tile_vi64)((m & (tile_vm8)a) | (~m & (tile_vm8)b)); }

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline int32_t tile_sat_i32(int64_t x) {
  return x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : (int32_t)x;
}

static inline void tile_st_vi32(int32_t *p, tile_vi64 v) {
  tile_vm4 w;
  for (int l = 0; l < TILE_L; l++) w[l] = tile_sat_i32(v[l]);
  __builtin_memcpy(p, &w, sizeof w);
}

/* Truncates toward zero and saturates to i32; NaN is 0. */
static inline int64_t tile_f2i_f32(float x) {
  if (!(x == x)) return 0;
  if (x >= 2147483648.0f) return INT32_MAX;
  if (x <= -2147483649.0f) return INT32_MIN;
  return (int64_t)x;
}

static inline tile_vi64 tile_f2i_vf32(tile_vf32 x) {
  const tile_vm4 big = x >= 2147483648.0f;
  const tile_vm4 small = x <= -2147483649.0f;
  const tile_vm4 keep = (x == x) & ~big & ~small;
  const tile_vm4 t = __builtin_convertvector((tile_vf32)((tile_vm4)x & keep), tile_vm4);
  return __builtin_convertvector((t & keep) | (big & INT32_MAX) | (small & INT32_MIN), tile_vi64);
}

static inline int64_t tile_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline int64_t tile_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

static inline tile_vi64 tile_min_vi64(tile_vi64 a, tile_vi64 b) {
  typedef int64_t half __attribute__((vector_size(TILE_VBYTES)));
  enum { n = sizeof(tile_vi64) / sizeof(half) };
  half x[n], y[n];
  __builtin_memcpy(x, &a, sizeof a);
  __builtin_memcpy(y, &b, sizeof b);
  for (int h = 0; h < n; h++) x[h] = y[h] ^ ((x[h] ^ y[h]) & (half)(x[h] < y[h]));
  tile_vi64 r;
  __builtin_memcpy(&r, x, sizeof r);
  return r;
}

static inline tile_vi64 tile_max_vi64(tile_vi64 a, tile_vi64 b) {
  typedef int64_t half __attribute__((vector_size(TILE_VBYTES)));
  enum { n = sizeof(tile_vi64) / sizeof(half) };
  half x[n], y[n];
  __builtin_memcpy(x, &a, sizeof a);
  __builtin_memcpy(y, &b, sizeof b);
  for (int h = 0; h < n; h++) x[h] = y[h] ^ ((x[h] ^ y[h]) & (half)(x[h] > y[h]));
  tile_vi64 r;
  __builtin_memcpy(&r, x, sizeof r);
  return r;
}

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

static inline int64_t tile_hsum_vi64(tile_vi64 v) {
  int64_t s = 0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

static inline float tile_floor_f32(float x) { return floorf(x); }

static inline tile_vf32 tile_abs_vf32(tile_vf32 x) { return (tile_vf32)((tile_vm4)x & 0x7fffffff); }

/* Exact: integral values (and NaN, infinities) pass through. */
static inline tile_vf32 tile_floor_vf32(tile_vf32 x) {
  tile_vm4 small = (tile_vm4)(tile_abs_vf32(x) < 8388608.0f);
  tile_vf32 xs = tile_sel_vf32(small, x, tile_splat_vf32(0.0f));
  tile_vf32 t = __builtin_convertvector(__builtin_convertvector(xs, tile_vm4), tile_vf32);
  t = tile_sel_vf32((tile_vm4)(t > xs), t - 1.0f, t);
  return tile_sel_vf32(small, t, x);
}

/* k0: element_grid over b in 0..B; stores counts; reads nothing */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_N = S[0];
  const int64_t s_B = S[1];
  int32_t *restrict p_counts = (int32_t *)A[0];
  const int64_t n0_counts = s_B;
  const int64_t dl0 = 0, dn0 = s_B;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t js = dl0 + lo, je = dl0 + hi;
  {
    if (je > js) {
      if (!(js >= 0 && (je - 1) < n0_counts)) TILE_FAIL(1);
    }
    int64_t v_b = js;
    for (; v_b + TILE_L <= je; v_b += TILE_L) {
      const tile_vi64 alu0 = tile_splat_vi64(0);
      tile_st_vi32(p_counts + v_b, alu0);
    }
    for (; v_b < je; v_b++) {
      p_counts[v_b] = tile_sat_i32(0);
    }
  }
}

/* k1: serial; stores counts; reads x, counts */
void tile_k1(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_N = S[0];
  const int64_t s_B = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_N;
  int32_t *restrict p_counts = (int32_t *)A[1];
  const int64_t n0_counts = s_B;
  if (lo >= hi) return;
  {
    const int64_t bnd0 = 0, bnd1 = s_N;
    {
      if (bnd1 > bnd0) {
        if (!(bnd0 >= 0 && (bnd1 - 1) < n0_x)) TILE_FAIL(1);
      }
      for (int64_t v_n = bnd0; v_n < bnd1; v_n++) {
        const float ld0 = p_x[v_n];
        const int64_t val0 = tile_max_i64(0, tile_min_i64((s_B - 1), tile_f2i_f32(tile_floor_f32((((ld0 + 1.0f) * 0.5f) * ((float)s_B)))))); /* bin */
        if (!(val0 >= 0 && val0 < n0_counts)) TILE_FAIL(3);
        const int64_t ld1 = ((int64_t)p_counts[val0]);
        if (!(val0 >= 0 && val0 < n0_counts)) TILE_FAIL(2);
        p_counts[val0] = tile_sat_i32((ld1 + 1));
      }
    }
  }
}

/* k2: row_reduction over b in 0..B; stores counts_by_bin; reads x */
void tile_k2(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_N = S[0];
  const int64_t s_B = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_N;
  int32_t *restrict p_counts_by_bin = (int32_t *)A[1];
  const int64_t n0_counts_by_bin = s_B;
  const int64_t dl0 = 0, dn0 = s_B;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    if (re > rs) {
      if (!(rs >= 0 && (re - 1) < n0_counts_by_bin)) TILE_FAIL(1);
    }
    for (int64_t v_b = rs; v_b < re; v_b++) {
      int64_t red0;
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        if (bnd1 > bnd0) {
          if (!(bnd0 >= 0 && (bnd1 - 1) < n0_x)) TILE_FAIL(2);
        }
        tile_vi64 acc1 = tile_splat_vi64(0);
        int64_t v_n = bnd0;
        tile_vi64 acc2 = tile_splat_vi64(0);
        tile_vi64 acc3 = tile_splat_vi64(0);
        tile_vi64 acc4 = tile_splat_vi64(0);
        for (; v_n + 4 * TILE_L <= bnd1; v_n += 4 * TILE_L) {
          const tile_vf32 ld0 = tile_ld_vf32(p_x + v_n);
          acc1 = acc1 + tile_sel_vi64(tile_eq_vi64(tile_max_vi64(tile_splat_vi64(0), tile_min_vi64(tile_splat_vi64((s_B - 1)), tile_f2i_vf32(tile_floor_vf32((((ld0 + 1.0f) * 0.5f) * tile_splat_vf32(((float)s_B))))))), tile_splat_vi64(v_b)), tile_splat_vi64(1), tile_splat_vi64(0));
          const int64_t cv0 = v_n + 1 * TILE_L;
          const tile_vf32 ld1 = tile_ld_vf32(p_x + cv0);
          acc2 = acc2 + tile_sel_vi64(tile_eq_vi64(tile_max_vi64(tile_splat_vi64(0), tile_min_vi64(tile_splat_vi64((s_B - 1)), tile_f2i_vf32(tile_floor_vf32((((ld1 + 1.0f) * 0.5f) * tile_splat_vf32(((float)s_B))))))), tile_splat_vi64(v_b)), tile_splat_vi64(1), tile_splat_vi64(0));
          const int64_t cv1 = v_n + 2 * TILE_L;
          const tile_vf32 ld2 = tile_ld_vf32(p_x + cv1);
          acc3 = acc3 + tile_sel_vi64(tile_eq_vi64(tile_max_vi64(tile_splat_vi64(0), tile_min_vi64(tile_splat_vi64((s_B - 1)), tile_f2i_vf32(tile_floor_vf32((((ld2 + 1.0f) * 0.5f) * tile_splat_vf32(((float)s_B))))))), tile_splat_vi64(v_b)), tile_splat_vi64(1), tile_splat_vi64(0));
          const int64_t cv2 = v_n + 3 * TILE_L;
          const tile_vf32 ld3 = tile_ld_vf32(p_x + cv2);
          acc4 = acc4 + tile_sel_vi64(tile_eq_vi64(tile_max_vi64(tile_splat_vi64(0), tile_min_vi64(tile_splat_vi64((s_B - 1)), tile_f2i_vf32(tile_floor_vf32((((ld3 + 1.0f) * 0.5f) * tile_splat_vf32(((float)s_B))))))), tile_splat_vi64(v_b)), tile_splat_vi64(1), tile_splat_vi64(0));
        }
        acc1 = acc1 + acc2;
        acc3 = acc3 + acc4;
        acc1 = acc1 + acc3;
        for (; v_n + TILE_L <= bnd1; v_n += TILE_L) {
          const tile_vf32 ld4 = tile_ld_vf32(p_x + v_n);
          acc1 = acc1 + tile_sel_vi64(tile_eq_vi64(tile_max_vi64(tile_splat_vi64(0), tile_min_vi64(tile_splat_vi64((s_B - 1)), tile_f2i_vf32(tile_floor_vf32((((ld4 + 1.0f) * 0.5f) * tile_splat_vf32(((float)s_B))))))), tile_splat_vi64(v_b)), tile_splat_vi64(1), tile_splat_vi64(0));
        }
        int64_t acc0 = tile_hsum_vi64(acc1);
        for (; v_n < bnd1; v_n++) {
          const float ld5 = p_x[v_n];
          acc0 = acc0 + ((tile_max_i64(0, tile_min_i64((s_B - 1), tile_f2i_f32(tile_floor_f32((((ld5 + 1.0f) * 0.5f) * ((float)s_B)))))) == v_b) ? 1 : 0);
        }
        red0 = acc0;
      }
      p_counts_by_bin[v_b] = tile_sat_i32(red0);
    }
  }
}
