"""Conversion to and from scikit-learn's naive Bayes estimators.

Both rest on the statistics every model keeps (DESIGN.md §1). A model that
mirrors a scikit-learn class says so in its own file: the class attribute
``_sklearn_counterpart = (name in sklearn.naive_bayes, fitted attributes
scikit-learn reads)`` and the class method ``_stats_from_sklearn(estimator)``.
Converting to scikit-learn finalizes the statistics on the host in float64
and copies those attributes; converting back rebuilds the statistics from
scikit-learn's attributes, so the result can go on with ``partial_fit``.
"""

from __future__ import annotations

import numpy as np

from .._array.namespace import to_namespace_tree, to_numpy
from .merging import host_value

# The nbgpu estimators that declare a counterpart (for error messages).
MIRRORED = ("GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB")


def _counterpart(cls):
    """``(scikit-learn class, its fitted attributes)`` of nbgpu class ``cls``."""
    spec = getattr(cls, "_sklearn_counterpart", None)
    if spec is None:
        msg = f"{cls.__name__} has no scikit-learn counterpart; conversion exists for {', '.join(MIRRORED)}."
        raise TypeError(msg)
    from sklearn import naive_bayes

    name, attributes = spec
    return getattr(naive_bayes, name), attributes


def to_sklearn(est):
    """``est.to_sklearn()``: see :meth:`nbgpu._estimator.base._BaseNB.to_sklearn`."""
    sk_cls, attributes = _counterpart(type(est))
    from sklearn.base import clone

    est._check_is_fitted()
    if getattr(est, "loss_matrix", None) is not None:
        msg = (
            "`loss_matrix` has no scikit-learn counterpart (its predict returns the most "
            "probable class); convert est.set_params(loss_matrix=None) and apply the loss "
            "to predict_proba(X) @ loss_matrix.T."
        )
        raise ValueError(msg)
    host = clone(est)._become_fitted(
        to_namespace_tree(est._stats, np, "cpu"),
        est.classes_,
        n_features=est.n_features_in_,
        feature_names=getattr(est, "feature_names_in_", None),
        score_dtype="float64",
    )
    params = sk_cls().get_params()
    out = sk_cls(**{k: host_value(v) for k, v in est.get_params(deep=False).items() if k in params})
    for name in ("n_features_in_", "feature_names_in_", *attributes):
        if hasattr(host, name):
            value = getattr(host, name)
            setattr(out, name, [np.asarray(v) for v in value] if isinstance(value, list) else value)
    out.classes_ = np.asarray(to_numpy(est.classes_)).copy()
    return out


def from_sklearn(cls, estimator, **params):
    """``cls.from_sklearn(estimator)``: see :meth:`nbgpu._estimator.base._BaseNB.from_sklearn`."""
    sk_cls, _ = _counterpart(cls)
    if not isinstance(estimator, sk_cls):
        msg = f"`estimator` must be a fitted {sk_cls.__module__}.{sk_cls.__name__}; got {type(estimator).__name__}."
        raise TypeError(msg)
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    ours = cls().get_params()
    unknown = sorted(set(params) - set(ours))
    if unknown:
        msg = f"{cls.__name__} has no parameter(s) {unknown}; valid: {sorted(ours)}."
        raise TypeError(msg)
    shared = {k: v for k, v in estimator.get_params(deep=False).items() if k in ours}
    est = cls(**{**shared, **params})
    est._check_hyper_parameters()
    classes = np.asarray(estimator.classes_).copy()
    n_features = int(estimator.n_features_in_)
    est._check_params_for_fit(classes.shape[0], n_features)
    est._loss_matrix(classes.shape[0])
    names = getattr(estimator, "feature_names_in_", None)
    return est._become_fitted(
        cls._stats_from_sklearn(estimator),
        classes,
        n_features=n_features,
        feature_names=None if names is None else np.asarray(names),
        score_dtype="float64",
    )
