// Row-kernel probe for the H200: the generated softmax / RMSNorm / LayerNorm
// kernels (from `tile emit`) against hand-written variants (rows in registers,
// rows staged with cp.async, a persistent double-buffered pipeline), each
// timed against a device-to-device copy. Run with bench/row_probe/run.sh.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <string>
#include <functional>
#include <cmath>
#include <cuda_runtime.h>

struct TileArgs { long long lo, hi; long long S[16]; void *A[32]; int *err; };
extern "C" __global__ void softmax_k0(const TileArgs a);
extern "C" __global__ void softmax_k0_rows(const TileArgs a);
extern "C" __global__ void rmsnorm_k0(const TileArgs a);
extern "C" __global__ void rmsnorm_k0_rows(const TileArgs a);
extern "C" __global__ void layernorm_k0(const TileArgs a);
extern "C" __global__ void layernorm_k0_rows(const TileArgs a);
extern "C" __global__ void softmaxu_k0(const TileArgs a);
extern "C" __global__ void softmaxu_k0_rows(const TileArgs a);
extern "C" __global__ void rmsnormu_k0(const TileArgs a);
extern "C" __global__ void rmsnormu_k0_rows(const TileArgs a);
extern "C" __global__ void layernormu_k0(const TileArgs a);
extern "C" __global__ void layernormu_k0_rows(const TileArgs a);

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void fill(float *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = (h & 0xffffff) / 16777216.0f * 8.0f - 4.0f;
  }
}
__global__ void copyk(const float4 *__restrict__ s, float4 *__restrict__ d, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) d[i] = s[i];
}

// ---- block reductions with one barrier: every warp's partial in smem, each thread sums them.
template <int B> __device__ __forceinline__ float bsum(float v, float *sm) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = 0.f;
#pragma unroll
  for (int i = 0; i < B / 32; i++) t += sm[i];
  return t;
}
template <int B> __device__ __forceinline__ float bmax(float v, float *sm) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;
  __syncthreads();
  float t = -INFINITY;
#pragma unroll
  for (int i = 0; i < B / 32; i++) t = fmaxf(t, sm[i]);
  return t;
}

// ---- register-resident: thread t holds float4 chunks t, t+B, ... (V of them).
template <int B, int V> __global__ void __launch_bounds__(B) reg_softmax(const float *x, float *y, int N) {
  __shared__ float sm[2][32];
  const float4 *xr = (const float4 *)(x + (size_t)blockIdx.x * N);
  float4 *yr = (float4 *)(y + (size_t)blockIdx.x * N);
  const int n4 = N >> 2;
  float4 v[V];
#pragma unroll
  for (int c = 0; c < V; c++) { int q = threadIdx.x + c * B; v[c] = q < n4 ? xr[q] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY); }
  float m = -INFINITY;
#pragma unroll
  for (int c = 0; c < V; c++) m = fmaxf(m, fmaxf(fmaxf(v[c].x, v[c].y), fmaxf(v[c].z, v[c].w)));
  m = bmax<B>(m, sm[0]);
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < V; c++) {
    int q = threadIdx.x + c * B;
    if (q < n4) { v[c].x = expf(v[c].x - m); v[c].y = expf(v[c].y - m); v[c].z = expf(v[c].z - m); v[c].w = expf(v[c].w - m); s += v[c].x + v[c].y + v[c].z + v[c].w; }
  }
  s = bsum<B>(s, sm[1]);
#pragma unroll
  for (int c = 0; c < V; c++) { int q = threadIdx.x + c * B; if (q < n4) yr[q] = make_float4(v[c].x / s, v[c].y / s, v[c].z / s, v[c].w / s); }
}
template <int B, int V> __global__ void __launch_bounds__(B) reg_layernorm(const float *x, const float *w, const float *b, float *y, int N) {
  __shared__ float sm[2][32];
  const float4 *xr = (const float4 *)(x + (size_t)blockIdx.x * N);
  float4 *yr = (float4 *)(y + (size_t)blockIdx.x * N);
  const int n4 = N >> 2;
  float4 v[V];
#pragma unroll
  for (int c = 0; c < V; c++) { int q = threadIdx.x + c * B; v[c] = q < n4 ? xr[q] : make_float4(0, 0, 0, 0); }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < V; c++) s += v[c].x + v[c].y + v[c].z + v[c].w;
  const float mean = bsum<B>(s, sm[0]) / (float)N;
  float s2 = 0.f;
