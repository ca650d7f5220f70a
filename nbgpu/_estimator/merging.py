"""Merging fitted models: their statistics merged, then finalized once.

``a.merge(b)`` is the model fitted on the union of the (disjoint) data of
``a`` and ``b``: the statistics are merged by the model's own ``_merge``
(the same arithmetic as ``partial_fit``) and the result becomes fitted
through ``_become_fitted``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, clone

from .._array.namespace import first_array, get_device, get_namespace, is_array, to_namespace_tree, to_numpy


def host_value(value):
    """Parameter values (arrays of any namespace) as numpy."""
    return to_numpy(value) if is_array(value) else value


def _same_param(a, b):
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):  # nested parts
        if type(a) is not type(b):
            return False
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return all(_same_param(pa[k], pb[k]) for k in pa)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_param(u, v) for u, v in zip(a, b))
    if is_array(a) or is_array(b) or isinstance(a, (list, tuple, np.ndarray)):
        a, b = np.asarray(host_value(a)), np.asarray(host_value(b))
        return a.shape == b.shape and bool(np.all(a == b))
    return a == b


def merge_models(a, b):
    """``a.merge(b)``: see :meth:`nbgpu._estimator.base._BaseNB.merge`."""
    a._check_is_fitted()
    if type(b) is not type(a):
        msg = f"`other` must be a {type(a).__name__} to merge with one; got {type(b).__name__}."
        raise TypeError(msg)
    b._check_is_fitted()
    pa, pb = a.get_params(deep=False), b.get_params(deep=False)
    differ = [f"{k}={pa[k]!r} vs {pb[k]!r}" for k in pa if not _same_param(pa[k], pb[k])]
    if differ:
        msg = f"`other` must have the same parameters to merge; they differ in {', '.join(differ)}."
        raise ValueError(msg)
    if a.n_features_in_ != b.n_features_in_:
        msg = f"`other` was fitted on {b.n_features_in_} features, this model on {a.n_features_in_}; they must match."
        raise ValueError(msg)
    ca, cb = to_numpy(a.classes_), to_numpy(b.classes_)
    if ca.shape != cb.shape or not np.all(ca == cb):
        msg = (
            f"`other` has classes {cb.tolist()[:20]} but this model has {ca.tolist()[:20]}; "
            "fit both with the same `classes` (partial_fit(..., classes=...)) to merge them."
        )
        raise ValueError(msg)
    na, nb = getattr(a, "feature_names_in_", None), getattr(b, "feature_names_in_", None)
    if (na is None) != (nb is None) or (na is not None and not np.array_equal(na, nb)):
        msg = "`other` was fitted with different feature names than this model; they must match."
        raise ValueError(msg)
    like = first_array(a._stats)
    xp, device = get_namespace(like), get_device(like)
    stats = a._merge(to_namespace_tree(a._stats, xp, device), to_namespace_tree(b._stats, xp, device), xp=xp)
    return clone(a)._become_fitted(
        stats, a.classes_, n_features=a.n_features_in_, feature_names=na, score_dtype=a._fit_dtype_
    )
