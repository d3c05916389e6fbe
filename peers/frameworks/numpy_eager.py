"""numpy_eager: NumPy on the CPU, an `out=` ufunc chain over preallocated
outputs and temporaries (one thread: NumPy ufuncs do not parallelise).

`kernels` is the number of ufunc/reduction calls per invocation (each one
pass over its operands), the CPU analogue of kernel launches.

The autodiff graphs are backward passes written by hand; each takes what
its forward pass would have saved (softmax's output, LayerNorm's mean and
reciprocal deviation), computed when the case is prepared, outside every
timed region.
"""

import common

NAME = "numpy_eager"


def probe():
    try:
        import numpy as np
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"import numpy failed: {common.error_summary(exc)}",
                "versions": {}, "device": common.cpu_model(), "targets": []}
    return {"available": True, "reason": "", "versions": {"numpy": np.__version__},
            "device": common.cpu_model(), "targets": ["cpu"]}


def prepare(case, inputs):
    if case.target != "cpu":
        raise common.NotAvailable(f"numpy_eager runs on the cpu only (asked for {case.target})")
    builder = _BUILDERS.get(case.graph)
    if builder is None:
        raise common.NotAvailable(f"graph {case.graph!r} is not implemented by numpy_eager")
    return NumpyRunner(case, inputs, builder)


class NumpyRunner(common.Runner):
    def __init__(self, case, inputs, builder):
        super().__init__()
        import numpy as np

        self.device = common.cpu_model()
        m, n = case.shape
        # Index and count outputs in NumPy's index type (what argmax and
        # bincount write); validation compares values.
        self._outs = {
            name: np.empty(case.output_shape(name), dtype=np.intp if case.output_dtype(name) == "i32" else np.float32)
            for name in case.output_names
        }
        self._fn, self.kernels, note = builder(np, inputs, self._outs, m, n)
        self.notes.append(note)

    def invoke(self):
        self._fn()

    def outputs(self):
        return {k: v.copy() for k, v in self._outs.items()}


def _sigmoid_pair(np, ins, outs, m, n):
    x, v, g = ins["x"], outs["value"], outs["grad"]
    t = np.empty_like(x)
    one = np.float32(1.0)

    def fn():
        np.negative(x, out=t)
        np.exp(t, out=t)
        np.add(t, one, out=t)
        np.reciprocal(t, out=v)  # v = 1 / (1 + exp(-x))
        np.multiply(v, v, out=t)
        np.subtract(v, t, out=g)  # g = v - v*v

    return fn, 6, "ufuncs: negative, exp, add, reciprocal -> value; multiply, subtract -> grad"


def _gelu_chain(np, x, t, u, value, grad):
    """A function of ufunc calls computing the GELU value of `x` into
    `value` (and the derivative into `grad` unless it is None), with
    preallocated temporaries `t`, `u`; and its number of calls."""
    c = np.float32(common.GELU_C)
    k = np.float32(common.GELU_K)
    k3 = np.float32(3.0 * common.GELU_K)
    half = np.float32(0.5)
    half_c = np.float32(0.5 * common.GELU_C)
    one = np.float32(1.0)
    def value_only():
        np.multiply(x, x, out=t)
        np.multiply(t, k, out=t)
        np.add(t, one, out=t)
        np.multiply(t, x, out=t)
        np.multiply(t, c, out=t)  # u = c * x * (1 + k x^2)
        np.tanh(t, out=t)
        np.add(t, one, out=t)
        np.multiply(t, x, out=t)
        np.multiply(t, half, out=value)  # 0.5 * x * (1 + tanh(u))

    def both():
        np.multiply(x, x, out=x2)
        np.multiply(x2, k, out=u)
        np.add(u, one, out=u)
        np.multiply(u, x, out=u)
        np.multiply(u, c, out=u)  # u = c * (x + k x^3)
        np.tanh(u, out=u)  # t = tanh(u)
        np.add(u, one, out=t)  # 1 + t
        np.multiply(t, x, out=value)
        np.multiply(value, half, out=value)  # value = 0.5 x (1 + t)
        np.multiply(u, u, out=u)
        np.subtract(one, u, out=u)  # 1 - t^2
        np.multiply(x2, k3, out=w)
        np.add(w, one, out=w)
        np.multiply(w, half_c, out=w)  # 0.5 c (1 + 3k x^2)
        np.multiply(u, w, out=u)
        np.multiply(u, x, out=u)  # 0.5 x (1 - t^2) c (1 + 3k x^2)
        np.multiply(t, half, out=grad)  # 0.5 (1 + t)
        np.add(grad, u, out=grad)

    if grad is None:
        return value_only, 9
    x2 = np.empty_like(x)
    w = np.empty_like(x)
    return both, 18


