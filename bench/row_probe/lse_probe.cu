// Per-row log-sum-exp probe for the H200: the generated row_lse kernel
// (from `tile emit`) in variants made by lse_run.sh (as emitted; with
// `#pragma unroll` on its quad loops), at several block sizes, each timed
// against a device-to-device copy of the same bytes.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

struct TileArgs { long long lo, hi; long long S[16]; void *A[32]; int *err; };
extern "C" __global__ void plain_k0(const TileArgs a);
extern "C" __global__ void unroll4_k0(const TileArgs a);
extern "C" __global__ void unroll8_k0(const TileArgs a);

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void fill(float *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = (h & 0xffffff) / 16777216.0f * 8.0f - 4.0f;
  }
}

template <class F> float time_us(F f) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 20; i++) f();
  float best = 1e30f;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a)); for (int i = 0; i < 200; i++) f(); CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b));
    if (ms * 1000 / 200 < best) best = ms * 1000 / 200;
  }
  return best;
}

int main(int argc, char **argv) {
  long long M = atoll(argv[1]), N = atoll(argv[2]);
  float *x, *y, *c1, *c2; int *err;
  CK(cudaMalloc(&x, M * N * 4)); CK(cudaMalloc(&y, M * 4)); CK(cudaMalloc(&err, 4));
  CK(cudaMalloc(&c1, M * N * 2 + 16)); CK(cudaMalloc(&c2, M * N * 2 + 16));
  CK(cudaMemset(err, 0, 4));
  fill<<<1024, 256>>>(x, M * N);
  TileArgs a = {}; a.S[0] = M; a.S[1] = N; a.A[0] = x; a.A[1] = y; a.err = err;
  float copy = time_us([&] { cudaMemcpyAsync(c2, c1, M * N * 2, cudaMemcpyDeviceToDevice); });
  printf("%lldx%lld copy of the bytes: %.2f us\n", M, N, copy);
  struct V { const char *name; void (*k)(const TileArgs); } vs[] = {
    {"plain", plain_k0}, {"unroll4", unroll4_k0}, {"unroll8", unroll8_k0}};
  for (auto v : vs) for (int b : {64, 128, 256}) {
    void *args[] = {&a};
    float t = time_us([&] { cudaLaunchKernel((const void *)v.k, dim3((unsigned)M), dim3(b), args, 0, 0); });
    CK(cudaGetLastError());
    int e; CK(cudaMemcpy(&e, err, 4, cudaMemcpyDeviceToHost));
    printf("%-8s block %4d: %7.2f us  %.3f of copy%s\n", v.name, b, t, t / copy, e ? "  FAILED CHECK" : "");
  }
  return 0;
}
