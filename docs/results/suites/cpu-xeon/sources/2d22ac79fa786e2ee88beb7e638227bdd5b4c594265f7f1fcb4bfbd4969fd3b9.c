/* Tile: C kernels of program `topk` (1 kernel). */
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

static inline tile_vi64 tile_sel_vi64(tile_vm8 m, tile_vi64 a, tile_vi64 b) { return (tile_vi64)((m & (tile_vm8)a) | (~m & (tile_vm8)b)); }

static inline tile_vm8 tile_m4_to_m8(tile_vm4 m) { return __builtin_convertvector(m, tile_vm8); }

static inline tile_vm4 tile_m8_to_m4(tile_vm8 m) { return __builtin_convertvector(m, tile_vm4); }

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline int32_t tile_sat_i32(int64_t x) {
  return x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : (int32_t)x;
}

static inline tile_vm8 tile_lt_vi64(tile_vi64 a, tile_vi64 b) {
  typedef int64_t half __attribute__((vector_size(TILE_VBYTES)));
  enum { n = sizeof(tile_vi64) / sizeof(half) };
  half x[n], y[n];
  __builtin_memcpy(x, &a, sizeof a);
  __builtin_memcpy(y, &b, sizeof b);
  for (int h = 0; h < n; h++) x[h] = (half)(x[h] < y[h]);
  tile_vm8 r;
  __builtin_memcpy(&r, x, sizeof r);
  return r;
}

