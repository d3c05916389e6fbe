"""Tile from Python: fused element-wise and row-reduction kernels on NumPy
arrays, PyTorch tensors (CPU and CUDA), CuPy arrays, and anything with
`__cuda_array_interface__` or `__dlpack__`, without copies.

Two ways in:

- `@tile.jit` captures a Python function over symbolic arrays into a Tile
  program (`f.program` shows it) and runs it, one compiled kernel per
  argument dtypes and ranks (shapes are symbolic: a new shape does not
  recompile);
- `tile.compile(text)` takes a program written in the `.tile` language and
  runs it on named arrays.

Every argument is checked before anything runs (dtype, shape, contiguity,
overlap of outputs with other arguments, CUDA addresses against their
allocations); a refused call raises `tile.TileError` (a `ValueError`) and
writes nothing.
"""

import contextlib
import json
import math
import numbers

from . import _capture
from ._capture import Tensor, where
from ._native import Function as _NativeFunction
from ._native import Kernel as _NativeKernel
from ._native import TileError, describe_array

__all__ = [
    "TileError", "Tensor", "Kernel", "Function", "compile", "jit", "vjp", "autograd", "where", "sum", "max",
    "min", "mean", "maximum", "minimum", "abs", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt",
    "rsqrt", "tanh", "sigmoid", "erf", "sin", "cos", "floor", "ceil", "pow", "fma",
    "describe_array",
]

TileError.__module__ = "tile"

try:
    from importlib.metadata import version as _version

    __version__ = _version("tile")
except Exception:  # noqa: BLE001 (running from a source tree)
    __version__ = "unknown"


# --------------------------------------------------------------------------
# Functions usable inside a captured function.


def _unary(name):
    def f(x):
        return _capture._call(name, x)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise `{name}` (Tile's `{name}`), while capturing."
    return f


abs = _unary("abs")  # noqa: A001
exp = _unary("exp")
exp2 = _unary("exp2")
log = _unary("log")
log2 = _unary("log2")
log1p = _unary("log1p")
expm1 = _unary("expm1")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
erf = _unary("erf")
sin = _unary("sin")
cos = _unary("cos")
floor = _unary("floor")
ceil = _unary("ceil")


def pow(x, y):  # noqa: A001
    """Elementwise `x ** y`, while capturing."""
    return _capture._call("pow", x, y)


def fma(a, b, c):
    """Elementwise `a * b + c` with one rounding, while capturing."""
    return _capture._call("fma", a, b, c)


def maximum(a, b):
    """Elementwise maximum (Tile's `max(a, b)`), while capturing."""
    return _capture._call("max", a, b)


def minimum(a, b):
    """Elementwise minimum (Tile's `min(a, b)`), while capturing."""
    return _capture._call("min", a, b)


def sum(x, axis=-1, keepdims=False):  # noqa: A001
    """Sum along the last axis, while capturing."""
    return _capture.reduce("sum", x, axis, keepdims)


def max(x, axis=-1, keepdims=False):  # noqa: A001
    """Maximum along the last axis, while capturing."""
    return _capture.reduce("max", x, axis, keepdims)


def min(x, axis=-1, keepdims=False):  # noqa: A001
    """Minimum along the last axis, while capturing."""
    return _capture.reduce("min", x, axis, keepdims)


def mean(x, axis=-1, keepdims=False):
    """Mean along the last axis, while capturing."""
    return _capture.reduce("mean", x, axis, keepdims)


# --------------------------------------------------------------------------
# Arrays.

_DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "bool": "bool"}


def _alloc(like, shape, dtype, zeros):
    """A new array of `shape` and Tile dtype `dtype`, from the library and
    on the device of `like`. A library's refusal (out of memory, a shape it
    cannot make) is raised as `TileError`."""
    try:
        return _alloc_like(like, shape, dtype, zeros)
    except TileError:
        raise
    except (MemoryError, ValueError, TypeError, RuntimeError, OverflowError) as exc:
        raise TileError(
            f"cannot allocate a {dtype} array of shape {tuple(shape)} like a "
            f"{type(like).__name__}: {type(exc).__name__}: {exc}"
        ) from exc


