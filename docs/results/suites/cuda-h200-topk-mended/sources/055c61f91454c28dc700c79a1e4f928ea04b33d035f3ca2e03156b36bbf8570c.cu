/* Tile: CUDA kernels of program `topk` (1 kernel). */

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

/* k0: row_reduction over i in 0..M; stores vals, idx; reads x */
extern "C" __global__ void tile_k0(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_N = a.S[1];
  const long long s_K = a.S[2];
  const float *__restrict__ p_x = (const float *)a.A[0];
  const long long n0_x = s_M;
  const long long n1_x = s_N;
  float *__restrict__ p_vals = (float *)a.A[1];
  const long long n0_vals = s_M;
  const long long n1_vals = s_K;
  int *__restrict__ p_idx = (int *)a.A[2];
  const long long n0_idx = s_M;
  const long long n1_idx = s_K;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[64];
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    /* row in lockstep: every thread walks its statements in order, each reduction split over the block, every store between barriers (see print_rows.rs) */
    {
      const long long bnd0 = 0, bnd1 = s_N;
      for (long long v_j = bnd0; v_j < bnd1; v_j++) {
        const long long bnd2 = 0, bnd3 = s_N;
        long long red0 = 0LL;
        if (bnd3 > bnd2) {
          if (!(v_i >= 0 && v_i < n0_x && bnd2 >= 0 && (bnd3 - 1) < n1_x)) TILE_FAIL(1);
          if (!(v_i >= 0 && v_i < n0_x && v_j >= 0 && v_j < n1_x)) TILE_FAIL(2);
        }
        {
          const long long len0 = (long long)(bnd3 - bnd2);
          long long quad0 = (long long)threadIdx.x * 4;
          for (; quad0 + 3 < len0; quad0 += (long long)blockDim.x * 4) {
            const long long qb0 = bnd2 + quad0;
            const long long alu0 = (qb0 + 0);
            const float ld0 = p_x[(v_i * n1_x + alu0)];
            const float ld1 = p_x[(v_i * n1_x + v_j)];
            const long long alu1 = (qb0 + 0);
            const float ld2 = p_x[(v_i * n1_x + alu1)];
            const float ld3 = p_x[(v_i * n1_x + v_j)];
            red0 = red0 + (((ld0 > ld1) | ((ld2 == ld3) & ((qb0 + 0) < v_j))) ? 1 : 0);
            const long long alu2 = (qb0 + 1);
            const float ld4 = p_x[(v_i * n1_x + alu2)];
            const float ld5 = p_x[(v_i * n1_x + v_j)];
            const long long alu3 = (qb0 + 1);
            const float ld6 = p_x[(v_i * n1_x + alu3)];
            const float ld7 = p_x[(v_i * n1_x + v_j)];
            red0 = red0 + (((ld4 > ld5) | ((ld6 == ld7) & ((qb0 + 1) < v_j))) ? 1 : 0);
            const long long alu4 = (qb0 + 2);
            const float ld8 = p_x[(v_i * n1_x + alu4)];
            const float ld9 = p_x[(v_i * n1_x + v_j)];
            const long long alu5 = (qb0 + 2);
            const float ld10 = p_x[(v_i * n1_x + alu5)];
            const float ld11 = p_x[(v_i * n1_x + v_j)];
            red0 = red0 + (((ld8 > ld9) | ((ld10 == ld11) & ((qb0 + 2) < v_j))) ? 1 : 0);
            const long long alu6 = (qb0 + 3);
            const float ld12 = p_x[(v_i * n1_x + alu6)];
            const float ld13 = p_x[(v_i * n1_x + v_j)];
            const long long alu7 = (qb0 + 3);
            const float ld14 = p_x[(v_i * n1_x + alu7)];
            const float ld15 = p_x[(v_i * n1_x + v_j)];
            red0 = red0 + (((ld12 > ld13) | ((ld14 == ld15) & ((qb0 + 3) < v_j))) ? 1 : 0);
          }
          for (long long q0 = quad0; q0 < len0; q0++) {
            const long long v_t = bnd2 + q0;
            const float ld16 = p_x[(v_i * n1_x + v_t)];
            const float ld17 = p_x[(v_i * n1_x + v_j)];
            const float ld18 = p_x[(v_i * n1_x + v_t)];
            const float ld19 = p_x[(v_i * n1_x + v_j)];
            red0 = red0 + (((ld16 > ld17) | ((ld18 == ld19) & (v_t < v_j))) ? 1 : 0);
          }
        }
        red0 = tile_block_sum_i64(red0, tile_smem + 0);
        const long long val0 = red0; /* r */
        if ((val0 < s_K)) {
          const long long val1 = v_i;
          const long long val2 = val0;
          if (!(v_i >= 0 && v_i < n0_x && v_j >= 0 && v_j < n1_x)) TILE_FAIL(5);
          const float ld20 = p_x[(v_i * n1_x + v_j)];
          const float val3 = ld20;
          __syncthreads();
          if (!(val1 >= 0 && val1 < n0_vals && val2 >= 0 && val2 < n1_vals)) TILE_FAIL(6);
          p_vals[(val1 * n1_vals + val2)] = val3;
          __syncthreads();
          const long long val4 = v_i;
          const long long val5 = val0;
          const long long val6 = v_j;
          __syncthreads();
          if (!(val4 >= 0 && val4 < n0_idx && val5 >= 0 && val5 < n1_idx)) TILE_FAIL(7);
          p_idx[(val4 * n1_idx + val5)] = tile_sat_i32(val6);
          __syncthreads();
        }
        __syncthreads();
        __syncthreads();
      }
    }
    __syncthreads();
    __syncthreads();
  }
}
