"""Capture: tracing a Python function over symbolic tensors into a `.tile`
program.

A traced argument of rank 2 has the symbolic shape (M, N), one of rank 1
the shape (N,), a number (or 0-d array) the shape (): a scalar parameter
read at run time, so a new value needs no new capture. Python globals and
closure variables the function reads are constants of the capture: their
values when the function was first called with those dtypes and ranks. Operators broadcast like NumPy (trailing axes aligned, an
axis of extent 1 stretches); reductions run along the last axis. Values
that vary along N are computed per element, values of shape (M,) or
(M, 1) once per row, values without M or N once. The program has one
nest over the rows when anything is per row (the plan then maps it as a
row reduction), else one flat element-wise nest.
"""

import inspect
import keyword
import math
import re

from ._native import TileError

# Words a parameter may not be called in generated text: the language's
# reserved words, dtype and function names, and the names the generated
# program uses itself.
_TAKEN = {
    "program", "for", "in", "out", "inout", "if", "else", "true", "false", "inf", "nan",
    "f32", "f64", "i32", "bool", "sum", "max", "min", "neg", "abs", "exp", "exp2", "log",
    "log2", "log1p", "expm1", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "sin", "cos", "floor", "ceil", "pow",
    "fma", "select", "i", "j", "M", "N",
}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

#: Values nested this deep get a binding of their own (the language
#: limits nesting to 200 levels).
_BIND_HEIGHT = 24
#: The deepest reduction body (it cannot hold bindings).
_MAX_HEIGHT = 150

#: The most characters a captured program may have (beyond this the
#: function is almost certainly unrolling a Python loop too far).
MAX_TEXT = 1 << 20


class _Node:
    """One operation of the traced graph."""

    __slots__ = ("op", "args", "attr", "shape", "kind", "id")

    def __init__(self, graph, op, args, attr, shape, kind):
        self.op = op  # 'in', 'const', 'bin', 'un', 'call', 'red'
        self.args = args
        self.attr = attr
        self.shape = shape
        self.kind = kind  # 'float' or 'bool'
        self.id = len(graph.nodes)
        graph.nodes.append(self)


class _Graph:
    def __init__(self, dtype):
        self.nodes = []
        self.dtype = dtype


def _broadcast(a, b):
    """NumPy's broadcast of two symbolic shapes, or a TileError."""
    out = []
    for k in range(1, max(len(a), len(b)) + 1):
        x = a[-k] if k <= len(a) else 1
        y = b[-k] if k <= len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise TileError(
                f"cannot broadcast shapes {_show(a)} and {_show(b)} (axis {-k}: {x} against {y})"
            )
    return tuple(reversed(out))


