"""PyTorch tensors (CPU and CUDA) and CuPy arrays: zero-copy calls, the
derivative against torch.autograd, streams. Skipped, with the reason, where
torch, CuPy or a GPU is missing."""

import numpy as np
import pytest

import tile

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device visible to PyTorch")
DEVICES = ["cpu"] + (["cuda"] if CUDA else [])


@tile.jit
def silu_pair(x):
    s = tile.sigmoid(x)
    return x * s, s * (1 + x * (1 - s))


@tile.jit
def gelu_pair(x):
    c = 0.7978845608028654
    u = c * (x + 0.044715 * x * x * x)
    t = tile.tanh(u)
    du = c * (1 + 3 * 0.044715 * x * x)
    return 0.5 * x * (1 + t), 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du


# Saturation, near zero, and ordinary values.
POINTS = [-80.0, -30.0, -12.0, -1.5, -1e-3, -1e-6, 0.0, 1e-6, 1e-3, 0.7, 12.0, 30.0, 80.0]


def autograd_pair(fn, x):
    """Value and derivative of `fn` at `x` from torch.autograd in float64."""
    x64 = x.detach().to(torch.float64).requires_grad_(True)
    y = fn(x64)
    (g,) = torch.autograd.grad(y.sum(), x64)
    return y.detach(), g


