"""Choosing a device and moving host data to it; waiting for a device.

For the application layer (command line, comparisons, benchmarks) and the
streaming uploader: library code never picks a device, it follows its input.
"""

from __future__ import annotations

import os
import platform
import time

import array_api_compat
import numpy as np
import scipy.sparse as sp
from array_api_compat import is_cupy_namespace, is_torch_namespace

from .namespace import is_sparse, to_namespace


def gpu_array_like():
    """An empty cupy array on the current GPU, or None when no GPU works.

    A GPU "works" when cupy imports and a small computation on it succeeds
    (a machine with cupy installed but no driver gives None).
    """
    try:
        import cupy
        import cupyx.scipy.sparse  # noqa: F401  (lets is_sparse see cupyx matrices)

        like = cupy.empty(0, dtype=cupy.float64)
        float(cupy.ones(2).sum())
        return like
    except Exception:  # ImportError, CUDA errors: no usable GPU
        return None


def host_to_like(X, like):
    """A host numpy array or scipy.sparse matrix on the namespace/device of ``like``.

    ``like=None`` (or a numpy array) keeps ``X`` on the host; a cupy array
    moves dense ``X`` to a cupy array and sparse ``X`` to the matching
    ``cupyx.scipy.sparse`` format.
    """
    if like is None or isinstance(like, np.ndarray):
        return X
    if sp.issparse(X):
        import cupyx.scipy.sparse as csp

        fmt = X.format if X.format in ("csr", "csc") else "csr"
        return getattr(csp, f"{fmt}_matrix")(device_sparse_values(X.asformat(fmt)))
    return to_namespace(X, array_api_compat.array_namespace(like), array_api_compat.device(like))


def synchronize(like):
    """Wait until the device of ``like`` has finished its queued work (timings)."""
    if like is None or isinstance(like, np.ndarray):
        return
    xp = array_api_compat.array_namespace(like)
    if is_cupy_namespace(xp):
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    elif is_torch_namespace(xp) and like.device.type == "cuda":
        import torch

        torch.cuda.synchronize(like.device)


def device_sparse_values(X):
    """Host sparse ``X`` with values a GPU sparse matrix can hold.

    cupyx sparse matrices store only bool, float32, float64 and complex:
    integer counts (CountVectorizer output) and float16 are cast on the host
    to the float dtype nbgpu would compute in anyway (float32 for float16,
    float64 otherwise), before the copy.
    """
    if X.dtype in (np.bool_, np.float32, np.float64):
        return X
    return X.astype(np.float32 if X.dtype == np.float16 else np.float64)


class PinnedUploader:
    """Copies host chunks to the GPU through pinned memory on its own stream.

    ``upload`` runs in the prefetch thread: it stages the arrays in pinned
    host memory, queues the asynchronous copies on the copy stream and
    records an event; the consumer makes the compute stream wait on that
    event, so the copy of the next chunk overlaps the work on this one.
    """

    def __init__(self):
        import cupy
        import cupyx.scipy.sparse as csp

        self.cupy, self.csp = cupy, csp
        self.device = cupy.cuda.Device()
        self.stream = cupy.cuda.Stream(non_blocking=True)

    def _is_pinned(self, host):
        runtime = self.cupy.cuda.runtime
        try:
            return runtime.pointerGetAttributes(host.ctypes.data).type == runtime.memoryTypeHost
        except Exception:  # pageable memory on older drivers raises
            return False

    def _array(self, host):
        import cupyx

        host = np.ascontiguousarray(host)
        if host.size and self._is_pinned(host):
            pinned = host  # a loader that reads into pinned buffers: no staging copy
        else:
            pinned = cupyx.empty_pinned(host.shape, dtype=host.dtype)
            pinned[...] = host
        out = self.cupy.empty(host.shape, dtype=host.dtype)
        out.set(pinned, stream=self.stream)
        return out, pinned

    def upload(self, X, y, weight):
        keep = []  # pinned buffers stay alive until the copy has run

        def put(a):
            if a is None or type(a).__module__.startswith("cupy"):
                return a  # nothing to copy, or already on the device
            dev, pinned = self._array(np.asarray(a))
            keep.append(pinned)
            return dev

        with self.device, self.stream:
            if is_sparse(X) and not type(X).__module__.startswith("cupyx"):
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

        cupy's memory pool hands freed memory to the next allocation on the
        stream it was allocated on (the copy stream): the copy stream first
        waits for the work queued so far on the compute stream, so the next
        upload cannot overwrite memory that work still reads.
        """
        self.stream.wait_event(self.cupy.cuda.get_current_stream().record())
        del arrays

    def synchronize(self):
        self.cupy.cuda.get_current_stream().synchronize()


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


def device_name(like=None):
    """A readable name of the processor that runs arrays like ``like`` (None: this CPU)."""
    if like is not None and is_cupy_namespace(array_api_compat.array_namespace(like)):
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(like.device.id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} cores)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def gpu_versions():
    """Versions of the GPU stack (cupy, CUDA runtime), empty without a GPU."""
    if gpu_array_like() is None:
        return {}
    import cupy

    return {"cupy": cupy.__version__, "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion()}


def device_memory_bytes(like):
    """Total memory of the GPU of ``like``."""
    import cupy

    with cupy.cuda.Device(like.device.id):
        return int(cupy.cuda.runtime.memGetInfo()[1])


def pinned_copy(a):
    """A copy of host array ``a`` in pinned (page-locked) host memory."""
    import cupyx

    out = cupyx.empty_pinned(a.shape, dtype=a.dtype)
    out[...] = a
    return out


def copy_bandwidths(like, nbytes=2 * 2**30, repeats=5):
    """(device copy, host-to-device) bandwidth in bytes/s on the GPU of ``like``.

    The device copy counts the bytes read and written (2 × size / time), the
    traffic a kernel that reads X once competes with.
    """
    import cupy

    a = cupy.empty(nbytes, dtype=cupy.uint8)
    b = cupy.empty_like(a)
    a.fill(1)
    t_copy = min(timed_runs(lambda: b.__setitem__(Ellipsis, a), repeats, like)[0])
    host = pinned_copy(np.ones(nbytes, dtype=np.uint8))
    t_h2d = min(timed_runs(lambda: b.set(host), repeats, like)[0])
    return 2 * nbytes / t_copy, nbytes / t_h2d
