"""torch_eager: PyTorch eager mode, on the CPU (target cpu) or the first
CUDA device (target cuda), with preallocated outputs and `out=` calls.

- sigmoid_pair: `torch.sigmoid(x, out=v)`, `torch.mul(v, v, out=t)`,
  `torch.sub(v, t, out=g)` (three kernels);
- gelu_pair: `torch._C._nn.gelu(x, approximate='tanh', out=v)` and
  `torch.ops.aten.gelu_backward.grad_input(ones, x, approximate='tanh',
  grad_input=g)` with a preallocated unit gradient `ones` (two kernels);
- controls: `torch.add(out=)`; add + gelu (out=); `aten._softmax.out`;
  `F.rms_norm`; `F.layer_norm` (the last two have no out= variant);
- reductions: `torch.logsumexp(out=)`, `torch.linalg.vector_norm(out=)`;
- the matrix, neural and algorithm suites: `torch.matmul(out=)` (cuBLAS or
  the CPU BLAS), `F.cross_entropy` pieces, `torch.sort(stable=True)`,
  `torch.cumsum(out=)`, `torch.bincount`.

- the autodiff suite: the backward kernels eager autograd runs, given what
  the forward saved (computed when the case is prepared, untimed):
  `aten._softmax_backward_data` on the saved output,
  `aten.native_layer_norm_backward` on the saved mean and rstd, and
  `torch.autograd.grad` through `F.cross_entropy(reduction="none")`
  (`retain_graph=True`, so each call replays the same backward).

Everything runs under `torch.inference_mode()` (no autograd bookkeeping),
except the cross-entropy backward, which needs autograd's graph.
`kernels` is the number of out-calls per invocation where each is known to
be one kernel, else null. gpu phases use `torch.cuda.Event`s on the
current stream.
"""

import common

NAME = "torch_eager"


def torch_versions(torch):
    v = {"torch": torch.__version__}
    cuda = getattr(torch.version, "cuda", None)
    if cuda:
        v["torch_cuda"] = cuda
    return v


def cuda_device_name(torch):
    """The name of CUDA device 0, or None when there is none."""
    try:
        if torch.cuda.is_available() and torch.cuda.device_count() > 0:
            return torch.cuda.get_device_name(0)
    except Exception as exc:  # noqa: BLE001
        common.log(f"torch cuda probe failed: {common.error_summary(exc)}")
    return None


def probe():
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"import torch failed: {common.error_summary(exc)}",
                "versions": {}, "device": common.cpu_model(), "targets": []}
    gpu = cuda_device_name(torch)
    targets = ["cpu", "cuda"] if gpu else ["cpu"]
    return {
        "available": True,
        "reason": "" if gpu else "no CUDA device: cpu target only",
        "versions": torch_versions(torch),
        "device": gpu or common.cpu_model(),
        "devices": {"cpu": common.cpu_model(), "cuda": gpu},
        "targets": targets,
        "torch_threads": torch.get_num_threads(),
    }


def prepare(case, inputs):
    import torch

    builder = _BUILDERS.get(case.graph)
    if builder is None:
        raise common.NotAvailable(f"graph {case.graph!r} is not implemented by torch_eager")
    if case.target == "cuda" and cuda_device_name(torch) is None:
        raise common.NotAvailable("torch_eager: no CUDA device for target cuda")
    return TorchRunner(torch, case, inputs, builder)


class TorchRunner(common.Runner):
    """Tensors on the target device; `fn` issues one invocation's calls."""

    def __init__(self, torch, case, inputs, builder):
        super().__init__()
        self.torch = torch
        self._mode = torch.inference_mode()
        self._mode.__enter__()
        try:
            self.cuda = case.target == "cuda"
            dev = torch.device("cuda", 0) if self.cuda else torch.device("cpu")
            if self.cuda:
                torch.cuda.set_device(0)
                # PyTorch's default is exact FP32 products (False); `tile
                # bench --allow-tf32` asks for cuBLAS's TF32 mode.
                torch.backends.cuda.matmul.allow_tf32 = case.allow_tf32
                if case.allow_tf32:
                    self.notes.append("TF32 products allowed (torch.backends.cuda.matmul.allow_tf32 = True)")
                self.device = torch.cuda.get_device_name(0)
                self.has_gpu_events = True
                self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            else:
                self.device = common.cpu_model()
                self.notes.append(f"torch cpu threads: {torch.get_num_threads()}")
            ins = {k: torch.from_numpy(v).to(dev).contiguous() for k, v in inputs.items()}
            m, n = case.shape
            # Index and count outputs in torch's index type (int64, what
            # argmax and sort write); validation compares values.
            self._outs = {
                name: torch.empty(
                    case.output_shape(name),
                    dtype=torch.int64 if case.output_dtype(name) == "i32" else torch.float32,
                    device=dev,
                )
                for name in case.output_names
            }
            self._fn, self.kernels, note = builder(torch, ins, self._outs, m, n, self.notes)
            self.notes.append(note)
            self.sync()
        except BaseException:
            self._mode.__exit__(None, None, None)
            raise

    def invoke(self):
        self._fn()

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def gpu_time(self, n):
        return common.torch_event_time(self.torch, self._events, self._fn, n)

    def outputs(self):
        # A builder without an out= variant rebinds the result tensor in _outs.
        return {k: v.detach().cpu().numpy().copy() for k, v in self._outs.items()}

    def close(self):
        self._outs = None
        self._fn = None
        self._mode.__exit__(None, None, None)
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()


