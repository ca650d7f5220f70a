"""Poisson naive Bayes for counts.

Statistics are those of the other count models; the scores are one product ``X · log λᵀ``
plus ``log P(c) − Σⱼ λ_cj``. The class-independent ``−Σⱼ log xⱼ!`` (a log Γ per nonzero,
several times the cost of the product) is added only in ``predict_joint_log_proba``.
"""

from __future__ import annotations

from .._array.rows import row_sums_of
from .._array.numerics import lgamma, nonzero, safe_log, scoring_weights
from .._estimator.base import class_prior, fitted_parameter
from .._estimator.traits import ByParameters, replace
from .._estimator.docs import shared_parameters_doc
from .._estimator.missing import drop_missing, observed_weights, split_missing
from .._estimator.statistics_checks import check_array, check_part_of
from .discrete import _CountNB


def _observed_count(stats, *, xp):
    """``N_cj``: per-class weight behind each feature's sum, (k, 1) or (k, d)."""
    return stats.get("observed_count", xp.reshape(stats["class_count"], (-1, 1)))


@shared_parameters_doc("prior_smoothing", "loss_matrix", "missing")
class PoissonNB(_CountNB):
    """Poisson naive Bayes for count features, on CPU or GPU, dense or sparse.

    Each feature ``j`` of a sample of class ``c`` is a Poisson count with its
    own rate ``λ_cj`` (the expected count). Suited to counts that are not
    shares of a fixed total (events per period, visits, reads), where
    :class:`MultinomialNB` only sees the proportions.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Strength of the smoothing, in pseudo-samples: every rate has a Gamma
        prior centred on the feature's pooled rate over all classes, with
        the weight of ``alpha`` samples (see Notes). 0 gives the maximum-
        likelihood rates. One value for all features or one per feature.
    {force_alpha}
    {fit_prior}
    {class_prior}
    {shared_parameters}

    Attributes
    ----------
    class_count_ : array of shape (n_classes,)
        Weighted number of samples per class (float64).
    class_log_prior_ : array of shape (n_classes,)
        Log probability of each class.
    classes_ : array of shape (n_classes,)
        Class labels.
    feature_count_ : array of shape (n_classes, n_features)
        Weighted sum of each feature per class (float64).
    rate_ : array of shape (n_classes, n_features)
        Smoothed Poisson rate ``λ_cj`` of each feature per class.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (string column names only).

    See Also
    --------
    MultinomialNB : counts as draws from a fixed total.

    Notes
    -----
    Smoothing. With ``S_cj`` the weighted sum of feature ``j`` in class
    ``c``, ``N_c`` the class weight and ``λ̄_j = Σ_c S_cj / Σ_c N_c`` the
    pooled rate of the feature, the rate is the posterior mean under the
    conjugate prior ``λ_cj ~ Gamma(shape = α λ̄_j, rate = α)``:

    ``λ_cj = (S_cj + α λ̄_j) / (N_c + α)``.

    The prior has mean ``λ̄_j`` and the weight of ``α`` samples, so a class
    that never saw feature ``j`` gets a small positive rate scaled to that
    feature, not ``0`` (whose log is ``-inf``), and the smoothing does not
    depend on the unit of the counts as an additive ``+α`` would. A feature
    that is zero in all training data has rate 0 in every class; a non-zero
    count of it then has the same (tiny, ``log 0`` read as the log of the
    smallest normal number) likelihood in every class and does not change
    the posterior.

    Missing values (``missing="ignore"``). ``N_c`` becomes ``N_cj``, the
    weight of the rows of class ``c`` in which feature ``j`` is observed, and
    ``λ̄_j = Σ_c S_cj / Σ_c N_cj`` the pooled rate of its observed entries; a
    NaN adds to neither. In predict a missing feature's whole term
    ``xⱼ log λ_cj − λ_cj − log xⱼ!`` is left out of that row.

    ``predict_joint_log_proba`` is the true joint log-probability
    ``log P(x, c) = Σⱼ (xⱼ log λ_cj − λ_cj − log xⱼ!) + log P(c)``; the
    ``log xⱼ!`` term is the same for every class, so ``predict``,
    ``predict_proba`` and ``predict_log_proba`` leave it out (it costs a log
    Γ per nonzero). Non-integer values (e.g. scaled counts)
    are accepted, with ``log x!`` read as ``log Γ(x + 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import PoissonNB
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.poisson([1, 5, 2], size=(50, 3)), rng.poisson([4, 1, 2], size=(50, 3))])
    >>> y = np.repeat(["quiet", "busy"], 50)
    >>> clf = PoissonNB().fit(X, y)
    >>> clf.predict([[0, 6, 2], [5, 0, 2]])
    array(['quiet', 'busy'], dtype='<U5')
    """

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        prior_smoothing=0.0,
        loss_matrix=None,
        missing="error",
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix
        self.missing = missing

    _optional_statistics = ("observed_count",)
    # Finalized whole (the rates are an attribute): nothing deferred. log xⱼ! acts on values
    # (duplicate entries are summed first) and is the base measure; dense sums. A fit only sums
    # X's values (duplicates add up alike), but where a missing entry takes its row's weight off.
    _traits = ByParameters(
        replace(_CountNB._traits, deferred_parameters={}, acts_on_elements=True, fit_acts_on_elements=False,
                integer_input=False, sparse_statistics=(), has_base_measure=True),
        lambda model, traits: replace(traits, fit_acts_on_elements=model._ignore_missing),
    )
    rate_ = fitted_parameter()

    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        if "observed_count" in stats:  # class weights less missing entries: no sign (rounding)
            shapes = [(n_classes, 1), (n_classes, n_features)]
            observed = check_array(stats["observed_count"], "observed_count", shapes, values=values)
            if values:  # (k, 1): nothing was ever missing, every entry observed
                check_part_of(observed, "observed_count", stats["class_count"][:, None], "class_count",
                              equal=observed.shape[1] == 1, what="the class weights less those of missing entries")

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        if not self._ignore_missing:
            return super()._accumulate(X, codes, weights, n_classes, xp=xp, dtype=dtype, previous=previous)
        # A NaN is summed as 0 and its row's weight taken off its feature's N_cj.
        X, miss = split_missing(X, xp=xp)
        stats = super()._accumulate(X, codes, weights, n_classes, xp=xp, dtype=dtype, previous=previous)
        # (k, 1) while nothing is missing, (k, d) once something is: merged by
        # addition, which broadcasts, so partial_fit and merge stay exact.
        stats["observed_count"] = observed_weights(
            stats["class_count"], miss, codes, weights, n_classes, xp=xp, dtype=dtype
        )
        return stats

    def _merge(self, a, b, *, xp):
        merged = {key: a[key] + b[key] for key in ("class_count", "feature_count")}
        # Statistics from before a switch to missing="ignore" have no observed
        # counts: every entry was observed.
        if "observed_count" in a or "observed_count" in b:
            merged["observed_count"] = _observed_count(a, xp=xp) + _observed_count(b, xp=xp)
        return merged

    def _finalize(self, stats, classes, params, *, xp, dtype):
        cc, fc = stats["class_count"], stats["feature_count"]
        alpha = xp.asarray(params.alpha, dtype=fc.dtype, device=fc.device)
        observed = _observed_count(stats, xp=xp)  # N_cj
        pooled = xp.sum(fc, axis=0) / nonzero(xp.sum(observed, axis=0), xp=xp)
        denom = observed + alpha
        # With alpha = 0 a class of weight 0 has no estimate: it gets the prior mean.
        safe = nonzero(denom, xp=xp)
        rate = xp.where(denom > 0, (fc + alpha * pooled) / safe, pooled * xp.ones_like(denom))
        log_prior = class_prior(self, cc, params, xp=xp)[1]
        return {
            "class_count_": cc,
            "feature_count_": fc,
            "class_log_prior_": log_prior,
            "rate_": xp.astype(rate, dtype),
            "_weight_": scoring_weights(safe_log(rate, xp=xp), dtype, xp=xp),
            "_bias_": xp.astype(log_prior - xp.sum(rate, axis=1), dtype),
        }

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        if not self._ignore_missing:
            return super()._joint_log_likelihood(X, xp=xp, device=device, dtype=dtype)
        # Scored as 0, a missing entry still has its −λ_cj in the bias: drop it.
        X, miss = split_missing(X, xp=xp)
        jll = super()._joint_log_likelihood(X, xp=xp, device=device, dtype=dtype)
        (rate,) = self._fitted_arrays(("rate_",), xp=xp, device=device, dtype=dtype)
        return drop_missing(jll, miss, -rate.T, xp=xp)

    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        # + the filled copy of X and the missing-value indicator
        return 8 * (n_classes + (2 * n_features if self._ignore_missing else 0))

    def _class_free_log(self, X, *, xp, device, dtype):
        """``−Σⱼ log xⱼ!`` (as ``log Γ(x + 1)``) of every row; sparse ``X`` stays sparse."""
        if self._ignore_missing:
            X, _ = split_missing(X, xp=xp)  # log 0! = 0: a missing entry adds nothing
        return -row_sums_of(X, lambda a, axp: lgamma(a + 1.0, xp=axp), xp=xp, dtype=dtype)
