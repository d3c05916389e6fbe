/* Tile: CUDA kernels of program `row_lse` (1 kernel). */

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

/* k0: row_reduction over i in 0..M; stores y; reads x */
extern "C" __global__ void tile_k0(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_N = a.S[1];
  const float *__restrict__ p_x = (const float *)a.A[0];
  const long long n0_x = s_M;
  const long long n1_x = s_N;
  float *__restrict__ p_y = (float *)a.A[1];
  const long long n0_y = s_M;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[64];
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    const long long bnd0 = 0, bnd1 = s_N;
    float red0 = __int_as_float(0x7fc00000);
    if (bnd1 > bnd0) {
      if (!(v_i >= 0 && v_i < n0_x && bnd0 >= 0 && (bnd1 - 1) < n1_x)) TILE_FAIL(1);
    }
    float4 hq0[8];
    {
      const long long len0 = (long long)(bnd1 - bnd0);
      const bool va0 = (reinterpret_cast<unsigned long long>(p_x + (v_i * n1_x + bnd0)) & 15ULL) == 0;
      long long quad0 = (long long)threadIdx.x * 4;
      if (va0) {
        #pragma unroll
        for (int hu0 = 0; hu0 < 8; hu0++) {
          if (quad0 + 3 < len0) {
            const long long qb0 = bnd0 + quad0;
            hq0[hu0] = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb0));
            red0 = tile_max_f32(red0, hq0[hu0].x);
            red0 = tile_max_f32(red0, hq0[hu0].y);
            red0 = tile_max_f32(red0, hq0[hu0].z);
            red0 = tile_max_f32(red0, hq0[hu0].w);
            quad0 += (long long)blockDim.x * 4;
          }
        }
        for (; quad0 + (long long)blockDim.x * 4 + 3 < len0; quad0 += (long long)blockDim.x * 8) {
          const long long qb1 = bnd0 + quad0;
          const float4 gq0 = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb1));
          const long long qb2 = bnd0 + quad0 + (long long)blockDim.x * 4;
          const float4 gq1 = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb2));
          red0 = tile_max_f32(red0, gq0.x);
          red0 = tile_max_f32(red0, gq0.y);
          red0 = tile_max_f32(red0, gq0.z);
          red0 = tile_max_f32(red0, gq0.w);
          red0 = tile_max_f32(red0, gq1.x);
          red0 = tile_max_f32(red0, gq1.y);
          red0 = tile_max_f32(red0, gq1.z);
          red0 = tile_max_f32(red0, gq1.w);
        }
        for (; quad0 + 3 < len0; quad0 += (long long)blockDim.x * 4) {
          const long long qb3 = bnd0 + quad0;
          const float4 gq2 = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb3));
          red0 = tile_max_f32(red0, gq2.x);
          red0 = tile_max_f32(red0, gq2.y);
          red0 = tile_max_f32(red0, gq2.z);
          red0 = tile_max_f32(red0, gq2.w);
        }
      }
      else {
        #pragma unroll
        for (int hu1 = 0; hu1 < 8; hu1++) {
          if (quad0 + 3 < len0) {
            const long long qb4 = bnd0 + quad0;
            hq0[hu1] = make_float4((p_x + (v_i * n1_x + qb4))[0], (p_x + (v_i * n1_x + qb4))[1], (p_x + (v_i * n1_x + qb4))[2], (p_x + (v_i * n1_x + qb4))[3]);
            red0 = tile_max_f32(red0, hq0[hu1].x);
            red0 = tile_max_f32(red0, hq0[hu1].y);
            red0 = tile_max_f32(red0, hq0[hu1].z);
            red0 = tile_max_f32(red0, hq0[hu1].w);
            quad0 += (long long)blockDim.x * 4;
          }
        }
        for (; quad0 + 3 < len0; quad0 += (long long)blockDim.x * 4) {
          const long long qb5 = bnd0 + quad0;
          const float4 gq3 = make_float4((p_x + (v_i * n1_x + qb5))[0], (p_x + (v_i * n1_x + qb5))[1], (p_x + (v_i * n1_x + qb5))[2], (p_x + (v_i * n1_x + qb5))[3]);
          red0 = tile_max_f32(red0, gq3.x);
          red0 = tile_max_f32(red0, gq3.y);
          red0 = tile_max_f32(red0, gq3.z);
          red0 = tile_max_f32(red0, gq3.w);
        }
      }
      for (long long q0 = quad0; q0 < len0; q0++) {
        const long long v_j = bnd0 + q0;
        const float gq4 = *(p_x + (v_i * n1_x + v_j));
        red0 = tile_max_f32(red0, gq4);
      }
    }
    red0 = tile_block_max_f32(red0, tile_smem + 0);
    if (!(bnd1 > bnd0)) red0 = __int_as_float(0xff800000);
    const float val0 = red0; /* m */
    const long long bnd2 = 0, bnd3 = s_N;
    float red1 = 0.0f;
    if (bnd3 > bnd2) {
      if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(2);
    }
    {
      const long long len1 = (long long)(bnd3 - bnd2);
      const bool va1 = (reinterpret_cast<unsigned long long>(p_x + (v_i * n1_x + bnd2)) & 15ULL) == 0;
      long long quad1 = (long long)threadIdx.x * 4;
      if (va1) {
        #pragma unroll
        for (int hu2 = 0; hu2 < 8; hu2++) {
          if (quad1 + 3 < len1) {
            const long long qb6 = bnd2 + quad1;
            red1 = red1 + tile_exp_f32((hq0[hu2].x - val0));
            red1 = red1 + tile_exp_f32((hq0[hu2].y - val0));
            red1 = red1 + tile_exp_f32((hq0[hu2].z - val0));
            red1 = red1 + tile_exp_f32((hq0[hu2].w - val0));
            quad1 += (long long)blockDim.x * 4;
          }
        }
        for (; quad1 + (long long)blockDim.x * 4 + 3 < len1; quad1 += (long long)blockDim.x * 8) {
          const long long qb7 = bnd2 + quad1;
          const float4 gq5 = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb7));
          const long long qb8 = bnd2 + quad1 + (long long)blockDim.x * 4;
          const float4 gq6 = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb8));
          red1 = red1 + tile_exp_f32((gq5.x - val0));
          red1 = red1 + tile_exp_f32((gq5.y - val0));
          red1 = red1 + tile_exp_f32((gq5.z - val0));
          red1 = red1 + tile_exp_f32((gq5.w - val0));
          red1 = red1 + tile_exp_f32((gq6.x - val0));
          red1 = red1 + tile_exp_f32((gq6.y - val0));
          red1 = red1 + tile_exp_f32((gq6.z - val0));
          red1 = red1 + tile_exp_f32((gq6.w - val0));
        }
        for (; quad1 + 3 < len1; quad1 += (long long)blockDim.x * 4) {
          const long long qb9 = bnd2 + quad1;
          const float4 gq7 = *reinterpret_cast<const float4 *>(p_x + (v_i * n1_x + qb9));
          red1 = red1 + tile_exp_f32((gq7.x - val0));
          red1 = red1 + tile_exp_f32((gq7.y - val0));
          red1 = red1 + tile_exp_f32((gq7.z - val0));
          red1 = red1 + tile_exp_f32((gq7.w - val0));
        }
      }
      else {
        #pragma unroll
        for (int hu3 = 0; hu3 < 8; hu3++) {
          if (quad1 + 3 < len1) {
            const long long qb10 = bnd2 + quad1;
            red1 = red1 + tile_exp_f32((hq0[hu3].x - val0));
            red1 = red1 + tile_exp_f32((hq0[hu3].y - val0));
            red1 = red1 + tile_exp_f32((hq0[hu3].z - val0));
            red1 = red1 + tile_exp_f32((hq0[hu3].w - val0));
            quad1 += (long long)blockDim.x * 4;
          }
        }
        for (; quad1 + 3 < len1; quad1 += (long long)blockDim.x * 4) {
          const long long qb11 = bnd2 + quad1;
          const float4 gq8 = make_float4((p_x + (v_i * n1_x + qb11))[0], (p_x + (v_i * n1_x + qb11))[1], (p_x + (v_i * n1_x + qb11))[2], (p_x + (v_i * n1_x + qb11))[3]);
          red1 = red1 + tile_exp_f32((gq8.x - val0));
          red1 = red1 + tile_exp_f32((gq8.y - val0));
          red1 = red1 + tile_exp_f32((gq8.z - val0));
          red1 = red1 + tile_exp_f32((gq8.w - val0));
        }
      }
      for (long long q1 = quad1; q1 < len1; q1++) {
        const long long v_j = bnd2 + q1;
        const float gq9 = *(p_x + (v_i * n1_x + v_j));
        red1 = red1 + tile_exp_f32((gq9 - val0));
      }
    }
    red1 = tile_block_sum_f32(red1, tile_smem + 32);
    if (threadIdx.x == 0) {
      if (!(v_i >= 0 && v_i < n0_y)) TILE_FAIL(3);
      p_y[v_i] = (val0 + tile_log_f32(red1));
    }
    __syncthreads();
  }
}

