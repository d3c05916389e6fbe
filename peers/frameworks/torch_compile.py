"""torch_compile: the case's graph as one Python function under
`torch.compile` (Inductor, default mode: no CUDA graphs; fullgraph,
static shapes), on the first CUDA device.

The function writes its outputs into preallocated tensors (`out.copy_()`
inside the compiled region, which Inductor turns into stores into the
output buffers); should that fail to compile, the function returns fresh
outputs instead and the notes say so. The pair graphs are the seed-suite
formulas written with torch ops (sigmoid: `torch.sigmoid`, then
`s * (1 - s)`; GELU: the tanh formula and its derivative); controls use
`a + b`, `F.gelu(approximate='tanh')`, `torch.softmax`, the RMSNorm
formula and `F.layer_norm`; reductions `torch.logsumexp` and
`torch.linalg.vector_norm` along the last axis.

The autodiff graphs compile the forward (`torch.softmax`, `F.layer_norm`,
`F.cross_entropy(reduction="none")`) with inputs that require grad, run
it once, and time `torch.autograd.grad(y, inputs, cotangent,
retain_graph=True)`: the backward Inductor compiled, reading what its
forward saved. Their gradients are fresh tensors per call.

No inference_mode/no_grad context: on torch 2.11 (H200) both made the
compiled call slower (about 69 vs 51 us per call at 1x127); the tensors do
not require grad, so nothing is recorded for autograd.
Dynamo is reset before each case, so every case compiles fresh; the first
invocation (compilation) happens before validation, outside timing.
`kernels` is the number of kernels Inductor generated for the case when
`torch._inductor.metrics` reports it, else null.
"""

import math

import common
from frameworks import torch_eager

NAME = "torch_compile"


def probe():
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"import torch failed: {common.error_summary(exc)}",
                "versions": {}, "device": common.cpu_model(), "targets": []}
    versions = torch_eager.torch_versions(torch)
    try:
        import triton

        versions["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        versions["triton"] = None
    if not hasattr(torch, "compile"):
        return {"available": False, "reason": f"torch {torch.__version__} has no torch.compile",
                "versions": versions, "device": common.cpu_model(), "targets": []}
    gpu = torch_eager.cuda_device_name(torch)
    if gpu is None:
        return {"available": False, "reason": "no CUDA device (torch_compile runs on cuda only)",
                "versions": versions, "device": common.cpu_model(), "targets": []}
    return {"available": True, "reason": "", "versions": versions, "device": gpu, "targets": ["cuda"]}


C = math.sqrt(2.0 / math.pi)
K = 0.044715


def _graph(torch, graph, n):
    """(function of the inputs returning the outputs in order, description)."""
    import torch.nn.functional as F

    if graph == "sigmoid_pair":

        def f(x):
            s = torch.sigmoid(x)
            return s, s * (1.0 - s)

        return f, "s = sigmoid(x); (s, s * (1 - s))"
    if graph == "gelu_pair":

        def f(x):
            x2 = x * x
            t = torch.tanh(C * (x + K * x2 * x))
            value = 0.5 * x * (1.0 + t)
            grad = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * C * (1.0 + 3.0 * K * x2)
            return value, grad

        return f, "GELU tanh formula and its derivative"
    if graph == "add":
        return (lambda a, b: (a + b,)), "a + b"
    if graph == "gelu_ab":
        return (lambda a, b: (F.gelu(a + b, approximate="tanh"),)), "F.gelu(a + b, approximate='tanh')"
    if graph == "softmax":
        return (lambda x: (torch.softmax(x, -1),)), "torch.softmax(x, -1)"
    if graph == "rmsnorm":

        def f(x, w):
            return (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + common.EPS) * w,)

        return f, "x * rsqrt(mean(x^2, -1) + 1e-5) * w"
    if graph == "layernorm":
        return (lambda x, w, b: (F.layer_norm(x, (n,), w, b, eps=common.EPS),)), "F.layer_norm(x, (N,), w, b)"
    if graph == "row_lse":
        return (lambda x: (torch.logsumexp(x, -1),)), "torch.logsumexp(x, -1)"
    if graph == "row_norm":
        return (lambda x: (torch.linalg.vector_norm(x, dim=-1),)), "torch.linalg.vector_norm(x, dim=-1)"
    if graph == "col_sum":
        return (lambda x: (torch.sum(x, 0),)), "torch.sum(x, 0)"
    if graph == "full_sum":
        return (lambda x: (torch.sum(x).reshape(1),)), "torch.sum(x).reshape(1)"
    if graph in ("gemm", "bmm"):
        return (lambda a, b: (a @ b,)), "a @ b"
    if graph == "gemm_gelu_pair":

        def f(a, b, bias):
            z = a @ b + bias
            z2 = z * z
            t = torch.tanh(C * (z + K * z2 * z))
            value = 0.5 * z * (1.0 + t)
            grad = 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * C * (1.0 + 3.0 * K * z2)
            return value, grad

        return f, "z = a @ b + bias; GELU tanh formula and its derivative"
    if graph == "attention":

        def f(q, k, v):
            s = (q @ k.T) * (1.0 / math.sqrt(q.shape[1]))
            return (torch.softmax(s, dim=-1) @ v,)

        return f, "softmax((q @ k.T) / sqrt(D), -1) @ v (inductor may match it to its attention kernels)"
    return None, ""


