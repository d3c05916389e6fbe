/* Tile: CUDA kernels of program `matmul` (1 kernel). */

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

/* k0: row_reduction over i in 0..M; stores c; reads a, b */
extern "C" __global__ void tile_k0(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_K = a.S[1];
  const long long s_N = a.S[2];
  const float *__restrict__ p_a = (const float *)a.A[0];
  const long long n0_a = s_M;
  const long long n1_a = s_K;
  const float *__restrict__ p_b = (const float *)a.A[1];
  const long long n0_b = s_K;
  const long long n1_b = s_N;
  float *__restrict__ p_c = (float *)a.A[2];
  const long long n0_c = s_M;
  const long long n1_c = s_N;
  const long long dl0 = 0, dn0 = s_M;
  __shared__ double tile_smem[64];
  for (long long r = blockIdx.x; r < dn0; r += gridDim.x) {
    const long long v_i = dl0 + r;
    const long long bnd0 = 0, bnd1 = s_N;
    if (bnd1 > bnd0) {
      if (!(v_i >= 0 && v_i < n0_c && bnd0 >= 0 && (bnd1 - 1) < n1_c)) TILE_FAIL(1);
    }
    {
      const long long len0 = (long long)(bnd1 - bnd0);
      long long quad0 = (long long)threadIdx.x * 4;
      for (; quad0 + 3 < len0; quad0 += (long long)blockDim.x * 4) {
        const long long qb0 = bnd0 + quad0;
        float red0;
        {
          const long long bnd2 = 0, bnd3 = s_K;
          if (bnd3 > bnd2) {
            if (!(v_i >= 0 && v_i < n0_a && bnd2 >= 0 && (bnd3 - 1) < n1_a)) TILE_FAIL(2);
            if (!(bnd2 >= 0 && (bnd3 - 1) < n0_b && (qb0 + 0) >= 0 && (qb0 + 0) < n1_b)) TILE_FAIL(3);
          }
          double acc0 = 0.0;
          for (long long v_k = bnd2; v_k < bnd3; v_k++) {
            const float ld0 = p_a[(v_i * n1_a + v_k)];
            const long long alu0 = (qb0 + 0);
            const float ld1 = p_b[(v_k * n1_b + alu0)];
            acc0 = acc0 + ((double)(ld0 * ld1));
          }
          red0 = ((float)acc0);
        }
        const long long alu1 = (qb0 + 0);
        p_c[(v_i * n1_c + alu1)] = red0;
        float red1;
        {
          const long long bnd4 = 0, bnd5 = s_K;
          if (bnd5 > bnd4) {
            if (!(v_i >= 0 && v_i < n0_a && bnd4 >= 0 && (bnd5 - 1) < n1_a)) TILE_FAIL(2);
            if (!(bnd4 >= 0 && (bnd5 - 1) < n0_b && (qb0 + 1) >= 0 && (qb0 + 1) < n1_b)) TILE_FAIL(3);
          }
          double acc1 = 0.0;
          for (long long v_k = bnd4; v_k < bnd5; v_k++) {
            const float ld2 = p_a[(v_i * n1_a + v_k)];
            const long long alu2 = (qb0 + 1);
            const float ld3 = p_b[(v_k * n1_b + alu2)];
            acc1 = acc1 + ((double)(ld2 * ld3));
          }
          red1 = ((float)acc1);
        }
        const long long alu3 = (qb0 + 1);
        p_c[(v_i * n1_c + alu3)] = red1;
        float red2;
        {
          const long long bnd6 = 0, bnd7 = s_K;
          if (bnd7 > bnd6) {
            if (!(v_i >= 0 && v_i < n0_a && bnd6 >= 0 && (bnd7 - 1) < n1_a)) TILE_FAIL(2);
            if (!(bnd6 >= 0 && (bnd7 - 1) < n0_b && (qb0 + 2) >= 0 && (qb0 + 2) < n1_b)) TILE_FAIL(3);
          }
          double acc2 = 0.0;
          for (long long v_k = bnd6; v_k < bnd7; v_k++) {
            const float ld4 = p_a[(v_i * n1_a + v_k)];
            const long long alu4 = (qb0 + 2);
            const float ld5 = p_b[(v_k * n1_b + alu4)];
            acc2 = acc2 + ((double)(ld4 * ld5));
          }
          red2 = ((float)acc2);
        }
        const long long alu5 = (qb0 + 2);
        p_c[(v_i * n1_c + alu5)] = red2;
        float red3;
        {
          const long long bnd8 = 0, bnd9 = s_K;
          if (bnd9 > bnd8) {
            if (!(v_i >= 0 && v_i < n0_a && bnd8 >= 0 && (bnd9 - 1) < n1_a)) TILE_FAIL(2);
            if (!(bnd8 >= 0 && (bnd9 - 1) < n0_b && (qb0 + 3) >= 0 && (qb0 + 3) < n1_b)) TILE_FAIL(3);
          }
          double acc3 = 0.0;
          for (long long v_k = bnd8; v_k < bnd9; v_k++) {
            const float ld6 = p_a[(v_i * n1_a + v_k)];
            const long long alu6 = (qb0 + 3);
            const float ld7 = p_b[(v_k * n1_b + alu6)];
            acc3 = acc3 + ((double)(ld6 * ld7));
          }
          red3 = ((float)acc3);
        }
        const long long alu7 = (qb0 + 3);
        p_c[(v_i * n1_c + alu7)] = red3;
      }
      for (long long q0 = quad0; q0 < len0; q0++) {
        const long long v_j = bnd0 + q0;
        float red4;
        {
          const long long bnd10 = 0, bnd11 = s_K;
          if (bnd11 > bnd10) {
            if (!(v_i >= 0 && v_i < n0_a && bnd10 >= 0 && (bnd11 - 1) < n1_a)) TILE_FAIL(2);
            if (!(bnd10 >= 0 && (bnd11 - 1) < n0_b && v_j >= 0 && v_j < n1_b)) TILE_FAIL(3);
          }
          double acc4 = 0.0;
          for (long long v_k = bnd10; v_k < bnd11; v_k++) {
            const float ld8 = p_a[(v_i * n1_a + v_k)];
            const float ld9 = p_b[(v_k * n1_b + v_j)];
            acc4 = acc4 + ((double)(ld8 * ld9));
          }
          red4 = ((float)acc4);
        }
        p_c[(v_i * n1_c + v_j)] = red4;
      }
    }
    __syncthreads();
  }
}

