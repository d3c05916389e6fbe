"""Generated derivatives from Python: `Kernel.grad`, `tile.vjp` and
`tile.autograd`. The derivative program is made in Rust (`tile grad`); here
it is called with the right arrays and, for PyTorch, wrapped in a
`torch.autograd.Function`."""

from ._native import TileError, describe_array


def layout(params, wrt, with_value):
    """Where things are among a derivative program's parameters, given the
    original's `params` ((name, role, dtype, rank) tuples): (number of
    inputs, names of the float outputs, the gradient names' positions)."""
    inputs = [p for p in params if p[1] == "in"]
    float_outs = [p[0] for p in params if p[1] == "out" and p[2] in ("f32", "f64")]
    outs = [p for p in params if p[1] == "out"] if with_value else []
    start = len(inputs) + len(float_outs) + len(outs)
    return len(inputs), float_outs, list(range(start, start + len(wrt)))


def default_wrt(params):
    """Every float input array (rank 1 or more)."""
    return [n for n, role, dtype, rank in params if role == "in" and dtype in ("f32", "f64") and rank > 0]


def checked_wrt(wrt, params, name):
    if wrt is None:
        wrt = default_wrt(params)
    elif isinstance(wrt, str):
        wrt = [wrt]
    else:
        wrt = list(wrt)
    if not wrt:
        raise TileError(f"{name}: no float input to differentiate with respect to")
    for w in wrt:
        if not isinstance(w, str):
            raise TileError(f"{name}: wrt names parameters (str), not {type(w).__name__}")
    return wrt


class KernelVjp:
    """`tile.vjp` of a `tile.Kernel`: call it with the kernel's inputs and
    a cotangent `grad_Y` per float output, by name; returns the gradients
    in the order of `wrt` (one array if there is one)."""

    def __init__(self, kernel, wrt):
        from . import Kernel

        self.kernel = kernel
        self.wrt = checked_wrt(wrt, kernel.params, kernel.name)
        self.grad = Kernel(kernel._k.grad(self.wrt, False))
        names = [p[0] for p in self.grad.params]
        _, _, at = layout(kernel.params, self.wrt, False)
        self.names = [names[k] for k in at]

    @property
    def program(self):
        """The derivative program's text."""
        return self.grad.program

    def __call__(self, stream=None, **arrays):
        written = self.grad(stream=stream, **arrays)
        if not isinstance(written, tuple):
            written = (written,)
        out_names = [p[0] for p in self.grad.params if p[1] != "in"]
        got = dict(zip(out_names, written))
        res = tuple(got[n] for n in self.names)
        return res[0] if len(res) == 1 else res


def _ranks_and_dtype(fn_name, args):
    ranks, dtype = [], None
    for a in args:
        if isinstance(a, (int, float)) and not isinstance(a, bool):
            ranks.append(0)
            continue
        kind, dt, shape, _ = describe_array(a)
        ranks.append(len(shape))
        dtype = dtype or dt
    if dtype is None:
        raise TileError(f"{fn_name}: at least one argument must be an array")
    return ranks, dtype


