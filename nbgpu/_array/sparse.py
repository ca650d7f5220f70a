"""Sparse matrices: ``scipy.sparse`` on the host, ``cupyx.scipy.sparse`` on a GPU.

Sparse matrices are not in the Array API standard, so every operation on
them lives here; model code calls these and never a sparse library.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import blocks
from .namespace import (
    device_library,
    get_namespace,
    has_sparse,
    on_host,
    sparse_lib,
    to_numpy,
)
from .threads import n_threads, parallel_map


def _on_device(X):
    """Whether sparse (or dense) ``X`` lives on a device (cupyx, or its stand-in)."""
    return not on_host(get_namespace(X))


def _library(X):
    """The device library (cupy and cupyx) of a device array or sparse matrix."""
    return device_library(get_namespace(X))


def device_compressed(X_like, fmt, data, indices, indptr, shape, *, canonical):
    """A device CSR/CSC matrix from its arrays, without a synchronisation.

    cupyx's constructor from ``(data, indices, indptr)`` reads the ends of
    ``indptr`` back to the host, and the contents of int64 index arrays: one
    to five synchronisations per matrix. nbgpu builds its matrices from
    arrays it made consistent itself, so it makes an empty matrix of the
    shape and hands it the arrays (public attributes, as in scipy).
    ``indices`` and ``indptr`` share one integer dtype, int32 where the
    values fit (what cupyx's constructor would choose, and what cuSPARSE's
    fast paths take). ``canonical`` (True, False or None for "unknown") is
    recorded as the format flag, so a product does not check it again.
    ``X_like`` is any array or matrix of the same device library.
    """
    sparse = _library(X_like).cupyx.scipy.sparse
    out = getattr(sparse, f"{fmt}_matrix")(tuple(int(s) for s in shape), dtype=data.dtype)
    out.data, out.indices, out.indptr = data, indices, indptr
    if canonical is not None:
        out.has_canonical_format = canonical
    return out


def index_dtype(lib, *bounds):
    """int32 when every value below ``max(bounds)`` fits, else int64."""
    return lib.int32 if max(bounds) < 2**31 else lib.int64


def sparse_canonical(X):
    """CSR or CSC (matrix or array class) kept as is; other formats become CSR.

    Duplicate entries are summed (in a copy: the input is left alone), so
    every stored value is one matrix element; binarizing, squaring and
    one-hot encoding act on elements, not on the parts of a sum.
    """
    if X.format not in ("csr", "csc"):
        return X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def sparse_values(X):
    """The stored values of a sparse matrix (a dense 1-D array)."""
    return X.data


def sparse_with_values(X, data):
    """A matrix with ``X``'s sparsity structure and new stored values."""
    if _on_device(X):  # shares X's index arrays
        return device_compressed(X, X.format, data, X.indices, X.indptr, X.shape, canonical=X.has_canonical_format)
    out = X.copy()
    out.data = data
    return out


def sparse_binarize(X, threshold):
    """``X > threshold`` as a sparse matrix of ones (threshold >= 0 keeps zeros zero).

    On a device the values that drop out stay stored, as zeros: they add
    nothing to sums or products, and compacting them would read their
    number back (a synchronisation).
    """
    keep = X.data > threshold
    if _on_device(X):
        return sparse_with_values(X, keep.astype(X.dtype))
    if bool(keep.all()):
        # Nothing drops out (counts with threshold 0): share X's index arrays.
        return type(X)((keep.astype(X.dtype), X.indices, X.indptr), shape=X.shape, copy=False)
    out = sparse_with_values(X, keep.astype(X.dtype))
    out.eliminate_zeros()
    return out


def sparse_host_array(X, a):
    """A host numpy array moved to the library (numpy or cupy) of sparse ``X``."""
    return sparse_lib(X).asarray(a)


def sparse_column_max(X, rows=None):
    """Per-column maximum as a dense 1-D array, implicit zeros included.

    ``rows`` (a boolean array, one per row) restricts it to the rows marked
    True; the others count as zeros.
    """
    lib = sparse_lib(X)
    if rows is not None and _on_device(X):
        # The stored values of the other rows set to zero (no diagonal product).
        row = stored_rows(X) if X.format == "csr" else X.indices
        X = sparse_with_values(X, lib.where(rows[row], X.data, lib.zeros(1, dtype=X.dtype)))
    elif rows is not None:
        X = sp.diags(rows.astype(X.dtype)) @ X
    return lib.asarray(X.max(axis=0).toarray()).reshape(-1)


def stored_rows(X, lo=0, hi=None):
    """Row of every stored value ``lo:hi`` of a CSR matrix (column of a CSC
    one): a search in ``indptr``, so no value is read back to the host."""
    lib = sparse_lib(X)
    hi = X.nnz if hi is None else hi
    position = lib.arange(lo, hi, dtype=index_dtype(lib, X.nnz))
    return lib.searchsorted(X.indptr[1:], position, side="right")


