"""The machinery every naive Bayes estimator shares.

A model is three pure pieces (DESIGN.md §1): ``_accumulate`` turns one batch
into per-class statistics, ``_merge`` adds two sets of statistics, and
``_finalize`` turns statistics into the fitted attributes. ``fit`` is
``partial_fit`` from empty statistics. Scoring is one joint log-likelihood
(``_joint_log_likelihood``) from which every ``predict*`` method derives.

Fitting is transactional: everything is computed into locals and assigned at
the end, so a call that raises leaves a fitted model exactly as it was.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import _check_feature_names, _get_feature_names

from ._backend import (
    BLOCK_BYTES,
    accumulation_dtype,
    get_namespace,
    is_array,
    is_sparse,
    logsumexp,
    result_dtype,
    to_namespace,
    to_numpy,
)
from ._validation import (
    check_classes,
    check_n_features,
    check_sample_weight,
    check_X,
    check_y,
    encode_labels,
    unique_labels,
)


# --------------------------------------------------------------------------- #
# Small kernels on any namespace
# --------------------------------------------------------------------------- #
def onehot(codes, n_classes, *, dtype, xp, weights=None):
    """The (weighted) one-hot class matrix ``Y`` (n × k) of integer ``codes``."""
    classes = xp.arange(n_classes, dtype=codes.dtype, device=codes.device)
    Y = xp.astype(xp.reshape(codes, (-1, 1)) == classes, dtype)
    if weights is not None:
        Y = Y * xp.reshape(weights, (-1, 1))
    return Y


def class_totals(codes, weights, n_classes, *, dtype, xp):
    """Per-class sum of sample weights (per-class row counts without weights)."""
    total = xp.zeros(n_classes, dtype=dtype, device=codes.device)
    for start, stop in row_blocks(codes.shape[0], n_classes * 8):
        w = None if weights is None else weights[start:stop]
        total = total + xp.sum(onehot(codes[start:stop], n_classes, dtype=dtype, xp=xp, weights=w), axis=0)
    return total


def row_blocks(n_rows, bytes_per_row, budget=None):
    """``(start, stop)`` row ranges whose temporaries fit a memory budget."""
    budget = BLOCK_BYTES if budget is None else budget
    step = max(1, int(budget // max(bytes_per_row, 1)))
    for start in range(0, n_rows, step):
        yield start, min(start + step, n_rows)


def safe_log(x, *, xp):
    """log(x) with zeros mapped to the log of the smallest normal number.

    Keeps ``0 · log p`` finite in the matrix products (``0 · -inf`` is NaN).
    """
    tiny = xp.finfo(x.dtype).smallest_normal
    return xp.log(xp.where(x > 0, x, xp.asarray(tiny, dtype=x.dtype, device=x.device)))


def log_posterior(jll, *, xp):
    """Normalise a joint log-likelihood (n × k) over the classes.

    The row maximum is subtracted first, so the best class is exactly 0 and
    the log-sum-exp that follows is a small number: ``jll - logsumexp(jll)``
    would lose the normalisation to rounding once ``|jll|`` reaches 1/ulp
    (about 1e7 in float32).
    """
    top = xp.max(jll, axis=1, keepdims=True)
    shifted = jll - xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    return shifted - logsumexp(shifted, axis=1, xp=xp)


def log_or_neg_inf(x, *, xp):
    """log(x) with zeros mapped to -inf, without a divide-by-zero warning."""
    one = xp.ones_like(x)
    return xp.where(x > 0, xp.log(xp.where(x > 0, x, one)), -math.inf * one)


# --------------------------------------------------------------------------- #
# The estimator base class
# --------------------------------------------------------------------------- #
class _BaseNB(ClassifierMixin, BaseEstimator):
    """Base class: fitting protocol, scoring and the ``predict*`` family."""

    # ---- hooks a model implements ------------------------------------- #
    def _check_values(self, X):
        """Model-specific checks of the values of ``X`` (fit and predict)."""

    def _transform(self, X, xp):
        """The model's view of the data (e.g. binarized); identity by default."""
        return X

    def _check_params_for_fit(self, n_classes, n_features):
        """Validate data-dependent parameters before any statistic is computed."""

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        raise NotImplementedError

    def _merge(self, a, b, *, xp):
        raise NotImplementedError

    def _finalize(self, stats, n_classes, *, xp, dtype):
        raise NotImplementedError

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        raise NotImplementedError

    def _score_row_bytes(self, n_features, n_classes):
        """Bytes of temporaries per row while scoring (sizes the row blocks)."""
        return 8 * n_classes

    # ---- fitting ------------------------------------------------------ #
    def fit(self, X, y, sample_weight=None):
        """Fit the model on ``X``, ``y``, discarding what an earlier fit learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors: any Array API array (numpy, cupy, torch,
            array-api-strict), a scipy or cupyx sparse CSR/CSC matrix, a list
            or a pandas DataFrame.
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row (1 for unweighted).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit_batch(X, y, None, sample_weight, reset=True)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with one batch of samples (out-of-core learning).

        Calling it on consecutive chunks of a data set gives the same model
        as one ``fit`` on their concatenation.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors of this batch.
        y : array-like of shape (n_samples,)
            Class labels of this batch; each must be one of ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every class that can appear in ``y``. Required on the first call;
            if given later it must equal ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            msg = "classes must be passed on the first call to partial_fit."
            raise ValueError(msg)
        return self._fit_batch(X, y, classes, sample_weight, reset=first)

    def _fit_batch(self, X, y, classes, sample_weight, *, reset):
        self._validate_params()
        X, xp, device = check_X(X, estimator=self)
        n_samples, n_features = X.shape
        if reset:
            feature_names = _get_feature_names(X) if not is_array(X) and not is_sparse(X) else None
        else:
            _check_feature_names(self, X, reset=False)
            check_n_features(self, n_features, reset=False)
        self._check_values(X)
        y = check_y(y, n_samples)
        if reset:
            classes = check_classes(classes) if classes is not None else unique_labels(y)
        else:
            if classes is not None:
                given = to_numpy(check_classes(classes))
                if not np.array_equal(given, to_numpy(self.classes_)):
                    msg = (
                        f"`classes={given.tolist()}` is not the same as on the "
                        f"first call to partial_fit, was: {to_numpy(self.classes_).tolist()}."
                    )
                    raise ValueError(msg)
            classes = self.classes_
        n_classes = classes.shape[0]
        self._check_params_for_fit(n_classes, n_features)
        codes = encode_labels(y, classes, xp=xp, device=device)
        acc = accumulation_dtype(xp, device)
        weights = check_sample_weight(sample_weight, n_samples, xp=xp, device=device, dtype=acc)
        dtype = result_dtype(X.dtype, xp, device)

        previous = None
        if not reset:
            previous = {k: to_namespace(v, xp, device) if is_array(v) else v for k, v in self._stats.items()}
        Xt = self._transform(X, xp)
        batch = self._accumulate(Xt, codes, weights, n_classes, xp=xp, dtype=acc, previous=previous)
        stats = batch if previous is None else self._merge(previous, batch, xp=xp)
        attrs = self._finalize(stats, n_classes, xp=xp, dtype=dtype)

        # Commit: nothing above touched the estimator.
        if reset:
            for name in ("feature_names_in_",):
                self.__dict__.pop(name, None)
            if feature_names is not None:
                self.feature_names_in_ = feature_names
            self.n_features_in_ = n_features
            self.classes_ = classes
        self._stats = stats
        self.__dict__.update(attrs)
        return self

    # ---- scoring ------------------------------------------------------ #
    def _check_is_fitted(self):
        if not hasattr(self, "_stats"):
            msg = (
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' "
                "with appropriate arguments before using this estimator."
            )
            raise NotFittedError(msg)

    def _validated_for_scoring(self, X):
        self._check_is_fitted()
        X, xp, device = check_X(X, estimator=self)
        _check_feature_names(self, X, reset=False)
        check_n_features(self, X.shape[1], reset=False)
        self._check_values(X)
        return X, xp, device

    def _jll(self, X):
        X, xp, device = self._validated_for_scoring(X)
        dtype = result_dtype(X.dtype, xp, device)
        Xt = self._transform(X, xp)
        n = Xt.shape[0]
        row_bytes = self._score_row_bytes(Xt.shape[1], self.classes_.shape[0])
        parts = [
            self._joint_log_likelihood(Xt[start:stop, ...], xp=xp, device=device, dtype=dtype)
            for start, stop in row_blocks(n, row_bytes)
        ]
        jll = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        return jll, xp, device

    def _params(self, names, *, xp, device, dtype):
        """Fitted arrays as ``dtype`` on the scoring namespace and device."""
        out = []
        for name in names:
            a = to_namespace(getattr(self, name), xp, device)
            out.append(a if a.dtype == dtype else xp.astype(a, dtype))
        return out

    def predict_joint_log_proba(self, X):
        """Joint log-probability ``log P(x, c)`` of every sample and class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        jll : array of shape (n_samples, n_classes)
            In the namespace and on the device of ``X``; columns follow
            ``classes_``.
        """
        return self._jll(X)[0]

    def predict_log_proba(self, X):
        """Log of the posterior probability of every class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : array of shape (n_samples, n_classes)
        """
        jll, xp, _ = self._jll(X)
        return log_posterior(jll, xp=xp)

    def predict_proba(self, X):
        """Posterior probability of every class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : array of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        jll, xp, _ = self._jll(X)
        return xp.exp(log_posterior(jll, xp=xp))

    def predict(self, X):
        """The most probable class of every sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : array of shape (n_samples,)
            Labels from ``classes_``: in the namespace and on the device of
            ``X`` when labels are numbers, a numpy array otherwise (strings).
        """
        jll, xp, device = self._jll(X)
        return self._labels_of(xp.argmax(jll, axis=1), xp=xp, device=device)

    def _labels_of(self, index, *, xp, device):
        """``classes_[index]``, in ``xp`` when the labels are numeric."""
        classes = self.classes_
        if isinstance(classes, np.ndarray) and classes.dtype.kind not in "biuf":
            return classes[to_numpy(index)]
        classes = to_namespace(classes, xp, device)
        return xp.take(classes, index)

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``predict(X)`` against ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        from sklearn.metrics import accuracy_score

        pred = to_numpy(self.predict(X))
        y = to_numpy(y) if is_array(y) else np.asarray(y)
        sw = None if sample_weight is None else (to_numpy(sample_weight) if is_array(sample_weight) else sample_weight)
        return float(accuracy_score(y, pred, sample_weight=sw))

    # ---- moving a fitted model ------------------------------------------ #
    def to_device(self, like=None, *, xp=None, device=None):
        """Move every fitted array to another namespace and/or device, in place.

        Parameters
        ----------
        like : array, optional
            Take namespace and device from this array (e.g. ``cupy.empty(0)``
            to move to the GPU, ``numpy.empty(0)`` to move back).
        xp : Array API namespace, optional
        device : device, optional

        Returns
        -------
        self : object
        """
        self._check_is_fitted()
        if like is not None:
            xp = get_namespace(like)
            device = like.device if device is None else device
        if xp is None:
            msg = "to_device needs `like` (an array) or `xp` (a namespace)."
            raise ValueError(msg)

        def move(v):
            if is_array(v):
                if isinstance(v, np.ndarray) and v.dtype.kind not in "biuf":
                    return v  # string/object labels stay on the host
                return to_namespace(v, xp, device)
            if isinstance(v, dict):
                return {k: move(u) for k, u in v.items()}
            return v

        params = self.get_params(deep=False)
        for name, value in list(vars(self).items()):
            if name not in params:
                self.__dict__[name] = move(value)
        return self

    # ---- scikit-learn integration -------------------------------------- #
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.array_api_support = True
        return tags
