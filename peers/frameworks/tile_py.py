"""tile_py: Tile through its Python package (`pip install ./python`), timed
by the same harness as the other peers, so Python's per-call cost shows
beside the Rust host's figures.

- sigmoid_pair, gelu_pair: `@tile.jit` functions (the capture API), called
  with `out=` on preallocated arrays;
- the other graphs: the suite's `.tile` program through `tile.compile`,
  called with named arrays.

On the CPU the arrays are NumPy arrays; on CUDA, PyTorch tensors (Tile
launches on PyTorch's current stream, and device time is measured with
PyTorch's events on that stream). `kernels` is the number of kernels in
Tile's plan.
"""

import json
import os

import common

NAME = "tile_py"

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def probe():
    try:
        import tile
    except Exception as exc:  # noqa: BLE001
        return {"available": False, "reason": f"import tile failed (pip install ./python): {common.error_summary(exc)}",
                "versions": {}, "device": common.cpu_model(), "targets": []}
    versions = {"tile": getattr(tile, "__version__", "unknown")}
    targets = ["cpu"]
    try:
        import torch

        versions["torch"] = torch.__version__
        if torch.cuda.is_available():
            targets.append("cuda")
    except Exception:  # noqa: BLE001
        pass
    return {"available": True, "reason": "", "versions": versions, "device": common.cpu_model(),
            "targets": targets}


def _captured(tile):
    @tile.jit
    def sigmoid_pair(x):
        s = tile.sigmoid(x)
        return s, s * (1.0 - s)

    @tile.jit
    def gelu_pair(x):
        c = common.GELU_C
        k = common.GELU_K
        t = tile.tanh(c * (x + k * x * x * x))
        value = 0.5 * x * (1.0 + t)
        grad = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * k * x * x)
        return value, grad

    return {"sigmoid_pair": sigmoid_pair, "gelu_pair": gelu_pair}


def _program(graph):
    """The suite's .tile program for `graph`."""
    with open(os.path.join(_ROOT, "bench", "suite.json"), encoding="utf-8") as f:
        suite = json.load(f)
    for g in suite["graphs"]:
        if g["graph"] == graph:
            with open(os.path.join(_ROOT, g["program"]), encoding="utf-8") as p:
                return p.read(), g["program"]
    raise common.NotAvailable(f"graph {graph!r} is not in bench/suite.json")


def prepare(case, inputs):
    import tile

    return TileRunner(tile, case, inputs)


class TileRunner(common.Runner):
    def __init__(self, tile, case, inputs):
        super().__init__()
        self.cuda = case.target == "cuda"
        m, n = case.shape
        if self.cuda:
            import torch

            if not torch.cuda.is_available():
                raise common.NotAvailable("tile_py: no CUDA device visible to PyTorch")
            self.torch = torch
            torch.cuda.set_device(0)
            self.device = torch.cuda.get_device_name(0)
            self.has_gpu_events = True
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            ins = {k: torch.from_numpy(v).cuda().contiguous() for k, v in inputs.items()}
            self._outs = {k: torch.empty(case.output_shape(k), dtype=torch.float32, device="cuda") for k in case.output_names}
        else:
            import numpy as np

            self.device = common.cpu_model()
            ins = {k: np.ascontiguousarray(v) for k, v in inputs.items()}
            self._outs = {k: np.empty(case.output_shape(k), dtype=np.float32) for k in case.output_names}
        captured = _captured(tile).get(case.graph)
        if captured is not None:
            x = ins["x"]
            outs = tuple(self._outs[k] for k in case.output_names)

            def fn():
                captured(x, out=outs)

            fn()
            plan = captured.plan()
            self.notes.append(f"@tile.jit capture, out= call; {len(plan['kernels'])} kernel(s) planned")
        else:
            text, path = _program(case.graph)
            # `tile bench --allow-tf32` lets this case's contractions use
            # TF32 tensor cores.
            kernel = tile.compile(text, file=path, allow_tf32=case.allow_tf32)
            args = dict(ins)
            args.update(self._outs)

            def fn():
                kernel(**args)

            fn()
            plan = kernel.plan()
            self.notes.append(f"tile.compile({path}), named-array call; {len(plan['kernels'])} kernel(s) planned")
        self.kernels = len(plan["kernels"])
        self._fn = fn
        self.sync()

    def invoke(self):
        self._fn()

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def gpu_time(self, n):
        return common.torch_event_time(self.torch, self._events, self._fn, n)

    def outputs(self):
        if self.cuda:
            return {k: v.detach().cpu().numpy().copy() for k, v in self._outs.items()}
        return {k: v.copy() for k, v in self._outs.items()}

    def close(self):
        self._outs = None
        self._fn = None
        if self.cuda:
            self.torch.cuda.synchronize()
