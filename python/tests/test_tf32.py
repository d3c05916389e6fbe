"""`allow_tf32`: f32 contractions on CUDA arrays may multiply on TF32
tensor cores; everywhere else, and by default, products are exact FP32."""

import numpy as np
import pytest

import tile

MATMUL = """
program matmul(a: in f32[M, K], b: in f32[K, N], c: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])
  }
}
"""


def inputs(m, k, n):
    rng = np.random.default_rng(7)
    return (
        rng.uniform(-1, 1, (m, k)).astype(np.float32),
        rng.uniform(-1, 1, (k, n)).astype(np.float32),
    )


def tf32(x):
    """`x` rounded to TF32 as `cvt.rna.tf32.f32` does: to 10 stored
    mantissa bits, to nearest, ties away from zero."""
    u = x.astype(np.float32).view(np.uint32)
    return ((u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def test_the_option_is_recorded_and_the_cuda_source_uses_tensor_cores_only_with_it():
    plain = tile.compile(MATMUL)
    fast = tile.compile(MATMUL, allow_tf32=True)
    assert not plain.allow_tf32 and fast.allow_tf32
    assert "mma.sync" not in plain.source("cuda")
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in fast.source("cuda")


def test_the_cpu_computes_exact_fp32_with_or_without_it():
    a, b = inputs(37, 129, 21)
    want = a.astype(np.float64) @ b.astype(np.float64)
    for allow in (False, True):
        c = np.full((37, 21), np.nan, dtype=np.float32)
        tile.compile(MATMUL, allow_tf32=allow)(a=a, b=b, c=c)
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


def test_bad_values_and_wgpu_are_refused():
    with pytest.raises(tile.TileError, match="allow_tf32 must be True or False"):
        tile.compile(MATMUL, allow_tf32="yes")
    with pytest.raises(tile.TileError, match="allow_tf32 asks for CUDA's TF32 tensor cores"):
        tile.compile(MATMUL, target="wgpu", allow_tf32=True)
    with pytest.raises(tile.TileError, match="allow_tf32 asks for CUDA's TF32 tensor cores"):
        tile.jit(lambda x: x, target="wgpu", allow_tf32=True)


def test_cuda_tf32_products_are_the_products_of_the_rounded_operands():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device visible to PyTorch")
    m, k, n = 300, 517, 260
    a, b = inputs(m, k, n)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    rounded = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    for allow, want in ((False, exact), (True, rounded)):
        c = torch.full((m, n), float("nan"), device="cuda")
        tile.compile(MATMUL, allow_tf32=allow)(a=torch.from_numpy(a).cuda(), b=torch.from_numpy(b).cuda(), c=c)
        got = c.cpu().numpy().astype(np.float64)
        # FP32 sums of 517 products of magnitude at most 1.
        np.testing.assert_allclose(got, want, rtol=0, atol=5e-4)
    # The rounding is visible: TF32 results differ from the exact ones.
    assert np.abs(rounded - exact).max() > 1e-3