def _alloc_like(like, shape, dtype, zeros):
    lib = type(like).__module__.split(".")[0]
    name = _DTYPES[dtype]
    if lib == "numpy":
        import numpy

        return (numpy.zeros if zeros else numpy.empty)(shape, dtype=name)
    if lib == "torch":
        import torch

        return (torch.zeros if zeros else torch.empty)(
            shape, dtype=getattr(torch, name), device=like.device
        )
    if lib == "cupy":
        import cupy

        with like.device:
            return (cupy.zeros if zeros else cupy.empty)(shape, dtype=name)
    space = getattr(like, "__array_namespace__", None)
    if space is not None:
        xp = space()
        return (xp.zeros if zeros else xp.empty)(shape, dtype=getattr(xp, name), device=like.device)
    raise TileError(
        f"cannot allocate outputs like a {type(like).__name__}: pass the output arrays (out=...)"
    )


# --------------------------------------------------------------------------
# Programs as text.


class Kernel:
    """A program, verified and planned; compiled per target on first use.
    Call it with named arrays: `k(x=a, value=v, grad=g)`."""

    def __init__(self, native):
        self._k = native
        self._params = native.params
        self._written = [p[0] for p in self._params if p[1] != "in"]

    @property
    def name(self):
        """The program's name."""
        return self._k.name

    @property
    def program(self):
        """The program in normal form (`.tile` text)."""
        return self._k.text

    @property
    def params(self):
        """Parameters: a list of `(name, role, dtype, rank)`."""
        return list(self._params)

    def plan(self):
        """The plan, as `tile plan --json` prints it (a dict)."""
        return json.loads(self._k.plan_json())

    def plan_text(self):
        """The plan, as `tile plan` prints it."""
        return self._k.plan_text()

    def grad(self, wrt=None, *, with_value=False, saves="inputs"):
        """The derivative program as a `Kernel` (what `tile grad` prints):
        it takes this program's inputs and a cotangent `grad_Y` per float
        output `Y`, and writes `grad_X` for each input of `wrt` (default:
        every float input array). `with_value=True` also writes this
        program's outputs, in the same kernels. `saves="reductions"`: it
        also takes the `saved_*` values that `forward_saving()` writes,
        instead of reducing again."""
        from ._grad import checked_wrt

        return Kernel(self._k.grad(checked_wrt(wrt, self._params, self.name), with_value, saves))

    def forward_saving(self):
        """This program, also writing every float value that holds a
        reduction (a row's mean, maximum, sum) to a `saved_*` output: the
        forward pass of `grad(saves="reductions")` (`tile grad --save
        reductions` prints both)."""
        from ._grad import checked_wrt

        return Kernel(self._k.forward_saving(checked_wrt(None, self._params, self.name)))

    @property
    def target(self):
        """`None` (runs on the arrays' device: the CPU or CUDA) or `"wgpu"`
        (runs host arrays through wgpu: WGSL on Vulkan, Metal or DirectX
        12)."""
        return self._k.target

    @property
    def allow_tf32(self):
        """Whether `f32` matrix products on CUDA arrays may run on TF32
        tensor cores (`tile.compile(..., allow_tf32=True)`)."""
        return self._k.allow_tf32

    def source(self, target="cpu"):
        """The generated source: C for `cpu`, CUDA C for `cuda` (with
        TF32 tensor-core products where `allow_tf32`), WGSL for `wgpu`."""
        return self._k.source(target)

    def __repr__(self):
        sig = ", ".join(f"{n}: {r} {d} (rank {k})" for n, r, d, k in self._params)
        return f"<tile.Kernel {self.name}({sig})>"

    def __call__(self, stream=None, **arrays):
        """Runs the program on named arrays, in place. `out` parameters not
        given are allocated (zeros, like the first array given, on its
        device); `in` and `inout` parameters are required. Returns the
        written arrays in parameter order (one array if there is one)."""
        # Every parameter given an array: straight to the native call.
        done = self._k.call_given(arrays, stream)
        if done is not None:
            return done
        names = [p[0] for p in self._params]
        unknown = [n for n in arrays if n not in names]
        if unknown:
            raise TileError(
                f"argument `{unknown[0]}` does not name a parameter of `{self.name}` "
                f"(parameters: {', '.join(names)})"
            )
        like = next((a for a in arrays.values() if not _is_number(a)), None)
        # Arrays made for the call (scalars, outputs) are filled on the
        # stream the kernel runs on, so the fill is ordered before it.
        with _on_stream(like, stream):
            arrays = self._scalars(arrays, like)
            missing = [p for p in self._params if p[0] not in arrays]
            if missing:
                required = [p[0] for p in missing if p[1] != "out"]
                if required:
                    raise TileError(f"missing argument for parameter `{required[0]}` of `{self.name}`")
                if not arrays:
                    raise TileError(f"`{self.name}` needs at least one array to size its outputs")
                like = next(iter(arrays.values()))
                shapes = self._k.output_shapes(
                    list(arrays.items()), [p[0] for p in missing]
                )
                for n, _, dtype, _ in missing:
                    arrays[n] = _alloc(like, tuple(shapes[n]), dtype, zeros=True)
        self._k.run(tuple(arrays[n] for n in names), stream)
        out = tuple(arrays[n] for n in self._written)
        return out[0] if len(out) == 1 else out


    def _scalars(self, arrays, like):
        """Python and NumPy numbers given for scalar (0-d) `in` parameters,
        as 0-d arrays of the parameter's dtype, made like `like` (the first
        array given, so on its device)."""
        out = dict(arrays)
        for name, role, dtype, rank in self._params:
            v = arrays.get(name)
            if v is None or not _is_number(v):
                continue
            if rank != 0 or role != "in":
                raise TileError(
                    f"`{name}` of `{self.name}` is a {role} parameter of rank {rank}: "
                    "a number is accepted only for a scalar input"
                )
            if (
                type(v) in (float, int)
                and dtype in ("f32", "f64")
                and (like is None or type(like).__module__ == "numpy")
            ):
                # The common case (a Python number, NumPy arrays): one
                # NumPy scalar array, after the same range check.
                f = _float_in_range(v, dtype)
                if f is None:
                    raise TileError(f"`{name}` is {dtype}: {v!r} is beyond its range")
                import numpy

                out[name] = numpy.array(f, dtype=_DTYPES[dtype])
                continue
            is_bool = isinstance(v, (bool, _numpy_bool()))
            if dtype == "bool" and not is_bool:
                raise TileError(f"`{name}` is bool: pass True or False, not {v!r}")
            if dtype != "bool" and (is_bool or not isinstance(v, numbers.Real)):
                raise TileError(f"`{name}` is {dtype}: pass a real number, not {v!r}")
            if dtype == "i32":
                try:
                    ok = v == int(v) and -(2**31) <= int(v) < 2**31
                except (OverflowError, ValueError):
                    ok = False
                if not ok:
                    raise TileError(f"`{name}` is i32: {v!r} is not an integer in the i32 range")
            if dtype in ("f32", "f64") and _float_in_range(v, dtype) is None:
                raise TileError(f"`{name}` is {dtype}: {v!r} is beyond its range")
            out[name] = _filled(like if like is not None else _numpy_like(), dtype, v)
        return out


