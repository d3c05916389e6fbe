"""The capture API on NumPy arrays (CPU), against NumPy FP64 references."""

import numpy as np
import pytest

import tile

SHAPES = [(1, 1), (1, 127), (3, 5), (7, 33), (37, 1537)]


def rng_array(shape, dtype=np.float32, scale=4.0, seed=0):
    r = np.random.default_rng(seed)
    return (r.standard_normal(shape) * scale).astype(dtype)


def close(got, want, dtype=np.float32):
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol * 10, atol=tol)


@tile.jit
def silu_pair(x):
    s = tile.sigmoid(x)
    return x * s, s * (1 + x * (1 - s))


def silu_ref(x):
    x = x.astype(np.float64)
    s = 1 / (1 + np.exp(-x))
    return x * s, s * (1 + x * (1 - s))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_pair_matches_fp64(shape, dtype):
    x = rng_array(shape, dtype)
    v, d = silu_pair(x)
    assert v.dtype == dtype and v.shape == shape
    rv, rd = silu_ref(x)
    close(v, rv, dtype)
    close(d, rd, dtype)


def test_rank1_and_a_new_shape_reuse_the_kernel():
    silu_pair(rng_array((4, 9)))
    text = silu_pair.program
    silu_pair(rng_array((6, 17)))
    assert silu_pair.program == text
    v, d = silu_pair(rng_array((13,)))
    assert "x: in f32[N]" in silu_pair.program
    rv, rd = silu_ref(rng_array((13,)))
    close(v, rv)
    close(d, rd)


def test_out_writes_the_given_memory_in_place():
    x = rng_array((5, 19))
    v = np.full_like(x, 7.0)
    d = np.full_like(x, 7.0)
    pv, pd = v.ctypes.data, d.ctypes.data
    got = silu_pair(x, out=(v, d))
    assert got[0] is v and got[1] is d
    assert v.ctypes.data == pv and d.ctypes.data == pd
    rv, rd = silu_ref(x)
    close(v, rv)
    close(d, rd)


def test_program_plan_and_source():
    @tile.jit
    def fresh(x):
        s = tile.sigmoid(x)
        return x * s, s * (1 + x * (1 - s))

    # Before any call: the float32, rank-2 specialization.
    text = fresh.program
    assert text.startswith("program fresh(x: in f32[M, N], out0: out f32[M, N], out1: out f32[M, N])")
    assert "sigmoid(x[i, j])" in text
    plan = fresh.plan()
    assert [k["mapping"] for k in plan["kernels"]] == ["element_grid"]
    assert "tile_k0" in fresh.source("cpu")
    assert "__global__" in fresh.source("cuda")
    # After a call: the specialization captured last.
    fresh(rng_array((5,), np.float64))
    assert fresh.program.startswith("program fresh(x: in f64[N]")
    assert fresh.capture(2, dtype="f32").program == text


@tile.jit
def softmax(x):
    m = tile.max(x, axis=-1, keepdims=True)
    e = tile.exp(x - m)
    return e / tile.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_rows(shape):
    x = rng_array(shape)
    y = softmax(x)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert softmax.plan()["kernels"][0]["mapping"] == "row_reduction"


@tile.jit
def layernorm(x, w, b):
    mu = tile.mean(x, axis=-1, keepdims=True)
    c = x - mu
    var = tile.mean(c * c, axis=-1, keepdims=True)
    return c * tile.rsqrt(var + 1e-5) * w + b


def test_layernorm_broadcasts_rows_of_weights():
    x, w, b = rng_array((9, 65)), rng_array((65,), seed=1), rng_array((65,), seed=2)
    y = layernorm(x, w, b)
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(-1, keepdims=True)
    want = c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


@tile.jit
def logsumexp_and_norm(x):
    m = tile.max(x, axis=-1, keepdims=True)
    lse = tile.log(tile.sum(tile.exp(x - m), axis=-1)) + tile.max(x, axis=-1)
    return lse, tile.sqrt(tile.sum(x * x, axis=-1, keepdims=True))


