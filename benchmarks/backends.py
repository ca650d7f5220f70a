"""The backends the benchmarks compare, through public APIs only: scikit-learn,
nbgpu on the host, and nbgpu on a GPU (cupy arrays, ``cupyx.scipy.sparse``
matrices), named as ``nbgpu bench --backends`` names them, and its size presets.

Data are moved to a backend outside any timer; every timed call ends with the
device's queued work done (``synchronize``).
"""

from __future__ import annotations

import functools
import importlib
import os
import platform
import time

import numpy as np
import scipy.sparse as sp

import nbgpu

BACKENDS = ("sklearn", "nbgpu-cpu", "nbgpu-gpu")
SIZES = ("tiny", "small", "full", "gpu")  # nbgpu bench --size: the presets of nbgpu.datasets.make_bench_data


@functools.lru_cache(maxsize=1)
def cupy():
    """The cupy module where it imports and computes on a GPU, else None."""
    try:
        import cupy as cp

        float(cp.ones(2).sum())
        return cp
    except Exception:  # ImportError, or cupy without a usable device or driver
        return None


def available():
    """The backends this machine can run."""
    return [b for b in BACKENDS if b != "nbgpu-gpu" or cupy() is not None]


def estimator(backend, model):
    """A new ``model`` (a class name) of scikit-learn (backend "sklearn") or of nbgpu."""
    library = importlib.import_module("sklearn.naive_bayes") if backend == "sklearn" else nbgpu
    return getattr(library, model)()


def to_backend(backend, X):
    """Host array or scipy.sparse ``X`` (None passes) on ``backend``'s device: cupy, or the
    ``cupyx.scipy.sparse`` format of ``X`` (CSR for other formats; integer counts as float64,
    which cupyx holds and nbgpu computes them in)."""
    if backend != "nbgpu-gpu" or X is None:
        return X
    if sp.issparse(X):
        import cupyx.scipy.sparse as csp

        X = X.asformat("csc" if X.format == "csc" else "csr")
        if X.dtype not in (np.bool_, np.float32, np.float64):
            X = X.astype(np.float64)
        return getattr(csp, f"{X.format}_matrix")(X)
    return cupy().asarray(X)


def synchronize(backend):
    """Wait until ``backend``'s device has done its queued work (nothing on the host)."""
    if backend == "nbgpu-gpu":
        cupy().cuda.get_current_stream().synchronize()


def timed(fn, repeats, backend):
    """``(seconds of each of ``repeats`` calls of fn(), the last result)``, the device of ``backend``
    synchronised around every call so that queued work counts."""
    times, result = [], None
    for _ in range(repeats):
        synchronize(backend)
        start = time.perf_counter()
        result = fn()
        synchronize(backend)
        times.append(time.perf_counter() - start)
    return times, result


def bytes_read(X):
    """Bytes of ``X`` one pass reads: values and index arrays."""
    if sp.issparse(X):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(X.nbytes)


def device_name(backend):
    """The processor ``backend`` runs on, readable: the GPU's name, else this CPU's model and cores."""
    if backend == "nbgpu-gpu":
        cp = cupy()
        name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    except OSError:
        model = None
    return f"{model or platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def versions():
    """Versions of the libraries in play; cupy's and the CUDA runtime's where a GPU is usable."""
    import scipy
    import sklearn

    out = {"python": platform.python_version(), "nbgpu": nbgpu.__version__, "numpy": np.__version__,
           "scipy": scipy.__version__, "scikit-learn": sklearn.__version__}
    if cupy() is not None:
        out.update(cupy=cupy().__version__, cuda_runtime=cupy().cuda.runtime.runtimeGetVersion())
    return out
