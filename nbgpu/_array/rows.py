"""Rows of any input by position: the one row-indexing helper above the kernels."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .namespace import get_device, get_namespace, is_array, is_sparse, sparse_lib


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
