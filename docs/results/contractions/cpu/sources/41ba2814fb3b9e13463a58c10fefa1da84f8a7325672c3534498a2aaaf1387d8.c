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

static inline tile_vi64 tile_splat_vi64(int64_t x) { tile_vi64 r; for (int l = 0; l < TILE_L; l++) r[l] = x; return r; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

/* A block of a contraction's products: t[i * ldt + j] = sum over k in
   0..kk, in order, of A(i, k) * B(k, j), for i < mb, j < nb (<= 512), with
   room for whole register tiles (rows up to a multiple of 6, columns of
   TILE_GEMM_NR); A(i, k) = a[i * ars + k * aks], B(k, j) = b[k * bks + j * bcs].
   Both operands are packed (zero-padded) a panel of 256 k at a time; a
   register tile of TILE_GEMM_MR rows by two vectors of columns holds one
   f32 accumulator per product. */
#define TILE_GEMM_MR 6
#define TILE_GEMM_NR (2 * TILE_L)
#define TILE_GEMM_KC 256
static inline tile_vf32 tile_gemm_ld(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }
static inline void tile_gemm_st(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }
static inline void tile_gemm_micro(int64_t kc, const float *restrict pa, const float *restrict pb,
                                   int64_t ldb, float *restrict t, int64_t ldt, int first) {
  tile_vf32 c0[TILE_GEMM_MR], c1[TILE_GEMM_MR];
#pragma GCC unroll 6
  for (int r = 0; r < TILE_GEMM_MR; r++) {
    if (first) { c0[r] = (tile_vf32){0}; c1[r] = (tile_vf32){0}; }
    else { c0[r] = tile_gemm_ld(t + r * ldt); c1[r] = tile_gemm_ld(t + r * ldt + TILE_L); }
  }
  for (int64_t k = 0; k < kc; k++) {
    const tile_vf32 b0 = tile_gemm_ld(pb + k * ldb), b1 = tile_gemm_ld(pb + k * ldb + TILE_L);
#pragma GCC unroll 6
    for (int r = 0; r < TILE_GEMM_MR; r++) {
      const tile_vf32 av = (tile_vf32){0} + pa[k * TILE_GEMM_MR + r];
      c0[r] += av * b0;
      c1[r] += av * b1;
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < TILE_GEMM_MR; r++) {
    tile_gemm_st(t + r * ldt, c0[r]);
    tile_gemm_st(t + r * ldt + TILE_L, c1[r]);
  }
}
static void tile_gemm_f32(int64_t mb, int64_t nb, int64_t kk,
                          const float *restrict a, int64_t ars, int64_t aks,
                          const float *restrict b, int64_t bks, int64_t bcs,
                          float *restrict t, int64_t ldt, float *restrict pb, float *restrict pa) {
  if (kk <= 0) {
    for (int64_t i = 0; i < mb; i++)
      for (int64_t j = 0; j < nb; j++) t[i * ldt + j] = 0.0f;
    return;
  }
  /* A few rows read a row-major right operand in place: packing it would
     cost as much as the products (its ragged last panel is still packed). */
  const int direct = bcs == 1 && mb <= 2 * TILE_GEMM_MR;
  for (int64_t pc = 0; pc < kk; pc += TILE_GEMM_KC) {
    const int64_t kc = kk - pc < TILE_GEMM_KC ? kk - pc : TILE_GEMM_KC;
    for (int64_t jr = 0; jr < nb; jr += TILE_GEMM_NR) {
      float *restrict q = pb + jr * kc;
      const int64_t nr = nb - jr < TILE_GEMM_NR ? nb - jr : TILE_GEMM_NR;
      if (direct && nr == TILE_GEMM_NR) continue;
      if (bcs == 1) {
        for (int64_t k = 0; k < kc; k++) {
          const float *restrict s = b + (pc + k) * bks + jr;
          for (int64_t c = 0; c < TILE_GEMM_NR; c++) q[k * TILE_GEMM_NR + c] = c < nr ? s[c] : 0.0f;
        }
      } else {
        for (int64_t c = 0; c < TILE_GEMM_NR; c++) {
          if (c >= nr) { for (int64_t k = 0; k < kc; k++) q[k * TILE_GEMM_NR + c] = 0.0f; continue; }
          const float *restrict s = b + (jr + c) * bcs + pc * bks;
          for (int64_t k = 0; k < kc; k++) q[k * TILE_GEMM_NR + c] = s[k * bks];
        }
      }
    }
    for (int64_t ir = 0; ir < mb; ir += TILE_GEMM_MR) {
      const int64_t mr = mb - ir < TILE_GEMM_MR ? mb - ir : TILE_GEMM_MR;
      if (aks == 1) {
        for (int64_t r = 0; r < TILE_GEMM_MR; r++) {
          if (r >= mr) { for (int64_t k = 0; k < kc; k++) pa[k * TILE_GEMM_MR + r] = 0.0f; continue; }
          const float *restrict s = a + (ir + r) * ars + pc;
          for (int64_t k = 0; k < kc; k++) pa[k * TILE_GEMM_MR + r] = s[k];
        }
      } else {
        for (int64_t k = 0; k < kc; k++) {
          const float *restrict s = a + (pc + k) * aks + ir * ars;
          for (int64_t r = 0; r < TILE_GEMM_MR; r++) pa[k * TILE_GEMM_MR + r] = r < mr ? s[r * ars] : 0.0f;
        }
      }
      for (int64_t jr = 0; jr < nb; jr += TILE_GEMM_NR) {
        if (direct && nb - jr >= TILE_GEMM_NR)
          tile_gemm_micro(kc, pa, b + pc * bks + jr, bks, t + ir * ldt + jr, ldt, pc == 0);
        else
          tile_gemm_micro(kc, pa, pb + jr * kc, TILE_GEMM_NR, t + ir * ldt + jr, ldt, pc == 0);
      }
    }
  }
}

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

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
  char *const tile_scr = (char *)tile_scratch((size_t)2496512 + 64);
  if (!tile_scr) TILE_FAIL(1);
  float *const tile_tile = (float *)tile_scr;
  float *const tile_pb = (float *)(tile_scr + 1966080);
  float *const tile_pa = (float *)(tile_scr + 2490368);
  const int64_t tile_n = s_N, tile_k = s_K;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  for (int64_t tile_ib = rs; tile_ib < re; tile_ib += 960) {
    const int64_t tile_ie = re - tile_ib < 960 ? re : tile_ib + 960;
    for (int64_t tile_jb = 0; tile_jb < tile_n; tile_jb += 512) {
      const int64_t tile_je = tile_n - tile_jb < 512 ? tile_n : tile_jb + 512;
      tile_gemm_f32(tile_ie - tile_ib, tile_je - tile_jb, tile_k, p_a + tile_ib * n1_a, n1_a, 1, p_b + tile_jb, n1_b, 1, tile_tile, 512, tile_pb, tile_pa);
      for (int64_t tile_ii = tile_ib; tile_ii < tile_ie; tile_ii++) {
        float *restrict p___dot0 = (float *)(tile_tile + (tile_ii - tile_ib) * 512);
        const int64_t n0___dot0 = 512;
        {
          for (int64_t v_i = tile_ii; v_i < tile_ii + 1; v_i++) {
            {
              const int64_t bnd0 = tile_jb, bnd1 = tile_je;
              {
                if (bnd1 > bnd0) {
                  if (!((-tile_jb + bnd0) >= 0 && (-tile_jb + (bnd1 - 1)) < n0___dot0)) TILE_FAIL(2);
                  if (!(v_i >= 0 && v_i < n0_c && bnd0 >= 0 && (bnd1 - 1) < n1_c)) TILE_FAIL(3);
                }
                int64_t v_j = bnd0;
                for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
                  const int64_t alu0 = (v_j - tile_jb);
                  const tile_vf32 ld0 = tile_ld_vf32(p___dot0 + alu0);
                  tile_st_vf32(p_c + (v_i * n1_c + v_j), ld0);
                }
                for (; v_j < bnd1; v_j++) {
                  const int64_t alu1 = (v_j - tile_jb);
                  const float ld1 = p___dot0[alu1];
                  p_c[(v_i * n1_c + v_j)] = ld1;
                }
              }
            }
          }
        }
      }
    }
  }
}
