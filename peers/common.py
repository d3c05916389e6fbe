"""Shared machinery of the peer workers: protocol I/O, requests, inputs,
FP64 references, validation and the measurement protocol.

The Rust harness (`tile bench`, crates/tile-bench/src/peers.rs) starts one
worker per framework per round as `python3 peers/worker.py FRAMEWORK` and
speaks JSON lines with it: one JSON object per line, in both directions.
Only protocol lines go to stdout (see `Channel`); everything else is logged
to stderr.

Worker -> harness, once at start::

    {"hello": FRAMEWORK, "available": bool, "reason": str,
     "versions": {"python": ..., "numpy": ..., ...}, "device": str,
     "targets": ["cpu", "cuda"]}

Harness -> worker::

    {"op": "run", "graph": G, "shape": [M, N], "target": "cpu"|"cuda",
     "phases": [...], "samples": 9, "window_ms": 30.0, "warmup_ms": 100.0,
     "atol": 2e-6, "rtol": 2e-5}
    {"op": "quit"}

Worker -> harness, one line per run request::

    {"status": "ok", "validation": {...}, "phases": {PHASE: {"n": N,
     "samples_s": [...]}}, "kernels": int|null, "notes": str, ...}
    {"status": "failed", "reason": str, "validation": {...}?}
    {"status": "not_available", "reason": str}

Each batch sample is the TOTAL seconds of N invocations (N is the
denominator and is recorded with the phase). Non-finite floats are written
as null (strict JSON, as serde_json writes them).

A framework module (peers/frameworks/*.py) provides `probe()` (hello
fields) and `prepare(case)` returning a `Runner`; `run_request` drives the
protocol around it: one invocation, validation, warm-up, calibration, then
the requested phases.
"""

import gc
import itertools
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback

PHASES = ("gpu_batch", "e2e_batch", "e2e_single", "gpu_single")
TARGETS = ("cpu", "cuda")
DEFAULTS = {
    "samples": 9,
    "window_ms": 30.0,
    "warmup_ms": 100.0,
    "atol": 2e-6,
    "rtol": 2e-5,
}
# How many single invocations the calibration takes the median of.
CALIBRATION_SINGLES = 5

# GELU (tanh approximation) constants.
GELU_C = math.sqrt(2.0 / math.pi)  # 0.7978845608028654
GELU_K = 0.044715
EPS = 1e-5

# Graph name -> (input parameters in order with their shape kind, outputs).
# "MN" is the case shape [M, N]; "N" a vector along the last axis.
GRAPHS = {
    "sigmoid_pair": ((("x", "MN"),), ("value", "grad")),
    "gelu_pair": ((("x", "MN"),), ("value", "grad")),
    "add": ((("a", "MN"), ("b", "MN")), ("y",)),
    "gelu_ab": ((("a", "MN"), ("b", "MN")), ("y",)),
    "softmax": ((("x", "MN"),), ("y",)),
    "rmsnorm": ((("x", "MN"), ("w", "N")), ("y",)),
    "layernorm": ((("x", "MN"), ("w", "N"), ("b", "N")), ("y",)),
    "row_lse": ((("x", "MN"),), ("y",)),
    "row_norm": ((("x", "MN"),), ("y",)),
    "col_sum": ((("x", "MN"),), ("y",)),
    "full_sum": ((("x", "MN"),), ("t",)),
    # The matrix, neural and algorithm suites: input shapes as size
    # expressions over M, N and the suite's fixed sizes (K, D, B), `:i32`
    # for integer inputs.
    "matmul": ((("a", "M,K"), ("b", "K,N")), ("c",)),
    "row_dot": ((("a", "MN"), ("b", "MN")), ("d",)),
    "transpose": ((("x", "MN"),), ("y",)),
    "cross_entropy": ((("x", "MN"), ("label", "M:i32")), ("loss", "dx")),
    "mse": ((("p", "MN"), ("t", "MN")), ("loss", "grad")),
    "attention": ((("q", "M,D"), ("k", "N,D"), ("v", "N,D")), ("o",)),
    "conv1d": ((("x", "M,N+K-1"), ("w", "K")), ("y",)),
    "argmax": ((("x", "MN"),), ("idx", "best")),
    "prefix_sum": ((("x", "MN"),), ("y",)),
    "rank": ((("x", "MN"),), ("r",)),
    "topk": ((("x", "MN"),), ("vals", "idx")),
    "histogram": ((("x", "N"),), ("counts", "counts_by_bin")),
}

