"""Naive Bayes on counts: the shared base and the multinomial, complement and Bernoulli
models. Statistics are per-class row counts and feature sums, accumulated in float64 and
merged by addition; the joint log-likelihood is one matrix product ``X @ W + b``."""

from __future__ import annotations

import functools
import operator
from numbers import Real

import numpy as np
from .._estimator.params import Interval

from .._array import sums
from .._array.class_sums import class_totals
from .._array.namespace import get_device, get_namespace, is_host_array, is_sparse, result_dtype, score_dtype_name
from .._array.numerics import (
    columns_of,
    laid_out_by_columns,
    log_ratio,
    made_by_columns,
    safe_log,
)
from .._array.paths import fast
from .._array.sparse import compact_columns, sparse_binarize, sparse_matmul
from .._estimator.base import _BaseNB, class_prior, fitted_parameter
from .._estimator.traits import ByParameters, replace
from .._estimator.docs import shared_parameters_doc
from .._estimator.feature_selection import chi2_from_counts
from .._estimator.statistics_checks import (
    check_array,
    check_keys,
    check_part_of,
    check_prior_smoothing,
    check_smoothed_total,
)
from .._validation import check_alpha, check_non_negative, check_statistics_finite, plainly_non_negative
from .._estimator.scoring import check_fitted

# The fitted attributes scikit-learn's count models read.
_COUNT_ATTRIBUTES = ("class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_")


# The hyper-parameters every discrete model has (CategoricalNB's too).
DISCRETE_CONSTRAINTS: dict = {
    **_BaseNB._param_constraints,
    "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
    "fit_prior": ["boolean"],
    "class_prior": ["array-like", None],
    "force_alpha": ["boolean"],
}


