"""SemiSupervisedNB on Dask arrays: every EM iteration is one tree of merges.

:class:`_DaskData` has the interface of ``_InMemoryData`` (``_models/semi_supervised.py``):
every row block is validated, split and scored on its worker by the in-memory functions,
the per-block results merge in a tree (the model's ``_merge``, sums added) and the client
finalizes the next model. The first pass gives the labeled rows' statistics (fixed for
the fit), the total weight and the number of unlabeled rows; every later pass gives one
model's term of ``ℓ`` and the soft statistics of the next M-step at once. So a fit costs
n_iter_ + 2 passes over X, which is not persisted (persist it yourself when costly).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .._array.namespace import is_dask_array, score_dtype_name
from .._models.semi_supervised import _em_terms, _labeled_classes, _labeled_statistics, _split_rows
from .._validation import check_y
from .dask_blocks import (
    _check_2d,
    _known_row_chunks,
    _merge_children,
    _merge_tree,
    _row_pieces,
    _shared,
    _split_every,
    distinct_labels,
)


# The tasks run on the workers: module-level functions pickle by reference.
def _start_block(template, X, y, weight, classes):
    """``(statistics of the labeled rows or None, Σ weights, unlabeled rows)`` of one block."""
    if X.shape[0] == 0:
        return None, 0.0, 0
    rows = _split_rows(template, X, y, weight, whole=False)
    n_unlabeled = 0 if rows.X_u is None else rows.X_u.shape[0]
    return _labeled_statistics(template, rows, classes), rows.total_weight, n_unlabeled


def _em_block(template, X, y, weight, classes, model, lam, statistics):
    """``(soft statistics of the unlabeled rows or None, log-likelihood term)`` of one block."""
    if X.shape[0] == 0:
        return None, 0.0
    rows = _split_rows(template, X, y, weight, whole=False)
    total, soft = _em_terms(template, model, rows, classes, lam)
    return (soft() if statistics else None), total


def _merge_sums(template, children):
    """Children ``(statistics or None, number, ...)`` as one: statistics merged, numbers added."""
    stats = _merge_children(template, [child[0] for child in children])
    return (stats, *(sum(values) for values in list(zip(*children))[1:]))


def _check_rows_only(X):
    """A block must hold whole rows: rechunking would cost a shuffle per pass."""
    _check_2d(X)
    if X.numblocks[1] != 1:
        msg = (
            f"`X` must be chunked by rows only (one chunk along the columns) for SemiSupervisedNB; "
            f"got {X.numblocks[1]} column chunks {X.chunks[1]}. EM reads X once per iteration: "
            "rechunk it once, e.g. X = X.rechunk({1: -1}).persist()."
        )
        raise ValueError(msg)
    if X.shape[0] == 0:
        msg = f"`X` is empty: found a Dask array with 0 rows (shape={X.shape}) while a minimum of 1 is required."
        raise ValueError(msg)


class _DaskData:
    """What ``SemiSupervisedNB`` reads of a Dask ``X`` (see the module docstring)."""

    feature_names = None

    def __init__(self, estimator, X, y, sample_weight):
        _check_rows_only(X)
        if not is_dask_array(y):
            _known_row_chunks(X, "X")
            y = check_y(y, X.shape[0])
        self._blocks = list(X.to_delayed().ravel())
        self._ys = _row_pieces(y, X, "y")
        self._ws = _row_pieces(sample_weight, X, "sample_weight")
        if is_dask_array(y):
            y = distinct_labels(y)  # a pass over y only
        self.classes = _labeled_classes(y)
        self._template = clone(estimator)
        self._fan_in = _split_every(self.classes.shape[0], X.shape[1])
        self.n_features = X.shape[1]
        self.score_dtype = score_dtype_name(X.dtype, xp=np)
        self.labeled, self.total_weight, n_unlabeled = self._tree(_start_block)
        self.has_unlabeled = n_unlabeled > 0

    def _tree(self, task, *args):
        """One compute: ``task`` on every block, the results merged in a tree."""
        import dask

        block = dask.delayed(task, pure=True)
        pieces = zip(self._blocks, self._ys, self._ws)
        level = [block(self._template, xb, yb, wb, self.classes, *args) for xb, yb, wb in pieces]
        merge = dask.delayed(_merge_sums, pure=True)
        (result,) = dask.compute(_merge_tree(level, merge, self._template, self._fan_in))
        return result

    def em_pass(self, model, lam, *, statistics):
        # The statistics are computed in this pass when they may be needed (a second pass would cost more).
        soft, total = self._tree(_em_block, _shared(model), lam, statistics)
        return total, lambda: soft