/* k0 (rows staged in shared memory): row_reduction over i in 0..M; stores y; reads x */
extern "C" __global__ void tile_k0_rows(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_N = a.S[1];
  const float *__restrict__ p_x = (const float *)a.A[0];
  const long long n0_x = s_M;
  const long long n1_x = s_N;
  float *__restrict__ p_y = (float *)a.A[1];
  const long long n0_y = s_M;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[64];
  extern __shared__ float4 tile_rows4[];
  float *const tile_rows = reinterpret_cast<float *>(tile_rows4);
  const long long ro0 = 0;
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    if (n1_x > 0) {
      if (!(v_i >= 0 && v_i < n0_x)) TILE_FAIL(200001);
      const float *src = p_x + v_i * n1_x;
      float *dst = tile_rows + ro0;
      const int len = (int)n1_x;
      int q = (int)threadIdx.x * 4;
      if ((reinterpret_cast<unsigned long long>(src) & 15ULL) == 0) {
        for (; q + 3 < len; q += (int)blockDim.x * 4) {
          tile_cp16(dst + q, src + q);
        }
      }
      for (; q < len; q += (int)blockDim.x * 4) {
        for (int e = q; e < len && e < q + 4; e++) dst[e] = src[e];
      }
    }
    tile_cp_wait();
    const long long bnd0 = 0, bnd1 = s_N;
    float red0 = __int_as_float(0x7fc00000);
    {
      const int len0 = (int)(bnd1 - bnd0);
      int quad0 = (int)threadIdx.x * 4;
      for (; quad0 + 3 < len0; quad0 += (int)blockDim.x * 4) {
        const long long qb0 = bnd0 + quad0;
        const float4 sq0 = *reinterpret_cast<const float4 *>(tile_rows + ro0 + quad0);
        red0 = tile_max_f32(red0, sq0.x);
        red0 = tile_max_f32(red0, sq0.y);
        red0 = tile_max_f32(red0, sq0.z);
        red0 = tile_max_f32(red0, sq0.w);
      }
      for (int q0 = quad0; q0 < len0; q0++) {
        const long long v_j = bnd0 + q0;
        red0 = tile_max_f32(red0, tile_rows[ro0 + q0]);
      }
    }
    red0 = tile_block_max_f32(red0, tile_smem + 0);
    if (!(bnd1 > bnd0)) red0 = __int_as_float(0xff800000);
    const float val0 = red0; /* m */
    const long long bnd2 = 0, bnd3 = s_N;
    float red1 = 0.0f;
    {
      const int len1 = (int)(bnd3 - bnd2);
      int quad1 = (int)threadIdx.x * 4;
      for (; quad1 + 3 < len1; quad1 += (int)blockDim.x * 4) {
        const long long qb1 = bnd2 + quad1;
        const float4 sq1 = *reinterpret_cast<const float4 *>(tile_rows + ro0 + quad1);
        red1 = red1 + tile_exp_f32((sq1.x - val0));
        red1 = red1 + tile_exp_f32((sq1.y - val0));
        red1 = red1 + tile_exp_f32((sq1.z - val0));
        red1 = red1 + tile_exp_f32((sq1.w - val0));
      }
      for (int q1 = quad1; q1 < len1; q1++) {
        const long long v_j = bnd2 + q1;
        red1 = red1 + tile_exp_f32((tile_rows[ro0 + q1] - val0));
      }
    }
    red1 = tile_block_sum_f32(red1, tile_smem + 32);
    if (threadIdx.x == 0) {
      if (!(v_i >= 0 && v_i < n0_y)) TILE_FAIL(200002);
      p_y[v_i] = (val0 + tile_log_f32(red1));
    }
    __syncthreads();
  }
}