class _CountNB(_BaseNB):
    """Models whose statistics are class counts and per-class feature sums, scored by one
    product ``X · W + b``. A model defines ``_class_context(class_count, feature_count,
    alpha, log_prior, params, *, xp)``, the per-class values over all features its weights
    depend on (a dict; its "bias" is ``b`` where that is not the log prior), and
    ``_weight_columns(stats, context, cols, *, xp)``, the k × c weights (float64) of the
    features ``cols`` (a slice or an index array), from ``stats`` and ``context`` alone.

    By default a model is linear in ``X`` (sums ``Yᵀ·X``, product ``X·W``) on counts or
    frequencies >= 0, so a sparse ``X`` is taken as it comes (unsorted indices, duplicate
    entries, integer values: no copy); BernoulliNB and PoissonNB act on values and say so."""

    _param_constraints = DISCRETE_CONSTRAINTS
    _traits = replace(
        _BaseNB._traits, prior_parameter="class_prior", acts_on_elements=False, integer_input=True,
        # Per-class feature sums of a wide model fitted on sparse input may be kept
        # sparse (``sums.py``): its weights are made a column at a time from them alone.
        sparse_statistics=("feature_count",),
        class_axis_statistics=("class_count", "feature_count", "observed_count"),
        product_operands=("_weight_",),
        # Made a column chunk at a time, at fit or else when first read (only the
        # columns scored where that is all a prediction needs).
        deferred_parameters={
            "_weight_": "_laid_out_weight",
            "feature_log_prob_": "_feature_log_prob",
            "feature_count_": "_dense_feature_count",
        },
    )
    # Fitted parameters (``_finalize``, the deferred ones), made at a fit or at their first read.
    class_count_ = fitted_parameter()
    class_log_prior_ = fitted_parameter()
    feature_count_ = fitted_parameter()
    feature_log_prob_ = fitted_parameter()
    _bias_ = fitted_parameter()
    _context_ = fitted_parameter()
    _weight_ = fitted_parameter()

    # Further statistics a subclass may keep (checked by that subclass).
    _optional_statistics = ()
    # Fitted attributes that are values of the context, {name: key}.
    _context_attributes: dict = {}

    def _check_params_for_fit(self, n_classes, n_features):
        # alpha: a scalar or one per feature, warned about once where small.
        alpha = check_alpha(self.alpha, n_features, force_alpha=self.force_alpha)
        return {**super()._check_params_for_fit(n_classes, n_features), "alpha": alpha}

    def _check_values(self, X):
        check_non_negative(X, estimator=self)

    def _check_block_values(self, X, *, finite=True):
        # One read of the values shows finite and >= 0, else the usual checks decide and report.
        if not plainly_non_negative(X):
            super()._check_block_values(X, finite=finite)

    def _check_smoothed_totals(self, stats, n_features):
        """Refuse statistics whose smoothed totals overflow: Σ_j (N_cj + α_j), and the
        complement's Σ N + Σ_j α_j, are bounded by Σ N + Σ_j α_j."""
        fc = stats["feature_count"]
        alpha = check_alpha(self.alpha, n_features, force_alpha=self.force_alpha, warn=False)
        total = sums.grand_total(fc)
        total += float(np.sum(alpha)) if alpha.ndim else float(alpha) * n_features
        check_smoothed_total(total, fc.dtype, "alpha", f"{np.max(alpha):g}", what="the smoothed feature totals")

    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        check_keys(stats, ["class_count", "feature_count"], self._optional_statistics)
        # Sums of non-negative features with non-negative weights.
        check_array(stats["feature_count"], "feature_count", [(n_classes, n_features)], values=values,
                    non_negative=True, sparse=bool(self._traits.sparse_statistics))
        if values:
            check_prior_smoothing(self, stats["class_count"])
            self._check_smoothed_totals(stats, n_features)

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        fc = sums.of_batch(X, codes, weights, n_classes, xp=xp, dtype=dtype, may_be_sparse=bool(self._traits.sparse_statistics))
        count = class_totals(codes, weights, n_classes, dtype=dtype, xp=xp)
        return {"class_count": count, "feature_count": fc}

    def _merge(self, a, b, *, xp):
        return {key: sums.merged(a[key], b[key]) for key in a}

    def _accumulate_onto(self, previous, X, codes, weights, n_classes, *, xp, dtype):
        # Added in place where the sums allow it (NaN, missing values, are
        # split out by _accumulate, not summed); else merged.
        fc = previous["feature_count"]
        # (Elsewhere, a device's sums: the merge alone, no class weights summed and read back twice.)
        if not self._ignore_missing and sums.can_add_into(fc, X):
            # The k class weights are checked before anything is written; the
            # in-place sums write no entry that would overflow (else the merge
            # below runs and refuses them).
            count = previous["class_count"] + class_totals(codes, weights, n_classes, dtype=dtype, xp=xp)
            if not bool(xp.all(xp.isfinite(count))):  # one read back; the check below says why
                check_statistics_finite({"class_count": count}, estimator=self, X=X, sample_weight=weights)
            if sums.add_into(fc, X, codes, weights, n_classes, xp=xp):
                return {"class_count": count, "feature_count": sums.kept(fc)}
        return super()._accumulate_onto(previous, X, codes, weights, n_classes, xp=xp, dtype=dtype)

    def _finalize(self, stats, classes, params, *, xp, dtype):
        cc, fc = stats["class_count"], stats["feature_count"]
        alpha = xp.asarray(params.alpha, dtype=fc.dtype, device=cc.device)
        log_prior = class_prior(self, cc, params, xp=xp)[1]
        context = {"alpha": alpha, "bias": log_prior, **self._class_context(cc, fc, alpha, log_prior, params, xp=xp)}
        return {
            "class_count_": cc,
            "class_log_prior_": xp.astype(log_prior, dtype),
            "_bias_": xp.astype(context["bias"], dtype),
            "_context_": context,
            **{name: context[key] for name, key in self._context_attributes.items()},
        }

    def _laid_out_weight(self, stats, attrs, dtype):
        xp = get_namespace(stats["class_count"])
        make = functools.partial(self._weight_columns, stats, attrs["_context_"], xp=xp)
        return laid_out_by_columns(make, stats["feature_count"].shape, dtype, xp=xp)

    def _dense_feature_count(self, stats, attrs, dtype):
        return sums.dense(stats["feature_count"])  # float64 whatever the score dtype

    def _feature_log_prob(self, stats, attrs, dtype):
        # The scoring weights are the log-probabilities themselves (a view).
        return (attrs["_weight_"] if "_weight_" in attrs else self._weight_).T

    def _joint_log_likelihood(self, X, *, xp, device, dtype, weight=None):
        """``weight``: that of ``X``'s columns where :meth:`_ready_to_score` made it (``X`` then on them)."""
        (bias,) = self._fitted_arrays(("_bias_",), xp=xp, device=device, dtype=dtype)
        if weight is None and is_sparse(X) and self._few_columns(X):
            X, weight = self._few_column_weight(X, xp, dtype)
        elif weight is None:
            (weight,) = self._fitted_arrays(("_weight_",), xp=xp, device=device, dtype=dtype)
        if is_sparse(X):
            scores = sparse_matmul(X, weight)  # (the library converts integer values)
        else:
            # Integer counts (kept by check_X) are converted a row block at a time.
            scores = (X if X.dtype == dtype else xp.astype(X, dtype)) @ weight
        scores += bias  # a fresh n × k array
        return scores

    def _few_column_weight(self, X, xp, dtype):
        """``(Xc, W)``: host CSR ``X`` on the columns it uses, and only those features' weights (the same
        numbers as the whole layout's, from the statistics and the fit's context, derived by now)."""
        columns, X = compact_columns(X)
        context, stats = self._context_, self._stats
        make = lambda part: self._weight_columns(stats, context, columns[part], xp=xp)  # noqa: E731
        return X, laid_out_by_columns(make, (self.classes_.shape[0], columns.shape[0]), dtype, xp=xp)

    def _ready_to_score(self, X, *, xp, dtype):
        X, shared = super()._ready_to_score(X, xp=xp, dtype=dtype)
        if is_sparse(X) and self._few_columns(X):
            # Once for every row block: the blocks' columns overlap (Debian's test rows in two blocks:
            # 337K columns' weights made for the 263K used).
            X, weight = self._few_column_weight(X, xp, dtype)
            return X, {**shared, "weight": weight}
        if "_weight_" in self._traits.deferred_parameters:
            self._weight_  # noqa: B018 (made now if deferred)
        return X, shared

    def _few_columns(self, X):
        """Whether scoring host CSR ``X`` makes the weights (not made yet) of only the
        features it uses: when it stores at most d/8 values (they then cost about what its
        product does), and always with sparse statistics (whole weights would be dense)."""
        if "_weight_" not in self._traits.deferred_parameters or "_weight_" in self.__dict__ or not fast("few_columns"):
            return False
        if getattr(X, "format", None) != "csr" or not is_host_array(X.indices):
            return False
        fc = self._stats["feature_count"]
        return sums.is_sparse(fc) or (is_host_array(fc) and 8 * X.nnz <= X.shape[1])

    @classmethod
    def _stats_from_sklearn(cls, estimator):
        """Statistics rebuilt from a fitted scikit-learn counterpart."""
        # Copies: a later partial_fit adds into its statistics in place.
        return {
            "class_count": np.array(estimator.class_count_, dtype=np.float64),
            "feature_count": np.array(estimator.feature_count_, dtype=np.float64),
        }

    def chi2_scores(self):
        """Chi-squared statistic and p-value of every feature against the class.

        Computed from the statistics the model holds (``class_count_`` and
        ``feature_count_``), without a pass over the data: equal to
        ``nbgpu.chi2(X, y)`` (and :func:`sklearn.feature_selection.chi2`) on
        the data the model was fitted on, sample weights included. For
        BernoulliNB the features are the binarized ones. See
        :func:`nbgpu.chi2` for the formulas.

        Returns
        -------
        chi2 : array of shape (n_features,)
        pvalues : array of shape (n_features,)
            Both in the namespace and on the device of the fitted statistics.
        """
        check_fitted(self)
        if "observed_count" in self._stats:
            msg = (
                f"chi2_scores is not defined for a {type(self).__name__} fitted with missing values "
                "(missing='ignore'): the classes' weights differ from feature to feature."
            )
            raise ValueError(msg)
        cc, fc = self._stats["class_count"], sums.dense(self._stats["feature_count"])
        return chi2_from_counts(cc, fc, xp=get_namespace(fc))


    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.input_tags.positive_only = True
        return tags


