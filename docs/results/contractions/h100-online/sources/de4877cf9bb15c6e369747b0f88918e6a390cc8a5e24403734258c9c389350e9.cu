/* Tile: CUDA kernels of program `attention` (1 kernel). */

struct TileArgs { long long lo, hi; long long S[16]; void *A[32]; int *err; };

/* A failed check reports its site (1-based) and abandons the work item. */
#define TILE_FAIL(id) do { atomicExch(err, (id)); return; } while (0)
#define TILE_I32_MIN (-2147483647LL - 1)
#define TILE_I32_MAX 2147483647LL

#define TILE_D static __device__ __forceinline__
TILE_D float tile_exp_f32(float x) { return expf(x); }
TILE_D float tile_exp2_f32(float x) { return exp2f(x); }
TILE_D float tile_log_f32(float x) { return logf(x); }
TILE_D float tile_log2_f32(float x) { return log2f(x); }
TILE_D float tile_log1p_f32(float x) { return log1pf(x); }
TILE_D float tile_expm1_f32(float x) { return expm1f(x); }
TILE_D float tile_sqrt_f32(float x) { return sqrtf(x); }
TILE_D float tile_rsqrt_f32(float x) { return 1.0f / sqrtf(x); }
TILE_D float tile_tanh_f32(float x) { return tanhf(x); }
TILE_D float tile_sigmoid_f32(float x) { return 1.0f / (1.0f + expf(-x)); }
TILE_D float tile_erf_f32(float x) { return erff(x); }
TILE_D float tile_sin_f32(float x) { return sinf(x); }
TILE_D float tile_cos_f32(float x) { return cosf(x); }
TILE_D float tile_floor_f32(float x) { return floorf(x); }
TILE_D float tile_ceil_f32(float x) { return ceilf(x); }
TILE_D float tile_abs_f32(float x) { return fabsf(x); }
TILE_D float tile_min_f32(float a, float b) { return fminf(a, b); }
TILE_D float tile_max_f32(float a, float b) { return fmaxf(a, b); }
TILE_D float tile_pow_f32(float a, float b) { return powf(a, b); }
TILE_D float tile_fma_f32(float a, float b, float c) { return fmaf(a, b, c); }
TILE_D double tile_exp_f64(double x) { return exp(x); }
TILE_D double tile_exp2_f64(double x) { return exp2(x); }
TILE_D double tile_log_f64(double x) { return log(x); }
TILE_D double tile_log2_f64(double x) { return log2(x); }
TILE_D double tile_log1p_f64(double x) { return log1p(x); }
TILE_D double tile_expm1_f64(double x) { return expm1(x); }
TILE_D double tile_sqrt_f64(double x) { return sqrt(x); }
TILE_D double tile_rsqrt_f64(double x) { return 1.0 / sqrt(x); }
TILE_D double tile_tanh_f64(double x) { return tanh(x); }
TILE_D double tile_sigmoid_f64(double x) { return 1.0 / (1.0 + exp(-x)); }
TILE_D double tile_erf_f64(double x) { return erf(x); }
TILE_D double tile_sin_f64(double x) { return sin(x); }
TILE_D double tile_cos_f64(double x) { return cos(x); }
TILE_D double tile_floor_f64(double x) { return floor(x); }
TILE_D double tile_ceil_f64(double x) { return ceil(x); }
TILE_D double tile_abs_f64(double x) { return fabs(x); }
TILE_D double tile_min_f64(double a, double b) { return fmin(a, b); }
TILE_D double tile_max_f64(double a, double b) { return fmax(a, b); }
TILE_D double tile_pow_f64(double a, double b) { return pow(a, b); }
TILE_D double tile_fma_f64(double a, double b, double c) { return fma(a, b, c); }
TILE_D long long tile_abs_i64(long long x) { return x < 0 ? -x : x; }
TILE_D long long tile_min_i64(long long a, long long b) { return a < b ? a : b; }
TILE_D long long tile_max_i64(long long a, long long b) { return a > b ? a : b; }
TILE_D int tile_sat_i32(long long x) { return x < TILE_I32_MIN ? (int)TILE_I32_MIN : x > TILE_I32_MAX ? (int)TILE_I32_MAX : (int)x; }
TILE_D long long tile_clampi_i64(long long x) { return tile_sat_i32(x); }
/* Truncates toward zero and saturates to i32; NaN is 0. */
TILE_D long long tile_f2i_f32(float x) {
  if (!(x == x)) return 0;
  if (x >= 2147483648.0f) return TILE_I32_MAX;
  if (x <= -2147483649.0f) return TILE_I32_MIN;
  return (long long)x;
}
TILE_D long long tile_f2i_f64(double x) {
  if (!(x == x)) return 0;
  if (x >= 2147483648.0) return TILE_I32_MAX;
  if (x <= -2147483649.0) return TILE_I32_MIN;
  return (long long)x;
}
/* 16-byte copies from device to shared memory: asynchronous (cp.async)
   where the architecture has it (sm_80 and later), plain otherwise;
   tile_cp_wait waits for this thread's copies. */
TILE_D void tile_cp16(void *dst, const void *src) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src) : "memory");
#else
  *reinterpret_cast<float4 *>(dst) = *reinterpret_cast<const float4 *>(src);
#endif
}
TILE_D void tile_cp_wait(void) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
/* Truncating division; division by zero or overflow reports its site. */
TILE_D long long tile_idiv_i64(long long a, long long b, int *err, int id) {
  if (b == 0 || (b == -1 && a == (-9223372036854775807LL - 1))) { atomicExch(err, id); return 0; }
  return a / b;
}
/* Remainder of the truncating division (the dividend's sign). */
TILE_D long long tile_irem_i64(long long a, long long b, int *err, int id) {
  if (b == 0 || (b == -1 && a == (-9223372036854775807LL - 1))) { atomicExch(err, id); return 0; }
  return a % b;
}

