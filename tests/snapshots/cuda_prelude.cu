
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
/* Copies of N bytes (4, 8 or 16; src and dst N-byte aligned) from device
   to shared memory that write zeros and read nothing where `in` is
   false: asynchronous in groups (tile_cp_commit ends one, tile_cp_wait_n
   waits until at most N of this thread's latest groups are pending) where
   the architecture has cp.async (sm_80 and later), plain otherwise. */
template <int N> TILE_D void tile_cpz(void *dst, const void *src, bool in) {
#if __CUDA_ARCH__ >= 800
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  if (N == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(d), "l"(src), "r"(in ? 16 : 0) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" :: "r"(d), "l"(src), "n"(N), "r"(in ? N : 0) : "memory");
#else
  if (N == 16) *reinterpret_cast<uint4 *>(dst) = in ? *reinterpret_cast<const uint4 *>(src) : make_uint4(0u, 0u, 0u, 0u);
  else if (N == 8) *reinterpret_cast<unsigned long long *>(dst) = in ? *reinterpret_cast<const unsigned long long *>(src) : 0ull;
  else *reinterpret_cast<unsigned *>(dst) = in ? *reinterpret_cast<const unsigned *>(src) : 0u;
#endif
}
TILE_D void tile_cp_commit(void) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N> TILE_D void tile_cp_wait_n(void) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
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