@shared_parameters_doc("prior_smoothing", "loss_matrix")
class MultinomialNB(_CountNB):
    """Multinomial naive Bayes for counts (e.g. word counts), on CPU or GPU.

    Same parameters, attributes and results as
    :class:`sklearn.naive_bayes.MultinomialNB`; counts are accumulated in
    float64 (exact up to 2⁵³), sparse input is never densified, and float32
    input gives float32 scores.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing parameter, one for all features
        or one per feature (0 for no smoothing).
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
        Weighted count of each feature per class (float64).
    feature_log_prob_ : array of shape (n_classes, n_features)
        Empirical log probability of features given a class.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (string column names only).

    See Also
    --------
    ComplementNB, BernoulliNB
    sklearn.naive_bayes.MultinomialNB : the scikit-learn reference.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import MultinomialNB
    >>> rng = np.random.RandomState(1)
    >>> X = rng.randint(5, size=(6, 100))
    >>> y = np.array([1, 2, 3, 4, 5, 6])
    >>> MultinomialNB().fit(X, y).predict(X[2:3])
    array([3])
    """

    _sklearn_counterpart = ("MultinomialNB", _COUNT_ATTRIBUTES)

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None, prior_smoothing=0.0,
                 loss_matrix=None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix

    def _class_context(self, class_count, feature_count, alpha, log_prior, params, *, xp):
        # Σ_j (N_cj + α_j): each class's smoothed total.
        alpha_total = xp.sum(alpha) if alpha.ndim else alpha * feature_count.shape[1]
        return {"total": sums.row_totals(feature_count, xp=xp) + alpha_total}

    def _weight_columns(self, stats, context, cols, *, xp):
        # log θ_cj = log(N_cj + α_j) − log Σ_j (N_cj + α_j)
        smoothed = sums.columns(stats["feature_count"], cols) + columns_of(context["alpha"], cols)
        return log_ratio(smoothed, context["total"], xp=xp, overwrite_num=True)


