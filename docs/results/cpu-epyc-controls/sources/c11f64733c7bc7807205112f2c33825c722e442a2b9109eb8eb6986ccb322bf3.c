/* Tile: C kernels of program `layernorm` (1 kernel). */
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

static inline tile_vf64 tile_splat_vf64(double x) { return (tile_vf64){0} + x; }

static inline tile_vi64 tile_splat_vi64(int64_t x) { return (tile_vi64){0} + x; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline double tile_hsum_vf64(tile_vf64 v) {
  double s = 0.0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

static inline float tile_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }

/* k0: row_reduction over i in 0..M; stores y; reads x, w, b */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  const float *restrict p_w = (const float *)A[1];
  const int64_t n0_w = s_N;
  const float *restrict p_b = (const float *)A[2];
  const int64_t n0_b = s_N;
  float *restrict p_y = (float *)A[3];
  const int64_t n0_y = s_M;
  const int64_t n1_y = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    for (int64_t v_i = rs; v_i < re; v_i++) {
      const float val0 = ((float)s_N); /* c0 */
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
      const float val1 = (red0 / val0); /* mean */
      float red1;
      {
        const int64_t bnd2 = 0, bnd3 = s_N;
        if (bnd3 > bnd2) {
          if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(2);
        }
        tile_vf64 acc3 = tile_splat_vf64(0.0);
        int64_t v_j = bnd2;
        for (; v_j + TILE_L <= bnd3; v_j += TILE_L) {
          const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vf32 ld3 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc3 = acc3 + __builtin_convertvector(((ld2 - tile_splat_vf32(val1)) * (ld3 - tile_splat_vf32(val1))), tile_vf64);
        }
        double acc2 = tile_hsum_vf64(acc3);
        for (; v_j < bnd3; v_j++) {
          const float ld4 = p_x[(v_i * n1_x + v_j)];
          const float ld5 = p_x[(v_i * n1_x + v_j)];
          acc2 = acc2 + ((double)((ld4 - val1) * (ld5 - val1)));
        }
        red1 = ((float)acc2);
      }
      const float val2 = (red1 / val0); /* var */
      const float val3 = tile_rsqrt_f32((val2 + 1e-5f)); /* r */
      {
        const int64_t bnd4 = 0, bnd5 = s_N;
        {
          if (bnd5 > bnd4) {
            if (!(v_i >= 0 && v_i < n0_x && bnd4 >= 0 && (bnd5 - 1) < n1_x)) TILE_FAIL(4);
            if (!(bnd4 >= 0 && (bnd5 - 1) < n0_w)) TILE_FAIL(5);
            if (!(bnd4 >= 0 && (bnd5 - 1) < n0_b)) TILE_FAIL(6);
            if (!(v_i >= 0 && v_i < n0_y && bnd4 >= 0 && (bnd5 - 1) < n1_y)) TILE_FAIL(7);
          }
          int64_t v_j = bnd4;
          for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
            const tile_vf32 ld6 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
            const tile_vf32 ld7 = tile_ld_vf32(p_w + v_j);
            const tile_vf32 ld8 = tile_ld_vf32(p_b + v_j);
            const tile_vf32 alu0 = ((((ld6 - tile_splat_vf32(val1)) * tile_splat_vf32(val3)) * ld7) + ld8);
            tile_st_vf32(p_y + (v_i * n1_y + v_j), alu0);
          }
          for (; v_j < bnd5; v_j++) {
            const float ld9 = p_x[(v_i * n1_x + v_j)];
            const float ld10 = p_w[v_j];
            const float ld11 = p_b[v_j];
            p_y[(v_i * n1_y + v_j)] = ((((ld9 - val1) * val3) * ld10) + ld11);
          }
        }
      }
    }
  }
}
