"""Side-by-side timing for the benchmark scripts: interleaved repeats, medians."""

import time

import numpy as np


def interleaved_medians(calls, repeat):
    """``({name: median seconds}, {name: last result})`` of ``calls`` (name -> callable on the host),
    run one after the other ``repeat`` times so that load changes hit all alike."""
    timings = {name: [] for name in calls}
    results = {}
    for _ in range(repeat):
        for name, call in calls.items():
            start = time.perf_counter()
            results[name] = call()
            timings[name].append(time.perf_counter() - start)
    return {name: float(np.median(ts)) for name, ts in timings.items()}, results


def print_ratios(medians, base, unit="s"):
    """One line per call: median and how many times faster than ``base``."""
    scale = 1e3 if unit == "ms" else 1.0
    for name, med in medians.items():
        print(f"  {name:30s} median {med * scale:8.2f} {unit}   {base} / this = {medians[base] / med:6.1f}x")
