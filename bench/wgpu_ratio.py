#!/usr/bin/env python3
"""The wgpu target beside the cuda target: per case, the median over
rounds of each round's median `gpu_batch` sample of the fused variant, on
both, and wgpu's time over cuda's (bench/wgpu_vs_cuda.sh).

    python3 bench/wgpu_ratio.py WGPU_RESULTS.json CUDA_RESULTS.json
"""
import json
import statistics
import sys


def fused(path):
    rows = json.load(open(path))["rows"]
    out, status = {}, {}
    for r in rows:
        if r["framework"] != "tile" or r["variant"] != "fused":
            continue
        status[r["case"]] = r["status"]
        if r["phase"] == "gpu_batch" and r["status"] == "ok" and r["samples_s"]:
            out.setdefault(r["case"], []).append(statistics.median(r["samples_s"]))
    return {c: statistics.median(v) for c, v in out.items()}, status


def main():
    (w, ws), (c, cs) = fused(sys.argv[1]), fused(sys.argv[2])
    print(f"{'case':32} {'wgpu us':>10} {'cuda us':>10} {'wgpu/cuda':>10}")
    for case in sorted(set(ws) | set(cs)):
        a, b = w.get(case), c.get(case)
        fa = f"{a * 1e6:10.1f}" if a else f"{ws.get(case, '-'):>10}"
        fb = f"{b * 1e6:10.1f}" if b else f"{cs.get(case, '-'):>10}"
        ratio = f"{a / b:10.2f}" if a and b else f"{'-':>10}"
        print(f"{case:32} {fa} {fb} {ratio}")


if __name__ == "__main__":
    main()
