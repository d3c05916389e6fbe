"""Per-call cost from Python on a 1x127 sigmoid pair: Tile's captured
function with out= against NumPy ufunc chains of three and six out= calls.

    python3 bench/py_overhead.py [--shape 1x127] [--repeats 9] [--seconds 0.2]

Each entry is timed in batches (calls per batch calibrated to --seconds);
the figure is the median over --repeats batches, per call, in microseconds;
entries are interleaved batch by batch so drift affects all alike. Every
entry's outputs are checked against FP64 first. This complements the
tile_py peer in `tile bench` (which has no three-ufunc NumPy chain).
"""

import argparse

import numpy as np

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
    x = np.random.default_rng(0).standard_normal((m, n)).astype(np.float32) * 4
    v, g, t = (np.empty_like(x) for _ in range(3))
    one = np.float32(1.0)
    outs = (v, g)

    def tile_call():
        sigmoid_pair(x, out=outs)

    def numpy3():
        # Three out= calls, the shape of PyTorch eager's chain (value,
        # square, difference); exp stands in for the sigmoid NumPy lacks,
        # so this chain does less work than a sigmoid pair.
        np.exp(x, out=v)
        np.multiply(v, v, out=t)
        np.subtract(v, t, out=g)

    def numpy6():
        np.negative(x, out=t)
        np.exp(t, out=t)
        np.add(t, one, out=t)
        np.reciprocal(t, out=v)
        np.multiply(v, v, out=t)
        np.subtract(v, t, out=g)

    x64 = x.astype(np.float64)
    s = 1 / (1 + np.exp(-x64))
    tile_call()
    assert np.allclose(v, s, rtol=2e-6, atol=2e-7) and np.allclose(g, s * (1 - s), rtol=2e-5, atol=2e-7)
    numpy6()
    assert np.allclose(v, s, rtol=2e-6, atol=2e-7)
    numpy3()
    e = np.exp(x64)
    assert np.allclose(g, e - e * e, rtol=2e-5, atol=1e-3)

    entries = {"tile (jit, out=)": tile_call, "numpy, 3 ufuncs (exp, multiply, subtract)": numpy3,
               "numpy, 6 ufuncs (the numpy_eager peer's chain)": numpy6}
    samples = pytiming.interleaved(entries, args.repeats, args.seconds)
    print(f"shape {m}x{n}, numpy {np.__version__}, tile {tile.__version__}, {args.repeats} batches each")
    pytiming.print_table(samples, 48)


if __name__ == "__main__":
    main()