#pragma unroll
  for (int c = 0; c < V; c++) {
    int q = threadIdx.x + c * B;
    if (q < n4) { float a = v[c].x - mean, bb = v[c].y - mean, cc = v[c].z - mean, d = v[c].w - mean; s2 += a * a + bb * bb + cc * cc + d * d; }
  }
  const float r = 1.0f / sqrtf(bsum<B>(s2, sm[1]) / (float)N + 1e-5f);
#pragma unroll
  for (int c = 0; c < V; c++) {
    int q = threadIdx.x + c * B;
    if (q < n4) {
      float4 ww = ((const float4 *)w)[q], bq = ((const float4 *)b)[q];
      yr[q] = make_float4((v[c].x - mean) * r * ww.x + bq.x, (v[c].y - mean) * r * ww.y + bq.y, (v[c].z - mean) * r * ww.z + bq.z, (v[c].w - mean) * r * ww.w + bq.w);
    }
  }
}

// ---- shared-memory staged with cp.async; passes read float4 from smem.
__device__ __forceinline__ void cp16(void *smem, const void *g) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g));
}
template <int B> __global__ void __launch_bounds__(B) async_layernorm(const float *x, const float *w, const float *b, float *y, int N) {
  extern __shared__ float4 rows4[];
  __shared__ float sm[2][32];
  const float4 *xr = (const float4 *)(x + (size_t)blockIdx.x * N);
  float4 *yr = (float4 *)(y + (size_t)blockIdx.x * N);
  const int n4 = N >> 2;
  for (int q = threadIdx.x; q < n4; q += B) cp16(&rows4[q], &xr[q]);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  float s = 0.f;
  for (int q = threadIdx.x; q < n4; q += B) { float4 v = rows4[q]; s += v.x + v.y + v.z + v.w; }
  const float mean = bsum<B>(s, sm[0]) / (float)N;
  float s2 = 0.f;
  for (int q = threadIdx.x; q < n4; q += B) { float4 v = rows4[q]; float a = v.x - mean, bb = v.y - mean, cc = v.z - mean, d = v.w - mean; s2 += a * a + bb * bb + cc * cc + d * d; }
  const float r = 1.0f / sqrtf(bsum<B>(s2, sm[1]) / (float)N + 1e-5f);
  for (int q = threadIdx.x; q < n4; q += B) {
    float4 v = rows4[q], ww = ((const float4 *)w)[q], bq = ((const float4 *)b)[q];
    yr[q] = make_float4((v.x - mean) * r * ww.x + bq.x, (v.y - mean) * r * ww.y + bq.y, (v.z - mean) * r * ww.z + bq.z, (v.w - mean) * r * ww.w + bq.w);
  }
}
// Scalar smem passes (like the generated code) but cp.async staging: isolates the copy.
template <int B> __global__ void __launch_bounds__(B) async_scalar_layernorm(const float *x, const float *w, const float *b, float *y, int N) {
  extern __shared__ float4 rows4[];
  float *rows = (float *)rows4;
  __shared__ float sm[2][32];
  const float4 *xr = (const float4 *)(x + (size_t)blockIdx.x * N);
  float *yr = y + (size_t)blockIdx.x * N;
  const int n4 = N >> 2;
  for (int q = threadIdx.x; q < n4; q += B) cp16(&rows4[q], &xr[q]);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  float s = 0.f;
  for (int q = threadIdx.x; q < N; q += B) s += rows[q];
  const float mean = bsum<B>(s, sm[0]) / (float)N;
  float s2 = 0.f;
  for (int q = threadIdx.x; q < N; q += B) { float a = rows[q] - mean; s2 += a * a; }
  const float r = 1.0f / sqrtf(bsum<B>(s2, sm[1]) / (float)N + 1e-5f);
  for (int q = threadIdx.x; q < N; q += B) yr[q] = (rows[q] - mean) * r * w[q] + b[q];
}
template <int B> __global__ void __launch_bounds__(B) async_softmax(const float *x, float *y, int N) {
  extern __shared__ float4 rows4[];
  __shared__ float sm[2][32];
  const float4 *xr = (const float4 *)(x + (size_t)blockIdx.x * N);
  float4 *yr = (float4 *)(y + (size_t)blockIdx.x * N);
  const int n4 = N >> 2;
  for (int q = threadIdx.x; q < n4; q += B) cp16(&rows4[q], &xr[q]);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  float m = -INFINITY;
  for (int q = threadIdx.x; q < n4; q += B) { float4 v = rows4[q]; m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w))); }
  m = bmax<B>(m, sm[0]);
  float s = 0.f;
  for (int q = threadIdx.x; q < n4; q += B) {
    float4 v = rows4[q];
    v.x = expf(v.x - m); v.y = expf(v.y - m); v.z = expf(v.z - m); v.w = expf(v.w - m);
    rows4[q] = v;  // each thread rewrites only its own chunks: no barrier needed
    s += v.x + v.y + v.z + v.w;
  }
  s = bsum<B>(s, sm[1]);
  for (int q = threadIdx.x; q < n4; q += B) { float4 v = rows4[q]; yr[q] = make_float4(v.x / s, v.y / s, v.z / s, v.w / s); }
}