/* k0 (a tile of products per block, TF32 tensor cores for f32, then the epilogue): row_reduction over i in 0..M; stores c; reads a, b */
extern "C" __global__ void __launch_bounds__(256, 2) tile_k0_mm(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_K = a.S[1];
  const long long s_N = a.S[2];
  const float *__restrict__ p_a = (const float *)a.A[0];
  const long long n0_a = s_M;
  const long long n1_a = s_K;
  const float *__restrict__ p_b = (const float *)a.A[1];
  const long long n0_b = s_K;
  const long long n1_b = s_N;
  float *__restrict__ p_c = (float *)a.A[2];
  const long long n0_c = s_M;
  const long long n1_c = s_N;
  const long long tile_m = s_M, tile_n = s_N, tile_k = s_K;
  const long long tile_r0 = (long long)blockIdx.y * 128, tile_c0 = (long long)blockIdx.x * 128;
  if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;
  __shared__ __align__(16) float tile_as[2][16][136], tile_bs[2][16][136];
  const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;
  const int tile_w = tile_t / 32, tile_g = (tile_t % 32) / 4, tile_h = tile_t % 4;
  const int tile_wr = (tile_w / 4) * 64, tile_wc = (tile_w % 4) * 32;
  float tile_acc[4][4][4];
  #pragma unroll
  for (int tile_r = 0; tile_r < 4; tile_r++) {
    #pragma unroll
    for (int tile_q = 0; tile_q < 4; tile_q++) tile_acc[tile_r][tile_q][0] = tile_acc[tile_r][tile_q][1] = tile_acc[tile_r][tile_q][2] = tile_acc[tile_r][tile_q][3] = 0.0f;
  }
  float tile_ra[8], tile_rb[8];
  const bool tile_afast = (n1_a) % 4 == 0 && ((unsigned long long)(const void *)p_a & 15ull) == 0 && tile_r0 + 128 <= tile_m;
  const bool tile_bfast = (n1_b) % 4 == 0 && ((unsigned long long)(const void *)p_b & 15ull) == 0 && tile_c0 + 128 <= tile_n;
  auto tile_tf32 = [](float x) { unsigned u; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x)); return __uint_as_float(u); };
  {
    const long long tile_kf = 0;
    const bool tile_kin = tile_kf + 16 <= tile_k;
    #pragma unroll
    for (int tile_v = 0; tile_v < 2; tile_v++) {
      const int tile_sq = tile_t + tile_v * 256;
      const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
      const int tile_bk = tile_sq / 32, tile_bo = (tile_sq % 32) * 4;
      if (tile_afast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)]);
        tile_ra[tile_v * 4 + 0] = tile_x.x;
        tile_ra[tile_v * 4 + 1] = tile_x.y;
        tile_ra[tile_v * 4 + 2] = tile_x.z;
        tile_ra[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)] : 0.0f;
        tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 1)] : 0.0f;
        tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 2)] : 0.0f;
        tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 3)] : 0.0f;
      }
      if (tile_bfast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)]);
        tile_rb[tile_v * 4 + 0] = tile_x.x;
        tile_rb[tile_v * 4 + 1] = tile_x.y;
        tile_rb[tile_v * 4 + 2] = tile_x.z;
        tile_rb[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)] : 0.0f;
        tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 1)] : 0.0f;
        tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 2)] : 0.0f;
        tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 3)] : 0.0f;
      }
    }
  }
  #pragma unroll
  for (int tile_v = 0; tile_v < 2; tile_v++) {
    #pragma unroll
    for (int tile_u = 0; tile_u < 4; tile_u++) { tile_ra[tile_v * 4 + tile_u] = tile_tf32(tile_ra[tile_v * 4 + tile_u]); tile_rb[tile_v * 4 + tile_u] = tile_tf32(tile_rb[tile_v * 4 + tile_u]); }
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
            const float4 tile_x = *reinterpret_cast<const float4 *>(&p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)]);
            tile_ra[tile_v * 4 + 0] = tile_x.x;
            tile_ra[tile_v * 4 + 1] = tile_x.y;
            tile_ra[tile_v * 4 + 2] = tile_x.z;
            tile_ra[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)] : 0.0f;
            tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 1)] : 0.0f;
            tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 2)] : 0.0f;
            tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 3)] : 0.0f;
          }
          if (tile_bfast && tile_kin) {
            const float4 tile_x = *reinterpret_cast<const float4 *>(&p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)]);
            tile_rb[tile_v * 4 + 0] = tile_x.x;
            tile_rb[tile_v * 4 + 1] = tile_x.y;
            tile_rb[tile_v * 4 + 2] = tile_x.z;
            tile_rb[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)] : 0.0f;
            tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 1)] : 0.0f;
            tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 2)] : 0.0f;
            tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 3)] : 0.0f;
          }
        }
      }
    }
    #pragma unroll
    for (int tile_kk = 0; tile_kk < 16; tile_kk += 8) {
      unsigned tile_fa[4][4], tile_fb[4][2];
      #pragma unroll
      for (int tile_r = 0; tile_r < 4; tile_r++) {
        const int tile_ar = tile_wr + tile_r * 16 + tile_g;
        tile_fa[tile_r][0] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h][tile_ar]);
        tile_fa[tile_r][1] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h][tile_ar + 8]);
        tile_fa[tile_r][2] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h + 4][tile_ar]);
        tile_fa[tile_r][3] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h + 4][tile_ar + 8]);
      }
      #pragma unroll
      for (int tile_q = 0; tile_q < 4; tile_q++) {
        const int tile_bc = tile_wc + tile_q * 8 + tile_g;
        tile_fb[tile_q][0] = __float_as_uint(tile_bs[tile_cur][tile_kk + tile_h][tile_bc]);
        tile_fb[tile_q][1] = __float_as_uint(tile_bs[tile_cur][tile_kk + tile_h + 4][tile_bc]);
      }
      #pragma unroll
      for (int tile_r = 0; tile_r < 4; tile_r++) {
        #pragma unroll
        for (int tile_q = 0; tile_q < 4; tile_q++) {
          float *const tile_d = tile_acc[tile_r][tile_q];
          asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" : "+f"(tile_d[0]), "+f"(tile_d[1]), "+f"(tile_d[2]), "+f"(tile_d[3]) : "r"(tile_fa[tile_r][0]), "r"(tile_fa[tile_r][1]), "r"(tile_fa[tile_r][2]), "r"(tile_fa[tile_r][3]), "r"(tile_fb[tile_q][0]), "r"(tile_fb[tile_q][1]));
        }
      }
    }
    if (tile_more) {
      #pragma unroll
      for (int tile_v = 0; tile_v < 2; tile_v++) {
        #pragma unroll
        for (int tile_u = 0; tile_u < 4; tile_u++) { tile_ra[tile_v * 4 + tile_u] = tile_tf32(tile_ra[tile_v * 4 + tile_u]); tile_rb[tile_v * 4 + tile_u] = tile_tf32(tile_rb[tile_v * 4 + tile_u]); }
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
  for (int tile_r = 0; tile_r < 4; tile_r++) {
    #pragma unroll
    for (int tile_q = 0; tile_q < 4; tile_q++) {
      #pragma unroll
      for (int tile_e = 0; tile_e < 4; tile_e++) {
        const long long tile_i = tile_r0 + tile_wr + tile_r * 16 + tile_g + (tile_e / 2) * 8;
        const long long tile_j = tile_c0 + tile_wc + tile_q * 8 + tile_h * 2 + tile_e % 2;
        if (tile_i >= tile_m || tile_j >= tile_n) continue;
        const long long tile_iv = tile_i + 0, tile_jv = tile_j + 0;
        if (!(tile_iv >= 0 && tile_iv < n0_c && tile_jv >= 0 && tile_jv < n1_c)) TILE_FAIL(300001);
        p_c[(tile_iv * n1_c + tile_jv)] = tile_acc[tile_r][tile_q][tile_e];
      }
    }
  }
}

/* k0 (a tile of products per block, TF32 tensor cores for f32, then the epilogue): row_reduction over i in 0..M; stores c; reads a, b */
extern "C" __global__ void __launch_bounds__(256, 2) tile_k0_mm64(const TileArgs a) {
  int *err = a.err;
  const long long s_M = a.S[0];
  const long long s_K = a.S[1];
  const long long s_N = a.S[2];
  const float *__restrict__ p_a = (const float *)a.A[0];
  const long long n0_a = s_M;
  const long long n1_a = s_K;
  const float *__restrict__ p_b = (const float *)a.A[1];
  const long long n0_b = s_K;
  const long long n1_b = s_N;
  float *__restrict__ p_c = (float *)a.A[2];
  const long long n0_c = s_M;
  const long long n1_c = s_N;
  const long long tile_m = s_M, tile_n = s_N, tile_k = s_K;
  const long long tile_r0 = (long long)blockIdx.y * 64, tile_c0 = (long long)blockIdx.x * 64;
  if (tile_r0 >= tile_m || tile_c0 >= tile_n) return;
  __shared__ __align__(16) float tile_as[2][16][72], tile_bs[2][16][72];
  const int tile_t = threadIdx.x, tile_tx = tile_t % 16, tile_ty = tile_t / 16;
  const int tile_w = tile_t / 32, tile_g = (tile_t % 32) / 4, tile_h = tile_t % 4;
  const int tile_wr = (tile_w / 4) * 32, tile_wc = (tile_w % 4) * 16;
  float tile_acc[2][2][4];
  #pragma unroll
  for (int tile_r = 0; tile_r < 2; tile_r++) {
    #pragma unroll
    for (int tile_q = 0; tile_q < 2; tile_q++) tile_acc[tile_r][tile_q][0] = tile_acc[tile_r][tile_q][1] = tile_acc[tile_r][tile_q][2] = tile_acc[tile_r][tile_q][3] = 0.0f;
  }
  float tile_ra[4], tile_rb[4];
  const bool tile_afast = (n1_a) % 4 == 0 && ((unsigned long long)(const void *)p_a & 15ull) == 0 && tile_r0 + 64 <= tile_m;
  const bool tile_bfast = (n1_b) % 4 == 0 && ((unsigned long long)(const void *)p_b & 15ull) == 0 && tile_c0 + 64 <= tile_n;
  auto tile_tf32 = [](float x) { unsigned u; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x)); return __uint_as_float(u); };
  {
    const long long tile_kf = 0;
    const bool tile_kin = tile_kf + 16 <= tile_k;
    #pragma unroll
    for (int tile_v = 0; tile_v < 1; tile_v++) {
      const int tile_sq = tile_t + tile_v * 256;
      const int tile_ao = tile_sq / 4, tile_ak = (tile_sq % 4) * 4;
      const int tile_bk = tile_sq / 16, tile_bo = (tile_sq % 16) * 4;
      if (tile_afast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)]);
        tile_ra[tile_v * 4 + 0] = tile_x.x;
        tile_ra[tile_v * 4 + 1] = tile_x.y;
        tile_ra[tile_v * 4 + 2] = tile_x.z;
        tile_ra[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)] : 0.0f;
        tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 1)] : 0.0f;
        tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 2)] : 0.0f;
        tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 3)] : 0.0f;
      }
      if (tile_bfast && tile_kin) {
        const float4 tile_x = *reinterpret_cast<const float4 *>(&p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)]);
        tile_rb[tile_v * 4 + 0] = tile_x.x;
        tile_rb[tile_v * 4 + 1] = tile_x.y;
        tile_rb[tile_v * 4 + 2] = tile_x.z;
        tile_rb[tile_v * 4 + 3] = tile_x.w;
      }
      else {
        tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)] : 0.0f;
        tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 1)] : 0.0f;
        tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 2)] : 0.0f;
        tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 3)] : 0.0f;
      }
    }
  }
  #pragma unroll
  for (int tile_v = 0; tile_v < 1; tile_v++) {
    #pragma unroll
    for (int tile_u = 0; tile_u < 4; tile_u++) { tile_ra[tile_v * 4 + tile_u] = tile_tf32(tile_ra[tile_v * 4 + tile_u]); tile_rb[tile_v * 4 + tile_u] = tile_tf32(tile_rb[tile_v * 4 + tile_u]); }
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
            const float4 tile_x = *reinterpret_cast<const float4 *>(&p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)]);
            tile_ra[tile_v * 4 + 0] = tile_x.x;
            tile_ra[tile_v * 4 + 1] = tile_x.y;
            tile_ra[tile_v * 4 + 2] = tile_x.z;
            tile_ra[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_ra[tile_v * 4 + 0] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 0 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 0)] : 0.0f;
            tile_ra[tile_v * 4 + 1] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 1 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 1)] : 0.0f;
            tile_ra[tile_v * 4 + 2] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 2 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 2)] : 0.0f;
            tile_ra[tile_v * 4 + 3] = (tile_r0 + tile_ao < tile_m && tile_kf + tile_ak + 3 < tile_k) ? p_a[(tile_r0 + tile_ao) * n1_a + (tile_kf + tile_ak + 3)] : 0.0f;
          }
          if (tile_bfast && tile_kin) {
            const float4 tile_x = *reinterpret_cast<const float4 *>(&p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)]);
            tile_rb[tile_v * 4 + 0] = tile_x.x;
            tile_rb[tile_v * 4 + 1] = tile_x.y;
            tile_rb[tile_v * 4 + 2] = tile_x.z;
            tile_rb[tile_v * 4 + 3] = tile_x.w;
          }
          else {
            tile_rb[tile_v * 4 + 0] = (tile_c0 + tile_bo + 0 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 0)] : 0.0f;
            tile_rb[tile_v * 4 + 1] = (tile_c0 + tile_bo + 1 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 1)] : 0.0f;
            tile_rb[tile_v * 4 + 2] = (tile_c0 + tile_bo + 2 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 2)] : 0.0f;
            tile_rb[tile_v * 4 + 3] = (tile_c0 + tile_bo + 3 < tile_n && tile_kf + tile_bk < tile_k) ? p_b[(tile_kf + tile_bk) * n1_b + (tile_c0 + tile_bo + 3)] : 0.0f;
          }
        }
      }
    }
    #pragma unroll
    for (int tile_kk = 0; tile_kk < 16; tile_kk += 8) {
      unsigned tile_fa[2][4], tile_fb[2][2];
      #pragma unroll
      for (int tile_r = 0; tile_r < 2; tile_r++) {
        const int tile_ar = tile_wr + tile_r * 16 + tile_g;
        tile_fa[tile_r][0] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h][tile_ar]);
        tile_fa[tile_r][1] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h][tile_ar + 8]);
        tile_fa[tile_r][2] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h + 4][tile_ar]);
        tile_fa[tile_r][3] = __float_as_uint(tile_as[tile_cur][tile_kk + tile_h + 4][tile_ar + 8]);
      }
      #pragma unroll
      for (int tile_q = 0; tile_q < 2; tile_q++) {
        const int tile_bc = tile_wc + tile_q * 8 + tile_g;
        tile_fb[tile_q][0] = __float_as_uint(tile_bs[tile_cur][tile_kk + tile_h][tile_bc]);
        tile_fb[tile_q][1] = __float_as_uint(tile_bs[tile_cur][tile_kk + tile_h + 4][tile_bc]);
      }
      #pragma unroll
      for (int tile_r = 0; tile_r < 2; tile_r++) {
        #pragma unroll
        for (int tile_q = 0; tile_q < 2; tile_q++) {
          float *const tile_d = tile_acc[tile_r][tile_q];
          asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" : "+f"(tile_d[0]), "+f"(tile_d[1]), "+f"(tile_d[2]), "+f"(tile_d[3]) : "r"(tile_fa[tile_r][0]), "r"(tile_fa[tile_r][1]), "r"(tile_fa[tile_r][2]), "r"(tile_fa[tile_r][3]), "r"(tile_fb[tile_q][0]), "r"(tile_fb[tile_q][1]));
        }
      }
    }
    if (tile_more) {
      #pragma unroll
      for (int tile_v = 0; tile_v < 1; tile_v++) {
        #pragma unroll
        for (int tile_u = 0; tile_u < 4; tile_u++) { tile_ra[tile_v * 4 + tile_u] = tile_tf32(tile_ra[tile_v * 4 + tile_u]); tile_rb[tile_v * 4 + tile_u] = tile_tf32(tile_rb[tile_v * 4 + tile_u]); }
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
  for (int tile_r = 0; tile_r < 2; tile_r++) {
    #pragma unroll
    for (int tile_q = 0; tile_q < 2; tile_q++) {
      #pragma unroll
      for (int tile_e = 0; tile_e < 4; tile_e++) {
        const long long tile_i = tile_r0 + tile_wr + tile_r * 16 + tile_g + (tile_e / 2) * 8;
        const long long tile_j = tile_c0 + tile_wc + tile_q * 8 + tile_h * 2 + tile_e % 2;
        if (tile_i >= tile_m || tile_j >= tile_n) continue;
        const long long tile_iv = tile_i + 0, tile_jv = tile_j + 0;
        if (!(tile_iv >= 0 && tile_iv < n0_c && tile_jv >= 0 && tile_jv < n1_c)) TILE_FAIL(300001);
        p_c[(tile_iv * n1_c + tile_jv)] = tile_acc[tile_r][tile_q][tile_e];
      }
    }
  }
}
