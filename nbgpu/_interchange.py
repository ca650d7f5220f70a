"""Merging fitted models, and conversion to and from scikit-learn.

Both rest on the statistics every model keeps in ``_stats`` (DESIGN.md §1):
merging two models is ``_merge`` of their statistics then ``_finalize``;
converting to scikit-learn is ``_finalize`` on the host in float64 and a copy
of the attributes scikit-learn reads; converting back rebuilds ``_stats``
from scikit-learn's attributes, so the result can go on with ``partial_fit``.
"""

from __future__ import annotations

import numpy as np
from sklearn import naive_bayes as sk
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ._backend import get_device, get_namespace, is_array, result_dtype, to_numpy
from ._base import to_namespace_tree
from ._categorical import CategoricalNB
from ._discrete import BernoulliNB, ComplementNB, MultinomialNB
from ._gaussian import GaussianNB


# --------------------------------------------------------------------------- #
# scikit-learn attributes -> nbgpu statistics
# --------------------------------------------------------------------------- #
def _gaussian_stats(est):
    count = np.asarray(est.class_count_, dtype=np.float64)
    mean = np.asarray(est.theta_, dtype=np.float64)
    m2 = (np.asarray(est.var_, dtype=np.float64) - est.epsilon_) * count[:, None]
    # scikit-learn keeps no moments of all rows: pool the classes (exact for
    # an unweighted fit), then scale so that var_smoothing reproduces its
    # epsilon_ exactly (it may come from a first partial_fit batch only).
    n = count.sum()
    mean_all = count @ mean / n
    m2_all = m2.sum(axis=0) + (count[:, None] * (mean - mean_all) ** 2).sum(axis=0)
    implied = est.var_smoothing * np.max(m2_all / n)
    if implied > 0 and est.epsilon_ > 0:
        m2_all = m2_all * (est.epsilon_ / implied)
    return {
        "class_count": count,
        "per_class": (count[:, None], mean, m2),
        "total": (np.asarray([n]), mean_all, m2_all),
    }


def _count_stats(est):
    return {
        "class_count": np.asarray(est.class_count_, dtype=np.float64),
        "feature_count": np.asarray(est.feature_count_, dtype=np.float64),
    }


def _categorical_stats(est):
    return {
        "class_count": np.asarray(est.class_count_, dtype=np.float64),
        "counts": np.concatenate([np.asarray(c, dtype=np.float64) for c in est.category_count_], axis=1),
        "n_categories": np.asarray(est.n_categories_, dtype=np.int64),
    }


_COUNT_ATTRS = ("class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_")

# nbgpu class -> (scikit-learn class, its fitted attributes, statistics builder)
_COUNTERPARTS = {
    GaussianNB: (sk.GaussianNB, ("class_count_", "class_prior_", "theta_", "var_", "epsilon_"), _gaussian_stats),
    MultinomialNB: (sk.MultinomialNB, _COUNT_ATTRS, _count_stats),
    ComplementNB: (sk.ComplementNB, (*_COUNT_ATTRS, "feature_all_"), _count_stats),
    BernoulliNB: (sk.BernoulliNB, _COUNT_ATTRS, _count_stats),
    CategoricalNB: (
        sk.CategoricalNB,
        ("class_count_", "class_log_prior_", "category_count_", "feature_log_prob_", "n_categories_"),
        _categorical_stats,
    ),
}


def _counterpart(cls):
    for base in cls.__mro__:
        if base in _COUNTERPARTS:
            return _COUNTERPARTS[base]
    names = ", ".join(c.__name__ for c in _COUNTERPARTS)
    msg = f"{cls.__name__} has no scikit-learn counterpart; conversion exists for {names}."
    raise TypeError(msg)


def _host(value):
    """Parameter values (arrays of any namespace) as numpy for scikit-learn."""
    return to_numpy(value) if is_array(value) else value


def _refit_attributes(est, stats, *, xp, dtype):
    """A fitted clone of ``est`` (same labels and features) whose attributes are finalized from ``stats``."""
    new = clone(est)
    features = getattr(est, "feature_names_in_", None)
    new._become_fitted(stats, est.classes_, n_features=est.n_features_in_, feature_names=features, xp=xp, dtype=dtype)
    return new


