/* Tile: C kernels of program `argmax` (1 kernel). */
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

static inline bool tile_any_vm4(tile_vm4 m) {
  uint64_t q[sizeof m / 8], r = 0;
  __builtin_memcpy(q, &m, sizeof m);
  for (unsigned k = 0; k < sizeof m / 8; k++) r |= q[k];
  return r != 0;
}

static inline bool tile_all_vm4(tile_vm4 m) {
  uint64_t q[sizeof m / 8], r = ~0ull;
  __builtin_memcpy(q, &m, sizeof m);
  for (unsigned k = 0; k < sizeof m / 8; k++) r &= q[k];
  return r == ~0ull;
}

static inline int64_t tile_first_vm4(tile_vm4 m) {
  for (int l = 0; l < TILE_L; l++) if (m[l]) return l;
  return TILE_L;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline int32_t tile_sat_i32(int64_t x) {
  return x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : (int32_t)x;
}

static inline int64_t tile_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline float tile_max_f32(float a, float b) { return fmaxf(a, b); }

/* IEEE max: a NaN operand yields the other operand. */
static inline tile_vf32 tile_max_vf32(tile_vf32 a, tile_vf32 b) {
  tile_vf32 r = tile_sel_vf32((tile_vm4)(a > b), a, b);
  r = tile_sel_vf32((tile_vm4)(b != b), a, r);
  return tile_sel_vf32((tile_vm4)(a != a), b, r);
}

static inline float tile_hmax_vf32(tile_vf32 v) {
  float m = v[0];
  for (int l = 1; l < TILE_L; l++) m = tile_max_f32(m, v[l]);
  return m;
}

/* k0: row_reduction over i in 0..M; stores best, idx; reads x */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  int32_t *restrict p_idx = (int32_t *)A[1];
  const int64_t n0_idx = s_M;
  float *restrict p_best = (float *)A[2];
  const int64_t n0_best = s_M;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    if (re > rs) {
      if (!(rs >= 0 && (re - 1) < n0_best)) TILE_FAIL(1);
      if (!(rs >= 0 && (re - 1) < n0_idx)) TILE_FAIL(2);
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
      p_best[v_i] = val0;
      int64_t red1;
      {
        const int64_t bnd2 = 0, bnd3 = s_N;
        if (bnd3 > bnd2) {
          if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(4);
        }
        int64_t acc5 = INT64_MAX;
        int64_t v_j = bnd2;
        bool fnd0 = 0, nf0 = 0;
        int64_t oth0 = 0;
        if (v_j < bnd3) {
          oth0 = s_N;
        }
        for (; v_j + 4 * TILE_L <= bnd3; v_j += 4 * TILE_L) {
          const tile_vf32 ld6 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vm4 msk0 = ((tile_vm4)(ld6 == tile_splat_vf32(val0)));
          const int64_t cv3 = v_j + 1 * TILE_L;
          const tile_vf32 ld7 = tile_ld_vf32(p_x + (v_i * n1_x + cv3));
          const tile_vm4 msk1 = ((tile_vm4)(ld7 == tile_splat_vf32(val0)));
          const int64_t cv4 = v_j + 2 * TILE_L;
          const tile_vf32 ld8 = tile_ld_vf32(p_x + (v_i * n1_x + cv4));
          const tile_vm4 msk2 = ((tile_vm4)(ld8 == tile_splat_vf32(val0)));
          const int64_t cv5 = v_j + 3 * TILE_L;
          const tile_vf32 ld9 = tile_ld_vf32(p_x + (v_i * n1_x + cv5));
          const tile_vm4 msk3 = ((tile_vm4)(ld9 == tile_splat_vf32(val0)));
          if (!fnd0 && tile_any_vm4(msk0 | msk1 | msk2 | msk3)) {
            int64_t fl0 = tile_first_vm4(msk0);
            if (fl0 == 1 * TILE_L) fl0 = 1 * TILE_L + tile_first_vm4(msk1);
            if (fl0 == 2 * TILE_L) fl0 = 2 * TILE_L + tile_first_vm4(msk2);
            if (fl0 == 3 * TILE_L) fl0 = 3 * TILE_L + tile_first_vm4(msk3);
            acc5 = v_j + fl0;
            fnd0 = 1;
          }
          nf0 |= !tile_all_vm4(msk0 & msk1 & msk2 & msk3);
        }
        for (; v_j + 1 * TILE_L <= bnd3; v_j += 1 * TILE_L) {
          const tile_vf32 ld10 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vm4 msk4 = ((tile_vm4)(ld10 == tile_splat_vf32(val0)));
          if (!fnd0 && tile_any_vm4(msk4)) {
            int64_t fl1 = tile_first_vm4(msk4);
            acc5 = v_j + fl1;
            fnd0 = 1;
          }
          nf0 |= !tile_all_vm4(msk4);
        }
        if (nf0) {
          acc5 = tile_min_i64(acc5, oth0);
        }
        for (; v_j < bnd3; v_j++) {
          const float ld11 = p_x[(v_i * n1_x + v_j)];
          acc5 = tile_min_i64(acc5, ((ld11 == val0) ? v_j : s_N));
        }
        red1 = bnd3 > bnd2 ? acc5 : INT64_MAX;
      }
      p_idx[v_i] = tile_sat_i32(red1);
    }
  }
}
