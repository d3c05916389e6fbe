"""Checks before launch and error messages: nothing is written when a call
is refused."""

import numpy as np
import pytest

import tile

ADD = """
program add(a: in f32[M, N], b: in f32[M, N], y: out f32[M, N]) {
  for i in 0..M, j in 0..N {
    y[i, j] = a[i, j] + b[i, j]
  }
}
"""


@tile.jit
def pair(x):
    s = tile.sigmoid(x)
    return s, s * (1 - s)


def sentinel(shape):
    return np.full(shape, 7.0, dtype=np.float32)


def test_tile_error_is_a_value_error():
    assert issubclass(tile.TileError, ValueError)


def test_output_overlapping_the_input_is_refused_and_nothing_written():
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    keep = x.copy()
    g = sentinel((3, 4))
    with pytest.raises(tile.TileError, match=r"buffers `x` and `out0` overlap"):
        pair(x, out=(x, g))
    np.testing.assert_array_equal(x, keep)
    np.testing.assert_array_equal(g, sentinel((3, 4)))


def test_the_same_output_twice_is_refused():
    x = np.ones((2, 3), dtype=np.float32)
    v = sentinel((2, 3))
    with pytest.raises(tile.TileError, match=r"`out0` and `out1` overlap"):
        pair(x, out=(v, v))
    np.testing.assert_array_equal(v, sentinel((2, 3)))


def test_views_of_one_buffer_that_overlap_are_refused():
    x = np.ones((2, 3), dtype=np.float32)
    buf = np.full(11, 7.0, dtype=np.float32)
    v, g = buf[:6].reshape(2, 3), buf[5:11].reshape(2, 3)
    with pytest.raises(tile.TileError, match="overlap"):
        pair(x, out=(v, g))
    assert (buf == 7.0).all()
    # Disjoint views of one buffer are fine.
    buf = np.zeros(12, dtype=np.float32)
    pair(x, out=(buf[:6].reshape(2, 3), buf[6:].reshape(2, 3)))
    np.testing.assert_allclose(buf[:6], 1 / (1 + np.exp(-1.0)), rtol=1e-6)


def test_inputs_may_share_memory():
    k = tile.compile(ADD)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = k(a=a, b=a)
    np.testing.assert_array_equal(y, 2 * a)


def test_non_contiguous_arrays_are_refused_with_advice():
    x = np.ones((4, 8), dtype=np.float32)[:, ::2]
    with pytest.raises(tile.TileError, match="not contiguous.*ascontiguousarray"):
        pair(x)
    v = sentinel((4, 4))
    with pytest.raises(tile.TileError, match="not contiguous"):
        pair(np.ones((4, 4), np.float32), out=(v, np.ones((4, 8), np.float32)[:, ::2]))
    np.testing.assert_array_equal(v, sentinel((4, 4)))


def test_unsupported_dtype_and_mixed_dtypes():
    with pytest.raises(tile.TileError, match="float16"):
        pair(np.ones((2, 2), dtype=np.float16))
    k = tile.compile(ADD)
    with pytest.raises(tile.TileError, match="dtype f64, but the parameter is f32"):
        k(a=np.ones((2, 2)), b=np.ones((2, 2), np.float32))


def test_shapes_that_disagree():
    k = tile.compile(ADD)
    y = sentinel((2, 3))
    with pytest.raises(tile.TileError, match=r"argument `b` has shape \[2, 4\]"):
        k(a=np.ones((2, 3), np.float32), b=np.ones((2, 4), np.float32), y=y)
    np.testing.assert_array_equal(y, sentinel((2, 3)))
    with pytest.raises(tile.TileError, match="shape"):
        pair(np.ones((2, 3), np.float32), out=(sentinel((2, 3)), sentinel((3, 2))))


def test_read_only_outputs_are_refused():
    x = np.ones((2, 2), np.float32)
    v = sentinel((2, 2))
    v.setflags(write=False)
    with pytest.raises(tile.TileError, match="read-only"):
        pair(x, out=(v, sentinel((2, 2))))


def test_a_read_only_input_is_fine():
    x = np.ones((2, 2), np.float32)
    x.setflags(write=False)
    v, _ = pair(x)
    np.testing.assert_allclose(v, 1 / (1 + np.exp(-1.0)), rtol=1e-6)


def test_wrong_number_of_results_in_out():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(tile.TileError, match="2 results, but out= holds 1"):
        pair(x, out=(sentinel((2, 2)),))


def test_objects_that_are_not_arrays():
    with pytest.raises(tile.TileError, match="not an array Tile can use"):
        pair([[1.0, 2.0]])


class Fake:
    """Claims device memory at a made-up address."""

    def __init__(self, ptr=0xDEAD0000):
        self.__cuda_array_interface__ = {
            "shape": (2, 2), "typestr": "<f4", "data": (ptr, False), "version": 3, "strides": None,
        }


def test_a_made_up_cuda_address_is_refused():
    with pytest.raises(tile.TileError) as info:
        pair(Fake(), out=(Fake(0xBEEF0000), Fake(0xCAFE0000)))
    # Without a GPU: no driver; with one: the driver does not know it.
    assert "CUDA" in str(info.value) or "driver" in str(info.value)


def test_mixing_devices_is_refused():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(tile.TileError, match="different devices"):
        pair(x, out=(Fake(), Fake()))