def _filled(like, dtype, v):
    """A 0-d array of `dtype` holding `v`, made like `like` (on its device,
    filled on the current stream)."""
    a = _alloc(like, (), dtype, zeros=True)
    if hasattr(a, "fill_"):
        a.fill_(v)
    elif hasattr(a, "fill"):
        a.fill(v)
    else:
        a[()] = v
    return a


def _float_in_range(v, dtype):
    """`v` as a float when it is within `dtype`'s range (infinities and
    NaN included), else None."""
    try:
        f = float(v)
    except OverflowError:
        return None
    limit = 3.4028234663852886e38 if dtype == "f32" else 1.7976931348623157e308
    return None if math.isfinite(f) and math.fabs(f) > limit else f


#: Whether values of a type are numbers, by type: `numbers.Number` is an
#: abstract class, slow to ask per argument on every call.
_NUMBER_TYPES = {}


def _is_number(v):
    t = type(v)
    known = _NUMBER_TYPES.get(t)
    if known is None:
        known = _NUMBER_TYPES[t] = isinstance(v, numbers.Number)
    return known


def _on_stream(like, stream):
    """A context in which PyTorch or CuPy queue work on `stream` (the
    stream a call runs on), or one that changes nothing."""
    if stream is None or like is None:
        return contextlib.nullcontext()
    lib = type(like).__module__.split(".")[0]
    if lib == "torch" and hasattr(stream, "cuda_stream"):
        import torch

        return torch.cuda.stream(stream)
    if lib == "cupy" and hasattr(stream, "ptr") and hasattr(stream, "__enter__"):
        return stream
    return contextlib.nullcontext()


