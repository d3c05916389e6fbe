"""`tile.autograd` in PyTorch training: `torch.autograd.gradcheck` in
float64 on the CPU and CUDA for functions covering every differentiable
operation, gradients against PyTorch's own LayerNorm, inputs that do not
require grad, `torch.no_grad`, several results; each with the forward
pass saving its inputs and saving its reductions. Skipped, with the reason,
where torch or a GPU is missing."""

import pathlib
import sys

import pytest

import tile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from grad_cases import FUNCTIONS, arguments, layernorm, rows  # noqa: E402

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
CUDA = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if CUDA else [])


def _tensors(shapes, seed, device, requires_grad=True):
    return [
        torch.tensor(a, dtype=torch.float64, device=device, requires_grad=requires_grad)
        for a in arguments(shapes, seed)
    ]


SAVES = ["inputs", "reductions"]


@pytest.mark.parametrize("saves", SAVES)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn,shapes", FUNCTIONS, ids=[f[0].__name__ for f in FUNCTIONS])
def test_autograd_passes_gradcheck(fn, shapes, device, saves):
    f = tile.autograd(fn, saves=saves)
    assert f.saves == saves
    args = _tensors(shapes, 6, device)
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("saves", SAVES)
@pytest.mark.parametrize("device", DEVICES)
def test_autograd_matches_torch_on_layernorm(device, saves):
    x, w, b = _tensors([(8, 33), (33,), (33,)], 7, device)
    y = tile.autograd(layernorm, saves=saves)(x, w, b)
    assert y.grad_fn is not None
    (y * y).sum().backward()
    got = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    ref = torch.nn.functional.layer_norm(x, (33,), w, b, eps=1e-5)
    (ref * ref).sum().backward()
    for g, t in zip(got, (x, w, b)):
        torch.testing.assert_close(g, t.grad, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("saves", SAVES)
@pytest.mark.parametrize("device", DEVICES)
def test_autograd_with_some_inputs_requiring_grad_and_under_no_grad(device, saves):
    x, w, b = _tensors([(4, 9), (9,), (9,)], 8, device, requires_grad=False)
    w.requires_grad_(True)
    f = tile.autograd(layernorm, saves=saves)
    y = f(x, w, b)
    y.sum().backward()
    assert x.grad is None and b.grad is None and w.grad is not None
    with torch.no_grad():
        z = f(x, w, b)
    assert z.grad_fn is None
    torch.testing.assert_close(z, y.detach())


@pytest.mark.parametrize("device", DEVICES)
def test_autograd_of_several_results_in_float32(device):
    x, w = (t.float().detach().requires_grad_(True) for t in _tensors([(16, 64), (64,)], 9, device))
    a, m = tile.autograd(rows)(x, w)
    (a.sum() + 3 * m.sum()).backward()
    x2, w2 = (t.detach().double().requires_grad_(True) for t in (x, w))
    s = (x2 * w2).sum(-1, keepdim=True)
    mx = torch.sin(x2).amax(-1, keepdim=True)
    mn = (x2 * x2).amin(-1, keepdim=True)
    a2 = x2 * s + mx * w2
    m2 = (torch.tanh(x2) * mn).mean(-1)
    (a2.sum() + 3 * m2.sum()).backward()
    torch.testing.assert_close(x.grad.double(), x2.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(w.grad.double(), w2.grad, rtol=1e-4, atol=1e-4)
