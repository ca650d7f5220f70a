"""Naive Bayes from labeled and unlabeled rows: expectation-maximisation.

Nigam, McCallum, Thrun & Mitchell (2000), "Text Classification from Labeled
and Unlabeled Documents using EM". An unlabeled row enters the statistics
with soft weights (its class responsibilities) instead of a one-hot row: the
soft class-sum kernel ``Rᵀ·X``, with no row duplicated per class. The EM loop
reads its data through ``_InMemoryData`` or its Dask counterpart in
``_interop/dask_em.py``; both use this module's functions on their rows.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections import namedtuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import ConvergenceWarning

from .._array.class_sums import soft_class_sums
from .._estimator.feature_names import feature_names_of
from .._estimator.model_lock import lock_of
from .._estimator.scoring import scores_and_joint
from .._array.namespace import (
    first_array,
    get_device,
    get_namespace,
    is_array,
    score_dtype_name,
    to_namespace_tree,
    to_numpy,
)
from .._array.numerics import log_posterior, logsumexp_last
from .._array.rows import take_rows
from .._estimator.adapters import adapter_for, computed
from .._estimator.base import _BaseNB
from .._estimator.delegation import _PredictsWithInnerModel
from .._validation import check_sample_weight, check_X, check_y, encode_labels, unique_labels
from .discrete import _CountNB
from .._estimator.params import validate_params

UNLABELED = -1


def _unlabeled_mask(y):
    """True for the rows marked unlabeled: -1, or the string "-1"."""
    host = to_numpy(y) if is_array(y) else np.asarray(y)
    if host.dtype.kind in "iuf":
        return host == UNLABELED
    return np.asarray([str(v) == str(UNLABELED) for v in host.tolist()], dtype=bool)


def _string_unlabeled(y):
    """``y`` with the int -1 among string labels in an object array (as ``sklearn.semi_supervised``
    takes) turned into the string "-1", so the labels are all strings; else ``y`` as it is."""
    if getattr(y, "dtype", None) != object or np.ndim(y) != 1:
        return y  # a list becomes all strings or all numbers in numpy's hands
    values = np.array(y, dtype=object)
    # (True and False are ints, but neither equals -1)
    unlabeled = np.array([isinstance(v, (int, np.integer)) and v == UNLABELED for v in values.tolist()], dtype=bool)
    if not unlabeled.any() or not any(isinstance(v, str) for v in values.tolist()):
        return y
    values[unlabeled] = str(UNLABELED)
    return values


def _labeled_classes(y):
    """Sorted distinct labels of the labeled entries of ``y`` (all of them, or
    its distinct values); raises when every entry is unlabeled."""
    labeled = take_rows(y, np.flatnonzero(~_unlabeled_mask(y)))
    if labeled.shape[0] == 0:
        msg = "`y` has no labeled row: every label is -1 (unlabeled); EM needs some labels to start from."
        raise ValueError(msg)
    return unique_labels(labeled)


# Validated rows (an in-memory X, or one Dask block), split: ``X_l`` / ``X_u`` None without labeled /
# unlabeled rows, ``Xt_u`` the model's input of ``X_u``, weights None without any, ``acc`` the
# accumulation dtype, ``total_weight`` a float.
_Rows = namedtuple("_Rows", "X_l y_l w_l X_u Xt_u w_u xp device acc total_weight")


def _split_rows(est, X, y, sample_weight, *, whole=True):
    """``X``, ``y`` and ``sample_weight`` validated for ``est`` and split into labeled and
    unlabeled rows; ``whole=False``: one block of the data, whose weights may all be zero."""
    X, kind = check_X(X, estimator=est, allow_nan=est._ignore_missing)
    xp, device, acc = kind.xp, kind.device, kind.sums_dtype
    n = X.shape[0]
    y = check_y(y, n)
    weights = check_sample_weight(sample_weight, n, xp=xp, device=device, dtype=acc, any_positive=whole)
    unlabeled = _unlabeled_mask(y)
    labeled_rows = np.flatnonzero(~unlabeled)
    if weights is not None:  # an unlabeled row of weight 0 adds nothing (and one no class explains, 0 / 0)
        unlabeled &= to_numpy(weights) > 0
    unlabeled_rows = np.flatnonzero(unlabeled)

    def part(rows, values):
        return None if values is None or rows.shape[0] == 0 else take_rows(values, rows)

    X_u = part(unlabeled_rows, X)
    if X_u is not None:
        est._check_values(X_u)
    return _Rows(
        X_l=part(labeled_rows, X),
        y_l=take_rows(y, labeled_rows),
        w_l=part(labeled_rows, weights),
        X_u=X_u,
        Xt_u=None if X_u is None else est._model_input(X_u, xp),
        w_u=part(unlabeled_rows, weights),
        xp=xp,
        device=device,
        acc=acc,
        total_weight=float(n if weights is None else xp.sum(weights)),
    )


def _labeled_statistics(est, rows, classes):
    """The statistics (one-hot) of the labeled rows, or None where they have no weight."""
    if rows.X_l is None or (rows.w_l is not None and not bool(rows.xp.any(rows.w_l > 0))):
        return None
    return clone(est)._fit_batch(rows.X_l, rows.y_l, classes, rows.w_l, reset=True, commit=False)


def _soft_statistics(est, X, R, *, xp, dtype):
    """The statistics of rows ``X`` with soft class weights ``R`` (n × k): for count models one
    soft class-sum ``Rᵀ·X``; else the merge of one accumulation per class (row i in class c with
    weight R[i, c]), exact for every model whose statistics are weighted sums or moments."""
    k = R.shape[1]
    if isinstance(est, _CountNB) and not est._ignore_missing:
        return {"class_count": xp.sum(R, axis=0), "feature_count": soft_class_sums(X, R, xp=xp, dtype=dtype)}
    stats = None
    for c in range(k):
        codes = xp.full((R.shape[0],), c, dtype=xp.int64, device=R.device)
        part = est._accumulate(X, codes, R[:, c], k, xp=xp, dtype=dtype, previous=stats)
        stats = part if stats is None else est._merge(stats, part, xp=xp)
    return stats


def _weighted_sum(values, weights, *, xp):
    """``Σ weights · values``; a zero-weight row adds nothing, even with a -inf value
    (a zero-weight labeled row of a class no weighted row has)."""
    if weights is not None:
        values = xp.where(weights > 0, values * xp.where(weights > 0, weights, 1.0), 0.0)
    return xp.sum(values)


def _em_terms(est, model, rows, classes, lam):
    """One pass of EM over ``rows`` under the fitted ``model``, every row scored once.

    Returns ``(total, soft)``: ``total`` is ``Σ_labeled w log P(x, y) + λ Σ_unlabeled w log Σ_c P(x, c)``
    over these rows, and ``soft()`` (computed when called) the statistics of the unlabeled rows
    weighted by ``λ · w · P(c | x)`` (E-step, then the M-step's sums; None without such rows).
    """
    xp, acc = rows.xp, rows.acc
    total = 0.0
    if rows.X_l is not None:
        jll_l = xp.astype(model.predict_joint_log_proba(rows.X_l), acc)
        codes = encode_labels(rows.y_l, classes, xp=xp, device=rows.device)
        picked = xp.take_along_axis(jll_l, xp.reshape(codes, (-1, 1)), axis=1)[:, 0]
        total = _weighted_sum(picked, rows.w_l, xp=xp)
    scores_u = None
    if rows.X_u is not None and lam > 0:
        scores_u, jll_u = scores_and_joint(model, rows.X_u)
        lse = logsumexp_last(xp.astype(jll_u, acc), xp=xp)
        unexplained = xp.isinf(lse) if rows.w_u is None else xp.isinf(lse) & (rows.w_u > 0)
        if bool(xp.any(unexplained)):
            # Their class weights P(c | x) would be 0 / 0: NaN in every statistic after the M-step.
            msg = (
                f"SemiSupervisedNB: {int(xp.sum(xp.astype(unexplained, xp.int64)))} unlabeled row(s) of X have zero likelihood under "
                f"every class of the {type(model).__name__} fitted so far, so EM cannot weigh them between "
                "the classes; give them a positive likelihood (e.g. KernelDensityNB's gaussian kernel, or "
                "more smoothing) or leave them out."
            )
            raise ValueError(msg)
        total = total + lam * _weighted_sum(lse, rows.w_u, xp=xp)

    def soft():
        if scores_u is None:
            return None
        # The responsibilities are predict_proba's, in the score dtype, then summed in acc.
        R = xp.astype(xp.exp(log_posterior(scores_u, xp=xp)), acc) * lam
        if rows.w_u is not None:
            R = R * xp.reshape(rows.w_u, (-1, 1))
        return _soft_statistics(est, rows.Xt_u, R, xp=xp, dtype=acc)

    return float(total), soft


class _InMemoryData:
    """The data of an in-memory fit, validated and split once (the Dask adapter's ``em_data``
    gives the same for a Dask array): ``classes``, ``n_features``, ``feature_names``,
    ``score_dtype``, ``total_weight`` (Σ w), ``has_unlabeled``, ``labeled`` (the labeled rows'
    statistics, None when their weights are all zero) and ``em_pass(model, lam, statistics=...)
    -> (total, soft)`` (:func:`_em_terms`; ``statistics``: whether ``soft`` may be called)."""

    def __init__(self, est, X, y, sample_weight):
        y, sample_weight = computed(y, sample_weight)
        self.feature_names = feature_names_of(X)
        self._est = est
        self._rows = rows = _split_rows(est, X, y, sample_weight)
        self.classes = _labeled_classes(rows.y_l)  # raises without a labeled row: X_l is an array
        self.labeled = _labeled_statistics(est, rows, self.classes)
        self.n_features, self.total_weight = rows.X_l.shape[1], rows.total_weight
        self.score_dtype = score_dtype_name(rows.X_l.dtype, xp=rows.xp)
        self.has_unlabeled = rows.X_u is not None

    def em_pass(self, model, lam, *, statistics):
        return _em_terms(self._est, model, self._rows, self.classes, lam)


class SemiSupervisedNB(_PredictsWithInnerModel, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Naive Bayes trained on labeled and unlabeled rows by EM.

    Rows whose label is ``-1`` (for string labels, the string ``"-1"``, or
    the int -1 in an object array, as ``sklearn.semi_supervised`` takes) are
    unlabeled. The model starts from the labeled rows; then every iteration

    - E-step: the responsibilities ``R[i, c] = P(c | x_i)`` of the unlabeled
      rows under the current model;
    - M-step: the labeled rows' statistics (one-hot) merged with those of the
      unlabeled rows weighted by ``λ · w_i · R[i, c]`` (``λ`` is
      ``unlabeled_weight``, ``w_i`` the sample weight) make the next model.

    It stops when the average log-likelihood per row,
    ``ℓ = (Σ_labeled w_i log P(x_i, y_i) + λ Σ_unlabeled w_i log Σ_c P(x_i, c)) / Σ w``,
    changes by less than ``tol``, or after ``max_iter`` iterations (with a
    ConvergenceWarning). ``ℓ`` excludes the prior of the parameters that
    smoothing stands for, so it need not rise at every step.

    ``X`` may be a Dask array chunked by rows only (see :meth:`fit`): each
    block's E-step and M-step sums are computed on its worker and merged in
    a tree, with the in-memory result (to rounding). ``predict*`` on a Dask
    array are lazy and blockwise.

    Parameters
    ----------
    estimator : nbgpu estimator, default=MultinomialNB()
        Any nbgpu naive Bayes model (MultinomialNB, ComplementNB, BernoulliNB,
        PoissonNB, CategoricalNB, GaussianNB, ...). Count models take the soft
        class-sum kernel; the others one weighted pass per class.
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
        validate_params(est)
        return est

    def fit(self, X, y, sample_weight=None):
        """Fit by EM on labeled and unlabeled (``y == -1``) rows.

        Parameters
        ----------
        X : {array-like, sparse matrix, Dask array} of shape (n_samples, n_features)
            A Dask array (numpy or cupy blocks, dense or sparse) must be
            chunked by rows only; every EM iteration is then one pass over
            its row blocks, computing X again (persist it if that is costly).
        y : array-like of shape (n_samples,)
            Class labels; -1 (or "-1") marks an unlabeled row, also among
            string labels in an object array (scikit-learn's convention
            for ``sklearn.semi_supervised``). In memory or, with a Dask
            ``X``, a Dask array.
        sample_weight : array-like of shape (n_samples,), default=None
            In memory or, with a Dask ``X``, a Dask array.

        Returns
        -------
        self : object
        """
        est = self._check_params()
        adapter = adapter_for(X)
        y = y if adapter_for(y) is not None else _string_unlabeled(y)  # in memory, for a Dask X too
        data = _InMemoryData(est, X, y, sample_weight) if adapter is None else adapter.em_data(est, X, y, sample_weight)
        if data.labeled is None:
            msg = "`sample_weight` is zero on every labeled row; EM needs labeled weight to start from."
            raise ValueError(msg)
        classes, lam, labeled = data.classes, float(self.unlabeled_weight), data.labeled
        like = first_array(labeled)
        xp, device = get_namespace(like), get_device(like)

        def fitted(stats, names=None):
            # The iterations score validated arrays: their models carry no column names.
            return clone(est)._become_fitted(stats, classes, n_features=data.n_features, feature_names=names,
                                             score_dtype=data.score_dtype)

        # ℓ of each model; ``soft()``, the next M-step's statistics, is asked for only where one follows.
        model, stats = fitted(labeled), labeled
        n_iter, converged = 0, not data.has_unlabeled or lam == 0
        total, soft = data.em_pass(model, lam, statistics=not converged and self.max_iter > 0)
        history = [total / data.total_weight]
        while not converged and n_iter < self.max_iter:
            stats = est._merge(labeled, to_namespace_tree(soft(), xp, device), xp=xp)  # M-step
            model = fitted(stats)
            n_iter += 1
            total, soft = data.em_pass(model, lam, statistics=n_iter < self.max_iter)
            history.append(total / data.total_weight)
            converged = abs(history[-1] - history[-2]) < self.tol
        if not converged and self.max_iter > 0:
            msg = (
                f"SemiSupervisedNB did not converge in {self.max_iter} iterations (change of the "
                f"log-likelihood per row {abs(history[-1] - history[-2]):.3g} >= tol={self.tol}). "
                "Increase max_iter or tol."
            )
            warnings.warn(msg, ConvergenceWarning, stacklevel=2)
        names = data.feature_names
        fitted_state = {"estimator_": model if names is None else fitted(stats, names), "classes_": classes,
                        "n_iter_": n_iter, "log_likelihood_": history, "n_features_in_": data.n_features}
        with lock_of(self).update():  # fits in several threads: each leaves a whole model (model_lock.py)
            self.__dict__.pop("feature_names_in_", None)
            self.__dict__.update(fitted_state)
            if names is not None:
                self.feature_names_in_ = names
        return self

    def _inner_estimator(self):
        if self.estimator is None:
            from .estimators import MultinomialNB  # the public one (that module imports this one)

            return MultinomialNB()
        return self.estimator
