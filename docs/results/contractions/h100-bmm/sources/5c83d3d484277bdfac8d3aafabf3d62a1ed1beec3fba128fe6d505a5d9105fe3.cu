/* Tile: CUDA kernels of program `bmm` (1 kernel). */

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

/* k0: row_reduction over h in 0..B; stores c; reads a, b */
extern "C" __global__ void tile_k0(const TileArgs a) {
  int *err = a.err;
  const long long s_B = a.S[0];
  const long long s_M = a.S[1];
  const long long s_K = a.S[2];
  const long long s_N = a.S[3];
  const float *__restrict__ p_a = (const float *)a.A[0];
  const long long n0_a = s_B;
  const long long n1_a = s_M;
  const long long n2_a = s_K;
  const float *__restrict__ p_b = (const float *)a.A[1];
  const long long n0_b = s_B;
  const long long n1_b = s_K;
  const long long n2_b = s_N;
  float *__restrict__ p_c = (float *)a.A[2];
  const long long n0_c = s_B;
  const long long n1_c = s_M;
  const long long n2_c = s_N;
  const long long dl0 = 0, dn0 = s_B;
  __shared__ double tile_smem[64];
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_h = dl0 + r;
    /* row in lockstep: every thread walks its statements in order, each reduction split over the block, every store between barriers (see print_rows.rs) */
    {
      const long long bnd0 = 0, bnd1 = s_M;
      for (long long v_i = bnd0; v_i < bnd1; v_i++) {
        {
          const long long bnd2 = 0, bnd3 = s_N;
          for (long long v_j = bnd2; v_j < bnd3; v_j++) {
            const long long val0 = v_h;
            const long long val1 = v_i;
            const long long val2 = v_j;
            const long long bnd4 = 0, bnd5 = s_K;
            float red0 = 0.0f;
            if (bnd5 > bnd4) {
              if (!(v_h >= 0 && v_h < n0_a && v_i >= 0 && v_i < n1_a && bnd4 >= 0 && (bnd5 - 1) < n2_a)) TILE_FAIL(1);
              if (!(v_h >= 0 && v_h < n0_b && bnd4 >= 0 && (bnd5 - 1) < n1_b && v_j >= 0 && v_j < n2_b)) TILE_FAIL(2);
            }
            {
              const long long len0 = (long long)(bnd5 - bnd4);
              long long quad0 = (long long)threadIdx.x * 4;
              for (; quad0 + 3 < len0; quad0 += (long long)blockDim.x * 4) {
                const long long qb0 = bnd4 + quad0;
                const long long alu0 = (qb0 + 0);
                const float ld0 = p_a[((v_h * n1_a + v_i) * n2_a + alu0)];
                const long long alu1 = (qb0 + 0);
                const float ld1 = p_b[((v_h * n1_b + alu1) * n2_b + v_j)];
                red0 = red0 + (ld0 * ld1);
                const long long alu2 = (qb0 + 1);
                const float ld2 = p_a[((v_h * n1_a + v_i) * n2_a + alu2)];
                const long long alu3 = (qb0 + 1);
                const float ld3 = p_b[((v_h * n1_b + alu3) * n2_b + v_j)];
                red0 = red0 + (ld2 * ld3);
                const long long alu4 = (qb0 + 2);
                const float ld4 = p_a[((v_h * n1_a + v_i) * n2_a + alu4)];
                const long long alu5 = (qb0 + 2);
                const float ld5 = p_b[((v_h * n1_b + alu5) * n2_b + v_j)];
                red0 = red0 + (ld4 * ld5);
                const long long alu6 = (qb0 + 3);
                const float ld6 = p_a[((v_h * n1_a + v_i) * n2_a + alu6)];
                const long long alu7 = (qb0 + 3);
                const float ld7 = p_b[((v_h * n1_b + alu7) * n2_b + v_j)];
                red0 = red0 + (ld6 * ld7);
              }
              for (long long q0 = quad0; q0 < len0; q0++) {
                const long long v_k = bnd4 + q0;
                const float ld8 = p_a[((v_h * n1_a + v_i) * n2_a + v_k)];
                const float ld9 = p_b[((v_h * n1_b + v_k) * n2_b + v_j)];
                red0 = red0 + (ld8 * ld9);
              }
            }
            red0 = tile_block_sum_f32(red0, tile_smem + 0);
            const float val3 = red0;
            __syncthreads();
            if (!(val0 >= 0 && val0 < n0_c && val1 >= 0 && val1 < n1_c && val2 >= 0 && val2 < n2_c)) TILE_FAIL(3);
            p_c[((val0 * n1_c + val1) * n2_c + val2)] = val3;
            __syncthreads();
            __syncthreads();
          }
        }
      }
    }
    __syncthreads();
    __syncthreads();
  }
}

