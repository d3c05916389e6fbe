"""cupy_elementwise: hand-written CuPy kernels on the first CUDA device.

- sigmoid_pair, gelu_pair: one multi-output `cupy.ElementwiseKernel`
  ('float32 x', 'float32 v, float32 g') computing both outputs;
- add, gelu_ab: one `ElementwiseKernel` each;
- softmax: `ReductionKernel` row max, `ReductionKernel` row sum of
  exp(x - max), `ElementwiseKernel` exp(x - max) / sum (3 kernels);
- rmsnorm: `ReductionKernel` rsqrt(mean(x^2) + eps) per row, then an
  `ElementwiseKernel` x * r * w (2 kernels);
- layernorm: `ReductionKernel` mean, `ReductionKernel` rsqrt(biased var +
  eps) (two-pass), `ElementwiseKernel` (x - mean) * r * w + b (3 kernels).

Row results are broadcast to [M, N] through [M, 1] views. Kernels are
compiled by NVRTC with CuPy's default options (no fast math) at the first
invocation, before validation and outside timing; outputs and row
temporaries are preallocated. gpu phases use `cupy.cuda.Event`s on the
current stream; `kernels` counts the launches listed above.
"""

import math

import common

NAME = "cupy_elementwise"

C = repr(math.sqrt(2.0 / math.pi))  # '0.7978845608028654'
K = "0.044715"


def _device_name(cupy):
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props.get("name", b"")
    return name.decode(errors="replace") if isinstance(name, bytes) else str(name)


def probe():
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"import cupy failed: {common.error_summary(exc)}",
                "versions": {}, "device": common.cpu_model(), "targets": []}
    versions = {"cupy": cupy.__version__}
    try:
        versions["cuda_runtime"] = str(cupy.cuda.runtime.runtimeGetVersion())
        versions["cuda_driver"] = str(cupy.cuda.runtime.driverGetVersion())
        count = cupy.cuda.runtime.getDeviceCount()
        if count < 1:
            raise RuntimeError("getDeviceCount() == 0")
        name = _device_name(cupy)
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"no CUDA device for CuPy: {common.error_summary(exc)}",
                "versions": versions, "device": common.cpu_model(), "targets": []}
    return {"available": True, "reason": "", "versions": versions, "device": name, "targets": ["cuda"]}


def _f(x):
    """A float literal for CUDA C: 1537 -> '1537.0f'."""
    return f"{float(x)!r}f"


def prepare(case, inputs):
    if case.target != "cuda":
        raise common.NotAvailable(f"cupy_elementwise runs on cuda only (asked for {case.target})")
    import cupy

    builder = _BUILDERS.get(case.graph)
    if builder is None:
        raise common.NotAvailable(f"graph {case.graph!r} is not implemented by cupy_elementwise")
    return CupyRunner(cupy, case, inputs, builder)


class CupyRunner(common.Runner):
    has_gpu_events = True

    def __init__(self, cupy, case, inputs, builder):
        super().__init__()
        self.cupy = cupy
        cupy.cuda.Device(0).use()
        self.device = _device_name(cupy)
        self._stream = cupy.cuda.get_current_stream()
        self._events = (cupy.cuda.Event(), cupy.cuda.Event())
        ins = {k: cupy.asarray(v) for k, v in inputs.items()}
        m, n = case.shape
        self._outs = {name: cupy.empty(case.output_shape(name), dtype=cupy.float32) for name in case.output_names}
        self._fn, self.kernels, note = builder(cupy, ins, self._outs, m, n)
        self.notes.append(note)
        self.sync()

    def invoke(self):
        self._fn()

    def sync(self):
        self._stream.synchronize()

    def gpu_time(self, n):
        start, end = self._events
        fn = self._fn
        self._stream.synchronize()
        start.record(self._stream)
        for _ in range(n):
            fn()
        end.record(self._stream)
        end.synchronize()
        return self.cupy.cuda.get_elapsed_time(start, end) / 1e3

    def outputs(self):
        return {k: self.cupy.asnumpy(v) for k, v in self._outs.items()}

    def close(self):
        self._fn = None
        self._outs = None
        self._stream.synchronize()
        self.cupy.get_default_memory_pool().free_all_blocks()


def _sigmoid_pair(cupy, ins, outs, m, n):
    kern = cupy.ElementwiseKernel(
        "float32 x",
        "float32 v, float32 g",
        "float s = 1.0f / (1.0f + expf(-x)); v = s; g = s * (1.0f - s);",
        "tile_peer_sigmoid_pair",
    )
    x, v, g = ins["x"], outs["value"], outs["grad"]

    def fn():
        kern(x, v, g)

    return fn, 1, "one ElementwiseKernel('float32 x', 'float32 v, float32 g'): s = 1/(1+expf(-x)); s*(1-s)"


GELU_BODY = f"""
    const float c = {C}f;
    const float k = {K}f;
    float x2 = x * x;
    float t = tanhf(c * (x + k * x2 * x));
"""