class FunctionVjp:
    """`tile.vjp` of a `tile.jit` function: call it with the function's
    arguments followed by one cotangent per result (each shaped like the
    result); returns the gradients of the arguments named by `wrt`
    (positions or parameter names; default every array argument), in
    order, one array if there is one."""

    def __init__(self, fn, wrt):
        self.fn = fn
        self.wrt = wrt
        self.cache = {}

    def specialize(self, ranks, dtype, wrt):
        key = (tuple(ranks), dtype, tuple(wrt) if wrt is not None else None)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        kernel = self.fn.capture(*ranks, dtype=dtype)
        ins = [p for p in kernel.params if p[1] == "in"]
        if wrt is None:
            names = [p[0] for p, r in zip(ins, ranks) if r > 0]
        else:
            names = []
            for w in ([wrt] if isinstance(wrt, (int, str)) else wrt):
                if isinstance(w, int) and not isinstance(w, bool):
                    if not 0 <= w < len(ins):
                        raise TileError(f"{self.fn.__name__}: wrt position {w} is not an argument")
                    names.append(ins[w][0])
                else:
                    names.append(w)
        vjp = KernelVjp(kernel, names)
        hit = (vjp, [p[0] for p in ins], layout(kernel.params, names, False)[1])
        self.cache[key] = hit
        return hit

    def __call__(self, *args, stream=None):
        return self.call(args, self.wrt, stream)

    def call(self, args, wrt, stream=None):
        """The gradients for `args` (arguments then cotangents) with
        respect to `wrt` (positions or names; None for every array)."""
        # The function's arity splits arguments from cotangents.
        from ._capture import inspect

        n_in = len(inspect.signature(self.fn.__wrapped__).parameters)
        if len(args) <= n_in:
            raise TileError(
                f"{self.fn.__name__}: give the {n_in} arguments, then one cotangent per result"
            )
        ranks, dtype = _ranks_and_dtype(self.fn.__name__, args[:n_in])
        vjp, in_names, outs = self.specialize(ranks, dtype, wrt)
        n_out = len(outs)
        if len(args) != n_in + n_out:
            raise TileError(
                f"{self.fn.__name__} has {n_out} result(s): give {n_in} arguments and "
                f"{n_out} cotangent(s), not {len(args)} arrays"
            )
        named = dict(zip(in_names, args[:n_in]))
        cot_names = [p[0] for p in vjp.grad.params[len(in_names):len(in_names) + n_out]]
        named.update(zip(cot_names, args[n_in:]))
        return vjp(stream=stream, **named)

    @property
    def program(self):
        """The derivative program of the last specialization used."""
        if not self.cache:
            raise TileError("call the vjp once (or capture) before asking for its program")
        return next(reversed(self.cache.values()))[0].program


def vjp(f, wrt=None):
    """The vector-Jacobian product of `f` (a `tile.jit` function or a
    `tile.Kernel`) as a function made of one generated, fused kernel.

    - For a `tile.jit` function `f(x, w)` with results `(y, z)`:
      `tile.vjp(f)(x, w, gy, gz)` returns `(dx, dw)`: the gradient of
      `sum(gy * y) + sum(gz * z)` with respect to each array argument.
      `wrt=` picks arguments by position or name.
    - For a `tile.Kernel` (a program as text): `tile.vjp(k, wrt=["x"])`
      called with the inputs and `grad_Y=` for each float output `Y`, by
      name, returns the gradients in the order of `wrt`.

    The derivative program recomputes what it needs from the inputs; its
    text is `tile.vjp(f).program` (after a call, for a jit function).
    """
    from . import Kernel

    if isinstance(f, Kernel):
        return KernelVjp(f, wrt)
    if hasattr(f, "capture") and hasattr(f, "__wrapped__"):
        return FunctionVjp(f, wrt)
    raise TileError(f"tile.vjp takes a tile.jit function or a tile.Kernel, not {type(f).__name__}")


SAVES = ("inputs", "reductions")


