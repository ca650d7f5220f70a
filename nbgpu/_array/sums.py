"""The one interface to per-class sums (k × d statistics such as ``Yᵀ·X``).

A model's per-class sums are held in one of two representations: a dense
array in the namespace and on the device of the data, or, for a wide count
model fitted on host CSR input, sparse (:class:`sparse_counts.SparseCounts`,
whose module says when and why). Models make, add, merge and read them only
through these functions, so this module (with the kernels of
``class_sums.py`` it calls) is the one place above the array layer that asks
which representation it holds and where ``X`` lives:

- made and added: :func:`of_batch`, :func:`centred_class_sums`, :func:`shifted_class_moments`,
  :func:`can_add_into`, :func:`add_into`, :func:`merged`;
- read: :func:`dense`, :func:`columns`, :func:`row_totals`,
  :func:`column_totals`, :func:`grand_total`, :func:`complement_log_row_sums`;
- checked: :func:`finiteness_witness`, :func:`is_sparse`;
- laid out: :func:`with_rows`, :func:`copy`, :func:`entries`,
  :func:`from_entries`, :func:`from_csc`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .class_sums import add_class_sums_into, class_sums, csr_class_entries, onehot, takes_in_place
from . import blocks
from .namespace import get_namespace, is_host_array, on_host
from .namespace import is_sparse as is_sparse_matrix
from .numerics import row_sums_by_columns
from .paths import fast
from . import sparse_counts
from .sparse_counts import SparseCounts, canonical, sparse_enough, stored_entries


def is_sparse(a) -> bool:
    """Whether sums ``a`` are kept sparse."""
    return isinstance(a, SparseCounts)


def _is_host_csr(X) -> bool:
    return sp.issparse(X) and X.format == "csr" and is_host_array(X.data)


def _gathers_sparse(X, n_classes) -> bool:
    """Whether the sums of ``X`` are kept sparse: a host CSR matrix, a wide
    model (k × d at least ``WIDE_ENTRIES``), and few enough stored values
    (each makes at most one entry) that the sums must be sparse."""
    if not (_is_host_csr(X) and fast("sparse_sums")):
        return False
    size = n_classes * X.shape[1]
    return size >= sparse_counts.WIDE_ENTRIES and X.nnz * sparse_counts.SPARSE_FRACTION <= size


def of_batch(X, codes, weights, n_classes, *, xp, dtype, may_be_sparse=False):
    """``Yᵀ·X`` (k × d) of one validated batch in ``dtype``: sparse where
    ``may_be_sparse`` (a model whose sums may be) and ``X`` makes them so."""
    if may_be_sparse and _gathers_sparse(X, n_classes):
        sums = SparseCounts.empty((n_classes, X.shape[1]))
        sums.add(*csr_class_entries(X, codes, weights, n_classes, summed=False), overflow_ok=True)
        return kept(sums)
    return class_sums(X, codes, weights, n_classes, xp=xp, dtype=dtype)


def centred_class_sums(X, codes, weights, n_classes, mean, plain, *, xp, dtype, missing=None):
    """``Σ_{i∈c} w_i (x_ij − mean_cj)²`` (k × d) from the class means ``mean``
    and the plain sums ``plain = Yᵀ·X`` of the same rows. Dense ``X``: one
    more pass, over the residuals (no cancellation), those of ``missing``
    entries (an indicator like ``X``, or None) zero. Sparse ``X`` stays
    sparse: ``Yᵀ·X² − mean · plain`` (implicit zeros are observed values),
    rounding below 0 floored at 0."""
    if is_sparse_matrix(X):
        m2 = class_sums(X, codes, weights, n_classes, xp=xp, dtype=dtype, power=2) - mean * plain
        return xp.maximum(m2, xp.zeros_like(m2))  # (not clip: a masked assignment on cupy)
    resid = X - xp.take(mean, codes, axis=0)
    if missing is not None:
        resid = resid * (1.0 - missing)
    resid *= resid
    return class_sums(resid, codes, weights, n_classes, xp=xp, dtype=dtype)


def shifts_moments(xp, missing) -> bool:
    """Whether :func:`shifted_class_moments` takes a dense batch of ``xp`` (without
    ``missing`` values): fast path ``shifted_moments``, on a device."""
    return not missing and not on_host(xp) and fast("shifted_moments")


def shifted_class_moments(X, codes, weights, n_classes, *, xp, dtype, scatter=False):
    """``(class weights (k,), mean (k × d), M2)`` in ``dtype`` of dense ``X`` (in its
    own dtype) from the sums of ``R = x − s_c`` and of ``R²`` (``scatter``: of the
    outer products ``R Rᵀ``, M2 then k × d × d), ``s_c`` a row of class ``c``:
    ``mean = s + ΣwR / W``, ``M2 = ΣwR² − (ΣwR)² / W`` (elementwise M2 floored at 0).
    The subtraction cancels a relative ``eps · ((s − μ) / σ)²`` of M2, and a row of
    the class is seldom many of its standard deviations from its mean (the residuals
    of the mean cancel ``eps``); a class of weight 0 has mean and M2 zero (as the
    centred sums give it, which merges need). The sums add up over the row blocks:
    no merge of moments per block. Finding each class's row sorts the codes (n
    labels, once a call).

    Fast path ``shifted_moments``: each row block of X is read once, by the
    subtraction, which also casts it (R is in ``dtype``), R by one product and R²
    (or the class-spread R) by the other, with one one-hot ``Y``. Emulated device,
    ``tests/test_device_cost.py``'s sizes: GaussianNB 4 passes over X-sized arrays
    and 368 launches in 20 row blocks, against 6 and 837 (a cast, the sums of X,
    X − mean, its square counted twice, the sums of the squares, two one-hot
    matrices and a merge of moments per block); NormalBayesClassifier 4 and 523 in
    37 blocks against 5 and 1159. Its reference: :func:`centred_class_sums`
    (:func:`class_scatter`) on each row block cast first, merged.
    """
    n, d = X.shape
    classes = xp.arange(n_classes, dtype=codes.dtype, device=codes.device)
    # Each class's first row in a stable sort of the codes; a class without rows takes
    # another's (its sums are 0 whatever its shift).
    order = xp.argsort(codes, stable=True)
    at = xp.searchsorted(xp.take(codes, order), classes)
    at = xp.minimum(at, xp.asarray(n - 1, dtype=at.dtype, device=at.device))  # (clip: a masked assignment on cupy)
    shift = xp.astype(xp.take(X, xp.take(order, at), axis=0), dtype)
    row_bytes = 8 * ((n_classes * d if scatter else 0) + 3 * d + n_classes)
    totals = None
    for start, stop in blocks.row_blocks(n, row_bytes, xp=xp):
        block = codes[start:stop]
        Y = onehot(block, n_classes, dtype=dtype, xp=xp, weights=None if weights is None else weights[start:stop])
        R = X[start:stop, :] - xp.take(shift, block, axis=0)
        if scatter:  # Σ_i Y_ic R_i R_iᵀ for all classes in one product, as class_scatter
            m = stop - start
            spread = xp.reshape(xp.reshape(Y, (m, n_classes, 1)) * xp.reshape(R, (m, 1, d)), (m, n_classes * d))
            second = xp.reshape(spread.T @ R, (n_classes, d, d))
        else:
            second = (xp.square(R).T @ Y).T
        parts = (xp.sum(Y, axis=0), (R.T @ Y).T, second)
        totals = parts if totals is None else tuple(a + b for a, b in zip(totals, parts))
    rows, first, second = totals
    count = xp.reshape(rows, (-1, 1))
    seen = count > 0
    per_weight = first / xp.where(seen, count, xp.ones_like(count))
    zero = xp.zeros_like(first)
    mean = xp.where(seen, shift + per_weight, zero)
    if scatter:
        return rows, mean, second - xp.reshape(first, (n_classes, d, 1)) * xp.reshape(per_weight, (n_classes, 1, d))
    return rows, mean, xp.maximum(second - first * per_weight, zero)  # (not clip: a masked assignment on cupy)


def can_add_into(sums, X) -> bool:
    """Whether :func:`add_into` can take ``X``'s batch into ``sums`` in place (it may
    still refuse a sum that would overflow): asked before the batch is summed."""
    return _is_host_csr(X) if is_sparse(sums) else takes_in_place(sums)


def add_into(sums, X, codes, weights, n_classes, *, xp):
    """``sums += Yᵀ·X`` in place; False (nothing changed) where they cannot
    take the batch in place (sparse sums from anything but host CSR, a dense
    array that is not host float64) or a sum would overflow: the caller then
    merges (:func:`merged`), whose checks say why."""
    if is_sparse(sums):
        return _is_host_csr(X) and sums.add(*csr_class_entries(X, codes, weights, n_classes, summed=False))
    return add_class_sums_into(sums, X, codes, weights, xp=xp)


def kept(sums):
    """``sums`` as they are, or dense once sparse sums stop being sparse
    enough (decided when their log was last folded: a read of the count
    would fold it)."""
    if is_sparse(sums) and sums.folded and not sparse_enough(sums.shape, sums.nnz):
        return sums.csc.toarray()
    return sums


def merged(a, b):
    """``a + b`` (a new entry): sparse while both are and the sum is sparse
    enough, else dense."""
    if is_sparse(a) and is_sparse(b):
        return kept(SparseCounts(canonical(a.csc + b.csc)))
    return dense(a) + dense(b)


def dense(a):
    """``a`` as a dense array (sparse sums made dense; a dense array as it is)."""
    return a.csc.toarray() if is_sparse(a) else a


def columns(a, cols):
    """Columns ``cols`` (a slice or an index array) as a dense k × c array."""
    return a.csc[:, cols].toarray() if is_sparse(a) else a[:, cols]


def row_totals(a, *, xp):
    """``Σ_j a_cj`` as a k × 1 array."""
    if is_sparse(a):
        return a.totals("rows").reshape(-1, 1)
    return xp.sum(a, axis=1, keepdims=True)


def column_totals(a, *, xp):
    """``Σ_c a_cj`` as a vector of d."""
    if is_sparse(a):
        return a.totals("columns")
    return xp.sum(a, axis=0)


def grand_total(a) -> float:
    """``Σ_cj a_cj`` on the host, summed in float64."""
    return float(np.sum(a.csc.data if is_sparse(a) else np.asarray(a), dtype=np.float64))


def complement_log_row_sums(a, column, total, dense_columns, *, xp):
    """``Σ_j log((column_j − a_cj) / total_c)`` (k × 1), ``column`` ≥ every
    ``a_cj``. Dense sums: ``dense_columns(cols)`` gives those logs a column
    chunk at a time (:func:`numerics.row_sums_by_columns`). Sparse sums from
    their stored entries alone: the log is ``log(column_j / total_c)``
    wherever ``a_cj`` is not stored, so the sum is ``Σ_j log column_j +
    Σ_{a_cj stored} [log(column_j − a_cj) − log column_j] − d log total_c``:
    the stored entries and d, not k × d."""
    if not is_sparse(a):
        return row_sums_by_columns(dense_columns, a.shape, xp=xp)
    csc = a.csc
    at = np.repeat(column, np.diff(csc.indptr))  # column_j of each stored a_cj
    with np.errstate(divide="ignore"):  # log 0 = -inf, as the dense sums give it
        shared = np.sum(np.log(column))
        logs = np.log(at - csc.data) - np.log(at)
        stored = np.bincount(csc.indices, weights=logs, minlength=csc.shape[0])
        return (shared + stored).reshape(-1, 1) - csc.shape[1] * np.log(total)


def finiteness_witness(a):
    """An array whose sum is finite exactly when the sums ``a`` are: ``a``
    itself, or of sparse sums their finite upper bound (no pass over them),
    else their stored values."""
    if not is_sparse(a):
        return a
    return np.asarray([a.bound]) if np.isfinite(a.bound) else a.csc.data


def with_rows(a, source, *, xp):
    """``a`` (class axis first) with row ``i`` taken from row ``source[i]``
    (host ints), or zero where ``source[i]`` is ``a.shape[0]``: the layout of
    classes added by a merge."""
    if is_sparse(a):
        csc = a.csc
        padded = sp.vstack([csc.tocsr(), sp.csr_array((1, csc.shape[1]), dtype=csc.dtype)], format="csr")
        return SparseCounts(padded[np.asarray(source)].tocsc())
    zero = xp.zeros((1, *a.shape[1:]), dtype=a.dtype, device=a.device)
    return xp.take(xp.concat([a, zero], axis=0), xp.asarray(source, device=a.device), axis=0)


def copy(a):
    """A copy of ``a`` that later in-place additions to ``a`` leave alone."""
    if is_sparse(a):
        return SparseCounts(a.csc.copy())
    return get_namespace(a).asarray(a, copy=True)


def entries(a, index_dtype):
    """``(flat row-major indices ascending, values)`` of the nonzero sums of
    sparse ``a``: what a model file stores of an array that is mostly zeros."""
    return stored_entries(a, index_dtype)


def stays_sparse(shape, nnz) -> bool:
    """Whether sums of ``shape`` with ``nnz`` nonzero entries are kept sparse."""
    return sparse_enough(shape, nnz)


def from_csc(csc):
    """Sparse k × d sums held as the float64 CSC array ``csc`` (where
    :func:`stays_sparse`), made canonical where it is not."""
    if not csc.has_canonical_format:
        csc = csc.copy()
        csc.sum_duplicates()
    return SparseCounts(csc)


def from_entries(indices, values, shape):
    """Sparse k × d sums whose row-major flat ``indices`` (ascending, in
    range: checked by the caller) hold ``values`` (where :func:`stays_sparse`)."""
    return sparse_counts.from_entries(indices, values, shape)