def prepare(case, inputs):
    import torch

    if case.target != "cuda":
        raise common.NotAvailable(f"torch_compile runs on cuda only (asked for {case.target})")
    if torch_eager.cuda_device_name(torch) is None:
        raise common.NotAvailable("torch_compile: no CUDA device")
    if case.graph in _BACKWARDS:
        return BackwardRunner(torch, case, inputs)
    f, desc = _graph(torch, case.graph, case.n)
    if f is None:
        raise common.NotAvailable(f"graph {case.graph!r} is not implemented by torch_compile")
    return CompiledRunner(torch, case, inputs, f, desc)


def _kernel_count(torch):
    try:
        from torch._inductor import metrics

        return int(metrics.generated_kernel_count)
    except Exception:  # noqa: BLE001
        return None


def _reset_kernel_count(torch):
    try:
        from torch._inductor import metrics

        metrics.reset()
        return True
    except Exception:  # noqa: BLE001
        return False


class CompiledRunner(common.Runner):
    def __init__(self, torch, case, inputs, f, desc):
        super().__init__()
        self.torch = torch
        self.has_gpu_events = True
        self._result = None
        torch._dynamo.reset()
        torch.cuda.set_device(0)
        # Exact FP32 products unless `tile bench --allow-tf32` allows TF32
        # for this case (its matrix products only), as in torch_eager.
        torch.backends.cuda.matmul.allow_tf32 = case.allow_tf32
        if case.allow_tf32:
            self.notes.append("TF32 products allowed (torch.backends.cuda.matmul.allow_tf32 = True)")
        dev = torch.device("cuda", 0)
        self.device = torch.cuda.get_device_name(0)
        self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        self._args = [torch.from_numpy(inputs[k]).to(dev).contiguous() for k in case.input_names]
        m, n = case.shape
        self._names = case.output_names
        self._outs = [torch.empty(case.output_shape(k), dtype=torch.float32, device=dev) for k in self._names]
        self.notes.append(f"torch.compile(fullgraph=True, dynamic=False), default mode: {desc}")
        self._compile_into(torch, f)

    def _compile_into(self, torch, f):
        """Compile the graph writing into preallocated outputs; fall back to
        returning fresh outputs if that does not compile."""

        n_in = len(self._args)

        def into(*args_and_outs):
            results = f(*args_and_outs[:n_in])
            for out, r in zip(args_and_outs[n_in:], results):
                out.copy_(r)

        counted = _reset_kernel_count(torch)
        try:
            cf = torch.compile(into, fullgraph=True, dynamic=False)
            call_args = tuple(self._args) + tuple(self._outs)
            cf(*call_args)  # compiles
            torch.cuda.synchronize()
            self._fn = lambda: cf(*call_args)
            self.notes.append("outputs preallocated (copy_ into them inside the compiled function)")
        except Exception as exc:  # noqa: BLE001
            common.log(f"torch_compile with out.copy_ failed: {common.error_summary(exc)}")
            torch._dynamo.reset()
            counted = _reset_kernel_count(torch)
            cf = torch.compile(f, fullgraph=True, dynamic=False)
            args = tuple(self._args)
            self._result = cf(*args)  # compiles
            torch.cuda.synchronize()

            def fn():
                self._result = cf(*args)

            self._fn = fn
            self._outs = None
            self.notes.append(
                f"compiling with preallocated outputs failed ({type(exc).__name__}): outputs allocated per call"
            )
        count = _kernel_count(torch) if counted else None
        self.kernels = count if count else None
        if self.kernels is not None:
            self.notes.append("kernels = torch._inductor.metrics.generated_kernel_count")

    def invoke(self):
        self._fn()

    def sync(self):
        self.torch.cuda.synchronize()

    def gpu_time(self, n):
        return common.torch_event_time(self.torch, self._events, self._fn, n)

    def outputs(self):
        outs = self._outs if self._outs is not None else list(self._result)
        return {name: t.detach().cpu().numpy().copy() for name, t in zip(self._names, outs)}

    def close(self):
        self._fn = None
        self._outs = None
        self._result = None
        self._args = None
        self.torch._dynamo.reset()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()


