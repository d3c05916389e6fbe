/* Tile: C kernels of program `sigmoid_pair` (1 kernel). */
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

static inline tile_vi64 tile_splat_vi64(int64_t x) { return (tile_vi64){0} + x; }

static inline tile_vi64 tile_iota_vi64(void) {
  tile_vi64 r;
  for (int l = 0; l < TILE_L; l++) r[l] = l;
  return r;
}

static inline tile_vf32 tile_sel_vf32(tile_vm4 m, tile_vf32 a, tile_vf32 b) { return (tile_vf32)((m & (tile_vm4)a) | (~m & (tile_vm4)b)); }

static inline tile_vf32 tile_ld_vf32(const float *p) { tile_vf32 v; __builtin_memcpy(&v, p, sizeof v); return v; }

static inline void tile_st_vf32(float *p, tile_vf32 v) { __builtin_memcpy(p, &v, sizeof v); }

static inline float tile_sigmoid_f32(float x) { return 1.0f / (1.0f + expf(-x)); }

/* 2^n * e^r for integral n in [-151, 129] and |r| <= ln(2)/2: a degree-6
   polynomial for e^r (Cephes' expf coefficients), and 2^n applied as two
   factors so that results in the subnormal range and overflow to infinity
   come out right. NaN in r gives NaN. */
static inline tile_vf32 tile_expcore_vf32(tile_vf32 n, tile_vf32 r) {
  tile_vf32 p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  tile_vm4 k = __builtin_convertvector(n, tile_vm4);
  tile_vm4 k1 = k >> 1;
  tile_vm4 k2 = k - k1;
  tile_vf32 s1 = (tile_vf32)((k1 + 127) << 23);
  tile_vf32 s2 = (tile_vf32)((k2 + 127) << 23);
  return p * s1 * s2;
}

/* e^x: x = n ln(2) + r with a two-part ln(2) (Cody-Waite), n rounded by
   the 1.5 * 2^23 trick. Clamping keeps n in range; beyond it the result is
   0 or infinity anyway. */
static inline tile_vf32 tile_exp_vf32(tile_vf32 x) {
  tile_vf32 xc = tile_sel_vf32((tile_vm4)(x > 88.8f), tile_splat_vf32(88.8f), x);
  xc = tile_sel_vf32((tile_vm4)(xc < -104.0f), tile_splat_vf32(-104.0f), xc);
  tile_vf32 n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  tile_vf32 r = xc - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  return tile_expcore_vf32(n, r);
}

/* 1 / (1 + e^-x): exactly 1 and 0 at saturation, NaN for NaN. */
static inline tile_vf32 tile_sigmoid_vf32(tile_vf32 x) {
  return 1.0f / (1.0f + tile_exp_vf32(-x));
}

/* k0: element_grid over i in 0..M, j in 0..N; stores value, grad; reads x */
void tile_k0(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err) {
  const int64_t s_M = S[0];
  const int64_t s_N = S[1];
  const float *restrict p_x = (const float *)A[0];
  const int64_t n0_x = s_M;
  const int64_t n1_x = s_N;
  float *restrict p_value = (float *)A[1];
  const int64_t n0_value = s_M;
  const int64_t n1_value = s_N;
  float *restrict p_grad = (float *)A[2];
  const int64_t n0_grad = s_M;
  const int64_t n1_grad = s_N;
  const int64_t dl0 = 0, dn0 = s_M;
  const int64_t dl1 = 0, dn1 = s_N;
  if (lo >= hi || dn0 <= 0 || dn1 <= 0) return;
  int64_t t = lo;
  int64_t c1 = lo % dn1;
  int64_t q = lo / dn1;
  int64_t c0 = q;
  while (t < hi) {
    const int64_t v_i = dl0 + c0;
    const int64_t seg = dn1 - c1 < hi - t ? dn1 - c1 : hi - t;
    const int64_t js = dl1 + c1, je = js + seg;
    {
      if (je > js) {
        if (!(v_i >= 0 && v_i < n0_x && js >= 0 && (je - 1) < n1_x)) TILE_FAIL(1);
        if (!(v_i >= 0 && v_i < n0_value && js >= 0 && (je - 1) < n1_value)) TILE_FAIL(2);
        if (!(v_i >= 0 && v_i < n0_grad && js >= 0 && (je - 1) < n1_grad)) TILE_FAIL(3);
      }
      int64_t v_j = js;
      for (; v_j + TILE_L <= je; v_j += TILE_L) {
        const tile_vf32 ld0 = tile_ld_vf32(p_x + (v_i * n1_x + v_j));
        const tile_vf32 val0 = tile_sigmoid_vf32(ld0); /* s */
        tile_st_vf32(p_value + (v_i * n1_value + v_j), val0);
        const tile_vf32 alu0 = (val0 * (1.0f - val0));
        tile_st_vf32(p_grad + (v_i * n1_grad + v_j), alu0);
      }
      for (; v_j < je; v_j++) {
        const float ld1 = p_x[(v_i * n1_x + v_j)];
        const float val1 = tile_sigmoid_f32(ld1); /* s */
        p_value[(v_i * n1_value + v_j)] = val1;
        p_grad[(v_i * n1_grad + v_j)] = (val1 * (1.0f - val1));
      }
    }
    t += seg;
    c1 = 0;
    ++c0;
  }
}