/* Block-wide reductions: every thread passes its partial result and gets
   the block's result. Warp shuffles, one value per warp in shared memory,
   one barrier, then every thread combines the warps' values in warp order
   (so all get the same bits). Consecutive reductions alternate between
   two slot sets: a set is written again only after the next reduction's
   barrier, which every thread reaches after reading it. */
#define TILE_BLOCK_REDUCE(NAME, T, OP)                                      \
TILE_D T NAME(T v, double *smem) {                                          \
  T *s = (T *)smem;                                                         \
  for (int o = 16; o > 0; o >>= 1) v = OP(v, __shfl_xor_sync(0xffffffffu, v, o)); \
  const int nw = (blockDim.x + 31) >> 5;                                    \
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;                     \
  __syncthreads();                                                          \
  T u = s[0];                                                               \
  for (int w = 1; w < nw; w++) u = OP(u, s[w]);                             \
  return u;                                                                 \
}
#define TILE_ADD(a, b) ((a) + (b))
TILE_BLOCK_REDUCE(tile_block_sum_f32, float, TILE_ADD)
TILE_BLOCK_REDUCE(tile_block_max_f32, float, fmaxf)
TILE_BLOCK_REDUCE(tile_block_min_f32, float, fminf)
TILE_BLOCK_REDUCE(tile_block_sum_f64, double, TILE_ADD)
TILE_BLOCK_REDUCE(tile_block_max_f64, double, fmax)
TILE_BLOCK_REDUCE(tile_block_min_f64, double, fmin)
TILE_BLOCK_REDUCE(tile_block_sum_i64, long long, TILE_ADD)
TILE_BLOCK_REDUCE(tile_block_max_i64, long long, tile_max_i64)
TILE_BLOCK_REDUCE(tile_block_min_i64, long long, tile_min_i64)

/* Column reductions (print_columns.rs): the block is blockDim.x columns by
   blockDim.y slices; each thread passes its slice's result and gets its
   column's, the slices combined in slice order by the column's first
   thread (so every thread gets the same bits, whatever the timing). A set
   holds one slot per thread; consecutive reductions alternate between two
   sets, as above. */
#define TILE_COL_REDUCE(NAME, T, OP)                                        \
TILE_D T NAME(T v, double *smem) {                                          \
  T *s = (T *)smem;                                                         \
  const int x = threadIdx.x, w = blockDim.x;                                \
  s[threadIdx.y * w + x] = v;                                               \
  __syncthreads();                                                          \
  if (threadIdx.y == 0) {                                                   \
    T u = s[x];                                                             \
    for (int y = 1; y < (int)blockDim.y; y++) u = OP(u, s[y * w + x]);      \
    s[x] = u;                                                               \
  }                                                                         \
  __syncthreads();                                                          \
  return s[x];                                                              \
}
TILE_COL_REDUCE(tile_col_sum_f32, float, TILE_ADD)
TILE_COL_REDUCE(tile_col_max_f32, float, fmaxf)
TILE_COL_REDUCE(tile_col_min_f32, float, fminf)
TILE_COL_REDUCE(tile_col_sum_f64, double, TILE_ADD)
TILE_COL_REDUCE(tile_col_max_f64, double, fmax)
TILE_COL_REDUCE(tile_col_min_f64, double, fmin)
TILE_COL_REDUCE(tile_col_sum_i64, long long, TILE_ADD)
TILE_COL_REDUCE(tile_col_max_i64, long long, tile_max_i64)
TILE_COL_REDUCE(tile_col_min_i64, long long, tile_min_i64)

