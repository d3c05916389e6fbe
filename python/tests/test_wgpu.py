"""`target="wgpu"`: host arrays run through wgpu (WGSL on Vulkan, Metal or
DirectX 12; Mesa's lavapipe on a machine with no GPU), checked against
formulas evaluated in float64. Skipped, with the reason, where no wgpu
adapter exists (unless TILE_WGPU_REQUIRE=1)."""

import os

import numpy as np
import pytest

import tile

PAIR = """
program pair(x: in f32[M, N], value: out f32[M, N], grad: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    s = sigmoid(x[i, j])
    value[i, j] = s
    grad[i, j] = s * (1.0 - s)
  }
}
"""

GATHER = """
program gather(x: in f32[N], ix: in i32[K], y: out f32[K]) {
  for k in 0..K {
    y[k] = x[ix[k]]
  }
}
"""


def wgpu_or_skip(kernel, **arrays):
    """Runs `kernel` on `arrays`, or skips the test where there is no
    adapter."""
    try:
        return kernel(**arrays)
    except tile.TileError as e:
        if "no wgpu adapter" in str(e) and os.environ.get("TILE_WGPU_REQUIRE") != "1":
            pytest.skip(f"no wgpu adapter: {e}")
        raise


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def test_the_sigmoid_pair_runs_on_wgpu():
    k = tile.compile(PAIR, target="wgpu")
    assert k.target == "wgpu"
    x = np.linspace(-6, 6, 3 * 1029, dtype=np.float32).reshape(3, 1029)
    value, grad = wgpu_or_skip(k, x=x)
    s = sigmoid64(x)
    np.testing.assert_allclose(value, s, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(grad, s * (1 - s), rtol=2e-5, atol=1e-7)


def test_a_captured_softmax_runs_on_wgpu():
    @tile.jit(target="wgpu")
    def softmax(x):
        e = tile.exp(x - tile.max(x, axis=-1, keepdims=True))
        return e / tile.sum(e, axis=-1, keepdims=True)

    x = np.random.default_rng(3).standard_normal((5, 1029)).astype(np.float32)
    try:
        y = softmax(x)
    except tile.TileError as e:
        if "no wgpu adapter" in str(e) and os.environ.get("TILE_WGPU_REQUIRE") != "1":
            pytest.skip(f"no wgpu adapter: {e}")
        raise
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-8)
    assert "@compute" in softmax.source("wgpu")


def test_a_failed_check_on_wgpu_writes_nothing():
    k = tile.compile(GATHER, target="wgpu")
    x = np.arange(4, dtype=np.float32)
    ix = np.array([0, 3, 4], dtype=np.int32)
    y = np.full(3, 7.0, dtype=np.float32)
    with pytest.raises(tile.TileError) as info:
        wgpu_or_skip(k, x=x, ix=ix, y=y)
    if "no wgpu adapter" in str(info.value) and os.environ.get("TILE_WGPU_REQUIRE") != "1":
        pytest.skip(f"no wgpu adapter: {info.value}")
    assert "outside the box of `x`" in str(info.value)
    np.testing.assert_array_equal(y, np.full(3, 7.0, dtype=np.float32))


def test_an_unknown_target_is_refused():
    with pytest.raises(tile.TileError, match=r'unknown target "metal"'):
        tile.compile(PAIR, target="metal")
    with pytest.raises(tile.TileError, match=r"unknown target 'metal'"):
        tile.jit(lambda x: x, target="metal")


def test_f64_programs_are_refused_on_wgpu_naming_the_parameter():
    k = tile.compile(PAIR.replace("f32", "f64"), target="wgpu")
    x = np.zeros((2, 3))
    with pytest.raises(tile.TileError, match=r"parameter `x` \(line 2\) is f64"):
        k(x=x)