def first_array(tree):
    if is_array(tree) and not (isinstance(tree, np.ndarray) and tree.dtype.kind not in "biuf"):
        return tree
    values = tree.values() if isinstance(tree, dict) else tree if isinstance(tree, (tuple, list)) else ()
    for v in values:
        found = first_array(v)
        if found is not None:
            return found
    return None


# --------------------------------------------------------------------------- #
# The public operations
# --------------------------------------------------------------------------- #
def _same_param(a, b):
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):  # nested parts
        if type(a) is not type(b):
            return False
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return all(_same_param(pa[k], pb[k]) for k in pa)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_param(u, v) for u, v in zip(a, b))
    if is_array(a) or is_array(b) or isinstance(a, (list, tuple, np.ndarray)):
        a, b = np.asarray(_host(a)), np.asarray(_host(b))
        return a.shape == b.shape and bool(np.all(a == b))
    return a == b


def merge_models(a, b):
    """``a.merge(b)``: see :meth:`nbgpu._base._BaseNB.merge`."""
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
    return refit(a, stats)


def refit(est, stats):
    """A new fitted copy of ``est`` whose attributes are finalized from ``stats``.

    In the namespace and on the device of ``stats``, with the score dtype of ``est``.
    """
    like = first_array(stats)
    xp, device = get_namespace(like), get_device(like)
    dtype = xp.float32 if getattr(est, "_fit_dtype_", "float64") == "float32" else result_dtype(xp.float64, xp, device)
    return _refit_attributes(est, stats, xp=xp, dtype=dtype)


def to_sklearn(est):
    """``est.to_sklearn()``: see :meth:`nbgpu._base._BaseNB.to_sklearn`."""
    sk_cls, attributes, _ = _counterpart(type(est))
    est._check_is_fitted()
    if getattr(est, "loss_matrix", None) is not None:
        msg = (
            "`loss_matrix` has no scikit-learn counterpart (its predict returns the most "
            "probable class); convert est.set_params(loss_matrix=None) and apply the loss "
            "to predict_proba(X) @ loss_matrix.T."
        )
        raise ValueError(msg)
    xp = get_namespace(np.empty(0))
    host = _refit_attributes(est, to_namespace_tree(est._stats, xp, "cpu"), xp=xp, dtype=np.float64)
    params = sk_cls().get_params()
    out = sk_cls(**{k: _host(v) for k, v in est.get_params(deep=False).items() if k in params})
    for name in ("n_features_in_", "feature_names_in_", *attributes):
        if hasattr(host, name):
            value = getattr(host, name)
            setattr(out, name, [np.asarray(v) for v in value] if isinstance(value, list) else value)
    out.classes_ = np.asarray(to_numpy(est.classes_)).copy()
    return out


def from_sklearn(cls, estimator, **params):
    """``cls.from_sklearn(estimator)``: see :meth:`nbgpu._base._BaseNB.from_sklearn`."""
    sk_cls, _, stats_of = _counterpart(cls)
    if not isinstance(estimator, sk_cls):
        msg = f"`estimator` must be a fitted {sk_cls.__module__}.{sk_cls.__name__}; got {type(estimator).__name__}."
        raise TypeError(msg)
    check_is_fitted(estimator)
    ours = cls().get_params()
    unknown = sorted(set(params) - set(ours))
    if unknown:
        msg = f"{cls.__name__} has no parameter(s) {unknown}; valid: {sorted(ours)}."
        raise TypeError(msg)
    shared = {k: v for k, v in estimator.get_params(deep=False).items() if k in ours}
    est = cls(**{**shared, **params})
    est._validate_params()
    est.classes_ = np.asarray(estimator.classes_).copy()
    est.n_features_in_ = int(estimator.n_features_in_)
    if hasattr(estimator, "feature_names_in_"):
        est.feature_names_in_ = np.asarray(estimator.feature_names_in_)
    est._check_params_for_fit(est.classes_.shape[0], est.n_features_in_)
    est._loss_matrix(est.classes_.shape[0])
    xp = get_namespace(np.empty(0))
    return _refit_attributes(est, stats_of(estimator), xp=xp, dtype=np.float64)
