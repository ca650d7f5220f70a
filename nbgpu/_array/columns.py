"""Columns of any input, dense or sparse: a selection of them, and their maxima."""

from __future__ import annotations

import numpy as np

from .namespace import is_sparse, to_numpy
from .sparse import sparse_column_max, sparse_columns


def select_columns(X, index, *, xp):
    """Columns ``index`` of ``X``: a view for a contiguous range, sparse stays sparse."""
    index = to_numpy(index)  # host metadata, even after to_device moved it
    if is_sparse(X):
        return sparse_columns(X, index)
    if np.array_equal(index, np.arange(index[0], index[0] + index.shape[0])):
        return X[:, int(index[0]) : int(index[0]) + index.shape[0]]
    return xp.take(X, xp.asarray(index, device=X.device), axis=1)


def column_max(X, rows=None, *, xp):
    """The maximum of every column over the rows marked True in ``rows`` (a
    boolean vector, or None for all), the others counted as zeros; a sparse
    ``X``'s implicit zeros included."""
    if is_sparse(X):
        return sparse_column_max(X, rows)
    return xp.max(X if rows is None else xp.where(rows[:, None], X, xp.zeros_like(X)), axis=0)
