"""Gaussian naive Bayes."""

from __future__ import annotations

import functools
import math
from numbers import Real

import numpy as np
from .._estimator.params import Interval

from .._array.blocks import host_fit_block_bytes, map_row_blocks
from .._array import sums
from .._array.class_sums import class_sums, class_totals
from .._array.namespace import accumulation_dtype, is_sparse, to_numpy
from .._array.numerics import chan_merge, nonzero, product_operand, scoring_weights
from .._array.sparse import sparse_matmul, sparse_with_values
from .._estimator.base import _BaseNB, class_prior, fitted_parameter
from .._estimator.traits import replace
from .._estimator.docs import shared_parameters_doc
from .._estimator.missing import drop_missing, observed_weights, split_missing
from .._estimator.statistics_checks import (
    check_array,
    check_keys,
    check_not_below,
    check_part_of,
    check_prior_smoothing,
    check_sum_of,
    check_tuple,
)


def _pooled(count, mean, m2, *, xp):
    """(weight, mean, M2) of the union of the classes, from theirs (exact); the
    weight is (1,) for a ``count`` of (k, 1), (d,) for (k, d) (missing values)."""
    n = xp.sum(count, axis=0)
    mu = xp.sum(count * mean, axis=0) / nonzero(n, xp=xp)
    delta = mean - mu
    return n, mu, xp.sum(m2, axis=0) + xp.sum(count * delta * delta, axis=0)


# The largest rounding error (in nats) of a score the expanded form may have in float32.
_SCORE_TOLERANCE = 1e-4


def _cancelled(offset, precision, *, xp):
    """max over classes of Σⱼ P(μ − s)²: the size of the terms that cancel near a class's mean."""
    return xp.max(xp.sum(offset * offset * precision, axis=1))


def _float32_inexact(cancelled):
    return float(np.finfo(np.float32).eps) * cancelled > _SCORE_TOLERANCE


