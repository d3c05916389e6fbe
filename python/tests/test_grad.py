"""Generated derivatives from Python: `tile.vjp` on captured functions and
compiled kernels against central differences (NumPy, float64). The
functions here are also the ones `test_grad_torch.py` checks with
`torch.autograd.gradcheck`."""

import pathlib
import sys

import numpy as np
import pytest

import tile

# The shared functions live beside this file (pytest's importlib mode puts
# no test directory on the path).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from grad_cases import FUNCTIONS, arguments, results, layernorm, softmax  # noqa: E402

def _finite_differences(fn, args, cots, k, h=1e-6):
    """d/d args[k] of sum(cot * result) by central differences."""
    grad = np.zeros_like(args[k])
    flat = grad.reshape(-1)
    for e in range(flat.size):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k].reshape(-1)[e] += h
        minus[k].reshape(-1)[e] -= h
        yp, ym = results(fn, plus), results(fn, minus)
        flat[e] = sum(float(((p - m) * c).sum()) for p, m, c in zip(yp, ym, cots)) / (2 * h)
    return grad


@pytest.mark.parametrize("fn,shapes", FUNCTIONS, ids=[f[0].__name__ for f in FUNCTIONS])
def test_vjp_of_captured_functions_matches_finite_differences(fn, shapes):
    args = arguments(shapes, 1)
    cots = [np.random.default_rng(2).standard_normal(y.shape) for y in results(fn, args)]
    got = tile.vjp(fn)(*args, *cots)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(args)
    for k, g in enumerate(got):
        want = _finite_differences(fn, args, cots, k)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6, err_msg=f"argument {k}")


def test_vjp_wrt_picks_arguments_by_position_or_name():
    args = arguments([(4, 9), (9,), (9,)], 3)
    gy = np.ones((4, 9))
    dx_all, dw_all, db_all = tile.vjp(layernorm)(*args, gy)
    dw = tile.vjp(layernorm, wrt=[1])(*args, gy)
    db, dx = tile.vjp(layernorm, wrt=["b", "x"])(*args, gy)
    np.testing.assert_allclose(dw, dw_all)
    np.testing.assert_allclose(db, db_all)
    np.testing.assert_allclose(dx, dx_all)
    # The bias gradient of a sum of ones is the number of rows.
    np.testing.assert_allclose(db, np.full(9, 4.0))


def test_vjp_of_a_compiled_kernel_and_its_program():
    k = tile.compile(
        """program softmax(x: in f32[M, N], y: out f32[M, N]) {
             for i in 0..M {
               m = max(j in 0..N: x[i, j])
               z = sum(j in 0..N: exp(x[i, j] - m))
               for j in 0..N { y[i, j] = exp(x[i, j] - m) / z }
             }
           }"""
    )
    x = np.random.default_rng(4).standard_normal((6, 11)).astype(np.float32)
    gy = np.random.default_rng(5).standard_normal((6, 11)).astype(np.float32)
    v = tile.vjp(k, wrt="x")
    dx = v(x=x, grad_y=gy)
    s = k(x=x)
    want = s * (gy - (gy * s).sum(-1, keepdims=True))
    np.testing.assert_allclose(dx, want, rtol=1e-5, atol=1e-6)
    assert v.program.startswith("program softmax_grad(x: in f32[M, N], grad_y: in f32[M, N]")
    fused = k.grad(with_value=True)
    assert [p[0] for p in fused.params] == ["x", "grad_y", "y", "grad_x"]
    y, dx2 = fused(x=x, grad_y=gy)
    np.testing.assert_allclose(y, s, rtol=1e-6)
    np.testing.assert_allclose(dx2, dx, rtol=1e-6, atol=1e-7)


def test_saving_reductions_feeds_the_derivative_the_forward_values():
    k = tile.compile(
        """program layernorm(x: in f32[M, N], w: in f32[N], b: in f32[N], y: out f32[M, N]) {
             for i in 0..M {
               mean = sum(j in 0..N: x[i, j]) / f32(N)
               var = sum(j in 0..N: (x[i, j] - mean) * (x[i, j] - mean)) / f32(N)
               r = rsqrt(var + 0.00001)
               for j in 0..N { y[i, j] = (x[i, j] - mean) * r * w[j] + b[j] }
             }
           }"""
    )
    rng = np.random.default_rng(11)
    x = rng.standard_normal((7, 19)).astype(np.float32)
    w, b = rng.standard_normal(19).astype(np.float32), rng.standard_normal(19).astype(np.float32)
    gy = rng.standard_normal((7, 19)).astype(np.float32)
    fwd = k.forward_saving()
    names = [p[0] for p in fwd.params]
    assert names == ["x", "w", "b", "y", "saved_mean_sum", "saved_var_sum"]
    y, mean_sum, var_sum = fwd(x=x, w=w, b=b)
    np.testing.assert_allclose(y, k(x=x, w=w, b=b), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(mean_sum, x.sum(-1), rtol=1e-5, atol=1e-5)
    g = k.grad(saves="reductions")
    assert "saved_mean_sum" in [p[0] for p in g.params if p[1] == "in"]
    assert "sum(j in 0..N: x[i, j])" not in g.program
    got = g(x=x, w=w, b=b, grad_y=gy, saved_mean_sum=mean_sum, saved_var_sum=var_sum)
    want = k.grad()(x=x, w=w, b=b, grad_y=gy)
    for a, e in zip(got[:3], want[:3]):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)
    with pytest.raises(tile.TileError, match="saves must be `inputs` or `reductions`"):
        k.grad(saves="outputs")


def test_refusals_are_tile_errors_naming_the_culprit():
    k = tile.compile(
        "program acc(x: in f32[N], y: inout f32[N]) { for i in 0..N { y[i] = y[i] + x[i] } }"
    )
    with pytest.raises(tile.TileError, match="`y` is `inout`"):
        k.grad()
    with pytest.raises(tile.TileError, match="no parameter `q`"):
        tile.compile(
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }"
        ).grad(["q"])
    with pytest.raises(tile.TileError, match="give the 1 arguments, then one cotangent"):
        tile.vjp(softmax)(np.ones((2, 3)))
    with pytest.raises(tile.TileError, match="takes a tile.jit function or a tile.Kernel"):
        tile.vjp(np.exp)