def _gelu_pair(np, ins, outs, m, n):
    x = ins["x"]
    fn, calls = _gelu_chain(np, x, np.empty_like(x), np.empty_like(x), outs["value"], outs["grad"])
    return fn, calls, "out= ufunc chain: u, tanh, value, grad (x^2 and tanh shared)"


def _add(np, ins, outs, m, n):
    a, b, y = ins["a"], ins["b"], outs["y"]

    def fn():
        np.add(a, b, out=y)

    return fn, 1, "np.add(a, b, out=y)"


def _gelu_ab(np, ins, outs, m, n):
    a, b, y = ins["a"], ins["b"], outs["y"]
    s = np.empty_like(a)
    gelu, calls = _gelu_chain(np, s, np.empty_like(a), None, y, None)

    def fn():
        np.add(a, b, out=s)
        gelu()

    return fn, calls + 1, "np.add(out=) then the GELU value chain"


def _softmax(np, ins, outs, m, n):
    x, y = ins["x"], outs["y"]
    mx = np.empty((m, 1), dtype=np.float32)
    s = np.empty((m, 1), dtype=np.float32)

    def fn():
        np.max(x, axis=-1, keepdims=True, out=mx)
        np.subtract(x, mx, out=y)
        np.exp(y, out=y)
        np.sum(y, axis=-1, keepdims=True, out=s)
        np.divide(y, s, out=y)

    return fn, 5, "max(keepdims), subtract, exp, sum(keepdims), divide, all out="


def _rmsnorm(np, ins, outs, m, n):
    x, w, y = ins["x"], ins["w"], outs["y"]
    r = np.empty((m, 1), dtype=np.float32)
    eps = np.float32(common.EPS)

    def fn():
        np.multiply(x, x, out=y)
        np.mean(y, axis=-1, keepdims=True, out=r)
        np.add(r, eps, out=r)
        np.sqrt(r, out=r)
        np.reciprocal(r, out=r)  # rsqrt(mean(x^2) + eps)
        np.multiply(x, r, out=y)
        np.multiply(y, w, out=y)

    return fn, 7, "multiply, mean(keepdims), add, sqrt, reciprocal, multiply, multiply, all out="


def _layernorm(np, ins, outs, m, n):
    x, w, b, y = ins["x"], ins["w"], ins["b"], outs["y"]
    mu = np.empty((m, 1), dtype=np.float32)
    r = np.empty((m, 1), dtype=np.float32)
    d = np.empty_like(x)
    eps = np.float32(common.EPS)

    def fn():
        np.mean(x, axis=-1, keepdims=True, out=mu)
        np.subtract(x, mu, out=d)
        np.multiply(d, d, out=y)
        np.mean(y, axis=-1, keepdims=True, out=r)  # biased variance
        np.add(r, eps, out=r)
        np.sqrt(r, out=r)
        np.reciprocal(r, out=r)
        np.multiply(d, r, out=y)
        np.multiply(y, w, out=y)
        np.add(y, b, out=y)

    return fn, 10, "two-pass mean/variance with out= ufuncs and mean(keepdims)"


def _row_lse(np, ins, outs, m, n):
    x, y = ins["x"], outs["y"]
    mx = np.empty((m, 1), dtype=np.float32)
    t = np.empty_like(x)

    def fn():
        np.max(x, axis=-1, keepdims=True, out=mx)
        np.subtract(x, mx, out=t)
        np.exp(t, out=t)
        np.sum(t, axis=-1, out=y)
        np.log(y, out=y)
        np.add(y, mx[:, 0], out=y)

    return fn, 6, "max(axis=-1), subtract, exp, sum(axis=-1), log, add (out=)"


