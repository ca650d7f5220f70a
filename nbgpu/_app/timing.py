"""Timing on any device: the device's queue is drained before and after each run."""

from __future__ import annotations

import time

from .._array.devices import synchronize


def timed_runs(fn, repeats, like=None):
    """``(seconds of each of ``repeats`` runs of fn(), the last result)``.

    ``like`` (an array on the device that runs ``fn``, or None for the host)
    is synchronised before and after every run, so queued device work is
    counted where it belongs.
    """
    times, result = [], None
    for _ in range(repeats):
        synchronize(like)
        start = time.perf_counter()
        result = fn()
        synchronize(like)
        times.append(time.perf_counter() - start)
    return times, result
