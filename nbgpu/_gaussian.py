"""Gaussian naive Bayes."""

from __future__ import annotations

import math
from numbers import Real

from sklearn.utils._param_validation import Interval

from ._backend import (
    contiguous,
    is_sparse,
    sparse_class_sums,
    sparse_matmul,
    sparse_with_values,
    to_namespace,
)
from ._base import _BaseNB, class_totals, log_or_neg_inf, onehot, row_blocks
from ._validation import check_prior


def chan_merge(a, b, *, xp):
    """Merge (weight, mean, sum of squared deviations) of two disjoint sets.

    Chan, Golub & LeVeque's pairwise update: exact, and stable because it
    never subtracts large sums of squares. Works elementwise on any shapes
    that broadcast (``n`` has one dimension less than ``mean``).
    """
    n_a, mu_a, m2_a = a
    n_b, mu_b, m2_b = b
    n = n_a + n_b
    safe = xp.where(n > 0, n, xp.ones_like(n))
    frac_b = xp.where(n > 0, n_b / safe, xp.zeros_like(n))
    delta = mu_b - mu_a
    mu = mu_a + delta * frac_b[..., None]
    m2 = m2_a + m2_b + delta * delta * (n_a * frac_b)[..., None]
    return n, mu, m2


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
        Names of features seen during fit (only for inputs with string
        column names).
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
    The joint log-likelihood ``-½ Σⱼ (xⱼ - μⱼ)² / σⱼ²`` is expanded into one
    matrix product on inputs centred by the overall training mean, so no
    ``n × k × d`` tensor is built and float32 keeps its accuracy when a
    feature's mean is far larger than its spread.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import GaussianNB
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> y = np.array([1, 1, 1, 2, 2, 2])
    >>> GaussianNB().fit(X, y).predict([[-0.8, -1]])
    array([1])
    """

    _parameter_constraints: dict = {
        "priors": ["array-like", None],
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors=None, var_smoothing=1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    # ---- statistics ---------------------------------------------------- #
    def _check_params_for_fit(self, n_classes, n_features):
        check_prior(self.priors, n_classes, name="priors")

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        n, d = X.shape
        if is_sparse(X):
            return self._accumulate_sparse(X, codes, weights, n_classes, xp=xp, dtype=dtype)
        stats = None
        for start, stop in row_blocks(n, 8 * (3 * d + n_classes)):
            Xb = xp.astype(X[start:stop, :], dtype)
            cb = codes[start:stop]
            wb = None if weights is None else weights[start:stop]
            Y = onehot(cb, n_classes, dtype=dtype, xp=xp, weights=wb)
            count = xp.sum(Y, axis=0)
            safe = xp.where(count > 0, count, xp.ones_like(count))
            mean = (Y.T @ Xb) / safe[:, None]
            resid = Xb - xp.take(mean, cb, axis=0)
            m2 = Y.T @ (resid * resid)
            # Weighted moments of all rows (epsilon_ and the scoring shift):
            # an integer weight acts as repeated rows, a zero weight as none.
            w_all = xp.ones(stop - start, dtype=dtype, device=X.device) if wb is None else wb
            n_all = xp.sum(w_all)
            safe_all = xp.where(n_all > 0, n_all, xp.ones_like(n_all))
            mean_all = (w_all @ Xb) / safe_all
            dev = Xb - mean_all
            m2_all = w_all @ (dev * dev)
            block = {"per_class": (count, mean, m2), "total": (n_all, mean_all, m2_all)}
            stats = block if stats is None else self._merge(stats, block, xp=xp)
        return stats

    def _accumulate_sparse(self, X, codes, weights, n_classes, *, xp, dtype):
        # Sums and sums of squares in float64, then M2 = Q - S²/W per class.
        count = class_totals(codes, weights, n_classes, dtype=dtype, xp=xp)
        s1 = sparse_class_sums(X, codes, weights, n_classes, dtype=dtype)
        s2 = sparse_class_sums(X, codes, weights, n_classes, power=2, dtype=dtype)
        safe = xp.where(count > 0, count, xp.ones_like(count))
        mean = s1 / safe[:, None]
        m2 = xp.clip(s2 - mean * s1, min=0.0)
        zeros = xp.zeros_like(codes)
        n_all = xp.sum(count)
        t1 = sparse_class_sums(X, zeros, weights, 1, dtype=dtype)[0, :]
        t2 = sparse_class_sums(X, zeros, weights, 1, power=2, dtype=dtype)[0, :]
        mean_all = t1 / xp.where(n_all > 0, n_all, xp.ones_like(n_all))
        m2_all = xp.clip(t2 - mean_all * t1, min=0.0)
        return {"per_class": (count, mean, m2), "total": (n_all, mean_all, m2_all)}

    def _merge(self, a, b, *, xp):
        return {key: chan_merge(a[key], b[key], xp=xp) for key in ("per_class", "total")}

    def _finalize(self, stats, n_classes, *, xp, dtype):
        count, mean, m2 = stats["per_class"]
        n_all, mean_all, m2_all = stats["total"]
        epsilon = self.var_smoothing * xp.max(m2_all / n_all)
        safe = xp.where(count > 0, count, xp.ones_like(count))
        var = m2 / safe[:, None] + epsilon
        # A zero variance (every row seen so far identical, or var_smoothing=0
        # on a feature constant in a class) would make the likelihood
        # infinite: floor it at an ulp of the feature's magnitude.
        floor = xp.finfo(dtype).eps * (1.0 + mean_all * mean_all)
        var = xp.where(var > 0, var, xp.broadcast_to(floor, var.shape))
        if self.priors is not None:
            prior = to_namespace(check_prior(self.priors, n_classes, name="priors"), xp, count.device)
        else:
            prior = count / xp.sum(count)
        # Scoring weights: the quadratic form expanded around the overall mean.
        precision = 1.0 / var
        # Expand around the shift exactly as scoring will subtract it (rounded
        # to the score dtype), or float32 loses the offset of large means.
        shift = xp.astype(xp.astype(mean_all, dtype), mean_all.dtype)
        centred = mean - shift
        const = (
            log_or_neg_inf(prior, xp=xp)
            - 0.5 * xp.sum(xp.log(2.0 * math.pi * var), axis=1)
            - 0.5 * xp.sum(centred * centred * precision, axis=1)
        )
        weight = xp.concat([-0.5 * precision, centred * precision], axis=1)
        return {
            "theta_": xp.astype(mean, dtype),
            "var_": xp.astype(var, dtype),
            "class_count_": count,
            "class_prior_": xp.astype(prior, dtype),
            "epsilon_": float(epsilon),
            "_shift_": xp.astype(shift, dtype),
            "_weight_": contiguous(xp.astype(weight.T, dtype), xp=xp),
            "_const_": xp.astype(const, dtype),
        }

    # ---- scoring ------------------------------------------------------- #
    def _score_row_bytes(self, n_features, n_classes):
        return 8 * (2 * n_features + n_classes)

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        shift, weight, const = self._params(
            ("_shift_", "_weight_", "_const_"), xp=xp, device=device, dtype=dtype
        )
        if is_sparse(X):
            # Centring would densify X, so expand around zero instead:
            # with c = x - s, -½c²P + cA = -½x²P + x(A + sP) - ½s²P - sA.
            d = X.shape[1]
            quad, lin = weight[:d, :], weight[d:, :]
            sP = xp.reshape(shift, (-1, 1)) * (-2.0 * quad)
            lin_u = lin + sP
            const_u = const + shift @ (quad * xp.reshape(shift, (-1, 1))) - shift @ lin
            sq = sparse_with_values(X, X.data * X.data)
            return sparse_matmul(sq, quad) + sparse_matmul(X, contiguous(lin_u, xp=xp)) + const_u
        Xc = X - shift
        return xp.concat([Xc * Xc, Xc], axis=1) @ weight + const