def _row_norm(np, ins, outs, m, n):
    x, y = ins["x"], outs["y"]

    def fn():
        np.einsum("ij,ij->i", x, x, out=y)
        np.sqrt(y, out=y)

    return fn, 2, "einsum('ij,ij->i', x, x, out=y), sqrt (out=)"


def _col_sum(np, ins, outs, m, n):
    x, y = ins["x"], outs["y"]

    def fn():
        np.sum(x, axis=0, out=y)

    return fn, 1, "sum(axis=0) (out=)"


def _full_sum(np, ins, outs, m, n):
    x, t = ins["x"], outs["t"]

    def fn():
        np.sum(x, out=t[0:1].reshape(()))

    return fn, 1, "sum() (out=)"


def _matmul(np, ins, outs, m, n):
    a, b, c = ins["a"], ins["b"], outs["c"]

    def fn():
        np.matmul(a, b, out=c)

    return fn, 1, f"np.matmul(a, b, out=c) (BLAS: {_blas(np)})"


def _gemm_gelu_pair(np, ins, outs, m, n):
    a, b, bias, y, dy = ins["a"], ins["b"], ins["bias"], outs["y"], outs["dy"]
    z, t, u = (np.empty((m, n), dtype=np.float32) for _ in range(3))
    c = np.float32(0.7978845608028654)

    def fn():
        np.matmul(a, b, out=z)
        np.add(z, bias, out=z)
        # t = tanh(c z (1 + 0.044715 z^2))
        np.multiply(z, z, out=u)
        np.multiply(u, np.float32(0.044715), out=u)
        np.add(u, np.float32(1.0), out=u)
        np.multiply(u, z, out=t)
        np.multiply(t, c, out=t)
        np.tanh(t, out=t)
        # y = 0.5 z (1 + t)
        np.add(t, np.float32(1.0), out=y)
        np.multiply(y, z, out=y)
        np.multiply(y, np.float32(0.5), out=y)
        # dy = 0.5 (1 + t) + 0.5 c z (1 - t^2) (1 + 0.134145 z^2)
        np.multiply(t, t, out=dy)
        np.subtract(np.float32(1.0), dy, out=dy)
        np.multiply(dy, z, out=dy)
        np.multiply(dy, np.float32(0.5) * c, out=dy)
        np.multiply(z, z, out=u)
        np.multiply(u, np.float32(0.134145), out=u)
        np.add(u, np.float32(1.0), out=u)
        np.multiply(dy, u, out=dy)
        np.add(t, np.float32(1.0), out=u)
        np.multiply(u, np.float32(0.5), out=u)
        np.add(dy, u, out=dy)

    return fn, 22, f"np.matmul (BLAS: {_blas(np)}), then 21 ufuncs for the bias and GELU's value and derivative (out=)"


def _blas(np):
    """The BLAS NumPy links, from its build configuration."""
    try:
        cfg = np.show_config(mode="dicts")
        return cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # noqa: BLE001
        return "unknown"


def _row_dot(np, ins, outs, m, n):
    a, b, d = ins["a"], ins["b"], outs["d"]

    def fn():
        np.einsum("ij,ij->i", a, b, out=d)

    return fn, 1, "einsum('ij,ij->i', a, b, out=d)"


def _transpose(np, ins, outs, m, n):
    x, y = ins["x"], outs["y"]

    def fn():
        np.copyto(y, x.T)

    return fn, 1, "np.copyto(y, x.T) (a strided copy)"


def _cross_entropy(np, ins, outs, m, n):
    x, label, loss, dx = ins["x"], ins["label"], outs["loss"], outs["dx"]
    mx = np.empty((m, 1), dtype=np.float32)
    s = np.empty((m, 1), dtype=np.float32)
    rows = np.arange(m)

    def fn():
        np.max(x, axis=-1, keepdims=True, out=mx)
        np.subtract(x, mx, out=dx)
        np.exp(dx, out=dx)
        np.sum(dx, axis=-1, keepdims=True, out=s)
        np.divide(dx, s, out=dx)  # softmax
        np.log(s, out=s)
        np.add(s, mx, out=s)  # log-sum-exp
        np.subtract(s[:, 0], x[rows, label], out=loss)
        dx[rows, label] -= 1.0

    return fn, 9, "max, subtract, exp, sum, divide (softmax); log, add (lse); gather-subtract (loss); scatter-subtract (dx)"