# Outputs that are not [M, N] f32: shape specs as in `GRAPHS` (`1` is a
# one-element vector, an empty spec a 0-d scalar).
OUTPUT_SHAPES = {
    "row_lse": {"y": "M"},
    "row_norm": {"y": "M"},
    "col_sum": {"y": "N"},
    "full_sum": {"t": "1"},
    "row_dot": {"d": "M"},
    "transpose": {"y": "N,M"},
    "cross_entropy": {"loss": "M"},
    "mse": {"loss": ""},
    "attention": {"o": "M,D"},
    "argmax": {"idx": "M:i32", "best": "M"},
    "rank": {"r": "M,N:i32"},
    "topk": {"vals": "M,K", "idx": "M,K:i32"},
    "histogram": {"counts": "B:i32", "counts_by_bin": "B:i32"},
}


def dims(spec, sizes):
    """The shape and dtype of a shape spec: `MN` (M, N), or size
    expressions such as `N` or `M,N+K-1`, with `:i32` for integers; an
    empty spec is 0-d."""
    spec, _, dtype = spec.partition(":")
    if spec == "MN":
        spec = "M,N"
    shape = tuple(int(eval(d, {"__builtins__": {}}, dict(sizes))) for d in spec.split(",") if d)  # noqa: S307
    return shape, dtype or "f32"


# --------------------------------------------------------------------------
# Errors a request can end in.


class NotAvailable(Exception):
    """The framework cannot serve this request (not installed, no device,
    wrong target, graph not implemented): answered as `not_available`."""


class BadRequest(Exception):
    """The request is malformed: answered as `failed`."""


# --------------------------------------------------------------------------
# Protocol channel.


class Channel:
    """The protocol's stdout, kept apart from everything else.

    The original stdout file descriptor is duplicated for the protocol and
    fd 1 is pointed at stderr, so stray prints (Python's or a C library's,
    e.g. a compiler banner) cannot corrupt the JSON-lines stream.
    """

    def __init__(self):
        sys.stdout.flush()
        proto_fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self._out = os.fdopen(proto_fd, "w", encoding="utf-8", newline="\n")

    def send(self, obj):
        line = json.dumps(to_json_safe(obj), allow_nan=False, separators=(",", ":"))
        self._out.write(line + "\n")
        self._out.flush()