/* k0 (a tile of products per block, then the epilogue): row_reduction over h in 0..B; stores c; reads a, b */
extern "C" __global__ void __launch_bounds__(256, 1) tile_k0_mm(const TileArgs a) {
  int *err = a.err;
  const long long s_B = a.S[0];
  const long long s_M = a.S[1];
  const long long s_K = a.S[2];
  const long long s_N = a.S[3];
  const float *__restrict__ p_a = (const float *)a.A[0];
  const long long n0_a = s_B;
  const long long n1_a = s_M;
  const long long n2_a = s_K;
  const float *__restrict__ p_b = (const float *)a.A[1];
  const long long n0_b = s_B;
  const long long n1_b = s_K;
  const long long n2_b = s_N;
  float *__restrict__ p_c = (float *)a.A[2];
  const long long n0_c = s_B;
  const long long n1_c = s_M;
  const long long n2_c = s_N;
  const long long tile_m = s_M, tile_n = s_N, tile_k = s_K;
  const long long tile_nb = tile_n > 0 ? (tile_n + 127) / 128 : 1;
  const long long tile_bt = (long long)blockIdx.x / tile_nb, tile_r0 = (long long)blockIdx.y * 128, tile_c0 = ((long long)blockIdx.x % tile_nb) * 128;
  if (tile_bt >= s_B) return;
  const long long tile_btv = tile_bt + 0;
  const float *const tile_a_h = p_a + tile_bt * (n1_a * n2_a);
  const float *const tile_b_h = p_b + tile_bt * (n1_b * n2_b);
  if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;
  __shared__ __align__(16) float tile_as[2][16][132], tile_bs[2][16][132];
  const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;
  float tile_acc[8][8];
  #pragma unroll
  for (int tile_r = 0; tile_r < 8; tile_r++) {
    #pragma unroll
    for (int tile_q = 0; tile_q < 8; tile_q++) tile_acc[tile_r][tile_q] = 0.0f;
  }
  float tile_ra[8], tile_rb[8];
  const bool tile_afast = (n2_a) % 4 == 0 && ((unsigned long long)(const void *)tile_a_h & 15ull) == 0 && tile_r0 + 128 <= tile_m;
  const bool tile_bfast = (n2_b) % 4 == 0 && ((unsigned long long)(const void *)tile_b_h & 15ull) == 0 && tile_c0 + 128 <= tile_n;
  {
    const long long tile_kf = 0;
    const bool tile_kin = tile_kf + 16 <= tile_k;
    #pragma unroll
    for (int tile_v = 0; tile_v < 2; tile_v++) {
      const int tile_sq = tile_t + tile_v * 256;
      const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
      const int tile_bk = tile_sq / 32, tile_bo = (tile_sq % 32) * 4;
      if (tile_afast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)]);
        tile_ra[tile_v * 4 + 0] = tile_x.x;
        tile_ra[tile_v * 4 + 1] = tile_x.y;
        tile_ra[tile_v * 4 + 2] = tile_x.z;
        tile_ra[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)] : 0.0f;
        tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 1)] : 0.0f;
        tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 2)] : 0.0f;
        tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 3)] : 0.0f;
      }
      if (tile_bfast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)]);
        tile_rb[tile_v * 4 + 0] = tile_x.x;
        tile_rb[tile_v * 4 + 1] = tile_x.y;
        tile_rb[tile_v * 4 + 2] = tile_x.z;
        tile_rb[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)] : 0.0f;
        tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 1)] : 0.0f;
        tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 2)] : 0.0f;
        tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 3)] : 0.0f;
      }
    }
  }
  #pragma unroll
  for (int tile_v = 0; tile_v < 2; tile_v++) {
    const int tile_sq = tile_t + tile_v * 256;
    const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
    const int tile_bk = tile_sq / 32, tile_bo = (tile_sq % 32) * 4;
    tile_as[0][tile_ak + 0][tile_ao] = tile_ra[tile_v * 4 + 0];
    tile_as[0][tile_ak + 1][tile_ao] = tile_ra[tile_v * 4 + 1];
    tile_as[0][tile_ak + 2][tile_ao] = tile_ra[tile_v * 4 + 2];
    tile_as[0][tile_ak + 3][tile_ao] = tile_ra[tile_v * 4 + 3];
    *reinterpret_cast<float4 *>(&tile_bs[0][tile_bk][tile_bo]) = make_float4(tile_rb[tile_v * 4 + 0], tile_rb[tile_v * 4 + 1], tile_rb[tile_v * 4 + 2], tile_rb[tile_v * 4 + 3]);
  }
  __syncthreads();
  for (long long tile_k0 = 0; tile_k0 < tile_k; tile_k0 += 16) {
    const int tile_cur = (int)((tile_k0 / 16) & 1);
    const bool tile_more = tile_k0 + 16 < tile_k;
    if (tile_more) {
      {
        const long long tile_kf = tile_k0 + 16;
        const bool tile_kin = tile_kf + 16 <= tile_k;
        #pragma unroll
        for (int tile_v = 0; tile_v < 2; tile_v++) {
          const int tile_sq = tile_t + tile_v * 256;
          const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
          const int tile_bk = tile_sq / 32, tile_bo = (tile_sq % 32) * 4;
          if (tile_afast && tile_kin) {
            const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)]);
            tile_ra[tile_v * 4 + 0] = tile_x.x;
            tile_ra[tile_v * 4 + 1] = tile_x.y;
            tile_ra[tile_v * 4 + 2] = tile_x.z;
            tile_ra[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)] : 0.0f;
            tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 1)] : 0.0f;
            tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 2)] : 0.0f;
            tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 3)] : 0.0f;
          }
          if (tile_bfast && tile_kin) {
            const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)]);
            tile_rb[tile_v * 4 + 0] = tile_x.x;
            tile_rb[tile_v * 4 + 1] = tile_x.y;
            tile_rb[tile_v * 4 + 2] = tile_x.z;
            tile_rb[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)] : 0.0f;
            tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 1)] : 0.0f;
            tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 2)] : 0.0f;
            tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 3)] : 0.0f;
          }
        }
      }
    }
    #pragma unroll
    for (int tile_kk = 0; tile_kk < 16; tile_kk++) {
      float tile_fa[8], tile_fb[8];
      #pragma unroll
      for (int tile_g = 0; tile_g < 2; tile_g++) {
        { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&tile_as[tile_cur][tile_kk][tile_g * 64 + tile_ty * 4]); tile_fa[tile_g * 4] = tile_v4.x; tile_fa[tile_g * 4 + 1] = tile_v4.y; tile_fa[tile_g * 4 + 2] = tile_v4.z; tile_fa[tile_g * 4 + 3] = tile_v4.w; }
        { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&tile_bs[tile_cur][tile_kk][tile_g * 64 + tile_tx * 4]); tile_fb[tile_g * 4] = tile_v4.x; tile_fb[tile_g * 4 + 1] = tile_v4.y; tile_fb[tile_g * 4 + 2] = tile_v4.z; tile_fb[tile_g * 4 + 3] = tile_v4.w; }
      }
      #pragma unroll
      for (int tile_r = 0; tile_r < 8; tile_r++) {
        #pragma unroll
        for (int tile_q = 0; tile_q < 8; tile_q++) tile_acc[tile_r][tile_q] = fmaf(tile_fa[tile_r], tile_fb[tile_q], tile_acc[tile_r][tile_q]);
      }
    }
    if (tile_more) {
      #pragma unroll
      for (int tile_v = 0; tile_v < 2; tile_v++) {
        const int tile_sq = tile_t + tile_v * 256;
        const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
        const int tile_bk = tile_sq / 32, tile_bo = (tile_sq % 32) * 4;
        tile_as[tile_cur ^ 1][tile_ak + 0][tile_ao] = tile_ra[tile_v * 4 + 0];
        tile_as[tile_cur ^ 1][tile_ak + 1][tile_ao] = tile_ra[tile_v * 4 + 1];
        tile_as[tile_cur ^ 1][tile_ak + 2][tile_ao] = tile_ra[tile_v * 4 + 2];
        tile_as[tile_cur ^ 1][tile_ak + 3][tile_ao] = tile_ra[tile_v * 4 + 3];
        *reinterpret_cast<float4 *>(&tile_bs[tile_cur ^ 1][tile_bk][tile_bo]) = make_float4(tile_rb[tile_v * 4 + 0], tile_rb[tile_v * 4 + 1], tile_rb[tile_v * 4 + 2], tile_rb[tile_v * 4 + 3]);
      }
    }
    __syncthreads();
  }
  #pragma unroll
  for (int tile_r = 0; tile_r < 8; tile_r++) {
    const long long tile_i = tile_r0 + (tile_r / 4) * 64 + tile_ty * 4 + tile_r % 4;
    if (tile_i >= tile_m) continue;
    #pragma unroll
    for (int tile_q = 0; tile_q < 8; tile_q++) {
      const long long tile_j = tile_c0 + (tile_q / 4) * 64 + tile_tx * 4 + tile_q % 4;
      if (tile_j >= tile_n) continue;
      const long long tile_iv = tile_i + 0, tile_jv = tile_j + 0;
      if (!(tile_btv >= 0 && tile_btv < n0_c && tile_iv >= 0 && tile_iv < n1_c && tile_jv >= 0 && tile_jv < n2_c)) TILE_FAIL(300001);
      p_c[((tile_btv * n1_c + tile_iv) * n2_c + tile_jv)] = tile_acc[tile_r][tile_q];
    }
  }
}

