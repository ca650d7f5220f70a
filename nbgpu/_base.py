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

import contextlib
import functools
import math
import warnings
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names, _get_feature_names

from ._backend import (
    BLOCK_BYTES,
    accumulation_dtype,
    blocks_on_host_threads,
    float_warnings_off,
    get_namespace,
    is_array,
    is_dask_array,
    log_in_place,
    map_row_blocks,
    result_dtype,
    to_namespace,
    to_numpy,
)
from ._validation import (
    check_classes,
    check_classes_unchanged,
    check_finite,
    check_loss_matrix,
    check_n_features,
    check_prior,
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


def safe_log(x, *, xp, overwrite=False):
    """log(x) with zeros mapped to the log of the smallest normal number.

    Keeps ``0 · log p`` finite in the matrix products (``0 · -inf`` is NaN).
    ``overwrite=True`` lets the result reuse the memory of ``x``, a
    temporary, when a read-only pass finds nothing to map.
    """
    if overwrite and float(xp.min(x)) > 0:
        return log_in_place(x, xp=xp)
    tiny = xp.finfo(x.dtype).smallest_normal
    return xp.log(xp.where(x > 0, x, xp.asarray(tiny, dtype=x.dtype, device=x.device)))


def log_posterior(jll, *, xp):
    """Normalise a joint log-likelihood (n × k) over the classes.

    The row maximum is subtracted first, so the best class is exactly 0 and
    the sum of exponentials lies in [1, k]: ``jll - logsumexp(jll)`` would
    lose the normalisation to rounding once ``|jll|`` reaches 1/ulp (about
    1e7 in float32). The log of that sum is taken in the working dtype, so a
    class whose probability rounds to 1 gets a log-probability of exactly 0
    (``predict_log_proba`` stays the log of ``predict_proba``).
    """
    top = xp.max(jll, axis=1, keepdims=True)
    shifted = jll - xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))


def log_ratio(num, den, *, xp, overwrite_num=False):
    """``safe_log(num) - safe_log(den)`` for counts ``num >= 0``.

    ``den`` is small (it broadcasts, e.g. k × 1 row totals), so the k × d work
    (finalize time on wide data) is one maximum, one log and one in-place
    subtraction: no division, which costs as much as the log.
    ``overwrite_num=True`` lets the result reuse the memory of ``num``, a
    temporary.
    """
    tiny = xp.finfo(num.dtype).smallest_normal
    if float(xp.min(num)) < tiny:  # a zero count (alpha=0): a read-only pass decides
        num = xp.maximum(num, xp.asarray(tiny, dtype=num.dtype, device=num.device))
        overwrite_num = True
    out = log_in_place(num, xp=xp) if overwrite_num else xp.log(num)
    out -= safe_log(den, xp=xp)
    return out


def log_or_neg_inf(x, *, xp):
    """log(x) with zeros mapped to -inf, without a divide-by-zero warning."""
    one = xp.ones_like(x)
    return xp.where(x > 0, xp.log(xp.where(x > 0, x, one)), -math.inf * one)


# --------------------------------------------------------------------------- #
# The estimator base class
# --------------------------------------------------------------------------- #
def dask_blockwise(method):
    """Let ``method(X)`` map over the row blocks of a Dask array ``X``, lazily.

    Any other input goes to ``method`` itself, which is what each block runs.
    """

    @functools.wraps(method)
    def wrapper(self, X):
        if is_dask_array(X):
            from ._dask import dask_map

            return dask_map(self, X, method.__name__)
        return method(self, X)

    return wrapper


def _computed(*values):
    """Dask arrays among ``values`` computed (labels or weights of in-memory ``X``)."""
    return tuple(v.compute() if is_dask_array(v) else v for v in values)


def to_namespace_tree(value, xp, device):
    """Every array inside nested dicts/tuples/lists moved to ``xp`` on ``device``."""
    if is_array(value):
        if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
            return value  # string/object labels stay on the host
        return to_namespace(value, xp, device)
    if isinstance(value, dict):
        return {k: to_namespace_tree(v, xp, device) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_namespace_tree(v, xp, device) for v in value)
    return value


