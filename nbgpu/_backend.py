"""Namespaces, devices, dtypes and sparse matrices.

This is the only module that knows array libraries by name. Model code asks it
for a namespace and calls only functions of the Array API standard; sparse
matrices (``scipy.sparse`` on the CPU, ``cupyx.scipy.sparse`` on a GPU) are not
in the standard, so every operation on them lives here. ``cupyx`` is only
looked at when it is already imported, so CPU users pay nothing for it.
"""

from __future__ import annotations

import sys

import array_api_compat
import numpy as np
import scipy.sparse as sp
from array_api_compat import (
    is_cupy_namespace,
    is_numpy_namespace,
    is_torch_namespace,
)

__all__ = [
    "get_namespace",
    "get_device",
    "is_sparse",
]

# Row or nonzero blocks are sized so their temporaries stay near this many bytes.
BLOCK_BYTES = 64 * 2**20


# --------------------------------------------------------------------------- #
# Namespaces and devices
# --------------------------------------------------------------------------- #
def _cupyx_sparse():
    return sys.modules.get("cupyx.scipy.sparse")


def is_sparse(X) -> bool:
    """True for a scipy.sparse or (already imported) cupyx.scipy.sparse matrix."""
    if sp.issparse(X):
        return True
    mod = _cupyx_sparse()
    return mod is not None and mod.issparse(X)


def _sparse_lib(X):
    """The dense library (numpy or cupy) behind a sparse matrix."""
    if sp.issparse(X):
        return np
    import cupy

    return cupy


def is_array(x) -> bool:
    """True for an array of any Array API library (not lists, not sparse)."""
    return array_api_compat.is_array_api_obj(x) and not is_sparse(x)


def get_namespace(*arrays):
    """The Array API namespace shared by ``arrays``.

    Sparse matrices map to the namespace of their dense library; ``None`` is
    ignored.
    """
    dense = []
    for a in arrays:
        if a is None:
            continue
        dense.append(_sparse_lib(a).empty(0) if is_sparse(a) else a)
    return array_api_compat.array_namespace(*dense)


def get_device(X):
    """The device of a dense array or of a sparse matrix's stored values."""
    if is_sparse(X):
        return array_api_compat.device(X.data)
    return array_api_compat.device(X)


def has_sparse(xp) -> bool:
    """Whether the namespace has a sparse matrix library this module drives."""
    return is_numpy_namespace(xp) or is_cupy_namespace(xp)


def has_float64(xp, device) -> bool:
    """Whether ``device`` computes in float64 (not every GPU backend does)."""
    try:
        info = xp.__array_namespace_info__()
        return "float64" in info.dtypes(device=device, kind="real floating")
    except Exception:  # a namespace without the inspection API
        return True


def accumulation_dtype(xp, device):
    """float64 where the device has it: counts stay exact up to 2**53."""
    return xp.float64 if has_float64(xp, device) else xp.float32


def result_dtype(dtype, xp, device):
    """The float dtype of parameters and scores for inputs of ``dtype``.

    float32 (and float16) inputs give float32; everything else gives float64
    where the device has it.
    """
    if dtype in (xp.float32, getattr(xp, "float16", None)):
        return xp.float32
    return accumulation_dtype(xp, device)


# --------------------------------------------------------------------------- #
# Moving arrays between namespaces and devices
# --------------------------------------------------------------------------- #
def to_numpy(x):
    """A host numpy copy (or view) of any dense array."""
    if isinstance(x, np.ndarray):
        return x
    xp = array_api_compat.array_namespace(x)
    if is_cupy_namespace(xp):
        return x.get()
    if is_torch_namespace(xp):
        return x.detach().cpu().numpy()
    return np.from_dlpack(x)


def to_namespace(x, xp, device):
    """``x`` as an array of namespace ``xp`` on ``device``."""
    if x is None:
        return None
    if is_array(x) and array_api_compat.array_namespace(x) is xp:
        if array_api_compat.device(x) == device:
            return x
        return array_api_compat.to_device(x, device)
    host = to_numpy(x) if is_array(x) else np.asarray(x)
    return xp.asarray(host, device=device)