// async_layernorm with the block size known only at run time (as in generated code).
__device__ __forceinline__ float bsum_rt(float v, float *sm) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = v;
  __syncthreads();
  const int nw = blockDim.x >> 5;
  float t = sm[0];
  for (int i = 1; i < nw; i++) t += sm[i];
  return t;
}
__global__ void asyncrt_layernorm(const float *x, const float *w, const float *b, float *y, int N) {
  extern __shared__ float4 rows4[];
  __shared__ float sm[2][32];
  const float4 *xr = (const float4 *)(x + (size_t)blockIdx.x * N);
  float4 *yr = (float4 *)(y + (size_t)blockIdx.x * N);
  const int n4 = N >> 2;
  for (int q = threadIdx.x; q < n4; q += blockDim.x) cp16(&rows4[q], &xr[q]);
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  float s = 0.f;
  for (int q = threadIdx.x; q < n4; q += blockDim.x) { float4 v = rows4[q]; s += v.x + v.y + v.z + v.w; }
  const float mean = bsum_rt(s, sm[0]) / (float)N;
  float s2 = 0.f;
  for (int q = threadIdx.x; q < n4; q += blockDim.x) { float4 v = rows4[q]; float a = v.x - mean, bb = v.y - mean, cc = v.z - mean, d = v.w - mean; s2 += a * a + bb * bb + cc * cc + d * d; }
  const float r = 1.0f / sqrtf(bsum_rt(s2, sm[1]) / (float)N + 1e-5f);
  for (int q = threadIdx.x; q < n4; q += blockDim.x) {
    float4 v = rows4[q], ww = ((const float4 *)w)[q], bq = ((const float4 *)b)[q];
    yr[q] = make_float4((v.x - mean) * r * ww.x + bq.x, (v.y - mean) * r * ww.y + bq.y, (v.z - mean) * r * ww.z + bq.z, (v.w - mean) * r * ww.w + bq.w);
  }
}

