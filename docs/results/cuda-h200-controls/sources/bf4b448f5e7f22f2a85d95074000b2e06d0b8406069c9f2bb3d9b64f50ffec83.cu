/* Tile: CUDA kernels of program `layernorm` (1 kernel). */

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
/* Truncating division; division by zero or overflow reports its site. */
TILE_D long long tile_idiv_i64(long long a, long long b, int *err, int id) {
  if (b == 0 || (b == -1 && a == (-9223372036854775807LL - 1))) { atomicExch(err, id); return 0; }
  return a / b;
}

/* Block-wide reductions: every thread passes its partial result and gets
   the block's result. Warp shuffles, then one value per warp in shared
   memory, combined by the first warp. */
#define TILE_BLOCK_REDUCE(NAME, T, OP, ID)                                  \
TILE_D T NAME(T v, double *smem) {                                          \
  T *s = (T *)smem;                                                         \
  for (int o = 16; o > 0; o >>= 1) v = OP(v, __shfl_xor_sync(0xffffffffu, v, o)); \
  const int w = threadIdx.x >> 5, l = threadIdx.x & 31;                     \
  const int nw = (blockDim.x + 31) >> 5;                                    \
  __syncthreads();                                                          \
  if (l == 0) s[w] = v;                                                     \
  __syncthreads();                                                          \
  if (w == 0) {                                                             \
    T u = l < nw ? s[l] : (ID);                                             \
    for (int o = 16; o > 0; o >>= 1) u = OP(u, __shfl_xor_sync(0xffffffffu, u, o)); \
    if (l == 0) s[32] = u;                                                  \
  }                                                                         \
  __syncthreads();                                                          \
  return s[32];                                                             \
}
#define TILE_ADD(a, b) ((a) + (b))
TILE_BLOCK_REDUCE(tile_block_sum_f32, float, TILE_ADD, 0.0f)
TILE_BLOCK_REDUCE(tile_block_max_f32, float, fmaxf, __int_as_float(0xff800000))
TILE_BLOCK_REDUCE(tile_block_min_f32, float, fminf, __int_as_float(0x7f800000))
TILE_BLOCK_REDUCE(tile_block_sum_f64, double, TILE_ADD, 0.0)
TILE_BLOCK_REDUCE(tile_block_max_f64, double, fmax, __longlong_as_double(0xfff0000000000000LL))
TILE_BLOCK_REDUCE(tile_block_min_f64, double, fmin, __longlong_as_double(0x7ff0000000000000LL))
TILE_BLOCK_REDUCE(tile_block_sum_i64, long long, TILE_ADD, 0LL)
TILE_BLOCK_REDUCE(tile_block_max_i64, long long, tile_max_i64, (-9223372036854775807LL - 1))
TILE_BLOCK_REDUCE(tile_block_min_i64, long long, tile_min_i64, 9223372036854775807LL)

/* k0: row_reduction over i in 0..M; stores y; reads x, w, b */
extern "C" __global__ void tile_k0(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_N = a.S[1];
  const float *__restrict__ p_x = (const float *)a.A[0];
  const long long n0_x = s_M;
  const long long n1_x = s_N;
  const float *__restrict__ p_w = (const float *)a.A[1];
  const long long n0_w = s_N;
  const float *__restrict__ p_b = (const float *)a.A[2];
  const long long n0_b = s_N;
  float *__restrict__ p_y = (float *)a.A[3];
  const long long n0_y = s_M;
  const long long n1_y = s_N;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[33];
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    const float val0 = ((float)s_N); /* c0 */
    const long long bnd0 = 0, bnd1 = s_N;
    float red0 = 0.0f;
    if (bnd1 > bnd0) {
      if (!(v_i >= 0 && v_i < n0_x && bnd0 >= 0 && (bnd1 - 1) < n1_x)) TILE_FAIL(1);
    }
    for (long long v_j = bnd0 + threadIdx.x; v_j < bnd1; v_j += blockDim.x) {
      const float ld0 = p_x[(v_i * n1_x + v_j)];
      red0 = red0 + ld0;
    }
    red0 = tile_block_sum_f32(red0, tile_smem);
    const float val1 = (red0 / val0); /* mean */
    const long long bnd2 = 0, bnd3 = s_N;
    float red1 = 0.0f;
    if (bnd3 > bnd2) {
      if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(2);
    }
    for (long long v_j = bnd2 + threadIdx.x; v_j < bnd3; v_j += blockDim.x) {
      const float ld1 = p_x[(v_i * n1_x + v_j)];
      const float ld2 = p_x[(v_i * n1_x + v_j)];
      red1 = red1 + ((ld1 - val1) * (ld2 - val1));
    }
    red1 = tile_block_sum_f32(red1, tile_smem);
    const float val2 = (red1 / val0); /* var */
    const float val3 = tile_rsqrt_f32((val2 + 1e-5f)); /* r */
    {
      const long long bnd4 = 0, bnd5 = s_N;
      if (bnd5 > bnd4) {
        if (!(v_i >= 0 && v_i < n0_x && bnd4 >= 0 && (bnd5 - 1) < n1_x)) TILE_FAIL(4);
        if (!(bnd4 >= 0 && (bnd5 - 1) < n0_w)) TILE_FAIL(5);
        if (!(bnd4 >= 0 && (bnd5 - 1) < n0_b)) TILE_FAIL(6);
        if (!(v_i >= 0 && v_i < n0_y && bnd4 >= 0 && (bnd5 - 1) < n1_y)) TILE_FAIL(7);
      }
      for (long long v_j = bnd4 + threadIdx.x; v_j < bnd5; v_j += blockDim.x) {
        const float ld3 = p_x[(v_i * n1_x + v_j)];
        const float ld4 = p_w[v_j];
        const float ld5 = p_b[v_j];
        p_y[(v_i * n1_y + v_j)] = ((((ld3 - val1) * val3) * ld4) + ld5);
      }
    }
    __syncthreads();
  }
}