def _gelu_out(torch, notes):
    """`gelu(x, out=y)` with approximate='tanh', or a fallback that
    returns a new tensor (then None is returned for the out variant)."""
    try:
        f = torch._C._nn.gelu

        def gelu_out(x, y):
            f(x, approximate="tanh", out=y)

        probe_x = torch.zeros(2)
        gelu_out(probe_x, torch.empty(2))
        return gelu_out
    except Exception as exc:  # noqa: BLE001
        notes.append(f"torch._C._nn.gelu(out=) unavailable ({type(exc).__name__}): F.gelu without out=")
        return None


def _sigmoid_pair(torch, ins, outs, m, n, notes):
    x, v, g = ins["x"], outs["value"], outs["grad"]
    t = torch.empty_like(x)
    sigmoid, mul, sub = torch.sigmoid, torch.mul, torch.sub

    def fn():
        sigmoid(x, out=v)
        mul(v, v, out=t)
        sub(v, t, out=g)

    return fn, 3, "torch.sigmoid(out=v), torch.mul(v, v, out=t), torch.sub(v, t, out=g)"


def _gelu_pair(torch, ins, outs, m, n, notes):
    import torch.nn.functional as F

    x, v, g = ins["x"], outs["value"], outs["grad"]
    ones = torch.ones_like(x)
    gelu_out = _gelu_out(torch, notes)
    kernels = 2
    try:
        bw = torch.ops.aten.gelu_backward.grad_input
        bw(ones[:1, :1], x[:1, :1], approximate="tanh", grad_input=torch.empty_like(x[:1, :1]))

        def backward():
            bw(ones, x, approximate="tanh", grad_input=g)

    except Exception as exc:  # noqa: BLE001
        notes.append(f"aten.gelu_backward.grad_input unavailable ({type(exc).__name__}): no out=")
        kernels = None
        bw2 = torch.ops.aten.gelu_backward

        def backward():
            outs["grad"] = bw2(ones, x, approximate="tanh")

    if gelu_out is not None:

        def fn():
            gelu_out(x, v)
            backward()

    else:
        kernels = None

        def fn():
            outs["value"] = F.gelu(x, approximate="tanh")
            backward()

    return fn, kernels, "gelu(x, approximate='tanh', out=v); gelu_backward.grad_input(ones, x, grad_input=g)"


def _add(torch, ins, outs, m, n, notes):
    a, b, y = ins["a"], ins["b"], outs["y"]
    add = torch.add

    def fn():
        add(a, b, out=y)

    return fn, 1, "torch.add(a, b, out=y)"


def _gelu_ab(torch, ins, outs, m, n, notes):
    import torch.nn.functional as F

    a, b, y = ins["a"], ins["b"], outs["y"]
    s = torch.empty_like(a)
    add = torch.add
    gelu_out = _gelu_out(torch, notes)
    if gelu_out is not None:

        def fn():
            add(a, b, out=s)
            gelu_out(s, y)

        return fn, 2, "torch.add(out=s); gelu(s, approximate='tanh', out=y)"

    def fn2():
        add(a, b, out=s)
        outs["y"] = F.gelu(s, approximate="tanh")

    return fn2, None, "torch.add(out=s); F.gelu(s, approximate='tanh')"


def _softmax(torch, ins, outs, m, n, notes):
    x, y = ins["x"], outs["y"]
    try:
        sm = torch.ops.aten._softmax.out
        sm(x[:1], -1, False, out=torch.empty_like(x[:1]))

        def fn():
            sm(x, -1, False, out=y)

        return fn, 1, "aten._softmax.out(x, -1, out=y)"
    except Exception as exc:  # noqa: BLE001
        notes.append(f"aten._softmax.out unavailable ({type(exc).__name__})")

        def fn2():
            outs["y"] = torch.softmax(x, -1)

        return fn2, None, "torch.softmax(x, -1) (no out=)"


