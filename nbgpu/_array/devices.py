"""Choosing a device and moving host data to it; waiting for a device.

For the application layer (command line, comparisons, benchmarks) and the
streaming uploader: library code never picks a device, it follows its input.
"""

from __future__ import annotations

import array_api_compat
import numpy as np
import scipy.sparse as sp
from array_api_compat import is_cupy_namespace, is_torch_namespace

from .namespace import to_namespace


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
