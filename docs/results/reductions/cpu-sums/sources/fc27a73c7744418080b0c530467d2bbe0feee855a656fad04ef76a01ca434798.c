/* Tile: C kernels of program `full_sum` (1 kernel). */
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

static inline tile_vi64 tile_splat_vi64(int64_t x) { return (tile_vi64){0} + x; }

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

/* k0: full_reduction over i in 0..M; stores t; reads x */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  float *restrict p_t = (float *)A[1];
  const int64_t n0_t = 1;
  double *restrict tile_part = (double *)A[2];
  const int64_t frl = 0, frh = s_M;
  const int64_t fn_ = frh > frl ? frh - frl : 0;
  const int64_t fp = fn_ < 256 ? fn_ : 256;
  const int64_t flen = fp > 0 ? fn_ / fp + (fn_ % fp != 0) : 0;
  for (int64_t c = lo; c < hi; c++) {
    const int64_t fcl = frl + c * flen, fch = frh - fcl < flen ? frh : fcl + flen;
    double facc = 0.0;
    for (int64_t v_i = fcl; v_i < fch; v_i++) {
      float red0;
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        if (bnd1 > bnd0) {
          if (!(v_i >= 0 && v_i < n0_x && bnd0 >= 0 && (bnd1 - 1) < n1_x)) TILE_FAIL(1);
        }
        tile_vf64 acc1 = tile_splat_vf64(0.0);
        int64_t v_j = bnd0;
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc1 = acc1 + __builtin_convertvector(ld0, tile_vf64);
        }
        double acc0 = tile_hsum_vf64(acc1);
        for (; v_j < bnd1; v_j++) {
          const float ld1 = p_x[(v_i * n1_x + v_j)];
          acc0 = acc0 + ((double)ld1);
        }
        red0 = ((float)acc0);
      }
      facc = facc + ((double)red0);
    }
    tile_part[c] = fch > fcl ? facc : 0.0;
  }
}
/* k0_fin: the chunks' results combined in order, then the store */
void tile_k0_fin(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  float *restrict p_t = (float *)A[1];
  const int64_t n0_t = 1;
  const double *restrict tile_part = (const double *)A[2];
  double fcomb = 0.0;
  for (int64_t c = lo; c < hi; c++) {
    fcomb = fcomb + tile_part[c];
  }
  if (!(0 >= 0 && 0 < n0_t)) TILE_FAIL(2);
  p_t[0] = ((float)fcomb);
}