/* k0 (a tile of products per block, then the epilogue): row_reduction over h in 0..B; stores c; reads a, b */
extern "C" __global__ void __launch_bounds__(256, 2) tile_k0_mm64(const TileArgs a) {
  int *err = a.err;
  const long long s_B = a.S[0];
  const long long s_M = a.S[1];
  const long long s_K = a.S[2];
  const long long s_N = a.S[3];
  const float *__restrict__ p_a = (const float *)a.A[0];
  const long long n0_a = s_B;
  const long long n1_a = s_M;
  const long long n2_a = s_K;
  const float *__restrict__ p_b = (const float *)a.A[1];
  const long long n0_b = s_B;
  const long long n1_b = s_K;
  const long long n2_b = s_N;
  float *__restrict__ p_c = (float *)a.A[2];
  const long long n0_c = s_B;
  const long long n1_c = s_M;
  const long long n2_c = s_N;
  const long long tile_m = s_M, tile_n = s_N, tile_k = s_K;
  const long long tile_nb = tile_n > 0 ? (tile_n + 63) / 64 : 1;
  const long long tile_bt = (long long)blockIdx.x / tile_nb, tile_r0 = (long long)blockIdx.y * 64, tile_c0 = ((long long)blockIdx.x % tile_nb) * 64;
  if (tile_bt >= s_B) return;
  const long long tile_btv = tile_bt + 0;
  const float *const tile_a_h = p_a + tile_bt * (n1_a * n2_a);
  const float *const tile_b_h = p_b + tile_bt * (n1_b * n2_b);
  if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;
  __shared__ __align__(16) float tile_as[2][16][68], tile_bs[2][16][68];
  const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;
  float tile_acc[4][4];
  #pragma unroll
  for (int tile_r = 0; tile_r < 4; tile_r++) {
    #pragma unroll
    for (int tile_q = 0; tile_q < 4; tile_q++) tile_acc[tile_r][tile_q] = 0.0f;
  }
  float tile_ra[4], tile_rb[4];
  const bool tile_afast = (n2_a) % 4 == 0 && ((unsigned long long)(const void *)tile_a_h & 15ull) == 0 && tile_r0 + 64 <= tile_m;
  const bool tile_bfast = (n2_b) % 4 == 0 && ((unsigned long long)(const void *)tile_b_h & 15ull) == 0 && tile_c0 + 64 <= tile_n;
  {
    const long long tile_kf = 0;
    const bool tile_kin = tile_kf + 16 <= tile_k;
    #pragma unroll
    for (int tile_v = 0; tile_v < 1; tile_v++) {
      const int tile_sq = tile_t + tile_v * 256;
      const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
      const int tile_bk = tile_sq / 16, tile_bo = (tile_sq % 16) * 4;
      if (tile_afast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)]);
        tile_ra[tile_v * 4 + 0] = tile_x.x;
        tile_ra[tile_v * 4 + 1] = tile_x.y;
        tile_ra[tile_v * 4 + 2] = tile_x.z;
        tile_ra[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)] : 0.0f;
        tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 1)] : 0.0f;
        tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 2)] : 0.0f;
        tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 3)] : 0.0f;
      }
      if (tile_bfast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)]);
        tile_rb[tile_v * 4 + 0] = tile_x.x;
        tile_rb[tile_v * 4 + 1] = tile_x.y;
        tile_rb[tile_v * 4 + 2] = tile_x.z;
        tile_rb[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)] : 0.0f;
        tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 1)] : 0.0f;
        tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 2)] : 0.0f;
        tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 3)] : 0.0f;
      }
    }
  }
  #pragma unroll
  for (int tile_v = 0; tile_v < 1; tile_v++) {
    const int tile_sq = tile_t + tile_v * 256;
    const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
    const int tile_bk = tile_sq / 16, tile_bo = (tile_sq % 16) * 4;
    tile_as[0][tile_ak + 0][tile_ao] = tile_ra[tile_v * 4 + 0];
    tile_as[0][tile_ak + 1][tile_ao] = tile_ra[tile_v * 4 + 1];
    tile_as[0][tile_ak + 2][tile_ao] = tile_ra[tile_v * 4 + 2];
    tile_as[0][tile_ak + 3][tile_ao] = tile_ra[tile_v * 4 + 3];
    *reinterpret_cast<float4 *>(&tile_bs[0][tile_bk][tile_bo]) = make_float4(tile_rb[tile_v * 4 + 0], tile_rb[tile_v * 4 + 1], tile_rb[tile_v * 4 + 2], tile_rb[tile_v * 4 + 3]);
  }
  __syncthreads();
  for (long long tile_k0 = 0; tile_k0 < tile_k; tile_k0 += 16) {
    const int tile_cur = (int)((tile_k0 / 16) & 1);
    const bool tile_more = tile_k0 + 16 < tile_k;
    if (tile_more) {
      {
        const long long tile_kf = tile_k0 + 16;
        const bool tile_kin = tile_kf + 16 <= tile_k;
        #pragma unroll
        for (int tile_v = 0; tile_v < 1; tile_v++) {
          const int tile_sq = tile_t + tile_v * 256;
          const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
          const int tile_bk = tile_sq / 16, tile_bo = (tile_sq % 16) * 4;
          if (tile_afast && tile_kin) {
            const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)]);
            tile_ra[tile_v * 4 + 0] = tile_x.x;
            tile_ra[tile_v * 4 + 1] = tile_x.y;
            tile_ra[tile_v * 4 + 2] = tile_x.z;
            tile_ra[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 0)] : 0.0f;
            tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 1)] : 0.0f;
            tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 2)] : 0.0f;
            tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? tile_a_h[(tile_r0 + tile_ao) * n2_a + (tile_kf + tile_ak + 3)] : 0.0f;
          }
          if (tile_bfast && tile_kin) {
            const float4 tile_x = *reinterpret_cast<const float4 *>(&tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)]);
            tile_rb[tile_v * 4 + 0] = tile_x.x;
            tile_rb[tile_v * 4 + 1] = tile_x.y;
            tile_rb[tile_v * 4 + 2] = tile_x.z;
            tile_rb[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 0)] : 0.0f;
            tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 1)] : 0.0f;
            tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 2)] : 0.0f;
            tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? tile_b_h[(tile_kf + tile_bk) * n2_b + (tile_c0 + tile_bo + 3)] : 0.0f;
          }
        }
      }
    }
    #pragma unroll
    for (int tile_kk = 0; tile_kk < 16; tile_kk++) {
      float tile_fa[4], tile_fb[4];
      #pragma unroll
      for (int tile_g = 0; tile_g < 1; tile_g++) {
        { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&tile_as[tile_cur][tile_kk][tile_g * 64 + tile_ty * 4]); tile_fa[tile_g * 4] = tile_v4.x; tile_fa[tile_g * 4 + 1] = tile_v4.y; tile_fa[tile_g * 4 + 2] = tile_v4.z; tile_fa[tile_g * 4 + 3] = tile_v4.w; }
        { const float4 tile_v4 = *reinterpret_cast<const float4 *>(&tile_bs[tile_cur][tile_kk][tile_g * 64 + tile_tx * 4]); tile_fb[tile_g * 4] = tile_v4.x; tile_fb[tile_g * 4 + 1] = tile_v4.y; tile_fb[tile_g * 4 + 2] = tile_v4.z; tile_fb[tile_g * 4 + 3] = tile_v4.w; }
      }
      #pragma unroll
      for (int tile_r = 0; tile_r < 4; tile_r++) {
        #pragma unroll
        for (int tile_q = 0; tile_q < 4; tile_q++) tile_acc[tile_r][tile_q] = fmaf(tile_fa[tile_r], tile_fb[tile_q], tile_acc[tile_r][tile_q]);
      }
    }
    if (tile_more) {
      #pragma unroll
      for (int tile_v = 0; tile_v < 1; tile_v++) {
        const int tile_sq = tile_t + tile_v * 256;
        const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
        const int tile_bk = tile_sq / 16, tile_bo = (tile_sq % 16) * 4;
        tile_as[tile_cur ^ 1][tile_ak + 0][tile_ao] = tile_ra[tile_v * 4 + 0];
        tile_as[tile_cur ^ 1][tile_ak + 1][tile_ao] = tile_ra[tile_v * 4 + 1];
        tile_as[tile_cur ^ 1][tile_ak + 2][tile_ao] = tile_ra[tile_v * 4 + 2];
        tile_as[tile_cur ^ 1][tile_ak + 3][tile_ao] = tile_ra[tile_v * 4 + 3];
        *reinterpret_cast<float4 *>(&tile_bs[tile_cur ^ 1][tile_bk][tile_bo]) = make_float4(tile_rb[tile_v * 4 + 0], tile_rb[tile_v * 4 + 1], tile_rb[tile_v * 4 + 2], tile_rb[tile_v * 4 + 3]);
      }
    }
    __syncthreads();
  }
  #pragma unroll
  for (int tile_r = 0; tile_r < 4; tile_r++) {
    const long long tile_i = tile_r0 + (tile_r / 4) * 64 + tile_ty * 4 + tile_r % 4;
    if (tile_i >= tile_m) continue;
    #pragma unroll
    for (int tile_q = 0; tile_q < 4; tile_q++) {
      const long long tile_j = tile_c0 + (tile_q / 4) * 64 + tile_tx * 4 + tile_q % 4;
      if (tile_j >= tile_n) continue;
      const long long tile_iv = tile_i + 0, tile_jv = tile_j + 0;
      if (!(tile_btv >= 0 && tile_btv < n0_c && tile_iv >= 0 && tile_iv < n1_c && tile_jv >= 0 && tile_jv < n2_c)) TILE_FAIL(300001);
      p_c[((tile_btv * n1_c + tile_iv) * n2_c + tile_jv)] = tile_acc[tile_r][tile_q];
    }
  }
}
