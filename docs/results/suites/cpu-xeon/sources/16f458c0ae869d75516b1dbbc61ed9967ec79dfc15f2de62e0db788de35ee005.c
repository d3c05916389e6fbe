/* Tile: C kernels of program `row_dot` (1 kernel). */
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

static inline tile_vf64 tile_splat_vf64(double x) { return (tile_vf64){0} + x; }

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline double tile_hsum_vf64(tile_vf64 v) {
  double s = 0.0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

/* k0: row_reduction over i in 0..M; stores d; reads a, b */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_a = (const float *)A[0];
  const int64_t n0_a = s_M;
  const int64_t n1_a = s_N;
  const float *restrict p_b = (const float *)A[1];
  const int64_t n0_b = s_M;
  const int64_t n1_b = s_N;
  float *restrict p_d = (float *)A[2];
  const int64_t n0_d = s_M;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    if (re > rs) {
      if (!(rs >= 0 && (re - 1) < n0_d)) TILE_FAIL(1);
    }
    for (int64_t v_i = rs; v_i < re; v_i++) {
      float red0;
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        if (bnd1 > bnd0) {
          if (!(v_i >= 0 && v_i < n0_a && bnd0 >= 0 && (bnd1 - 1) < n1_a)) TILE_FAIL(2);
          if (!(v_i >= 0 && v_i < n0_b && bnd0 >= 0 && (bnd1 - 1) < n1_b)) TILE_FAIL(3);
        }
        tile_vf64 acc1 = tile_splat_vf64(0.0);
        int64_t v_k = bnd0;
        tile_vf64 acc2 = tile_splat_vf64(0.0);
        tile_vf64 acc3 = tile_splat_vf64(0.0);
        tile_vf64 acc4 = tile_splat_vf64(0.0);
        for (; v_k + 4 * TILE_L <= bnd1; v_k += 4 * TILE_L) {
          const tile_vf32 ld0 = tile_ld_vf32(p_a + (v_i * n1_a + v_k));
          const tile_vf32 ld1 = tile_ld_vf32(p_b + (v_i * n1_b + v_k));
          acc1 = acc1 + __builtin_convertvector((ld0 * ld1), tile_vf64);
          const int64_t cv0 = v_k + 1 * TILE_L;
          const tile_vf32 ld2 = tile_ld_vf32(p_a + (v_i * n1_a + cv0));
          const tile_vf32 ld3 = tile_ld_vf32(p_b + (v_i * n1_b + cv0));
          acc2 = acc2 + __builtin_convertvector((ld2 * ld3), tile_vf64);
          const int64_t cv1 = v_k + 2 * TILE_L;
          const tile_vf32 ld4 = tile_ld_vf32(p_a + (v_i * n1_a + cv1));
          const tile_vf32 ld5 = tile_ld_vf32(p_b + (v_i * n1_b + cv1));
          acc3 = acc3 + __builtin_convertvector((ld4 * ld5), tile_vf64);
          const int64_t cv2 = v_k + 3 * TILE_L;
          const tile_vf32 ld6 = tile_ld_vf32(p_a + (v_i * n1_a + cv2));
          const tile_vf32 ld7 = tile_ld_vf32(p_b + (v_i * n1_b + cv2));
          acc4 = acc4 + __builtin_convertvector((ld6 * ld7), tile_vf64);
        }
        acc1 = acc1 + acc2;
        acc3 = acc3 + acc4;
        acc1 = acc1 + acc3;
        for (; v_k + TILE_L <= bnd1; v_k += TILE_L) {
          const tile_vf32 ld8 = tile_ld_vf32(p_a + (v_i * n1_a + v_k));
          const tile_vf32 ld9 = tile_ld_vf32(p_b + (v_i * n1_b + v_k));
          acc1 = acc1 + __builtin_convertvector((ld8 * ld9), tile_vf64);
        }
        double acc0 = tile_hsum_vf64(acc1);
        for (; v_k < bnd1; v_k++) {
          const float ld10 = p_a[(v_i * n1_a + v_k)];
          const float ld11 = p_b[(v_i * n1_b + v_k)];
          acc0 = acc0 + ((double)(ld10 * ld11));
        }
        red0 = ((float)acc0);
      }
      p_d[v_i] = red0;
    }
  }
}
