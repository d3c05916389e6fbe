"""A call either completes or leaves every argument bit for bit as it was
(issue 29): run-time failures after a launch started, first calls from
many threads at once, the memory ceiling and argument checks before any
allocation, and every error Tile raises a `tile.TileError`. The last test
is a bounded fuzz of the call surface (random arguments, views, dtypes and
concurrent calls)."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tile

DIV = """
program div(a: in i32[N], b: in i32[N], y: out i32[N], s: inout i32[N]) {
  for i in 0..N {
    y[i] = a[i] / b[i]
    s[i] = s[i] + a[i] / b[i]
  }
}
"""

GATHER = """
program gather(x: in f32[N], idx: in i32[N], y: out f32[N], s: inout f32[N]) {
  for i in 0..N {
    y[i] = x[idx[i]]
    s[i] = s[i] + x[idx[i]]
  }
}
"""


def test_a_division_by_zero_leaves_every_argument_as_it_was():
    k = tile.compile(DIV)
    n = 1000
    a = np.arange(n, dtype=np.int32) * 7 + 13
    b = np.ones(n, dtype=np.int32) * 2
    b[617] = 0
    y = np.full(n, 13, dtype=np.int32)
    s = np.arange(n, dtype=np.int32) + 6
    keep = [v.copy() for v in (a, b, y, s)]
    with pytest.raises(tile.TileError, match="division by zero"):
        k(a=a, b=b, y=y, s=s)
    for before, after in zip(keep, (a, b, y, s)):
        np.testing.assert_array_equal(before, after)
    b[617] = 1
    k(a=a, b=b, y=y, s=s)
    want = a // np.where(b == 0, 1, b)
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(s, keep[3] + want)


def test_an_index_outside_the_box_leaves_every_argument_as_it_was():
    k = tile.compile(GATHER)
    n = 70000  # large enough to run on several threads
    x = np.linspace(-1, 1, n, dtype=np.float32)
    idx = np.arange(n, dtype=np.int32)[::-1].copy()
    idx[n // 2] = n  # one past the end
    y = np.full(n, 13.0, dtype=np.float32)
    s = np.full(n, 6.0, dtype=np.float32)
    with pytest.raises(tile.TileError, match="outside the box of `x`"):
        k(x=x, idx=idx, y=y, s=s)
    assert (y == 13.0).all() and (s == 6.0).all()
    idx[n // 2] = 0
    k(x=x, idx=idx, y=y, s=s)
    np.testing.assert_array_equal(y, x[idx])
    np.testing.assert_array_equal(s, np.float32(6.0) + x[idx])


def _in_threads(fns, limit=120.0):
    """Runs each function on its own thread, all released at once; fails
    (instead of hanging) if any has not finished within `limit` seconds."""
    start = threading.Barrier(len(fns))
    errors = []

    def run(f):
        try:
            start.wait()
            f()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f,), daemon=True) for f in fns]
    for t in threads:
        t.start()
    deadline = time.monotonic() + limit
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a first call deadlocked"
    assert not errors, errors


def test_first_calls_from_many_threads_do_not_deadlock():
    x = np.linspace(-2, 2, 4 * 37, dtype=np.float32).reshape(4, 37)
    # One kernel made new for every thread, and one shared by all: both
    # compile on first use.
    shared = tile.compile(
        "program shared(x: in f32[M, N], y: out f32[M, N]) {\n"
        "  for i in 0..M, j in 0..N {\n    y[i, j] = x[i, j] * 3.0\n  }\n}\n"
    )

    @tile.jit
    def jitted(v):
        return tile.tanh(v) * 2.0

    def fresh(c):
        def f():
            k = tile.compile(
                f"program k{c}(x: in f32[M, N], y: out f32[M, N]) {{\n"
                f"  for i in 0..M, j in 0..N {{\n    y[i, j] = x[i, j] + {c}.0\n  }}\n}}\n"
            )
            np.testing.assert_allclose(k(x=x), x + c)
            np.testing.assert_allclose(shared(x=x), x * 3)
            np.testing.assert_allclose(jitted(x), np.tanh(x) * 2, rtol=1e-5, atol=1e-6)

        return f

    _in_threads([fresh(c) for c in range(8)])


def _python(code, **env):
    """Runs `code` in a fresh interpreter (the ceiling is read once per
    process) and returns its standard output."""
    full = dict(os.environ, **env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


CEILING = """
import numpy as np, tile
k = tile.compile('''program big(x: in f32[N], y: out f32[N, N]) {
  for i in 0..N, j in 0..N {
    y[i, j] = x[j]
  }
}''')
@tile.jit
def wide(v):
    return v * 2.0, v * 3.0
