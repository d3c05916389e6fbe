"""Interleaved batch timing shared by the Python profiles in bench/."""

import statistics
import time


def interleaved(entries, repeats, seconds, sync=lambda: None):
    """Per-call microseconds of each entry (name -> function): calls per
    batch calibrated to `seconds`, then `repeats` batches of every entry in
    turn, `sync()` closing each batch. Returns name -> list of samples."""
    counts = {}
    for name, f in entries.items():
        k, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            f()
            k += 1
        sync()
        counts[name] = k
    samples = {name: [] for name in entries}
    for _ in range(repeats):
        for name, f in entries.items():
            k = counts[name]
            t0 = time.perf_counter()
            for _ in range(k):
                f()
            sync()
            samples[name].append((time.perf_counter() - t0) / k * 1e6)
    return samples


def print_table(samples, width):
    """Median, min and max per entry, in microseconds."""
    print(f"{'entry':{width}} {'median us':>10} {'min us':>8} {'max us':>8}")
    for name, xs in samples.items():
        print(f"{name:{width}} {statistics.median(xs):10.3f} {min(xs):8.3f} {max(xs):8.3f}")