def _best_scores_finite(jll, *, xp, cheap_sync):
    """Whether every row's best score is finite (a 0-d array or a bool).

    Where a synchronisation is cheap (host blocks), one sum settles the
    common case; only scores with a -inf (a class of zero prior) or bad
    input pay for the row maxima.
    """
    if cheap_sync and bool(xp.isfinite(xp.sum(jll))):
        return True
    return xp.all(xp.isfinite(xp.max(jll, axis=1)))


class _BaseNB(ClassifierMixin, BaseEstimator):
    """Base class: fitting protocol, scoring and the ``predict*`` family.

    It also owns what every model shares whatever its likelihood:
    minimum-risk decisions (``loss_matrix``, read at predict time), the
    smoothed class prior (``prior_smoothing``, :meth:`_class_prior`), the
    switch that lets NaN through validation (``missing``; the model then
    handles NaN, see ``nbgpu/_missing.py``), merging of fitted models and
    conversion to and from scikit-learn. A subclass opts in to a parameter
    by naming it in its ``__init__``; the base reads it with a default so a
    model without it keeps the plain behaviour.
    """

    # Subclasses merge these into their own constraints ({**_BaseNB._parameter_constraints, ...}).
    _parameter_constraints: dict = {
        "loss_matrix": ["array-like", None],
        "prior_smoothing": [Interval(Real, 0, None, closed="left")],
        "missing": [StrOptions({"error", "ignore"})],
    }

    # ---- hooks a model implements ------------------------------------- #
    # True where a NaN or infinity anywhere in a row of X always leaves every
    # class's score of that row non-finite: scoring then checks each row's
    # best score (n values; a legitimate score is -inf only for a class of
    # zero prior) instead of the n × d values of X.
    _nonfinite_reaches_scores = False

    def _check_values(self, X):
        """Model-specific checks of the values of ``X`` (fit and predict)."""

    def _transform(self, X, xp):
        """The model's view of the data (e.g. binarized); identity by default."""
        return X

    def _check_params_for_fit(self, n_classes, n_features):
        """Validate data-dependent parameters before any statistic is computed."""

    @property
    def _ignore_missing(self):
        """True when NaN means "missing" (``missing="ignore"``) instead of an error."""
        return getattr(self, "missing", "error") == "ignore"

    def _loss_matrix(self, n_classes):
        """The validated ``loss_matrix`` (float64 numpy, k × k) or None."""
        return check_loss_matrix(getattr(self, "loss_matrix", None), n_classes)

    def _class_prior(self, class_count, *, xp, fixed=None, name="priors", fit_prior=True):
        """``(prior, log_prior)`` of the classes, from counts or parameters.

        A fixed prior (``fixed``, the model's ``priors``/``class_prior``) is
        used as given; ``fit_prior=False`` gives the uniform prior; otherwise
        the counts are smoothed by ``prior_smoothing`` (λ):
        ``P(c) = (N_c + λ) / (N + Kλ)``, λ = 0 being the maximum-likelihood
        estimate scikit-learn uses and λ = 1 Laplace's rule of succession.
        """
        k = class_count.shape[0]
        smoothing = float(getattr(self, "prior_smoothing", 0.0))
        if not math.isfinite(smoothing):
            msg = f"`prior_smoothing` must be a finite number >= 0; got {smoothing}."
            raise ValueError(msg)
        if fixed is not None:
            if smoothing != 0.0:
                msg = (
                    f"`prior_smoothing={smoothing:g}` cannot be combined with a fixed "
                    f"`{name}`: a fixed prior is not estimated from counts, so there "
                    f"is nothing to smooth. Set prior_smoothing=0 or {name}=None."
                )
                raise ValueError(msg)
            prior = to_namespace(check_prior(fixed, k, name=name), xp, class_count.device)
            return prior, log_or_neg_inf(prior, xp=xp)
        if not fit_prior:
            return xp.full_like(class_count, 1.0 / k), xp.full_like(class_count, -math.log(k))
        smoothed = class_count + smoothing
        total = xp.sum(class_count) + k * smoothing
        return smoothed / total, log_or_neg_inf(smoothed, xp=xp) - xp.log(total)

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        raise NotImplementedError

    def _merge(self, a, b, *, xp):
        raise NotImplementedError

    def _finalize(self, stats, n_classes, *, xp, dtype):
        raise NotImplementedError

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        raise NotImplementedError

    def _score_row_bytes(self, n_features, n_classes, *, xp):
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
        if is_dask_array(X):
            from ._dask import dask_fit

            return dask_fit(self, X, y, sample_weight, None, reset=True)
        y, sample_weight = _computed(y, sample_weight)
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
        if is_dask_array(X):
            from ._dask import dask_fit

            return dask_fit(self, X, y, sample_weight, classes, reset=first)
        y, sample_weight = _computed(y, sample_weight)
        return self._fit_batch(X, y, classes, sample_weight, reset=first)

    def _fit_batch(self, X, y, classes, sample_weight, *, reset, commit=True):
        """Fit one batch; with ``commit=False`` only return its statistics.

        ``commit=False`` (a row block fitted on a Dask worker) validates and
        accumulates exactly as a fit does, then returns the statistics
        without finalizing them or changing the estimator.
        """
        self._validate_params()
        # Column names are read before check_X turns a DataFrame into an array.
        feature_names = _get_feature_names(X) if reset else _check_feature_names(self, X, reset=False)
        X, xp, device = check_X(X, estimator=self, allow_nan=self._ignore_missing)
        n_samples, n_features = X.shape
        if not reset:
            check_n_features(self, n_features, reset=False)
        self._check_values(X)
        y = check_y(y, n_samples)
        if reset:
            classes = check_classes(classes) if classes is not None else unique_labels(y)
        else:
            if classes is not None:
                check_classes_unchanged(classes, self.classes_)
            classes = self.classes_
        n_classes = classes.shape[0]
        self._check_params_for_fit(n_classes, n_features)
        self._loss_matrix(n_classes)
        codes = encode_labels(y, classes, xp=xp, device=device)
        acc = accumulation_dtype(xp, device)
        weights = check_sample_weight(sample_weight, n_samples, xp=xp, device=device, dtype=acc)
        dtype = result_dtype(X.dtype, xp, device)

        previous = None
        if not reset:
            previous = to_namespace_tree(self._stats, xp, device)
        Xt = self._transform(X, xp)
        batch = self._accumulate(Xt, codes, weights, n_classes, xp=xp, dtype=acc, previous=previous)
        stats = batch if previous is None else self._merge(previous, batch, xp=xp)
        if not commit:
            return stats
        attrs = self._finalize(stats, n_classes, xp=xp, dtype=dtype)

        # Commit: nothing above touched the estimator.
        first = (classes, n_features, feature_names) if reset else None
        self._commit(stats, attrs, float32=dtype == xp.float32, first=first)
        return self

    def _commit(self, stats, attrs, *, float32, first):
        """Store a fit's result; ``first`` is (classes, n_features, feature names) of a first fit."""
        if first is not None:
            classes, n_features, feature_names = first
            self.__dict__.pop("feature_names_in_", None)
            if feature_names is not None:
                self.feature_names_in_ = feature_names
            self.n_features_in_ = n_features
            self.classes_ = classes
        self._stats = stats
        self._fit_dtype_ = "float32" if float32 else "float64"
        self.__dict__.update(attrs)

    def _become_fitted(self, stats, classes, *, n_features, feature_names, xp, dtype):
        """Become the fitted model that ``stats`` define, with no data.

        What a first ``_fit_batch`` commits, with the fitted parameters
        finalized from the statistics: for model files, ``merge``, scikit-learn
        conversion and Dask fits.
        """
        attrs = self._finalize(stats, classes.shape[0], xp=xp, dtype=dtype)
        self._commit(stats, attrs, float32=dtype == xp.float32, first=(classes, n_features, feature_names))

    # ---- scoring ------------------------------------------------------ #
    def _check_is_fitted(self):
        if not hasattr(self, "_stats"):
            msg = (
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' "
                "with appropriate arguments before using this estimator."
            )
            raise NotFittedError(msg)

    def _validated_for_scoring(self, X, *, values=True):
        """``(X, xp, device)`` checked for scoring; ``values=False`` leaves the
        passes over the values (finiteness, ``_check_values``) to the caller."""
        self._check_is_fitted()
        _check_feature_names(self, X, reset=False)  # before X becomes an array
        X, xp, device = check_X(X, estimator=self, allow_nan=self._ignore_missing, finite=values)
        check_n_features(self, X.shape[1], reset=False)
        if values:
            self._check_values(X)
        return X, xp, device

    def _check_block_values(self, X, *, finite=True):
        if finite:
            check_finite(X, estimator=self, allow_nan=self._ignore_missing)
        self._check_values(X)

    def _jll(self, X, *, per_block=None):
        """``(jll, xp, device)``; ``per_block(jll, xp)``, if given, maps each row
        block's scores on the worker that made them (e.g. the argmax of
        ``predict``, which then runs on all cores and concatenates less)."""
        X, xp, device = self._validated_for_scoring(X, values=False)
        # The values are checked where it is cheapest: on the host, each row
        # block on the core that scores it, while it is in cache (one parallel
        # pass instead of serial passes over X); on a device, all of X at once
        # (one synchronisation, not one per block). A model whose scores turn
        # non-finite with X checks its scores instead (see above).
        in_blocks = blocks_on_host_threads(xp)
        from_scores = self._nonfinite_reaches_scores and not self._ignore_missing
        if not in_blocks:
            self._check_block_values(X, finite=not from_scores)
        dtype = result_dtype(X.dtype, xp, device)

        def block(start, stop):
            Xb = X[start:stop, ...]
            if in_blocks:
                self._check_block_values(Xb, finite=not from_scores)
            # With from_scores, a NaN in X is reported below, as an error.
            with float_warnings_off() if from_scores else contextlib.nullcontext():
                jll = self._joint_log_likelihood(self._transform(Xb, xp), xp=xp, device=device, dtype=dtype)
            finite = _best_scores_finite(jll, xp=xp, cheap_sync=in_blocks) if from_scores else True
            return (jll if per_block is None else per_block(jll, xp)), finite

        row_bytes = self._score_row_bytes(X.shape[1], self.classes_.shape[0], xp=xp)
        results = map_row_blocks(block, X.shape[0], row_bytes, xp=xp)
        flags = [finite for _, finite in results if finite is not True]
        if flags and not bool(xp.all(xp.stack(flags))):  # one synchronisation
            check_finite(X, estimator=self)  # raises on a NaN or infinity in X
            msg = (
                f"{type(self).__name__}: the joint log-likelihood is not finite for some "
                f"samples (values of X too large for {X.dtype})."
            )
            warnings.warn(msg, RuntimeWarning, stacklevel=3)
        parts = [part for part, _ in results]
        jll = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        return jll, xp, device

    def _params(self, names, *, xp, device, dtype):
        """Fitted arrays as ``dtype`` on the scoring namespace and device."""
        out = []
        for name in names:
            a = to_namespace(getattr(self, name), xp, device)
            out.append(a if a.dtype == dtype else xp.astype(a, dtype))
        return out

    @dask_blockwise
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

    @dask_blockwise
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

    @dask_blockwise
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

    @dask_blockwise
    def predict(self, X):
        """The class of least expected loss of every sample.

        With ``loss_matrix=None`` (the 0-1 loss) that is the most probable
        class; otherwise the class ``c_i`` minimising the conditional risk
        ``R(c_i|x) = Σ_j loss_matrix[i, j] P(c_j|x)`` (see :meth:`predict_risk`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : array of shape (n_samples,)
            Labels from ``classes_``: in the namespace and on the device of
            ``X`` when labels are numbers, a numpy array otherwise (strings).
        """
        if getattr(self, "loss_matrix", None) is None:
            best, xp, device = self._jll(X, per_block=lambda jll, xp: xp.argmax(jll, axis=1))
            return self._labels_of(best, xp=xp, device=device)
        risk, xp, device = self._risk(X)
        return self._labels_of(xp.argmin(risk, axis=1), xp=xp, device=device)

    @dask_blockwise
    def predict_risk(self, X):
        """Conditional risk (expected loss) of deciding each class.

        ``risk[n, i] = Σ_j loss_matrix[i, j] P(classes_[j] | X[n])``, i.e.
        ``predict_proba(X) @ loss_matrix.T``; ``predict`` returns the class
        of least risk. With ``loss_matrix=None`` the 0-1 loss is used, so the
        risk is ``1 - predict_proba(X)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        risk : array of shape (n_samples, n_classes)
            In the namespace, device and float dtype of the scores; columns
            follow ``classes_``.

        Examples
        --------
        >>> import numpy as np
        >>> from nbgpu import GaussianNB
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> y = np.array([0, 0, 1, 1])
        >>> # Missing class 1 costs ten times more than a false alarm.
        >>> nb = GaussianNB(loss_matrix=[[0, 10], [1, 0]]).fit(X, y)
        >>> nb.predict_proba([[1.3]]).round(3)
        array([[0.832, 0.168]])
        >>> nb.predict_risk([[1.3]]).round(3)
        array([[1.68 , 0.832]])
        >>> nb.predict([[1.3]])
        array([1])
        """
        return self._risk(X)[0]

    def _risk(self, X):
        self._check_is_fitted()
        k = self.classes_.shape[0]
        loss = self._loss_matrix(k)
        if loss is None:
            loss = 1.0 - np.eye(k)
        jll, xp, device = self._jll(X)
        proba = xp.exp(log_posterior(jll, xp=xp))
        loss = xp.asarray(loss, dtype=proba.dtype, device=device)
        return proba @ loss.T, xp, device

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

        if is_dask_array(X):
            from ._dask import dask_score

            return dask_score(self, X, y, sample_weight)
        y, sample_weight = _computed(y, sample_weight)
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

        params = self.get_params(deep=False)
        for name, value in list(vars(self).items()):
            if name not in params:
                self.__dict__[name] = to_namespace_tree(value, xp, device)
        return self

    # ---- merging and exchange ------------------------------------------ #

    def merge(self, other):
        """The model fitted on the union of the data of ``self`` and ``other``.

        Both models must be of the same class, with the same parameters,
        classes and features, fitted on disjoint data (a row seen by both
        would count twice). Their statistics are merged exactly as
        ``partial_fit`` merges batches, so ``a.merge(b)`` equals one fit on
        the concatenated data (up to floating-point rounding of the Gaussian
        moments).

        Parameters
        ----------
        other : estimator
            A fitted estimator of the same class and parameters; it may live
            in another namespace or on another device.

        Returns
        -------
        merged : estimator
            A new fitted estimator in the namespace, on the device and with
            the score dtype of ``self``; neither ``self`` nor ``other`` is
            changed.

        Examples
        --------
        >>> import numpy as np
        >>> from nbgpu import MultinomialNB
        >>> X = np.array([[2, 0], [3, 1], [0, 4], [1, 3]])
        >>> y = np.array([0, 0, 1, 1])
        >>> a = MultinomialNB().fit(X[::2], y[::2])
        >>> b = MultinomialNB().fit(X[1::2], y[1::2])
        >>> a.merge(b).feature_count_
        array([[5., 1.],
               [1., 7.]])
        """
        from ._interchange import merge_models

        return merge_models(self, other)

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
        from ._interchange import to_sklearn

        return to_sklearn(self)

    @classmethod
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
        from ._interchange import from_sklearn

        return from_sklearn(cls, estimator, **params)

    # ---- scikit-learn integration -------------------------------------- #
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self._ignore_missing
        tags.array_api_support = True
        return tags
