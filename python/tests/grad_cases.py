"""The functions the derivative tests share (`test_grad.py` against finite
differences, `test_grad_torch.py` with `torch.autograd.gradcheck`): every
differentiable operation a capture records, with arguments kept in their
domains."""

import numpy as np

import tile

@tile.jit
def softmax(x):
    m = tile.max(x, keepdims=True)
    e = tile.exp(x - m)
    return e / tile.sum(e, keepdims=True)


@tile.jit
def layernorm(x, w, b):
    mu = tile.mean(x, keepdims=True)
    d = x - mu
    var = tile.mean(d * d, keepdims=True)
    return d * tile.rsqrt(var + 1e-5) * w + b


@tile.jit
def smooth(x, w):
    # Arguments kept in each function's domain by construction.
    p = x * x + 1.5
    a = tile.log(p) + tile.log2(p) + tile.sqrt(p) + tile.rsqrt(p) + tile.log1p(x * x)
    b = tile.exp(tile.tanh(x)) + tile.exp2(tile.sin(x)) + tile.expm1(tile.cos(w))
    c = tile.sigmoid(x * w) + tile.erf(x) + tile.pow(p, tile.tanh(w)) + tile.fma(x, w, a)
    return a * b - c / p


@tile.jit
def kinks(x, w):
    # Non-smooth operations, away from their kinks with random inputs.
    return tile.where(x > w, tile.abs(x) * w, tile.maximum(x, w) - tile.minimum(x, 0.5 * w))


@tile.jit
def rows(x, w):
    # Reductions of every kind, broadcast back, and two results.
    s = tile.sum(x * w, keepdims=True)
    mx = tile.max(tile.sin(x), keepdims=True)
    mn = tile.min(x * x, keepdims=True)
    return x * s + mx * w, tile.mean(tile.tanh(x) * mn)


FUNCTIONS = [
    (softmax, [(5, 7)]),
    (layernorm, [(4, 9), (9,), (9,)]),
    (smooth, [(3, 6), (6,)]),
    (kinks, [(4, 5), (5,)]),
    (rows, [(3, 8), (8,)]),
]


def arguments(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def results(fn, args):
    out = fn(*args)
    return out if isinstance(out, tuple) else (out,)