def test_per_row_results_of_shape_m_and_m_by_1():
    x = rng_array((11, 40))
    lse, norm = logsumexp_and_norm(x)
    assert lse.shape == (11,) and norm.shape == (11, 1)
    x64 = x.astype(np.float64)
    m = x64.max(-1)
    np.testing.assert_allclose(lse, np.log(np.exp(x64 - m[:, None]).sum(-1)) + m, rtol=1e-5)
    np.testing.assert_allclose(norm[:, 0], np.sqrt((x64 * x64).sum(-1)), rtol=1e-5)


@tile.jit
def normalise_vector(v):
    return v / tile.sum(v)


def test_rank1_full_reduction():
    v = np.abs(rng_array((50,))) + 0.1
    y = normalise_vector(v)
    np.testing.assert_allclose(y, v / v.astype(np.float64).sum(), rtol=1e-5)


@tile.jit
def leaky(x):
    return tile.where(x > 0, x, 0.01 * x), tile.where((x > -1) & (x < 1), 1.0, 0.0)


def test_where_and_comparisons():
    x = rng_array((4, 31))
    y, inside = leaky(x)
    np.testing.assert_array_equal(y, np.where(x > 0, x, np.float32(0.01) * x))
    np.testing.assert_array_equal(inside, ((x > -1) & (x < 1)).astype(np.float32))


@tile.jit
def long_chain(x):
    y = x
    for k in range(600):
        y = y * 0.5 + (k % 7) * 0.001
    return y


def test_a_long_python_loop_captures_with_bindings():
    x = rng_array((3, 8))
    y = long_chain(x)
    want = x.astype(np.float64)
    for k in range(600):
        want = want * 0.5 + (k % 7) * 0.001
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_operators_and_constants():
    @tile.jit
    def f(a, b):
        return (2 - a) / (b * b + 1) + abs(-a) ** 3 - a ** 2, tile.maximum(a, b), tile.minimum(a, 0.5)

    a, b = rng_array((3, 7), seed=3), rng_array((3, 7), seed=4)
    y, mx, mn = f(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_allclose(y, (2 - a64) / (b64 * b64 + 1) + np.abs(a64) ** 3 - a64 ** 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mx, np.maximum(a, b))
    np.testing.assert_array_equal(mn, np.minimum(a, np.float32(0.5)))


def test_numbers_are_runtime_scalars_captured_once():
    captured = []

    @tile.jit
    def leaky(x, slope):
        captured.append(1)
        return tile.where(x > 0, x, x * slope)

    x = np.linspace(-3, 3, 1001, dtype=np.float32).reshape(7, 143)
    for slope in (0.1, 0.5, np.float32(2.0), 3):
        got = leaky(x, slope)
        want = np.where(x > 0, x.astype(np.float64), x.astype(np.float64) * np.float64(np.float32(slope)))
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(captured) == 1, "a new value must not capture again"
    assert "slope: in f32," in leaky.program
    # float64 arrays give a float64 scalar (a second capture: a new dtype).
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(leaky(x64, 0.1), np.where(x64 > 0, x64, x64 * 0.1), rtol=1e-15)
    # out= and numbers together.
    out = np.empty_like(x)
    assert leaky(x, 0.25, out=out) is out
    np.testing.assert_allclose(out, np.where(x > 0, x, x * np.float32(0.25)), rtol=1e-6)
    for bad, says in ((True, "bool"), (1e300, "beyond the range of f32"), (10**400, "beyond")):
        with pytest.raises(tile.TileError, match=says):
            leaky(x, bad)
    with pytest.raises(tile.TileError, match="at least one array"):
        leaky(0.5, 0.25)


def test_globals_are_constants_of_the_capture():
    rate = {"v": 0.5}

    @tile.jit
    def scale(x):
        return x * rate["v"]

    x = np.ones(5, dtype=np.float32)
    np.testing.assert_array_equal(scale(x), np.full(5, 0.5, np.float32))
    rate["v"] = 2.0
    # Documented: read once, when the function was captured for these
    # dtypes and ranks; pass runtime values as arguments instead.
    np.testing.assert_array_equal(scale(x), np.full(5, 0.5, np.float32))
