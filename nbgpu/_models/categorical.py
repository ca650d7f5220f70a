"""Categorical naive Bayes.

The categories of all features are laid side by side in one flat axis of
``M = Σ n_categories_`` columns (feature ``j`` owns columns
``offsets[j] : offsets[j + 1]``), so counting is ``Yᵀ · OneHot(X)`` and scoring
is ``OneHot(X) · Wᵀ``: ``OneHot(X)`` is a sparse matrix with one stored 1 per
feature per row where the namespace has sparse matrices, and a gather
elsewhere; a dense ``n × M`` tensor is never built whole.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from .._estimator.params import Interval

from .._array.class_sums import category_counts, class_sums, class_totals, feature_block_sums
from .._array.columns import column_max
from .._array.namespace import has_sparse, is_sparse, to_namespace, to_numpy
from .._array.numerics import product_operand, safe_log
from .._array.sparse import (
    gathered_row_sums,
    onehot_nonzero_columns,
    sparse_matmul,
    sparse_onehot_nonzero,
)
from .._estimator.base import _BaseNB, class_prior, fitted_parameter
from .._estimator.traits import replace
from .._estimator.docs import shared_parameters_doc
from .._estimator.missing import split_missing
from .._estimator.statistics_checks import (
    check_array,
    check_keys,
    check_not_below,
    check_part_of,
    check_prior_smoothing,
    check_smoothed_total,
)
from .._validation import check_alpha, check_categories
from .discrete import DISCRETE_CONSTRAINTS


def _offsets(n_categories):
    return np.concatenate([[0], np.cumsum(n_categories)]).astype(np.int64)


def _column_feature(n_categories):
    """Feature index of every flat column (host int64)."""
    return np.repeat(np.arange(n_categories.shape[0], dtype=np.int64), n_categories)


def _spread(per_feature, n_categories, *, xp):
    """Repeat a (k, d) per-feature array over each feature's columns: (k, M)."""
    idx = xp.asarray(_column_feature(n_categories), device=per_feature.device)
    return xp.take(per_feature, idx, axis=1)


def _flat_column(n_categories, feature, value):
    """Flat column of category ``value`` of ``feature`` (host arrays), or ``M``, that of
    a zero column appended, where the feature has no such category."""
    off = _offsets(n_categories)
    return np.where(value < n_categories[feature], off[feature] + value, off[-1])


def _relayout(counts, old, new, *, xp):
    """Counts laid out for ``old`` category numbers, re-laid for ``new`` (>= old)."""
    if np.array_equal(old, new):
        return counts
    feature = _column_feature(new)
    src = _flat_column(old, feature, np.arange(int(new.sum())) - _offsets(new)[feature])
    zero = xp.zeros((counts.shape[0], 1), dtype=counts.dtype, device=counts.device)
    return xp.take(xp.concat([counts, zero], axis=1), xp.asarray(src, device=counts.device), axis=1)


# Dense scoring looks each row's codes up in one table of class scores.
# Consecutive features are looked up in pairs (one code per pair: half the
# lookups, the dominant cost) when every pair's table has at most this many
# rows, so the table stays in cache.
_PAIR_ROWS = 256


def _groups(n_categories):
    """``(first, second, sizes)``: the features of each lookup (``second`` -1
    for a feature looked up alone: the last of an odd number, or all when
    unpaired) and the rows of its scoring table. Dense scoring pairs features
    exactly when there are fewer lookups than features."""
    d = n_categories.shape[0]
    # Each feature's categories and its zero row; at -1 a feature of none, a lone lookup's second.
    m = np.pad(n_categories, (0, 1)) + 1
    paired = d > 1 and bool(np.all(m[0 : d - 1 : 2] * m[1:d:2] <= _PAIR_ROWS))
    first = np.arange(0, d, 2 if paired else 1)
    second = np.where(paired & (first + 1 < d), first + 1, -1)
    return first, second, m[first] * m[second]