def sparse_matmul(X, W):
    """``X @ W`` for sparse ``X`` (n × d) and dense ``W`` (d × k): dense n × k.

    On the CPU a large CSR ``X`` is cut into row ranges of equal nonzeros,
    multiplied on all cores (scipy's kernel releases the GIL) without
    copying ``X``.
    """
    lib = sparse_lib(X)
    threads = n_threads()
    if lib is not np or X.format != "csr" or threads == 1 or X.nnz < blocks.PARALLEL_NNZ:
        return lib.asarray(X @ W)
    out_dtype = np.result_type(X.dtype, W.dtype)
    out = np.empty((X.shape[0], W.shape[1]), dtype=out_dtype)
    cuts = blocks.even_nnz_splits(X.indptr, threads)

    def part(bounds):
        a, b = bounds
        lo, hi = X.indptr[a], X.indptr[b]
        view = sp.csr_matrix(
            (X.data[lo:hi], X.indices[lo:hi], X.indptr[a : b + 1] - lo), shape=(b - a, X.shape[1])
        )
        out[a:b] = view @ W

    parallel_map(part, zip(cuts[:-1], cuts[1:]))
    return out


def sparse_rows(X, start, stop):
    """Rows ``start:stop`` of a sparse matrix (CSR slicing is cheap)."""
    return X[start:stop]


def row_slicer(X):
    """``f(start, stop)`` giving rows ``start:stop`` of ``X`` (dense or sparse).

    A device matrix is sliced from one host copy of its ``indptr`` (one
    synchronisation for all slices; cupyx's own row slice reads two values
    back per slice, and a CSC matrix is turned into CSR once).
    """
    if not _on_device(X) or not hasattr(X, "format"):
        return lambda start, stop: X[start:stop, ...]
    canonical = X.has_canonical_format
    X = X.tocsr()
    indptr = to_numpy(X.indptr)

    def rows(start, stop):
        lo, hi = int(indptr[start]), int(indptr[stop])
        return device_compressed(
            X, "csr", X.data[lo:hi], X.indices[lo:hi], X.indptr[start : stop + 1] - X.indptr.dtype.type(lo),
            (stop - start, X.shape[1]), canonical=canonical,
        )

    return rows


def sparse_columns(X, index):
    """Columns ``index`` (host int array) of a sparse matrix, still sparse."""
    if index.shape[0] and np.array_equal(index, np.arange(index[0], index[0] + index.shape[0])):
        return X[:, int(index[0]) : int(index[0]) + index.shape[0]]
    return X[:, sparse_lib(X).asarray(index)]


def gathered_row_sums(table, index, *, xp):
    """``Σ_j table[index[:, j], :]`` for every row of the integer matrix ``index``.

    That is ``OneHot(index) @ table``: on numpy and cupy a sparse product
    with one stored 1 per entry (scipy's kernel adds each gathered row of
    ``table`` in place, with no n × d × k temporary); elsewhere a gather and
    a sum over the middle axis.
    """
    n, d = index.shape
    if on_host(xp):
        flat = np.reshape(index, (-1,))
        indptr = np.arange(0, n * d + 1, d, dtype=flat.dtype)
        ones = np.ones(n * d, dtype=table.dtype)
        return sp.csr_matrix((ones, flat, indptr), shape=(n, table.shape[0])) @ table
    if has_sparse(xp):
        # Indices increase along every row (callers' promise): canonical,
        # so the product checks nothing; built without a synchronisation.
        lib = device_library(xp).cupy
        idx = index_dtype(lib, n * d + 1, table.shape[0])
        flat = xp.astype(xp.reshape(index, (-1,)), idx, copy=False)
        indptr = lib.arange(0, n * d + 1, d, dtype=idx)
        ones = lib.ones(n * d, dtype=table.dtype)
        return device_compressed(index, "csr", ones, flat, indptr, (n, table.shape[0]), canonical=True) @ table
    rows = xp.take(table, xp.astype(xp.reshape(index, (-1,)), xp.int64), axis=0)
    return xp.sum(xp.reshape(rows, (n, d, -1)), axis=1)


