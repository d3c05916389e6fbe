/* Tile: C kernels of program `copy` (1 kernel). */
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

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

/* k0: element_grid over i in 0..N; stores y; reads x */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_N = S[0];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_N;
  float *restrict p_y = (float *)A[1];
  const int64_t n0_y = s_N;
  const int64_t dl0 = 0, dn0 = s_N;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t js = dl0 + lo, je = dl0 + hi;
  {
    if (je > js) {
      if (!(js >= 0 && (je - 1) < n0_x)) TILE_FAIL(1);
      if (!(js >= 0 && (je - 1) < n0_y)) TILE_FAIL(2);
    }
    int64_t v_i = js;
    for (; v_i + TILE_L <= je; v_i += TILE_L) {
      const tile_vf32 ld0 = tile_ld_vf32(p_x + v_i);
      tile_st_vf32(p_y + v_i, ld0);
    }
    for (; v_i < je; v_i++) {
      const float ld1 = p_x[v_i];
      p_y[v_i] = ld1;
    }
  }
}
