"""Sparse matrices: ``scipy.sparse`` on the host, ``cupyx.scipy.sparse`` on a GPU.

Sparse matrices are not in the Array API standard, so every operation on
them lives here; model code calls these and never a sparse library.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from .namespace import (
    device_library,
    get_namespace,
    has_sparse,
    is_host_array,
    on_host,
    sparse_lib,
    to_numpy,
)
from .paths import fast


def _on_device(X):
    """Whether sparse (or dense) ``X`` lives on a device (cupyx, or its stand-in)."""
    return not on_host(get_namespace(X))


def _library(X):
    """The device library (cupy and cupyx) of a device array or sparse matrix."""
    return device_library(get_namespace(X))


def device_compressed(X_like, fmt, data, indices, indptr, shape, *, canonical):
    """A device CSR/CSC matrix from its arrays, without a synchronisation.

    cupyx's constructor from ``(data, indices, indptr)`` reads the ends of
    ``indptr`` back to the host, and the contents of int64 index arrays (one
    to five synchronisations); nbgpu's arrays are consistent by construction,
    so an empty matrix of the shape is handed them (public attributes).
    ``indices`` and ``indptr`` share one integer dtype, int32 where the
    values fit (as cupyx would choose, and cuSPARSE's fast paths take).
    ``canonical`` (True, False or None for "unknown") is recorded as the
    format flag, so a product does not check it again. ``X_like`` is any
    array or matrix of the same device library.
    """
    sparse = _library(X_like).cupyx.scipy.sparse
    out = getattr(sparse, f"{fmt}_matrix")(tuple(int(s) for s in shape), dtype=data.dtype)
    out.data, out.indices, out.indptr = data, indices, indptr
    if canonical is not None:
        out.has_canonical_format = canonical
    return out


def index_dtype(lib, *bounds):
    """int32 when every value below ``max(bounds)`` fits, else int64."""
    return lib.int32 if max(bounds) < 2**31 else lib.int64


def sparse_checked(X, *, name="X", elements=True):
    """``X`` as a CSR/CSC matrix the kernels can trust, copied only where needed.

    Host (scipy) matrices: other formats become CSR (scipy sums duplicates
    on the way), and the index structure of a CSR/CSC matrix is checked
    (:func:`structure_problem`: scipy's compiled kernels trust it), raising
    a ValueError that names ``name``. Sums and products over the stored
    values (``Yᵀ·X``, ``X·W``) depend neither on the order of a row's values
    nor on duplicate entries, so ``elements=False`` keeps ``X`` as it comes.
    Binarizing, squaring, one-hot encoding and ``log Γ`` act on elements, so
    ``elements=True`` sums duplicates, in a copy; a matrix without
    duplicates is kept as it is, sorted or not. Device matrices are made
    canonical (sorted, duplicates summed in a copy) where ``elements``, else
    kept as they come: their format flag is not asked (unless cupyx knows
    it, a pass over the indices and a synchronisation).
    """
    host = sp.issparse(X)
    if host and X.format == "coo":
        # scipy's conversion trusts the coordinates as much as a product does;
        # read as unsigned, negative coordinates are larger than any valid one.
        for axis, coords in enumerate((X.row, X.col)):
            if coords.size and coords.view(f"u{coords.dtype.itemsize}").max() >= X.shape[axis]:
                msg = (
                    f"`{name}` is not a valid COO matrix: its {('row', 'column')[axis]} indices must "
                    f"lie in [0, {X.shape[axis]}); they range from {coords.min()} to {coords.max()}."
                )
                raise ValueError(msg)
    if X.format not in ("csr", "csc"):
        return X.tocsr()
    if not host:
        duplicates = elements and not X.has_canonical_format
    else:
        problem = structure_problem(X.format, X.data, X.indices, X.indptr, X.shape)
        if problem is not None:
            msg = f"`{name}` is not a valid {X.format.upper()} matrix: {problem}."
            raise ValueError(msg)
        # A canonical matrix (scipy checks in one pass and remembers) has no
        # duplicates. Otherwise the transpose, a counting sort (linear, unlike
        # sorting every row), puts duplicates next to each other, where its
        # canonical check finds them.
        duplicates = elements and not (
            X.has_canonical_format or (X.tocsc() if X.format == "csr" else X.tocsr()).has_canonical_format
        )
    if duplicates:
        X = X.copy()
        X.sum_duplicates()
    return X


def sparse_with_values(X, data):
    """A matrix with ``X``'s sparsity structure and new stored values."""
    if _on_device(X):  # shares X's index arrays
        return device_compressed(X, X.format, data, X.indices, X.indptr, X.shape, canonical=X.has_canonical_format)
    out = X.copy()
    out.data = data
    return out


def sparse_binarize(X, threshold):
    """``X > threshold`` as a sparse matrix of ones (threshold >= 0 keeps zeros zero).

    On a device the values that drop out stay stored, as zeros: they add
    nothing to sums or products, and compacting them would read their
    number back (a synchronisation).
    """
    keep = X.data > threshold
    if _on_device(X):
        return sparse_with_values(X, keep.astype(X.dtype))
    if bool(keep.all()):
        # Nothing drops out (counts with threshold 0): share X's index arrays.
        return type(X)((keep.astype(X.dtype), X.indices, X.indptr), shape=X.shape, copy=False)
    out = sparse_with_values(X, keep.astype(X.dtype))
    out.eliminate_zeros()
    return out


def sparse_column_max(X, rows=None):
    """Per-column maximum as a dense 1-D array, implicit zeros included.

    ``rows`` (a boolean array, one per row) restricts it to the rows marked
    True; the others count as zeros.
    """
    if sp.issparse(X) and X.format == "csc" and not X.has_canonical_format:
        X = X.copy()  # scipy's max sorts a CSC matrix in place (not the caller's)
    lib = sparse_lib(X)
    if _on_device(X):
        # One scatter of the stored values (cupyx's max(axis=0) sums
        # duplicates and compresses: three syncs); the values are >= 0
        # (category codes), so implicit zeros are the starting value.
        row, column = (stored_rows(X), X.indices) if X.format == "csr" else (X.indices, stored_rows(X))
        values = X.data if rows is None else lib.where(rows[row], X.data, lib.zeros(1, dtype=X.dtype))
        top = lib.zeros(X.shape[1], dtype=X.dtype)
        _library(X).cupy.maximum.at(top, column, values)
        return top
    if rows is not None and not rows.all():
        # The marked rows' maxima, then the others' zeros (a row selection: not a product with a
        # diagonal matrix of the mask, 1.5-2.3x its time on a Dask block).
        marked = np.flatnonzero(rows)
        top = X[marked].max(axis=0).toarray().reshape(-1) if marked.size else np.zeros(X.shape[1], X.dtype)
        return np.maximum(top, 0)
    return lib.asarray(X.max(axis=0).toarray()).reshape(-1)


def stored_rows(X, lo=0, hi=None):
    """Row of every stored value ``lo:hi`` of a CSR matrix (column of a CSC
    one): a search in ``indptr``, so no value is read back to the host."""
    lib = sparse_lib(X)
    hi = X.nnz if hi is None else hi
    position = lib.arange(lo, hi, dtype=index_dtype(lib, X.nnz))
    return lib.searchsorted(X.indptr[1:], position, side="right")


def sparse_matmul(X, W):
    """``X @ W`` for sparse ``X`` (n × d) and dense ``W`` (d × k): dense n × k.

    The library's product as it is. (A host product cut into row ranges on
    the thread pool was removed: 0.69-0.75× the plain product on 2 cores,
    also at the highest priority: benchmarks/results/fast-paths-sparse-matmul-threads-2core.json.)
    """
    return sparse_lib(X).asarray(X @ W)


# compact_columns sorts the stored values instead of marking d columns when
# they are fewer than d / _SORT_OVER_MASK (a sort costs ~log n passes of them).
_SORT_OVER_MASK = 32


def compact_columns(X):
    """``(columns, Xc)`` for a host CSR matrix ``X``: the distinct columns
    ``columns`` it stores values in, and ``X`` on just those (column ``j`` of
    ``Xc`` is column ``columns[j]`` of ``X``).

    Values and their order are kept, so ``Xc @ W[columns]`` adds the same
    terms in the same order as ``X @ W``: the same scores, bit for bit, from
    only the rows of ``W`` that ``X`` uses.

    Fast path ``few_columns`` (a model makes the weights of the columns
    returned only); its reference returns every column and ``X`` itself.
    Scoring 10 rows with a 20 × 2**19 model whose weights are not made yet:
    about 200× faster, in 700× less memory (``benchmarks/fast_paths.py``).
    """
    if not fast("few_columns"):
        return np.arange(X.shape[1]), X
    if X.nnz * _SORT_OVER_MASK < X.shape[1]:
        # Few stored values in a wide model (one document, 2**29 hashed features):
        # a sort of them, not passes over d.
        columns, position = np.unique(X.indices, return_inverse=True)
        position = position.astype(X.indices.dtype, copy=False)
    else:
        # A mask of the d columns rather than a sort of the stored values:
        # two passes over them and one over d.
        used = np.zeros(X.shape[1], dtype=bool)
        used[X.indices] = True
        columns = np.flatnonzero(used)
        position = np.cumsum(used, dtype=X.indices.dtype)
        position -= 1
        position = position[X.indices]
    Xc = sp.csr_matrix((X.data, position, X.indptr), shape=(X.shape[0], columns.shape[0]))
    return columns, Xc


def row_slicer(X, *, host):
    """``f(start, stop)`` giving rows ``start:stop`` of ``X`` (dense or sparse; ``host``: on the host).

    A host CSR matrix is sliced as a view (its stored values and indices
    between the rows' bounds, ``indptr`` shifted), fast path ``row_views``;
    its reference is scipy's row slice, a copy of them: pydoc-en's TF-IDF
    predict (MultinomialNB, ComplementNB, two row blocks) 1.05-1.06× faster,
    paired, at load 7.5 on 2 cores; ``benchmarks/fast_paths.py`` 1.02× on a
    predict_log_proba, whose log-sum-exp dilutes it. A device matrix (made CSR
    once) is sliced from one host copy of its ``indptr``, read at the first
    slice: one synchronisation for all slices, none when nothing is sliced
    (cupyx's row slice reads two values back each).
    """
    if not hasattr(X, "format"):
        return lambda start, stop: X[start:stop, ...]
    if host:
        if X.format != "csr" or not fast("row_views"):
            return lambda start, stop: X[start:stop, ...]

        def view(start, stop):
            # (Set on an empty matrix: scipy's constructor copies a view of under half its array.)
            lo, hi = X.indptr[start], X.indptr[stop]
            rows = sp.csr_matrix((stop - start, X.shape[1]), dtype=X.dtype)
            rows.data, rows.indices, rows.indptr = X.data[lo:hi], X.indices[lo:hi], X.indptr[start : stop + 1] - lo
            return rows

        return view
    canonical = X.has_canonical_format
    X = X.tocsr()

    @functools.cache
    def host_indptr():
        return to_numpy(X.indptr)

    def rows(start, stop):
        indptr = host_indptr()
        lo, hi = int(indptr[start]), int(indptr[stop])
        return device_compressed(
            X, "csr", X.data[lo:hi], X.indices[lo:hi], X.indptr[start : stop + 1] - X.indptr.dtype.type(lo),
            (stop - start, X.shape[1]), canonical=canonical,
        )

    return rows


def sparse_columns(X, index):
    """Columns ``index`` (host int array) of a sparse matrix, still sparse."""
    if index.shape[0] and np.array_equal(index, np.arange(index[0], index[0] + index.shape[0])):
        return X[:, int(index[0]) : int(index[0]) + index.shape[0]]
    return X[:, sparse_lib(X).asarray(index)]


def gathered_row_sums(table, index, *, xp):
    """``Σ_j table[index[:, j], :]`` for every row of the integer matrix ``index``.

    That is ``OneHot(index) @ table``: on numpy and cupy fast path
    ``gathered_row_sums``, a sparse product (:func:`_onehot_product`, 5.5-9×
    faster in 10× less memory: ``benchmarks/fast_paths.py``); elsewhere, and
    as its reference, a gather and a sum over the middle axis.
    """
    if (on_host(xp) or has_sparse(xp)) and fast("gathered_row_sums"):
        return _onehot_product(table, index, xp=xp)
    n, d = index.shape
    rows = xp.take(table, xp.astype(xp.reshape(index, (-1,)), xp.int64), axis=0)
    return xp.sum(xp.reshape(rows, (n, d, -1)), axis=1)


def _onehot_product(table, index, *, xp):
    """:func:`gathered_row_sums` as a product with one stored 1 per entry of
    ``index``: scipy's kernel adds each gathered row of ``table`` in place,
    with no n × d × k temporary."""
    n, d = index.shape
    lib = np if on_host(xp) else device_library(xp).cupy
    idx = index_dtype(lib, n * d + 1, table.shape[0])
    flat = xp.astype(xp.reshape(index, (-1,)), idx, copy=False)
    indptr = lib.arange(0, n * d + 1, d, dtype=idx)
    ones = lib.ones(n * d, dtype=table.dtype)
    if lib is np:
        return sp.csr_matrix((ones, flat, indptr), shape=(n, table.shape[0])) @ table
    # Indices increase along every row (callers' promise): canonical,
    # so the product checks nothing; built without a synchronisation.
    return device_compressed(index, "csr", ones, flat, indptr, (n, table.shape[0]), canonical=True) @ table


def sparse_onehot_nonzero(X, offsets, *, n_columns, dtype):
    """One-hot encoding of the stored values of an integer-valued sparse ``X``.

    Feature ``j`` owns columns ``offsets[j] + j`` to ``offsets[j + 1] + j``
    (:func:`onehot_nonzero_columns`): its categories, then one for those
    unseen in training. Stored value ``v`` of feature ``j`` becomes a 1 at
    column ``offsets[j] + j + min(v, n_j)`` (``n_j`` categories); implicit
    zeros are not encoded (callers take category 0 from the row totals).
    The result, ``n_columns + n_features`` wide, holds ``X.nnz`` ones in
    increasing columns along every row (canonical when ``X`` is).
    ``offsets`` is an int64 array of ``X``'s library, ``n_columns`` its last
    value (on a device, reading it is a synchronisation).
    """
    lib = sparse_lib(X)
    canonical = X.has_canonical_format
    X = X.tocsr()
    start = offsets[:-1] + lib.arange(X.shape[1], dtype=offsets.dtype)
    feature = X.indices
    last = offsets[feature + 1] - offsets[feature]  # the feature's unseen column
    # Capped before the cast: a code past int64 (uint64) must not wrap to a negative column.
    cols = start[feature] + lib.minimum(X.data, last).astype(offsets.dtype)
    data = lib.ones(cols.shape[0], dtype=dtype)
    shape = (X.shape[0], n_columns + X.shape[1])
    if lib is np:
        return sp.csr_matrix((data, cols, X.indptr.copy()), shape=shape)
    idx = X.indptr.dtype if index_dtype(lib, *shape, X.nnz + 1) == lib.int32 else lib.int64
    return device_compressed(
        X, "csr", data, cols.astype(idx), X.indptr.astype(idx), shape, canonical=canonical
    )


def onehot_nonzero_columns(n_categories):
    """Host int64 arrays ``(seen, unseen)``: the columns of
    :func:`sparse_onehot_nonzero`'s result that hold each category of each
    feature (in the flat order of ``offsets``), and each feature's column for
    unseen categories."""
    n_categories = np.asarray(n_categories, dtype=np.int64)
    feature = np.repeat(np.arange(n_categories.shape[0]), n_categories)
    seen = np.arange(feature.shape[0]) + feature
    unseen = np.cumsum(n_categories) + np.arange(n_categories.shape[0])
    return seen, unseen


def structure_problem(fmt, data, indices, indptr, shape):
    """What is wrong with the index structure of a CSR/CSC matrix, or None.

    The compiled kernels of scipy and cupyx trust ``indptr`` and ``indices``
    (an index out of range reads or writes out of bounds, a decreasing
    ``indptr`` corrupts memory): the lengths, ``indptr`` from 0 to nnz and
    non-decreasing, and every index in ``[0, n_minor)`` are checked in one
    vectorised pass each, on the arrays' own library.
    """
    if fmt not in ("csr", "csc"):
        return f"sparse format must be 'csr' or 'csc'; got {fmt!r}"
    try:
        n_rows, n_cols = (int(s) for s in shape)
    except (TypeError, ValueError):
        return f"shape must be two integers; got {shape!r}"
    if n_rows < 0 or n_cols < 0:
        return f"shape must be non-negative; got {(n_rows, n_cols)}"
    n_major, n_minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
    for name, a in (("data", data), ("indices", indices), ("indptr", indptr)):
        if getattr(a, "ndim", None) != 1:
            return f"{name} must be a 1-D array; got {type(a).__name__} of shape {getattr(a, 'shape', None)}"
    for name, a in (("indices", indices), ("indptr", indptr)):
        if a.dtype.kind not in "iu":
            return f"{name} must hold integers; got dtype {a.dtype}"
    if indptr.shape[0] != n_major + 1:
        return f"indptr has {indptr.shape[0]} entries; a {fmt.upper()} matrix of shape {(n_rows, n_cols)} needs {n_major + 1}"
    nnz = indices.shape[0]
    if data.shape[0] != nnz:
        return f"data has {data.shape[0]} values but indices has {nnz}"
    lib = np if is_host_array(indptr) else _library(indptr).cupy
    # One synchronisation on a device: every check reduced to a few scalars.
    first, last = indptr[0], indptr[-1]
    falls = lib.any(lib.diff(indptr) < 0) if n_major else lib.asarray(False)
    # Negative indices read as unsigned are larger than any valid one, so
    # one pass over the indices checks both bounds (their range is only
    # looked up to report a problem).
    top = lib.max(indices.view(lib.dtype(f"u{indices.dtype.itemsize}"))) if nnz else lib.asarray(0)
    first, last, falls, top = (to_numpy(lib.asarray(v)).item() for v in (first, last, falls, top))
    if first != 0 or last != nnz:
        return f"indptr must run from 0 to the number of stored values ({nnz}); it runs from {first} to {last}"
    if falls:
        return "indptr must be non-decreasing; it decreases somewhere"
    if nnz and top >= n_minor:
        low, high = (to_numpy(lib.asarray(v)).item() for v in (lib.min(indices), lib.max(indices)))
        axis = "column" if fmt == "csr" else "row"
        return f"{axis} indices must lie in [0, {n_minor}); they range from {low} to {high}"
    return None


def host_sparse(fmt, data, indices, indptr, shape):
    """A scipy.sparse CSR/CSC matrix from its arrays (files store these),
    after :func:`structure_problem` found nothing wrong (else a ValueError)."""
    problem = structure_problem(fmt, data, indices, indptr, shape)
    if problem is not None:
        raise ValueError(problem)
    return getattr(sp, f"{fmt}_matrix")((data, indices, indptr), shape=tuple(int(s) for s in shape))

