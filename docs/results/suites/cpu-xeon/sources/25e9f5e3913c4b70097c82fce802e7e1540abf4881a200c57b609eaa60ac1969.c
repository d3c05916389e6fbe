/* Tile: C kernels of program `prefix_sum` (1 kernel). */
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

/* k0: row_reduction over i in 0..M; stores y; reads x, y */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  float *restrict p_y = (float *)A[1];
  const int64_t n0_y = s_M;
  const int64_t n1_y = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    if (re > rs) {
      if (!(rs >= 0 && (re - 1) < n0_x && 0 >= 0 && 0 < n1_x)) TILE_FAIL(1);
      if (!(rs >= 0 && (re - 1) < n0_y && 0 >= 0 && 0 < n1_y)) TILE_FAIL(2);
    }
    for (int64_t v_i = rs; v_i < re; v_i++) {
      const float ld0 = p_x[(v_i * n1_x + 0)];
      p_y[(v_i * n1_y + 0)] = ld0;
      {
        const int64_t bnd0 = 1, bnd1 = s_N;
        {
          if (bnd1 > bnd0) {
            if (!(v_i >= 0 && v_i < n0_y && (bnd0 + (-1LL)) >= 0 && ((bnd1 - 1) + (-1LL)) < n1_y)) TILE_FAIL(3);
            if (!(v_i >= 0 && v_i < n0_x && bnd0 >= 0 && (bnd1 - 1) < n1_x)) TILE_FAIL(4);
            if (!(v_i >= 0 && v_i < n0_y && bnd0 >= 0 && (bnd1 - 1) < n1_y)) TILE_FAIL(5);
          }
          for (int64_t v_j = bnd0; v_j < bnd1; v_j++) {
            const int64_t alu0 = (v_j - 1);
            const float ld1 = p_y[(v_i * n1_y + alu0)];
            const float ld2 = p_x[(v_i * n1_x + v_j)];
            p_y[(v_i * n1_y + v_j)] = (ld1 + ld2);
          }
        }
      }
    }
  }
}
