"""The matrix, neural and algorithm suites (tests/programs/{matrix,neural,
algorithm}/*.tile) against NumPy references computed in float64, on NumPy
arrays (the CPU target) and, where PyTorch sees a GPU, on CUDA tensors.

The Rust tests check every target against Tile's own FP64 interpreter; these
check the programs mean what their names say, against an independent
formula, with realistic data (valid labels, Adam's moments non-negative)."""

import pathlib

import numpy as np
import pytest

import tile

ROOT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "programs"

try:
    import torch

    CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - depends on the machine
    torch, CUDA = None, False

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not CUDA, reason="no CUDA device visible to PyTorch"))]

RTOL, ATOL = 1e-4, 1e-5


def kernel(suite, name):
    return tile.compile((ROOT / suite / f"{name}.tile").read_text(), file=f"{suite}/{name}.tile")


def rng(seed):
    return np.random.default_rng(seed)


def f32(*shape, seed=0, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


def run(kern, device, **args):
    """Runs `kern` on `device`; returns every written array as float64 NumPy."""
    if device == "cuda":
        args = {n: torch.from_numpy(np.ascontiguousarray(a)).cuda() if isinstance(a, np.ndarray) else a for n, a in args.items()}
    out = kern(**args)
    out = out if isinstance(out, tuple) else (out,)
    host = [o.cpu().numpy() if device == "cuda" else o for o in out]
    return [np.asarray(h) for h in host]


def close(got, want, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol)


def gelu_tanh(z):
    return 0.5 * z * (1 + np.tanh(0.7978845608028654 * (z + 0.044715 * z**3)))


# ---- matrix


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_ragged(device):
    a, b = f32(37, 65, seed=1), f32(65, 29, seed=2)
    (c,) = run(kernel("matrix", "matmul"), device, a=a, b=b, c=np.zeros((37, 29), np.float32))
    close(c, a.astype(np.float64) @ b.astype(np.float64), atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_bias_gelu(device):
    a, w, bias = f32(9, 33, seed=3), f32(33, 17, seed=4, scale=0.3), f32(17, seed=5)
    h, y = run(kernel("matrix", "matmul_bias_gelu"), device, a=a, w=w, bias=bias)
    z = a.astype(np.float64) @ w.astype(np.float64) + bias
    close(h, z, atol=1e-5)
    close(y, gelu_tanh(z), atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_transpose(device):
    x = f32(31, 7, seed=6)
    (y,) = run(kernel("matrix", "transpose"), device, x=x)
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("device", DEVICES)
def test_row_dot(device):
    a, b = f32(13, 1001, seed=7), f32(13, 1001, seed=8)
    (d,) = run(kernel("matrix", "row_dot"), device, a=a, b=b)
    close(d, (a.astype(np.float64) * b).sum(axis=1), atol=1e-4)


# ---- neural


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_loss_and_gradient(device):
    x = f32(11, 257, seed=9, scale=3.0)
    label = rng(10).integers(0, 257, size=11).astype(np.int32)
    loss, dx = run(kernel("neural", "cross_entropy"), device, x=x, label=label)
    x64 = x.astype(np.float64)
    m = x64.max(axis=1, keepdims=True)
    e = np.exp(x64 - m)
    lse = m[:, 0] + np.log(e.sum(axis=1))
    close(loss, lse - x64[np.arange(11), label])
    onehot = np.zeros_like(x64)
    onehot[np.arange(11), label] = 1.0
    close(dx, e / e.sum(axis=1, keepdims=True) - onehot)


@pytest.mark.parametrize("device", DEVICES)
def test_mse_loss_and_gradient(device):
    p, t = f32(23, 41, seed=11), f32(23, 41, seed=12)
    loss, grad = run(kernel("neural", "mse"), device, p=p, t=t)
    d = p.astype(np.float64) - t
    assert loss.shape == ()
    close(loss, (d * d).mean())
    close(grad, 2 * d / d.size)


@pytest.mark.parametrize("device", DEVICES)
def test_attention_one_head(device):
    q, k, v = f32(12, 16, seed=13), f32(40, 16, seed=14), f32(40, 16, seed=15)
    (o,) = run(kernel("neural", "attention"), device, q=q, k=k, v=v)
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(16)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    close(o, p @ v.astype(np.float64))


@pytest.mark.parametrize("device", DEVICES)
def test_conv1d_valid(device):
    x, w = f32(5, 104, seed=16), f32(5, seed=17)
    (y,) = run(kernel("neural", "conv1d"), device, x=x, w=w)
    want = np.stack([np.correlate(r.astype(np.float64), w.astype(np.float64), mode="valid") for r in x])
    close(y, want)


@pytest.mark.parametrize("device", DEVICES)
def test_box_filter_replicated_borders(device):
    x = f32(17, 23, seed=18)
    (y,) = run(kernel("neural", "box_filter"), device, x=x)
    pad = np.pad(x.astype(np.float64), 1, mode="edge")
    want = sum(pad[1 + a : 18 + a, 1 + b : 24 + b] for a in (-1, 0, 1) for b in (-1, 0, 1)) / 9
    close(y, want)


@pytest.mark.parametrize("device", DEVICES)
def test_adam_step_in_place(device):
    n = 1000
    p, g = f32(n, seed=19), f32(n, seed=20)
    m, v = f32(n, seed=21, scale=0.1), np.abs(f32(n, seed=22, scale=0.01))
    hyper = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, step=3)
    p1, m1, v1 = run(kernel("neural", "adam"), device, p=p.copy(), m=m.copy(), v=v.copy(), g=g, **hyper)
    g64 = g.astype(np.float64)
    m_want = 0.9 * m + 0.1 * g64
    v_want = 0.999 * v + 0.001 * g64 * g64
    mhat, vhat = m_want / (1 - 0.9**3), v_want / (1 - 0.999**3)
    close(m1, m_want)
    close(v1, v_want, atol=1e-7)
    close(p1, p - 1e-3 * mhat / (np.sqrt(vhat) + 1e-8), atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_sgd_momentum_step_in_place(device):
    n = 777
    p, buf, g = f32(n, seed=23), f32(n, seed=24), f32(n, seed=25)
    p1, b1 = run(kernel("neural", "sgd_momentum"), device, p=p.copy(), buf=buf.copy(), g=g, lr=0.01, momentum=0.9, decay=1e-4)
    b_want = 0.9 * buf.astype(np.float64) + g + 1e-4 * p.astype(np.float64)
    close(b1, b_want)
    close(p1, p - 0.01 * b_want)


# ---- algorithm


@pytest.mark.parametrize("device", DEVICES)
def test_argmax_and_argmin_first_on_ties(device):
    x = rng(26).integers(-5, 6, size=(19, 300)).astype(np.float32)  # many ties
    idx, best = run(kernel("algorithm", "argmax"), device, x=x)
    np.testing.assert_array_equal(idx, x.argmax(axis=1))
    np.testing.assert_array_equal(best, x.max(axis=1))
    (idx,) = run(kernel("algorithm", "argmin"), device, x=x)
    np.testing.assert_array_equal(idx, x.argmin(axis=1))


def descending_order(x):
    """Per row, indices in descending order of value, ties by index."""
    return np.argsort(-x, axis=1, kind="stable")


@pytest.mark.parametrize("device", DEVICES)
def test_rank_is_the_stable_descending_position(device):
    x = rng(27).integers(-20, 20, size=(6, 97)).astype(np.float32)
    (r,) = run(kernel("algorithm", "rank"), device, x=x)
    want = np.empty_like(r)
    for i, order in enumerate(descending_order(x)):
        want[i, order] = np.arange(x.shape[1])
    np.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("device", DEVICES)
def test_topk(device):
    x = f32(7, 150, seed=28)
    k = 10
    vals, idx = run(
        kernel("algorithm", "topk"), device, x=x, vals=np.zeros((7, k), np.float32), idx=np.zeros((7, k), np.int32)
    )
    order = descending_order(x)[:, :k]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, axis=1))


@pytest.mark.parametrize("device", DEVICES)
def test_prefix_sum(device):
    x = f32(4, 513, seed=29)
    (y,) = run(kernel("algorithm", "prefix_sum"), device, x=x)
    close(y, np.cumsum(x.astype(np.float64), axis=1), atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_histogram_both_ways(device):
    x = rng(30).uniform(-1.2, 1.2, size=5000).astype(np.float32)
    b = 16
    counts, by_bin = run(
        kernel("algorithm", "histogram"), device, x=x, counts=np.zeros(b, np.int32), counts_by_bin=np.zeros(b, np.int32)
    )
    bins = np.clip(np.floor((x + np.float32(1.0)) * np.float32(0.5) * np.float32(b)), 0, b - 1).astype(np.int64)
    want = np.bincount(bins, minlength=b)
    np.testing.assert_array_equal(counts, want)
    np.testing.assert_array_equal(by_bin, want)


def test_scalars_are_checked():
    k = kernel("neural", "adam")
    z = np.zeros(4, np.float32)
    args = dict(p=z.copy(), m=z.copy(), v=z.copy(), g=z, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8)
    with pytest.raises(tile.TileError, match="`step` is i32"):
        k(step=2.5, **args)
    with pytest.raises(tile.TileError, match="missing argument for parameter `step`"):
        k(**args)
    with pytest.raises(tile.TileError, match="a number is accepted only for a scalar input"):
        k(step=1, **{**args, "p": 1.0})
    for bad, why in [(1j, "a real number"), (True, "a real number"), (1e300, "beyond its range"), (10**400, "beyond its range")]:
        with pytest.raises(tile.TileError, match=why):
            k(step=1, **{**args, "lr": bad})
    for bad in [float("inf"), float("nan"), 2**31]:
        with pytest.raises(tile.TileError, match="`step` is i32"):
            k(step=bad, **args)
    # A 0-d array is a scalar too.
    k(step=np.array(1, np.int32), **args)