// Persistent blocks, double-buffered staging: the next row's cp.async copies fly while this row computes.
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void wait1() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }
__global__ void pipe_layernorm(const float *x, const float *w, const float *b, float *y, int M, int N) {
  extern __shared__ float4 rows4[];
  __shared__ float sm[2][32];
  const int n4 = N >> 2;
  int r = blockIdx.x;
  if (r < M) { const float4 *xr = (const float4 *)(x + (size_t)r * N); for (int q = threadIdx.x; q < n4; q += blockDim.x) cp16(&rows4[q], &xr[q]); }
  commit();
  for (int k = 0; r < M; r += gridDim.x, k ^= 1) {
    const int nx = r + gridDim.x;
    float4 *nb = rows4 + (k ^ 1) * n4;
    if (nx < M) { const float4 *xr = (const float4 *)(x + (size_t)nx * N); for (int q = threadIdx.x; q < n4; q += blockDim.x) cp16(&nb[q], &xr[q]); }
    commit();
    wait1();
    __syncthreads();
    const float4 *cur = rows4 + k * n4;
    float4 *yr = (float4 *)(y + (size_t)r * N);
    float s = 0.f;
    for (int q = threadIdx.x; q < n4; q += blockDim.x) { float4 v = cur[q]; s += v.x + v.y + v.z + v.w; }
    const float mean = bsum_rt(s, sm[0]) / (float)N;
    float s2 = 0.f;
    for (int q = threadIdx.x; q < n4; q += blockDim.x) { float4 v = cur[q]; float a = v.x - mean, bb = v.y - mean, cc = v.z - mean, d = v.w - mean; s2 += a * a + bb * bb + cc * cc + d * d; }
    const float rr = 1.0f / sqrtf(bsum_rt(s2, sm[1]) / (float)N + 1e-5f);
    for (int q = threadIdx.x; q < n4; q += blockDim.x) {
      float4 v = cur[q], ww = ((const float4 *)w)[q], bq = ((const float4 *)b)[q];
      yr[q] = make_float4((v.x - mean) * rr * ww.x + bq.x, (v.y - mean) * rr * ww.y + bq.y, (v.z - mean) * rr * ww.z + bq.z, (v.w - mean) * rr * ww.w + bq.w);
    }
    __syncthreads();
  }
}
__global__ void pipe_rmsnorm(const float *x, const float *w, float *y, int M, int N) {
  extern __shared__ float4 rows4[];
  __shared__ float sm[2][32];
  const int n4 = N >> 2;
  int r = blockIdx.x;
  if (r < M) { const float4 *xr = (const float4 *)(x + (size_t)r * N); for (int q = threadIdx.x; q < n4; q += blockDim.x) cp16(&rows4[q], &xr[q]); }
  commit();
  for (int k = 0; r < M; r += gridDim.x, k ^= 1) {
    const int nx = r + gridDim.x;
    float4 *nb = rows4 + (k ^ 1) * n4;
    if (nx < M) { const float4 *xr = (const float4 *)(x + (size_t)nx * N); for (int q = threadIdx.x; q < n4; q += blockDim.x) cp16(&nb[q], &xr[q]); }
    commit();
    wait1();
    __syncthreads();
    const float4 *cur = rows4 + k * n4;
    float4 *yr = (float4 *)(y + (size_t)r * N);
    float s = 0.f;
    for (int q = threadIdx.x; q < n4; q += blockDim.x) { float4 v = cur[q]; s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w; }
    const float rr = 1.0f / sqrtf(bsum_rt(s, sm[0]) / (float)N + 1e-5f);
    for (int q = threadIdx.x; q < n4; q += blockDim.x) {
      float4 v = cur[q], ww = ((const float4 *)w)[q];
      yr[q] = make_float4(v.x * rr * ww.x, v.y * rr * ww.y, v.z * rr * ww.z, v.w * rr * ww.w);
    }
    __syncthreads();
  }
}
// Same without the pipeline (one buffer), for the comparison.
__global__ void async_rmsnorm(const float *x, const float *w, float *y, int M, int N) {
  extern __shared__ float4 rows4[];
  __shared__ float sm[2][32];
  const int n4 = N >> 2;
  for (int r = blockIdx.x; r < M; r += gridDim.x) {
    const float4 *xr = (const float4 *)(x + (size_t)r * N);
    for (int q = threadIdx.x; q < n4; q += blockDim.x) cp16(&rows4[q], &xr[q]);
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads();
    float4 *yr = (float4 *)(y + (size_t)r * N);
    float s = 0.f;
    for (int q = threadIdx.x; q < n4; q += blockDim.x) { float4 v = rows4[q]; s += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w; }
    const float rr = 1.0f / sqrtf(bsum_rt(s, sm[0]) / (float)N + 1e-5f);
    for (int q = threadIdx.x; q < n4; q += blockDim.x) {
      float4 v = rows4[q], ww = ((const float4 *)w)[q];
      yr[q] = make_float4(v.x * rr * ww.x, v.y * rr * ww.y, v.z * rr * ww.z, v.w * rr * ww.w);
    }
    __syncthreads();
  }
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static float time_us(const std::function<void()> &f) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; i++) f();
  CK(cudaDeviceSynchronize());
  CK(cudaGetLastError());
  std::vector<float> t;
  const int reps = 50;
  for (int k = 0; k < 9; k++) {
    CK(cudaEventRecord(a));
    for (int i = 0; i < reps; i++) f();
    CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1000.f / reps);
  }
  CK(cudaGetLastError());
  return median(t);
}