@shared_parameters_doc("prior_smoothing", "loss_matrix")
class ComplementNB(_CountNB):
    """Complement naive Bayes (Rennie et al., 2003), on CPU or GPU.

    Suited to imbalanced text classification. Same parameters, attributes and
    results as :class:`sklearn.naive_bayes.ComplementNB`.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing parameter.
    {force_alpha}
    fit_prior : bool, default=True
        Only used in the edge case of a single class in the training set.
    class_prior : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes (same edge case only).
    norm : bool, default=False
        Whether a second normalization of the weights is performed.
    {shared_parameters}

    Attributes
    ----------
    class_count_ : array of shape (n_classes,)
    class_log_prior_ : array of shape (n_classes,)
    classes_ : array of shape (n_classes,)
    feature_all_ : array of shape (n_features,)
        Weighted count of each feature over all classes.
    feature_count_ : array of shape (n_classes, n_features)
    feature_log_prob_ : array of shape (n_classes, n_features)
        Empirical weights for class complements.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    MultinomialNB
    sklearn.naive_bayes.ComplementNB : the scikit-learn reference.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import ComplementNB
    >>> rng = np.random.RandomState(1)
    >>> X = rng.randint(5, size=(6, 100))
    >>> y = np.array([1, 2, 3, 4, 5, 6])
    >>> ComplementNB().fit(X, y).predict(X[2:3])
    array([3])
    """

    _param_constraints: dict = {**DISCRETE_CONSTRAINTS, "norm": ["boolean"]}
    _sklearn_counterpart = ("ComplementNB", (*_COUNT_ATTRIBUTES, "feature_all_"))
    feature_all_ = fitted_parameter()
    _traits = replace(_CountNB._traits, scores_are_log_likelihoods=False)  # weights of class complements
    _context_attributes = {"feature_all_": "everything"}  # Σ_c N_cj, summed once for the context

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None, norm=False,
                 prior_smoothing=0.0, loss_matrix=None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix

    def _class_context(self, class_count, feature_count, alpha, log_prior, params, *, xp):
        # Complement counts N~_cj = Σ_c' N_c'j + α_j − N_cj, and their totals
        # Σ_j N~_cj = Σ N + Σ_j α_j − Σ_j N_cj without making them.
        everything = sums.column_totals(feature_count, xp=xp)
        alpha_total = xp.sum(alpha) if alpha.ndim else alpha * feature_count.shape[1]
        total = xp.sum(everything) + alpha_total - sums.row_totals(feature_count, xp=xp)
        context = {"everything": everything, "total": total}
        if log_prior.shape[0] > 1:  # the prior only breaks the tie of a single class (scikit-learn's rule)
            context["bias"] = xp.zeros_like(log_prior)
        if params.norm:  # Σ_j log θ~_cj (nothing of k × d kept)
            make = lambda cols: self._complement_logs(feature_count, alpha, context, cols, xp=xp)  # noqa: E731
            norm = sums.complement_log_row_sums(feature_count, everything + alpha, total, make, xp=xp)
            # all θ~_cj = 1 (one feature): weights 0 / 0, taken as 0 (scikit-learn's are NaN)
            context["norm"] = xp.where(norm == 0, xp.ones_like(norm), norm)
        return context

    @staticmethod
    def _complement_logs(feature_count, alpha, context, cols, *, xp):
        """``log θ~_cj = log(E_j + α_j − N_cj) − log total_c`` of the features ``cols``."""
        column = columns_of(context["everything"], cols) + columns_of(alpha, cols)  # E_j + α_j
        comp = column - sums.columns(feature_count, cols)
        return log_ratio(comp, context["total"], xp=xp, overwrite_num=True)

    def _weight_columns(self, stats, context, cols, *, xp):
        logged = self._complement_logs(stats["feature_count"], context["alpha"], context, cols, xp=xp)
        if "norm" in context:  # norm=True
            logged /= context["norm"]
        else:
            logged *= -1.0
        return logged


