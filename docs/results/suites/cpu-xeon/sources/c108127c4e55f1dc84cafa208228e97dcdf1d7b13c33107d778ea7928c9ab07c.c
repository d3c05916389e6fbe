/* Tile: C kernels of program `matmul` (1 kernel). */
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

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline tile_vf64 tile_ld_vf64(const double *p) { tile_vf64 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf64(double *p, tile_vf64 v) { __builtin_memcpy(p, &v, sizeof v); }

/* Truncating division; division by zero or overflow reports its site. */
static inline int64_t tile_idiv_i64(int64_t a, int64_t b, int32_t *err, int32_t id) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) {
    __atomic_store_n(err, id, __ATOMIC_RELAXED);
    return 0;
  }
  return a / b;
}

static inline int64_t tile_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* k0: row_reduction over i in 0..M; stores c; reads a, b */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_K = S[1];
  const int64_t s_N = S[2];
  const float *restrict p_a = (const float *)A[0];
  const int64_t n0_a = s_M;
  const int64_t n1_a = s_K;
  const float *restrict p_b = (const float *)A[1];
  const int64_t n0_b = s_K;
  const int64_t n1_b = s_N;
  float *restrict p_c = (float *)A[2];
  const int64_t n0_c = s_M;
  const int64_t n1_c = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t sb0 = (((2048) > 0 ? (2048) : 0) * 8 + 63) & ~(int64_t)63;
  char *const tile_scr = (char *)tile_scratch((size_t)(0 + sb0) + 64);
  if (!tile_scr) TILE_FAIL(1);
  double *restrict p___cacc0 = (double *)(tile_scr + 0);
  const int64_t n0___cacc0 = 2048;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    for (int64_t v_i = rs; v_i < re; v_i++) {
      {
        const int64_t bnd0 = 0, bnd1 = tile_idiv_i64((s_N + 2047), 2048, err, 2);
        {
          for (int64_t v___blk0 = bnd0; v___blk0 < bnd1; v___blk0++) {
            {
              const int64_t bnd2 = (v___blk0 * 2048), bnd3 = tile_min_i64(s_N, ((v___blk0 * 2048) + 2048));
              {
                if (bnd3 > bnd2) {
                  if (!(((-2048LL) * v___blk0 + bnd2) >= 0 && ((-2048LL) * v___blk0 + (bnd3 - 1)) < n0___cacc0)) TILE_FAIL(3);
                }
                int64_t v_j = bnd2;
                for (; v_j + TILE_L <= bnd3; v_j += TILE_L) {
                  const tile_vf64 alu0 = tile_splat_vf64(0.0);
                  const int64_t alu1 = (v_j - (v___blk0 * 2048));
                  tile_st_vf64(p___cacc0 + alu1, alu0);
                }
                for (; v_j < bnd3; v_j++) {
                  const int64_t alu2 = (v_j - (v___blk0 * 2048));
                  p___cacc0[alu2] = 0.0;
                }
              }
            }
            {
              const int64_t bnd4 = 0, bnd5 = s_K;
              for (int64_t v_k = bnd4; v_k < bnd5; v_k++) {
                {
                  const int64_t bnd6 = (v___blk0 * 2048), bnd7 = tile_min_i64(s_N, ((v___blk0 * 2048) + 2048));
                  {
                    if (bnd7 > bnd6) {
                      if (!(((-2048LL) * v___blk0 + bnd6) >= 0 && ((-2048LL) * v___blk0 + (bnd7 - 1)) < n0___cacc0)) TILE_FAIL(4);
                      if (!(v_i >= 0 && v_i < n0_a && v_k >= 0 && v_k < n1_a)) TILE_FAIL(5);
                      if (!(v_k >= 0 && v_k < n0_b && bnd6 >= 0 && (bnd7 - 1) < n1_b)) TILE_FAIL(6);
                    }
                    int64_t v_j = bnd6;
                    for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
                      const int64_t alu3 = (v_j - (v___blk0 * 2048));
                      const tile_vf64 ld0 = tile_ld_vf64(p___cacc0 + alu3);
                      const float ld1 = p_a[(v_i * n1_a + v_k)];
                      const tile_vf32 ld2 = tile_ld_vf32(p_b + (v_k * n1_b + v_j));
                      const tile_vf64 alu4 = (ld0 + __builtin_convertvector((tile_splat_vf32(ld1) * ld2), tile_vf64));
                      const int64_t alu5 = (v_j - (v___blk0 * 2048));
                      tile_st_vf64(p___cacc0 + alu5, alu4);
                    }
                    for (; v_j < bnd7; v_j++) {
                      const int64_t alu6 = (v_j - (v___blk0 * 2048));
                      const double ld3 = p___cacc0[alu6];
                      const float ld4 = p_a[(v_i * n1_a + v_k)];
                      const float ld5 = p_b[(v_k * n1_b + v_j)];
                      const int64_t alu7 = (v_j - (v___blk0 * 2048));
                      p___cacc0[alu7] = (ld3 + ((double)(ld4 * ld5)));
                    }
                  }
                }
              }
            }
            {
              const int64_t bnd8 = (v___blk0 * 2048), bnd9 = tile_min_i64(s_N, ((v___blk0 * 2048) + 2048));
              {
                if (bnd9 > bnd8) {
                  if (!(((-2048LL) * v___blk0 + bnd8) >= 0 && ((-2048LL) * v___blk0 + (bnd9 - 1)) < n0___cacc0)) TILE_FAIL(8);
                  if (!(v_i >= 0 && v_i < n0_c && bnd8 >= 0 && (bnd9 - 1) < n1_c)) TILE_FAIL(9);
                }
                int64_t v_j = bnd8;
                for (; v_j + TILE_L <= bnd9; v_j += TILE_L) {
                  const int64_t alu8 = (v_j - (v___blk0 * 2048));
                  const tile_vf64 ld6 = tile_ld_vf64(p___cacc0 + alu8);
                  const tile_vf32 alu9 = __builtin_convertvector(ld6, tile_vf32);
                  tile_st_vf32(p_c + (v_i * n1_c + v_j), alu9);
                }
                for (; v_j < bnd9; v_j++) {
                  const int64_t alu10 = (v_j - (v___blk0 * 2048));
                  const double ld7 = p___cacc0[alu10];
                  p_c[(v_i * n1_c + v_j)] = ((float)ld7);
                }
              }
            }
          }
        }
      }
    }
  }
}