static inline int64_t tile_hsum_vi64(tile_vi64 v) {
  int64_t s = 0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

/* k0: row_reduction over i in 0..M; stores vals, idx; reads x */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const int64_t s_K = S[2];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  float *restrict p_vals = (float *)A[1];
  const int64_t n0_vals = s_M;
  const int64_t n1_vals = s_K;
  int32_t *restrict p_idx = (int32_t *)A[2];
  const int64_t n0_idx = s_M;
  const int64_t n1_idx = s_K;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    for (int64_t v_i = rs; v_i < re; v_i++) {
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        {
          for (int64_t v_j = bnd0; v_j < bnd1; v_j++) {
            int64_t red0;
            {
              const int64_t bnd2 = 0, bnd3 = s_N;
              if (bnd3 > bnd2) {
                if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(1);
                if (!(v_i >= 0 && v_i < n0_x && v_j >= 0 && v_j < n1_x)) TILE_FAIL(2);
              }
              tile_vi64 acc1 = tile_splat_vi64(0);
              int64_t v_t = bnd2;
              tile_vi64 acc2 = tile_splat_vi64(0);
              tile_vi64 acc3 = tile_splat_vi64(0);
              tile_vi64 acc4 = tile_splat_vi64(0);
              for (; v_t + 4 * TILE_L <= bnd3; v_t += 4 * TILE_L) {
                const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + v_t));
                const float ld1 = p_x[(v_i * n1_x + v_j)];
                const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + v_t));
                const float ld3 = p_x[(v_i * n1_x + v_j)];
                acc1 = acc1 + tile_sel_vi64(tile_m4_to_m8((((tile_vm4)(ld0 > tile_splat_vf32(ld1))) | (((tile_vm4)(ld2 == tile_splat_vf32(ld3))) & tile_m8_to_m4(tile_lt_vi64((tile_splat_vi64(v_t) + tile_iota_vi64()), tile_splat_vi64(v_j)))))), tile_splat_vi64(1), tile_splat_vi64(0));
                const int64_t cv0 = v_t + 1 * TILE_L;
                const tile_vf32 ld4 = tile_ld_vf32(p_x + (v_i * n1_x + cv0));
                const float ld5 = p_x[(v_i * n1_x + v_j)];
                const tile_vf32 ld6 = tile_ld_vf32(p_x + (v_i * n1_x + cv0));
                const float ld7 = p_x[(v_i * n1_x + v_j)];
                acc2 = acc2 + tile_sel_vi64(tile_m4_to_m8((((tile_vm4)(ld4 > tile_splat_vf32(ld5))) | (((tile_vm4)(ld6 == tile_splat_vf32(ld7))) & tile_m8_to_m4(tile_lt_vi64((tile_splat_vi64(cv0) + tile_iota_vi64()), tile_splat_vi64(v_j)))))), tile_splat_vi64(1), tile_splat_vi64(0));
                const int64_t cv1 = v_t + 2 * TILE_L;
                const tile_vf32 ld8 = tile_ld_vf32(p_x + (v_i * n1_x + cv1));
                const float ld9 = p_x[(v_i * n1_x + v_j)];
                const tile_vf32 ld10 = tile_ld_vf32(p_x + (v_i * n1_x + cv1));
                const float ld11 = p_x[(v_i * n1_x + v_j)];
                acc3 = acc3 + tile_sel_vi64(tile_m4_to_m8((((tile_vm4)(ld8 > tile_splat_vf32(ld9))) | (((tile_vm4)(ld10 == tile_splat_vf32(ld11))) & tile_m8_to_m4(tile_lt_vi64((tile_splat_vi64(cv1) + tile_iota_vi64()), tile_splat_vi64(v_j)))))), tile_splat_vi64(1), tile_splat_vi64(0));
                const int64_t cv2 = v_t + 3 * TILE_L;
                const tile_vf32 ld12 = tile_ld_vf32(p_x + (v_i * n1_x + cv2));
                const float ld13 = p_x[(v_i * n1_x + v_j)];
                const tile_vf32 ld14 = tile_ld_vf32(p_x + (v_i * n1_x + cv2));
                const float ld15 = p_x[(v_i * n1_x + v_j)];
                acc4 = acc4 + tile_sel_vi64(tile_m4_to_m8((((tile_vm4)(ld12 > tile_splat_vf32(ld13))) | (((tile_vm4)(ld14 == tile_splat_vf32(ld15))) & tile_m8_to_m4(tile_lt_vi64((tile_splat_vi64(cv2) + tile_iota_vi64()), tile_splat_vi64(v_j)))))), tile_splat_vi64(1), tile_splat_vi64(0));
              }
              acc1 = acc1 + acc2;
              acc3 = acc3 + acc4;
              acc1 = acc1 + acc3;
              for (; v_t + TILE_L <= bnd3; v_t += TILE_L) {
                const tile_vf32 ld16 = tile_ld_vf32(p_x + (v_i * n1_x + v_t));
                const float ld17 = p_x[(v_i * n1_x + v_j)];
                const tile_vf32 ld18 = tile_ld_vf32(p_x + (v_i * n1_x + v_t));
                const float ld19 = p_x[(v_i * n1_x + v_j)];
                acc1 = acc1 + tile_sel_vi64(tile_m4_to_m8((((tile_vm4)(ld16 > tile_splat_vf32(ld17))) | (((tile_vm4)(ld18 == tile_splat_vf32(ld19))) & tile_m8_to_m4(tile_lt_vi64((tile_splat_vi64(v_t) + tile_iota_vi64()), tile_splat_vi64(v_j)))))), tile_splat_vi64(1), tile_splat_vi64(0));
              }
              int64_t acc0 = tile_hsum_vi64(acc1);
              for (; v_t < bnd3; v_t++) {
                const float ld20 = p_x[(v_i * n1_x + v_t)];
                const float ld21 = p_x[(v_i * n1_x + v_j)];
                const float ld22 = p_x[(v_i * n1_x + v_t)];
                const float ld23 = p_x[(v_i * n1_x + v_j)];
                acc0 = acc0 + (((ld20 > ld21) | ((ld22 == ld23) & (v_t < v_j))) ? 1 : 0);
              }
              red0 = acc0;
            }
            const int64_t val0 = red0; /* r */
            if ((val0 < s_K)) {
              if (!(v_i >= 0 && v_i < n0_x && v_j >= 0 && v_j < n1_x)) TILE_FAIL(6);
              const float ld24 = p_x[(v_i * n1_x + v_j)];
              if (!(v_i >= 0 && v_i < n0_vals && val0 >= 0 && val0 < n1_vals)) TILE_FAIL(5);
              p_vals[(v_i * n1_vals + val0)] = ld24;
              if (!(v_i >= 0 && v_i < n0_idx && val0 >= 0 && val0 < n1_idx)) TILE_FAIL(7);
              p_idx[(v_i * n1_idx + val0)] = tile_sat_i32(v_j);
            }
          }
        }
      }
    }
  }
}