x = np.ones(1024, dtype=np.float32)
for call in (lambda: k(x=x), lambda: wide(np.ones((512, 512), dtype=np.float32))):
    try:
        call()
        print("ran")
    except tile.TileError as e:
        print("refused:", e)
"""


def test_the_memory_ceiling_is_checked_before_any_allocation():
    out = _python(CEILING, TILE_MAX_MEMORY="1M").splitlines()
    assert len(out) == 2 and all("above the memory ceiling" in line for line in out), out
    # 4 MiB for k, 2 MiB for wide: both fit 8M.
    assert _python(CEILING, TILE_MAX_MEMORY="8M").splitlines() == ["ran", "ran"]


@pytest.mark.parametrize("bad", ["abc", "1Gx", "-1"])
def test_a_malformed_ceiling_is_an_error(bad):
    out = _python(CEILING, TILE_MAX_MEMORY=bad).splitlines()
    assert len(out) == 2 and all("is not a byte count" in line for line in out), out


def test_contiguity_is_checked_before_outputs_are_allocated():
    k = tile.compile(
        "program t(x: in f32[M, N], y: out f32[M, N]) {\n"
        "  for i in 0..M, j in 0..N {\n    y[i, j] = x[i, j]\n  }\n}\n"
    )
    x = np.ones((6, 8), dtype=np.float32)[:, ::2]
    with pytest.raises(tile.TileError, match="not contiguous"):
        k(x=x)


def test_every_error_is_a_tile_error():
    @tile.jit
    def huge(x):
        return x * 10**400

    @tile.jit
    def matmul(a):
        return a @ a

    @tile.jit
    def floordiv(a):
        return a // 2.0

    x = np.ones((2, 3), dtype=np.float32)
    for f, why in [(huge, "not a float"), (matmul, "matrix products"),
                   (floordiv, "not captured")]:
        with pytest.raises(tile.TileError, match=why):
            f(x)
    with pytest.raises(tile.TileError, match="1:9: error: the program text holds a character"):
        tile.compile("program \ud800(x: in f32[N]) {}")
    with pytest.raises(tile.TileError, match="must be a str"):
        tile.compile(b"program p() {}")


# --------------------------------------------------------------------------
# A bounded fuzz of the call surface.

FUZZ_SECONDS = float(os.environ.get("TILE_PY_FUZZ_SECONDS", "8"))


def _candidates(rng, shape, dtype):
    """Arguments a caller might pass where an array of `shape` and `dtype`
    is expected: the right one, and wrong ones of many kinds."""
    good = rng.standard_normal(shape).astype(dtype)
    big = rng.standard_normal((shape[0] * 2 + 1, shape[1] * 2 + 1)).astype(dtype)
    return [
        ("good", good),
        ("other dtype", good.astype(np.float64 if dtype == np.float32 else np.float32)),
        ("int dtype", good.astype(np.int64)),
        ("strided view", big[::2, ::2][: shape[0], : shape[1]]),
        ("transposed", np.ascontiguousarray(good.T).T if shape[0] != shape[1] else good.T),
        ("other shape", rng.standard_normal((shape[0] + 1, shape[1])).astype(dtype)),
        ("rank 1", good.reshape(-1)),
        ("read-only", np.frombuffer(good.tobytes(), dtype=dtype).reshape(shape)),
        ("python list", good.tolist()),
        ("number", 1.5),
        ("none", None),
        ("string", "x"),
        ("empty", np.zeros((0, shape[1]), dtype=dtype)),
    ]


def test_fuzz_the_call_surface():
    """Random calls of a `tile.compile` kernel and a `@tile.jit` function,
    some from several threads at once: every call either matches NumPy in
    FP64 or raises `TileError`, and a refused call leaves every array it
    was given as it was."""
    rng = np.random.default_rng(int(os.environ.get("TILE_PY_FUZZ_SEED", "29")))
    k = tile.compile(
        "program fz(a: in f32[M, N], b: in f32[M, N], y: out f32[M, N], s: inout f32[M, N]) {\n"
        "  for i in 0..M, j in 0..N {\n    y[i, j] = a[i, j] * b[i, j]\n"
        "    s[i, j] = s[i, j] + a[i, j]\n  }\n}\n"
    )

    @tile.jit
    def fj(a, b):
        return a * b, a - b

    calls = refused = 0
    deadline = time.monotonic() + FUZZ_SECONDS

    def one(seed):
        nonlocal calls, refused
        r = np.random.default_rng(seed)
        shape = (int(r.integers(1, 40)), int(r.integers(1, 70)))
        picks = {}
        for name in ("a", "b", "y", "s"):
            options = _candidates(r, shape, np.float32)
            # Mostly good arguments, so calls also succeed.
            picks[name] = options[0] if r.random() < 0.7 else options[int(r.integers(len(options)))]
        if r.random() < 0.1:
            picks["y"] = ("aliases a", picks["a"][1])
        arrays = {n: v for n, (_, v) in picks.items()}
        kept = {n: v.copy() for n, v in arrays.items() if isinstance(v, np.ndarray)}
        ok = all(kind == "good" for kind, _ in picks.values())
        try:
            if r.random() < 0.5:
                k(**arrays)
                if ok:
                    a, b = (kept[n].astype(np.float64) for n in "ab")
                    np.testing.assert_allclose(arrays["y"], a * b, rtol=1e-6, atol=1e-6)
                    np.testing.assert_allclose(arrays["s"], kept["s"] + a, rtol=1e-6, atol=1e-6)
            else:
                v, d = fj(arrays["a"], arrays["b"], out=(arrays["y"], arrays["s"]))
                if ok:
                    a, b = (kept[n].astype(np.float64) for n in "ab")
                    np.testing.assert_allclose(v, a * b, rtol=1e-6, atol=1e-6)
                    np.testing.assert_allclose(d, a - b, rtol=1e-6, atol=1e-6)
            calls += 1
        except tile.TileError:
            refused += 1
            assert not ok, f"a call of good arguments was refused: {picks}"
            for n, v in kept.items():
                np.testing.assert_array_equal(arrays[n], v, err_msg=f"refused call changed `{n}`")

    seed = 0
    while time.monotonic() < deadline:
        if seed % 10 == 9:
            _in_threads([lambda s=seed * 100 + t: one(s) for t in range(4)])
        else:
            one(seed)
        seed += 1
    assert calls > 0 and refused > 0, (calls, refused)
    print(f"fuzzed {seed} rounds: {calls} calls ran, {refused} refused")


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


@pytest.mark.skipif(_torch_cuda() is None, reason="no CUDA device visible to PyTorch")
def test_a_failing_cuda_call_leaves_every_tensor_as_it_was():
    # The range proof cannot rule out either failure, so the launch runs on
    # device copies of what it writes, committed only on success.
    torch = _torch_cuda()
    n = 1 << 20
    k = tile.compile(DIV)
    a = torch.arange(n, dtype=torch.int32, device="cuda") * 7 + 13
    b = torch.full((n,), 2, dtype=torch.int32, device="cuda")
    b[n // 3] = 0
    y = torch.full((n,), 13, dtype=torch.int32, device="cuda")
    s = torch.arange(n, dtype=torch.int32, device="cuda") + 6
    keep = [v.clone() for v in (a, b, y, s)]
    with pytest.raises(tile.TileError, match="division by zero"):
        k(a=a, b=b, y=y, s=s)
    for before, after in zip(keep, (a, b, y, s)):
        assert torch.equal(before, after)
    b[n // 3] = 1
    k(a=a, b=b, y=y, s=s)
    want = torch.div(a, b, rounding_mode="trunc")
    assert torch.equal(y, want) and torch.equal(s, keep[3] + want)

    g = tile.compile(GATHER)
    x = torch.linspace(-1, 1, n, device="cuda")
    idx = torch.arange(n - 1, -1, -1, dtype=torch.int32, device="cuda")
    idx[n // 2] = n
    y = torch.full((n,), 13.0, device="cuda")
    s = torch.full((n,), 6.0, device="cuda")
    with pytest.raises(tile.TileError, match="outside the box of `x`"):
        g(x=x, idx=idx, y=y, s=s)
    assert bool((y == 13.0).all()) and bool((s == 6.0).all())
    idx[n // 2] = 0
    g(x=x, idx=idx, y=y, s=s)
    assert torch.equal(y, x[idx.long()])
    assert torch.equal(s, 6.0 + x[idx.long()])


def test_numbers_arrays_and_lookalikes_take_the_right_path(tmp_path):
    from fractions import Fraction

    k = tile.compile(
        "program s(x: in f32[N], a: in f32, y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i] * a\n  }\n}\n"
    )
    x = np.arange(4, dtype=np.float32)
    y = np.empty_like(x)
    # A Fraction is a real number: the general path converts it.
    np.testing.assert_array_equal(k(x=x, a=Fraction(1, 2), y=y), x * np.float32(0.5))
    np.testing.assert_array_equal(k(x=x, a=np.array(3.0, np.float32), y=y), x * 3)

    @tile.jit
    def scale(v, a):
        return v * a

    # A memmap (of module numpy, not a scalar) is an array argument.
    m = np.memmap(tmp_path / "m.bin", dtype=np.float32, mode="w+", shape=(5,))
    m[:] = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(scale(m, 2.0), np.arange(5, dtype=np.float32) * 2)
