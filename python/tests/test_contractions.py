"""Matrix products through the Python package: a batched product with an
epilogue, each operand one matrix per batch or shared, on NumPy arrays
(the CPU's tiled products), against NumPy in FP64."""

import numpy as np
import pytest

import tile

BATCHED = """
program layer(x: in f32[B, M, K], w: in f32[K, N], bias: in f32[N], y: out f32[B, M, N], dy: out f32[B, M, N]) {
  for h in 0..B, i in 0..M, j in 0..N {
    z = sum(k in 0..K: x[h, i, k] * w[k, j]) + bias[j]
    t = tanh(z)
    y[h, i, j] = t
    dy[h, i, j] = 1.0 - t * t
  }
}
"""

PER_BATCH = """
program bmm(a: in f64[B, K, M], b: in f64[B, N, K], c: out f64[B, M, N]) {
  for h in 0..B, i in 0..M, j in 0..N {
    c[h, i, j] = sum(k in 0..K: a[h, k, i] * b[h, j, k])
  }
}
"""


def test_the_plan_tiles_a_batched_product():
    kernel = tile.compile(BATCHED)
    assert "tiled over i and j for each h" in kernel.plan_text(), kernel.plan_text()
    (k0,) = kernel.plan()["kernels"]
    assert k0["contraction"]["batch"] == {"var": "h", "a": True, "b": False}


@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (3, 7, 13, 5), (2, 37, 130, 70)])
def test_a_batched_layer_with_a_shared_weight_matches_numpy(shape):
    b, m, n, k = shape
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (b, m, k)).astype(np.float32)
    w = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    y = np.full((b, m, n), np.nan, dtype=np.float32)
    dy = np.full((b, m, n), np.nan, dtype=np.float32)
    tile.compile(BATCHED)(x=x, w=w, bias=bias, y=y, dy=dy)
    t = np.tanh(x.astype(np.float64) @ w.astype(np.float64) + bias)
    np.testing.assert_allclose(y, t, rtol=1e-4, atol=1e-5 * (k + 1))
    np.testing.assert_allclose(dy, 1.0 - t * t, rtol=1e-4, atol=1e-5 * (k + 1))


def test_transposed_per_batch_operands_in_f64_match_numpy():
    b, m, n, k = 4, 33, 17, 9
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (b, k, m))
    bb = rng.uniform(-1, 1, (b, n, k))
    c = np.full((b, m, n), np.nan)
    tile.compile(PER_BATCH)(a=a, b=bb, c=c)
    want = np.einsum("hki,hjk->hij", a, bb)
    np.testing.assert_allclose(c, want, rtol=1e-12, atol=1e-12)
