"""Where the host time of a small CUDA call from Python goes: Tile's
captured sigmoid pair with out= on PyTorch tensors, PyTorch eager's three
out= calls, and the pieces of Tile's call path timed alone.

    python3 bench/py_cuda_overhead.py [--shape 1x127] [--repeats 9] [--seconds 0.2]

Each entry is timed in batches (calls per batch calibrated to --seconds,
one torch.cuda.synchronize() closing each batch); the figure is the median
over --repeats batches, per call, in microseconds; entries are interleaved
batch by batch. Tile's and PyTorch's outputs are checked against FP64
first. A profile, not a result: `tile bench --peers tile_py,torch_eager`
makes the reported figures.
"""

import argparse

import torch

import pytiming
import tile


@tile.jit
def sigmoid_pair(x):
    s = tile.sigmoid(x)
    return s, s * (1.0 - s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="1x127")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--seconds", type=float, default=0.2)
    args = ap.parse_args()
    m, n = (int(v) for v in args.shape.split("x"))
    x = torch.randn(m, n, device="cuda") * 4
    v, g = torch.empty_like(x), torch.empty_like(x)
    outs = (v, g)

    def tile_call():
        sigmoid_pair(x, out=outs)

    def eager():
        torch.sigmoid(x, out=v)
        torch.mul(v, v, out=g)
        torch.sub(v, g, out=g)

    s = torch.sigmoid(x.double())
    tile_call()
    torch.cuda.synchronize()
    assert torch.allclose(v.double(), s, rtol=2e-6, atol=2e-7)
    assert torch.allclose(g.double(), s * (1 - s), rtol=2e-5, atol=2e-7)
    eager()
    torch.cuda.synchronize()
    assert torch.allclose(g.double(), s * (1 - s), rtol=2e-5, atol=2e-7)

    describe = tile._native.describe_array
    bump = torch._C._increment_version
    stream = torch._C._cuda_getCurrentRawStream
    entries = {
        "tile (jit, out=)": tile_call,
        "torch eager, 3 out= calls": eager,
        "  piece: describe 3 tensors": lambda: (describe(x), describe(v), describe(g)),
        "  piece: PyTorch's current stream": lambda: stream(0),
        "  piece: bump 2 version counters": lambda: bump(outs),
        "  piece: is_grad_enabled": torch.is_grad_enabled,
    }
    samples = pytiming.interleaved(entries, args.repeats, args.seconds, torch.cuda.synchronize)
    print(f"shape {m}x{n}, torch {torch.__version__}, tile {tile.__version__}, {args.repeats} batches each")
    pytiming.print_table(samples, 40)


if __name__ == "__main__":
    main()