def _show(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


class Tensor:
    """A symbolic array while a function is being captured. Supports
    `+ - * / ** -x abs()`, comparisons (for `tile.where`), `& | ~` on
    comparisons, and the functions of the `tile` module."""

    __slots__ = ("_node", "_graph")
    __array_priority__ = 1000

    def __init__(self, graph, node):
        self._graph = graph
        self._node = node

    @property
    def shape(self):
        """The symbolic shape: a tuple of `'M'`, `'N'` and 1."""
        return self._node.shape

    @property
    def ndim(self):
        return len(self._node.shape)

    def __repr__(self):
        return f"tile.Tensor(shape={_show(self.shape)}, {self._node.kind})"

    def __bool__(self):
        raise TileError(
            "a traced value has no truth value while capturing: Python `if`, `and`, `or` and "
            "`while` on array values cannot be captured; use tile.where(cond, a, b)"
        )

    def __float__(self):
        raise TileError("a traced value cannot become a Python float while capturing")

    __int__ = __index__ = __float__

    def __array__(self, *args, **kwargs):
        raise TileError("a traced value cannot become a NumPy array while capturing")

    def __getitem__(self, key):
        raise TileError("indexing is not captured yet: write the program as .tile text and use tile.compile")

    def __len__(self):
        raise TileError("a traced value has a symbolic length")

    def __iter__(self):
        raise TileError("a traced value cannot be iterated while capturing")

    def __matmul__(self, o):
        raise TileError(
            "matrix products (`@`) are not captured: write the product as a reduction in a "
            ".tile program (sum(k in 0..K: a[i, k] * b[k, j])) and use tile.compile"
        )

    __rmatmul__ = __matmul__

    def _unsupported(self, *args):
        raise TileError(
            "this operator is not captured (captured functions use + - * / ** comparisons "
            "& | ~ and the tile functions)"
        )

    __floordiv__ = __rfloordiv__ = __lshift__ = __rlshift__ = __rshift__ = _unsupported
    __rrshift__ = __xor__ = __rxor__ = __divmod__ = __rdivmod__ = _unsupported

    # Arithmetic.
    def __add__(self, o):
        return _binary("+", self, o)

    def __radd__(self, o):
        return _binary("+", o, self)

    def __sub__(self, o):
        return _binary("-", self, o)

    def __rsub__(self, o):
        return _binary("-", o, self)

    def __mul__(self, o):
        return _binary("*", self, o)

    def __rmul__(self, o):
        return _binary("*", o, self)

    def __truediv__(self, o):
        return _binary("/", self, o)

    def __rtruediv__(self, o):
        return _binary("/", o, self)

    def __mod__(self, o):
        raise TileError(
            "`%` is not captured (Tile's `%` takes integers and truncates, Python's floors): "
            "write the program as .tile text and use tile.compile"
        )

    __rmod__ = __floordiv__ = __rfloordiv__ = __mod__

    def __pow__(self, o):
        if isinstance(o, (int, float)) and not isinstance(o, bool) and o == 2:
            return _binary("*", self, self)
        return _call("pow", self, o)

    def __rpow__(self, o):
        return _call("pow", o, self)

    def __neg__(self):
        return _unary("-", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _call("abs", self)

    # Comparisons and logic (booleans, for tile.where).
    def __lt__(self, o):
        return _binary("<", self, o)

    def __le__(self, o):
        return _binary("<=", self, o)

    def __gt__(self, o):
        return _binary(">", self, o)

    def __ge__(self, o):
        return _binary(">=", self, o)

    def __eq__(self, o):
        return _binary("==", self, o)

    def __ne__(self, o):
        return _binary("!=", self, o)

    __hash__ = object.__hash__

    def __and__(self, o):
        return _binary("&&", self, o)

    __rand__ = __and__

    def __or__(self, o):
        return _binary("||", self, o)

    __ror__ = __or__

    def __invert__(self):
        return _unary("!", self)


_COMPARE = {"<", "<=", ">", ">=", "==", "!="}
_LOGIC = {"&&", "||"}


def _lift(x, graph):
    """A Tensor or a Python scalar as a node of `graph`."""
    if isinstance(x, Tensor):
        if x._graph is not graph:
            raise TileError("a traced value from another capture was used here")
        return x._node
    if isinstance(x, bool):
        return _Node(graph, "const", (), x, (), "bool")
    if isinstance(x, (int, float)) or (
        type(x).__module__ == "numpy" and getattr(x, "shape", None) == ()
    ):
        try:
            v = float(x)
        except (OverflowError, TypeError, ValueError) as exc:
            raise TileError(f"the constant {x!r} is not a float: {exc}") from None
        return _Node(graph, "const", (), v, (), "float")
    raise TileError(
        f"a {type(x).__name__} cannot take part in a captured function: arrays are the "
        "function's arguments, and constants Python numbers"
    )


def _graph_of(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x._graph
    raise TileError("a tile function was called without any traced value (call it inside a @tile.jit function)")


def _binary(op, a, b):
    g = _graph_of(a, b)
    x, y = _lift(a, g), _lift(b, g)
    shape = _broadcast(x.shape, y.shape)
    if op in _LOGIC:
        if x.kind != "bool" or y.kind != "bool":
            raise TileError(f"`{op}` combines comparisons; got {x.kind} and {y.kind} values")
        kind = "bool"
    else:
        if x.kind != "float" or y.kind != "float":
            raise TileError(f"`{op}` needs numbers; a comparison's result goes into tile.where")
        kind = "bool" if op in _COMPARE else "float"
    return Tensor(g, _Node(g, "bin", (x, y), op, shape, kind))


def _unary(op, a):
    g = _graph_of(a)
    x = _lift(a, g)
    want = "bool" if op == "!" else "float"
    if x.kind != want:
        raise TileError(f"`{op}` needs a {want} value")
    return Tensor(g, _Node(g, "un", (x,), op, x.shape, x.kind))


#: Functions of the language the package exposes, with their arity.
FUNCTIONS = {
    "abs": 1, "exp": 1, "exp2": 1, "log": 1, "log2": 1, "log1p": 1, "expm1": 1, "sqrt": 1, "rsqrt": 1, "tanh": 1,
    "sigmoid": 1, "erf": 1, "sin": 1, "cos": 1, "floor": 1, "ceil": 1, "pow": 2,
    "fma": 3, "min": 2, "max": 2,
}


def _call(name, *args):
    g = _graph_of(*args)
    nodes = [_lift(a, g) for a in args]
    if any(n.kind != "float" for n in nodes):
        raise TileError(f"{name}() needs numbers; a comparison's result goes into tile.where")
    shape = ()
    for n in nodes:
        shape = _broadcast(shape, n.shape)
    return Tensor(g, _Node(g, "call", tuple(nodes), name, shape, "float"))


def where(cond, a, b):
    """`a` where `cond` holds, else `b` (elementwise; Tile's `select`)."""
    g = _graph_of(cond, a, b)
    c, x, y = _lift(cond, g), _lift(a, g), _lift(b, g)
    if c.kind != "bool":
        raise TileError("tile.where's first argument is a comparison (e.g. x > 0)")
    if x.kind != "float" or y.kind != "float":
        raise TileError("tile.where chooses between numbers")
    shape = _broadcast(_broadcast(c.shape, x.shape), y.shape)
    return Tensor(g, _Node(g, "call", (c, x, y), "select", shape, "float"))


def reduce(op, x, axis, keepdims):
    """A reduction along the last axis (`axis` -1, or the last index)."""
    g = _graph_of(x)
    n = _lift(x, g)
    if n.kind != "float":
        raise TileError(f"{op}() reduces numbers")
    rank = len(n.shape)
    if rank == 0:
        raise TileError(f"{op}() of a scalar")
    if axis is None and rank == 1:
        axis = -1
    if axis is None or axis not in (-1, rank - 1):
        raise TileError(
            f"{op}(axis={axis!r}) on shape {_show(n.shape)}: captured reductions run along the "
            "last axis only (axis=-1)"
        )
    if "M" in n.shape and n.shape[-1] != "N":
        raise TileError(
            f"{op}() across rows (shape {_show(n.shape)}) is not captured yet: reductions run along N"
        )
    rest = n.shape[:-1]
    shape = rest + (1,) if keepdims else rest
    if n.shape[-1] == 1:
        # A reduction over an axis of extent 1 is the value itself.
        return Tensor(g, _Node(g, "un", (n,), "+", shape, "float"))
    return Tensor(g, _Node(g, "red", (n,), op, shape, "float"))


# --------------------------------------------------------------------------
# Printing the graph as a program.


def _level(shape):
    if "N" in shape:
        return "elem"
    if "M" in shape:
        return "row"
    return "top"


def _literal(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "(-inf)"
    text = repr(float(v))
    return f"({text})" if text.startswith("-") else text


_PRECEDENCE = {"||": 1, "&&": 2, "<": 3, "<=": 3, ">": 3, ">=": 3, "==": 3, "!=": 3,
               "+": 4, "-": 4, "*": 5, "/": 5}


class _Printer:
    def __init__(self, graph, params, dtype):
        self.graph = graph
        self.params = params  # node id -> (name, rank)
        self.dtype = dtype
        self.bound = {}  # node id -> binding name
        self.memo = {}  # node id -> expression text in the current scope
        self.count = 0

    def heights(self):
        """Each node's expression height given the current bindings (a
        bound name has height 0)."""
        h = [0] * len(self.graph.nodes)
        for n in self.graph.nodes:
            if n.id not in self.bound:
                h[n.id] = 1 + max((h[a.id] for a in n.args), default=0)
        return h

    def fresh(self):
        self.count += 1
        return f"t{self.count - 1}"

    def expr(self, n):
        """`n` as an expression in the current scope (loop variables i, j;
        reduction bodies use j too)."""
        if n.id in self.bound:
            return self.bound[n.id]
        text = self.memo.get(n.id)
        if text is None:
            text = self._expr(n)
            if len(text) > MAX_TEXT:
                raise TileError(
                    f"a captured expression has more than {MAX_TEXT} characters; a Python loop is "
                    "probably unrolling too far"
                )
            self.memo[n.id] = text
        return text

    def _expr(self, n):
        if n.op == "in":
            name, rank = self.params[n.id]
            return {2: f"{name}[i, j]", 1: f"{name}[j]", 0: name}[rank]
        if n.op == "const":
            return _literal(n.attr)
        if n.op == "bin":
            a, b = (self.expr(x) for x in n.args)
            return f"({a} {n.attr} {b})"
        if n.op == "un":
            a = self.expr(n.args[0])
            return a if n.attr == "+" else f"({n.attr}{a})"
        if n.op == "call":
            return f"{n.attr}(" + ", ".join(self.expr(x) for x in n.args) + ")"
        if n.op == "red":
            body = self.expr(n.args[0])
            if n.attr == "mean":
                return f"(sum(j in 0..N: {body}) / {self.dtype}(N))"
            return f"{n.attr}(j in 0..N: {body})"
        raise AssertionError(n.op)


def capture(fn, ranks, dtype):
    """Traces `fn` for arguments of the given ranks and float `dtype`
    (`'f32'` or `'f64'`): (program text, output shapes, parameter names).
    Output shapes are symbolic tuples over 'M', 'N' and 1."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TileError(f"cannot read the signature of {fn!r}: {exc}") from None
    names = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise TileError(f"{fn.__name__}: parameter `{p.name}` must be positional (one array each)")
        names.append(p.name)
    if len(names) != len(ranks):
        raise TileError(f"{fn.__name__} takes {len(names)} arrays, {len(ranks)} given")
    bad = next(((n, r) for n, r in zip(names, ranks) if r not in (0, 1, 2)), None)
    if bad is not None:
        raise TileError(
            f"{fn.__name__}: argument `{bad[0]}` has rank {bad[1]}; captured functions take arrays "
            "of rank 1 (N,) or 2 (M, N), and numbers (runtime scalars)"
        )
    if not any(r in (1, 2) for r in ranks):
        raise TileError(
            f"{fn.__name__}: a captured function needs at least one array of rank 1 or 2 "
            "(numbers are runtime scalars beside them)"
        )
    graph = _Graph(dtype)
    used = set()
    params = {}
    inputs = []
    for k, (name, rank) in enumerate(zip(names, ranks)):
        if rank not in (0, 1, 2):
            raise TileError(
                f"{fn.__name__}: argument `{name}` has rank {rank}; captured functions take arrays "
                "of rank 1 (N,) or 2 (M, N), and numbers (runtime scalars)"
            )
        tname = name if (_NAME.match(name) and name not in _TAKEN and not keyword.iskeyword(name)
                         and not re.match(r"^(t|out)\d+$", name)) else f"arg{k}"
        j = 1
        while tname in used:
            tname = f"arg{k}_{j}"
            j += 1
        used.add(tname)
        shape = {2: ("M", "N"), 1: ("N",), 0: ()}[rank]
        node = _Node(graph, "in", (), None, shape, "float")
        params[node.id] = (tname, rank)
        inputs.append(Tensor(graph, node))
    try:
        result = fn(*inputs)
    except (TypeError, OverflowError, ZeroDivisionError) as exc:
        raise TileError(
            f"{fn.__name__} raised {type(exc).__name__} while it was captured: {exc}"
        ) from exc
    single = not isinstance(result, (tuple, list))
    outs = [result] if single else list(result)
    if not outs:
        raise TileError(f"{fn.__name__} returned no arrays")
    out_nodes = []
    for k, o in enumerate(outs):
        if not isinstance(o, Tensor):
            raise TileError(
                f"{fn.__name__}: result {k} is a {type(o).__name__}; a captured function returns "
                "traced arrays (or a tuple of them)"
            )
        if o._graph is not graph:
            raise TileError(f"{fn.__name__}: result {k} comes from another capture")
        n = o._node
        if n.kind != "float":
            raise TileError(
                f"{fn.__name__}: result {k} is a comparison; return numbers (tile.where(c, 1.0, 0.0))"
            )
        out_nodes.append(n)
    text, shapes = _print(fn.__name__, graph, params, out_nodes, dtype)
    if len(text) > MAX_TEXT:
        raise TileError(
            f"{fn.__name__}: the captured program has {len(text)} characters (at most {MAX_TEXT}); "
            "a Python loop is probably unrolling too far"
        )
    return text, shapes, single


def _print(name, graph, params, outs, dtype):
    pr = _Printer(graph, params, dtype)
    has_m = any("M" in n.shape for n in graph.nodes)
    # Uses of each node (by nodes and outputs), to bind shared values.
    uses = [0] * len(graph.nodes)
    for n in graph.nodes:
        for a in n.args:
            uses[a.id] += 1
    for n in outs:
        uses[n.id] += 1
    out_params = []
    shapes = []
    stores = {"top": [], "row": [], "elem": [], "vec": []}
    for k, n in enumerate(outs):
        shape = n.shape
        if shape == ():
            shape = (1,)
        if len(shape) > 2:
            raise TileError(f"result {k} has shape {_show(shape)}")
        oname = f"out{k}"
        dims = ", ".join(str(d) for d in shape)
        out_params.append(f"{oname}: out {dtype}[{dims}]")
        shapes.append(shape)
        if "N" in shape and "M" not in shape and has_m:
            where = "vec"
        else:
            where = _level(shape)
        idx = []
        for d in shape:
            idx.append({"M": "i", "N": "j", 1: "0"}[d])
        stores[where].append((f"{oname}[{', '.join(idx)}]", n))
    sig = ", ".join(
        [
            f"{pname}: in {dtype}" + {2: "[M, N]", 1: "[N]", 0: ""}[rank]
            for pname, rank in params.values()
        ]
        + out_params
    )
    lines = [f"program {_program_name(name)}({sig}) {{"]

    def bind(indent, levels, targets):
        """Binds the values of `levels` that the stores `targets` (or, with
        no targets, every value of those levels) need: reductions always,
        other values when shared; then prints the stores."""
        need = set()
        stack = [n for _, n in targets] if targets else [n for n in graph.nodes if _level(n.shape) in levels]
        while stack:
            n = stack.pop()
            if n.id in need or n.id in pr.bound:
                continue
            need.add(n.id)
            stack.extend(n.args)
        height = pr.heights()
        for n in graph.nodes:
            if n.id not in need or n.id in pr.bound or _level(n.shape) not in levels:
                continue
            height[n.id] = 1 + max((height[a.id] for a in n.args), default=0)
            if n.op in ("in", "const"):
                continue
            if n.op == "red" and height[n.id] > _MAX_HEIGHT:
                raise TileError(
                    f"a captured reduction's body nests {height[n.id]} operations deep (at most "
                    f"{_MAX_HEIGHT}): reduction bodies are single expressions"
                )
            if n.op == "red" or uses[n.id] > 1 or height[n.id] >= _BIND_HEIGHT:
                text = pr.expr(n)
                height[n.id] = 0
                b = pr.fresh()
                lines.append(f"{indent}{b} = {text}")
                pr.bound[n.id] = b
        for target, n in targets:
            if target is not None:
                lines.append(f"{indent}{target} = {pr.expr(n)}")

    def scoped(body):
        """Runs `body`, forgetting the bindings it made afterwards (they
        belong to the nest it printed)."""
        saved = dict(pr.bound)
        body()
        pr.bound = saved
        pr.memo = {}

    # Values without M or N (reductions of rank-1 arrays): once, first.
    top = [(None, n) for n in graph.nodes if n.op == "red" and _level(n.shape) == "top"]
    if top or stores["top"]:
        bind("  ", ("top",), stores["top"] + top)
    rows = any(n.op == "red" and _level(n.shape) == "row" for n in graph.nodes)
    if has_m and (rows or stores["row"]):

        def row_nest():
            lines.append("  for i in 0..M {")
            bind("    ", ("row",), stores["row"] + [(None, n) for _, n in stores["elem"]])
            if stores["elem"]:
                lines.append("    for j in 0..N {")
                scoped(lambda: bind("      ", ("elem",), stores["elem"]))
                lines.append("    }")
            lines.append("  }")

        scoped(row_nest)
    elif stores["elem"]:
        nest = "for i in 0..M, j in 0..N" if has_m else "for j in 0..N"
        lines.append(f"  {nest} {{")
        scoped(lambda: bind("    ", ("elem",), stores["elem"]))
        lines.append("  }")
    if stores["vec"]:
        lines.append("  for j in 0..N {")
        scoped(lambda: bind("    ", ("elem",), stores["vec"]))
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n", shapes


def _program_name(name):
    name = re.sub(r"[^A-Za-z0-9_]", "_", name).lstrip("_") or "captured"
    if name[0].isdigit() or name in _TAKEN:
        name = "p_" + name
    return name