def _scoring_table(weight, n_categories, *, xp):
    """Class scores of every lookup code of dense scoring: row ``r`` is row ``a[r]``
    plus row ``b[r]`` of ``weight`` (M × k) with a zero row appended (row ``off[-1]``).

    A feature with ``m`` categories counts ``m + 1`` values: its categories,
    then the code every unseen (or missing) category is clipped to, which
    scores zero. A pair's code is ``c_first * (m_second + 1) + c_second``.
    """
    n = np.pad(n_categories, (0, 1))  # a lone lookup's second (-1) has no category: the zero row
    first, second, sizes = _groups(n_categories)
    group = np.repeat(np.arange(first.shape[0]), sizes)
    r = np.arange(group.shape[0]) - (np.cumsum(sizes) - sizes)[group]
    first, second = first[group], second[group]
    a = _flat_column(n, first, r // (n[second] + 1))
    b = _flat_column(n, second, r % (n[second] + 1))
    zero = xp.zeros((1, weight.shape[1]), dtype=weight.dtype, device=weight.device)
    padded = xp.concat([weight, zero], axis=0)
    a, b = (xp.asarray(rows, device=weight.device) for rows in (a, b))
    return xp.take(padded, a, axis=0) + xp.take(padded, b, axis=0)


def _scoring_arrays(weight, log_prior, n_cat, *, xp, dtype):
    """What scoring reads, made once at fit (on a device an upload per block would wait for
    it), and the category numbers as host metadata. Dense scoring looks codes up in
    ``_table_``. Sparse scoring starts every row at the score of category 0 of every feature
    (``_zero_score_``), then each stored value swaps its feature's category-0 weight for its
    own (an unseen category: for none) through ``_delta_``, laid out as
    ``sparse_onehot_nonzero``'s columns."""
    off, device = _offsets(n_cat), weight.device
    base = xp.take(weight, xp.asarray(off[:-1], device=device), axis=0)
    first = xp.take(weight, xp.asarray(off[_column_feature(n_cat)], device=device), axis=0)
    order = np.concatenate(onehot_nonzero_columns(n_cat))  # the column of each row of the concat below
    source = np.empty_like(order)
    source[order] = np.arange(order.shape[0])
    delta = xp.take(xp.concat([weight - first, -base], axis=0), xp.asarray(source, device=device), axis=0)
    p, sizes = n_cat.shape[0] // 2, _groups(n_cat)[2]
    index_dtype = xp.int32 if int(sizes.sum()) < 2**31 else xp.int64
    # Every row looks up one row of the first group: those rows carry the log prior (no
    # addition per row block). The code bounds are in the scores' dtype, as the codes are.
    table = _scoring_table(weight, n_cat, xp=xp)
    first_group = xp.asarray(np.arange(table.shape[0]) < sizes[0], device=device)
    table = table + xp.where(first_group[:, None], log_prior, xp.zeros_like(log_prior))
    return {
        "_bias_": xp.astype(log_prior, dtype),
        "_table_": product_operand(xp.astype(table, dtype), xp=xp),
        "_delta_": product_operand(xp.astype(delta, dtype), xp=xp),
        "_zero_score_": xp.astype(xp.sum(base, axis=0) + log_prior, dtype),
        "_n_cat_host_": tuple(int(v) for v in n_cat),
        "_code_limit_": xp.asarray(n_cat.astype(np.float64), dtype=dtype, device=device),
        "_radix_": xp.asarray((n_cat[1 : 2 * p : 2] + 1).astype(np.float64), dtype=dtype, device=device),
        "_group_start_": xp.asarray(np.cumsum(sizes) - sizes, dtype=index_dtype, device=device),
        "_offsets_": xp.asarray(off, device=device),
    }


@shared_parameters_doc("prior_smoothing", "loss_matrix", "missing")
class CategoricalNB(_BaseNB):
    """Naive Bayes for categorical features, on CPU or GPU, dense or sparse.

    Each feature has its own categorical distribution per class. Same
    parameters, attributes and results as
    :class:`sklearn.naive_bayes.CategoricalNB`; in addition it accepts sparse
    input (implicit zeros are category 0) and a per-feature ``alpha``, and a
    category unseen in training (a code ``>= n_categories_[j]`` at predict
    time) is treated as missing instead of raising an IndexError: that
    feature contributes the same factor to every class, i.e. it is left out
    of the decision for that sample. With ``missing="ignore"`` a NaN is
    scored the same way, and left out of the category counts in fit.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Laplace/Lidstone) smoothing parameter, one for all features
        or one per feature.
    {force_alpha}
    {fit_prior}
    {class_prior}
    min_categories : int or array-like of shape (n_features,), default=None
        Minimum number of categories per feature.
    {shared_parameters}

    Notes
    -----
    The model keeps a table of counts with one column per category of every
    feature, ``n_classes × Σ n_categories_`` float64 numbers, and
    ``n_categories_[j]`` is one more than the largest code seen in feature
    ``j``: its memory follows the largest category code, not the number of
    categories seen. A fit whose table would exceed
    ``CategoricalNB.max_category_table_bytes`` (256 MiB: for instance 10
    classes × 3.3 million categories in all) raises a ValueError naming the
    code (or ``min_categories``) that asks for it; fitting holds about ten
    such tables at its peak. Encode categories as 0, 1, ..., n - 1 (for
    instance with :class:`sklearn.preprocessing.OrdinalEncoder`) so the
    table follows the categories seen; set the class attribute higher for a
    model that really has that many categories.

    Attributes
    ----------
    category_count_ : list of arrays of shape (n_classes, n_categories_[i])
        Weighted count of every category of every feature per class.
    class_count_ : array of shape (n_classes,)
    class_log_prior_ : array of shape (n_classes,)
    classes_ : array of shape (n_classes,)
    feature_log_prob_ : list of arrays of shape (n_classes, n_categories_[i])
        Log probability of every category of every feature given a class.
    n_categories_ : array of shape (n_features,), dtype=int64
        Number of categories of every feature (the largest seen over all
        batches, and at least ``min_categories``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    sklearn.naive_bayes.CategoricalNB : the scikit-learn reference.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import CategoricalNB
    >>> rng = np.random.RandomState(1)
    >>> X = rng.randint(5, size=(6, 100))
    >>> y = np.array([1, 2, 3, 4, 5, 6])
    >>> CategoricalNB().fit(X, y).predict(X[2:3])
    array([3])
    """

    _param_constraints: dict = {
        **DISCRETE_CONSTRAINTS,
        "min_categories": [None, "array-like", Interval(Integral, 1, None, closed="left")],
    }
    _traits = replace(
        _BaseNB._traits, prior_parameter="class_prior",
        class_axis_statistics=("class_count", "counts"),  # n_categories is per feature
        integer_input=True,  # integer codes are used as they come: no float copy of X to check and cast back
        product_operands=("_table_", "_delta_"),
        sums_show_nonfinite=False,  # category codes are looked up, not summed
    )
    # Fitted parameters (``_finalize``), made at a fit or at their first read.
    class_count_ = fitted_parameter()
    class_log_prior_ = fitted_parameter()
    n_categories_ = fitted_parameter()
    _category_count_ = fitted_parameter()
    _feature_log_prob_ = fitted_parameter()
    _bias_ = fitted_parameter()
    _table_ = fitted_parameter()
    _delta_ = fitted_parameter()
    _zero_score_ = fitted_parameter()
    _n_cat_host_ = fitted_parameter()
    _code_limit_ = fitted_parameter()
    _radix_ = fitted_parameter()
    _group_start_ = fitted_parameter()
    _offsets_ = fitted_parameter()

    # The largest table of counts a fit may build (see Notes); a class
    # attribute, read at every fit, not a parameter of the model.
    max_category_table_bytes = 256 * 2**20

    _sklearn_counterpart = (
        "CategoricalNB",
        ("class_count_", "class_log_prior_", "category_count_", "feature_log_prob_", "n_categories_"),
    )

    def __init__(self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None, min_categories=None,
                 prior_smoothing=0.0, loss_matrix=None, missing="error"):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix
        self.missing = missing

    def _check_values(self, X):
        check_categories(X, estimator=self)

    def _min_categories(self, n_features):
        m = np.asarray(1 if self.min_categories is None else self.min_categories)
        if not np.issubdtype(m.dtype, np.integer):
            msg = f"`min_categories` must hold integers; got dtype {m.dtype}."
            raise ValueError(msg)
        if m.ndim == 1 and m.shape != (n_features,) or m.ndim > 1:
            # Led by scikit-learn's words for the same error.
            msg = (
                f"'min_categories' should have shape ({n_features},) when an array-like is provided: "
                f"`min_categories` must be an int or have shape ({n_features},), "
                f"one value per feature; got shape {m.shape}."
            )
            raise ValueError(msg)
        if np.any(m < 1):
            msg = f"`min_categories` must be >= 1; got a minimum of {m.min()}."
            raise ValueError(msg)
        return np.broadcast_to(m, (n_features,)).astype(np.int64)

    def _check_params_for_fit(self, n_classes, n_features):
        alpha = check_alpha(self.alpha, n_features, force_alpha=self.force_alpha)
        checked = {**super()._check_params_for_fit(n_classes, n_features), "alpha": alpha}
        self._min_categories(n_features)
        return checked

    # ---- statistics ---------------------------------------------------- #
    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
        check_keys(stats, ["class_count", "counts", "n_categories"])
        n_cat = check_array(stats["n_categories"], "n_categories", [(n_features,)], values=values, kinds="iu")
        # Signs within a tolerance: with missing values, category 0's count is
        # a difference of sums, which rounding may leave a hair below 0.
        counts = check_array(stats["counts"], "counts", [(n_classes, None)], values=values)
        if values and (n_cat.min() < 1 or int(n_cat.sum()) != counts.shape[1]):
            msg = (
                f"statistics entry 'n_categories' (from {n_cat.min()} to {n_cat.max()}, sum {int(n_cat.sum())}) "
                f"does not describe the {counts.shape[1]} columns of 'counts' (every feature has >= 1 category)"
            )
            raise ValueError(msg)
        if counts.shape[1] < n_features:
            msg = (
                f"statistics entry 'counts' has {counts.shape[1]} columns; "
                f"{n_features} features need at least as many"
            )
            raise ValueError(msg)
        if values:
            self._check_counts(stats["class_count"], counts, n_cat)

    def _check_counts(self, class_count, counts, n_cat):
        """Signs and totals: a feature's categories share its class's weight (all of it but its missing values'),
        and the smoothed totals Σ_k (N_cjk + α_j) the log-probabilities divide by are finite."""
        check_prior_smoothing(self, class_count)
        check_not_below(counts, "counts", class_count[:, None], what="a sum of weights of a class's rows")
        per_feature = np.add.reduceat(counts, _offsets(n_cat)[:-1], axis=1)  # in their dtype: its tolerance
        check_part_of(per_feature, "counts (summed over the categories of each feature)", class_count[:, None],
                      "class_count", what="the class weights less those of missing values")
        alpha = check_alpha(self.alpha, n_cat.shape[0], force_alpha=self.force_alpha, warn=False)
        with np.errstate(over="ignore"):  # an overflow is what is refused
            total = float(np.max(per_feature)) + float(np.max(alpha * n_cat))
        check_smoothed_total(total, counts.dtype, "alpha", f"{np.max(alpha):g}",
                             what="the smoothed category totals Σ_k (N_cjk + α)")

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        # A missing value is counted as category 0, then taken off again.
        X, miss = split_missing(X, xp=xp) if self._ignore_missing else (X, None)
        # Rows of zero weight are dropped rows: their categories are not seen.
        seen = None if weights is None else weights > 0
        top = column_max(X, seen, xp=xp)
        # Capped before the cast (a uint64 code would wrap): the table-size check refuses it.
        seen = np.minimum(to_numpy(top).astype(np.float64), 2.0**62).astype(np.int64) + 1
        n_cat = np.maximum(seen, self._min_categories(X.shape[1]))
        if previous is not None:
            n_cat = np.maximum(n_cat, to_numpy(previous["n_categories"]))
        self._check_table_size(n_cat, seen, n_classes)
        count = class_totals(codes, weights, n_classes, dtype=dtype, xp=xp)
        counts = category_counts(X, codes, weights, _offsets(n_cat), n_classes, xp=xp, dtype=dtype)
        if miss is not None:  # off category 0: the missing counts re-laid from one column per feature
            missing = class_sums(miss, codes, weights, n_classes, xp=xp, dtype=dtype)
            counts = counts - _relayout(missing, np.ones_like(n_cat), n_cat, xp=xp)
        return {"class_count": count, "counts": counts, "n_categories": n_cat}

    def _check_table_size(self, n_cat, seen, n_classes):
        """Raise, before anything is allocated, if the table of counts exceeds ``max_category_table_bytes``."""
        limit = type(self).max_category_table_bytes
        size = 8 * n_classes * int(n_cat.sum())
        if size <= limit:
            return
        j = int(np.argmax(n_cat))
        if n_cat[j] > seen[j]:
            cause = f"`min_categories` asks for {n_cat[j]} categories in feature {j}"
        else:
            cause = f"`X` holds the category code {seen[j] - 1} in feature {j}"
        msg = (
            f"CategoricalNB would keep a table of {n_classes} classes × {int(n_cat.sum())} categories "
            f"({size / 2**20:.0f} MiB of counts; a fit needs several times that), above its limit of "
            f"{limit / 2**20:.0f} MiB (CategoricalNB.max_category_table_bytes): {cause}. Its memory "
            "follows the largest category code: encode the categories as 0, 1, ..., n - 1 "
            "(e.g. with sklearn.preprocessing.OrdinalEncoder) or lower `min_categories`."
        )
        raise ValueError(msg)

    def _merge(self, a, b, *, xp):
        # The category numbers are host metadata, even where a fitted model
        # was moved to a device.
        n_a, n_b = to_numpy(a["n_categories"]), to_numpy(b["n_categories"])
        n_cat = np.maximum(n_a, n_b)
        counts = _relayout(a["counts"], n_a, n_cat, xp=xp) + _relayout(b["counts"], n_b, n_cat, xp=xp)
        return {"class_count": a["class_count"] + b["class_count"], "counts": counts, "n_categories": n_cat}

    def _finalize(self, stats, classes, params, *, xp, dtype):
        count, counts, n_cat = stats["class_count"], stats["counts"], to_numpy(stats["n_categories"])
        alpha = xp.asarray(params.alpha, dtype=counts.dtype, device=counts.device)
        if alpha.ndim == 1:
            alpha = _spread(xp.reshape(alpha, (1, -1)), n_cat, xp=xp)
        smoothed = counts + alpha
        totals = _spread(feature_block_sums(smoothed, _offsets(n_cat), xp=xp), n_cat, xp=xp)
        flp = safe_log(smoothed, xp=xp) - safe_log(totals, xp=xp)
        log_prior = class_prior(self, count, params, xp=xp)[1]
        return {
            "class_count_": count,
            "class_log_prior_": xp.astype(log_prior, dtype),
            # In the namespace and on the device of the fit like every fitted
            # array; the statistics keep the host copy the code indexes with.
            "n_categories_": xp.asarray(n_cat, device=counts.device),
            "_category_count_": counts,
            "_feature_log_prob_": xp.astype(flp, dtype),
            **_scoring_arrays(flp.T, log_prior, n_cat, xp=xp, dtype=dtype),
        }

    @classmethod
    def _stats_from_sklearn(cls, est):
        """Statistics rebuilt from a fitted scikit-learn CategoricalNB."""
        return {
            "class_count": np.asarray(est.class_count_, dtype=np.float64),
            "counts": np.concatenate([np.asarray(c, dtype=np.float64) for c in est.category_count_], axis=1),
            "n_categories": np.asarray(est.n_categories_, dtype=np.int64),
        }

    # ---- the scikit-learn attributes as per-feature lists --------------- #
    def _split(self, flat):
        off = _offsets(to_numpy(self.n_categories_))
        return [flat[:, int(off[j]) : int(off[j + 1])] for j in range(off.shape[0] - 1)]

    @property
    def category_count_(self):
        """Per-feature list of (n_classes, n_categories_[j]) category counts."""
        return self._split(self._category_count_)

    @property
    def feature_log_prob_(self):
        """Per-feature list of (n_classes, n_categories_[j]) log probabilities."""
        return self._split(self._feature_log_prob_)

    # ---- scoring ------------------------------------------------------- #
    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        if has_sparse(xp):  # clipped codes, their int index and the one-hot's ones
            return 12 * (n_features if stored is None else stored) + 8 * n_classes
        return 8 * n_features * (n_classes + 3)  # the gathered rows (n × d × k)

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        n_cat = np.asarray(self._n_cat_host_, dtype=np.int64)
        start, offsets = (to_namespace(getattr(self, name), xp, device) for name in ("_group_start_", "_offsets_"))
        if self._ignore_missing:
            # An unseen category has the same factor (1) in every class, which
            # is exactly a marginalised feature: score missing values as one.
            X, _ = split_missing(X, xp=xp, fill=float(n_cat.max()))
        if is_sparse(X):
            delta, zero_score = self._fitted_arrays(("_delta_", "_zero_score_"), xp=xp, device=device, dtype=dtype)
            nz = sparse_onehot_nonzero(X, offsets, n_columns=int(n_cat.sum()), dtype=dtype)
            return sparse_matmul(nz, delta) + zero_score
        # Codes are clipped to each feature's zero row, so an unseen category
        # (or a missing value, filled as one) adds nothing to any class.
        # (The table's first group carries the log prior: see _scoring_arrays.)
        (table,) = self._fitted_arrays(("_table_",), xp=xp, device=device, dtype=dtype)
        limit, radix = self._fitted_arrays(("_code_limit_", "_radix_"), xp=xp, device=device, dtype=X.dtype)
        codes = xp.minimum(X, limit)
        if start.shape[0] < n_cat.shape[0]:  # paired (see _groups)
            p = n_cat.shape[0] // 2
            pairs = codes[:, 0 : 2 * p : 2] * radix + codes[:, 1 : 2 * p : 2]
            codes = pairs if 2 * p == n_cat.shape[0] else xp.concat([pairs, codes[:, 2 * p :]], axis=1)
        return gathered_row_sums(table, xp.astype(codes, start.dtype) + start, xp=xp)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags
