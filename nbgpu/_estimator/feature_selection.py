"""Pearson's chi-squared statistic of every feature against the class, from class sums
(:func:`chi2` from data; a fitted count model's ``chi2_scores()`` from its statistics)."""

from __future__ import annotations

from .._array.class_sums import class_sums, class_totals
from .._array.numerics import chi2_survival, float_warnings_off
from .._validation import (
    check_non_negative,
    check_sample_weight,
    check_X,
    check_y,
    encode_labels,
    unique_labels,
)
from .adapters import refuse_collections
from .traits import Traits


def chi2_from_counts(weight, observed, *, xp):
    """``(chi2, pvalues)`` (d,), in the sums' dtype, from per-class weights (k,) and feature sums (k × d).

    One class is padded with an empty one, as scikit-learn's label binarizer does, so
    its statistic is NaN (0/0), as is that of a feature that is zero everywhere.
    """
    if weight.shape[0] == 1:
        observed = xp.concat([observed, xp.zeros_like(observed)], axis=0)
        weight = xp.concat([weight, xp.zeros_like(weight)], axis=0)
    k = observed.shape[0]
    expected = xp.reshape(weight / xp.sum(weight), (-1, 1)) * xp.sum(observed, axis=0)
    with float_warnings_off():
        diff = observed - expected
        statistic = xp.sum(diff * diff / expected, axis=0)
    pvalues = chi2_survival(k - 1, statistic, xp=xp)  # on the device where the statistic is
    return statistic, xp.astype(pvalues, statistic.dtype)


def chi2(X, y, *, sample_weight=None):
    """Chi-squared statistics between every non-negative feature and the class.

    The same statistics and p-values as
    :func:`sklearn.feature_selection.chi2` (and a drop-in score function for
    :class:`sklearn.feature_selection.SelectKBest`), from one pass of the
    class-sum kernel over ``X``: sparse input is never densified, integer
    counts are not copied to float, and the work runs on the device of
    ``X``. With ``O = Yᵀ·X`` the per-class feature sums, ``N_c`` the class
    weights, ``N = Σ N_c`` and ``F_j = Σ_c O_cj``::

        E_cj = N_c · F_j / N,   chi2_j = Σ_c (O_cj − E_cj)² / E_cj,
        p_j = P(χ²_{k−1} > chi2_j)   (k classes).

    A fitted MultinomialNB, ComplementNB or BernoulliNB holds ``N_c`` and
    ``O`` already: its ``chi2_scores()`` gives the same result without
    reading the data again.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative features (counts, frequencies, booleans): any Array API
        array or a scipy/cupyx sparse matrix.
    y : array-like of shape (n_samples,)
        Class labels.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weight of every row (an integer weight counts as that
        many copies of the row). scikit-learn's ``chi2`` has no weights.

    Returns
    -------
    chi2 : array of shape (n_features,)
        The statistic of every feature (NaN for a feature that is zero in
        every row), float64 where the device has it, in the namespace and on
        the device of ``X``.
    pvalues : array of shape (n_features,)
        Their p-values.

    Examples
    --------
    >>> import numpy as np
    >>> import nbgpu
    >>> X = np.array([[4, 0, 1], [3, 1, 1], [0, 5, 1], [1, 4, 1]])
    >>> scores, p = nbgpu.chi2(X, [0, 0, 1, 1])
    >>> np.round(scores, 3)
    array([4.5, 6.4, 0. ])
    """
    refuse_collections("chi2", X=X, y=y, sample_weight=sample_weight)
    # Names chi2 in the messages of the shared input checks, which take X as a model with no
    # trait of its own would.
    caller = type("chi2", (), {"_traits": Traits()})()
    # The sums are linear in X: duplicate entries need not be summed first.
    X, kind = check_X(X, estimator=caller, sum_duplicates=False)
    xp, device, acc = kind.xp, kind.device, kind.sums_dtype
    check_non_negative(X, estimator=caller)
    n_samples = X.shape[0]
    y = check_y(y, n_samples)
    classes = unique_labels(y)
    codes = encode_labels(y, classes, xp=xp, device=device)
    weights = check_sample_weight(sample_weight, n_samples, xp=xp, device=device, dtype=acc)
    n_classes = classes.shape[0]
    counts = class_totals(codes, weights, n_classes, dtype=acc, xp=xp)
    sums = class_sums(X, codes, weights, n_classes, xp=xp, dtype=acc)
    return chi2_from_counts(counts, sums, xp=xp)