def to_json_safe(obj):
    """Copy of `obj` with non-finite floats as None and numpy scalars as
    Python numbers, so json.dumps(allow_nan=False) always succeeds."""
    if isinstance(obj, dict):
        return {str(k): to_json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json_safe(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    # numpy scalars and anything number-like.
    try:
        import numpy as np  # noqa: PLC0415

        if isinstance(obj, np.bool_):
            return bool(obj)
        if isinstance(obj, np.integer):
            return int(obj)
        if isinstance(obj, np.floating):
            f = float(obj)
            return f if math.isfinite(f) else None
    except ImportError:
        pass
    return str(obj)


def log(*args):
    """Log a line to stderr (never stdout)."""
    print("[peer]", *args, file=sys.stderr, flush=True)


def error_summary(exc, limit=6):
    """One-string summary of an exception with the innermost frames."""
    tb = traceback.extract_tb(exc.__traceback__)[-limit:]
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(tb))
    msg = f"{type(exc).__name__}: {exc}".strip()
    if len(msg) > 2000:
        msg = msg[:2000] + "..."
    return f"{msg} [at {where}]" if where else msg


# --------------------------------------------------------------------------
# Environment facts.


def python_version():
    return platform.python_version()


def cpu_model():
    """`cpu: <model name>` from /proc/cpuinfo (or the best substitute)."""
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware", "cpu model") and value.strip():
                    name = value.strip()
                    break
    except OSError:
        pass
    if not name:
        name = platform.processor() or platform.machine() or "unknown"
    return f"cpu: {name}"


def numpy_version():
    try:
        import numpy as np  # noqa: PLC0415

        return np.__version__
    except Exception:  # noqa: BLE001
        return None


# --------------------------------------------------------------------------
# Requests.


class Case:
    """One validated run request."""

    def __init__(self, req):
        if not isinstance(req, dict):
            raise BadRequest("the request is not a JSON object")
        self.graph = req.get("graph")
        if not isinstance(self.graph, str):
            raise BadRequest("`graph` must be a string")
        shape = req.get("shape")
        if (
            not isinstance(shape, list)
            or len(shape) != 2
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in shape)
        ):
            raise BadRequest(f"`shape` must be [M, N] with positive integers, got {shape!r}")
        self.m, self.n = shape
        extra = req.get("sizes", {})
        if not isinstance(extra, dict) or not all(
            isinstance(k, str) and k.isidentifier() and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in extra.items()
        ):
            raise BadRequest(f"`sizes` must map size names to counts, got {extra!r}")
        self.sizes = {**extra, "M": self.m, "N": self.n}
        self.target = req.get("target", "cpu")
        if self.target not in TARGETS:
            raise BadRequest(f"`target` must be one of {list(TARGETS)}, got {self.target!r}")
        phases = req.get("phases", list(PHASES) if self.target == "cuda" else ["e2e_batch", "e2e_single"])
        if not isinstance(phases, list) or not all(isinstance(p, str) for p in phases):
            raise BadRequest("`phases` must be a list of strings")
        unknown = [p for p in phases if p not in PHASES]
        if unknown:
            raise BadRequest(f"unknown phases {unknown}; known: {list(PHASES)}")
        if len(set(phases)) != len(phases):
            raise BadRequest(f"duplicate phases in {phases}")
        self.phases = phases
        self.samples = _number(req, "samples", int, 1)
        self.window_s = _number(req, "window_ms", float, 0.0) / 1e3
        self.warmup_s = _number(req, "warmup_ms", float, 0.0) / 1e3
        self.atol = _number(req, "atol", float, 0.0)
        self.rtol = _number(req, "rtol", float, 0.0)
        if self.window_s <= 0:
            raise BadRequest("`window_ms` must be positive")

    @property
    def known_graph(self):
        return self.graph in GRAPHS

    @property
    def input_names(self):
        return [name for name, _ in GRAPHS[self.graph][0]]

    @property
    def output_names(self):
        return list(GRAPHS[self.graph][1])

    @property
    def shape(self):
        return (self.m, self.n)

    def output_shape(self, name):
        """The shape of output `name`: (M, N) unless `OUTPUT_SHAPES` says
        otherwise."""
        return dims(OUTPUT_SHAPES.get(self.graph, {}).get(name, "MN"), self.sizes)[0]

    def output_dtype(self, name):
        """`f32`, or `i32` for index and count outputs."""
        return dims(OUTPUT_SHAPES.get(self.graph, {}).get(name, "MN"), self.sizes)[1]

    def describe(self):
        return f"{self.graph} {self.m}x{self.n} on {self.target}"


def _number(req, key, kind, minimum):
    v = req.get(key, DEFAULTS[key])
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise BadRequest(f"`{key}` must be a number, got {v!r}")
    if kind is int:
        if int(v) != v:
            raise BadRequest(f"`{key}` must be an integer, got {v!r}")
        v = int(v)
    else:
        v = float(v)
    if v < minimum:
        raise BadRequest(f"`{key}` must be >= {minimum}, got {v!r}")
    return v


# --------------------------------------------------------------------------
# Inputs and references (numpy, FP64).


def input_values(p, count):
    """Parameter number `p` (0-based) at flat indices 0..count, computed in
    FP64 and rounded to float32:
    frac(k * 0.6180339887498949 + 0.1234567 + 0.37 * p) * 2 - 1 + 1e-3 * sin(k).
    For p = 0 this is the input formula of docs/benchmarking.md (adding 0.0 changes nothing);
    it is crates/tile-ir/src/fixture.rs's formula with seed p."""
    import numpy as np  # noqa: PLC0415

    k = np.arange(count, dtype=np.float64)
    t = k * 0.6180339887498949 + 0.1234567 + 0.37 * float(p)
    return ((t - np.floor(t)) * 2.0 - 1.0 + 1e-3 * np.sin(k)).astype(np.float32)


def make_inputs(case):
    """The inputs of a case as C-contiguous float32 numpy arrays, by name,
    in parameter order."""
    import numpy as np  # noqa: PLC0415

    out = {}
    for p, (name, kind) in enumerate(GRAPHS[case.graph][0]):
        shape, dtype = dims(kind, case.sizes)
        count = math.prod(shape)
        if dtype == "i32":
            # (7k + 3p) mod 13: crates/tile-bench/src/oracle.rs's int_input.
            k = np.arange(count, dtype=np.int64)
            out[name] = ((7 * (k % 13) + 3 * p) % 13).astype(np.int32).reshape(shape)
        else:
            out[name] = input_values(p, count).reshape(shape)
    return out


