"""A hand-written per-row log-sum-exp kernel that keeps each thread's
share of the row in registers between its two passes, against the same
kernel reading the row twice: the experiment behind the `row_lse` notes
in docs/results/reductions/README.md.

Run on a machine with a GPU and CuPy: `python3 bench/experiments/row_lse_registers.py`.
It prints, per shape, a copy of half the input (the bytes the kernel
moves, read plus write), then each variant's time and its relative error
against NumPy in float64. On the H200 (2026-12-04) at 4096x4096: 20.4 us
with the row held in registers (CACHE=8 quads per thread, 128 threads,
70 registers), 26.7 us reading it twice, copy 18.5-18.8 us.
"""

import cupy as cp
import numpy as np

SOURCE = r"""
static __device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
static __device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
/* Block-wide reductions, combined in warp order from shared slots. */
static __device__ float block_max(float v, float *s) {
  v = warp_max(v);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
  __syncthreads();
  float u = s[0];
  for (int w = 1; w < (int)(blockDim.x + 31) / 32; w++) u = fmaxf(u, s[w]);
  return u;
}
static __device__ float block_sum(float v, float *s) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) s[threadIdx.x >> 5] = v;
  __syncthreads();
  float u = s[0];
  for (int w = 1; w < (int)(blockDim.x + 31) / 32; w++) u += s[w];
  return u;
}

/* One block per row; N a multiple of 4 and rows 16-byte aligned. */
extern "C" __global__ void lse(const float *__restrict__ x, float *__restrict__ y, long long M, long long N) {
  __shared__ float smem[64];
  for (long long r = blockIdx.x; r < M; r += gridDim.x) {
    const float *row = x + r * N;
    const long long q0 = (long long)threadIdx.x * 4, step = (long long)blockDim.x * 4;
    float m = __int_as_float(0x7fc00000);
#if CACHE
    float4 held[CACHE];
#pragma unroll
    for (int k = 0; k < CACHE; k++) {
      const long long p = q0 + k * step;
      if (p + 3 < N) {
        held[k] = *reinterpret_cast<const float4 *>(row + p);
        m = fmaxf(fmaxf(fmaxf(fmaxf(m, held[k].x), held[k].y), held[k].z), held[k].w);
      }
    }
#endif
    for (long long q = q0 + CACHE * step; q + 3 < N; q += step) {
      const float4 a = *reinterpret_cast<const float4 *>(row + q);
      m = fmaxf(fmaxf(fmaxf(fmaxf(m, a.x), a.y), a.z), a.w);
    }
    m = block_max(m, smem);
    float s = 0.0f;
#if CACHE
#pragma unroll
    for (int k = 0; k < CACHE; k++) {
      if (q0 + k * step + 3 < N) {
        const float4 a = held[k];
        s = s + expf(a.x - m); s = s + expf(a.y - m); s = s + expf(a.z - m); s = s + expf(a.w - m);
      }
    }
#endif
    for (long long q = q0 + CACHE * step; q + 3 < N; q += step) {
      const float4 a = *reinterpret_cast<const float4 *>(row + q);
      s = s + expf(a.x - m); s = s + expf(a.y - m); s = s + expf(a.z - m); s = s + expf(a.w - m);
    }
    s = block_sum(s, smem + 32);
    if (threadIdx.x == 0) y[r] = m + logf(s);
    __syncthreads();
  }
}
"""


def timeit(f, n=200, reps=7):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(n):
            f()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1000 / n)
    return float(np.median(times))


def main():
    kernels = {
        cache: cp.RawModule(
            code=f"#define CACHE {cache}\n" + SOURCE, options=("--fmad=false", "-std=c++17")
        ).get_function("lse")
        for cache in (0, 8)
    }
    for m, n in [(1024, 4096), (4096, 4096)]:
        x = cp.random.standard_normal((m, n), dtype=cp.float32) * 3
        y = cp.empty(m, cp.float32)
        ref = np.log(np.exp(cp.asnumpy(x).astype(np.float64)).sum(1))
        half = cp.empty(m * n // 2, cp.float32)
        src = x.ravel()[: m * n // 2]
        copy = timeit(lambda: half.__setitem__(slice(None), src))
        print(f"{m}x{n}: copy of the bytes moved {copy:.2f} us")
        for cache, f in kernels.items():
            def run():
                f((m,), (128,), (x, y, np.int64(m), np.int64(n)))
            run()
            err = float(np.max(np.abs(cp.asnumpy(y) - ref) / np.abs(ref).clip(1)))
            t = timeit(run)
            what = "row held in registers" if cache else "row read twice"
            print(f"  {what:22s} {t:7.2f} us  {t / copy:.3f}x copy  rel. error {err:.1e}")


if __name__ == "__main__":
    main()
