"""Rows of any input: by position (the one row-indexing helper above the kernels),
and sums along them."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .namespace import get_device, get_namespace, is_array, is_sparse, sparse_lib
from .sparse import sparse_matmul, sparse_with_values


def take_rows(X, index):
    """Rows ``index`` (host integer array) of ``X``: an Array API array (in its
    namespace, on its device), a sparse matrix, a DataFrame or a list."""
    if is_array(X) and not isinstance(X, np.ndarray):
        xp = get_namespace(X)
        return xp.take(X, xp.asarray(index, device=get_device(X)), axis=0)
    if is_sparse(X) and not sp.issparse(X):  # a device matrix takes a device index (cupyx refuses host arrays)
        return X[sparse_lib(X).asarray(index)]
    if isinstance(X, np.ndarray) or sp.issparse(X):
        return X[index]
    from sklearn.utils import _safe_indexing  # DataFrames and lists, as scikit-learn's splitters take them

    return _safe_indexing(X, index)


def row_sums_of(X, fn, *, xp, dtype):
    """``Σ_j fn(x_ij)`` of every row (n × 1) for an elementwise ``fn(a, xp)``
    with ``fn(0) = 0``: of a sparse ``X`` from its stored values (it stays sparse)."""
    if not is_sparse(X):
        return xp.sum(fn(X, xp), axis=1, keepdims=True)
    values = X.data
    mapped = sparse_with_values(X, fn(values, get_namespace(values)))
    return sparse_matmul(mapped, xp.ones((X.shape[1], 1), dtype=dtype, device=get_device(values)))
