"""jax_jit: `jax.jit` of the case's graph on device arrays of the first GPU.

x64 stays off (float32 throughout); the FP64 references come from numpy in
common.py. JAX arrays are immutable, so outputs are allocated by XLA on
each call (no preallocation). JAX has no device-event API, so the gpu
phases are absent; e2e phases use the host clock with `block_until_ready`
on the last invocation's outputs (one device stream: in-order execution).
GPU memory preallocation is switched off (XLA_PYTHON_CLIENT_PREALLOCATE=
false) because the harness keeps all peer workers of a round alive at once.
The graphs are the formulas written with jax.numpy / lax; `kernels` is null.
The autodiff graphs are `jax.vjp` of the forward formula applied to the
cotangent, under one `jax.jit` (XLA recomputes what the backward needs).
"""

import math
import os

import common

NAME = "jax_jit"


def _import_jax():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    jax.config.update("jax_enable_x64", False)
    return jax


def _gpu_devices(jax):
    try:
        return [d for d in jax.devices("gpu")]
    except Exception as exc:  # noqa: BLE001
        common.log(f"jax.devices('gpu') failed: {common.error_summary(exc)}")
        return []


def probe():
    try:
        jax = _import_jax()
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"import jax failed: {common.error_summary(exc)}",
                "versions": {}, "device": common.cpu_model(), "targets": []}
    versions = {"jax": jax.__version__}
    try:
        import jaxlib

        versions["jaxlib"] = getattr(jaxlib, "__version__", None) or jaxlib.version.__version__
    except Exception:  # noqa: BLE001
        pass
    gpus = _gpu_devices(jax)
    if not gpus:
        return {"available": False, "reason": "no GPU device visible to JAX (jax_jit runs on cuda only)",
                "versions": versions, "device": common.cpu_model(), "targets": []}
    return {"available": True, "reason": "", "versions": versions,
            "device": getattr(gpus[0], "device_kind", str(gpus[0])), "targets": ["cuda"]}


C = math.sqrt(2.0 / math.pi)
K = 0.044715