def autograd(f, saves="inputs"):
    """`f` (a `tile.jit` function) for PyTorch training: its results carry
    a `grad_fn`. The forward pass is `f`'s fused kernel; the backward pass
    is the generated derivative kernel, for the arguments that require
    grad. Under `torch.no_grad()` it is plain `f`.

    `saves` is what the forward pass keeps for the backward pass:
    `"inputs"` (the backward recomputes every value it needs from them:
    reads, no extra memory) or `"reductions"` (the forward kernel also
    writes every reduced value, such as a row's mean or maximum, one per
    row, and the backward reads them instead of reducing again)."""
    import torch

    if not (hasattr(f, "capture") and hasattr(f, "__wrapped__")):
        raise TileError(f"tile.autograd takes a tile.jit function, not {type(f).__name__}")
    if saves not in SAVES:
        raise TileError(f"tile.autograd: saves must be one of {SAVES}, not {saves!r}")
    grads = FunctionVjp(f, None)
    saving = SavingForward(f) if saves == "reductions" else None

    class TileFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            ctx.numbers = [None if torch.is_tensor(a) else a for a in args]
            tensors = [a for a in args if torch.is_tensor(a)]
            ctx.tensor_count = len(tensors)
            if saving is None:
                out = f(*args)
                ctx.save_for_backward(*tensors)
                return out
            out, kept = saving(args)
            ctx.kept_names = list(kept)
            ctx.save_for_backward(*tensors, *kept.values())
            return out

        @staticmethod
        def backward(ctx, *cots):
            stored = ctx.saved_tensors
            saved = iter(stored[: ctx.tensor_count])
            args = [next(saved) if n is None else n for n in ctx.numbers]
            wrt = [
                k
                for k, a in enumerate(args)
                if ctx.needs_input_grad[k] and torch.is_tensor(a) and a.dim() > 0
            ]
            result = [None] * len(args)
            if not wrt:
                return tuple(result)
            cots = [c.contiguous() for c in cots]
            if saving is None:
                got = grads.call((*args, *cots), wrt)
            else:
                kept = dict(zip(ctx.kept_names, stored[ctx.tensor_count :]))
                got = saving.grads(args, cots, kept, wrt)
            if not isinstance(got, tuple):
                got = (got,)
            for k, g in zip(wrt, got):
                result[k] = g
            return tuple(result)

    def run(*args):
        return TileFunction.apply(*args)

    run.__name__ = getattr(f, "__name__", "tile_autograd")
    run.__doc__ = getattr(f, "__doc__", None)
    run.saves = saves
    run.vjp = grads
    return run


class SavingForward:
    """The forward and backward kernels of `tile.autograd(f,
    saves="reductions")`, per argument ranks and dtype (and, for the
    backward, per set of arguments differentiated)."""

    def __init__(self, fn):
        self.fn = fn
        self.forwards = {}
        self.backwards = {}

    def _key(self, args):
        ranks, dtype = _ranks_and_dtype(self.fn.__name__, args)
        return tuple(ranks), dtype

    def _forward(self, key):
        hit = self.forwards.get(key)
        if hit is None:
            from . import Kernel

            kernel = self.fn.capture(*key[0], dtype=key[1])
            fwd = kernel.forward_saving()
            ins = [p[0] for p in kernel.params if p[1] == "in"]
            outs = [p[0] for p in kernel.params if p[1] == "out"]
            kept = [p[0] for p in fwd.params if p[1] == "out" and p[0] not in outs]
            hit = (kernel, fwd, ins, outs, kept)
            self.forwards[key] = hit
        return hit

    def __call__(self, args):
        """The results of `f(*args)` and the kept values, by name."""
        _, fwd, ins, outs, kept = self._forward(self._key(args))
        written = fwd(**dict(zip(ins, args)))
        if not isinstance(written, tuple):
            written = (written,)
        names = [p[0] for p in fwd.params if p[1] != "in"]
        got = dict(zip(names, written))
        res = tuple(got[n] for n in outs)
        return (res[0] if len(res) == 1 else res), {n: got[n] for n in kept}

    def grads(self, args, cots, kept, wrt):
        """The gradients of the arguments at positions `wrt`."""
        from . import Kernel

        key = self._key(args)
        kernel, _, ins, _, _ = self._forward(key)
        names = [ins[k] for k in wrt]
        grad = self.backwards.get((key, tuple(names)))
        if grad is None:
            grad = Kernel(kernel._k.grad(names, False, "reductions"))
            self.backwards[(key, tuple(names))] = grad
        _, float_outs, at = layout(kernel.params, names, False)
        gparams = [p[0] for p in grad.params]
        named = dict(zip(ins, args))
        named.update(zip(gparams[len(ins) : len(ins) + len(float_outs)], cots))
        named.update(kept)
        written = grad(**named)
        if not isinstance(written, tuple):
            written = (written,)
        got = dict(zip([p[0] for p in grad.params if p[1] != "in"], written))
        res = tuple(got[gparams[k]] for k in at)
        return res[0] if len(res) == 1 else res
