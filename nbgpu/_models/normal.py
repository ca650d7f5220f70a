"""The normal Bayes classifier: one full covariance matrix per class.

Statistics are per-class weight, mean and scatter matrix ``Σᵢ wᵢ (xᵢ−μ)(xᵢ−μ)ᵀ``, merged
exactly by the matrix form of Chan, Golub & LeVeque's update. Scoring whitens all classes
at once: one product ``X · [U₁ … U_k]`` (``Uₖ = Lₖ⁻ᵀ``), then squared norms.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from .._estimator.params import Interval

from .._array.blocks import row_blocks
from .._array import sums
from .._array.class_sums import class_scatter
from .._array.namespace import to_numpy
from .._array.numerics import chan_merge, contiguous, nonzero
from .._estimator.base import _BaseNB, class_prior, fitted_parameter
from .._estimator.traits import replace
from .._estimator.docs import shared_parameters_doc
from .._estimator.statistics_checks import check_array, check_keys, check_not_below, check_prior_smoothing

STATS = ("class_count", "mean", "scatter")


@shared_parameters_doc("prior_smoothing", "loss_matrix")
class NormalBayesClassifier(_BaseNB):
    """Normal Bayes classifier: a full-covariance Gaussian per class, on CPU or GPU.

    The "normal Bayes classifier" of the textbooks (and of OpenCV): each
    class ``c`` has a multivariate normal distribution ``N(μ_c, Σ_c)`` with
    its own full covariance matrix, so correlated features are modelled,
    unlike :class:`GaussianNB`. It is quadratic discriminant analysis fitted
    by maximum likelihood, with exact ``partial_fit`` and sample weights.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes. If None, the (weighted) class
        frequencies of the training data. Must be non-negative and sum to 1.
    reg_covar : float, default=1e-6
        Non-negative value added to the diagonal of every covariance matrix,
        so that each is positive definite (a class with fewer samples than
        features, or a constant feature, has a singular covariance). It is
        absolute, in squared units of the features: scale features first.
    {shared_parameters}

    Attributes
    ----------
    class_count_ : array of shape (n_classes,)
        Weighted number of training samples per class (float64).
    class_prior_ : array of shape (n_classes,)
        Probability of each class.
    classes_ : array of shape (n_classes,)
        Class labels.
    covariance_ : array of shape (n_classes, n_features, n_features)
        Covariance matrix of each class: the weighted maximum-likelihood
        estimate (scatter divided by the class weight) plus ``reg_covar`` on
        the diagonal.
    means_ : array of shape (n_classes, n_features)
        Mean of each class.
    precisions_cholesky_ : array of shape (n_classes, n_features, n_features)
        Upper-triangular ``Uₖ = Lₖ⁻ᵀ`` with ``Σₖ = Lₖ Lₖᵀ``, so the precision
        matrix is ``Uₖ Uₖᵀ`` and ``(x − μₖ) Uₖ`` is the whitened sample.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (only for inputs with string
        column names).

    See Also
    --------
    GaussianNB : diagonal covariances (naive Bayes).
    sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis : the same
        model (without sample weights or ``partial_fit``), regularised by
        shrinkage.

    Notes
    -----
    The joint log-likelihood is the log density of the normal distribution
    plus the log prior,

    ``-½ log|Σₖ| - ½ (x-μₖ)ᵀ Σₖ⁻¹ (x-μₖ) + log P(cₖ) - (d/2) log 2π``,

    computed from Cholesky factors ``Σₖ = Lₖ Lₖᵀ``: ``log|Σₖ| = 2 Σ log diag Lₖ``
    and the quadratic form is ``‖(x − μₖ) Lₖ⁻ᵀ‖²``. ``Σₖ`` is never inverted.
    Inputs are centred on the overall training mean before the product so
    float32 keeps its accuracy.

    With ``reg_covar=0`` the model equals scikit-learn's
    ``QuadraticDiscriminantAnalysis(reg_param=0)`` (both use the maximum-
    likelihood covariance). They regularise differently: QDA shrinks,
    ``(1 − r) Σ + r I``, this class adds ``reg_covar · I`` and keeps the
    scale of ``Σ``, so for ``r > 0`` the two differ by design.

    Sparse input is refused: a full covariance matrix is dense anyway.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import NormalBayesClassifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.multivariate_normal([0, 0], [[1.0, 0.9], [0.9, 1.0]], size=100)
    >>> b = rng.multivariate_normal([0, 0], [[1.0, -0.9], [-0.9, 1.0]], size=100)
    >>> X, y = np.vstack([a, b]), np.repeat([0, 1], 100)
    >>> clf = NormalBayesClassifier().fit(X, y)
    >>> clf.predict([[1.0, 1.0], [1.0, -1.0]])
    array([0, 1])
    """

    _traits = replace(
        _BaseNB._traits,
        lazy_parameters=False,  # finalize may refuse the data
        derived_per_statistic=2,  # covariance_ and precisions_cholesky_, each of the scatter's size
        class_axis_statistics=STATS,
        dense_only_message=(
            "{name} needs dense `X` (it estimates a full covariance matrix, which is dense); got a sparse "
            "matrix. Pass X.toarray(), or use GaussianNB for sparse data."
        ),
        # z = (x − s)·W − o with every Uₖ triangular of non-zero (finite) diagonal, so a NaN or an
        # infinity of x makes z non-finite and with it every class's −½|z|²: the scores show it.
        nonfinite_reaches_scores=True,
    )
    # Fitted parameters (``_finalize``), made at a fit.
    class_count_ = fitted_parameter()
    class_prior_ = fitted_parameter()
    means_ = fitted_parameter()
    covariance_ = fitted_parameter()
    precisions_cholesky_ = fitted_parameter()
    _shift_ = fitted_parameter()
    _weight_ = fitted_parameter()
    _offset_ = fitted_parameter()
    _const_ = fitted_parameter()

    _param_constraints: dict = {
        **_BaseNB._param_constraints,
        "priors": ["array-like", None],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, priors=None, reg_covar=1e-6, prior_smoothing=0.0, loss_matrix=None):
        self.priors = priors
        self.reg_covar = reg_covar
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix

    # ---- statistics ---------------------------------------------------- #
    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        check_keys(stats, STATS)
        check_array(stats["mean"], "mean", [(n_classes, n_features)], values=values)
        scatter = check_array(stats["scatter"], "scatter", [(n_classes, n_features, n_features)], values=values)
        if values:
            check_prior_smoothing(self, stats["class_count"])
            # Sums of squared deviations on the diagonal: >= 0 but for rounding (see GaussianNB).
            mean = stats["mean"]
            with np.errstate(over="ignore"):
                scale = np.abs(stats["class_count"][:, None]) * mean * mean
            check_not_below(np.diagonal(scatter, axis1=1, axis2=2), "scatter (diagonal)", scale,
                            what="a sum of squared deviations")

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        if sums.shifts_moments(xp, self._ignore_missing):
            moments = sums.shifted_class_moments(X, codes, weights, n_classes, xp=xp, dtype=dtype, scatter=True)
            return dict(zip(STATS, moments))
        n, d = X.shape
        stats = None
        for start, stop in row_blocks(n, 8 * (n_classes * d + 3 * d + n_classes), xp=xp):
            wb = None if weights is None else weights[start:stop]
            Xb = xp.astype(X[start:stop, :], dtype)
            block = dict(zip(STATS, class_scatter(Xb, codes[start:stop], wb, n_classes, xp=xp, dtype=dtype)))
            stats = block if stats is None else self._merge(stats, block, xp=xp)
        return stats

    def _merge(self, a, b, *, xp):
        # Chan's update of scatter matrices; the class weight (k,) broadcasts as (k, 1).
        n, mean, scatter = chan_merge(
            *((xp.reshape(s["class_count"], (-1, 1)), s["mean"], s["scatter"]) for s in (a, b)), xp=xp
        )
        return {"class_count": xp.reshape(n, (-1,)), "mean": mean, "scatter": scatter}

    def _finalize(self, stats, classes, params, *, xp, dtype):
        count, mean, scatter = (stats[k] for k in STATS)
        total = xp.sum(count)  # > 0: check_sample_weight refuses all-zero weights
        n_classes, d = mean.shape
        eye = xp.eye(d, dtype=scatter.dtype, device=scatter.device)
        cov = scatter / nonzero(count, xp=xp)[:, None, None] + params.reg_covar * eye
        chol = self._cholesky(cov, params.reg_covar, xp=xp)
        # U = L⁻ᵀ from a solve against the identity (triangular, well conditioned
        # when Σ is); Σ itself is never inverted.
        whiten = xp.matrix_transpose(xp.linalg.solve(chol, xp.broadcast_to(eye, cov.shape)))
        log_det = 2.0 * xp.sum(xp.log(xp.linalg.diagonal(chol)), axis=1)
        prior, log_prior = class_prior(self, count, params, xp=xp)
        # Centre on the overall mean: (x − μₖ)Uₖ = (x − s)Uₖ − (μₖ − s)Uₖ.
        shift = (count @ mean) / total
        offset = xp.reshape(xp.matmul(xp.reshape(mean - shift, (n_classes, 1, d)), whiten), (-1,))
        weight = xp.reshape(xp.permute_dims(whiten, (1, 0, 2)), (d, n_classes * d))
        const = log_prior - 0.5 * log_det - 0.5 * d * math.log(2.0 * math.pi)
        return {
            "class_count_": count,
            "class_prior_": xp.astype(prior, dtype),
            "means_": xp.astype(mean, dtype),
            "covariance_": xp.astype(cov, dtype),
            "precisions_cholesky_": xp.astype(whiten, dtype),
            "_shift_": xp.astype(shift, dtype),
            "_weight_": contiguous(xp.astype(weight, dtype), xp=xp),
            "_offset_": xp.astype(offset, dtype),
            "_const_": xp.astype(const, dtype),
        }

    def _cholesky(self, cov, reg_covar, *, xp):
        """Batched Cholesky factors; a clear error when one is not positive definite."""
        # A pivot this small relative to its variance is rounding noise: the
        # matrix is numerically singular even where the factorisation "succeeds".
        tol = 10.0 * cov.shape[1] * xp.finfo(cov.dtype).eps * xp.linalg.diagonal(cov)
        try:
            chol = xp.linalg.cholesky(cov)
            pivots = xp.linalg.diagonal(chol)
            ok = bool(xp.all(xp.isfinite(chol))) and bool(xp.all(pivots * pivots > tol))
        except (ValueError, RuntimeError, ArithmeticError):  # LinAlgError of numpy / torch
            ok = False
        if ok:
            return chol
        smallest = to_numpy(xp.min(xp.linalg.eigvalsh(cov), axis=1))
        bad = np.flatnonzero(~(smallest > to_numpy(xp.max(tol, axis=1))))
        bad = bad if bad.size else np.arange(smallest.shape[0])
        msg = (
            f"The covariance matrix of class index(es) {bad.tolist()[:10]} is singular "
            f"or not positive definite (smallest eigenvalue {float(np.min(smallest)):.3g}) "
            f"with reg_covar={reg_covar:g}: raise `reg_covar` (it is added to "
            "the diagonal, in squared feature units), or remove constant or "
            "collinear features, or give every class more samples than features."
        )
        raise ValueError(msg)

    # ---- scoring ------------------------------------------------------- #
    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        return 8 * (2 * n_classes * n_features + n_features)

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        shift, weight, offset, const = self._fitted_arrays(
            ("_shift_", "_weight_", "_offset_", "_const_"), xp=xp, device=device, dtype=dtype
        )
        n, d = X.shape
        z = (X - shift) @ weight - offset
        sq = xp.sum(xp.reshape(z * z, (n, -1, d)), axis=2)
        return const - 0.5 * sq