def _graph(jax, graph, allow_tf32=False):
    """(function of the inputs returning a tuple of outputs, description)."""
    import jax.numpy as jnp
    from jax import lax

    def gelu(x):
        return 0.5 * x * (1.0 + jnp.tanh(C * (x + K * x * x * x)))

    if graph == "sigmoid_pair":

        def f(x):
            s = 1.0 / (1.0 + jnp.exp(-x))
            return s, s * (1.0 - s)

        return f, "s = 1/(1+exp(-x)); (s, s*(1-s))"
    if graph == "gelu_pair":

        def f(x):
            x2 = x * x
            t = jnp.tanh(C * (x + K * x2 * x))
            value = 0.5 * x * (1.0 + t)
            grad = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * C * (1.0 + 3.0 * K * x2)
            return value, grad

        return f, "GELU tanh formula and its derivative"
    if graph == "add":
        return (lambda a, b: (a + b,)), "a + b"
    if graph == "gelu_ab":
        return (lambda a, b: (gelu(a + b),)), "gelu_tanh(a + b)"
    if graph == "softmax":

        def f(x):
            e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
            return (e / jnp.sum(e, axis=-1, keepdims=True),)

        return f, "exp(x - max) / sum"
    if graph == "rmsnorm":

        def f(x, w):
            return (x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + common.EPS) * w,)

        return f, "x * rsqrt(mean(x^2) + 1e-5) * w"
    if graph == "layernorm":

        def f(x, w, b):
            mean = jnp.mean(x, axis=-1, keepdims=True)
            d = x - mean
            var = jnp.mean(d * d, axis=-1, keepdims=True)
            return (d * lax.rsqrt(var + common.EPS) * w + b,)

        return f, "(x - mean) * rsqrt(var + 1e-5) * w + b (two-pass)"
    if graph == "softmax_grad":

        def f(x, g):
            return jax.vjp(lambda t: jax.nn.softmax(t, axis=-1), x)[1](g)

        return f, "jax.vjp(jax.nn.softmax(x, axis=-1))(grad_y)"
    if graph == "layernorm_grad":

        def ln(x, w, b):
            mean = jnp.mean(x, axis=-1, keepdims=True)
            d = x - mean
            var = jnp.mean(d * d, axis=-1, keepdims=True)
            return d * lax.rsqrt(var + common.EPS) * w + b

        def f(x, w, b, g):
            return jax.vjp(ln, x, w, b)[1](g)

        return f, "jax.vjp of the two-pass LayerNorm formula, grads of x, w, b"
    if graph == "cross_entropy_loss_grad":

        def f(x, label, g):
            def loss(t):
                picked = jnp.take_along_axis(t, label[:, None], axis=-1)[:, 0]
                return jax.nn.logsumexp(t, axis=-1) - picked

            return jax.vjp(loss, x)[1](g)

        return f, "jax.vjp(logsumexp(x) - x[label])(grad_loss)"
    # Products in exact FP32: XLA's default precision for an f32 dot on
    # recent NVIDIA GPUs rounds the operands to TF32 (as Tile and cuBLAS
    # by default do not). `tile bench --allow-tf32` lets it.
    hi = lax.Precision.DEFAULT if allow_tf32 else lax.Precision.HIGHEST
    if graph in ("gemm", "bmm"):
        return (lambda a, b: (jnp.matmul(a, b, precision=hi),)), "jnp.matmul(a, b, precision=" + hi.name + ")"
    if graph == "gemm_gelu_pair":

        def f(a, b, bias):
            z = jnp.matmul(a, b, precision=hi) + bias
            z2 = z * z
            t = jnp.tanh(C * (z + K * z2 * z))
            value = 0.5 * z * (1.0 + t)
            grad = 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * C * (1.0 + 3.0 * K * z2)
            return value, grad

        return f, "z = matmul(a, b, precision=" + hi.name + ") + bias; GELU tanh formula and its derivative"
    if graph == "attention":

        def f(q, k, v):
            s = jnp.matmul(q, k.T, precision=hi) * (1.0 / math.sqrt(q.shape[1]))
            return (jnp.matmul(jax.nn.softmax(s, axis=-1), v, precision=hi),)

        return f, "matmul(softmax(matmul(q, k.T) / sqrt(D)), v), precision=" + hi.name
    return None, ""


def prepare(case, inputs):
    if case.target != "cuda":
        raise common.NotAvailable(f"jax_jit runs on cuda only (asked for {case.target})")
    jax = _import_jax()
    gpus = _gpu_devices(jax)
    if not gpus:
        raise common.NotAvailable("jax_jit: no GPU device")
    f, desc = _graph(jax, case.graph, case.allow_tf32)
    if f is None:
        raise common.NotAvailable(f"graph {case.graph!r} is not implemented by jax_jit")
    return JaxRunner(jax, gpus[0], case, inputs, f, desc)


class JaxRunner(common.Runner):
    has_gpu_events = False
    no_gpu_reason = "JAX exposes no device events: only host timing (block_until_ready)"

    def __init__(self, jax, dev, case, inputs, f, desc):
        super().__init__()
        import numpy as np

        self.jax = jax
        self.device = getattr(dev, "device_kind", str(dev))
        self._names = case.output_names
        args = tuple(jax.device_put(np.ascontiguousarray(inputs[k]), dev) for k in case.input_names)
        for a in args:
            a.block_until_ready()
            if str(a.dtype) not in ("float32", "int32"):
                raise RuntimeError(f"JAX input dtype is {a.dtype}, expected float32 or int32")
        jf = jax.jit(f)
        self._out = jf(*args)  # compiles
        self._block(self._out)
        self._jf, self._args = jf, args
        self.notes.append(f"jax.jit: {desc}; outputs allocated by XLA per call (no out=)")

    def _block(self, out):
        for o in out:
            o.block_until_ready()

    def invoke(self):
        self._out = self._jf(*self._args)

    def sync(self):
        self._block(self._out)

    def outputs(self):
        import numpy as np

        return {name: np.asarray(o) for name, o in zip(self._names, self._out)}

    def close(self):
        self._out = None
        self._args = None
        self._jf = None
        try:
            self.jax.clear_caches()
        except Exception:  # noqa: BLE001
            pass
