"""Numerics that every model shares: logs that keep products finite, the
log-sum-exp normalisation, the Chan–Golub–LeVeque merge of moments, and the
few functions the Array API standard lacks (log Γ).
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np
from array_api_compat import is_torch_namespace

from .blocks import column_chunks
from .namespace import device_library, on_host, to_numpy, uses_device_library
from .threads import parallel_map


def safe_log(x, *, xp, overwrite=False):
    """log(x) with zeros mapped to the log of the smallest normal number.

    Keeps ``0 · log p`` finite in the matrix products (``0 · -inf`` is NaN).
    ``overwrite=True`` lets the result reuse the memory of ``x``, a
    temporary, when a read-only pass finds nothing to map.
    """
    # (The read-only pass is a synchronisation on a device, where a fresh
    # array costs no page faults: there the log is never taken in place.)
    if overwrite and on_host(xp) and float(xp.min(x)) > 0:
        return log_in_place(x, xp=xp)
    tiny = xp.finfo(x.dtype).smallest_normal
    return xp.log(xp.where(x > 0, x, xp.asarray(tiny, dtype=x.dtype, device=x.device)))


def log_ratio(num, den, *, xp, overwrite_num=False):
    """``safe_log(num) - safe_log(den)`` for counts ``num >= 0``.

    ``den`` is small (it broadcasts, e.g. k × 1 row totals), so the k × d work
    (finalize time on wide data) is one maximum, one log and one in-place
    subtraction: no division, which costs as much as the log.
    ``overwrite_num=True`` lets the result reuse the memory of ``num``, a
    temporary.
    """
    tiny = xp.finfo(num.dtype).smallest_normal
    log_den = safe_log(den, xp=xp)
    if not (on_host(xp) and isinstance(num, np.ndarray) and num.ndim == 2):
        # Zero counts (alpha=0) floored at tiny: always, a pass on the device
        # costs less than reading back whether one is needed.
        out = log_in_place(xp.maximum(num, xp.asarray(tiny, dtype=num.dtype, device=num.device)), xp=xp)
        out -= log_den
        return out
    # On the host one pass in place: the callers hand it a column chunk of
    # the weights at a time (``laid_out_by_columns``, in cache, on all cores).
    out = num if overwrite_num and num.flags.writeable else np.empty_like(num)
    np.maximum(num, tiny, out=out)  # a zero count (alpha=0) -> log(tiny)
    np.log(out, out=out)
    out -= log_den
    return out


def columns_of(a, cols):
    """The columns ``cols`` (a slice or an index array) of a per-feature
    array: the last axis of a vector or matrix, a scalar as it is."""
    return a[..., cols] if a.ndim else a


def laid_out_by_columns(make_columns, shape, dtype, *, xp):
    """The d × k scoring layout (see :func:`scoring_weights`) of the k × d
    array ``shape`` that ``make_columns(cols)`` gives a column chunk at a time.

    On the host each chunk is made and written transposed while in cache, on
    all cores: the k × d array is never whole (no second k × d array, and no
    pass over one). Elsewhere one chunk of all the columns.
    """
    if not on_host(xp):
        return scoring_weights(make_columns(slice(None)), dtype, xp=xp)
    out = np.empty(shape[::-1], dtype=dtype)
    _fill_by_columns(out.T, make_columns)
    return out


def made_by_columns(make_columns, shape, dtype, *, xp):
    """The k × d array ``shape`` that ``make_columns(cols)`` gives a column
    chunk at a time, as ``dtype`` (on the host made on all cores)."""
    if not on_host(xp):
        return xp.astype(make_columns(slice(None)), dtype, copy=False)
    out = np.empty(shape, dtype=dtype)
    _fill_by_columns(out, make_columns)
    return out


def _fill_by_columns(out, make_columns, itemsize=8):
    """``out[:, cols] = make_columns(cols)`` for the column chunks of host
    array ``out`` (possibly a transposed view), on all cores."""

    def chunk(cols):
        out[:, cols] = make_columns(cols)

    parallel_map(chunk, column_chunks(out.shape, itemsize))


def row_sums_by_columns(make_columns, shape, *, xp):
    """``Σ_j`` (k × 1) of the k × d array ``shape`` that ``make_columns(cols)``
    gives a column chunk at a time, without making it whole; the chunks' sums
    are added in a fixed order (the same totals on every call)."""
    if not on_host(xp):
        return xp.sum(make_columns(slice(None)), axis=1, keepdims=True)
    sums = parallel_map(
        lambda cols: np.sum(make_columns(cols), axis=1, keepdims=True), column_chunks(shape, 8)
    )
    return functools.reduce(operator.add, sums)


def log_or_neg_inf(x, *, xp):
    """log(x) with zeros mapped to -inf, without a divide-by-zero warning."""
    one = xp.ones_like(x)
    return xp.where(x > 0, xp.log(xp.where(x > 0, x, one)), -math.inf * one)


def logsumexp_last(a, *, xp):
    """log Σ exp(a) over the last axis; -inf where every term is -inf."""
    top = xp.max(a, axis=-1)
    safe = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    total = xp.sum(xp.exp(a - safe[..., None]), axis=-1)
    return log_or_neg_inf(total, xp=xp) + safe


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


def best_scores_finite(jll, *, xp, cheap_sync):
    """Whether every row's best score is finite (a 0-d array or a bool).

    Where a synchronisation is cheap (host blocks), one sum settles the
    common case; only scores with a -inf (a class of zero prior) or bad
    input pay for the row maxima.
    """
    if cheap_sync and bool(xp.isfinite(xp.sum(jll))):
        return True
    return xp.all(xp.isfinite(xp.max(jll, axis=1)))


def float_bits(values, *, xp):
    """Float array ``values`` viewed as unsigned integers of its width (no copy), where the library
    allows it (numpy, the device library), else None. The bits of a finite value >= 0 lie below
    those of +infinity: one max over them checks both (-0.0 does not pass)."""
    if not (on_host(xp) or uses_device_library(xp)) or not xp.isdtype(values.dtype, "real floating"):
        return None
    return values.view(f"u{values.dtype.itemsize}")


def lgamma(a, *, xp):
    """log Γ(a) elementwise (not in the Array API standard), same namespace and device."""
    if is_torch_namespace(xp):
        import torch

        return torch.lgamma(a)
    if uses_device_library(xp):
        return device_library(xp).cupyx.scipy.special.gammaln(a)
    from scipy.special import gammaln

    if on_host(xp):
        return xp.asarray(gammaln(a))
    # Other namespaces (array-api-strict): through the host and back.
    host = np.asarray(gammaln(to_numpy(a)), dtype=to_numpy(a).dtype)
    return xp.asarray(host, device=a.device)


def chi2_survival(df, x, *, xp):
    """``P(χ²_df > x)`` elementwise (float64 ``x``), same namespace and device:
    scipy's ``chdtrc`` on the host, cupyx's on a device, through the host
    for other namespaces."""
    if uses_device_library(xp):
        return device_library(xp).cupyx.scipy.special.chdtrc(df, x)
    from scipy.special import chdtrc

    if on_host(xp):
        return xp.asarray(chdtrc(df, x))
    return xp.asarray(chdtrc(df, np.asarray(to_numpy(x), dtype=np.float64)), device=x.device)


def contiguous(a, *, xp):
    """``a`` laid out row-major where the library lets us say so: sparse-times-
    dense products stream the dense operand by rows, so it decides their speed."""
    if on_host(xp):
        return np.ascontiguousarray(a)
    if uses_device_library(xp):
        return device_library(xp).cupy.ascontiguousarray(a)
    if is_torch_namespace(xp):
        return a.contiguous()
    return a


def log_in_place(x, *, xp):
    """``log(x)``, written over ``x`` (a temporary) where the library allows:
    on a k × d array of tens of MB (finalize), a fresh one costs page faults."""
    if on_host(xp) and isinstance(x, np.ndarray) and x.flags.writeable:
        if x.ndim != 2:
            return np.log(x, out=x)
        parallel_map(lambda cols: np.log(x[:, cols], out=x[:, cols]), column_chunks(x.shape, x.itemsize))
        return x
    return xp.log(x)


def product_operand(w, *, xp):
    """Dense ``w`` laid out as the right-hand operand of ``X @ w`` wants it.

    On the host row-major: scipy's sparse product streams ``w`` by rows. On
    a device column-major: cuSPARSE takes its dense operand so, and cupyx
    copies any other layout to column-major on every product (for scoring
    weights, a copy of the whole d × k matrix per row block). Dense products
    (cuBLAS) take either layout without a copy.
    """
    if uses_device_library(xp):
        return device_library(xp).cupy.asfortranarray(w)
    return contiguous(w, xp=xp)


def scoring_weights(a, dtype, *, xp):
    """``a.T`` (d × k scoring weights from k × d parameters) as ``dtype``,
    laid out by :func:`product_operand`'s rule.

    On a device that is a view: the transpose of a row-major k × d array is
    column-major. On numpy the cast and the transpose are one pass into one
    new array, in column chunks on all cores.
    """
    if uses_device_library(xp):
        return contiguous(xp.astype(a, dtype), xp=xp).T
    if on_host(xp):
        out = np.empty(a.shape[::-1], dtype=dtype)
        _fill_by_columns(out.T, lambda cols: a[:, cols], a.itemsize)
        return out
    return contiguous(xp.astype(a, dtype).T, xp=xp)


def float_warnings_off():
    """A context in which invalid or overflowing float operations (numpy's
    RuntimeWarnings) pass silently, for code that checks its results itself."""
    return np.errstate(invalid="ignore", over="ignore")


def nonzero(n, *, xp):
    """``n`` with zeros replaced by ones: a safe divisor for empty sums."""
    return xp.where(n > 0, n, xp.ones_like(n))


def chan_merge(a, b, *, xp):
    """Merge (weight, mean, M2) of two disjoint sets of rows.

    Chan, Golub & LeVeque's pairwise update: exact, and stable because it
    never subtracts large sums of squares. ``M2`` is either elementwise
    sums of squared deviations (the shape of ``mean``) or scatter matrices
    ``Σ (x−μ)(x−μ)ᵀ`` (one more axis), updated with ``δ δᵀ``. The weight
    ``n`` broadcasts against ``mean`` (e.g. (k, 1) for (k, d) means, or one
    weight per feature where values are missing).
    """
    n_a, mu_a, m2_a = a
    n_b, mu_b, m2_b = b
    n = n_a + n_b
    frac_b = xp.where(n > 0, n_b / nonzero(n, xp=xp), xp.zeros_like(n))
    delta = mu_b - mu_a
    mu = mu_a + delta * frac_b
    gain = n_a * frac_b
    if m2_a.ndim > mu_a.ndim:  # scatter matrices
        spread = xp.expand_dims(delta, axis=-1) * xp.expand_dims(delta, axis=-2)
        gain = xp.expand_dims(gain, axis=-1)
    else:
        spread = delta * delta
    return n, mu, m2_a + m2_b + spread * gain