def sparse_onehot_nonzero(X, offsets, *, n_columns, dtype):
    """One-hot encoding of the stored values of an integer-valued sparse ``X``.

    Feature ``j`` owns columns ``offsets[j] + j`` to ``offsets[j + 1] + j``
    (see :func:`onehot_nonzero_columns`): its categories, then one column
    for the categories unseen in training. Stored value ``v`` in column ``j``
    becomes a 1 at column ``offsets[j] + j + min(v, n_j)``, with ``n_j`` the
    feature's number of categories; implicit zeros are not encoded (callers
    account for category 0 from the row totals). The result has
    ``offsets[-1] + n_features`` columns and ``X.nnz`` stored ones, in
    increasing columns along every row (canonical when ``X`` is).
    ``offsets`` is an int64 array of ``X``'s library; ``n_columns`` its last
    value, given by the caller (on a device, reading it is a synchronisation).
    """
    lib = sparse_lib(X)
    canonical = X.has_canonical_format
    X = X.tocsr()
    start = offsets[:-1] + lib.arange(X.shape[1], dtype=offsets.dtype)
    feature = X.indices
    last = offsets[feature + 1] - offsets[feature]  # the feature's unseen column
    cols = start[feature] + lib.minimum(X.data.astype(offsets.dtype), last)
    data = lib.ones(cols.shape[0], dtype=dtype)
    shape = (X.shape[0], n_columns + X.shape[1])
    if lib is np:
        return sp.csr_matrix((data, cols, X.indptr.copy()), shape=shape)
    idx = X.indptr.dtype if index_dtype(lib, *shape, X.nnz + 1) == lib.int32 else lib.int64
    return device_compressed(
        X, "csr", data, cols.astype(idx), X.indptr.astype(idx), shape, canonical=canonical
    )


def onehot_nonzero_columns(n_categories):
    """Host int64 arrays ``(seen, unseen)``: the columns of
    :func:`sparse_onehot_nonzero`'s result that hold each category of each
    feature (in the flat order of ``offsets``), and each feature's column for
    unseen categories."""
    n_categories = np.asarray(n_categories, dtype=np.int64)
    feature = np.repeat(np.arange(n_categories.shape[0]), n_categories)
    seen = np.arange(feature.shape[0]) + feature
    unseen = np.cumsum(n_categories) + np.arange(n_categories.shape[0])
    return seen, unseen


def structure_problem(fmt, data, indices, indptr, shape):
    """What is wrong with the index structure of a CSR/CSC matrix, or None.

    The compiled kernels of scipy and cupyx trust ``indptr`` and
    ``indices``: an index out of range reads or writes out of bounds, a
    decreasing ``indptr`` corrupts memory. Checked in one vectorised pass
    each (lengths, ``indptr`` from 0 to nnz and non-decreasing, every index
    in ``[0, n_minor)``), on the arrays' own library.
    """
    if fmt not in ("csr", "csc"):
        return f"sparse format must be 'csr' or 'csc'; got {fmt!r}"
    try:
        n_rows, n_cols = (int(s) for s in shape)
    except (TypeError, ValueError):
        return f"shape must be two integers; got {shape!r}"
    if n_rows < 0 or n_cols < 0:
        return f"shape must be non-negative; got {(n_rows, n_cols)}"
    n_major, n_minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
    for name, a in (("data", data), ("indices", indices), ("indptr", indptr)):
        if getattr(a, "ndim", None) != 1:
            return f"{name} must be a 1-D array; got {type(a).__name__} of shape {getattr(a, 'shape', None)}"
    for name, a in (("indices", indices), ("indptr", indptr)):
        if a.dtype.kind not in "iu":
            return f"{name} must hold integers; got dtype {a.dtype}"
    if indptr.shape[0] != n_major + 1:
        return f"indptr has {indptr.shape[0]} entries; a {fmt.upper()} matrix of shape {(n_rows, n_cols)} needs {n_major + 1}"
    nnz = indices.shape[0]
    if data.shape[0] != nnz:
        return f"data has {data.shape[0]} values but indices has {nnz}"
    lib = np if on_host(get_namespace(indptr)) else _library(indptr).cupy
    # One synchronisation on a device: every check reduced to a few scalars.
    first, last = indptr[0], indptr[-1]
    falls = lib.any(lib.diff(indptr) < 0) if n_major else lib.asarray(False)
    low = lib.min(indices) if nnz else lib.asarray(0)
    high = lib.max(indices) if nnz else lib.asarray(0)
    first, last, falls, low, high = (to_numpy(lib.asarray(v)).item() for v in (first, last, falls, low, high))
    if first != 0 or last != nnz:
        return f"indptr must run from 0 to the number of stored values ({nnz}); it runs from {first} to {last}"
    if falls:
        return "indptr must be non-decreasing; it decreases somewhere"
    if nnz and (low < 0 or high >= n_minor):
        axis = "column" if fmt == "csr" else "row"
        return f"{axis} indices must lie in [0, {n_minor}); they range from {low} to {high}"
    return None


def host_sparse(fmt, data, indices, indptr, shape):
    """A scipy.sparse CSR/CSC matrix from its arrays (files store these),
    after :func:`structure_problem` found nothing wrong (else a ValueError)."""
    problem = structure_problem(fmt, data, indices, indptr, shape)
    if problem is not None:
        raise ValueError(problem)
    return getattr(sp, f"{fmt}_matrix")((data, indices, indptr), shape=tuple(int(s) for s in shape))

