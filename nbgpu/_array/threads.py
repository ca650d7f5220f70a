"""The CPU thread pool the host kernels share, and the BLAS thread limit.

numpy and scipy kernels release the GIL, so one shared pool of threads runs
them on all cores; BLAS is held to one thread meanwhile so the cores are not
oversubscribed.
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait


def n_threads():
    """CPU threads the host kernels split their work over (``NBGPU_NUM_THREADS``)."""
    env = os.environ.get("NBGPU_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


_POOL = None
_WORKING = threading.local()  # set while a thread runs items of a parallel_map


def parallel_map(fn, items, *, blas=True):
    """``[fn(i) for i in items]`` on all cores: the caller and a shared pool.

    ``fn`` releases the GIL (numpy/scipy kernels). The caller takes items too (an idle pool
    thread can be slow to get its core back) and each thread takes the next item when free,
    so a slow core holds up at most one. Inside an item it runs serially (no nested waits).
    BLAS runs on one thread meanwhile (:func:`blas_single_thread`); ``blas=False``: ``fn``
    calls no BLAS (hashing text, inflating a file), so the limit is not set, nor threadpoolctl
    imported and the loaded libraries scanned the first time (11 ms CPU, median of 8 fresh
    processes at load 3.2).
    """
    global _POOL
    items = list(items)
    threads = min(n_threads(), len(items))
    if threads <= 1 or getattr(_WORKING, "active", False):
        return list(map(fn, items))
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=max(n_threads() - 1, 1), thread_name_prefix="nbgpu")
    results = [None] * len(items)
    order = iter(range(len(items)))
    lock = threading.Lock()
    failed = []

    def drain():
        _WORKING.active = True
        try:
            while not failed:
                with lock:
                    i = next(order, None)
                if i is None:
                    return
                results[i] = fn(items[i])
        except BaseException:
            failed.append(True)  # the others stop taking items
            raise
        finally:
            _WORKING.active = False

    # Our threads already use every core: BLAS threads on top of them
    # oversubscribe the cores and serialise on BLAS's own pool. Also where
    # fn calls no BLAS but its caller does not say so: the limit parks BLAS
    # threads still spinning after an earlier call (without it a sparse
    # product measured about 10 % slower).
    with blas_single_thread() if blas else contextlib.nullcontext():
        helpers = [_POOL.submit(drain) for _ in range(threads - 1)]
        try:
            drain()
        finally:
            # A helper that has not started finds nothing left: cancel it
            # rather than wait for its thread; wait for the others.
            running = [helper for helper in helpers if not helper.cancel()]
            wait(running)
        for helper in running:
            helper.result()  # raises a helper's error
    return results


def _forget_pool():
    # A forked child has none of the pool's threads: it starts its own.
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


_BLAS = None  # threadpoolctl's controller, made on first use
_BLAS_LOCK = threading.Lock()
_BLAS_USERS = 0  # threads inside blas_single_thread() now
_BLAS_LIMITER = None


def _as_blas_controller(action):
    """``action()`` (set or restore a BLAS limit) from the calling thread.

    threadpoolctl 3.8 lets only the first thread that set a pthreads OpenBLAS limit change it
    and silently ignores the others; the thread that restores a limit is often not the one
    that set it, so control is taken for the one call and given back (callers hold ``_BLAS_LOCK``).
    """
    from threadpoolctl import OpenBLASController  # a dependency of scikit-learn

    release = getattr(OpenBLASController, "clear_controlling_thread", lambda force: None)  # older: none
    release(force=True)
    try:
        return action()
    finally:
        release(force=True)


@contextlib.contextmanager
def blas_single_thread():
    """A context in which BLAS (OpenBLAS, MKL, ...) runs on one thread.

    Reference-counted over threads: the first to enter sets the limit, the last to leave
    restores BLAS's own (nested limits that each restore what they saw would leave BLAS at
    one thread for good when two threads' calls overlap).
    """
    global _BLAS, _BLAS_USERS, _BLAS_LIMITER
    with _BLAS_LOCK:
        if _BLAS_USERS == 0:
            if _BLAS is None:
                from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

                _BLAS = ThreadpoolController()
            _BLAS_LIMITER = _as_blas_controller(lambda: _BLAS.limit(limits=1, user_api="blas"))
        _BLAS_USERS += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_USERS -= 1
            if _BLAS_USERS == 0:
                _as_blas_controller(_BLAS_LIMITER.restore_original_limits)
                _BLAS_LIMITER = None
