"""Conversion to and from scikit-learn's naive Bayes estimators.

A model that mirrors a scikit-learn class declares ``_sklearn_counterpart = (name in
sklearn.naive_bayes, fitted attributes scikit-learn reads)`` and the class method
``_stats_from_sklearn(estimator)``, which rebuilds its statistics.
"""

from __future__ import annotations

import numpy as np

from .._array.namespace import to_namespace_tree, to_numpy
from .merging import host_value
from .params import validate_params
from .scoring import check_fitted, loss_matrix_of


def _counterpart(cls):
    """``(scikit-learn class, its fitted attributes)`` of nbgpu class ``cls``."""
    spec = getattr(cls, "_sklearn_counterpart", None)
    if spec is None:
        mirrored = "GaussianNB, MultinomialNB, ComplementNB, BernoulliNB, CategoricalNB"
        msg = f"{cls.__name__} has no scikit-learn counterpart; conversion exists for {mirrored}."
        raise TypeError(msg)
    from sklearn import naive_bayes

    name, attributes = spec
    return getattr(naive_bayes, name), attributes


def to_sklearn(self):
    """An equivalent fitted scikit-learn estimator (numpy, float64).

    For serving a model trained on a GPU where only scikit-learn is
    installed: its ``predict`` and ``predict_proba`` give this model's
    results on complete data. A ``prior_smoothing`` model passes its
    smoothed prior as the fitted prior. Not possible with a
    ``loss_matrix`` (scikit-learn predicts the most probable class).

    Returns
    -------
    estimator : sklearn.naive_bayes estimator
        GaussianNB, MultinomialNB, ComplementNB, BernoulliNB or
        CategoricalNB, fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import GaussianNB
    >>> X = np.array([[0.0, 1.0], [0.5, 1.2], [3.0, 0.1], [3.3, 0.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> sk = GaussianNB().fit(X, y).to_sklearn()
    >>> type(sk).__module__, sk.predict([[3.1, 0.0]])
    ('sklearn.naive_bayes', array([1]))
    """
    sk_cls, attributes = _counterpart(type(self))
    from sklearn.base import clone

    check_fitted(self)
    if getattr(self, "loss_matrix", None) is not None:
        msg = (
            "`loss_matrix` has no scikit-learn counterpart (its predict returns the most "
            "probable class); convert est.set_params(loss_matrix=None) and apply the loss "
            "to predict_proba(X) @ loss_matrix.T."
        )
        raise ValueError(msg)
    host = clone(self)._become_fitted(
        to_namespace_tree(self._stats, np, "cpu"), self.classes_, n_features=self.n_features_in_,
        feature_names=getattr(self, "feature_names_in_", None), score_dtype="float64",
    )
    params = sk_cls().get_params()
    out = sk_cls(**{k: host_value(v) for k, v in self.get_params(deep=False).items() if k in params})
    for name in ("n_features_in_", "feature_names_in_", *attributes):
        if hasattr(host, name):
            value = getattr(host, name)
            setattr(out, name, [np.asarray(v) for v in value] if isinstance(value, list) else value)
    out.classes_ = np.asarray(to_numpy(self.classes_)).copy()
    return out


def from_sklearn(cls, estimator, **params):
    """An nbgpu estimator equivalent to a fitted scikit-learn one.

    The statistics are rebuilt from scikit-learn's fitted attributes, so
    the result predicts the same and can continue with ``partial_fit``.

    Parameters
    ----------
    estimator : sklearn.naive_bayes estimator
        Fitted, of the class this nbgpu class mirrors.
    **params
        nbgpu-only parameters (``loss_matrix``, ``prior_smoothing``,
        ``missing``) for the new estimator.

    Returns
    -------
    estimator : nbgpu estimator
        Fitted, with numpy float64 attributes (move it with
        :meth:`to_device`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
    >>> from nbgpu import BernoulliNB
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 1]])
    >>> sk = SkBernoulliNB().fit(X, [0, 0, 1, 1])
    >>> BernoulliNB.from_sklearn(sk).predict([[1, 0]])
    array([0])
    """
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
    validate_params(est)
    classes = np.asarray(estimator.classes_).copy()
    n_features = int(estimator.n_features_in_)
    est._check_params_for_fit(classes.shape[0], n_features)
    loss_matrix_of(est, classes.shape[0])
    names = getattr(estimator, "feature_names_in_", None)
    return est._become_fitted(
        cls._stats_from_sklearn(estimator), classes, n_features=n_features,
        feature_names=None if names is None else np.asarray(names), score_dtype="float64",
    )
