/* Tile: C kernels of program `layernorm_grad` (2 kernels). */
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

static inline double tile_hsum_vf64(tile_vf64 v) {
  double s = 0.0;
  for (int l = 0; l < TILE_L; l++) s += v[l];
  return s;
}

static inline float tile_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }

/* k0: row_reduction over i in 0..M; stores grad_x, saved_mean, saved_r; reads x, grad_y, w */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  const float *restrict p_w = (const float *)A[1];
  const int64_t n0_w = s_N;
  const float *restrict p_grad_y = (const float *)A[2];
  const int64_t n0_grad_y = s_M;
  const int64_t n1_grad_y = s_N;
  float *restrict p_grad_x = (float *)A[3];
  const int64_t n0_grad_x = s_M;
  const int64_t n1_grad_x = s_N;
  float *restrict p_saved_mean = (float *)A[4];
  const int64_t n0_saved_mean = s_M;
  float *restrict p_saved_r = (float *)A[5];
  const int64_t n0_saved_r = s_M;
  const int64_t dl0 = 0, dn0 = s_M;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t rs = dl0 + lo, re = dl0 + hi;
  {
    if (re > rs) {
      if (!(rs >= 0 && (re - 1) < n0_saved_mean)) TILE_FAIL(1);
      if (!(rs >= 0 && (re - 1) < n0_saved_r)) TILE_FAIL(2);
    }
    for (int64_t v_i = rs; v_i < re; v_i++) {
      float red0;
      {
        const int64_t bnd0 = 0, bnd1 = s_N;
        if (bnd1 > bnd0) {
          if (!(v_i >= 0 && v_i < n0_x && bnd0 >= 0 && (bnd1 - 1) < n1_x)) TILE_FAIL(3);
        }
        tile_vf64 acc1 = tile_splat_vf64(0.0);
        int64_t v_j = bnd0;
        tile_vf64 acc2 = tile_splat_vf64(0.0);
        tile_vf64 acc3 = tile_splat_vf64(0.0);
        tile_vf64 acc4 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd1; v_j += 4 * TILE_L) {
          const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc1 = acc1 + __builtin_convertvector(ld0, tile_vf64);
          const int64_t cv0 = v_j + 1 * TILE_L;
          const tile_vf32 ld1 = tile_ld_vf32(p_x + (v_i * n1_x + cv0));
          acc2 = acc2 + __builtin_convertvector(ld1, tile_vf64);
          const int64_t cv1 = v_j + 2 * TILE_L;
          const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + cv1));
          acc3 = acc3 + __builtin_convertvector(ld2, tile_vf64);
          const int64_t cv2 = v_j + 3 * TILE_L;
          const tile_vf32 ld3 = tile_ld_vf32(p_x + (v_i * n1_x + cv2));
          acc4 = acc4 + __builtin_convertvector(ld3, tile_vf64);
        }
        acc1 = acc1 + acc2;
        acc3 = acc3 + acc4;
        acc1 = acc1 + acc3;
        for (; v_j + TILE_L <= bnd1; v_j += TILE_L) {
          const tile_vf32 ld4 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc1 = acc1 + __builtin_convertvector(ld4, tile_vf64);
        }
        double acc0 = tile_hsum_vf64(acc1);
        for (; v_j < bnd1; v_j++) {
          const float ld5 = p_x[(v_i * n1_x + v_j)];
          acc0 = acc0 + ((double)ld5);
        }
        red0 = ((float)acc0);
      }
      const float val0 = red0; /* mean_sum */
      const float val1 = ((float)s_N); /* c1 */
      const float val2 = (val0 / val1); /* mean */
      float red1;
      {
        const int64_t bnd2 = 0, bnd3 = s_N;
        if (bnd3 > bnd2) {
          if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(4);
        }
        tile_vf64 acc6 = tile_splat_vf64(0.0);
        int64_t v_j = bnd2;
        tile_vf64 acc7 = tile_splat_vf64(0.0);
        tile_vf64 acc8 = tile_splat_vf64(0.0);
        tile_vf64 acc9 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd3; v_j += 4 * TILE_L) {
          const tile_vf32 ld6 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vf32 ld7 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc6 = acc6 + __builtin_convertvector(((ld6 - tile_splat_vf32(val2)) * (ld7 - tile_splat_vf32(val2))), tile_vf64);
          const int64_t cv3 = v_j + 1 * TILE_L;
          const tile_vf32 ld8 = tile_ld_vf32(p_x + (v_i * n1_x + cv3));
          const tile_vf32 ld9 = tile_ld_vf32(p_x + (v_i * n1_x + cv3));
          acc7 = acc7 + __builtin_convertvector(((ld8 - tile_splat_vf32(val2)) * (ld9 - tile_splat_vf32(val2))), tile_vf64);
          const int64_t cv4 = v_j + 2 * TILE_L;
          const tile_vf32 ld10 = tile_ld_vf32(p_x + (v_i * n1_x + cv4));
          const tile_vf32 ld11 = tile_ld_vf32(p_x + (v_i * n1_x + cv4));
          acc8 = acc8 + __builtin_convertvector(((ld10 - tile_splat_vf32(val2)) * (ld11 - tile_splat_vf32(val2))), tile_vf64);
          const int64_t cv5 = v_j + 3 * TILE_L;
          const tile_vf32 ld12 = tile_ld_vf32(p_x + (v_i * n1_x + cv5));
          const tile_vf32 ld13 = tile_ld_vf32(p_x + (v_i * n1_x + cv5));
          acc9 = acc9 + __builtin_convertvector(((ld12 - tile_splat_vf32(val2)) * (ld13 - tile_splat_vf32(val2))), tile_vf64);
        }
        acc6 = acc6 + acc7;
        acc8 = acc8 + acc9;
        acc6 = acc6 + acc8;
        for (; v_j + TILE_L <= bnd3; v_j += TILE_L) {
          const tile_vf32 ld14 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vf32 ld15 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc6 = acc6 + __builtin_convertvector(((ld14 - tile_splat_vf32(val2)) * (ld15 - tile_splat_vf32(val2))), tile_vf64);
        }
        double acc5 = tile_hsum_vf64(acc6);
        for (; v_j < bnd3; v_j++) {
          const float ld16 = p_x[(v_i * n1_x + v_j)];
          const float ld17 = p_x[(v_i * n1_x + v_j)];
          acc5 = acc5 + ((double)((ld16 - val2) * (ld17 - val2)));
        }
        red1 = ((float)acc5);
      }
      const float val3 = red1; /* var_sum */
      const float val4 = (val3 / val1); /* var */
      const float val5 = (val4 + 1e-5f); /* c0 */
      const float val6 = tile_rsqrt_f32(val5); /* r */
      float red2;
      {
        const int64_t bnd4 = 0, bnd5 = s_N;
        if (bnd5 > bnd4) {
          if (!(v_i >= 0 && v_i < n0_grad_y && bnd4 >= 0 && (bnd5 - 1) < n1_grad_y)) TILE_FAIL(6);
          if (!(bnd4 >= 0 && (bnd5 - 1) < n0_w)) TILE_FAIL(7);
          if (!(v_i >= 0 && v_i < n0_x && bnd4 >= 0 && (bnd5 - 1) < n1_x)) TILE_FAIL(8);
        }
        tile_vf64 acc11 = tile_splat_vf64(0.0);
        int64_t v_j = bnd4;
        tile_vf64 acc12 = tile_splat_vf64(0.0);
        tile_vf64 acc13 = tile_splat_vf64(0.0);
        tile_vf64 acc14 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd5; v_j += 4 * TILE_L) {
          const tile_vf32 ld18 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
          const tile_vf32 ld19 = tile_ld_vf32(p_w + v_j);
          const tile_vf32 ld20 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc11 = acc11 + __builtin_convertvector(((ld18 * ld19) * (ld20 - tile_splat_vf32(val2))), tile_vf64);
          const int64_t cv6 = v_j + 1 * TILE_L;
          const tile_vf32 ld21 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + cv6));
          const tile_vf32 ld22 = tile_ld_vf32(p_w + cv6);
          const tile_vf32 ld23 = tile_ld_vf32(p_x + (v_i * n1_x + cv6));
          acc12 = acc12 + __builtin_convertvector(((ld21 * ld22) * (ld23 - tile_splat_vf32(val2))), tile_vf64);
          const int64_t cv7 = v_j + 2 * TILE_L;
          const tile_vf32 ld24 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + cv7));
          const tile_vf32 ld25 = tile_ld_vf32(p_w + cv7);
          const tile_vf32 ld26 = tile_ld_vf32(p_x + (v_i * n1_x + cv7));
          acc13 = acc13 + __builtin_convertvector(((ld24 * ld25) * (ld26 - tile_splat_vf32(val2))), tile_vf64);
          const int64_t cv8 = v_j + 3 * TILE_L;
          const tile_vf32 ld27 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + cv8));
          const tile_vf32 ld28 = tile_ld_vf32(p_w + cv8);
          const tile_vf32 ld29 = tile_ld_vf32(p_x + (v_i * n1_x + cv8));
          acc14 = acc14 + __builtin_convertvector(((ld27 * ld28) * (ld29 - tile_splat_vf32(val2))), tile_vf64);
        }
        acc11 = acc11 + acc12;
        acc13 = acc13 + acc14;
        acc11 = acc11 + acc13;
        for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
          const tile_vf32 ld30 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
          const tile_vf32 ld31 = tile_ld_vf32(p_w + v_j);
          const tile_vf32 ld32 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc11 = acc11 + __builtin_convertvector(((ld30 * ld31) * (ld32 - tile_splat_vf32(val2))), tile_vf64);
        }
        double acc10 = tile_hsum_vf64(acc11);
        for (; v_j < bnd5; v_j++) {
          const float ld33 = p_grad_y[(v_i * n1_grad_y + v_j)];
          const float ld34 = p_w[v_j];
          const float ld35 = p_x[(v_i * n1_x + v_j)];
          acc10 = acc10 + ((double)((ld33 * ld34) * (ld35 - val2)));
        }
        red2 = ((float)acc10);
      }
      const float val7 = red2; /* grad_r */
      const float val8 = (((-0.5f) * (val7 * val6)) / val5); /* grad_var */
      const float val9 = (val8 / val1); /* grad_var_sum */
      float red3;
      {
        const int64_t bnd6 = 0, bnd7 = s_N;
        if (bnd7 > bnd6) {
          if (!(v_i >= 0 && v_i < n0_grad_y && bnd6 >= 0 && (bnd7 - 1) < n1_grad_y)) TILE_FAIL(9);
          if (!(bnd6 >= 0 && (bnd7 - 1) < n0_w)) TILE_FAIL(10);
          if (!(v_i >= 0 && v_i < n0_x && bnd6 >= 0 && (bnd7 - 1) < n1_x)) TILE_FAIL(11);
        }
        tile_vf64 acc16 = tile_splat_vf64(0.0);
        int64_t v_j = bnd6;
        tile_vf64 acc17 = tile_splat_vf64(0.0);
        tile_vf64 acc18 = tile_splat_vf64(0.0);
        tile_vf64 acc19 = tile_splat_vf64(0.0);
        for (; v_j + 4 * TILE_L <= bnd7; v_j += 4 * TILE_L) {
          const tile_vf32 ld36 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
          const tile_vf32 ld37 = tile_ld_vf32(p_w + v_j);
          const tile_vf32 ld38 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vf32 ld39 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc16 = acc16 + __builtin_convertvector((((-((ld36 * ld37) * tile_splat_vf32(val6))) - (tile_splat_vf32(val9) * (ld38 - tile_splat_vf32(val2)))) - (tile_splat_vf32(val9) * (ld39 - tile_splat_vf32(val2)))), tile_vf64);
          const int64_t cv9 = v_j + 1 * TILE_L;
          const tile_vf32 ld40 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + cv9));
          const tile_vf32 ld41 = tile_ld_vf32(p_w + cv9);
          const tile_vf32 ld42 = tile_ld_vf32(p_x + (v_i * n1_x + cv9));
          const tile_vf32 ld43 = tile_ld_vf32(p_x + (v_i * n1_x + cv9));
          acc17 = acc17 + __builtin_convertvector((((-((ld40 * ld41) * tile_splat_vf32(val6))) - (tile_splat_vf32(val9) * (ld42 - tile_splat_vf32(val2)))) - (tile_splat_vf32(val9) * (ld43 - tile_splat_vf32(val2)))), tile_vf64);
          const int64_t cv10 = v_j + 2 * TILE_L;
          const tile_vf32 ld44 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + cv10));
          const tile_vf32 ld45 = tile_ld_vf32(p_w + cv10);
          const tile_vf32 ld46 = tile_ld_vf32(p_x + (v_i * n1_x + cv10));
          const tile_vf32 ld47 = tile_ld_vf32(p_x + (v_i * n1_x + cv10));
          acc18 = acc18 + __builtin_convertvector((((-((ld44 * ld45) * tile_splat_vf32(val6))) - (tile_splat_vf32(val9) * (ld46 - tile_splat_vf32(val2)))) - (tile_splat_vf32(val9) * (ld47 - tile_splat_vf32(val2)))), tile_vf64);
          const int64_t cv11 = v_j + 3 * TILE_L;
          const tile_vf32 ld48 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + cv11));
          const tile_vf32 ld49 = tile_ld_vf32(p_w + cv11);
          const tile_vf32 ld50 = tile_ld_vf32(p_x + (v_i * n1_x + cv11));
          const tile_vf32 ld51 = tile_ld_vf32(p_x + (v_i * n1_x + cv11));
          acc19 = acc19 + __builtin_convertvector((((-((ld48 * ld49) * tile_splat_vf32(val6))) - (tile_splat_vf32(val9) * (ld50 - tile_splat_vf32(val2)))) - (tile_splat_vf32(val9) * (ld51 - tile_splat_vf32(val2)))), tile_vf64);
        }
        acc16 = acc16 + acc17;
        acc18 = acc18 + acc19;
        acc16 = acc16 + acc18;
        for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
          const tile_vf32 ld52 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
          const tile_vf32 ld53 = tile_ld_vf32(p_w + v_j);
          const tile_vf32 ld54 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          const tile_vf32 ld55 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
          acc16 = acc16 + __builtin_convertvector((((-((ld52 * ld53) * tile_splat_vf32(val6))) - (tile_splat_vf32(val9) * (ld54 - tile_splat_vf32(val2)))) - (tile_splat_vf32(val9) * (ld55 - tile_splat_vf32(val2)))), tile_vf64);
        }
        double acc15 = tile_hsum_vf64(acc16);
        for (; v_j < bnd7; v_j++) {
          const float ld56 = p_grad_y[(v_i * n1_grad_y + v_j)];
          const float ld57 = p_w[v_j];
          const float ld58 = p_x[(v_i * n1_x + v_j)];
          const float ld59 = p_x[(v_i * n1_x + v_j)];
          acc15 = acc15 + ((double)(((-((ld56 * ld57) * val6)) - (val9 * (ld58 - val2))) - (val9 * (ld59 - val2))));
        }
        red3 = ((float)acc15);
      }
      const float val10 = red3; /* grad_mean */
      const float val11 = (val10 / val1); /* grad_mean_sum */
      {
        const int64_t bnd8 = 0, bnd9 = s_N;
        {
          if (bnd9 > bnd8) {
            if (!(v_i >= 0 && v_i < n0_x && bnd8 >= 0 && (bnd9 - 1) < n1_x)) TILE_FAIL(13);
            if (!(v_i >= 0 && v_i < n0_grad_y && bnd8 >= 0 && (bnd9 - 1) < n1_grad_y)) TILE_FAIL(14);
            if (!(bnd8 >= 0 && (bnd9 - 1) < n0_w)) TILE_FAIL(15);
            if (!(v_i >= 0 && v_i < n0_grad_x && bnd8 >= 0 && (bnd9 - 1) < n1_grad_x)) TILE_FAIL(16);
          }
          int64_t v_j = bnd8;
          for (; v_j + TILE_L <= bnd9; v_j += TILE_L) {
            const tile_vf32 ld60 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
            const tile_vf32 val12 = (tile_splat_vf32(val9) * (ld60 - tile_splat_vf32(val2))); /* c2 */
            const tile_vf32 ld61 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
            const tile_vf32 ld62 = tile_ld_vf32(p_w + v_j);
            const tile_vf32 alu0 = (((((ld61 * ld62) * tile_splat_vf32(val6)) + val12) + val12) + tile_splat_vf32(val11));
            tile_st_vf32(p_grad_x + (v_i * n1_grad_x + v_j), alu0);
          }
          for (; v_j < bnd9; v_j++) {
            const float ld63 = p_x[(v_i * n1_x + v_j)];
            const float val13 = (val9 * (ld63 - val2)); /* c2 */
            const float ld64 = p_grad_y[(v_i * n1_grad_y + v_j)];
            const float ld65 = p_w[v_j];
            p_grad_x[(v_i * n1_grad_x + v_j)] = (((((ld64 * ld65) * val6) + val13) + val13) + val11);
          }
        }
      }
      p_saved_mean[v_i] = val2;
      p_saved_r[v_i] = val6;
    }
  }
}

