"""The experiment behind the `row_lse` paragraph of
docs/results/reductions/README.md: a hand-written per-row log-sum-exp
kernel that keeps each thread's first CACHE quads of its row in
registers between the two passes (max, then the sum of exponentials),
against the same kernel reading the row twice (CACHE 0).

Run from the repository root on a machine with a GPU and CuPy, after
`cargo build --release` (the kernels use the CUDA prelude that `tile emit`
prints): `python3 bench/experiments/row_lse_registers.py`.

What it printed on a lent H200 on 2026-12-04 (us per call, CUDA events,
median of 7 batches of 200; copy: half the input copied, the bytes the
kernel moves):

    shape       copy   CACHE 0  CACHE 8
    1024x4096   9.92    9.87     9.57
    4096x4096  18.81   26.70    20.52   (1.42x and 1.09x the copy)
    4096x4000  18.50   27.34    20.44

ptxas gives the CACHE 8 kernel 70 registers. The same idea printed by the
CUDA back end (each thread's first 8 quads of a load that several of the
row's loops read, kept in a float4 array by the first loop) did not
reproduce it: 27.76 us against 27.12 for the current kernel at
4096x4096, 80 registers, slower at 256 threads and on rows whose length
is not a multiple of 4. That change was not kept; finding what separates
the two is the next step for row_lse.
"""

import os
import subprocess

import cupy as cp
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BODY = r"""

#define IDX long long
extern "C" __global__ void lse(const float *__restrict__ p_x, float *__restrict__ p_y, long long M, long long N) {
  __shared__ double tile_smem[64];
  for (long long r = blockIdx.x; r < M; r += gridDim.x) {
    const float *row = p_x + r * N;
    float m = __int_as_float(0x7fc00000);
#if CACHE
    float4 rc[CACHE];
#endif
    IDX q = (IDX)threadIdx.x * 4;
    const IDX step = (IDX)blockDim.x * 4;
#if CACHE
#pragma unroll
    for (int k = 0; k < CACHE; k++) {
      IDX p = q + k * step;
      if (p + 3 < N) { rc[k] = *reinterpret_cast<const float4 *>(row + p);
        m = tile_max_f32(m, rc[k].x); m = tile_max_f32(m, rc[k].y); m = tile_max_f32(m, rc[k].z); m = tile_max_f32(m, rc[k].w); }
    }
    q += CACHE * step;
#endif
    for (; q + step + 3 < N; q += 2 * step) {
      float4 a = *reinterpret_cast<const float4 *>(row + q);
      float4 b = *reinterpret_cast<const float4 *>(row + q + step);
      m = tile_max_f32(m, a.x); m = tile_max_f32(m, a.y); m = tile_max_f32(m, a.z); m = tile_max_f32(m, a.w);
      m = tile_max_f32(m, b.x); m = tile_max_f32(m, b.y); m = tile_max_f32(m, b.z); m = tile_max_f32(m, b.w);
    }
    for (; q + 3 < N; q += step) {
      float4 a = *reinterpret_cast<const float4 *>(row + q);
      m = tile_max_f32(m, a.x); m = tile_max_f32(m, a.y); m = tile_max_f32(m, a.z); m = tile_max_f32(m, a.w);
    }
    m = tile_block_max_f32(m, tile_smem + 0);
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#if ACC == 1
#define S1 s0
#define S2 s0
#define S3 s0
#else
#define S1 s1
#define S2 s2
#define S3 s3
#endif
    q = (IDX)threadIdx.x * 4;
#if CACHE
#pragma unroll
    for (int k = 0; k < CACHE; k++) {
      IDX p = q + k * step;
      if (p + 3 < N) { float4 a = rc[k];
        s0 = s0 + tile_exp_f32(a.x - m); S1 = S1 + tile_exp_f32(a.y - m); S2 = S2 + tile_exp_f32(a.z - m); S3 = S3 + tile_exp_f32(a.w - m); }
    }
    q += CACHE * step;
#endif
    for (; q + step + 3 < N; q += 2 * step) {
      float4 a = *reinterpret_cast<const float4 *>(row + q);
      float4 b = *reinterpret_cast<const float4 *>(row + q + step);
      s0 = s0 + tile_exp_f32(a.x - m); S1 = S1 + tile_exp_f32(a.y - m); S2 = S2 + tile_exp_f32(a.z - m); S3 = S3 + tile_exp_f32(a.w - m);
      s0 = s0 + tile_exp_f32(b.x - m); S1 = S1 + tile_exp_f32(b.y - m); S2 = S2 + tile_exp_f32(b.z - m); S3 = S3 + tile_exp_f32(b.w - m);
    }
    for (; q + 3 < N; q += step) {
      float4 a = *reinterpret_cast<const float4 *>(row + q);
      s0 = s0 + tile_exp_f32(a.x - m); S1 = S1 + tile_exp_f32(a.y - m); S2 = S2 + tile_exp_f32(a.z - m); S3 = S3 + tile_exp_f32(a.w - m);
    }
#if ACC == 1
    float s = s0;
#else
    float s = (s0 + s1) + (s2 + s3);
#endif
    s = tile_block_sum_f32(s, tile_smem + 32);
    if (threadIdx.x == 0) p_y[r] = m + tile_log_f32(s);
    __syncthreads();
  }
}
"""


def prelude():
    """The CUDA prelude of Tile's kernels (everything before the first one)."""
    text = subprocess.run(
        [os.path.join(ROOT, "target/release/tile"), "emit", "--target", "cuda",
         os.path.join(ROOT, "tests/programs/reductions/row_lse.tile")],
        check=True, capture_output=True, text=True,
    ).stdout
    return text.split("/* k0")[0]


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
    pre = prelude()
    kernels = {
        cache: cp.RawModule(
            code=pre + f"#define CACHE {cache}\n#define ACC 1\n" + BODY,
            options=("--fmad=false", "-std=c++17"),
        ).get_function("lse")
        for cache in (0, 8)
    }
    for m, n in [(1024, 4096), (4096, 4096), (4096, 4000)]:
        x = cp.random.standard_normal((m, n), dtype=cp.float32) * 3
        y = cp.empty(m, cp.float32)
        ref = np.log(np.exp(cp.asnumpy(x).astype(np.float64)).sum(1))
        half = cp.empty(m * n // 2, cp.float32)
        src = x.ravel()[: m * n // 2]
        copy = timeit(lambda: half.__setitem__(slice(None), src))
        print(f"{m}x{n}: copy {copy:.2f} us")
        for cache, f in kernels.items():
            def run():
                f((m,), (128,), (x, y, np.int64(m), np.int64(n)))
            run()
            err = float(np.max(np.abs(cp.asnumpy(y) - ref) / np.abs(ref).clip(1)))
            t = timeit(run)
            print(f"  CACHE {cache}: {t:7.2f} us  {t / copy:.3f}x copy  rel. error {err:.1e}")


if __name__ == "__main__":
    main()