/* k0: row_reduction over i in 0..M; stores o; reads q, k, v */
extern "C" __global__ void tile_k0(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_D = a.S[1];
  const long long s_N = a.S[2];
  const float *__restrict__ p_q = (const float *)a.A[0];
  const long long n0_q = s_M;
  const long long n1_q = s_D;
  const float *__restrict__ p_k = (const float *)a.A[1];
  const long long n0_k = s_N;
  const long long n1_k = s_D;
  const float *__restrict__ p_v = (const float *)a.A[2];
  const long long n0_v = s_N;
  const long long n1_v = s_D;
  float *__restrict__ p_o = (float *)a.A[3];
  const long long n0_o = s_M;
  const long long n1_o = s_D;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[64];
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    const float val0 = tile_rsqrt_f32(((float)s_D)); /* scale */
    const long long bnd0 = 0, bnd1 = s_N;
    float red0 = __int_as_float(0x7fc00000);
    {
      const long long len0 = (long long)(bnd1 - bnd0);
      long long quad0 = (long long)threadIdx.x * 4;
      for (; quad0 + 3 < len0; quad0 += (long long)blockDim.x * 4) {
        const long long qb0 = bnd0 + quad0;
        float red1;
        {
          const long long bnd2 = 0, bnd3 = s_D;
          if (bnd3 > bnd2) {
            if (!(v_i >= 0 && v_i < n0_q && bnd2 >= 0 && (bnd3 - 1) < n1_q)) TILE_FAIL(1);
            if (!((qb0 + 0) >= 0 && (qb0 + 0) < n0_k && bnd2 >= 0 && (bnd3 - 1) < n1_k)) TILE_FAIL(2);
          }
          double acc0 = 0.0;
          for (long long v_d = bnd2; v_d < bnd3; v_d++) {
            const float ld0 = p_q[(v_i * n1_q + v_d)];
            const long long alu0 = (qb0 + 0);
            const float ld1 = p_k[(alu0 * n1_k + v_d)];
            acc0 = acc0 + ((double)(ld0 * ld1));
          }
          red1 = ((float)acc0);
        }
        red0 = tile_max_f32(red0, (red1 * val0));
        float red2;
        {
          const long long bnd4 = 0, bnd5 = s_D;
          if (bnd5 > bnd4) {
            if (!(v_i >= 0 && v_i < n0_q && bnd4 >= 0 && (bnd5 - 1) < n1_q)) TILE_FAIL(1);
            if (!((qb0 + 1) >= 0 && (qb0 + 1) < n0_k && bnd4 >= 0 && (bnd5 - 1) < n1_k)) TILE_FAIL(2);
          }
          double acc1 = 0.0;
          for (long long v_d = bnd4; v_d < bnd5; v_d++) {
            const float ld2 = p_q[(v_i * n1_q + v_d)];
            const long long alu1 = (qb0 + 1);
            const float ld3 = p_k[(alu1 * n1_k + v_d)];
            acc1 = acc1 + ((double)(ld2 * ld3));
          }
          red2 = ((float)acc1);
        }
        red0 = tile_max_f32(red0, (red2 * val0));
        float red3;
        {
          const long long bnd6 = 0, bnd7 = s_D;
          if (bnd7 > bnd6) {
            if (!(v_i >= 0 && v_i < n0_q && bnd6 >= 0 && (bnd7 - 1) < n1_q)) TILE_FAIL(1);
            if (!((qb0 + 2) >= 0 && (qb0 + 2) < n0_k && bnd6 >= 0 && (bnd7 - 1) < n1_k)) TILE_FAIL(2);
          }
          double acc2 = 0.0;
          for (long long v_d = bnd6; v_d < bnd7; v_d++) {
            const float ld4 = p_q[(v_i * n1_q + v_d)];
            const long long alu2 = (qb0 + 2);
            const float ld5 = p_k[(alu2 * n1_k + v_d)];
            acc2 = acc2 + ((double)(ld4 * ld5));
          }
          red3 = ((float)acc2);
        }
        red0 = tile_max_f32(red0, (red3 * val0));
        float red4;
        {
          const long long bnd8 = 0, bnd9 = s_D;
          if (bnd9 > bnd8) {
            if (!(v_i >= 0 && v_i < n0_q && bnd8 >= 0 && (bnd9 - 1) < n1_q)) TILE_FAIL(1);
            if (!((qb0 + 3) >= 0 && (qb0 + 3) < n0_k && bnd8 >= 0 && (bnd9 - 1) < n1_k)) TILE_FAIL(2);
          }
          double acc3 = 0.0;
          for (long long v_d = bnd8; v_d < bnd9; v_d++) {
            const float ld6 = p_q[(v_i * n1_q + v_d)];
            const long long alu3 = (qb0 + 3);
            const float ld7 = p_k[(alu3 * n1_k + v_d)];
            acc3 = acc3 + ((double)(ld6 * ld7));
          }
          red4 = ((float)acc3);
        }
        red0 = tile_max_f32(red0, (red4 * val0));
      }
      for (long long q0 = quad0; q0 < len0; q0++) {
        const long long v_j = bnd0 + q0;
        float red5;
        {
          const long long bnd10 = 0, bnd11 = s_D;
          if (bnd11 > bnd10) {
            if (!(v_i >= 0 && v_i < n0_q && bnd10 >= 0 && (bnd11 - 1) < n1_q)) TILE_FAIL(1);
            if (!(v_j >= 0 && v_j < n0_k && bnd10 >= 0 && (bnd11 - 1) < n1_k)) TILE_FAIL(2);
          }
          double acc4 = 0.0;
          for (long long v_d = bnd10; v_d < bnd11; v_d++) {
            const float ld8 = p_q[(v_i * n1_q + v_d)];
            const float ld9 = p_k[(v_j * n1_k + v_d)];
            acc4 = acc4 + ((double)(ld8 * ld9));
          }
          red5 = ((float)acc4);
        }
        red0 = tile_max_f32(red0, (red5 * val0));
      }
    }
    red0 = tile_block_max_f32(red0, tile_smem + 0);
    if (!(bnd1 > bnd0)) red0 = __int_as_float(0xff800000);
    const float val1 = red0; /* m */
    const long long bnd12 = 0, bnd13 = s_N;
    float red6 = 0.0f;
    {
      const long long len1 = (long long)(bnd13 - bnd12);
      long long quad1 = (long long)threadIdx.x * 4;
      for (; quad1 + 3 < len1; quad1 += (long long)blockDim.x * 4) {
        const long long qb1 = bnd12 + quad1;
        float red7;
        {
          const long long bnd14 = 0, bnd15 = s_D;
          if (bnd15 > bnd14) {
            if (!(v_i >= 0 && v_i < n0_q && bnd14 >= 0 && (bnd15 - 1) < n1_q)) TILE_FAIL(3);
            if (!((qb1 + 0) >= 0 && (qb1 + 0) < n0_k && bnd14 >= 0 && (bnd15 - 1) < n1_k)) TILE_FAIL(4);
          }
          double acc5 = 0.0;
          for (long long v_d = bnd14; v_d < bnd15; v_d++) {
            const float ld10 = p_q[(v_i * n1_q + v_d)];
            const long long alu4 = (qb1 + 0);
            const float ld11 = p_k[(alu4 * n1_k + v_d)];
            acc5 = acc5 + ((double)(ld10 * ld11));
          }
          red7 = ((float)acc5);
        }
        red6 = red6 + tile_exp_f32(((red7 * val0) - val1));
        float red8;
        {
          const long long bnd16 = 0, bnd17 = s_D;
          if (bnd17 > bnd16) {
            if (!(v_i >= 0 && v_i < n0_q && bnd16 >= 0 && (bnd17 - 1) < n1_q)) TILE_FAIL(3);
            if (!((qb1 + 1) >= 0 && (qb1 + 1) < n0_k && bnd16 >= 0 && (bnd17 - 1) < n1_k)) TILE_FAIL(4);
          }
          double acc6 = 0.0;
          for (long long v_d = bnd16; v_d < bnd17; v_d++) {
            const float ld12 = p_q[(v_i * n1_q + v_d)];
            const long long alu5 = (qb1 + 1);
            const float ld13 = p_k[(alu5 * n1_k + v_d)];
            acc6 = acc6 + ((double)(ld12 * ld13));
          }
          red8 = ((float)acc6);
        }
        red6 = red6 + tile_exp_f32(((red8 * val0) - val1));
        float red9;
        {
          const long long bnd18 = 0, bnd19 = s_D;
          if (bnd19 > bnd18) {
            if (!(v_i >= 0 && v_i < n0_q && bnd18 >= 0 && (bnd19 - 1) < n1_q)) TILE_FAIL(3);
            if (!((qb1 + 2) >= 0 && (qb1 + 2) < n0_k && bnd18 >= 0 && (bnd19 - 1) < n1_k)) TILE_FAIL(4);
          }
          double acc7 = 0.0;
          for (long long v_d = bnd18; v_d < bnd19; v_d++) {
            const float ld14 = p_q[(v_i * n1_q + v_d)];
            const long long alu6 = (qb1 + 2);
            const float ld15 = p_k[(alu6 * n1_k + v_d)];
            acc7 = acc7 + ((double)(ld14 * ld15));
          }
          red9 = ((float)acc7);
        }
        red6 = red6 + tile_exp_f32(((red9 * val0) - val1));
        float red10;
        {
          const long long bnd20 = 0, bnd21 = s_D;
          if (bnd21 > bnd20) {
            if (!(v_i >= 0 && v_i < n0_q && bnd20 >= 0 && (bnd21 - 1) < n1_q)) TILE_FAIL(3);
            if (!((qb1 + 3) >= 0 && (qb1 + 3) < n0_k && bnd20 >= 0 && (bnd21 - 1) < n1_k)) TILE_FAIL(4);
          }
          double acc8 = 0.0;
          for (long long v_d = bnd20; v_d < bnd21; v_d++) {
            const float ld16 = p_q[(v_i * n1_q + v_d)];
            const long long alu7 = (qb1 + 3);
            const float ld17 = p_k[(alu7 * n1_k + v_d)];
            acc8 = acc8 + ((double)(ld16 * ld17));
          }
          red10 = ((float)acc8);
        }
        red6 = red6 + tile_exp_f32(((red10 * val0) - val1));
      }
      for (long long q1 = quad1; q1 < len1; q1++) {
        const long long v_j = bnd12 + q1;
        float red11;
        {
          const long long bnd22 = 0, bnd23 = s_D;
          if (bnd23 > bnd22) {
            if (!(v_i >= 0 && v_i < n0_q && bnd22 >= 0 && (bnd23 - 1) < n1_q)) TILE_FAIL(3);
            if (!(v_j >= 0 && v_j < n0_k && bnd22 >= 0 && (bnd23 - 1) < n1_k)) TILE_FAIL(4);
          }
          double acc9 = 0.0;
          for (long long v_d = bnd22; v_d < bnd23; v_d++) {
            const float ld18 = p_q[(v_i * n1_q + v_d)];
            const float ld19 = p_k[(v_j * n1_k + v_d)];
            acc9 = acc9 + ((double)(ld18 * ld19));
          }
          red11 = ((float)acc9);
        }
        red6 = red6 + tile_exp_f32(((red11 * val0) - val1));
      }
    }
    red6 = tile_block_sum_f32(red6, tile_smem + 32);
    const float val2 = red6; /* z */
    const long long bnd24 = 0, bnd25 = s_D;
    if (bnd25 > bnd24) {
      if (!(v_i >= 0 && v_i < n0_o && bnd24 >= 0 && (bnd25 - 1) < n1_o)) TILE_FAIL(5);
    }
    {
      const long long len2 = (long long)(bnd25 - bnd24);
      long long quad2 = (long long)threadIdx.x * 4;
      for (; quad2 + 3 < len2; quad2 += (long long)blockDim.x * 4) {
        const long long qb2 = bnd24 + quad2;
        float red12;
        {
          const long long bnd26 = 0, bnd27 = s_N;
          if (bnd27 > bnd26) {
            if (!(bnd26 >= 0 && (bnd27 - 1) < n0_v && (qb2 + 0) >= 0 && (qb2 + 0) < n1_v)) TILE_FAIL(6);
          }
          double acc10 = 0.0;
          for (long long v_j = bnd26; v_j < bnd27; v_j++) {
            float red13;
            {
              const long long bnd28 = 0, bnd29 = s_D;
              if (bnd29 > bnd28) {
                if (!(v_i >= 0 && v_i < n0_q && bnd28 >= 0 && (bnd29 - 1) < n1_q)) TILE_FAIL(7);
                if (!(v_j >= 0 && v_j < n0_k && bnd28 >= 0 && (bnd29 - 1) < n1_k)) TILE_FAIL(8);
              }
              double acc11 = 0.0;
              for (long long v_d = bnd28; v_d < bnd29; v_d++) {
                const float ld20 = p_q[(v_i * n1_q + v_d)];
                const float ld21 = p_k[(v_j * n1_k + v_d)];
                acc11 = acc11 + ((double)(ld20 * ld21));
              }
              red13 = ((float)acc11);
            }
            const long long alu8 = (qb2 + 0);
            const float ld22 = p_v[(v_j * n1_v + alu8)];
            acc10 = acc10 + ((double)(tile_exp_f32(((red13 * val0) - val1)) * ld22));
          }
          red12 = ((float)acc10);
        }
        const long long alu9 = (qb2 + 0);
        p_o[(v_i * n1_o + alu9)] = (red12 / val2);
        float red14;
        {
          const long long bnd30 = 0, bnd31 = s_N;
          if (bnd31 > bnd30) {
            if (!(bnd30 >= 0 && (bnd31 - 1) < n0_v && (qb2 + 1) >= 0 && (qb2 + 1) < n1_v)) TILE_FAIL(6);
          }
          double acc12 = 0.0;
          for (long long v_j = bnd30; v_j < bnd31; v_j++) {
            float red15;
            {
              const long long bnd32 = 0, bnd33 = s_D;
              if (bnd33 > bnd32) {
                if (!(v_i >= 0 && v_i < n0_q && bnd32 >= 0 && (bnd33 - 1) < n1_q)) TILE_FAIL(7);
                if (!(v_j >= 0 && v_j < n0_k && bnd32 >= 0 && (bnd33 - 1) < n1_k)) TILE_FAIL(8);
              }
              double acc13 = 0.0;
              for (long long v_d = bnd32; v_d < bnd33; v_d++) {
                const float ld23 = p_q[(v_i * n1_q + v_d)];
                const float ld24 = p_k[(v_j * n1_k + v_d)];
                acc13 = acc13 + ((double)(ld23 * ld24));
              }
              red15 = ((float)acc13);
            }
            const long long alu10 = (qb2 + 1);
            const float ld25 = p_v[(v_j * n1_v + alu10)];
            acc12 = acc12 + ((double)(tile_exp_f32(((red15 * val0) - val1)) * ld25));
          }
          red14 = ((float)acc12);
        }
        const long long alu11 = (qb2 + 1);
        p_o[(v_i * n1_o + alu11)] = (red14 / val2);
        float red16;
        {
          const long long bnd34 = 0, bnd35 = s_N;
          if (bnd35 > bnd34) {
            if (!(bnd34 >= 0 && (bnd35 - 1) < n0_v && (qb2 + 2) >= 0 && (qb2 + 2) < n1_v)) TILE_FAIL(6);
          }
          double acc14 = 0.0;
          for (long long v_j = bnd34; v_j < bnd35; v_j++) {
            float red17;
            {
              const long long bnd36 = 0, bnd37 = s_D;
              if (bnd37 > bnd36) {
                if (!(v_i >= 0 && v_i < n0_q && bnd36 >= 0 && (bnd37 - 1) < n1_q)) TILE_FAIL(7);
                if (!(v_j >= 0 && v_j < n0_k && bnd36 >= 0 && (bnd37 - 1) < n1_k)) TILE_FAIL(8);
              }
              double acc15 = 0.0;
              for (long long v_d = bnd36; v_d < bnd37; v_d++) {
                const float ld26 = p_q[(v_i * n1_q + v_d)];
                const float ld27 = p_k[(v_j * n1_k + v_d)];
                acc15 = acc15 + ((double)(ld26 * ld27));
              }
              red17 = ((float)acc15);
            }
            const long long alu12 = (qb2 + 2);
            const float ld28 = p_v[(v_j * n1_v + alu12)];
            acc14 = acc14 + ((double)(tile_exp_f32(((red17 * val0) - val1)) * ld28));
          }
          red16 = ((float)acc14);
        }
        const long long alu13 = (qb2 + 2);
        p_o[(v_i * n1_o + alu13)] = (red16 / val2);
        float red18;
        {
          const long long bnd38 = 0, bnd39 = s_N;
          if (bnd39 > bnd38) {
            if (!(bnd38 >= 0 && (bnd39 - 1) < n0_v && (qb2 + 3) >= 0 && (qb2 + 3) < n1_v)) TILE_FAIL(6);
          }
          double acc16 = 0.0;
          for (long long v_j = bnd38; v_j < bnd39; v_j++) {
            float red19;
            {
              const long long bnd40 = 0, bnd41 = s_D;
              if (bnd41 > bnd40) {
                if (!(v_i >= 0 && v_i < n0_q && bnd40 >= 0 && (bnd41 - 1) < n1_q)) TILE_FAIL(7);
                if (!(v_j >= 0 && v_j < n0_k && bnd40 >= 0 && (bnd41 - 1) < n1_k)) TILE_FAIL(8);
              }
              double acc17 = 0.0;
              for (long long v_d = bnd40; v_d < bnd41; v_d++) {
                const float ld29 = p_q[(v_i * n1_q + v_d)];
                const float ld30 = p_k[(v_j * n1_k + v_d)];
                acc17 = acc17 + ((double)(ld29 * ld30));
              }
              red19 = ((float)acc17);
            }
            const long long alu14 = (qb2 + 3);
            const float ld31 = p_v[(v_j * n1_v + alu14)];
            acc16 = acc16 + ((double)(tile_exp_f32(((red19 * val0) - val1)) * ld31));
          }
          red18 = ((float)acc16);
        }
        const long long alu15 = (qb2 + 3);
        p_o[(v_i * n1_o + alu15)] = (red18 / val2);
      }
      for (long long q2 = quad2; q2 < len2; q2++) {
        const long long v_c = bnd24 + q2;
        float red20;
        {
          const long long bnd42 = 0, bnd43 = s_N;
          if (bnd43 > bnd42) {
            if (!(bnd42 >= 0 && (bnd43 - 1) < n0_v && v_c >= 0 && v_c < n1_v)) TILE_FAIL(6);
          }
          double acc18 = 0.0;
          for (long long v_j = bnd42; v_j < bnd43; v_j++) {
            float red21;
            {
              const long long bnd44 = 0, bnd45 = s_D;
              if (bnd45 > bnd44) {
                if (!(v_i >= 0 && v_i < n0_q && bnd44 >= 0 && (bnd45 - 1) < n1_q)) TILE_FAIL(7);
                if (!(v_j >= 0 && v_j < n0_k && bnd44 >= 0 && (bnd45 - 1) < n1_k)) TILE_FAIL(8);
              }
              double acc19 = 0.0;
              for (long long v_d = bnd44; v_d < bnd45; v_d++) {
                const float ld32 = p_q[(v_i * n1_q + v_d)];
                const float ld33 = p_k[(v_j * n1_k + v_d)];
                acc19 = acc19 + ((double)(ld32 * ld33));
              }
              red21 = ((float)acc19);
            }
            const float ld34 = p_v[(v_j * n1_v + v_c)];
            acc18 = acc18 + ((double)(tile_exp_f32(((red21 * val0) - val1)) * ld34));
          }
          red20 = ((float)acc18);
        }
        p_o[(v_i * n1_o + v_c)] = (red20 / val2);
      }
    }
    __syncthreads();
  }
}