/* k1: column_reduction over j in 0..N; stores grad_w, grad_b; reads grad_y, x, saved_mean, saved_r */
void tile_k1(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  const float *restrict p_grad_y = (const float *)A[1];
  const int64_t n0_grad_y = s_M;
  const int64_t n1_grad_y = s_N;
  float *restrict p_grad_w = (float *)A[2];
  const int64_t n0_grad_w = s_N;
  float *restrict p_grad_b = (float *)A[3];
  const int64_t n0_grad_b = s_N;
  const float *restrict p_saved_mean = (const float *)A[4];
  const int64_t n0_saved_mean = s_M;
  const float *restrict p_saved_r = (const float *)A[5];
  const int64_t n0_saved_r = s_M;
  const int64_t dl0 = 0, dn0 = s_N;
  if (lo >= hi || dn0 <= 0) return;
  const int64_t sb0 = (((2048) > 0 ? (2048) : 0) * 8 + 63) & ~(int64_t)63;
  const int64_t sb1 = (((2048) > 0 ? (2048) : 0) * 8 + 63) & ~(int64_t)63;
  char *const tile_scr = (char *)tile_scratch((size_t)(0 + sb0 + sb1) + 64);
  if (!tile_scr) TILE_FAIL(1);
  double *restrict p___cacc0 = (double *)(tile_scr + 0);
  const int64_t n0___cacc0 = 2048;
  double *restrict p___cacc1 = (double *)(tile_scr + 0 + sb0);
  const int64_t n0___cacc1 = 2048;
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
              if (!(v_i >= 0 && v_i < n0_grad_y && bnd4 >= 0 && (bnd5 - 1) < n1_grad_y)) TILE_FAIL(4);
              if (!(v_i >= 0 && v_i < n0_x && bnd4 >= 0 && (bnd5 - 1) < n1_x)) TILE_FAIL(5);
              if (!(v_i >= 0 && v_i < n0_saved_mean)) TILE_FAIL(6);
              if (!(v_i >= 0 && v_i < n0_saved_r)) TILE_FAIL(7);
            }
            int64_t v_j = bnd4;
            for (; v_j + TILE_L <= bnd5; v_j += TILE_L) {
              const int64_t alu3 = (v_j - cb);
              const tile_vf64 ld0 = tile_ld_vf64(p___cacc0 + alu3);
              const tile_vf32 ld1 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
              const tile_vf32 ld2 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
              const float ld3 = p_saved_mean[v_i];
              const float ld4 = p_saved_r[v_i];
              const tile_vf64 alu4 = (ld0 + __builtin_convertvector((ld1 * ((ld2 - tile_splat_vf32(ld3)) * tile_splat_vf32(ld4))), tile_vf64));
              const int64_t alu5 = (v_j - cb);
              tile_st_vf64(p___cacc0 + alu5, alu4);
            }
            for (; v_j < bnd5; v_j++) {
              const int64_t alu6 = (v_j - cb);
              const double ld5 = p___cacc0[alu6];
              const float ld6 = p_grad_y[(v_i * n1_grad_y + v_j)];
              const float ld7 = p_x[(v_i * n1_x + v_j)];
              const float ld8 = p_saved_mean[v_i];
              const float ld9 = p_saved_r[v_i];
              const int64_t alu7 = (v_j - cb);
              p___cacc0[alu7] = (ld5 + ((double)(ld6 * ((ld7 - ld8) * ld9))));
            }
          }
        }
      }
    }
    {
      const int64_t bnd6 = cb, bnd7 = ce;
      {
        if (bnd7 > bnd6) {
          if (!((-cb + bnd6) >= 0 && (-cb + (bnd7 - 1)) < n0___cacc0)) TILE_FAIL(9);
          if (!(bnd6 >= 0 && (bnd7 - 1) < n0_grad_w)) TILE_FAIL(10);
        }
        int64_t v_j = bnd6;
        for (; v_j + TILE_L <= bnd7; v_j += TILE_L) {
          const int64_t alu8 = (v_j - cb);
          const tile_vf64 ld10 = tile_ld_vf64(p___cacc0 + alu8);
          const tile_vf32 alu9 = __builtin_convertvector(ld10, tile_vf32);
          tile_st_vf32(p_grad_w + v_j, alu9);
        }
        for (; v_j < bnd7; v_j++) {
          const int64_t alu10 = (v_j - cb);
          const double ld11 = p___cacc0[alu10];
          p_grad_w[v_j] = ((float)ld11);
        }
      }
    }
    {
      const int64_t bnd8 = cb, bnd9 = ce;
      {
        if (bnd9 > bnd8) {
          if (!((-cb + bnd8) >= 0 && (-cb + (bnd9 - 1)) < n0___cacc1)) TILE_FAIL(11);
        }
        int64_t v_j = bnd8;
        for (; v_j + TILE_L <= bnd9; v_j += TILE_L) {
          const tile_vf64 alu11 = tile_splat_vf64(0.0);
          const int64_t alu12 = (v_j - cb);
          tile_st_vf64(p___cacc1 + alu12, alu11);
        }
        for (; v_j < bnd9; v_j++) {
          const int64_t alu13 = (v_j - cb);
          p___cacc1[alu13] = 0.0;
        }
      }
    }
    {
      const int64_t bnd10 = 0, bnd11 = s_M;
      for (int64_t v_i = bnd10; v_i < bnd11; v_i++) {
        {
          const int64_t bnd12 = cb, bnd13 = ce;
          {
            if (bnd13 > bnd12) {
              if (!((-cb + bnd12) >= 0 && (-cb + (bnd13 - 1)) < n0___cacc1)) TILE_FAIL(12);
              if (!(v_i >= 0 && v_i < n0_grad_y && bnd12 >= 0 && (bnd13 - 1) < n1_grad_y)) TILE_FAIL(13);
            }
            int64_t v_j = bnd12;
            for (; v_j + TILE_L <= bnd13; v_j += TILE_L) {
              const int64_t alu14 = (v_j - cb);
              const tile_vf64 ld12 = tile_ld_vf64(p___cacc1 + alu14);
              const tile_vf32 ld13 = tile_ld_vf32(p_grad_y + (v_i * n1_grad_y + v_j));
              const tile_vf64 alu15 = (ld12 + __builtin_convertvector(ld13, tile_vf64));
              const int64_t alu16 = (v_j - cb);
              tile_st_vf64(p___cacc1 + alu16, alu15);
            }
            for (; v_j < bnd13; v_j++) {
              const int64_t alu17 = (v_j - cb);
              const double ld14 = p___cacc1[alu17];
              const float ld15 = p_grad_y[(v_i * n1_grad_y + v_j)];
              const int64_t alu18 = (v_j - cb);
              p___cacc1[alu18] = (ld14 + ((double)ld15));
            }
          }
        }
      }
    }
    {
      const int64_t bnd14 = cb, bnd15 = ce;
      {
        if (bnd15 > bnd14) {
          if (!((-cb + bnd14) >= 0 && (-cb + (bnd15 - 1)) < n0___cacc1)) TILE_FAIL(15);
          if (!(bnd14 >= 0 && (bnd15 - 1) < n0_grad_b)) TILE_FAIL(16);
        }
        int64_t v_j = bnd14;
        for (; v_j + TILE_L <= bnd15; v_j += TILE_L) {
          const int64_t alu19 = (v_j - cb);
          const tile_vf64 ld16 = tile_ld_vf64(p___cacc1 + alu19);
          const tile_vf32 alu20 = __builtin_convertvector(ld16, tile_vf32);
          tile_st_vf32(p_grad_b + v_j, alu20);
        }
        for (; v_j < bnd15; v_j++) {
          const int64_t alu21 = (v_j - cb);
          const double ld17 = p___cacc1[alu21];
          p_grad_b[v_j] = ((float)ld17);
        }
      }
    }
  }
}