class DLOnly:
    """Only the DLPack protocol."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_inputs_work_and_dlpack_outputs_are_refused():
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    v = np.empty((2, 3), np.float32)
    g = np.empty((2, 3), np.float32)
    pair(DLOnly(x), out=(v, g))
    np.testing.assert_allclose(v, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)
    with pytest.raises(tile.TileError, match="read-only"):
        pair(x, out=(DLOnly(v), g))


def test_program_errors_have_line_and_column():
    with pytest.raises(tile.TileError, match=r"^<string>:3:5: error: "):
        tile.compile("program p(x: in f32[N], y: out f32[N]) {\n  for j in 0..N {\n    x[j] = 1.0\n  }\n}\n")
    with pytest.raises(tile.TileError, match=r"my\.tile:1:\d+: error"):
        tile.compile("program p(x: in f32[N] {", file="my.tile")
    with pytest.raises(tile.TileError, match="no program `q`"):
        tile.compile(ADD, program="q")


def test_python_control_flow_on_traced_values_is_explained():
    @tile.jit
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(tile.TileError, match="tile.where"):
        f(np.ones((2, 2), np.float32))


def test_reductions_across_rows_and_rank3_are_refused_plainly():
    @tile.jit
    def f(x):
        return tile.sum(x, axis=0)

    with pytest.raises(tile.TileError, match="last axis"):
        f(np.ones((2, 2), np.float32))

    @tile.jit
    def g(x):
        return x * 2

    with pytest.raises(tile.TileError, match="rank 3"):
        g(np.ones((2, 2, 2), np.float32))


def test_text_api_named_arrays_and_allocation():
    k = tile.compile(ADD)
    assert [p[0] for p in k.params] == ["a", "b", "y"]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = k(a=a, b=np.ones_like(a))
    np.testing.assert_array_equal(y, a + 1)
    out = np.empty_like(a)
    assert k(a=a, b=a, y=out) is out
    with pytest.raises(tile.TileError, match="missing argument for parameter `b`"):
        k(a=a)
    with pytest.raises(tile.TileError, match="`c` does not name a parameter"):
        k(a=a, b=a, c=a)
    plan = k.plan()
    assert plan["kernels"][0]["mapping"] == "element_grid"
    assert "add" in k.program


class FakeTorch:
    """Looks like a PyTorch tensor to a check on names: its class claims
    the module `torch` and it has `data_ptr`, pointing at a bytes object."""

    __module__ = "torch"

    def __init__(self):
        self.victim = b"\x00" * 64
        self.dtype = "float32"
        self.shape = (4, 4)
        self.is_cuda = False

    def data_ptr(self):
        return id(self.victim)

    def is_contiguous(self):
        return True


def test_an_object_claiming_to_be_a_torch_tensor_is_not_trusted():
    fake = FakeTorch()
    before = bytes(fake.victim)
    with pytest.raises(tile.TileError, match="not an array Tile can use"):
        pair(np.ones((4, 4), np.float32), out=(fake, sentinel((4, 4))))
    assert fake.victim == before


def test_a_fake_numpy_module_does_not_reach_the_fast_path():
    import subprocess
    import sys
    # A fresh interpreter whose `numpy` is a script's module: its
    # `ndarray` is a Python class, never read as NumPy's C structure.
    code = (
        "import sys, types\n"
        "fake = types.ModuleType('numpy')\n"
        "class ndarray: pass\n"
        "fake.ndarray = ndarray\n"
        "sys.modules['numpy'] = fake\n"
        "import tile\n"
        "try:\n"
        "    tile._native.describe_array(ndarray())\n"
        "except tile.TileError as e:\n"
        "    print('refused:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "not an array" in out.stdout


class DLLiar:
    """Says its memory is on a CUDA device; its capsule (NumPy's) says
    the CPU, and the capsule is what Tile believes."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)


def test_a_dlpack_device_that_lies_is_ignored():
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    assert tile._native.describe_array(DLLiar(x))[3] == "cpu"
    v, g = np.empty_like(x), np.empty_like(x)
    pair(DLLiar(x), out=(v, g))
    np.testing.assert_allclose(v, 1 / (1 + np.exp(-x.astype(np.float64))), rtol=1e-6)


def test_a_stream_on_the_cpu_is_refused():
    x = np.ones((2, 2), np.float32)
    with pytest.raises(tile.TileError, match="stream= is for CUDA arrays"):
        pair(x, stream=12345)


def test_parameter_names_that_collide_after_renaming():
    # `t0` is reserved for temporaries, so it is renamed `arg0`, which is
    # the next parameter's own name.
    @tile.jit
    def f(t0, arg0):
        return t0 + arg0

    a = np.ones(3, np.float32)
    np.testing.assert_array_equal(f(a, a), 2 * a)
    assert "program f(arg0: in f32[N], arg1_1: in f32[N]" in f.program


def test_foreign_code_cannot_resize_an_array_being_described():
    # The second argument's __dlpack__ runs foreign code after the first
    # array was described: NumPy refuses to resize an array that others
    # (the call among them) still reference, so the call sees it whole.
    x = np.ones((2, 3), np.float32)

    class Resizer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            with pytest.raises(ValueError):
                x.resize((1000, 1000))
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    @tile.jit
    def add(a, b):
        return a + b

    np.testing.assert_array_equal(add(x, Resizer(np.ones((2, 3), np.float32))), 2 * x)


def test_python_remainder_is_refused_while_capturing():
    @tile.jit
    def rem(x):
        return x % 3.0

    with pytest.raises(tile.TileError, match="`%` is not captured"):
        rem(np.ones((2, 3), dtype=np.float32))
