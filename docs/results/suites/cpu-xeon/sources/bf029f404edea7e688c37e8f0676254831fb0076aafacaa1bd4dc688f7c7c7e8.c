/* Tile: C kernels of program `conv1d` (1 kernel). */
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

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

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

/* k0: row_reduction over i in 0..M; stores y; reads x, w */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const int64_t s_K = S[2];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = ((s_N + s_K) - 1);
  const float *restrict p_w = (const float *)A[1];
  const int64_t n0_w = s_K;
  float *restrict p_y = (float *)A[2];
  const int64_t n0_y = s_M;
  const int64_t n1_y = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    for (int64_t v_i = rs; v_i < re; v_i++) {
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        {
          if (bnd1 > bnd0) {
            if (!(v_i >= 0 && v_i < n0_y && bnd0 >= 0 && (bnd1 - 1) < n1_y)) TILE_FAIL(1);
          }
          int64_t v_j = bnd0;
          for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
            tile_vf32 red0;
            {
              const int64_t bnd2 = 0, bnd3 = s_K;
              if (bnd3 > bnd2) {
                if (!(v_i >= 0 && v_i < n0_x && (v_j + bnd2) >= 0 && ((v_j + (TILE_L - 1)) + (bnd3 - 1)) < n1_x)) TILE_FAIL(2);
                if (!(bnd2 >= 0 && (bnd3 - 1) < n0_w)) TILE_FAIL(3);
              }
              tile_vf64 acc0 = tile_splat_vf64(0.0);
              for (int64_t v_t = bnd2; v_t < bnd3; v_t++) {
                const int64_t alu0 = (v_j + v_t);
                const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + alu0));
                const float ld1 = p_w[v_t];
                acc0 = acc0 + __builtin_convertvector((ld0 * tile_splat_vf32(ld1)), tile_vf64);
              }
              red0 = __builtin_convertvector(acc0, tile_vf32);
            }
            tile_st_vf32(p_y + (v_i * n1_y + v_j), red0);
          }
          for (; v_j < bnd1; v_j++) {
            float red1;
            {
              const int64_t bnd4 = 0, bnd5 = s_K;
              if (bnd5 > bnd4) {
                if (!(v_i >= 0 && v_i < n0_x && (v_j + bnd4) >= 0 && (v_j + (bnd5 - 1)) < n1_x)) TILE_FAIL(2);
                if (!(bnd4 >= 0 && (bnd5 - 1) < n0_w)) TILE_FAIL(3);
              }
              tile_vf64 acc2 = tile_splat_vf64(0.0);
              int64_t v_t = bnd4;
              tile_vf64 acc3 = tile_splat_vf64(0.0);
              tile_vf64 acc4 = tile_splat_vf64(0.0);
              tile_vf64 acc5 = tile_splat_vf64(0.0);
              for (; v_t + 4 * TILE_L <= bnd5; v_t += 4 * TILE_L) {
                const int64_t alu1 = (v_j + v_t);
                const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + alu1));
                const tile_vf32 ld3 = tile_ld_vf32(p_w + v_t);
                acc2 = acc2 + __builtin_convertvector((ld2 * ld3), tile_vf64);
                const int64_t cv0 = v_t + 1 * TILE_L;
                const int64_t alu2 = (v_j + cv0);
                const tile_vf32 ld4 = tile_ld_vf32(p_x + (v_i * n1_x + alu2));
                const tile_vf32 ld5 = tile_ld_vf32(p_w + cv0);
                acc3 = acc3 + __builtin_convertvector((ld4 * ld5), tile_vf64);
                const int64_t cv1 = v_t + 2 * TILE_L;
                const int64_t alu3 = (v_j + cv1);
                const tile_vf32 ld6 = tile_ld_vf32(p_x + (v_i * n1_x + alu3));
                const tile_vf32 ld7 = tile_ld_vf32(p_w + cv1);
                acc4 = acc4 + __builtin_convertvector((ld6 * ld7), tile_vf64);
                const int64_t cv2 = v_t + 3 * TILE_L;
                const int64_t alu4 = (v_j + cv2);
                const tile_vf32 ld8 = tile_ld_vf32(p_x + (v_i * n1_x + alu4));
                const tile_vf32 ld9 = tile_ld_vf32(p_w + cv2);
                acc5 = acc5 + __builtin_convertvector((ld8 * ld9), tile_vf64);
              }
              acc2 = acc2 + acc3;
              acc4 = acc4 + acc5;
              acc2 = acc2 + acc4;
              for (; v_t + TILE_L <= bnd5; v_t += TILE_L) {
                const int64_t alu5 = (v_j + v_t);
                const tile_vf32 ld10 = tile_ld_vf32(p_x + (v_i * n1_x + alu5));
                const tile_vf32 ld11 = tile_ld_vf32(p_w + v_t);
                acc2 = acc2 + __builtin_convertvector((ld10 * ld11), tile_vf64);
              }
              double acc1 = tile_hsum_vf64(acc2);
              for (; v_t < bnd5; v_t++) {
                const int64_t alu6 = (v_j + v_t);
                const float ld12 = p_x[(v_i * n1_x + alu6)];
                const float ld13 = p_w[v_t];
                acc1 = acc1 + ((double)(ld12 * ld13));
              }
              red1 = ((float)acc1);
            }
            p_y[(v_i * n1_y + v_j)] = red1;
          }
        }
      }
    }
  }
}
