"""A probe (not the audited protocol): device time of generated Tile
backward kernels against PyTorch eager's backward kernels and
torch.compile's, one process, CUDA events, float32, 4096x4096 by default.

For each case the inputs, the cotangent and every output are allocated
once; each entry is warmed up, then timed as the median over `--repeats`
batches of `--batch` calls (CUDA events around each batch, divided by the
batch). Every Tile result is checked against PyTorch's before timing.

  python bench/autodiff_probe.py [--shape 4096x4096] [--batch 20] [--repeats 9]

Cases:
- softmax: Tile softmax_grad.tile (recomputes the softmax from x) against
  aten._softmax_backward_data (reads the saved output y) and the backward
  of torch.compile(torch.softmax).
- layernorm: Tile layernorm_grad.tile (recomputes mean and deviation; grad
  of x, w and b) against aten.native_layer_norm_backward (reads the saved
  mean and rstd) and torch.compile's backward.
- cross_entropy: Tile cross_entropy_loss_grad.tile against the backward of
  F.cross_entropy(reduction="none"), eager and compiled.
- sigmoid, gelu: value and gradient (`--with-value`, generated) against the
  same written by hand, both Tile; and PyTorch eager's forward plus
  backward kernels.
"""

import argparse
import json
import pathlib
import statistics
import sys

import torch
import torch.nn.functional as F

import tile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DER = ROOT / "tests/programs/derivatives"


def kernel(name):
    return tile.compile((DER / f"{name}.tile").read_text())


def timed(fn, batch, repeats, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / batch)
    return statistics.median(times)


def compiled_backward(f, inputs, gy):
    """A closure running torch.compile's backward of `f` at `inputs`."""
    cf = torch.compile(f)
    leaves = [t.detach().requires_grad_(True) if t.is_floating_point() else t for t in inputs]
    y = cf(*leaves)
    wrt = [t for t in leaves if t.requires_grad]
    return lambda: torch.autograd.grad(y, wrt, gy, retain_graph=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4096x4096")
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--json", default=None)
    ap.add_argument("--cases", default="softmax,layernorm,cross_entropy,sigmoid,gelu")
    args = ap.parse_args()
    m, n = (int(v) for v in args.shape.split("x"))
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.randn(m, n, device=dev, generator=g)
    gy = torch.randn(m, n, device=dev, generator=g)
    w = torch.randn(n, device=dev, generator=g)
    b = torch.randn(n, device=dev, generator=g)
    label = torch.randint(0, n, (m,), device=dev, generator=g, dtype=torch.int32)
    gl = torch.randn(m, device=dev, generator=g)
    rows = []
    b2 = (args.batch, args.repeats)

    def row(case, entry, us, note=""):
        rows.append({"case": case, "entry": entry, "us": us, "note": note})
        print(f"{case:14s} {entry:34s} {us:10.2f} us  {note}", flush=True)

    cases = set(args.cases.split(","))

    if "softmax" in cases:
        softmax_case(x, gy, row, b2)
    if "layernorm" in cases:
        layernorm_case(x, w, b, gy, m, n, dev, row, b2)
    if "cross_entropy" in cases:
        cross_entropy_case(x, label, gl, row, b2)
    for name in ("sigmoid", "gelu"):
        if name in cases:
            pair_case(name, x, gy, m, n, dev, row, b2)

    info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "shape": [m, n],
            "batch": args.batch, "repeats": args.repeats, "rows": rows}
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(info, indent=1))
    return 0


def softmax_case(x, gy, row, b2):
    k = kernel("softmax_grad")
    dx = torch.empty_like(x)
    k(x=x, grad_y=gy, grad_x=dx)
    y = torch.softmax(x, -1)
    ref = torch.ops.aten._softmax_backward_data(gy, y, -1, torch.float32)
    torch.testing.assert_close(dx, ref, rtol=1e-4, atol=1e-6)
    row("softmax", "tile softmax_grad", timed(lambda: k(x=x, grad_y=gy, grad_x=dx), *b2))
    row("softmax", "torch eager _softmax_backward_data",
        timed(lambda: torch.ops.aten._softmax_backward_data(gy, y, -1, torch.float32), *b2), "reads saved y")
    row("softmax", "torch.compile backward", timed(compiled_backward(lambda t: torch.softmax(t, -1), [x], gy), *b2))



