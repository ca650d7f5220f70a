"""Hashed n-grams to CSR rows: duplicates summed, columns sorted.

scikit-learn stores a +1 or -1 per n-gram occurrence and sums duplicates
(``csr.sum_duplicates``), keeping entries whose signs cancel as explicit
zeros.  Here every occurrence becomes one uint64 key
``row << b | column << 1 | negative``, ``b`` the bits a column needs plus one; one sort
groups the occurrences of a (row, column) cell, and the sum is
``count - 2 * negatives``, exact in int64.
"""

from __future__ import annotations

__all__ = ["sum_duplicates"]


def sum_duplicates(rows, columns, negative, n_rows, n_columns, *, xp):
    """``(indptr, indices, values)`` of the summed matrix with ``n_rows`` rows.

    ``rows`` (int64), ``columns`` (uint32, below ``n_columns``) and
    ``negative`` (bool, or ``None`` when every occurrence counts +1) describe
    one occurrence each.  Returns int64 ``indptr`` and ``values`` and int32
    ``indices``; within a row the indices are sorted and unique.  The keys are
    uint32 when ``n_rows * n_columns * 2`` fits, which halves the sort.
    """
    shift = 1 if negative is not None else 0
    col_bits = max(int(n_columns - 1).bit_length(), 1) + shift
    kdt = xp.uint32 if (n_rows << col_bits) <= 2**32 else xp.uint64
    key = (xp.astype(rows, kdt) << col_bits) | (xp.astype(columns, kdt) << shift)
    if negative is not None:
        key = key | xp.astype(negative, kdt)
    key = xp.sort(key, stable=False)
    m = key.shape[0]
    cell = key >> shift
    first = xp.concat([xp.ones(1, dtype=xp.bool), cell[1:] != cell[:-1]]) if m else xp.zeros(0, dtype=xp.bool)
    starts = xp.nonzero(first)[0]
    ends = xp.concat([starts[1:], xp.asarray([m], dtype=starts.dtype)])
    values = ends - starts
    if negative is not None:
        neg = xp.cumulative_sum(xp.astype(key & 1, xp.int32), include_initial=True)
        values = values - 2 * xp.astype(xp.take(neg, ends) - xp.take(neg, starts), values.dtype)
    cell = xp.take(cell, starts)
    col_bits -= shift
    indices = xp.astype(cell & ((1 << col_bits) - 1), xp.int32)
    row_of = xp.astype(cell >> col_bits, xp.int64)
    indptr = xp.searchsorted(row_of, xp.arange(n_rows + 1, dtype=xp.int64), side="left")
    return xp.astype(indptr, xp.int64), indices, xp.astype(values, xp.int64)