def _gelu64(x):
    import numpy as np  # noqa: PLC0415

    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_K * x * x * x)))


def reference(graph, inputs, sizes=None):
    """FP64 evaluation of the graph's formulas from the float32 inputs
    (`sizes`: the case's size symbols): a dict output name -> float64
    array."""
    import numpy as np  # noqa: PLC0415

    f = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
    if graph == "sigmoid_pair":
        s = 1.0 / (1.0 + np.exp(-f["x"]))
        return {"value": s, "grad": s * (1.0 - s)}
    if graph == "gelu_pair":
        x = f["x"]
        t = np.tanh(GELU_C * (x + GELU_K * x * x * x))
        value = 0.5 * x * (1.0 + t)
        grad = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_K * x * x)
        return {"value": value, "grad": grad}
    if graph == "add":
        return {"y": f["a"] + f["b"]}
    if graph == "gelu_ab":
        return {"y": _gelu64(f["a"] + f["b"])}
    if graph == "softmax":
        x = f["x"]
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return {"y": e / e.sum(axis=-1, keepdims=True)}
    if graph == "rmsnorm":
        x = f["x"]
        r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS)
        return {"y": x * r * f["w"]}
    if graph == "layernorm":
        x = f["x"]
        mean = x.mean(axis=-1, keepdims=True)
        d = x - mean
        var = (d * d).mean(axis=-1, keepdims=True)
        return {"y": d * (1.0 / np.sqrt(var + EPS)) * f["w"] + f["b"]}
    if graph == "row_lse":
        x = f["x"]
        mx = x.max(axis=-1)
        return {"y": mx + np.log(np.exp(x - mx[:, None]).sum(axis=-1))}
    if graph == "row_norm":
        x = f["x"]
        return {"y": np.sqrt((x * x).sum(axis=-1))}
    if graph == "col_sum":
        return {"y": f["x"].sum(axis=0)}
    if graph == "full_sum":
        return {"t": f["x"].sum(keepdims=True).reshape(1)}
    return _suite_reference(graph, f, sizes or {}, np)


def _descending(x, np):
    """Per row, indices in descending order of value, ties by index."""
    return np.argsort(-x, axis=-1, kind="stable")


def _bins(x, b, np):
    """The histogram programs' bin of each value: floor((x + 1) / 2 * B)
    clamped to 0..B-1."""
    return np.clip(np.floor((x + 1.0) * 0.5 * b), 0, b - 1).astype(np.int64)


def _suite_reference(graph, f, sizes, np):  # noqa: C901, PLR0911
    """FP64 references of the matrix, neural and algorithm suites."""
    if graph == "matmul":
        return {"c": f["a"] @ f["b"]}
    if graph == "row_dot":
        return {"d": (f["a"] * f["b"]).sum(axis=-1)}
    if graph == "transpose":
        return {"y": f["x"].T.copy()}
    if graph == "cross_entropy":
        x, label = f["x"], f["label"].astype(np.int64)
        mx = x.max(axis=-1, keepdims=True)
        e = np.exp(x - mx)
        s = e.sum(axis=-1, keepdims=True)
        rows = np.arange(x.shape[0])
        onehot = np.zeros_like(x)
        onehot[rows, label] = 1.0
        return {"loss": (mx + np.log(s))[:, 0] - x[rows, label], "dx": e / s - onehot}
    if graph == "mse":
        d = f["p"] - f["t"]
        return {"loss": np.asarray((d * d).mean()), "grad": 2.0 * d / d.size}
    if graph == "attention":
        q, k, v = f["q"], f["k"], f["v"]
        s = q @ k.T / math.sqrt(q.shape[1])
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return {"o": (e / e.sum(axis=-1, keepdims=True)) @ v}
    if graph == "conv1d":
        x, w = f["x"], f["w"]
        n = x.shape[1] - w.shape[0] + 1
        return {"y": sum(x[:, t : t + n] * w[t] for t in range(w.shape[0]))}
    if graph == "argmax":
        x = f["x"]
        return {"idx": x.argmax(axis=-1).astype(np.float64), "best": x.max(axis=-1)}
    if graph == "prefix_sum":
        return {"y": np.cumsum(f["x"], axis=-1)}
    if graph == "rank":
        x = f["x"]
        r = np.empty(x.shape)
        np.put_along_axis(r, _descending(x, np), np.broadcast_to(np.arange(x.shape[1], dtype=np.float64), x.shape), axis=-1)
        return {"r": r}
    if graph == "topk":
        x = f["x"]
        order = _descending(x, np)[:, : sizes["K"]]
        return {"vals": np.take_along_axis(x, order, axis=-1), "idx": order.astype(np.float64)}
    if graph == "histogram":
        counts = np.bincount(_bins(f["x"], sizes["B"], np), minlength=sizes["B"]).astype(np.float64)
        return {"counts": counts, "counts_by_bin": counts.copy()}
    raise NotAvailable(f"no FP64 reference for graph {graph!r}")


