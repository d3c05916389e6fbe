/* Tile: C kernels of program `col_sum` (1 kernel). */
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

static inline tile_vf64 tile_splat_vf64(double x) { return (tile_vf64){0} + x; }

static inline tile_vi64 tile_splat_vi64(int64_t x) { return (tile_vi64){0} + x; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline tile_vf64 tile_ld_vf64(const double *p) { tile_vf64 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf64(double *p, tile_vf64 v) { __builtin_memcpy(p, &v, sizeof v); }

/* k0: column_reduction over j in 0..N; stores y; reads x */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  float *restrict p_y = (float *)A[1];
  const int64_t n0_y = s_N;
  const int64_t dl0 = 0, dn0 = s_N;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t sb0 = (((2048) > 0 ? (2048) : 0) * 8 + 63) & ~(int64_t)63;
  char *const tile_scr = (char *)tile_scratch((size_t)(0 + sb0) + 64);
  if (!tile_scr) TILE_FAIL(1);
  double *restrict p___cacc0 = (double *)(tile_scr + 0);
  const int64_t n0___cacc0 = 2048;
  const int64_t ce_all = dl0 + hi;
  for (int64_t cb = dl0 + lo; cb < ce_all; cb += 2048) {
    const int64_t ce = ce_all - cb < 2048 ? ce_all : cb + 2048;
    {
      const int64_t bnd0 = cb, bnd1 = ce;
      {
        if (bnd1 > bnd0) {
          if (!((-cb + bnd0) >= 0 && (-cb + (bnd1 - 1)) < n0___cacc0)) TILE_FAIL(2);
        }
        int64_t v_j = bnd0;
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          const tile_vf64 alu0 = tile_splat_vf64(0.0);
          const int64_t alu1 = (v_j - cb);
          tile_st_vf64(p___cacc0 + alu1, alu0);
        }
        for (; v_j < bnd1; v_j++) {
          const int64_t alu2 = (v_j - cb);
          p___cacc0[alu2] = 0.0;
        }
      }
    }
    {
      const int64_t bnd2 = 0, bnd3 = s_M;
      for (int64_t v_i = bnd2; v_i < bnd3; v_i++) {
        {
          const int64_t bnd4 = cb, bnd5 = ce;
          {
            if (bnd5 > bnd4) {
              if (!((-cb + bnd4) >= 0 && (-cb + (bnd5 - 1)) < n0___cacc0)) TILE_FAIL(3);
              if (!(v_i >= 0 && v_i < n0_x && bnd4 >= 0 && (bnd5 - 1) < n1_x)) TILE_FAIL(4);
            }
            int64_t v_j = bnd4;
            for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
              const int64_t alu3 = (v_j - cb);
              const tile_vf64 ld0 = tile_ld_vf64(p___cacc0 + alu3);
              const tile_vf32 ld1 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
              const tile_vf64 alu4 = (ld0 + __builtin_convertvector(ld1, tile_vf64));
              const int64_t alu5 = (v_j - cb);
              tile_st_vf64(p___cacc0 + alu5, alu4);
            }
            for (; v_j < bnd5; v_j++) {
              const int64_t alu6 = (v_j - cb);
              const double ld2 = p___cacc0[alu6];
              const float ld3 = p_x[(v_i * n1_x + v_j)];
              const int64_t alu7 = (v_j - cb);
              p___cacc0[alu7] = (ld2 + ((double)ld3));
            }
          }
        }
      }
    }
    {
      const int64_t bnd6 = cb, bnd7 = ce;
      {
        if (bnd7 > bnd6) {
          if (!((-cb + bnd6) >= 0 && (-cb + (bnd7 - 1)) < n0___cacc0)) TILE_FAIL(6);
          if (!(bnd6 >= 0 && (bnd7 - 1) < n0_y)) TILE_FAIL(7);
        }
        int64_t v_j = bnd6;
        for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
          const int64_t alu8 = (v_j - cb);
          const tile_vf64 ld4 = tile_ld_vf64(p___cacc0 + alu8);
          const tile_vf32 alu9 = __builtin_convertvector(ld4, tile_vf32);
          tile_st_vf32(p_y + v_j, alu9);
        }
        for (; v_j < bnd7; v_j++) {
          const int64_t alu10 = (v_j - cb);
          const double ld5 = p___cacc0[alu10];
          p_y[v_j] = ((float)ld5);
        }
      }
    }
  }
}
