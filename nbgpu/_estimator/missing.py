"""Missing values (NaN) for models with ``missing="ignore"``.

Naive Bayes factorises over features, so a missing value is handled
exactly: in fit it adds nothing to that feature's statistics (per-class
weights become per-class, per-feature weights), and in predict its factor
is integrated out, which for a density means dropping the feature's term
from that row's joint log-likelihood.

A model opts in with three small steps (GaussianNB and CategoricalNB do):

1. a ``missing="error"`` parameter (``_BaseNB`` validates it and then lets
   NaN through ``check_X``);
2. in ``_accumulate``: ``X, miss = split_missing(X, xp=xp)`` and sums over
   the filled ``X``; the weight behind each per-class feature statistic is
   ``observed_weights(class_count, miss, ...)``;
3. in ``_joint_log_likelihood``: score the filled ``X`` and subtract each
   missing entry's term with ``drop_missing(jll, miss, terms)``, where
   ``terms`` (d × k) is every feature's contribution at the fill value.

``miss`` is the 0/1 indicator of the missing entries, dense or sparse like
``X``, or ``None`` when nothing is missing (then every helper is a no-op).
"""

from __future__ import annotations

from .._array.class_sums import class_sums
from .._array.namespace import get_namespace, is_sparse, on_host
from .._array.sparse import sparse_matmul, sparse_with_values


def split_missing(X, *, xp, fill=0.0):
    """``(X with NaN replaced by fill, indicator of the NaN)``, both like ``X``.

    ``fill`` is a scalar, or one value per feature for dense ``X``. The
    indicator is None when ``X`` holds no NaN, which is found out on the host
    only (on a device it would cost a synchronisation per block).
    """
    sparse = is_sparse(X)
    data = X.data if sparse else X
    dxp = get_namespace(data) if sparse else xp
    nan = dxp.isnan(data)
    if on_host(dxp) and not bool(dxp.any(nan)):
        return X, None
    filled = dxp.where(nan, dxp.asarray(fill, dtype=data.dtype, device=data.device), data)
    indicator = dxp.astype(nan, data.dtype)
    if sparse:
        return sparse_with_values(X, filled), sparse_with_values(X, indicator)
    return filled, indicator


def observed_weights(class_count, indicator, codes, weights, n_classes, *, xp, dtype):
    """Per-class, per-feature weight of the observed values (n_classes × d):
    ``class_count`` (k,) less each missing entry's row weight."""
    counts = xp.reshape(class_count, (-1, 1))
    if indicator is None:
        return counts
    return counts - class_sums(indicator, codes, weights, n_classes, xp=xp, dtype=dtype)


def drop_missing(jll, indicator, terms, *, xp):
    """``jll`` less the term of every missing entry; ``terms`` (d × k) holds each
    feature's contribution to each class's joint log-likelihood at the fill value."""
    if indicator is None:
        return jll
    terms = xp.astype(terms, jll.dtype)
    if is_sparse(indicator):
        return jll - sparse_matmul(indicator, terms)
    return jll - xp.astype(indicator, jll.dtype) @ terms