def _rmsnorm(torch, ins, outs, m, n, notes):
    import torch.nn.functional as F

    x, w = ins["x"], ins["w"]
    if hasattr(F, "rms_norm"):

        def fn():
            outs["y"] = F.rms_norm(x, (n,), w, eps=common.EPS)

        return fn, None, "F.rms_norm(x, (N,), w, eps=1e-5) (no out= variant; kernel count not known)"

    def fn2():
        outs["y"] = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + common.EPS) * w

    return fn2, None, "F.rms_norm missing: x * rsqrt(mean(x^2) + eps) * w in eager ops"


def _layernorm(torch, ins, outs, m, n, notes):
    import torch.nn.functional as F

    x, w, b = ins["x"], ins["w"], ins["b"]

    def fn():
        outs["y"] = F.layer_norm(x, (n,), w, b, eps=common.EPS)

    return fn, None, "F.layer_norm(x, (N,), w, b, eps=1e-5) (no out= variant; kernel count not known)"


def _row_lse(torch, ins, outs, m, n, notes):
    x, y = ins["x"], outs["y"]

    def fn():
        torch.logsumexp(x, -1, out=y)

    return fn, None, "torch.logsumexp(x, -1, out=y) (kernel count not known)"


def _row_norm(torch, ins, outs, m, n, notes):
    x, y = ins["x"], outs["y"]

    def fn():
        torch.linalg.vector_norm(x, dim=-1, out=y)

    return fn, None, "torch.linalg.vector_norm(x, dim=-1, out=y) (kernel count not known)"


def _col_sum(torch, ins, outs, m, n, notes):
    x, y = ins["x"], outs["y"]

    def fn():
        torch.sum(x, 0, out=y)

    return fn, None, "torch.sum(x, 0, out=y) (kernel count not known)"


def _full_sum(torch, ins, outs, m, n, notes):
    x, t = ins["x"], outs["t"]

    def fn():
        torch.sum(x, (0, 1), keepdim=False, out=t[0])

    return fn, None, "torch.sum(x, (0, 1), out=t[0]) (kernel count not known)"


def _gemm_gelu_pair(torch, ins, outs, m, n, notes):
    a, b, bias, y, dy = ins["a"], ins["b"], ins["bias"], outs["y"], outs["dy"]
    c, k = 0.7978845608028654, 0.044715

    def fn():
        z = torch.addmm(bias, a, b)
        z2 = z * z
        t = torch.tanh(c * (z + k * z2 * z))
        torch.mul(0.5 * z, 1.0 + t, out=y)
        torch.add(0.5 * (1.0 + t), 0.5 * z * (1.0 - t * t) * c * (1.0 + 3.0 * k * z2), out=dy)

    return fn, None, "torch.addmm(bias, a, b) (cuBLAS on cuda), then eager ops for GELU's value and derivative (kernel count not known)"


def _matmul(torch, ins, outs, m, n, notes):
    a, b, c = ins["a"], ins["b"], outs["c"]

    def fn():
        torch.matmul(a, b, out=c)

    return fn, None, "torch.matmul(a, b, out=c) (cuBLAS on cuda; kernel count not known)"


def _row_dot(torch, ins, outs, m, n, notes):
    a, b, d = ins["a"], ins["b"], outs["d"]
    t = torch.empty_like(a)

    def fn():
        torch.mul(a, b, out=t)
        torch.sum(t, -1, out=d)

    return fn, 2, "torch.mul(out=), torch.sum(-1, out=)"


def _transpose(torch, ins, outs, m, n, notes):
    x, y = ins["x"], outs["y"]

    def fn():
        y.copy_(x.t())

    return fn, 1, "y.copy_(x.t()) (a strided copy)"


def _cross_entropy(torch, ins, outs, m, n, notes):
    x, label, loss, dx = ins["x"], ins["label"].long(), outs["loss"], outs["dx"]
    rows = torch.arange(m, device=x.device)

    sm = torch.ops.aten._softmax.out

    def fn():
        torch.logsumexp(x, -1, out=loss)
        sm(x, -1, False, out=dx)
        loss.sub_(x[rows, label])
        dx[rows, label] -= 1.0

    return fn, None, "logsumexp(out=) - gathered logit (loss); aten._softmax.out then scatter-subtract (dx); kernel count not known"