def _gelu_pair(cupy, ins, outs, m, n):
    kern = cupy.ElementwiseKernel(
        "float32 x",
        "float32 v, float32 g",
        GELU_BODY
        + """
    v = 0.5f * x * (1.0f + t);
    g = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * k * x2);
""",
        "tile_peer_gelu_pair",
    )
    x, v, g = ins["x"], outs["value"], outs["grad"]

    def fn():
        kern(x, v, g)

    return fn, 1, "one ElementwiseKernel('float32 x', 'float32 v, float32 g'): GELU tanh value and derivative"


def _add(cupy, ins, outs, m, n):
    kern = cupy.ElementwiseKernel("float32 a, float32 b", "float32 y", "y = a + b;", "tile_peer_add")
    a, b, y = ins["a"], ins["b"], outs["y"]

    def fn():
        kern(a, b, y)

    return fn, 1, "ElementwiseKernel y = a + b"


def _gelu_ab(cupy, ins, outs, m, n):
    kern = cupy.ElementwiseKernel(
        "float32 a, float32 b",
        "float32 y",
        "float x = a + b;" + GELU_BODY + "y = 0.5f * x * (1.0f + t);",
        "tile_peer_gelu_ab",
    )
    a, b, y = ins["a"], ins["b"], outs["y"]

    def fn():
        kern(a, b, y)

    return fn, 1, "ElementwiseKernel y = gelu_tanh(a + b)"


# ReductionKernel parameter names are distinct words that occur nowhere else
# in the expressions: CuPy's CUB path rewrites them textually (an output
# named `r` turned `rsqrtf` into garbage).


def _softmax(cupy, ins, outs, m, n):
    row_max = cupy.ReductionKernel(
        "float32 xval", "float32 rowmax", "xval", "fmaxf(a, b)", "rowmax = a", "-3.402823466e+38f",
        "tile_peer_row_max",
    )
    row_sum = cupy.ReductionKernel(
        "float32 xval, float32 mval", "float32 rowsum", "expf(xval - mval)", "a + b", "rowsum = a", "0",
        "tile_peer_row_sumexp",
    )
    norm = cupy.ElementwiseKernel(
        "float32 x, float32 mx, float32 s", "float32 y", "y = expf(x - mx) / s;", "tile_peer_softmax_norm"
    )
    x, y = ins["x"], outs["y"]
    mx = cupy.empty((m,), dtype=cupy.float32)
    s = cupy.empty((m,), dtype=cupy.float32)
    mx_col, s_col = mx.reshape(m, 1), s.reshape(m, 1)

    def fn():
        row_max(x, axis=1, out=mx)
        row_sum(x, mx_col, axis=1, out=s)
        norm(x, mx_col, s_col, y)

    return fn, 3, "ReductionKernel row max, ReductionKernel row sum exp(x-max), ElementwiseKernel exp(x-max)/sum"


def _rmsnorm(cupy, ins, outs, m, n):
    row_r = cupy.ReductionKernel(
        "float32 xval", "float32 rowrstd", "xval * xval", "a + b",
        f"rowrstd = rsqrtf(a / {_f(n)} + {_f(common.EPS)})", "0", "tile_peer_rms_rstd",
    )
    apply = cupy.ElementwiseKernel("float32 x, float32 r, float32 w", "float32 y", "y = x * r * w;",
                                   "tile_peer_rms_apply")
    x, w, y = ins["x"], ins["w"], outs["y"]
    r = cupy.empty((m,), dtype=cupy.float32)
    r_col = r.reshape(m, 1)

    def fn():
        row_r(x, axis=1, out=r)
        apply(x, r_col, w, y)

    return fn, 2, "ReductionKernel rsqrt(mean(x^2)+eps) per row, ElementwiseKernel x*r*w"


def _layernorm(cupy, ins, outs, m, n):
    row_mean = cupy.ReductionKernel(
        "float32 xval", "float32 rowmean", "xval", "a + b", f"rowmean = a / {_f(n)}", "0", "tile_peer_ln_mean"
    )
    row_r = cupy.ReductionKernel(
        "float32 xval, float32 mval", "float32 rowrstd", "(xval - mval) * (xval - mval)", "a + b",
        f"rowrstd = rsqrtf(a / {_f(n)} + {_f(common.EPS)})", "0", "tile_peer_ln_rstd",
    )
    apply = cupy.ElementwiseKernel(
        "float32 x, float32 mu, float32 r, float32 w, float32 b", "float32 y", "y = (x - mu) * r * w + b;",
        "tile_peer_ln_apply",
    )
    x, w, b, y = ins["x"], ins["w"], ins["b"], outs["y"]
    mu = cupy.empty((m,), dtype=cupy.float32)
    r = cupy.empty((m,), dtype=cupy.float32)
    mu_col, r_col = mu.reshape(m, 1), r.reshape(m, 1)

    def fn():
        row_mean(x, axis=1, out=mu)
        row_r(x, mu_col, axis=1, out=r)
        apply(x, mu_col, r_col, w, b, y)

    return fn, 3, "ReductionKernel mean, ReductionKernel rsqrt(var+eps) (two-pass), ElementwiseKernel apply"


_BUILDERS = {
    "sigmoid_pair": _sigmoid_pair,
    "gelu_pair": _gelu_pair,
    "add": _add,
    "gelu_ab": _gelu_ab,
    "softmax": _softmax,
    "rmsnorm": _rmsnorm,
    "layernorm": _layernorm,
}