int main(int argc, char **argv) {
  int M = argc > 2 ? atoi(argv[1]) : 4096, N = argc > 2 ? atoi(argv[2]) : 4096;
  size_t n = (size_t)M * N;
  float *x, *y, *yref, *w, *b; int *err;
  CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&yref, n * 4));
  CK(cudaMalloc(&w, N * 4)); CK(cudaMalloc(&b, N * 4)); CK(cudaMalloc(&err, 4)); CK(cudaMemset(err, 0, 4));
  fill<<<1024, 256>>>(x, n, 1); fill<<<64, 256>>>(w, N, 2); fill<<<64, 256>>>(b, N, 3);
  CK(cudaDeviceSynchronize());
  std::vector<float> h(n), href(n);
  auto check = [&](const char *name) {
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), y, n * 4, cudaMemcpyDeviceToHost));
    double md = 0; for (size_t i = 0; i < n; i++) md = std::max(md, (double)fabsf(h[i] - href[i]));
    int e; CK(cudaMemcpy(&e, err, 4, cudaMemcpyDeviceToHost));
    printf("  check %-28s maxdiff %.3g err %d\n", name, md, e);
  };
  float copy = time_us([&] { CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice)); });
  float copyk_ = time_us([&] { copyk<<<132 * 16, 256>>>((const float4 *)x, (float4 *)y, n / 4); });
  printf("shape %dx%d  memcpy %.2f us (%.2f TB/s)  copy kernel %.2f us\n", M, N, copy, 2.0 * n * 4 / copy / 1e6, copyk_);
  struct R { std::string name; float us; };
  std::vector<R> res;
  auto run = [&](const std::string &name, const std::function<void()> &f) {
    CK(cudaMemset(y, 0xff, n * 4));
    f(); check(name.c_str());
    float t = time_us(f); res.push_back({name, t});
  };
  TileArgs A{}; A.S[0] = M; A.S[1] = N; A.err = err;
  auto gen = [&](const char *prog, void (*k)(TileArgs), void (*kr)(TileArgs), int nbuf, int shm) {
    for (int i = 0; i < nbuf; i++) A.A[i] = nullptr;
    if (nbuf == 2) { A.A[0] = x; A.A[1] = y; } else if (nbuf == 3) { A.A[0] = x; A.A[1] = w; A.A[2] = y; } else { A.A[0] = x; A.A[1] = w; A.A[2] = b; A.A[3] = y; }
    CK(cudaFuncSetAttribute(kr, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    k<<<M, 256>>>(A); CK(cudaDeviceSynchronize()); CK(cudaMemcpy(href.data(), y, n * 4, cudaMemcpyDeviceToHost));
    run(std::string(prog) + " gen streaming b256", [&] { k<<<M, 256>>>(A); });
    for (int B : {256, 512}) run(std::string(prog) + " gen rows b" + std::to_string(B), [&] { kr<<<M, B, shm>>>(A); });
  };
  // softmax
  gen("softmax", softmax_k0, softmax_k0_rows, 2, 2 * N * 4);
  run("softmax reg b256 v4", [&] { reg_softmax<256, 4><<<M, 256>>>(x, y, N); });
  run("softmax reg b512 v2", [&] { reg_softmax<512, 2><<<M, 512>>>(x, y, N); });
  run("softmax reg b1024 v1", [&] { reg_softmax<1024, 1><<<M, 1024>>>(x, y, N); });
  run("softmax reg b128 v8", [&] { reg_softmax<128, 8><<<M, 128>>>(x, y, N); });
  run("softmax async b256", [&] { async_softmax<256><<<M, 256, N * 4>>>(x, y, N); });
  run("softmax async b512", [&] { async_softmax<512><<<M, 512, N * 4>>>(x, y, N); });
  // rmsnorm
  gen("rmsnorm", rmsnorm_k0, rmsnorm_k0_rows, 3, N * 4);
  for (int g : {132 * 6, 132 * 8, M}) {
    CK(cudaFuncSetAttribute(pipe_rmsnorm, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    run("rmsnorm pipe b256 g" + std::to_string(g), [&] { pipe_rmsnorm<<<std::min(g, M), 256, 2 * N * 4>>>(x, w, y, M, N); });
  }
  run("rmsnorm async b256", [&] { async_rmsnorm<<<M, 256, N * 4>>>(x, w, y, M, N); });
  // layernorm
  gen("layernorm", layernorm_k0, layernorm_k0_rows, 4, N * 4);
  run("layernorm reg b256 v4", [&] { reg_layernorm<256, 4><<<M, 256>>>(x, w, b, y, N); });
  run("layernorm reg b512 v2", [&] { reg_layernorm<512, 2><<<M, 512>>>(x, w, b, y, N); });
  run("layernorm reg b1024 v1", [&] { reg_layernorm<1024, 1><<<M, 1024>>>(x, w, b, y, N); });
  run("layernorm reg b128 v8", [&] { reg_layernorm<128, 8><<<M, 128>>>(x, w, b, y, N); });
  run("layernorm async b256", [&] { async_layernorm<256><<<M, 256, N * 4>>>(x, w, b, y, N); });
  run("layernorm async b512", [&] { async_layernorm<512><<<M, 512, N * 4>>>(x, w, b, y, N); });
  for (int g : {132 * 4, 132 * 6, 132 * 7, 132 * 8, M}) {
    CK(cudaFuncSetAttribute(pipe_layernorm, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    run("layernorm pipe b256 g" + std::to_string(g), [&] { pipe_layernorm<<<std::min(g, M), 256, 2 * N * 4>>>(x, w, b, y, M, N); });
  }
  run("layernorm pipe b512 g132x3", [&] { pipe_layernorm<<<std::min(132 * 3, M), 512, 2 * N * 4>>>(x, w, b, y, M, N); });
  run("layernorm gen rows b256 g1056", [&] { A.A[0] = x; A.A[1] = w; A.A[2] = b; A.A[3] = y; layernorm_k0_rows<<<1056, 256, N * 4>>>(A); });
  run("layernorm asyncrt b256", [&] { asyncrt_layernorm<<<M, 256, N * 4>>>(x, w, b, y, N); });
  run("layernorm asyncscalar b256", [&] { async_scalar_layernorm<256><<<M, 256, N * 4>>>(x, w, b, y, N); });
  run("layernorm asyncscalar b512", [&] { async_scalar_layernorm<512><<<M, 512, N * 4>>>(x, w, b, y, N); });
  printf("\n%-30s %9s %8s\n", "variant", "us", "vs copy");
  for (auto &r : res) printf("%-30s %9.2f %8.3f\n", r.name.c_str(), r.us, r.us / copy);
  return 0;
}