# --------------------------------------------------------------------------
# Validation.


def check_output(name, got, ref, atol, rtol):
    """One output's record: every element within atol + rtol * |ref|, none
    NaN. `got` is converted to a float64 numpy array (on the host)."""
    import numpy as np  # noqa: PLC0415

    rec = {"name": name, "count": int(ref.size), "max_abs": None, "max_rel": None, "pass": False}
    if got is None:
        rec["error"] = "output missing"
        return rec
    g = np.asarray(got)
    if g.shape != ref.shape:
        rec["error"] = f"shape {list(g.shape)} != expected {list(ref.shape)}"
        return rec
    g = g.astype(np.float64)
    err = np.abs(g - ref)
    bound = atol + rtol * np.abs(ref)
    nan_count = int(np.count_nonzero(np.isnan(err)))
    ok = err <= bound  # False where err is NaN
    rec["pass"] = bool(ok.all()) and nan_count == 0
    finite = err[~np.isnan(err)]
    rel = finite / np.maximum(np.abs(ref[~np.isnan(err)]), np.finfo(np.float64).tiny)
    rec["max_abs"] = float(finite.max()) if finite.size else 0.0
    rec["max_rel"] = float(rel.max()) if rel.size else 0.0
    if nan_count:
        rec["max_abs"] = None  # NaN, as the Rust side writes it
        rec["nan_count"] = nan_count
    if not rec["pass"]:
        bad = np.flatnonzero(~ok)
        k = int(bad[0])
        rec["bad_count"] = int(bad.size)
        rec["first_bad"] = {"index": k, "got": float(g.flat[k]), "ref": float(ref.flat[k])}
    return rec


def validate(case, inputs, outputs):
    """The validation record of a case from the framework's outputs
    (dict name -> host array)."""
    ref = reference(case.graph, inputs, case.sizes)
    checks = [check_output(name, outputs.get(name), ref[name], case.atol, case.rtol) for name in case.output_names]
    return {
        "atol": case.atol,
        "rtol": case.rtol,
        "pass": bool(checks) and all(c["pass"] for c in checks),
        "outputs": checks,
    }


# --------------------------------------------------------------------------
# The framework side: a prepared case.


class Runner:
    """A prepared case of one framework: inputs uploaded, outputs
    preallocated, compiled. Subclasses implement `invoke` (one invocation,
    possibly asynchronous), `sync` (wait for the device), `outputs` (host
    copies, by name) and, where device events exist, `gpu_time(n)`."""

    #: kernel launches (CPU: passes/ops) per invocation, or None if unknown.
    kernels = None
    #: True when `gpu_time` measures device time with events.
    has_gpu_events = False
    #: why gpu phases are absent, if they are.
    no_gpu_reason = "the target is cpu: no device events"

    def __init__(self):
        self.notes = []
        self.device = ""

    def invoke(self):
        raise NotImplementedError

    def sync(self):
        """Wait until every issued invocation has finished (no-op on CPU)."""

    def outputs(self):
        raise NotImplementedError

    def gpu_time(self, n):
        """Seconds between device events recorded around `n` back-to-back
        invocations."""
        raise NotImplementedError

    def close(self):
        """Release device memory and caches (outside every timed region)."""


def torch_event_time(torch, events, fn, n):
    """Seconds between PyTorch CUDA events recorded on the current stream
    around `n` calls of `fn` (the device idle before the first): the
    `gpu_time` of every peer that runs on PyTorch's stream."""
    start, end = events
    torch.cuda.synchronize()
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


# --------------------------------------------------------------------------
# The measurement protocol.


def host_time(runner, n):
    """Host seconds of `n` invocations plus one synchronisation; the device
    is idle when the clock starts."""
    runner.sync()
    invoke = runner.invoke
    sync = runner.sync
    clock = time.perf_counter
    if n == 1:
        t0 = clock()
        invoke()
        sync()
        return clock() - t0
    t0 = clock()
    for _ in itertools.repeat(None, n):
        invoke()
    sync()
    return clock() - t0