@shared_parameters_doc("prior_smoothing", "loss_matrix")
class BernoulliNB(_CountNB):
    """Naive Bayes for binary features (multivariate Bernoulli), on CPU or GPU.

    Same parameters, attributes and results as
    :class:`sklearn.naive_bayes.BernoulliNB`. Sparse input stays sparse: the
    absent features enter through a per-class constant, so scoring is one
    sparse matrix product.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing parameter.
    {force_alpha}
    binarize : float or None, default=0.0
        Threshold for binarizing (mapping to booleans) sample features. If
        None, input is presumed to already consist of binary vectors.
    {fit_prior}
    {class_prior}
    {shared_parameters}

    Attributes
    ----------
    class_count_ : array of shape (n_classes,)
    class_log_prior_ : array of shape (n_classes,)
    classes_ : array of shape (n_classes,)
    feature_count_ : array of shape (n_classes, n_features)
    feature_log_prob_ : array of shape (n_classes, n_features)
        Empirical log probability of features given a class, P(x_i|y).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    MultinomialNB
    sklearn.naive_bayes.BernoulliNB : the scikit-learn reference.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import BernoulliNB
    >>> rng = np.random.RandomState(1)
    >>> X = rng.randint(5, size=(6, 100))
    >>> Y = np.array([1, 2, 3, 4, 4, 5])
    >>> BernoulliNB().fit(X, Y).predict(X[2:3])
    array([3])
    """

    _param_constraints: dict = {
        **DISCRETE_CONSTRAINTS,
        "binarize": [None, Interval(Real, 0, None, closed="left")],
    }
    _sklearn_counterpart = ("BernoulliNB", _COUNT_ATTRIBUTES)

    def __init__(self, *, alpha=1.0, force_alpha=True, binarize=0.0, fit_prior=True, class_prior=None,
                 prior_smoothing=0.0, loss_matrix=None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix

    # Any real values (binarized), and dense sums (k × d log-probabilities of both outcomes).
    # Integer counts are binarized as they come; X itself (binarize=None) enters sums and
    # products only, so a sparse X is taken as it comes then. Binarizing acts on elements:
    # duplicate entries are summed first, and NaN > binarize is False (the sums do not show it).
    _traits = ByParameters(
        replace(_CountNB._traits, sparse_statistics=()),
        lambda model, traits: replace(traits, acts_on_elements=model.binarize is not None,
                                      sums_show_nonfinite=model.binarize is None),
    )
    _check_values = _BaseNB._check_values
    _check_block_values = _BaseNB._check_block_values

    def _check_smoothed_totals(self, stats, n_features):
        cc = stats["class_count"]
        alpha = check_alpha(self.alpha, n_features, force_alpha=self.force_alpha, warn=False)
        check_smoothed_total(float(np.max(cc)) + 2 * float(np.max(alpha)), cc.dtype, "alpha", f"{np.max(alpha):g}",
                             what="the smoothed class totals N_c + 2α")

    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        if values and self.binarize is not None:  # sums of binarized rows: no feature is on in more of a class than all of it
            check_part_of(stats["feature_count"], "feature_count", stats["class_count"][:, None], "class_count",
                          what="weights of the rows of a class in which a feature is on")

    def _model_input(self, X, xp):
        if self.binarize is None:
            return X
        if is_sparse(X):
            return sparse_binarize(X, self.binarize)
        return xp.astype(X > self.binarize, result_dtype(score_dtype_name(X.dtype, xp=xp), xp, get_device(X)))

    def _class_context(self, class_count, feature_count, alpha, log_prior, params, *, xp):
        # One pass over the logs: log p_cj, kept (feature_log_prob_, and the weights start from
        # it), and b = log P(c) + Σ_j log(1 − p_cj), the absent features' share of every score.
        sums = []  # (first column, Σ_j of the chunk): added in column order, the same totals every time

        def make(cols):
            log_p = self._log_p(class_count, feature_count, alpha, cols, xp=xp)
            sums.append((cols.start or 0, xp.sum(self._log_not_p(class_count, feature_count, alpha, cols, xp=xp), axis=1)))
            return log_p

        log_p = made_by_columns(make, feature_count.shape, feature_count.dtype, xp=xp)
        log_not_p = functools.reduce(operator.add, (total for _, total in sorted(sums, key=operator.itemgetter(0))))
        return {"bias": log_prior + log_not_p, "log_p": log_p}

    @staticmethod
    def _log_p(class_count, feature_count, alpha, cols, *, xp):
        """``log p_cj = log(N_cj + α_j) − log(N_c + 2α_j)`` of the features ``cols``."""
        alpha = columns_of(alpha, cols)
        log_p = safe_log(feature_count[:, cols] + alpha, xp=xp, overwrite=True)  # k × c, updated in place
        log_p -= safe_log(xp.reshape(class_count, (-1, 1)) + 2 * alpha, xp=xp)
        return log_p

    @staticmethod
    def _log_not_p(class_count, feature_count, alpha, cols, *, xp):
        """``log(1 − p_cj) = log(N_c + α_j − N_cj) − log(N_c + 2α_j)`` of the features ``cols``:
        from the counts directly, exact where p is close to 1."""
        alpha = columns_of(alpha, cols)
        total = xp.reshape(class_count, (-1, 1)) + 2 * alpha
        neg = total - feature_count[:, cols]
        neg -= alpha
        neg = safe_log(neg, xp=xp, overwrite=True)
        neg -= safe_log(total, xp=xp)
        return neg

    def _weight_columns(self, stats, context, cols, *, xp):
        # log p − log(1 − p): a present feature's score less the absent one's, which b holds.
        return context["log_p"][:, cols] - self._log_not_p(stats["class_count"], stats["feature_count"],
                                                           context["alpha"], cols, xp=xp)

    def _feature_log_prob(self, stats, attrs, dtype):
        return get_namespace(stats["class_count"]).astype(attrs["_context_"]["log_p"], dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = False  # any real values, binarized
        return tags
