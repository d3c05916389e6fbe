"""A CPU probe (not the audited protocol): generated Tile backward kernels
against NumPy written by hand, float32, 4096x4096 by default, one process.
Each entry is warmed up, then timed as the median over `--repeats` runs
of `--batch` calls (`time.perf_counter`). Every Tile result is checked
against NumPy's before timing. NumPy's backward passes use the values a
forward pass would have saved (softmax's output; LayerNorm's mean and
reciprocal deviation); Tile's recompute them from `x`.

  python bench/autodiff_probe_cpu.py [--shape 4096x4096] [--batch 3] [--repeats 7]
"""

import argparse
import json
import pathlib
import statistics
import sys
import time

import numpy as np

import tile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DER = ROOT / "tests/programs/derivatives"


def kernel(name):
    return tile.compile((DER / f"{name}.tile").read_text())


def timed(fn, batch, repeats):
    fn()
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t) * 1e6 / batch)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="4096x4096")
    ap.add_argument("--batch", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    m, n = (int(v) for v in args.shape.split("x"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, n), dtype=np.float32)
    gy = rng.standard_normal((m, n), dtype=np.float32)
    w = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    label = rng.integers(0, n, m).astype(np.int32)
    gl = rng.standard_normal(m, dtype=np.float32)
    b2 = (args.batch, args.repeats)
    rows = []

    def row(case, entry, us):
        rows.append({"case": case, "entry": entry, "us": us})
        print(f"{case:14s} {entry:40s} {us:12.1f} us", flush=True)

    # softmax
    k = kernel("softmax_grad")
    dx = np.empty_like(x)
    y = np.exp(x - x.max(-1, keepdims=True))
    y /= y.sum(-1, keepdims=True)
    tmp, dot, ref = np.empty_like(x), np.empty((m, 1), np.float32), np.empty_like(x)

    def np_softmax():
        np.multiply(gy, y, out=tmp)
        np.sum(tmp, axis=-1, keepdims=True, out=dot)
        np.subtract(gy, dot, out=ref)
        np.multiply(ref, y, out=ref)

    np_softmax()
    k(x=x, grad_y=gy, grad_x=dx)
    np.testing.assert_allclose(dx, ref, rtol=1e-3, atol=1e-5)
    row("softmax", "tile softmax_grad", timed(lambda: k(x=x, grad_y=gy, grad_x=dx), *b2))
    row("softmax", "numpy by hand (saved y, out=)", timed(np_softmax, *b2))

    # layernorm
    k = kernel("layernorm_grad")
    outs = dict(grad_x=np.empty_like(x), grad_w=np.empty_like(w), grad_b=np.empty_like(b),
                saved_mean=np.empty(m, np.float32), saved_r=np.empty(m, np.float32))
    mean = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5)
    xhat, g, t1, t2 = (np.empty_like(x) for _ in range(4))
    ref_dx, ref_dw, ref_db = np.empty_like(x), np.empty_like(w), np.empty_like(b)
    c1, c2 = np.empty((m, 1), np.float32), np.empty((m, 1), np.float32)

    def np_layernorm():
        np.subtract(x, mean, out=xhat)
        np.multiply(xhat, rstd, out=xhat)
        np.multiply(gy, w, out=g)
        np.mean(g, axis=-1, keepdims=True, out=c1)
        np.multiply(g, xhat, out=t1)
        np.mean(t1, axis=-1, keepdims=True, out=c2)
        np.multiply(xhat, c2, out=t2)
        np.subtract(g, c1, out=ref_dx)
        np.subtract(ref_dx, t2, out=ref_dx)
        np.multiply(ref_dx, rstd, out=ref_dx)
        np.multiply(gy, xhat, out=t1)
        np.sum(t1, axis=0, out=ref_dw)
        np.sum(gy, axis=0, out=ref_db)

    np_layernorm()
    k(x=x, w=w, b=b, grad_y=gy, **outs)
    np.testing.assert_allclose(outs["grad_x"], ref_dx, rtol=1e-2, atol=1e-3)
    np.testing.assert_allclose(outs["grad_w"], ref_dw, rtol=1e-2, atol=1e-1)
    np.testing.assert_allclose(outs["grad_b"], ref_db, rtol=1e-3, atol=1e-2)
    row("layernorm", "tile layernorm_grad", timed(lambda: k(x=x, w=w, b=b, grad_y=gy, **outs), *b2))
    row("layernorm", "numpy by hand (saved mean, rstd, out=)", timed(np_layernorm, *b2))

    # cross-entropy (per-row loss)
    k = kernel("cross_entropy_loss_grad")
    dx = np.empty_like(x)
    p, s, mx = np.empty_like(x), np.empty((m, 1), np.float32), np.empty((m, 1), np.float32)
    rows_ix = np.arange(m)

    def np_xent():
        np.max(x, axis=-1, keepdims=True, out=mx)
        np.subtract(x, mx, out=p)
        np.exp(p, out=p)
        np.sum(p, axis=-1, keepdims=True, out=s)
        np.divide(p, s, out=p)
        p[rows_ix, label] -= 1.0
        np.multiply(p, gl[:, None], out=p)

    np_xent()
    k(x=x, label=label, grad_loss=gl, grad_x=dx)
    np.testing.assert_allclose(dx, p, rtol=1e-3, atol=1e-6)
    row("cross_entropy", "tile cross_entropy_loss_grad", timed(lambda: k(x=x, label=label, grad_loss=gl, grad_x=dx), *b2))
    row("cross_entropy", "numpy by hand (out=)", timed(np_xent, *b2))

    # value and gradient
    for name in ("sigmoid", "gelu"):
        gen, hand = kernel(f"{name}_grad"), kernel(f"{name}_vjp_by_hand")
        yv, dv, yh, dh = (np.empty_like(x) for _ in range(4))
        gen(x=x, grad_y=gy, y=yv, grad_x=dv)
        hand(x=x, grad_y=gy, y=yh, grad_x=dh)
        np.testing.assert_allclose(dv, dh, rtol=1e-5, atol=1e-6)
        row(name, "tile generated (value + grad)", timed(lambda: gen(x=x, grad_y=gy, y=yv, grad_x=dv), *b2))
        row(name, "tile by hand (value + grad)", timed(lambda: hand(x=x, grad_y=gy, y=yh, grad_x=dh), *b2))

    info = {"shape": [m, n], "batch": args.batch, "repeats": args.repeats, "numpy": np.__version__,
            "rows": rows}
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(info, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
