"""Peer framework modules, one per framework, imported lazily by worker.py.

Each module defines:

- `NAME`: the framework name;
- `probe()`: a dict with `available`, `reason`, `versions`, `device` and
  `targets` for the hello line (imports the framework; never raises);
- `prepare(case, inputs)`: a `common.Runner` for one case (inputs are the
  float32 numpy arrays from `common.make_inputs`), raising
  `common.NotAvailable` for a target or graph it does not serve.
"""

FRAMEWORKS = ("numpy_eager", "torch_eager", "torch_compile", "jax_jit", "cupy_elementwise", "tile_py")
