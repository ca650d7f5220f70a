"""Fitting and scoring Dask arrays: one task per row block, a tree of merges.

A Dask array (numpy or cupy blocks, dense or scipy/cupyx sparse, chunked by
rows) is fitted as ARCHITECTURE.md (design 3) says: on its worker, every row block is
validated and accumulated into statistics (classes × features) exactly as a
``partial_fit`` of a fresh clone would, and the statistics are combined by
the model's own ``_merge`` in a tree of merge tasks. Rows never leave their
worker, only statistics travel; the blocks run in parallel; the client only
finalizes the merged statistics, once.
Prediction maps the fitted model over the row blocks and returns a lazy
Dask array. The pieces the graphs are built from are in ``dask_blocks.py``;
SemiSupervisedNB's EM (one such tree per iteration) in ``dask_em.py``.

The estimators reach this module through the adapter registry
(``nbgpu/_estimator/adapters.py``): importing it registers :data:`ADAPTER`.
Dask itself is imported only when an input is a Dask array, so users who do
not use Dask never import it.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from sklearn.base import clone

from .._array.namespace import get_namespace, is_dask_array, score_dtype_name, to_numpy
from .._estimator import adapters
from .._estimator.params import validate_params
from .._estimator.scoring import check_fitted
from .._validation import check_classes, check_classes_unchanged, check_n_features, check_y, unique_labels
from .dask_blocks import (
    _frozen,
    _known_row_chunks,
    _merge_children,
    _merge_stats,
    _merge_tree,
    _row_pieces,
    _rows_only,
    _shared,
    _sizes_known,
    _split_every,
    distinct_labels,
)
from .dask_em import _DaskData


# The tasks run on the workers: module-level functions pickle by reference.
def _fit_block(template, X, y, weight, classes):
    """One row block's statistics (a fresh clone's ``partial_fit``, not finalized); None if empty."""
    if X.shape[0] == 0:
        return None
    return clone(template)._fit_batch(X, y, classes, weight, reset=True, commit=False)


def _call_method(X, model, name, empty):
    # A block of no rows (after a filter) has the empty result, which the model refuses to compute.
    return empty if X.shape[0] == 0 else getattr(model, name)(X)


def dask_fit(estimator, X, y, sample_weight, classes, *, reset):
    """Fit (``reset``) or update ``estimator`` on a Dask array; returns it.

    Nothing of the estimator changes until the merged statistics are back:
    a failing block (bad values, unknown labels) raises and leaves it as it was.
    """
    import dask

    validate_params(estimator)
    X = _rows_only(X)
    if not reset:
        check_n_features(estimator, X.shape[1])
        if classes is not None:
            check_classes_unchanged(classes, estimator.classes_)
        classes = estimator.classes_
    elif classes is None and is_dask_array(y):
        classes = check_classes(distinct_labels(y))  # on the workers
    elif classes is None:
        classes = unique_labels(check_y(y, X.shape[0]))
    else:
        classes = check_classes(classes)

    template = clone(estimator)
    blocks = X.to_delayed().ravel()
    ys = _row_pieces(y, X, "y")
    ws = _row_pieces(sample_weight, X, "sample_weight")
    fit_block = dask.delayed(_fit_block, pure=True)
    level = [fit_block(template, xb, yb, wb, classes) for xb, yb, wb in zip(blocks, ys, ws)]
    merge = dask.delayed(_merge_children, pure=True)
    (stats,) = dask.compute(_merge_tree(level, merge, template, _split_every(classes.shape[0], X.shape[1])))
    if stats is None:
        msg = f"`X` is empty: found a Dask array with 0 rows (shape={X.shape}) while a minimum of 1 is required."
        raise ValueError(msg)
    if not reset:
        stats = _merge_stats(estimator, estimator._stats, stats)
    score_dtype = score_dtype_name(X.dtype, xp=np)
    names = None if reset else getattr(estimator, "feature_names_in_", None)
    return estimator._become_fitted(stats, classes, n_features=X.shape[1], feature_names=names, score_dtype=score_dtype)


def dask_map(estimator, X, name):
    """``estimator.<name>(X)`` for every row block of Dask array ``X``: a lazy Dask array."""
    check_fitted(estimator)
    X = _rows_only(X)
    check_n_features(estimator, X.shape[1])
    xp = get_namespace(X._meta)
    if name == "predict":
        # Numeric labels come back in the blocks' namespace (string labels on the host).
        labels = to_numpy(estimator.classes_)
        meta = labels[:0] if labels.dtype.kind not in "biuf" else xp.asarray(labels[:0])
        kwargs = {"drop_axis": 1}
    else:
        k = estimator.classes_.shape[0]
        meta = xp.empty((0, k), dtype=getattr(np, score_dtype_name(X.dtype, xp=np)))
        kwargs = {"chunks": (X.chunks[0], (k,))}
    # The model of this call, whenever and wherever the result is computed.
    return X.map_blocks(_call_method, _shared(_frozen(estimator)), name, empty=meta, meta=meta, **kwargs)


def dask_score(estimator, X, y, sample_weight):
    """Mean accuracy of ``predict(X)`` against ``y`` (weighted), computed by Dask."""
    import dask
    import dask.array as da

    pred = dask_map(estimator, X, "predict")
    truth, weight = (_as_dask_rows(v, pred, name) for v, name in ((y, "y"), (sample_weight, "sample_weight")))
    # Compared on the host, block by block: the predicted labels of device
    # blocks are device arrays, the labels may be anything (host arrays,
    # strings), and a device library refuses to compare with host arrays.
    hit = da.map_blocks(_hits, pred, truth, dtype=np.float64, meta=np.empty((0,), dtype=np.float64))
    if weight is None:
        return float(hit.mean().compute())
    weight = weight.map_blocks(to_numpy, dtype=weight.dtype, meta=np.empty((0,), dtype=weight.dtype))
    # Σ w·hit / Σ w, not da.average: that compares the shapes, unknown (nan) after a boolean filter.
    hits, total = dask.compute((hit * weight).sum(), weight.sum())
    return float(hits / total)


def _hits(pred, truth):
    """1.0 where a predicted label equals the true one (host float64)."""
    return (to_numpy(pred) == to_numpy(truth)).astype(np.float64)


def _as_dask_rows(values, pred, name):
    """Labels or weights as a Dask array with the row blocks of ``pred``."""
    import dask.array as da

    if values is None:
        return None
    if not is_dask_array(values):
        chunks = _known_row_chunks(pred, "X")
        values = np.asarray(to_numpy(values) if hasattr(values, "shape") else values)
        values = da.from_array(values, chunks=(chunks,)) if values.shape == pred.shape else values
    if values.shape != pred.shape and _sizes_known(pred.shape + values.shape):
        msg = f"`{name}` has shape {values.shape} but X has {pred.shape[0]} rows; they must match."
        raise ValueError(msg)
    if _sizes_known(pred.chunks[0] + values.chunks[0]):
        values = values.rechunk((pred.chunks[0],))
    return values


# What the estimators call for a Dask array (see ``_estimator/adapters.py``).
ADAPTER = adapters.register(
    SimpleNamespace(
        accepts=is_dask_array,
        fit=dask_fit,
        map=dask_map,
        score=dask_score,
        em_data=_DaskData,
        compute=lambda values: values.compute(),
    )
)