/* k0 (attention: a block of query rows per block, scores in registers): row_reduction over i in 0..M; stores o; reads q, k, v */
extern "C" __global__ void __launch_bounds__(256, 2) tile_k0_att64(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_D = a.S[1];
  const long long s_N = a.S[2];
  const float *__restrict__ p_q = (const float *)a.A[0];
  const long long n0_q = s_M;
  const long long n1_q = s_D;
  const float *__restrict__ p_k = (const float *)a.A[1];
  const long long n0_k = s_N;
  const long long n1_k = s_D;
  const float *__restrict__ p_v = (const float *)a.A[2];
  const long long n0_v = s_N;
  const long long n1_v = s_D;
  float *__restrict__ p_o = (float *)a.A[3];
  const long long n0_o = s_M;
  const long long n1_o = s_D;
  const long long att_m = s_M, att_n = s_N, att_d = s_D, att_e = s_D;
  const long long att_r0 = (long long)blockIdx.x * 64;
  if (att_r0 >= att_m) return;
  __shared__ __align__(16) float att_qs[32][68], att_ks[32][68], att_pt[64][68], att_vs[16][132];
  const int att_t = threadIdx.x, att_tx = att_t % 16, att_ty = att_t / 16;
  for (long long att_c0 = 0; att_c0 < att_e; att_c0 += 128) {
    float att_mx[4], att_z[4], att_acc[4][8];
    #pragma unroll
    for (int att_a = 0; att_a < 4; att_a++) {
      att_mx[att_a] = __int_as_float(0x7fc00000);
      att_z[att_a] = 0.0f;
      for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = 0.0f;
    }
    for (long long att_j0 = 0; att_j0 < att_n; att_j0 += 64) {
      float att_s[4][4];
      #pragma unroll
      for (int att_a = 0; att_a < 4; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = 0.0f;
      for (long long att_d0 = 0; att_d0 < att_d; att_d0 += 32) {
        __syncthreads();
        for (int att_x = att_t; att_x < 2048; att_x += 256) {
          const int att_qr = att_x / 32, att_qd = att_x % 32;
          att_qs[att_qd][att_qr] = (att_r0 + att_qr < att_m && att_d0 + att_qd < att_d) ? p_q[(att_r0 + att_qr) * n1_q + (att_d0 + att_qd)] : 0.0f;
        }
        for (int att_x = att_t; att_x < 2048; att_x += 256) {
          const int att_kj = att_x / 32, att_kd = att_x % 32;
          att_ks[att_kd][att_kj] = (att_j0 + att_kj < att_n && att_d0 + att_kd < att_d) ? p_k[(att_j0 + att_kj) * n1_k + (att_d0 + att_kd)] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int att_kk = 0; att_kk < 32; att_kk++) {
          float att_fa[4], att_fb[4];
          #pragma unroll
          for (int att_a = 0; att_a < 4; att_a++) att_fa[att_a] = att_qs[att_kk][att_ty * 4 + att_a];
          { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&att_ks[att_kk][att_tx * 4]); att_fb[0] = tile_v4.x; att_fb[0 + 1] = tile_v4.y; att_fb[0 + 2] = tile_v4.z; att_fb[0 + 3] = tile_v4.w; }
          #pragma unroll
          for (int att_a = 0; att_a < 4; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = fmaf(att_fa[att_a], att_fb[att_u], att_s[att_a][att_u]);
        }
      }
      #pragma unroll
      for (int att_a = 0; att_a < 4; att_a++) {
        const long long att_i = att_r0 + att_ty * 4 + att_a;
        float att_bm = __int_as_float(0x7fc00000);
        if (att_i < att_m) {
          const long long att_iv = att_i + 0;
          const float att_let0 = tile_rsqrt_f32(((float)s_D)); /* scale */
          #pragma unroll
          for (int att_u = 0; att_u < 4; att_u++) {
            const long long att_j = att_j0 + att_tx * 4 + att_u;
            if (att_j >= att_n) continue;
            att_bm = fmaxf(att_bm, (att_s[att_a][att_u] * att_let0));
          }
        }
        for (int att_o = 8; att_o >= 1; att_o >>= 1) att_bm = fmaxf(att_bm, __shfl_xor_sync(0xffffffffu, att_bm, att_o));
        const float att_mn = fmaxf(att_mx[att_a], att_bm);
        const float att_sc = (att_mx[att_a] != att_mx[att_a] || att_mx[att_a] == (-__int_as_float(0x7f800000))) ? 0.0f : expf(att_mx[att_a] - att_mn);
        att_mx[att_a] = att_mn;
        att_z[att_a] *= att_sc;
        #pragma unroll
        for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] *= att_sc;
        float att_p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (att_i < att_m && att_mn != (-__int_as_float(0x7f800000))) {
          const long long att_iv = att_i + 0;
          const float att_let0 = tile_rsqrt_f32(((float)s_D)); /* scale */
          #pragma unroll
          for (int att_u = 0; att_u < 4; att_u++) {
            const long long att_j = att_j0 + att_tx * 4 + att_u;
            if (att_j >= att_n) continue;
            att_p[att_u] = tile_exp_f32(((att_s[att_a][att_u] * att_let0) - att_mx[att_a]));
          }
        }
        #pragma unroll
        for (int att_u = 0; att_u < 4; att_u++) {
          att_pt[att_tx * 4 + att_u][att_ty * 4 + att_a] = att_p[att_u];
          att_z[att_a] += att_p[att_u];
        }
      }
      const int att_kn = (int)(att_n - att_j0 < 64 ? att_n - att_j0 : 64);
      for (int att_jj0 = 0; att_jj0 < att_kn; att_jj0 += 16) {
        __syncthreads();
        for (int att_x = att_t; att_x < 2048; att_x += 256) {
          const int att_vk = att_x / 128, att_vc = att_x % 128;
          att_vs[att_vk][att_vc] = (att_jj0 + att_vk < att_kn && att_c0 + att_vc < att_e) ? p_v[(att_j0 + att_jj0 + att_vk) * n1_v + (att_c0 + att_vc)] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int att_kk = 0; att_kk < 16; att_kk++) {
          float att_fa[4], att_fb[8];
          #pragma unroll
          for (int att_a = 0; att_a < 4; att_a++) att_fa[att_a] = att_pt[att_jj0 + att_kk][att_ty * 4 + att_a];
          { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&att_vs[att_kk][att_tx * 4]); att_fb[0] = tile_v4.x; att_fb[0 + 1] = tile_v4.y; att_fb[0 + 2] = tile_v4.z; att_fb[0 + 3] = tile_v4.w; }
          { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&att_vs[att_kk][64 + att_tx * 4]); att_fb[4] = tile_v4.x; att_fb[4 + 1] = tile_v4.y; att_fb[4 + 2] = tile_v4.z; att_fb[4 + 3] = tile_v4.w; }
          #pragma unroll
          for (int att_a = 0; att_a < 4; att_a++) for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = fmaf(att_fa[att_a], att_fb[att_w], att_acc[att_a][att_w]);
        }
      }
      __syncthreads();
    }
    #pragma unroll
    for (int att_a = 0; att_a < 4; att_a++) for (int att_o = 1; att_o <= 8; att_o <<= 1) att_z[att_a] += __shfl_xor_sync(0xffffffffu, att_z[att_a], att_o);
    #pragma unroll
    for (int att_a = 0; att_a < 4; att_a++) {
      if (att_n > 0 && att_mx[att_a] == (-__int_as_float(0x7f800000))) {
        att_z[att_a] = __int_as_float(0x7fc00000);
        for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = __int_as_float(0x7fc00000);
      }
    }
    #pragma unroll
    for (int att_a = 0; att_a < 4; att_a++) {
      const long long att_i = att_r0 + att_ty * 4 + att_a;
      if (att_i >= att_m) continue;
      const long long att_iv = att_i + 0;
      const float att_let0 = tile_rsqrt_f32(((float)s_D)); /* scale */
      #pragma unroll
      for (int att_w = 0; att_w < 8; att_w++) {
        const long long att_c = att_c0 + (att_w / 4) * 64 + att_tx * 4 + att_w % 4;
        if (att_c >= att_e) continue;
        const long long att_cv = att_c + 0;
        if (!(att_iv >= 0 && att_iv < n0_o && att_cv >= 0 && att_cv < n1_o)) TILE_FAIL(300001);
        p_o[(att_iv * n1_o + att_cv)] = (att_acc[att_a][att_w] / att_z[att_a]);
      }
    }
  }
}

