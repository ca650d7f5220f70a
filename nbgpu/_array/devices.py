"""Choosing a device and moving host data to it; waiting for a device.

For the application layer (command line, comparisons, benchmarks) and the
streaming uploader: library code never picks a device, it follows its input.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time

import numpy as np
import scipy.sparse as sp
from array_api_compat import is_torch_namespace

from .namespace import (
    _cupy_library,
    device_library,
    get_device,
    get_namespace,
    is_array,
    is_sparse,
    on_host,
    to_namespace,
    uses_device_library,
)


def gpu_library():
    """cupy and cupyx (``namespace.device_library``) for ``--device gpu`` and
    ``fit_stream(device="gpu")``; ImportError without cupy. Tests patch in the stand-in."""
    return _cupy_library()


def gpu_array_like():
    """An empty array on the current GPU, or None unless cupy imports and computes
    (a machine with cupy installed but no driver gives None)."""
    try:
        cp = gpu_library().cupy
        like = cp.empty(0, dtype=cp.float64)
        float(cp.ones(2).sum())
        return like
    except Exception:  # ImportError, CUDA errors: no usable GPU
        return None


def _like_namespace(like):
    """The namespace of ``like``, or None for the host (None or a numpy array)."""
    if like is None:
        return None
    xp = get_namespace(like)
    return None if on_host(xp) else xp


def host_to_like(X, like):
    """Host array or scipy.sparse ``X`` on the namespace/device of ``like`` (None or numpy: the
    host); sparse ``X`` becomes the matching ``cupyx.scipy.sparse`` format."""
    xp = _like_namespace(like)
    if xp is None:
        return X
    if sp.issparse(X):
        csp = device_library(xp).cupyx.scipy.sparse
        fmt = X.format if X.format in ("csr", "csc") else "csr"
        return getattr(csp, f"{fmt}_matrix")(device_sparse_values(X.asformat(fmt)))
    return to_namespace(X, xp, get_device(like))


def synchronize(like):
    """Wait until the device of ``like`` has finished its queued work (timings)."""
    xp = _like_namespace(like)
    if xp is None:
        return
    if uses_device_library(xp):
        device_library(xp).cupy.cuda.get_current_stream().synchronize()
    elif is_torch_namespace(xp) and like.device.type == "cuda":
        import torch

        torch.cuda.synchronize(like.device)


def device_sparse_values(X):
    """Host sparse ``X`` with values cupyx can hold (bool, float32, float64, complex): integer
    counts and float16 cast on the host to the float dtype nbgpu computes them in anyway."""
    if X.dtype in (np.bool_, np.float32, np.float64):
        return X
    return X.astype(np.float32 if X.dtype == np.float16 else np.float64)


class PinnedUploader:
    """Copies host chunks to the GPU through pinned memory on its own stream.

    ``upload`` (in the prefetch thread) stages the arrays in pinned memory, queues the copies
    on the copy stream and records an event; the consumer's compute stream waits on that
    event, so the copy of the next chunk overlaps the work on this one.
    """

    def __init__(self):
        lib = gpu_library()
        self.cupy, self.csp = lib.cupy, lib.cupyx.scipy.sparse
        self.device = self.cupy.cuda.Device()
        self.stream = self.cupy.cuda.Stream(non_blocking=True)

    def _is_pinned(self, host):
        runtime = self.cupy.cuda.runtime
        try:
            return runtime.pointerGetAttributes(host.ctypes.data).type == runtime.memoryTypeHost
        except Exception:  # pageable memory on older drivers raises
            return False

    def _array(self, host):
        host = np.ascontiguousarray(host)
        # A loader that reads into pinned buffers needs no staging copy.
        pinned = host if host.size and self._is_pinned(host) else pinned_copy(host)
        out = self.cupy.empty(host.shape, dtype=host.dtype)
        out.set(pinned, stream=self.stream)
        return out, pinned

    def upload(self, X, y, weight):
        keep = []  # pinned buffers stay alive until the copy has run

        def put(a):
            if a is None or (is_array(a) and not on_host(get_namespace(a))):
                return a  # nothing to copy, or already on the device
            dev, pinned = self._array(np.asarray(a))
            keep.append(pinned)
            return dev

        with self.device, self.stream:
            if sp.issparse(X):
                X = device_sparse_values(X.tocsr())  # cupyx stores no integers
                X = self.csp.csr_matrix((put(X.data), put(X.indices), put(X.indptr)), shape=X.shape)
            elif not is_sparse(X):
                X = put(X)
            # Labels stay on the host (any dtype, strings too): partial_fit
            # sends only their class codes to the device.
            weight = put(weight)
            event = self.stream.record()
        return X, y, weight, event, keep

    def wait(self, event):
        """Make the compute stream wait for the copies behind ``event``."""
        self.cupy.cuda.get_current_stream().wait_event(event)

    def release(self, arrays):
        """Drop a chunk's device ``arrays`` once the compute stream is done with them.

        cupy's pool hands freed memory to the next allocation on the copy stream: that stream
        first waits for the compute stream's queued work, which may still read the memory.
        """
        self.stream.wait_event(self.cupy.cuda.get_current_stream().record())
        del arrays

    def synchronize(self):
        self.cupy.cuda.get_current_stream().synchronize()


def timed_runs(fn, repeats, like=None):
    """``(seconds of each of ``repeats`` runs of fn(), the last result)``, the device of
    ``like`` (None: the host) synchronised around every run so queued work counts."""
    times, result = [], None
    for _ in range(repeats):
        synchronize(like)
        start = time.perf_counter()
        result = fn()
        synchronize(like)
        times.append(time.perf_counter() - start)
    return times, result


def device_name(like=None):
    """A readable name of the processor that runs arrays like ``like`` (None: this CPU)."""
    xp = _like_namespace(like)
    if xp is not None and uses_device_library(xp):
        lib = device_library(xp)
        if lib.emulated:
            return "CPU stand-in for a GPU (emulated device)"
        name = lib.cupy.cuda.runtime.getDeviceProperties(like.device.id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def gpu_versions():
    """Versions of the GPU stack (cupy, CUDA runtime), empty without a GPU."""
    if gpu_array_like() is None:
        return {}
    cupy = gpu_library().cupy
    return {"cupy": cupy.__version__, "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion()}


def pinned_copy(a):
    """A copy of host array ``a`` in pinned (page-locked) host memory."""
    cupyx = gpu_library().cupyx
    out = cupyx.empty_pinned(a.shape, dtype=a.dtype)
    out[...] = a
    return out
