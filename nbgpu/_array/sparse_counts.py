"""Per-class feature sums kept sparse: the statistics of wide count models.

MultinomialNB and ComplementNB fitted on hashed text see a few percent of
their k × d (class, feature) pairs: 32 classes × 2**20 hashed features are
a 256 MiB float64 array of which about 3 % is nonzero. Kept as a scipy CSC
array (float64, canonical: sorted indices, no duplicates) those sums take a
few MiB, so a model that is streamed, merged or loaded never makes the
dense array (nor pays for its pages): saving writes the stored entries as
they are, loading reads them back as they are, and scoring makes the
weights of just the columns a batch uses, from those columns (CSC: a
column slice or gather is cheap). ``feature_count_`` is made dense when
it is read.

Only on the host, for sums of at least ``WIDE_ENTRIES`` entries of which at
most one in ``SPARSE_FRACTION`` is stored; anything else is a dense array,
as are the sums of a model moved to another namespace or device.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from .namespace import is_host_array

# k × d from which the per-class sums of sparse input are gathered sparse
# (32 MiB of float64: below that the dense array costs little).
WIDE_ENTRIES = 2**22
# Sparse while at most 1/SPARSE_FRACTION of the entries are stored: a
# stored entry takes 12 bytes (value, int32 row) against 8 dense, and each
# sparse operation does more per entry.
SPARSE_FRACTION = 8


def is_sparse_counts(a) -> bool:
    """Whether a statistics entry is kept sparse (a host scipy array)."""
    return sp.issparse(a)


def gathers_sparse(X, n_classes) -> bool:
    """Whether the per-class sums of ``X`` are gathered sparse: a host CSR
    matrix, and a wide model (k × d at least ``WIDE_ENTRIES``)."""
    return (
        sp.issparse(X)
        and X.format == "csr"
        and is_host_array(X.data)
        and n_classes * X.shape[1] >= WIDE_ENTRIES
    )


def sparse_enough(shape, nnz) -> bool:
    """Whether ``nnz`` stored entries of an array of ``shape`` stay sparse."""
    size = math.prod(shape)
    return size >= WIDE_ENTRIES and nnz * SPARSE_FRACTION <= size


def kept(sums):
    """Sparse ``sums`` as they are while sparse enough, else as a dense array."""
    if sp.issparse(sums) and not sparse_enough(sums.shape, sums.nnz):
        return sums.toarray()
    return sums


def dense(a):
    """A dense array of a statistics entry (a sparse one made dense)."""
    return a.toarray() if sp.issparse(a) else a


def added(a, b):
    """``a + b`` of two statistics entries, dense or sparse: sparse while
    both are and the sum is sparse enough, else dense (a new array)."""
    if sp.issparse(a) and sp.issparse(b):
        return kept((a + b).tocsc())
    return a + b  # scipy adds a sparse array into a copy of the dense one


def columns(a, cols):
    """Columns ``cols`` (a slice or an index array) of a k × d statistics
    entry, as a dense k × c array (of a dense entry: its view or gather)."""
    return a[:, cols].toarray() if sp.issparse(a) else a[:, cols]


def row_totals(a, *, xp):
    """``Σ_j a_cj`` as a k × 1 array."""
    if sp.issparse(a):
        return np.asarray(a.sum(axis=1)).reshape(-1, 1)
    return xp.sum(a, axis=1, keepdims=True)


def column_totals(a, *, xp):
    """``Σ_c a_cj`` as a vector of d."""
    if sp.issparse(a):
        return np.asarray(a.sum(axis=0)).reshape(-1)
    return xp.sum(a, axis=0)


def with_rows(a, source):
    """Sparse ``a`` with row ``i`` taken from row ``source[i]`` of ``a``, or
    zero where ``source[i]`` is ``a.shape[0]`` (classes added by a merge)."""
    padded = sp.vstack([a.tocsr(), sp.csr_array((1, a.shape[1]), dtype=a.dtype)], format="csr")
    return padded[np.asarray(source)].tocsc()


def stored_entries(a, index_dtype):
    """``(flat indices, values)`` of the nonzero entries of sparse ``a``, the
    flat (row-major) indices ascending: what a model file stores of an array
    that is mostly zeros, as it would store the dense array."""
    csr = a.tocsr()  # canonical: column indices sorted within each row
    rows = np.repeat(np.arange(a.shape[0], dtype=np.int64), np.diff(csr.indptr))
    flat = rows * a.shape[1] + csr.indices
    keep = csr.data != 0  # an explicit zero is not an entry (as in the dense array)
    if not keep.all():
        flat, values = flat[keep], csr.data[keep]
    else:
        values = csr.data
    return flat.astype(index_dtype), values


def from_entries(indices, values, shape):
    """The sparse k × d array whose row-major flat ``indices`` (ascending,
    in range: checked by the caller) hold ``values``."""
    k, d = shape
    rows, cols = np.divmod(indices.astype(np.int64, copy=False), d)
    indptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=k), out=indptr[1:])
    index_dtype = np.int32 if max(d, indices.shape[0]) < 2**31 else np.int64
    csr = sp.csr_array((values, cols.astype(index_dtype), indptr.astype(index_dtype)), shape=(k, d))
    return csr.tocsc()
