"""Per-class feature sums kept sparse: the statistics of wide count models.

MultinomialNB and ComplementNB fitted on hashed text see a few percent of
their k × d (class, feature) pairs: 53 classes × 2**20 hashed features are
a 445 MiB float64 array of which well under 1 % is nonzero. Kept sparse,
those sums take a few MiB, so a model that is streamed, merged or loaded
never makes the dense array: saving writes the stored entries as they are,
loading reads them back as they are, and scoring makes the weights of just
the columns a batch uses. ``feature_count_`` is made dense when it is read.

A batch adds its entries (``class_sums.csr_class_entries``): a (column,
class) key and a value per stored value, nothing of size k × d or d, so a
batch costs what its nonzeros cost. :class:`SparseCounts` holds the sums
as a canonical CSC array plus a log of the entries added since; the log is
folded in (one sort, one sparse addition) when it grows to a fraction of
the array or before the sums are read, so a stream of small batches costs
its entries, amortized, and never a pass over the whole statistics per batch.

Only on the host, for sums of at least ``WIDE_ENTRIES`` entries of which at
most one in ``SPARSE_FRACTION`` is stored; anything else is a dense array,
as are the sums of a model moved to another namespace or device. Models
reach either representation only through ``sums.py``, the one interface.

Fast path ``sparse_sums`` (``paths.py``); its reference keeps every sum
dense. Fitting 53 classes × 2**20 features and predicting 100 rows takes
21-146× less time and 16-40× less memory with it (``benchmarks/fast_paths.py``).
"""

from __future__ import annotations

import math
import threading

import numpy as np
import scipy.sparse as sp

from .class_sums import summed_entries
from .namespace import on_host, to_namespace
from .paths import fast
from .sparse import index_dtype

# k × d from which per-class sums may be kept sparse (32 MiB of float64:
# below that the dense array costs little).
WIDE_ENTRIES = 2**22
# Sparse while at most 1/SPARSE_FRACTION of the entries are stored: a
# stored entry takes 12 bytes (value, int32 row) against 8 dense, and each
# sparse operation does more per entry.
SPARSE_FRACTION = 8
# The log of added entries (16 bytes each, one per stored value of a batch)
# is folded in once it holds this many (64 MiB), or a quarter of the stored
# ones if that is more: a fold costs a pass over the d columns and the
# stored entries, paid for by the entries added since. It is folded sooner
# where the sums may stop being sparse, so it stays within about a quarter
# of the dense sums' memory.
LOG_ENTRIES = 2**22
# A batch of this many entries or more is logged as it comes; smaller ones
# are copied together (see _Log).
LOG_PART = 2**16


_FOLDING = threading.Lock()