/* k0 (attention: a block of query rows per block, scores in registers): row_reduction over i in 0..M; stores o; reads q, k, v */
extern "C" __global__ void __launch_bounds__(256, 2) tile_k0_att32(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_D = a.S[1];
  const long long s_N = a.S[2];
  const float *__restrict__ p_q = (const float *)a.A[0];
  const long long n0_q = s_M;
  const long long n1_q = s_D;
  const float *__restrict__ p_k = (const float *)a.A[1];
  const long long n0_k = s_N;
  const long long n1_k = s_D;
  const float *__restrict__ p_v = (const float *)a.A[2];
  const long long n0_v = s_N;
  const long long n1_v = s_D;
  float *__restrict__ p_o = (float *)a.A[3];
  const long long n0_o = s_M;
  const long long n1_o = s_D;
  const long long att_m = s_M, att_n = s_N, att_d = s_D, att_e = s_D;
  const long long att_r0 = (long long)blockIdx.x * 32;
  if (att_r0 >= att_m) return;
  __shared__ __align__(16) float att_qs[32][36], att_ks[32][68], att_pt[64][36], att_vs[16][132];
  const int att_t = threadIdx.x, att_tx = att_t % 16, att_ty = att_t / 16;
  for (long long att_c0 = 0; att_c0 < att_e; att_c0 += 128) {
    float att_mx[2], att_z[2], att_acc[2][8];
    #pragma unroll
    for (int att_a = 0; att_a < 2; att_a++) {
      att_mx[att_a] = __int_as_float(0x7fc00000);
      att_z[att_a] = 0.0f;
      for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = 0.0f;
    }
    for (long long att_j0 = 0; att_j0 < att_n; att_j0 += 64) {
      float att_s[2][4];
      #pragma unroll
      for (int att_a = 0; att_a < 2; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = 0.0f;
      for (long long att_d0 = 0; att_d0 < att_d; att_d0 += 32) {
        __syncthreads();
        for (int att_x = att_t; att_x < 1024; att_x += 256) {
          const int att_qr = att_x / 32, att_qd = att_x % 32;
          att_qs[att_qd][att_qr] = (att_r0 + att_qr < att_m && att_d0 + att_qd < att_d) ? p_q[(att_r0 + att_qr) * n1_q + (att_d0 + att_qd)] : 0.0f;
        }
        for (int att_x = att_t; att_x < 2048; att_x += 256) {
          const int att_kj = att_x / 32, att_kd = att_x % 32;
          att_ks[att_kd][att_kj] = (att_j0 + att_kj < att_n && att_d0 + att_kd < att_d) ? p_k[(att_j0 + att_kj) * n1_k + (att_d0 + att_kd)] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int att_kk = 0; att_kk < 32; att_kk++) {
          float att_fa[2], att_fb[4];
          #pragma unroll
          for (int att_a = 0; att_a < 2; att_a++) att_fa[att_a] = att_qs[att_kk][att_ty * 2 + att_a];
          { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&att_ks[att_kk][att_tx * 4]); att_fb[0] = tile_v4.x; att_fb[0 + 1] = tile_v4.y; att_fb[0 + 2] = tile_v4.z; att_fb[0 + 3] = tile_v4.w; }
          #pragma unroll
          for (int att_a = 0; att_a < 2; att_a++) for (int att_u = 0; att_u < 4; att_u++) att_s[att_a][att_u] = fmaf(att_fa[att_a], att_fb[att_u], att_s[att_a][att_u]);
        }
      }
      #pragma unroll
      for (int att_a = 0; att_a < 2; att_a++) {
        const long long att_i = att_r0 + att_ty * 2 + att_a;
        float att_bm = __int_as_float(0x7fc00000);
        if (att_i < att_m) {
          const long long att_iv = att_i + 0;
          const float att_let0 = tile_rsqrt_f32(((float)s_D)); /* scale */
          #pragma unroll
          for (int att_u = 0; att_u < 4; att_u++) {
            const long long att_j = att_j0 + att_tx * 4 + att_u;
            if (att_j >= att_n) continue;
            att_bm = fmaxf(att_bm, (att_s[att_a][att_u] * att_let0));
          }
        }
        for (int att_o = 8; att_o >= 1; att_o >>= 1) att_bm = fmaxf(att_bm, __shfl_xor_sync(0xffffffffu, att_bm, att_o));
        const float att_mn = fmaxf(att_mx[att_a], att_bm);
        const float att_sc = (att_mx[att_a] != att_mx[att_a] || att_mx[att_a] == (-__int_as_float(0x7f800000))) ? 0.0f : expf(att_mx[att_a] - att_mn);
        att_mx[att_a] = att_mn;
        att_z[att_a] *= att_sc;
        #pragma unroll
        for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] *= att_sc;
        float att_p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (att_i < att_m && att_mn != (-__int_as_float(0x7f800000))) {
          const long long att_iv = att_i + 0;
          const float att_let0 = tile_rsqrt_f32(((float)s_D)); /* scale */
          #pragma unroll
          for (int att_u = 0; att_u < 4; att_u++) {
            const long long att_j = att_j0 + att_tx * 4 + att_u;
            if (att_j >= att_n) continue;
            att_p[att_u] = tile_exp_f32(((att_s[att_a][att_u] * att_let0) - att_mx[att_a]));
          }
        }
        #pragma unroll
        for (int att_u = 0; att_u < 4; att_u++) {
          att_pt[att_tx * 4 + att_u][att_ty * 2 + att_a] = att_p[att_u];
          att_z[att_a] += att_p[att_u];
        }
      }
      const int att_kn = (int)(att_n - att_j0 < 64 ? att_n - att_j0 : 64);
      for (int att_jj0 = 0; att_jj0 < att_kn; att_jj0 += 16) {
        __syncthreads();
        for (int att_x = att_t; att_x < 2048; att_x += 256) {
          const int att_vk = att_x / 128, att_vc = att_x % 128;
          att_vs[att_vk][att_vc] = (att_jj0 + att_vk < att_kn && att_c0 + att_vc < att_e) ? p_v[(att_j0 + att_jj0 + att_vk) * n1_v + (att_c0 + att_vc)] : 0.0f;
        }
        __syncthreads();
        #pragma unroll
        for (int att_kk = 0; att_kk < 16; att_kk++) {
          float att_fa[2], att_fb[8];
          #pragma unroll
          for (int att_a = 0; att_a < 2; att_a++) att_fa[att_a] = att_pt[att_jj0 + att_kk][att_ty * 2 + att_a];
          { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&att_vs[att_kk][att_tx * 4]); att_fb[0] = tile_v4.x; att_fb[0 + 1] = tile_v4.y; att_fb[0 + 2] = tile_v4.z; att_fb[0 + 3] = tile_v4.w; }
          { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&att_vs[att_kk][64 + att_tx * 4]); att_fb[4] = tile_v4.x; att_fb[4 + 1] = tile_v4.y; att_fb[4 + 2] = tile_v4.z; att_fb[4 + 3] = tile_v4.w; }
          #pragma unroll
          for (int att_a = 0; att_a < 2; att_a++) for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = fmaf(att_fa[att_a], att_fb[att_w], att_acc[att_a][att_w]);
        }
      }
      __syncthreads();
    }
    #pragma unroll
    for (int att_a = 0; att_a < 2; att_a++) for (int att_o = 1; att_o <= 8; att_o <<= 1) att_z[att_a] += __shfl_xor_sync(0xffffffffu, att_z[att_a], att_o);
    #pragma unroll
    for (int att_a = 0; att_a < 2; att_a++) {
      if (att_n > 0 && att_mx[att_a] == (-__int_as_float(0x7f800000))) {
        att_z[att_a] = __int_as_float(0x7fc00000);
        for (int att_w = 0; att_w < 8; att_w++) att_acc[att_a][att_w] = __int_as_float(0x7fc00000);
      }
    }
    #pragma unroll
    for (int att_a = 0; att_a < 2; att_a++) {
      const long long att_i = att_r0 + att_ty * 2 + att_a;
      if (att_i >= att_m) continue;
      const long long att_iv = att_i + 0;
      const float att_let0 = tile_rsqrt_f32(((float)s_D)); /* scale */
      #pragma unroll
      for (int att_w = 0; att_w < 8; att_w++) {
        const long long att_c = att_c0 + (att_w / 4) * 64 + att_tx * 4 + att_w % 4;
        if (att_c >= att_e) continue;
        const long long att_cv = att_c + 0;
        if (!(att_iv >= 0 && att_iv < n0_o && att_cv >= 0 && att_cv < n1_o)) TILE_FAIL(300001);
        p_o[(att_iv * n1_o + att_cv)] = (att_acc[att_a][att_w] / att_z[att_a]);
      }
    }
  }
}