def warm_up(runner, seconds):
    """Invoke repeatedly for `seconds` of host time (at least once)."""
    invoke = runner.invoke
    clock = time.perf_counter
    t0 = clock()
    count = 0
    while True:
        invoke()
        count += 1
        if clock() - t0 >= seconds:
            break
    runner.sync()
    return count


def calibrate(runner, window_s):
    """N from the median single invocation, then corrected by one batch."""
    singles = [host_time(runner, 1) for _ in range(CALIBRATION_SINGLES)]
    t1 = statistics.median(singles)
    n0 = max(1, round(window_s / max(t1, 1e-9)))
    t_batch = host_time(runner, n0)
    n = max(1, round(n0 * window_s / max(t_batch, 1e-9)))
    return n, {"t1_s": t1, "n0": n0, "t_batch_s": t_batch, "n": n, "window_s": window_s}


def measure_phase(runner, phase, n, samples):
    if phase == "e2e_batch":
        return {"n": n, "samples_s": [host_time(runner, n) for _ in range(samples)]}
    if phase == "e2e_single":
        return {"n": 1, "samples_s": [host_time(runner, 1) for _ in range(samples)]}
    if phase == "gpu_batch":
        return {"n": n, "samples_s": [runner.gpu_time(n) for _ in range(samples)]}
    if phase == "gpu_single":
        return {"n": 1, "samples_s": [runner.gpu_time(1) for _ in range(samples)]}
    raise BadRequest(f"unknown phase {phase!r}")


def run_case(module, case):
    """Prepare, validate and measure one case; returns the response."""
    if not case.known_graph:
        raise NotAvailable(f"graph {case.graph!r} is not implemented by this peer (known: {sorted(GRAPHS)})")
    inputs = make_inputs(case)
    runner = module.prepare(case, inputs)
    try:
        resp = {"status": "ok", "framework": module.NAME, "graph": case.graph, "shape": [case.m, case.n],
                "target": case.target, "device": runner.device}
        # One invocation, then validation (outside every timed region).
        runner.invoke()
        runner.sync()
        validation = validate(case, inputs, runner.outputs())
        resp["validation"] = validation
        resp["kernels"] = runner.kernels
        if not validation["pass"]:
            bad = [
                f"{c['name']}: max_abs={c['max_abs']} max_rel={c['max_rel']}"
                + (f" ({c['error']})" if "error" in c else "")
                for c in validation["outputs"]
                if not c["pass"]
            ]
            resp["status"] = "failed"
            resp["reason"] = "validation failed: " + "; ".join(bad)
            resp["notes"] = "; ".join(runner.notes)
            return resp

        measured = [p for p in case.phases if not p.startswith("gpu_") or runner.has_gpu_events]
        omitted = {p: runner.no_gpu_reason for p in case.phases if p not in measured}
        if omitted:
            runner.notes.append(f"phases {sorted(omitted)} not measured: {runner.no_gpu_reason}")

        gc.collect()
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            warmups = warm_up(runner, case.warmup_s)
            n, cal = calibrate(runner, case.window_s)
            cal["warmup_invocations"] = warmups
            phases = {}
            for phase in measured:
                phases[phase] = measure_phase(runner, phase, n, case.samples)
        finally:
            if gc_was_enabled:
                gc.enable()
        resp["phases"] = phases
        if omitted:
            resp["omitted_phases"] = omitted
        resp["calibration"] = cal
        resp["notes"] = "; ".join(runner.notes)
        return resp
    finally:
        try:
            runner.close()
        except Exception as exc:  # noqa: BLE001
            log(f"close failed: {error_summary(exc)}")


def handle_request(module, probe, req):
    """The response to one `run` request; never raises."""
    try:
        if not probe.get("available"):
            return {"status": "not_available", "reason": probe.get("reason") or "framework not available"}
        case = Case(req)
        log(f"{module.NAME}: {case.describe()}")
        return run_case(module, case)
    except NotAvailable as exc:
        return {"status": "not_available", "reason": str(exc)}
    except BadRequest as exc:
        return {"status": "failed", "reason": f"bad request: {exc}"}
    except MemoryError as exc:
        return {"status": "failed", "reason": f"out of memory: {error_summary(exc)}"}
    except Exception as exc:  # noqa: BLE001
        log(traceback.format_exc())
        return {"status": "failed", "reason": error_summary(exc)}
