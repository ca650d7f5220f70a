"""Naive Bayes from labeled and unlabeled rows: expectation-maximisation.

Nigam, McCallum, Thrun & Mitchell (2000), "Text Classification from Labeled
and Unlabeled Documents using EM". The model's statistics are sums over
rows weighted by class membership, so an unlabeled row enters them with
soft weights (its class responsibilities) instead of a one-hot row: the
soft class-sum kernel ``Rᵀ·X``, with no row duplicated per class.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import _get_feature_names

from .._array.class_sums import soft_class_sums
from .._array.namespace import (
    accumulation_dtype,
    first_array,
    get_namespace,
    is_array,
    to_numpy,
)
from .._array.rows import take_rows
from .._estimator.base import _BaseNB
from .._estimator.delegation import _PredictsWithInnerModel
from .._validation import check_sample_weight, check_X, check_y, unique_labels
from .discrete import MultinomialNB, _CountNB

UNLABELED = -1


def _unlabeled_mask(y):
    """True for the rows marked unlabeled: -1, or the string "-1"."""
    host = to_numpy(y) if is_array(y) else np.asarray(y)
    if host.dtype.kind in "iuf":
        return host == UNLABELED
    return np.asarray([str(v) == str(UNLABELED) for v in host.tolist()], dtype=bool)


def _soft_statistics(est, X, R, *, xp, dtype):
    """The statistics of rows ``X`` with soft class weights ``R`` (n × k).

    Count models: one soft class-sum ``Rᵀ·X``. Other models: the merge of one
    weighted accumulation per class (row i in class c with weight R[i, c]),
    exact for every model whose statistics are weighted sums or moments.
    """
    k = R.shape[1]
    if isinstance(est, _CountNB) and not est._ignore_missing:
        return {"class_count": xp.sum(R, axis=0), "feature_count": soft_class_sums(X, R, xp=xp, dtype=dtype)}
    stats = None
    for c in range(k):
        codes = xp.full((R.shape[0],), c, dtype=xp.int64, device=R.device)
        part = est._accumulate(X, codes, R[:, c], k, xp=xp, dtype=dtype, previous=stats)
        stats = part if stats is None else est._merge(stats, part, xp=xp)
    return stats


class SemiSupervisedNB(_PredictsWithInnerModel, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Naive Bayes trained on labeled and unlabeled rows by EM.

    Rows whose label is ``-1`` (for string labels, the string ``"-1"``) are
    unlabeled. The model starts from the labeled rows; then every iteration

    - E-step: the responsibilities ``R[i, c] = P(c | x_i)`` of the unlabeled
      rows under the current model;
    - M-step: the statistics of the labeled rows (one-hot) merged with those
      of the unlabeled rows weighted by ``λ · w_i · R[i, c]`` (``λ`` is
      ``unlabeled_weight``, ``w_i`` the sample weight), finalized into the
      next model.

    It stops when the average log-likelihood per row,
    ``ℓ = (Σ_labeled w_i log P(x_i, y_i) + λ Σ_unlabeled w_i log Σ_c P(x_i, c)) / Σ w``,
    changes by less than ``tol``, or after ``max_iter`` iterations (with a
    ConvergenceWarning). ``ℓ`` excludes the prior of the parameters that
    smoothing stands for, so it need not rise at every step.

    Parameters
    ----------
    estimator : nbgpu estimator, default=MultinomialNB()
        The model: any nbgpu naive Bayes model (MultinomialNB, ComplementNB,
        BernoulliNB, PoissonNB, CategoricalNB, GaussianNB, ...). Count models
        take the soft class-sum kernel; the others one weighted pass per
        class.
    max_iter : int, default=10
        Most EM iterations.
    tol : float, default=1e-3
        Convergence threshold on the change of ``ℓ``.
    unlabeled_weight : float, default=1.0
        λ >= 0: the weight of an unlabeled row relative to a labeled one
        (Nigam et al.'s EM-λ, usually in [0, 1]; 0 ignores the unlabeled rows).

    Attributes
    ----------
    estimator_ : estimator
        The fitted model after the last M-step.
    classes_ : array of shape (n_classes,)
        The labels seen on labeled rows.
    n_iter_ : int
        EM iterations run.
    log_likelihood_ : list of float
        ``ℓ`` of the starting model and after every iteration.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> import nbgpu
    >>> X = np.array([[5, 0], [4, 1], [0, 5], [1, 4], [6, 1], [1, 6]])
    >>> y = np.array([0, -1, 1, -1, -1, -1])
    >>> model = nbgpu.SemiSupervisedNB().fit(X, y)
    >>> model.predict(X)
    array([0, 0, 1, 1, 0, 1])
    """

    def __init__(self, estimator=None, *, max_iter=10, tol=1e-3, unlabeled_weight=1.0):
        self.estimator = estimator
        self.max_iter = max_iter
        self.tol = tol
        self.unlabeled_weight = unlabeled_weight

    _fitted_attribute = "estimator_"

    def _check_params(self):
        est = self._inner_estimator()
        if not isinstance(est, _BaseNB):
            msg = f"`estimator` must be an nbgpu naive Bayes model; got {type(est).__name__}."
            raise TypeError(msg)
        if not isinstance(self.max_iter, numbers.Integral) or isinstance(self.max_iter, bool) or self.max_iter < 0:
            msg = f"`max_iter` must be an integer >= 0; got {self.max_iter!r}."
            raise ValueError(msg)
        for name in ("tol", "unlabeled_weight"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value >= 0 or math.isinf(value):
                msg = f"`{name}` must be a finite number >= 0; got {value!r}."
                raise ValueError(msg)
        return est

    def fit(self, X, y, sample_weight=None):
        """Fit by EM on labeled and unlabeled (``y == -1``) rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels; -1 (or "-1") marks an unlabeled row.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        est = self._check_params()
        est._validate_params()
        feature_names = _get_feature_names(X)
        X, xp, device = check_X(X, estimator=est, allow_nan=est._ignore_missing)
        n, d = X.shape
        y = check_y(y, n)
        acc = accumulation_dtype(xp, device)
        weights = check_sample_weight(sample_weight, n, xp=xp, device=device, dtype=acc)
        unlabeled = _unlabeled_mask(y)
        labeled_rows, unlabeled_rows = np.flatnonzero(~unlabeled), np.flatnonzero(unlabeled)
        if labeled_rows.shape[0] == 0:
            msg = "`y` has no labeled row: every label is -1 (unlabeled); EM needs some labels to start from."
            raise ValueError(msg)
        y_labeled = take_rows(y, labeled_rows)
        classes = unique_labels(y_labeled)
        w_labeled = None if weights is None else take_rows(weights, labeled_rows)
        labeled = clone(est)._fit_batch(take_rows(X, labeled_rows), y_labeled, classes, w_labeled, reset=True,
                                        commit=False)
        score_dtype = "float32" if str(X.dtype).endswith("float32") else "float64"

        def fitted(stats, names=None):
            # The iterations score validated arrays: their models carry no column names.
            return clone(est)._become_fitted(stats, classes, n_features=d, feature_names=names,
                                             score_dtype=score_dtype)

        model, stats = fitted(labeled), labeled
        X_u = take_rows(X, unlabeled_rows) if unlabeled_rows.shape[0] else None
        if X_u is not None:
            est._check_values(X_u)
        Xt_u = None if X_u is None else est._model_input(X_u, xp)
        w_u = None if weights is None else take_rows(weights, unlabeled_rows)
        codes = xp.asarray(np.searchsorted(to_numpy(classes), to_numpy(y_labeled)), device=device)
        total_weight = float(n if weights is None else xp.sum(weights))
        lam = float(self.unlabeled_weight)

        def log_likelihood(model):
            jll_l = xp.astype(model.predict_joint_log_proba(take_rows(X, labeled_rows)), acc)
            picked = xp.take_along_axis(jll_l, xp.reshape(codes, (-1, 1)), axis=1)[:, 0]
            if w_labeled is not None:  # a zero-weight row of an unseen class: -inf · 0 is no term
                picked = xp.where(w_labeled > 0, picked * xp.where(w_labeled > 0, w_labeled, 1.0), 0.0)
            total = xp.sum(picked)
            if X_u is not None and lam > 0:
                jll_u = xp.astype(model.predict_joint_log_proba(X_u), acc)
                top = xp.max(jll_u, axis=1, keepdims=True)
                lse = xp.log(xp.sum(xp.exp(jll_u - top), axis=1)) + top[:, 0]
                if w_u is not None:
                    lse = xp.where(w_u > 0, lse * xp.where(w_u > 0, w_u, 1.0), 0.0)
                total = total + lam * xp.sum(lse)
            return float(total) / total_weight

        history = [log_likelihood(model)]
        n_iter, converged = 0, X_u is None or lam == 0
        while not converged and n_iter < self.max_iter:
            R = xp.astype(model.predict_proba(X_u), acc) * lam  # E-step
            if w_u is not None:
                R = R * xp.reshape(w_u, (-1, 1))
            unlabeled_stats = _soft_statistics(est, Xt_u, R, xp=get_namespace(R), dtype=acc)
            stats = est._merge(labeled, unlabeled_stats, xp=get_namespace(first_array(labeled)))  # M-step
            model = fitted(stats)
            n_iter += 1
            history.append(log_likelihood(model))
            converged = abs(history[-1] - history[-2]) < self.tol
        if not converged and self.max_iter > 0:
            msg = (
                f"SemiSupervisedNB did not converge in {self.max_iter} iterations (change of the "
                f"log-likelihood per row {abs(history[-1] - history[-2]):.3g} >= tol={self.tol}). "
                "Increase max_iter or tol."
            )
            warnings.warn(msg, ConvergenceWarning, stacklevel=2)
        self.estimator_ = model if feature_names is None else fitted(stats, feature_names)
        self.classes_ = classes
        self.n_iter_ = n_iter
        self.log_likelihood_ = history
        self.n_features_in_ = d
        self.__dict__.pop("feature_names_in_", None)
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        return self

    def _inner_estimator(self):
        return MultinomialNB() if self.estimator is None else self.estimator