def _backwards(torch, n):
    """Graph -> (forward of the inputs that require grad and the others,
    names of those inputs, name of the cotangent, description)."""
    import torch.nn.functional as F

    return {
        "softmax_grad": (lambda x: torch.softmax(x, -1), ["x"], "grad_y", "torch.softmax(x, -1)"),
        "layernorm_grad": (
            lambda x, w, b: F.layer_norm(x, (n,), w, b, eps=common.EPS),
            ["x", "w", "b"],
            "grad_y",
            "F.layer_norm(x, (N,), w, b)",
        ),
        "cross_entropy_loss_grad": (
            lambda x, label: F.cross_entropy(x, label, reduction="none"),
            ["x"],
            "grad_loss",
            'F.cross_entropy(x, label, reduction="none")',
        ),
    }


_BACKWARDS = ("softmax_grad", "layernorm_grad", "cross_entropy_loss_grad")


class BackwardRunner(common.Runner):
    """The backward of a compiled forward: `torch.autograd.grad` on the
    forward's output, replayed with `retain_graph=True`."""

    def __init__(self, torch, case, inputs):
        super().__init__()
        self.torch = torch
        self.has_gpu_events = True
        torch._dynamo.reset()
        torch.cuda.set_device(0)
        dev = torch.device("cuda", 0)
        self.device = torch.cuda.get_device_name(0)
        self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
        f, wrt, cot, desc = _backwards(torch, case.n)[case.graph]
        ts = {k: torch.from_numpy(v).to(dev).contiguous() for k, v in inputs.items()}
        leaves = [ts[k].requires_grad_(True) for k in wrt]
        extra = [ts["label"].long()] if "label" in ts else []
        counted = _reset_kernel_count(torch)
        cf = torch.compile(f, fullgraph=True, dynamic=False)
        y = cf(*leaves, *extra)  # compiles the forward and the backward
        grad_y = ts[cot]
        self._names = case.output_names
        self._result = torch.autograd.grad(y, leaves, grad_y, retain_graph=True)
        torch.cuda.synchronize()
        count = _kernel_count(torch) if counted else None
        self.kernels = None
        if count:
            self.notes.append(f"Inductor generated {count} kernels for the forward and the backward together")

        def fn():
            self._result = torch.autograd.grad(y, leaves, grad_y, retain_graph=True)

        self._fn = fn
        self.notes.append(
            f"torch.compile(fullgraph=True, dynamic=False) of {desc}; timed: its backward, "
            "torch.autograd.grad(y, inputs, cotangent, retain_graph=True); gradients allocated per call"
        )

    def invoke(self):
        self._fn()

    def sync(self):
        self.torch.cuda.synchronize()

    def gpu_time(self, n):
        return common.torch_event_time(self.torch, self._events, self._fn, n)

    def outputs(self):
        return {name: t.detach().cpu().numpy().copy() for name, t in zip(self._names, self._result)}

    def close(self):
        self._fn = None
        self._result = None
        self.torch._dynamo.reset()
        self.torch.cuda.synchronize()
        self.torch.cuda.empty_cache()