@pytest.mark.parametrize("device", DEVICES)
def test_silu_derivative_matches_autograd(device):
    x = torch.tensor([POINTS] * 3, dtype=torch.float32, device=device)
    v, d = silu_pair(x)
    assert v.device == x.device and v.dtype == torch.float32
    rv, rd = autograd_pair(torch.nn.functional.silu, x)
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-7)
    torch.testing.assert_close(d.double(), rd, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_gelu_derivative_matches_autograd(device):
    x = torch.tensor([POINTS] * 2, dtype=torch.float32, device=device)
    v, d = gelu_pair(x)
    rv, rd = autograd_pair(lambda t: torch.nn.functional.gelu(t, approximate="tanh"), x)
    torch.testing.assert_close(v.double(), rv, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(d.double(), rd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_out_writes_the_same_memory(device):
    x = torch.randn(37, 1537, device=device)
    v = torch.full_like(x, 7.0)
    d = torch.full_like(x, 7.0)
    pv, pd = v.data_ptr(), d.data_ptr()
    got = silu_pair(x, out=(v, d))
    assert got[0] is v and got[1] is d and v.data_ptr() == pv and d.data_ptr() == pd
    rv, rd = autograd_pair(torch.nn.functional.silu, x)
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-6)
    torch.testing.assert_close(d.double(), rd, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_overlap_and_contiguity_on_tensors(device):
    x = torch.randn(4, 8, device=device)
    g = torch.full_like(x, 7.0)
    with pytest.raises(tile.TileError, match="overlap"):
        silu_pair(x, out=(x, g))
    assert (g == 7.0).all()
    with pytest.raises(tile.TileError, match="not contiguous"):
        silu_pair(x.t())
    with pytest.raises(tile.TileError, match="overlap"):
        silu_pair(x, out=(g, g))


@needs_cuda
def test_mixing_cpu_and_cuda_tensors_is_refused():
    with pytest.raises(tile.TileError, match="different devices"):
        silu_pair(torch.ones(2, 2, device="cuda"), out=(torch.empty(2, 2), torch.empty(2, 2)))


@needs_cuda
def test_a_view_past_its_allocation_is_refused():
    base = torch.zeros(64, device="cuda")
    # A fake interface claiming more memory than the allocation holds.
    class Liar:
        __cuda_array_interface__ = {
            "shape": (1 << 20,), "typestr": "<f4", "data": (base.data_ptr(), False),
            "version": 3, "strides": None,
        }

    @tile.jit
    def double(x):
        return x * 2

    with pytest.raises(tile.TileError, match="past the end of their allocation"):
        double(torch.ones(1 << 20, device="cuda"), out=Liar())


@needs_cuda
def test_work_follows_torch_current_stream():
    s = torch.cuda.Stream()
    x = torch.randn(512, 4096, device="cuda")
    with torch.cuda.stream(s):
        y = x * 3  # queued on s
        v, d = silu_pair(y)  # must run after it, on s
    s.synchronize()
    rv, rd = autograd_pair(torch.nn.functional.silu, x * 3)
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-6)


@needs_cuda
def test_softmax_rows_on_cuda():
    @tile.jit
    def softmax(x):
        e = tile.exp(x - tile.max(x, keepdims=True))
        return e / tile.sum(e, keepdims=True)

    x = torch.randn(129, 3001, device="cuda")
    torch.testing.assert_close(softmax(x), torch.softmax(x.double(), -1).float(), rtol=1e-5, atol=1e-7)


@needs_cuda
def test_text_api_on_cuda_tensors():
    k = tile.compile("""
program axpy(a: in f32[N], x: in f32[N], y: inout f32[N]) {
  for j in 0..N { y[j] = a[j] * x[j] + y[j] }
}
""")
    a, x = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    y = torch.randn(1000, device="cuda")
    want = a.double() * x.double() + y.double()
    k(a=a, x=x, y=y)
    torch.testing.assert_close(y.double(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_runtime_scalars_on_tensors(device):
    @tile.jit
    def leaky(x, slope):
        return tile.where(x > 0, x, x * slope)

    x = torch.linspace(-3, 3, 4096, device=device).reshape(8, 512)
    for slope in (0.1, 0.5):
        got = leaky(x, slope)
        assert got.device == x.device
        want = torch.where(x > 0, x, x * torch.tensor(slope, dtype=torch.float32, device=device))
        torch.testing.assert_close(got, want, rtol=1e-6, atol=0)


def test_cupy_arrays():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"CuPy sees no GPU: {exc}")
    x = cupy.linspace(-6, 6, 4096, dtype=cupy.float32).reshape(8, 512)
    v, d = silu_pair(x)
    assert isinstance(v, cupy.ndarray)
    rv, rd = autograd_pair(torch.nn.functional.silu, torch.as_tensor(x.get()))
    np.testing.assert_allclose(v.get(), rv.numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(d.get(), rd.numpy(), rtol=2e-6, atol=1e-6)


class Marked(torch.Tensor):
    """A tensor subclass: its methods are Python code Tile does not trust."""


def test_tensor_subclasses_are_refused_plainly():
    x = torch.ones(2, 2).as_subclass(Marked)
    with pytest.raises(tile.TileError, match=r"subclass of torch.Tensor .*as_subclass"):
        silu_pair(x)


def test_parameters_are_read_like_tensors():
    p = torch.nn.Parameter(torch.linspace(-3, 3, 12).reshape(3, 4))
    v, d = silu_pair(p)
    rv, rd = autograd_pair(torch.nn.functional.silu, p)
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_writing_a_tensor_that_requires_grad(device):
    x = torch.linspace(-3, 3, 32, device=device).reshape(4, 8)
    w = torch.zeros(4, 8, device=device, requires_grad=True)
    g = torch.zeros(4, 8, device=device)
    with pytest.raises(tile.TileError, match="requires grad"):
        silu_pair(x, out=(w, g))
    assert not w.detach().any() and not g.any()
    with torch.no_grad():  # as an optimizer step writes parameters
        silu_pair(x, out=(w, g))
    rv, _ = autograd_pair(torch.nn.functional.silu, x)
    torch.testing.assert_close(w.detach().double(), rv, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_autograd_sees_the_writes(device):
    a = torch.randn(4, 8, device=device)
    w = torch.randn(4, 8, device=device, requires_grad=True)
    loss = (w * a).sum()  # `a` is saved for the backward pass
    before = a._version
    silu_pair(torch.ones_like(a), out=(a, torch.empty_like(a)))
    assert a._version > before
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@needs_cuda
def test_streams_tile_cannot_vouch_for_are_refused():
    x = torch.linspace(-3, 3, 4096, device="cuda")
    rv, _ = autograd_pair(torch.nn.functional.silu, x)

    class FakeStream:
        cuda_stream = 0x12345

    for bad in (0x12345, FakeStream()):
        with pytest.raises(tile.TileError, match="vouch"):
            silu_pair(x, stream=bad)
    s = torch.cuda.Stream()
    # A real stream, but as a bare number Tile cannot tell it from a
    # made-up one unless it is current.
    with pytest.raises(tile.TileError, match="vouch"):
        silu_pair(x, stream=s.cuda_stream)
    torch.cuda.synchronize()
    v, _ = silu_pair(x, stream=s)  # the object: PyTorch vouches for it
    s.synchronize()
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-6)
    with torch.cuda.stream(s):
        v, _ = silu_pair(x, stream=s.cuda_stream)  # current, so vouched for
    s.synchronize()
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-6)
    for ok in (0, 1, 2):
        v, _ = silu_pair(x, stream=ok)
    torch.cuda.synchronize()
    torch.testing.assert_close(v.double(), rv, rtol=2e-6, atol=1e-6)


def test_cupy_streams():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"CuPy sees no GPU: {exc}")
    x = cupy.linspace(-6, 6, 4096, dtype=cupy.float32)
    rv, _ = autograd_pair(torch.nn.functional.silu, torch.as_tensor(x.get()))
    s = cupy.cuda.Stream(non_blocking=True)
    cupy.cuda.Device().synchronize()
    with s:
        v, _ = silu_pair(x)  # the array names s, CuPy's current stream
        w, _ = silu_pair(x, stream=s)
    s.synchronize()
    np.testing.assert_allclose(v.get(), rv.numpy(), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(w.get(), rv.numpy(), rtol=2e-6, atol=1e-6)
    with pytest.raises(tile.TileError, match="vouch"):
        silu_pair(x, stream=s)  # no longer current