def _mse(np, ins, outs, m, n):
    p, t, loss, grad = ins["p"], ins["t"], outs["loss"], outs["grad"]
    d = np.empty_like(p)
    sq = np.empty_like(p)
    scale = np.float32(2.0 / (m * n))

    def fn():
        np.subtract(p, t, out=d)
        np.multiply(d, d, out=sq)
        np.sum(sq, out=loss)  # pairwise summation (np.vdot's float32 BLAS sum misses the tolerance)
        np.divide(loss, m * n, out=loss)
        np.multiply(d, scale, out=grad)

    return fn, 5, "subtract, multiply, sum (pairwise), divide (loss); multiply (grad)"


def _attention(np, ins, outs, m, n):
    q, k, v, o = ins["q"], ins["k"], ins["v"], outs["o"]
    s = np.empty((m, n), dtype=np.float32)
    mx = np.empty((m, 1), dtype=np.float32)
    z = np.empty((m, 1), dtype=np.float32)
    scale = np.float32(1.0 / np.sqrt(q.shape[1]))

    def fn():
        np.matmul(q, k.T, out=s)
        np.multiply(s, scale, out=s)
        np.max(s, axis=-1, keepdims=True, out=mx)
        np.subtract(s, mx, out=s)
        np.exp(s, out=s)
        np.sum(s, axis=-1, keepdims=True, out=z)
        np.divide(s, z, out=s)
        np.matmul(s, v, out=o)

    return fn, 8, "matmul, scale, max, subtract, exp, sum, divide, matmul (out=)"


def _conv1d(np, ins, outs, m, n):
    x, w, y = ins["x"], ins["w"], outs["y"]
    t = np.empty_like(y)

    def fn():
        np.multiply(x[:, 0:n], w[0], out=y)
        for k in range(1, w.shape[0]):
            np.multiply(x[:, k : k + n], w[k], out=t)
            np.add(y, t, out=y)

    return fn, 2 * w.shape[0] - 1, "per tap: multiply a shifted view, add (out=)"


def _argmax(np, ins, outs, m, n):
    x, idx, best = ins["x"], outs["idx"], outs["best"]

    def fn():
        np.argmax(x, axis=-1, out=idx)
        np.max(x, axis=-1, out=best)

    return fn, 2, "argmax(axis=-1), max(axis=-1) (out=)"


def _prefix_sum(np, ins, outs, m, n):
    x, y = ins["x"], outs["y"]

    def fn():
        np.cumsum(x, axis=-1, out=y)

    return fn, 1, "cumsum(axis=-1, out=y)"


def _rank(np, ins, outs, m, n):
    x, r = ins["x"], outs["r"]
    neg = np.empty_like(x)
    ranks = np.broadcast_to(np.arange(n), (m, n))

    def fn():
        np.negative(x, out=neg)
        order = np.argsort(neg, axis=-1, kind="stable")
        np.put_along_axis(r, order, ranks, axis=-1)

    return fn, 3, "negative, argsort(stable), put_along_axis"


def _topk(np, ins, outs, m, n):
    x, vals, idx = ins["x"], outs["vals"], outs["idx"]
    k = vals.shape[1]
    neg = np.empty_like(x)

    def fn():
        np.negative(x, out=neg)
        order = np.argsort(neg, axis=-1, kind="stable")[:, :k]
        idx[...] = order
        vals[...] = np.take_along_axis(x, order, axis=-1)

    return fn, 4, "negative, argsort(stable), slice, take_along_axis (a full sort: NumPy's argpartition does not keep ties in index order)"


def _histogram(np, ins, outs, m, n):
    x, counts, by_bin = ins["x"], outs["counts"], outs["counts_by_bin"]
    b = counts.shape[0]
    t = np.empty_like(x)

    def fn():
        np.add(x, np.float32(1.0), out=t)
        np.multiply(t, np.float32(0.5 * b), out=t)
        np.floor(t, out=t)
        np.clip(t, 0, b - 1, out=t)
        counts[...] = np.bincount(t.astype(np.intp), minlength=b)
        by_bin[...] = counts

    return fn, 6, "add, multiply, floor, clip, astype, bincount"