@shared_parameters_doc("prior_smoothing", "loss_matrix", "missing")
class GaussianNB(_BaseNB):
    """Gaussian naive Bayes, on CPU or GPU, dense or sparse input.

    Each class has a normal distribution per feature with its own mean and
    variance. Same parameters, attributes and results as
    :class:`sklearn.naive_bayes.GaussianNB`, with three differences that are
    fixes: ``partial_fit`` in any chunking gives exactly the model ``fit``
    gives (``epsilon_`` is derived from the variance of all data seen, not of
    the last batch); ``epsilon_`` uses the weighted variance, so an integer
    ``sample_weight`` is exactly repeated rows and a zero weight a dropped
    row; and sparse input is accepted without densifying it.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes. If given they are not adjusted to
        the data. Must be non-negative and sum to 1.
    var_smoothing : float, default=1e-9
        Portion of the largest variance of all features added to every
        variance, for numerical stability.
    {shared_parameters}

    Attributes
    ----------
    class_count_ : array of shape (n_classes,)
        Weighted number of training samples per class (float64, exact).
    class_prior_ : array of shape (n_classes,)
        Probability of each class.
    classes_ : array of shape (n_classes,)
        Class labels.
    epsilon_ : float
        Absolute additive value to variances.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (string column names only).
    theta_ : array of shape (n_classes, n_features)
        Mean of each feature per class.
    var_ : array of shape (n_classes, n_features)
        Variance of each feature per class.

    See Also
    --------
    NormalBayesClassifier : one full covariance matrix per class.
    sklearn.naive_bayes.GaussianNB : the scikit-learn reference.

    Notes
    -----
    The joint log-likelihood ``-½ Σⱼ (xⱼ - μⱼ)² / σⱼ²`` is expanded into
    matrix products, so no ``n × k × d`` tensor is built. The inputs are
    centred where that keeps float32 accurate (a feature's mean far larger
    than its spread); where the expanded terms would still cancel beyond
    float32's precision (classes of tiny spread far from the others, such as
    a pixel constant in one class), float32 input is scored in float64 and
    the scores returned in float32.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import GaussianNB
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> y = np.array([1, 1, 1, 2, 2, 2])
    >>> GaussianNB().fit(X, y).predict([[-0.8, -1]])
    array([1])
    """

    _param_constraints: dict = {
        **_BaseNB._param_constraints,
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
    }

    _traits = replace(
        _BaseNB._traits,
        class_axis_statistics=("class_count", "per_class"),  # "total" pools all classes
        product_operands=("_quad_", "_lin_", "_terms_"),
        # x enters the scores as x² times -1/(2σ²) and x times a finite weight;
        # NaN·w, ±inf·w and inf·0 are all non-finite, so a NaN or infinity in a
        # row leaves every class's score of that row non-finite.
        nonfinite_reaches_scores=True,
    )
    # Fitted parameters (``_finalize``), made at a fit or at their first read.
    theta_ = fitted_parameter()
    var_ = fitted_parameter()
    class_count_ = fitted_parameter()
    class_prior_ = fitted_parameter()
    epsilon_ = fitted_parameter()
    _shift_ = fitted_parameter()
    _centred_ = fitted_parameter()
    _cancelled_ = fitted_parameter()
    _quad_ = fitted_parameter()
    _lin_ = fitted_parameter()
    _const_ = fitted_parameter()
    _terms_ = fitted_parameter()
    _sklearn_counterpart = ("GaussianNB", ("class_count_", "class_prior_", "theta_", "var_", "epsilon_"))

    def __init__(self, *, priors=None, var_smoothing=1e-9, prior_smoothing=0.0, loss_matrix=None,
                 missing="error"):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix
        self.missing = missing

    # ---- statistics ---------------------------------------------------- #
    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        check_keys(stats, ["class_count", "per_class", "total"])
        k, d = n_classes, n_features
        # (weight, mean, M2) per class and of all rows; a weight per feature
        # where values were missing. Signs within a tolerance: observed weights
        # are differences of sums, which rounding may leave a hair below 0.
        shapes = {"per_class": ([(k, 1), (k, d)], (k, d)), "total": ([(1,), (d,)], (d,))}
        for key, (n_shapes, moment) in shapes.items():
            weight, mean, m2 = check_tuple(stats[key], 3, key)
            check_array(weight, f"{key}.0", n_shapes, values=values)
            check_array(mean, f"{key}.1", [moment], values=values)
            check_array(m2, f"{key}.2", [moment], values=values)
        if values:
            with np.errstate(over="ignore", invalid="ignore"):  # products of finite values may overflow: no contradiction
                self._check_moments(stats)

    def _check_moments(self, stats):
        """Signs and totals: the class weights bound the observed ones ((k, 1): nothing missing, equal), the pooled
        moments are those of the classes together, sums of squared deviations are >= 0."""
        cc = stats["class_count"]
        check_prior_smoothing(self, cc)
        (count, mean, m2), (n_all, mean_all, m2_all) = stats["per_class"], stats["total"]
        check_part_of(count, "per_class.0", cc[:, None], "class_count", equal=count.shape[1] == 1,
                      what="the class weights less those of missing values")
        # The pooled weights and means are those of the classes together.
        check_sum_of(n_all, "total.0", count, "per_class.0")
        check_sum_of(n_all * mean_all, "total.0 × total.1", count * mean, "per_class.0 × per_class.1")
        # Sums of weighted squares: rounding of a weight a hair below 0 leaves at most a hair of n μ² below 0.
        check_not_below(m2, "per_class.2", np.abs(cc[:, None]) * mean * mean, what="a sum of squared deviations")
        check_not_below(m2_all, "total.2", np.sum(np.abs(cc)) * mean_all * mean_all, what="a sum of squared deviations")

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        if is_sparse(X):
            return self._with_total(self._moments(X, codes, weights, n_classes, xp=xp, dtype=dtype), xp=xp)

        if sums.shifts_moments(xp, self._ignore_missing):
            rows, mean, m2 = sums.shifted_class_moments(X, codes, weights, n_classes, xp=xp, dtype=dtype)
            return self._with_total({"class_count": rows, "per_class": (xp.reshape(rows, (-1, 1)), mean, m2)}, xp=xp)

        def block(start, stop):
            wb = None if weights is None else weights[start:stop]
            Xb = xp.astype(X[start:stop, :], dtype)
            return self._moments(Xb, codes[start:stop], wb, n_classes, xp=xp, dtype=dtype)

        # Blocks in parallel on the CPU, each upcast to float64 on its own.
        row_bytes = 8 * ((4 if self._ignore_missing else 3) * X.shape[1] + n_classes)
        parts = map_row_blocks(block, X.shape[0], row_bytes, xp=xp, host_budget=host_fit_block_bytes())
        return self._with_total(functools.reduce(lambda a, b: self._merge(a, b, xp=xp), parts), xp=xp)

    @staticmethod
    def _with_total(stats, *, xp):
        """``stats`` with the weighted moments of all rows (epsilon_ and the scoring shift),
        pooled from the classes' once per batch: an integer weight acts as repeated rows."""
        return {**stats, "total": _pooled(*stats["per_class"], xp=xp)}

    def _moments(self, X, codes, weights, n_classes, *, xp, dtype):
        """Statistics of one block: dense in two passes (means, then residuals);
        sparse from sums S and sums of squares Q, M2 = Q - S²/W, so X stays sparse."""
        X, miss = split_missing(X, xp=xp) if self._ignore_missing else (X, None)
        rows = class_totals(codes, weights, n_classes, dtype=dtype, xp=xp)
        count = observed_weights(rows, miss, codes, weights, n_classes, xp=xp, dtype=dtype)
        plain = class_sums(X, codes, weights, n_classes, xp=xp, dtype=dtype)
        mean = plain / nonzero(count, xp=xp)
        m2 = sums.centred_class_sums(X, codes, weights, n_classes, mean, plain, xp=xp, dtype=dtype, missing=miss)
        return {"class_count": rows, "per_class": (count, mean, m2)}

    def _merge(self, a, b, *, xp):
        # (A batch's blocks have no "total" yet: _with_total pools it once.)
        return {
            "class_count": a["class_count"] + b["class_count"],
            **{key: chan_merge(a[key], b[key], xp=xp) for key in ("per_class", "total") if key in a},
        }

    def _finalize(self, stats, classes, params, *, xp, dtype):
        rows = stats["class_count"]
        count, mean, m2 = stats["per_class"]
        n_all, mean_all, m2_all = stats["total"]
        epsilon = params.var_smoothing * xp.max(m2_all / nonzero(n_all, xp=xp))
        var = m2 / nonzero(count, xp=xp) + epsilon
        # A zero variance (every row seen so far identical, or var_smoothing=0
        # on a feature constant in a class) would make the likelihood
        # infinite: floor it at an ulp of the feature's magnitude.
        floor = xp.finfo(dtype).eps * (1.0 + mean_all * mean_all)
        var = xp.where(var > 0, var, xp.broadcast_to(floor, var.shape))
        prior, log_prior = class_prior(self, rows, params, xp=xp)
        # Scoring expands the quadratic form around a shift s, so its terms are
        # of size P(μ − s)² (P = 1/σ²) and cancel near a class's mean: rounding
        # leaves an error of about eps · max_c Σⱼ P(μ − s)² (``_cancelled``).
        # s is the precision-weighted mean of the class means (classes of small
        # spread weigh most), rounded to the score dtype (exactly what scoring
        # subtracts); zero (one pass over X fewer) unless it halves the error.
        # Sparse input is expanded around zero (centring would densify it).
        precision = 1.0 / var
        weight = xp.where(count > 0, precision, xp.zeros_like(precision))
        weighted = xp.sum(weight * mean, axis=0) / nonzero(xp.sum(weight, axis=0), xp=xp)
        weighted = xp.astype(xp.astype(weighted, dtype), mean.dtype)
        # One read back for the three numbers the host needs (on a device, a synchronisation).
        errors = [_cancelled(mean - s, precision, xp=xp) for s in (0.0, weighted)]
        at_zero, at_shift, epsilon = to_numpy(xp.stack([*errors, xp.astype(epsilon, errors[0].dtype)])).tolist()
        centred = at_shift < at_zero / 2
        shift = weighted if centred else xp.zeros_like(weighted)
        # Where that error would exceed _SCORE_TOLERANCE in float32, float32 input is
        # scored in float64 (the parameters kept in float64 for it): a class of tiny
        # spread far from the shift (a pixel constant in one class) otherwise loses its
        # own points to rounding.
        cancelled = (min(at_zero, at_shift), at_zero)  # dense, sparse
        wide = _float32_inexact(max(cancelled))
        score_dtype = accumulation_dtype(xp, mean.device) if wide else dtype
        offset = mean - shift
        terms = -0.5 * xp.log(2.0 * math.pi * var) - 0.5 * offset * offset * precision
        const = log_prior + xp.sum(terms, axis=1)
        return {
            "theta_": xp.astype(mean, dtype),
            "var_": xp.astype(var, dtype),
            "class_count_": rows,
            "class_prior_": xp.astype(prior, dtype),
            "epsilon_": epsilon,
            "_shift_": xp.astype(shift, score_dtype),
            "_centred_": centred,
            "_cancelled_": cancelled,
            "_quad_": scoring_weights(-0.5 * precision, score_dtype, xp=xp),
            "_lin_": scoring_weights(offset * precision, score_dtype, xp=xp),
            "_const_": xp.astype(const, score_dtype),
            "_terms_": xp.astype(terms.T, score_dtype),
        }

    @classmethod
    def _stats_from_sklearn(cls, est):
        """Statistics rebuilt from a fitted scikit-learn GaussianNB."""
        count = np.asarray(est.class_count_, dtype=np.float64)
        mean = np.asarray(est.theta_, dtype=np.float64)
        m2 = (np.asarray(est.var_, dtype=np.float64) - est.epsilon_) * count[:, None]
        # scikit-learn keeps no moments of all rows: pool the classes (exact for
        # an unweighted fit), then scale so that var_smoothing reproduces its
        # epsilon_ exactly (it may come from a first partial_fit batch only).
        n, mean_all, m2_all = _pooled(count[:, None], mean, m2, xp=np)
        implied = est.var_smoothing * np.max(m2_all / n)
        if implied > 0 and est.epsilon_ > 0:
            m2_all = m2_all * (est.epsilon_ / implied)
        return {"class_count": count, "per_class": (count[:, None], mean, m2), "total": (n, mean_all, m2_all)}

    # ---- scoring ------------------------------------------------------- #
    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        per_feature = 3 if self._ignore_missing else 2  # + the missing-value indicator
        return 8 * (per_feature * (n_features if stored is None else stored) + n_classes)

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        cancelled = self._cancelled_[1 if is_sparse(X) else 0]
        if dtype == xp.float32 and _float32_inexact(cancelled):
            work = accumulation_dtype(xp, device)
            X = sparse_with_values(X, xp.astype(X.data, work)) if is_sparse(X) else xp.astype(X, work)
            return xp.astype(self._joint_log_likelihood(X, xp=xp, device=device, dtype=work), dtype)
        shift, quad, lin, const, terms = self._fitted_arrays(
            ("_shift_", "_quad_", "_lin_", "_const_", "_terms_"), xp=xp, device=device, dtype=dtype
        )
        if quad.shape[0] != X.shape[1]:  # centring would broadcast silently
            msg = f"X has {X.shape[1]} features but the fitted moments have {quad.shape[0]}."
            raise ValueError(msg)
        if is_sparse(X):
            # Centring would densify X, so expand around zero instead:
            # with c = x - s, -½c²P + cA = -½x²P + x(A + sP) - ½s²P - sA.
            X, miss = split_missing(X, xp=xp) if self._ignore_missing else (X, None)
            s = xp.reshape(shift, (-1, 1))
            lin_u = lin - 2.0 * quad * s
            const_u = const + shift @ (quad * s) - shift @ lin
            values = X.data
            sq = sparse_with_values(X, xp.square(values))
            jll = sparse_matmul(sq, quad) + sparse_matmul(X, product_operand(lin_u, xp=xp)) + const_u
            # A missing entry was scored as x = 0: drop that term.
            return drop_missing(jll, miss, terms + quad * s * s - lin * s, xp=xp)
        Xc = X - shift if self._centred_ else X
        # A missing value is scored at the shift: drop its `terms`.
        Xc, miss = split_missing(Xc, xp=xp) if self._ignore_missing else (Xc, None)
        # Two products on the centred block, no (n, 2d) concatenation; the square
        # reads Xc once (Xc * Xc reads it as two operands).
        jll = xp.square(Xc) @ quad
        jll += Xc @ lin
        jll += const
        return drop_missing(jll, miss, terms, xp=xp)