class SparseCounts:
    """k × d non-negative sums: a canonical float64 CSC array and the
    entries added since, folded in before any read (:attr:`csc`)."""

    __slots__ = ("_csc", "_log", "_logged", "_bound", "_totals")

    def __init__(self, csc):
        # The stored sums, their row and column totals (made once per change),
        # the log, and the largest stored value plus everything logged since.
        self._become(csc)

    @classmethod
    def empty(cls, shape):
        return cls(sp.csc_array(shape, dtype=np.float64))

    @property
    def shape(self):
        return self._csc.shape

    @property
    def dtype(self):
        return self._csc.dtype

    @property
    def csc(self):
        """The sums as a canonical CSC array (the log folded in)."""
        self.fold()
        return self._csc

    @property
    def folded(self):
        """Whether no added entries wait in the log."""
        return not self._logged

    @property
    def nnz(self):
        return self.csc.nnz

    @property
    def bound(self):
        """An upper bound of every sum (they are non-negative): finite sums
        below a finite bound need no pass over them."""
        return self._bound

    def add(self, keys, values, *, overflow_ok=False):
        """Add entries ``(keys, values)`` (int64 and float64 arrays the log
        may keep, see ``class_sums.csr_class_entries``) in place; False,
        changing nothing, if a sum overflows (``overflow_ok``: kept, for the
        caller's check of the statistics to refuse)."""
        with np.errstate(over="ignore"):
            bound = self._bound + float(values.sum()) if values.size else self._bound
        if not math.isfinite(bound):
            # All values added up overflow: the sums themselves decide.
            self.fold()
            summed = self._plus(keys, values)
            if not (overflow_ok or np.isfinite(summed.data).all()):
                return False
            self._become(summed)
            return True
        need = self._logged + keys.shape[0]
        self._log.append(keys, values)
        self._totals = {}
        self._logged = need
        self._bound = bound
        # Folded when large enough to pay for a pass over the stored entries,
        # or when the sums may no longer be sparse (``kept`` then decides).
        stored = self._csc.nnz
        if need >= max(LOG_ENTRIES, stored // 4) or not sparse_enough(self.shape, stored + need):
            self.fold()
        return True

    def fold(self):
        """Add the logged entries into the CSC array."""
        if not self._logged:
            return
        with _FOLDING:  # scoring threads may read at once: one folds
            if self._logged:
                self._become(self._plus(*self._log.entries(self.shape)))

    def _plus(self, keys, values):
        """The folded sums plus entries ``(keys, values)``: a new canonical CSC array."""
        keys, values = summed_entries(keys, values)
        if not values.all():  # zero sums (zero weights) are no entries
            nonzero = np.flatnonzero(values)
            keys, values = keys[nonzero], values[nonzero]
        new = from_column_keys(keys, values, self._csc.shape)
        return canonical(self._csc + new) if self._csc.nnz else new

    def _become(self, csc):
        """Hold the sums ``csc``, the log empty."""
        self._csc = csc
        self._totals = {}
        self._log = _Log()
        self._logged = 0
        self._bound = float(csc.data.max()) if csc.nnz else 0.0

    def totals(self, axis):
        """``Σ_j`` per class ("rows") or ``Σ_c`` per feature ("columns"), one
        pass over the stored values, kept until the sums change (read-only)."""
        made = self._totals.get(axis)
        if made is None:
            csc = self.csc
            # Each adds in order: a column's sums class after class (the
            # product of the transpose, a CSR view, with ones).
            if axis == "rows":
                made = np.bincount(csc.indices, weights=csc.data, minlength=csc.shape[0])
            else:
                made = csc.T @ np.ones(csc.shape[0])
            made.flags.writeable = False
            self._totals[axis] = made
        return made

    def moved(self, xp, device):
        """The sums in namespace ``xp`` on ``device``: these on the host, a
        dense array anywhere else."""
        return self if on_host(xp) else to_namespace(self.csc.toarray(), xp, device)

    def __getstate__(self):
        return {"csc": self.csc}

    def __setstate__(self, state):
        self.__init__(state["csc"])


class _Log:
    """Entries added since the last fold, in the order they came: a batch of
    at least ``LOG_PART`` entries as it is (no copy), smaller ones copied
    together into buffers of at most ``LOG_PART`` (grown by doubling).

    One array grown by doubling copied a fit's batches again and again: the
    first five 4 MiB chunks of Debian's descriptions as 1-2grams (4.6 million
    entries) took 0.29-0.32 s CPU to log and fold, 0.19-0.21 s so (medians of 7).
    """

    __slots__ = ("_parts", "_buffer", "_used")

    def __init__(self):
        self._parts, self._buffer, self._used = [], None, 0

    def append(self, keys, values):
        n = keys.shape[0]
        if n >= LOG_PART:
            self._seal()
            self._parts.append((keys, values))
        elif n:
            if self._buffer is None or self._used + n > self._buffer[0].shape[0]:
                self._grow(n)
            self._buffer[0][self._used : self._used + n] = keys
            self._buffer[1][self._used : self._used + n] = values
            self._used += n

    def _grow(self, n):
        """Room for ``n`` more entries: the buffer twice as large, up to ``LOG_PART``, or a new one."""
        need = self._used + n
        if need > LOG_PART:
            self._seal()
            need = n
        size = min(max(2 * need, 1024), LOG_PART)
        grown = np.empty(size, np.int64), np.empty(size, np.float64)
        for new, old in zip(grown, self._buffer or ()):
            new[: self._used] = old[: self._used]
        self._buffer = grown

    def _seal(self):
        if self._used:
            self._parts.append((self._buffer[0][: self._used], self._buffer[1][: self._used]))
        self._buffer, self._used = None, 0

    def entries(self, shape):
        """``(keys, values)`` of every logged entry, in order (keys as uint32
        where the sums' size allows: less to copy and to sort)."""
        self._seal()
        if len(self._parts) == 1:
            return self._parts[0]
        key = np.uint32 if math.prod(shape) <= 2**32 else np.int64
        keys = np.concatenate([k for k, _ in self._parts], dtype=key, casting="unsafe")
        return keys, np.concatenate([v for _, v in self._parts])


def canonical(out):
    """``out``, the sum or difference of two canonical arrays (every
    SparseCounts holds one), marked canonical: scipy merges their sorted
    indices, so the check it would make (a pass over ``out``) is skipped."""
    out.has_canonical_format = True
    return out


def from_column_keys(keys, values, shape):
    """The canonical CSC array (k × d) of entries keyed ``column * k + class``
    (ascending, unique)."""
    columns, rows = np.divmod(keys, shape[0])
    indptr = np.zeros(shape[1] + 1, dtype=np.int64)
    np.cumsum(np.bincount(columns, minlength=shape[1]), out=indptr[1:])
    index = index_dtype(np, *shape, values.shape[0])
    out = sp.csc_array((values, rows.astype(index), indptr.astype(index)), shape=shape)
    out.has_canonical_format = True  # keys ascending: columns, then rows within each
    return out


def sparse_enough(shape, nnz) -> bool:
    """Whether ``nnz`` stored entries of an array of ``shape`` stay sparse."""
    size = math.prod(shape)
    return fast("sparse_sums") and size >= WIDE_ENTRIES and nnz * SPARSE_FRACTION <= size


def stored_entries(a, index_dtype):
    """``(flat indices, values)`` of the nonzero entries of sparse ``a``, the
    flat (row-major) indices ascending: what a model file stores of an array
    that is mostly zeros, as it would store the dense array."""
    csr = a.csc.tocsr()  # canonical: column indices sorted within each row
    k, d = csr.shape
    # Made in ``index_dtype``, which holds k·d: no int64 temporaries (Debian's
    # 1-2gram model, 1.6 million entries: 40 -> 26 ms CPU, medians of 11).
    index_dtype = np.dtype(index_dtype)
    flat = np.repeat(np.arange(k, dtype=index_dtype) * index_dtype.type(d), np.diff(csr.indptr))
    flat += csr.indices.astype(index_dtype, copy=False)
    keep = csr.data != 0  # an explicit zero is not an entry (as in the dense array)
    if not keep.all():
        return flat[keep], csr.data[keep]
    return flat, csr.data


def from_entries(indices, values, shape):
    """The sparse k × d sums whose row-major flat ``indices`` (ascending,
    in range: checked by the caller) hold ``values``."""
    k, d = shape
    # Row r's entries start at the first flat index >= r·d: a search per row,
    # then one subtraction gives the columns (no division per entry).
    starts = np.arange(k + 1, dtype=np.int64) * d
    indptr = np.searchsorted(indices, starts)
    cols = indices - np.repeat(starts[:-1].astype(indices.dtype), np.diff(indptr))
    index = index_dtype(np, *shape, values.shape[0])
    csr = sp.csr_array((values, cols.astype(index, copy=False), indptr.astype(index)), shape=shape)
    csc = csr.tocsc()
    csc.has_canonical_format = True  # the transpose of a canonical array
    counts = SparseCounts(csc)
    # Column totals from the row-major entries (classes in order, as totals
    # adds them), cheaper than from the CSC array.
    made = np.bincount(cols, weights=values, minlength=shape[1])
    made.flags.writeable = False
    counts._totals["columns"] = made
    return counts
