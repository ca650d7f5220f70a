"""Merging fitted models: their statistics merged, then finalized once.

``a.merge(b)`` is the model fitted on the union of the (disjoint) data of
``a`` and ``b``: the statistics are merged by the model's own ``_merge``
(the same arithmetic as ``partial_fit``) and the result becomes fitted
through ``_become_fitted``. Models that saw different classes (data split by
time or by site) merge into the union of their classes: a class one model
never saw has zero statistics there.
"""

from __future__ import annotations

import numpy as np

from .._array.namespace import first_array, get_device, get_namespace, is_array, to_namespace, to_namespace_tree, to_numpy


def host_value(value):
    """Parameter values (arrays of any namespace) as numpy."""
    return to_numpy(value) if is_array(value) else value


def _same_param(a, b):
    if hasattr(a, "get_params") or hasattr(b, "get_params"):  # nested parts (estimators)
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
    pa, pb = a._params(), b._params()
    differ = [f"{k}={pa[k]!r} vs {pb[k]!r}" for k in pa if not _same_param(pa[k], pb[k])]
    if differ:
        msg = f"`other` must have the same parameters to merge; they differ in {', '.join(differ)}."
        raise ValueError(msg)
    if a.n_features_in_ != b.n_features_in_:
        msg = f"`other` was fitted on {b.n_features_in_} features, this model on {a.n_features_in_}; they must match."
        raise ValueError(msg)
    na, nb = getattr(a, "feature_names_in_", None), getattr(b, "feature_names_in_", None)
    if (na is None) != (nb is None) or (na is not None and not np.array_equal(na, nb)):
        msg = "`other` was fitted with different feature names than this model; they must match."
        raise ValueError(msg)
    like = first_array(a._stats)
    xp, device = get_namespace(like), get_device(like)
    stats_a, stats_b = to_namespace_tree(a._stats, xp, device), to_namespace_tree(b._stats, xp, device)
    classes = a.classes_
    ca, cb = to_numpy(a.classes_), to_numpy(b.classes_)
    if ca.shape != cb.shape or not np.all(ca == cb):
        union = _class_union(a, ca, cb)
        stats_a = a._statistics_for_classes(stats_a, np.searchsorted(union, ca), union.shape[0], xp=xp)
        stats_b = a._statistics_for_classes(stats_b, np.searchsorted(union, cb), union.shape[0], xp=xp)
        classes = union if isinstance(a.classes_, np.ndarray) else to_namespace(union, get_namespace(a.classes_), get_device(a.classes_))
    stats = a._merge(stats_a, stats_b, xp=xp)
    return a._unfitted()._become_fitted(stats, classes, n_features=a.n_features_in_, feature_names=na, score_dtype=a._fit_dtype_, lazy=True)


# Parameters with one entry per class: fixed for each model's own classes.
_PER_CLASS_PARAMETERS = ("loss_matrix", "class_prior", "priors")


def _class_union(model, ca, cb):
    """The sorted union of two models' classes (host), when they can be merged."""
    if ca.dtype.kind != cb.dtype.kind and not (ca.dtype.kind in "iub" and cb.dtype.kind in "iub"):
        msg = f"`other` has labels of dtype {cb.dtype} but this model has {ca.dtype}; they cannot be merged."
        raise ValueError(msg)
    fixed = sorted(
        name
        for name, value in (model.get_params(deep=True) if hasattr(model, "get_params") else model._params()).items()
        if name.rpartition("__")[2] in _PER_CLASS_PARAMETERS and value is not None
    )
    if fixed:
        msg = (
            f"`other` has classes {cb.tolist()[:20]} but this model has {ca.tolist()[:20]}, and "
            f"{', '.join(fixed)} has one entry per class of each: merging models of different "
            "classes needs them unset (set them on the merged model)."
        )
        raise ValueError(msg)
    return np.union1d(ca, cb)