def _numpy_bool():
    """NumPy's bool scalar type, or `bool` without NumPy."""
    try:
        import numpy

        return numpy.bool_
    except ImportError:
        return bool


def _numpy_like():
    import numpy

    return numpy.empty(0)


def compile(text, program=None, *, fusion=True, file="<string>", target=None, allow_tf32=False):  # noqa: A001
    """A `Kernel` from `.tile` text. `program` selects one when the text
    holds several; `fusion=False` plans without fusion (for comparison);
    `target="wgpu"` runs host arrays (NumPy, CPU tensors) through wgpu
    instead of the CPU (default `None`: the arrays' device).
    `allow_tf32=True` lets `f32` contractions on CUDA arrays multiply on
    TF32 tensor cores (operands rounded to 10 mantissa bits, sums in FP32),
    as PyTorch's `allow_tf32`; by default, and on the CPU, products are
    exact FP32. Errors name `file`, line and column."""
    for what, value in (("the program text", text), ("program", program), ("file", file)):
        if value is None and what == "program":
            continue
        if not isinstance(value, str):
            raise TileError(f"{what} must be a str, not {type(value).__name__}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            line = value.count("\n", 0, exc.start) + 1
            col = exc.start - (value.rfind("\n", 0, exc.start) + 1) + 1
            raise TileError(
                f"{file if what == 'the program text' and isinstance(file, str) else '<string>'}:"
                f"{line}:{col}: error: {what} holds a character that is not valid Unicode "
                f"({value[exc.start]!r}, a lone surrogate)"
            ) from None
    if target is not None and not isinstance(target, str):
        raise TileError(f"target must be None or a str, not {type(target).__name__}")
    if not isinstance(allow_tf32, bool):
        raise TileError(f"allow_tf32 must be True or False, not {type(allow_tf32).__name__}")
    return Kernel(_NativeKernel(text, program, file, fusion, target, allow_tf32))


# --------------------------------------------------------------------------
# Capture.


class Function:
    """The Python side of a captured function (`tile.jit`): captures a
    specialization per argument dtypes and ranks, allocates results, and
    shows the captured program. Calls go through the native dispatcher,
    which describes the arrays once and launches."""

    def __init__(self, fn, target=None, allow_tf32=False):
        self._fn = fn
        self._target = target
        self._allow_tf32 = allow_tf32
        self._last = None
        self.__name__ = getattr(fn, "__name__", "captured")
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def _specialize(self, dtypes, ranks):
        """(native kernel, result shapes, single, dtype) for arguments of
        these Tile dtypes and ranks."""
        kinds = set(dtypes)
        if len(kinds) != 1 or not kinds <= {"f32", "f64"}:
            raise TileError(
                f"{self.__name__}: captured functions take float32 or float64 arrays of one dtype "
                f"(got {', '.join(dtypes)}); use tile.compile for other programs"
            )
        dtype = dtypes[0]
        text, shapes, single = _capture.capture(self._fn, list(ranks), dtype)
        kernel = compile(text, file=f"<captured {self.__name__}>", target=self._target, allow_tf32=self._allow_tf32)
        self._last = kernel
        return kernel._k, [list(s) for s in shapes], single, dtype

    def _alloc(self, like, shapes, dtype):
        return tuple(_alloc(like, s, dtype, zeros=False) for s in shapes)

    def _scalar(self, like, k, value, dtype, stream=None):
        """Argument `k`, a number, as a 0-d array of `dtype` made like the
        array `like` (on its device, filled on `stream`, the call's, so the
        fill is ordered before the kernel and the memory is not reused
        before it ran): a runtime scalar of the captured program, so a new
        value needs no new capture."""
        v = _float_in_range(value, dtype)
        if v is None:
            shown = repr(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise TileError(f"{self.__name__}: argument {k} ({shown}) is beyond the range of {dtype}")
        with _on_stream(like, stream):
            return _filled(like, dtype, v)

    def capture(self, *ranks, dtype="f32"):
        """The `Kernel` for arguments of these ranks (default: all 2) and
        dtype, without running anything."""
        if not ranks:
            ranks = (2,) * len(_capture.inspect.signature(self._fn).parameters)
        text, _, _ = _capture.capture(self._fn, list(ranks), dtype)
        return compile(text, file=f"<captured {self.__name__}>", target=self._target, allow_tf32=self._allow_tf32)

    def _kernel(self):
        return self._last if self._last is not None else self.capture()

    @property
    def program(self):
        """The captured `.tile` text (of the last specialization captured;
        before any call, for float32 arrays of rank 2)."""
        return self._kernel().program

    def plan(self):
        """What `tile plan --json` prints for `program` (a dict)."""
        return self._kernel().plan()

    def plan_text(self):
        """What `tile plan` prints for `program`."""
        return self._kernel().plan_text()

    def source(self, target="cpu"):
        """The generated source of `program` for `target`."""
        return self._kernel().source(target)

    def __repr__(self):
        return f"<tile.jit {self.__name__}>"


from ._grad import autograd, vjp  # noqa: E402


def jit(fn=None, *, target=None, allow_tf32=False):
    """Captures `fn` (a function of arrays returning an array or a tuple of
    arrays). Call the result on arrays: `f(x)` allocates the results like
    `x`; `f(x, out=(a, b))` writes them in place; `stream=` picks a CUDA
    stream. `f.program`, `f.plan()` and `f.source(target)` show what runs.
    `tile.jit(fn, target="wgpu")` (or `@tile.jit(target="wgpu")`) runs
    host arrays through wgpu instead of the CPU. `allow_tf32=True` lets
    `f32` matrix products on CUDA arrays use TF32 tensor cores (see
    `tile.compile`)."""
    if target is not None and target != "wgpu":
        raise TileError(f'unknown target {target!r}: None (the arrays\' device) or "wgpu"')
    if not isinstance(allow_tf32, bool):
        raise TileError(f"allow_tf32 must be True or False, not {type(allow_tf32).__name__}")
    if allow_tf32 and target == "wgpu":
        raise TileError('allow_tf32 asks for CUDA\'s TF32 tensor cores; target="wgpu" computes exact FP32')
    if fn is None:
        return lambda f: _NativeFunction(Function(f, target, allow_tf32))
    return _NativeFunction(Function(fn, target, allow_tf32))