def layernorm_case(x, w, b, gy, m, n, dev, row, b2):
    k = kernel("layernorm_grad")
    outs = dict(grad_x=torch.empty_like(x), grad_w=torch.empty_like(w), grad_b=torch.empty_like(b),
                saved_mean=torch.empty(m, device=dev), saved_r=torch.empty(m, device=dev))
    k(x=x, w=w, b=b, grad_y=gy, **outs)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], w, b, 1e-5)
    rx, rw, rb = torch.ops.aten.native_layer_norm_backward(gy, x, [n], mean, rstd, w, b, [True, True, True])
    torch.testing.assert_close(outs["grad_x"], rx, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(outs["grad_w"], rw, rtol=1e-3, atol=1e-2)
    torch.testing.assert_close(outs["grad_b"], rb, rtol=1e-3, atol=1e-2)
    row("layernorm", "tile layernorm_grad", timed(lambda: k(x=x, w=w, b=b, grad_y=gy, **outs), *b2))
    row("layernorm", "torch eager native_layer_norm_backward",
        timed(lambda: torch.ops.aten.native_layer_norm_backward(gy, x, [n], mean, rstd, w, b, [True, True, True]), *b2),
        "reads saved mean, rstd")
    row("layernorm", "torch.compile backward",
        timed(compiled_backward(lambda t, ww, bb: F.layer_norm(t, (n,), ww, bb, 1e-5), [x, w, b], gy), *b2))



def cross_entropy_case(x, label, gl, row, b2):
    k = kernel("cross_entropy_loss_grad")
    dx = torch.empty_like(x)
    k(x=x, label=label, grad_loss=gl, grad_x=dx)
    xl = x.detach().requires_grad_(True)
    loss = F.cross_entropy(xl, label.long(), reduction="none")
    (ref,) = torch.autograd.grad(loss, xl, gl, retain_graph=True)
    torch.testing.assert_close(dx, ref, rtol=1e-4, atol=1e-6)
    row("cross_entropy", "tile cross_entropy_loss_grad", timed(lambda: k(x=x, label=label, grad_loss=gl, grad_x=dx), *b2))
    row("cross_entropy", "torch eager backward",
        timed(lambda: torch.autograd.grad(loss, xl, gl, retain_graph=True), *b2), "autograd graph of F.cross_entropy")
    lab = label.long()
    row("cross_entropy", "torch.compile backward",
        timed(compiled_backward(lambda t: F.cross_entropy(t, lab, reduction="none"), [x], gl), *b2))



def pair_case(name, x, gy, m, n, dev, row, b2):
    gen, hand = kernel(f"{name}_grad"), kernel(f"{name}_vjp_by_hand")
    yv, dv = torch.empty_like(x), torch.empty_like(x)
    yh, dh = torch.empty_like(x), torch.empty_like(x)
    gen(x=x, grad_y=gy, y=yv, grad_x=dv)
    hand(x=x, grad_y=gy, y=yh, grad_x=dh)
    torch.testing.assert_close(dv, dh, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(yv, yh, rtol=1e-6, atol=1e-7)
    row(name, "tile generated (value + grad)", timed(lambda: gen(x=x, grad_y=gy, y=yv, grad_x=dv), *b2))
    row(name, "tile by hand (value + grad)", timed(lambda: hand(x=x, grad_y=gy, y=yh, grad_x=dh), *b2))
    if name == "sigmoid":
        def eager():
            return torch.ops.aten.sigmoid_backward(gy, torch.sigmoid(x))
        note = "sigmoid, then sigmoid_backward on its output"
    else:
        def eager():
            return F.gelu(x, approximate="tanh"), torch.ops.aten.gelu_backward(gy, x, approximate="tanh")
        note = "gelu, gelu_backward"
    row(name, "torch eager value + backward", timed(eager, *b2), note)
    copy_dst = torch.empty((2, m, n), device=dev)
    src = torch.stack([x, gy])
    row(name, "copy of the same bytes (2 planes)", timed(lambda: copy_dst.copy_(src), *b2), "reads 2, writes 2 planes")


if __name__ == "__main__":
    sys.exit(main())
