"""Nonparametric naive Bayes: a one-dimensional kernel density per class and feature.

The model of R's ``naivebayes`` (``usekernel=TRUE``), Weka's NaiveBayes ``-K`` and MATLAB's
``fitcnb`` with a kernel distribution. Its statistics are the training points themselves
(with their classes and weights); merging concatenates them, so ``partial_fit``, ``merge``,
model files and Dask work as for every other model.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from .._estimator.params import Interval, Options

from .._array.class_sums import class_totals
from .._array.numerics import log_or_neg_inf, logsumexp_last, nonzero
from .._estimator.base import _BaseNB, class_prior, fitted_parameter
from .._estimator.traits import ByParameters, replace
from .._estimator.base_measure import least_excluded
from .._estimator.docs import shared_parameters_doc
from .._estimator.statistics_checks import check_array, check_keys, check_part_of, check_prior_smoothing

# log K(u) of the 1-D kernels, normalised to integrate to 1 (scikit-learn's
# KernelDensity kernels in one dimension); the compact ones are zero for |u| >= 1.
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")


def _log_kernel(u, kernel, *, xp):
    if kernel == "gaussian":
        return -0.5 * (u * u) - _HALF_LOG_2PI
    a = xp.abs(u)
    if kernel == "exponential":
        return -a - math.log(2.0)
    inside = a < 1.0
    if kernel == "tophat":
        value = xp.full_like(u, 0.5)
    elif kernel == "epanechnikov":
        value = 0.75 * (1.0 - u * u)
    elif kernel == "linear":
        value = 1.0 - a
    else:  # cosine
        value = (math.pi / 4.0) * xp.cos((0.5 * math.pi) * u)
    return log_or_neg_inf(xp.where(inside, value, xp.zeros_like(value)), xp=xp)


def _weighted_spread(values, w, observed, *, xp):
    """(weight, unbiased variance) of every column of ``values`` (..., m, d) with entry weights
    ``w`` (repetitions of a row), the entries not ``observed`` left out."""
    n = xp.sum(w, axis=-2)
    mean = xp.sum(w * values, axis=-2) / nonzero(n, xp=xp)
    dev = xp.where(observed, values - mean[..., None, :], xp.zeros_like(values))
    m2 = xp.sum(w * dev * dev, axis=-2)
    var = xp.where(n > 1, m2 / xp.where(n > 1, n - 1.0, xp.ones_like(n)), xp.zeros_like(n))
    return n, var


@shared_parameters_doc("prior_smoothing", "loss_matrix", "missing")
class KernelDensityNB(_BaseNB):
    """Naive Bayes with a kernel density estimate per class and feature.

    Each class ``c`` models feature ``j`` by the weighted kernel density of
    its training values ``t_i`` (weights ``w_i``, total ``W_cj``) with
    bandwidth ``h_cj``::

        f_cj(x) = 1 / (W_cj h_cj) · Σ_i w_i K((x − t_i) / h_cj),
        log P(x, c) = log P(c) + Σ_j log f_cj(x_j),

    so ``predict_joint_log_proba`` is the sum over features of
    ``sklearn.neighbors.KernelDensity(bandwidth=h_cj, kernel=kernel)
    .score_samples`` per class plus the log prior. Suited to features whose
    class-conditional distribution is skewed or multi-modal, where
    GaussianNB's single normal fits badly.

    Scoring is exact (no binning or tree approximation) and batched: for a
    block of rows and one feature, a (rows × classes × training points)
    array of kernel values is reduced by a log-sum-exp, on any backend. Its
    cost grows with the number of training points; subsample large
    training sets.

    Parameters
    ----------
    bandwidth : float > 0 or {"scott", "silverman"}, default=1.0
        One bandwidth for every class and feature, or a rule giving one per
        class and feature from the class's values of the feature (standard
        deviation ``σ``, total weight ``n``; as scipy.stats.gaussian_kde in
        one dimension): Scott ``h = σ n^(−1/5)``, Silverman
        ``h = σ (3n/4)^(−1/5)``. Where a class has a single value or no
        spread, ``σ`` is the feature's over all classes (1 if that is zero
        too). The rules suit unscaled data; a float suits standardised data.
    kernel : {"gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"}, default="gaussian"
        The kernel ``K``, as in :class:`sklearn.neighbors.KernelDensity`.
        With a compact kernel a value farther than ``h`` from every training
        value of a class has density 0 there (log-likelihood −inf). Where every
        class has density 0 at some feature of a sample, the posterior is
        the limit of densities floored at ε as ε → 0 (R naivebayes'
        ``threshold``): the classes with the fewest such features, weighed by
        their other features; ``predict_joint_log_proba`` stays −inf there.
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes; not adjusted to the data.
    {shared_parameters}

    Attributes
    ----------
    bandwidth_ : array of shape (n_classes, n_features)
        The bandwidth ``h_cj`` used for every class and feature.
    class_count_ : array of shape (n_classes,)
        Weighted number of training samples per class.
    class_prior_ : array of shape (n_classes,)
        Probability of each class.
    classes_ : array of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    GaussianNB : one normal distribution per class and feature.
    sklearn.neighbors.KernelDensity : the density of one class and feature.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import KernelDensityNB
    >>> X = np.array([[-3.0], [-2.9], [3.0], [3.1], [0.0], [0.1]])
    >>> y = np.array([0, 0, 0, 0, 1, 1])
    >>> KernelDensityNB(bandwidth=0.5).fit(X, y).predict([[-3.0], [0.05], [2.9]])
    array([0, 1, 0])
    """

    # The training points themselves (NaN marks a missing value), kept, not summed; densities
    # with a base measure (the support) that excludes points where the kernel is compact.
    _traits = ByParameters(
        replace(
            _BaseNB._traits, raw_statistics=("points",), sums_show_nonfinite=False, has_base_measure=True,
            dense_only_message=(
                "KernelDensityNB does not accept sparse input: its statistics are the "
                "training values themselves, kept dense. Convert with X.toarray()."
            ),
        ),
        lambda model, traits: replace(traits, excludes=model.kernel not in ("gaussian", "exponential")),
    )
    # Fitted parameters (``_finalize``), made at a fit or at their first read.
    bandwidth_ = fitted_parameter()
    class_count_ = fitted_parameter()
    class_prior_ = fitted_parameter()
    _points_ = fitted_parameter()
    _log_weights_ = fitted_parameter()
    _log_norm_ = fitted_parameter()
    _log_prior_ = fitted_parameter()
    _has_values_ = fitted_parameter()

    _param_constraints: dict = {
        **_BaseNB._param_constraints,
        "bandwidth": [Interval(Real, 0, None, closed="neither"), Options({"scott", "silverman"})],
        "kernel": [Options(set(KERNELS))],
        "priors": ["array-like", None],
    }

    def __init__(self, *, bandwidth=1.0, kernel="gaussian", priors=None, prior_smoothing=0.0, loss_matrix=None,
                 missing="error"):
        self.bandwidth = bandwidth
        self.kernel = kernel
        self.priors = priors
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix
        self.missing = missing

    # ---- statistics ---------------------------------------------------- #
    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        check_keys(stats, ["class_count", "points", "codes", "weights"])
        points = check_array(stats["points"], "points", [(None, n_features)], values=False)  # NaN: missing
        n = points.shape[0]
        codes = check_array(stats["codes"], "codes", [(n,)], values=values, kinds="i")
        weights = check_array(stats["weights"], "weights", [(n,)], values=values, non_negative=True)
        if not values:
            return
        if np.isinf(points).any():
            raise ValueError("statistics entry 'points' holds infinity; expected training values (NaN: missing)")
        if n and (codes.min() < 0 or codes.max() >= n_classes):
            msg = f"statistics entry 'codes' holds {codes.min()} to {codes.max()}; expected class indices 0 to {n_classes - 1}"
            raise ValueError(msg)
        # Each class weighs what its points weigh.
        check_part_of(stats["class_count"], "class_count", np.bincount(codes, weights, minlength=n_classes),
                      "the sum of 'weights' of the class's points", equal=True, what="the weights of the class's rows")
        check_prior_smoothing(self, stats["class_count"])

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        points = xp.astype(X, dtype, copy=True)
        if weights is None:
            weights = xp.ones(points.shape[0], dtype=dtype, device=points.device)
        return {
            "class_count": class_totals(codes, weights, n_classes, dtype=dtype, xp=xp),
            "points": points,
            "codes": codes,
            "weights": xp.astype(weights, dtype, copy=True),
        }

    def _merge(self, a, b, *, xp):
        return {
            "class_count": a["class_count"] + b["class_count"],
            **{key: xp.concat([a[key], b[key]], axis=0) for key in ("points", "codes", "weights")},
        }

    def _statistics_for_classes(self, stats, index, n_classes, *, xp):
        # Every training point carries its class index: renumber them too.
        out = super()._statistics_for_classes(stats, index, n_classes, xp=xp)
        codes = stats["codes"]
        out["codes"] = xp.take(xp.asarray(index, dtype=codes.dtype, device=codes.device), codes, axis=0)
        return out

    def _padded(self, stats, n_classes, *, xp):
        """Points (k, m, d) and weights (k, m) per class, padded with weight 0
        to the largest class (the m-th point of class c is its m-th point)."""
        points, codes, weights = stats["points"], stats["codes"], stats["weights"]
        n, d = points.shape
        order = xp.argsort(codes, stable=True)
        classes = xp.arange(n_classes, dtype=codes.dtype, device=codes.device)
        counts = xp.sum(xp.astype(xp.reshape(codes, (-1, 1)) == classes, xp.int64), axis=0)
        m = max(int(xp.max(counts)), 1)
        starts = xp.cumulative_sum(counts) - counts
        # Cell (c, s) holds the s-th point of class c in class order, or the
        # pad (index n) past the class's count: a gather, no scatter.
        slot = xp.arange(m, dtype=xp.int64, device=codes.device)
        sorted_index = starts[:, None] + slot[None, :]
        sorted_index = xp.minimum(sorted_index, xp.full_like(sorted_index, n - 1))  # not clip (syncs on cupy)
        gathered = xp.reshape(xp.take(order, xp.reshape(sorted_index, (-1,))), (n_classes, m))
        source = xp.where(slot[None, :] < counts[:, None], gathered, xp.full_like(gathered, n))
        source = xp.reshape(source, (-1,))
        nan_row = xp.full((1, d), math.nan, dtype=points.dtype, device=points.device)
        pad_points = xp.concat([points, nan_row], axis=0)
        pad_weights = xp.concat([weights, xp.zeros(1, dtype=weights.dtype, device=weights.device)], axis=0)
        grid_points = xp.reshape(xp.take(pad_points, source, axis=0), (n_classes, m, d))
        grid_weights = xp.reshape(xp.take(pad_weights, source, axis=0), (n_classes, m))
        return grid_points, grid_weights

    @staticmethod
    def _bandwidth(bandwidth, values, w, observed, *, xp):
        """h (k × d): the float ``bandwidth`` for all, or its rule per class and feature."""
        k, _, d = values.shape
        if not isinstance(bandwidth, str):
            return xp.full((k, d), float(bandwidth), dtype=values.dtype, device=values.device)
        n, var = _weighted_spread(values, w, observed, xp=xp)
        _, pooled = _weighted_spread(*(xp.reshape(a, (1, -1, d)) for a in (values, w, observed)), xp=xp)
        var = xp.where(var > 0, var, xp.broadcast_to(nonzero(pooled, xp=xp), var.shape))
        n = nonzero(n, xp=xp)
        factor = n ** (-0.2) if bandwidth == "scott" else (0.75 * n) ** (-0.2)
        return factor * xp.sqrt(var)

    def _finalize(self, stats, classes, params, *, xp, dtype):
        points, weights = self._padded(stats, classes.shape[0], xp=xp)
        observed = ~xp.isnan(points)
        w = xp.where(observed, weights[..., None], xp.zeros_like(points))
        values = xp.where(observed, points, xp.zeros_like(points))
        h = self._bandwidth(params.bandwidth, values, w, observed, xp=xp)
        total = xp.sum(w, axis=1)
        # A class without a value of a feature: a flat term 0 (the feature is
        # left out for it), as for a missing test value.
        log_norm = xp.where(total > 0, log_or_neg_inf(total, xp=xp) + xp.log(h), xp.zeros_like(total))
        prior, log_prior = class_prior(self, stats["class_count"], params, xp=xp)
        return {
            "bandwidth_": xp.astype(h, dtype),
            "class_count_": stats["class_count"],
            "class_prior_": xp.astype(prior, dtype),
            "_points_": xp.astype(values, dtype),
            "_log_weights_": xp.astype(log_or_neg_inf(w, xp=xp), dtype),
            "_log_norm_": xp.astype(log_norm, dtype),
            "_log_prior_": xp.astype(log_prior, dtype),
            "_has_values_": total > 0,
        }

    # ---- scoring ------------------------------------------------------- #
    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        m = self._points_.shape[1]
        return 8 * (4 * n_classes * m + n_features + n_classes)

    def _class_free_log(self, X, *, xp, device, dtype):
        """No class-independent factor but the support (the trait ``excludes``)."""
        return xp.zeros((X.shape[0], 1), dtype=dtype, device=device)

    def _excluded_and_joint(self, X, *, xp, device, dtype, scores=True):
        """``(z, s)`` (n × k): per class the number of features of density 0 at a
        row, and the log prior plus the log densities of its other features."""
        points, log_w, log_norm, log_prior, bandwidth, has_values = self._fitted_arrays(
            ("_points_", "_log_weights_", "_log_norm_", "_log_prior_", "bandwidth_", "_has_values_"),
            xp=xp, device=device, dtype=dtype,
        )
        has_values = has_values > 0
        n, d = X.shape
        s = xp.zeros((n, points.shape[0]), dtype=dtype, device=device) + log_prior
        # A class of prior 0 is never chosen, whatever its densities.
        z = xp.where(xp.isinf(s), xp.full_like(s, math.inf), xp.zeros_like(s))
        for j in range(d):
            x = X[:, j]
            u = (xp.reshape(x, (-1, 1, 1)) - points[None, :, :, j]) / bandwidth[None, :, j, None]
            term = logsumexp_last(_log_kernel(u, self.kernel, xp=xp) + log_w[None, :, :, j], xp=xp)
            term = xp.where(has_values[None, :, j], term - log_norm[None, :, j], xp.zeros_like(term))
            if self._ignore_missing:
                term = xp.where(xp.isnan(xp.reshape(x, (-1, 1))), xp.zeros_like(term), term)
            excluded = term == -math.inf
            z = z + xp.astype(excluded, dtype)
            s = s + xp.where(excluded, xp.zeros_like(term), term)
        return z, s

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        return least_excluded(*self._excluded_and_joint(X, xp=xp, device=device, dtype=dtype), xp=xp)