# --------------------------------------------------------------------------- #
# Numerics that some namespaces have built in
# --------------------------------------------------------------------------- #
def logsumexp(a, *, axis, xp):
    """log(sum(exp(a))) along ``axis``, keeping the dimension."""
    if is_numpy_namespace(xp):
        from scipy.special import logsumexp as lse

        return lse(a, axis=axis, keepdims=True)
    if is_torch_namespace(xp):
        import torch

        return torch.logsumexp(a, dim=axis, keepdim=True)
    if is_cupy_namespace(xp):
        from cupyx.scipy.special import logsumexp as lse

        return lse(a, axis=axis, keepdims=True)
    # Generic form: shift by the maximum so exp never overflows.
    m = xp.max(a, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    return m + xp.log(xp.sum(xp.exp(a - m), axis=axis, keepdims=True))


def contiguous(a, *, xp):
    """``a`` laid out row-major where the library lets us say so.

    Sparse-times-dense products stream the dense operand row by row, so its
    layout decides their speed.
    """
    if is_numpy_namespace(xp):
        return np.ascontiguousarray(a)
    if is_cupy_namespace(xp):
        import cupy

        return cupy.ascontiguousarray(a)
    if is_torch_namespace(xp):
        return a.contiguous()
    return a


# --------------------------------------------------------------------------- #
# Sparse matrices
# --------------------------------------------------------------------------- #
def sparse_canonical(X):
    """CSR or CSC (matrix or array class) kept as is; other formats become CSR."""
    if X.format in ("csr", "csc"):
        return X
    return X.tocsr()


def sparse_values(X):
    """The stored values of a sparse matrix (a dense 1-D array)."""
    return X.data


def sparse_with_values(X, data):
    """A matrix with ``X``'s sparsity structure and new stored values."""
    out = X.copy()
    out.data = data
    return out


def sparse_binarize(X, threshold):
    """``X > threshold`` as a sparse matrix of ones (threshold >= 0 keeps zeros zero)."""
    out = sparse_with_values(X, (X.data > threshold).astype(X.dtype))
    out.eliminate_zeros()
    return out


def sparse_host_array(X, a):
    """A host numpy array moved to the library (numpy or cupy) of sparse ``X``."""
    return _sparse_lib(X).asarray(a)


def sparse_column_max(X):
    """Per-column maximum as a dense 1-D array, implicit zeros included."""
    lib = _sparse_lib(X)
    return lib.asarray(X.max(axis=0).toarray()).reshape(-1)


def _major_blocks(X, budget_nnz):
    """(start, stop, nnz_start, nnz_stop) over the major axis of CSR/CSC ``X``."""
    indptr = _sparse_lib(X).asarray(X.indptr)
    host_indptr = indptr.get() if hasattr(indptr, "get") else indptr
    n_major = host_indptr.shape[0] - 1
    start = 0
    while start < n_major:
        # The last major index whose nonzeros still fit the budget (at least one).
        limit = host_indptr[start] + budget_nnz
        stop = int(np.searchsorted(host_indptr, limit, side="right")) - 1
        stop = min(max(stop, start + 1), n_major)
        yield start, stop, int(host_indptr[start]), int(host_indptr[stop])
        start = stop


def sparse_class_sums(X, codes, weights, n_classes, *, power=1, dtype=None):
    """Per-class sums of the rows of sparse ``X`` (``Yᵀ·X`` without building ``Y``).

    Each stored value is scattered into bin ``code[row] * n_features + column``,
    so the work is one pass over the nonzeros whatever the number of classes,
    and the sums are accumulated in float64 (exact counts) without a float64
    copy of ``X``. Nonzeros are processed in blocks to bound the temporaries.

    Parameters
    ----------
    X : CSR or CSC matrix of shape (n_samples, n_features)
    codes : int array of shape (n_samples,)
        Class index of every row.
    weights : float array of shape (n_samples,) or None
    n_classes : int
    power : {1, 2}
        Sum the values (1) or their squares (2).
    dtype : accumulation dtype (float64 by default).

    Returns
    -------
    sums : dense array of shape (n_classes, n_features)
    """
    lib = _sparse_lib(X)
    n_samples, n_features = X.shape
    dtype = lib.float64 if dtype is None else dtype
    out = lib.zeros(n_classes * n_features, dtype=dtype)
    is_csr = X.format == "csr"
    budget = max(BLOCK_BYTES // 24, 1)
    for start, stop, lo, hi in _major_blocks(X, budget):
        if hi == lo:
            continue
        counts = lib.diff(X.indptr[start : stop + 1])
        major = lib.repeat(lib.arange(start, stop, dtype=lib.int64), counts)
        minor = X.indices[lo:hi].astype(lib.int64)
        rows, cols = (major, minor) if is_csr else (minor, major)
        values = X.data[lo:hi].astype(dtype)
        if power == 2:
            values = values * values
        if weights is not None:
            values = values * weights[rows]
        keys = codes[rows].astype(lib.int64) * n_features + cols
        out += lib.bincount(keys, weights=values, minlength=n_classes * n_features)
    return out.reshape(n_classes, n_features)


def sparse_matmul(X, W):
    """``X @ W`` for sparse ``X`` (n × d) and dense ``W`` (d × k): dense n × k."""
    out = X @ W
    return _sparse_lib(X).asarray(out)


def sparse_rows(X, start, stop):
    """Rows ``start:stop`` of a sparse matrix (CSR slicing is cheap)."""
    return X[start:stop]


def onehot_csr(index, n_columns, *, dtype):
    """A CSR matrix with one stored 1 per entry of the integer matrix ``index``.

    Row ``i`` holds ones at columns ``index[i, :]``: the one-hot encoding of a
    categorical matrix whose per-feature column offsets are already added.
    Entries ``>= n_columns`` (categories unseen in training) are dropped.
    """
    lib = np if isinstance(index, np.ndarray) else _cupy()
    sparse = sp if lib is np else _cupyx_sparse()
    n, d = index.shape
    keep = index < n_columns
    if bool(keep.all()):
        indptr = lib.arange(0, n * d + 1, d, dtype=lib.int64)
        cols = index.reshape(-1)
    else:
        indptr = lib.concatenate(
            [lib.zeros(1, dtype=lib.int64), lib.cumsum(keep.sum(axis=1))]
        )
        cols = index[keep]
    data = lib.ones(cols.shape[0], dtype=dtype)
    return sparse.csr_matrix((data, cols, indptr), shape=(n, n_columns))


def _cupy():
    import cupy

    return cupy


def sparse_onehot_nonzero(X, offsets, *, dtype):
    """One-hot encoding of the stored values of an integer-valued sparse ``X``.

    Stored value ``v`` in column ``j`` becomes a 1 at column ``offsets[j] + v``;
    implicit zeros are not encoded (callers account for category 0 from the
    row totals). A value whose column would reach the next feature's block (a
    category unseen in training) goes to the extra column ``offsets[-1] + j``,
    so the result has ``offsets[-1] + n_features`` columns and ``X.nnz``
    stored ones.
    """
    lib = _sparse_lib(X)
    sparse = sp if lib is np else _cupyx_sparse()
    X = X.tocsr()
    n_columns = int(offsets[-1])
    feature = X.indices.astype(lib.int64)
    cols = offsets[feature] + X.data.astype(lib.int64)
    cols = lib.where(cols < offsets[feature + 1], cols, n_columns + feature)
    data = lib.ones(cols.shape[0], dtype=dtype)
    shape = (X.shape[0], n_columns + X.shape[1])
    return sparse.csr_matrix((data, cols, X.indptr.copy()), shape=shape)


# --------------------------------------------------------------------------- #
# Choosing a device and moving host data to it (command line, comparisons)
# --------------------------------------------------------------------------- #
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
        return getattr(csp, f"{fmt}_matrix")(X.asformat(fmt))
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


def host_sparse(fmt, data, indices, indptr, shape):
    """A scipy.sparse CSR/CSC matrix from its arrays (files store these)."""
    if fmt not in ("csr", "csc"):
        msg = f"sparse format must be 'csr' or 'csc'; got {fmt!r}."
        raise ValueError(msg)
    return getattr(sp, f"{fmt}_matrix")((data, indices, indptr), shape=tuple(int(s) for s in shape))