def _mse(torch, ins, outs, m, n, notes):
    p, t, loss, grad = ins["p"], ins["t"], outs["loss"], outs["grad"]
    scale = 2.0 / (m * n)

    def fn():
        torch.sub(p, t, out=grad)
        torch.mean(grad * grad, out=loss)
        grad.mul_(scale)

    return fn, None, "sub(out=grad), mean(grad*grad, out=loss), grad *= 2/(MN) (kernel count not known)"


def _attention(torch, ins, outs, m, n, notes):
    q, k, v, o = ins["q"], ins["k"], ins["v"], outs["o"]
    F = torch.nn.functional

    def fn():
        o.copy_(F.scaled_dot_product_attention(q[None], k[None], v[None])[0])

    return fn, None, "F.scaled_dot_product_attention (the backend torch picks; kernel count not known)"


def _conv1d(torch, ins, outs, m, n, notes):
    x, w, y = ins["x"], ins["w"], outs["y"]
    F = torch.nn.functional

    def fn():
        y.copy_(F.conv1d(x[:, None, :], w[None, None, :])[:, 0, :])

    return fn, None, "F.conv1d over rows as a batch of one channel (kernel count not known)"


def _argmax(torch, ins, outs, m, n, notes):
    x, idx, best = ins["x"], outs["idx"], outs["best"]

    def fn():
        torch.max(x, -1, out=(best, idx))

    return fn, 1, "torch.max(x, -1, out=(values, indices))"


def _prefix_sum(torch, ins, outs, m, n, notes):
    x, y = ins["x"], outs["y"]

    def fn():
        torch.cumsum(x, -1, out=y)

    return fn, None, "torch.cumsum(x, -1, out=y) (kernel count not known)"


def _rank(torch, ins, outs, m, n, notes):
    x, r = ins["x"], outs["r"]
    ranks = torch.arange(n, device=x.device).expand(m, n)

    def fn():
        order = torch.sort(x, dim=-1, descending=True, stable=True).indices
        r.scatter_(-1, order, ranks)

    return fn, None, "torch.sort(descending, stable), scatter_ of positions (kernel count not known)"


def _topk(torch, ins, outs, m, n, notes):
    x, vals, idx = ins["x"], outs["vals"], outs["idx"]
    k = vals.shape[1]

    def fn():
        s = torch.sort(x, dim=-1, descending=True, stable=True)
        vals.copy_(s.values[:, :k])
        idx.copy_(s.indices[:, :k])

    return fn, None, "torch.sort(descending, stable) then the first K (torch.topk does not order ties by index); kernel count not known"


def _histogram(torch, ins, outs, m, n, notes):
    x, counts, by_bin = ins["x"], outs["counts"], outs["counts_by_bin"]
    b = counts.shape[0]

    def fn():
        t = torch.floor((x + 1.0) * (0.5 * b)).clamp_(0, b - 1).long()
        counts.copy_(torch.bincount(t, minlength=b))
        by_bin.copy_(counts)

    return fn, None, "floor, clamp, bincount (kernel count not known)"


def _softmax_grad(torch, ins, outs, m, n, notes):
    x, g = ins["x"], ins["grad_y"]
    y = torch.softmax(x, -1)  # saved by the forward
    bwd = torch.ops.aten._softmax_backward_data

    def fn():
        outs["grad_x"] = bwd(g, y, -1, torch.float32)

    return fn, 1, "aten._softmax_backward_data(g, y, -1) on the saved y = softmax(x) (what autograd runs)"


def _layernorm_grad(torch, ins, outs, m, n, notes):
    x, w, b, g = ins["x"], ins["w"], ins["b"], ins["grad_y"]
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], w, b, common.EPS)  # saved by the forward
    bwd = torch.ops.aten.native_layer_norm_backward

    def fn():
        outs["grad_x"], outs["grad_w"], outs["grad_b"] = bwd(g, x, [n], mean, rstd, w, b, [True, True, True])

    return fn, None, "aten.native_layer_norm_backward on the saved mean and rstd (what autograd runs; kernel count not known)"


def _cross_entropy_loss_grad(torch, ins, outs, m, n, notes):
    import torch.nn.functional as F

    # Autograd needs ordinary tensors: clones made outside inference mode.
    with torch.inference_mode(False):
        x = ins["x"].clone().requires_grad_(True)
        gl = ins["grad_loss"].clone()
        loss = F.cross_entropy(x, ins["label"].long().clone(), reduction="none")

    def fn():
        with torch.inference_mode(False):
            (outs["grad_x"],) = torch.autograd.grad(loss, x, gl, retain_graph=True)

    return fn, None, 'torch.autograd.grad through F.cross_entropy(x, label, reduction="none"), retain_graph=True'


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
