"""Hashed n-grams to CSR rows: duplicates summed, columns sorted.

scikit-learn stores a +1 or -1 per n-gram occurrence and sums duplicates
(``csr.sum_duplicates``), keeping entries whose signs cancel as explicit
zeros.  Here every occurrence becomes one uint64 key
``row << 32 | column << 1 | negative`` (columns are below 2**31); one sort
groups the occurrences of a (row, column) cell, and the sum is
``count - 2 * negatives``, exact in int64.
"""

from __future__ import annotations

__all__ = ["sum_duplicates"]


def sum_duplicates(rows, columns, negative, n_rows, *, xp):
    """``(indptr, indices, values)`` of the summed matrix with ``n_rows`` rows.

    ``rows`` (int64), ``columns`` (uint32) and ``negative`` (bool, or ``None``
    when every occurrence counts +1) describe one occurrence each.  Returns
    int64 ``indptr`` and ``values`` and int32 ``indices``; within a row the
    indices are sorted and unique.
    """
    key = (xp.astype(rows, xp.uint64) << 32) | (xp.astype(columns, xp.uint64) << 1)
    if negative is not None:
        key = key | xp.astype(negative, xp.uint64)
    key = xp.sort(key)
    m = key.shape[0]
    cell = key >> 1
    first = xp.concat([xp.ones(1, dtype=xp.bool), cell[1:] != cell[:-1]]) if m else xp.zeros(0, dtype=xp.bool)
    starts = xp.nonzero(first)[0]
    ends = xp.concat([starts[1:], xp.asarray([m], dtype=starts.dtype)])
    values = ends - starts
    if negative is not None:
        neg = xp.cumulative_sum(xp.astype(key & 1, xp.int64), include_initial=True)
        values = values - 2 * (xp.take(neg, ends) - xp.take(neg, starts))
    cell = xp.take(cell, starts)
    indices = xp.astype(cell & 0x7FFFFFFF, xp.int32)
    row_of = xp.astype(cell >> 31, xp.int64)
    indptr = xp.searchsorted(row_of, xp.arange(n_rows + 1, dtype=xp.int64), side="left")
    return xp.astype(indptr, xp.int64), indices, xp.astype(values, xp.int64)