def _saved_softmax(np, x):
    """softmax(x) along the last axis in float32: what a forward pass saves
    for the backward (computed outside every timed region)."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_grad(np, ins, outs, m, n):
    g, dx = ins["grad_y"], outs["grad_x"]
    y = _saved_softmax(np, ins["x"])
    dot = np.empty((m, 1), dtype=np.float32)

    def fn():
        np.multiply(g, y, out=dx)
        np.sum(dx, axis=-1, keepdims=True, out=dot)
        np.subtract(g, dot, out=dx)
        np.multiply(dx, y, out=dx)

    return fn, 4, "saved y = softmax(x) (untimed); y * (g - sum(g * y)): multiply, sum(keepdims), subtract, multiply, all out="


def _layernorm_grad(np, ins, outs, m, n):
    x, w, g = ins["x"], ins["w"], ins["grad_y"]
    dx, dw, db = outs["grad_x"], outs["grad_w"], outs["grad_b"]
    mean = x.mean(axis=-1, keepdims=True)
    rstd = (1.0 / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + common.EPS)).astype(np.float32)
    xhat, gw = np.empty_like(x), np.empty_like(x)
    c1, c2 = np.empty((m, 1), dtype=np.float32), np.empty((m, 1), dtype=np.float32)

    def fn():
        np.subtract(x, mean, out=xhat)
        np.multiply(xhat, rstd, out=xhat)
        np.multiply(g, xhat, out=dx)
        np.sum(dx, axis=0, out=dw)
        np.sum(g, axis=0, out=db)
        np.multiply(g, w, out=gw)
        np.mean(gw, axis=-1, keepdims=True, out=c1)
        np.multiply(gw, xhat, out=dx)
        np.mean(dx, axis=-1, keepdims=True, out=c2)
        np.multiply(xhat, c2, out=dx)
        np.subtract(gw, dx, out=dx)
        np.subtract(dx, c1, out=dx)
        np.multiply(dx, rstd, out=dx)

    return fn, 13, (
        "saved mean, rstd (untimed); xhat = (x - mean) * rstd; grad_w = sum_rows(g * xhat), grad_b = sum_rows(g); "
        "grad_x = rstd * (g*w - mean(g*w) - xhat * mean(g*w*xhat)), all out="
    )


def _cross_entropy_loss_grad(np, ins, outs, m, n):
    gl, dx = ins["grad_loss"], outs["grad_x"]
    p = _saved_softmax(np, ins["x"])
    rows, label = np.arange(m), ins["label"]
    scale = gl[:, None]

    def fn():
        np.copyto(dx, p)
        dx[rows, label] -= 1.0
        np.multiply(dx, scale, out=dx)

    return fn, 3, "saved p = softmax(x) (untimed); (p - onehot(label)) * grad_loss: copyto, scatter-subtract, multiply"


_BUILDERS = {
    "sigmoid_pair": _sigmoid_pair,
    "gelu_pair": _gelu_pair,
    "add": _add,
    "gelu_ab": _gelu_ab,
    "softmax": _softmax,
    "rmsnorm": _rmsnorm,
    "layernorm": _layernorm,
    "row_lse": _row_lse,
    "row_norm": _row_norm,
    "col_sum": _col_sum,
    "full_sum": _full_sum,
    "matmul": _matmul,
    "gemm": _matmul,
    "bmm": _matmul,
    "gemm_gelu_pair": _gemm_gelu_pair,
    "row_dot": _row_dot,
    "transpose": _transpose,
    "cross_entropy": _cross_entropy,
    "mse": _mse,
    "attention": _attention,
    "conv1d": _conv1d,
    "softmax_grad": _softmax_grad,
    "layernorm_grad": _layernorm_grad,
    "cross_entropy_loss_grad": _cross_entropy_loss_grad,
    "argmax": _argmax,
    "prefix_sum": _prefix_sum,
    "rank": _rank,
    "topk": _topk,
    "histogram": _histogram,
}