/* k0 (rows staged in shared memory): row_reduction over i in 0..M; stores y; reads x, w, b */
extern "C" __global__ void tile_k0_rows(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_N = a.S[1];
  const float *__restrict__ p_x = (const float *)a.A[0];
  const long long n0_x = s_M;
  const long long n1_x = s_N;
  const float *__restrict__ p_w = (const float *)a.A[1];
  const long long n0_w = s_N;
  const float *__restrict__ p_b = (const float *)a.A[2];
  const long long n0_b = s_N;
  float *__restrict__ p_y = (float *)a.A[3];
  const long long n0_y = s_M;
  const long long n1_y = s_N;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[33];
  extern __shared__ float4 tile_rows4[];
  float *const tile_rows = reinterpret_cast<float *>(tile_rows4);
  const long long ro0 = 0;
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    if (n1_x > 0) {
      if (!(v_i >= 0 && v_i < n0_x)) TILE_FAIL(200001);
      const float *src = p_x + v_i * n1_x;
      float *dst = tile_rows + ro0;
      long long q0 = 0;
      if ((reinterpret_cast<unsigned long long>(src) & 15ULL) == 0) {
        q0 = n1_x & ~3LL;
        #pragma unroll 4
        for (long long q = threadIdx.x; q < (n1_x >> 2); q += blockDim.x) {
          reinterpret_cast<float4 *>(dst)[q] = reinterpret_cast<const float4 *>(src)[q];
        }
      }
      for (long long q = q0 + threadIdx.x; q < n1_x; q += blockDim.x) {
        dst[q] = src[q];
      }
    }
    __syncthreads();
    const float val0 = ((float)s_N); /* c0 */
    const long long bnd0 = 0, bnd1 = s_N;
    float red0 = 0.0f;
    for (int q0 = threadIdx.x; q0 < (int)(bnd1 - bnd0); q0 += blockDim.x) {
      const long long v_j = bnd0 + q0;
      red0 = red0 + tile_rows[ro0 + q0];
    }
    red0 = tile_block_sum_f32(red0, tile_smem);
    const float val1 = (red0 / val0); /* mean */
    const long long bnd2 = 0, bnd3 = s_N;
    float red1 = 0.0f;
    for (int q1 = threadIdx.x; q1 < (int)(bnd3 - bnd2); q1 += blockDim.x) {
      const long long v_j = bnd2 + q1;
      red1 = red1 + ((tile_rows[ro0 + q1] - val1) * (tile_rows[ro0 + q1] - val1));
    }
    red1 = tile_block_sum_f32(red1, tile_smem);
    const float val2 = (red1 / val0); /* var */
    const float val3 = tile_rsqrt_f32((val2 + 1e-5f)); /* r */
    {
      const long long bnd4 = 0, bnd5 = s_N;
      if (bnd5 > bnd4) {
        if (!(bnd4 >= 0 && (bnd5 - 1) < n0_w)) TILE_FAIL(200002);
        if (!(bnd4 >= 0 && (bnd5 - 1) < n0_b)) TILE_FAIL(200003);
        if (!(v_i >= 0 && v_i < n0_y && bnd4 >= 0 && (bnd5 - 1) < n1_y)) TILE_FAIL(200004);
      }
      for (int q2 = threadIdx.x; q2 < (int)(bnd5 - bnd4); q2 += blockDim.x) {
        const long long v_j = bnd4 + q2;
        const float ld0 = p_w[v_j];
        const float ld1 = p_b[v_j];
        p_y[(v_i * n1_y + v_j)] = ((((tile_rows[ro0 + q2] - val1) * val3) * ld0) + ld1);
      }
    }
    __syncthreads();
  }
}
