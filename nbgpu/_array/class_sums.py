"""Per-class sums ``Yᵀ·Z``: the one kernel every model's statistics come from.

``Y`` is the weighted one-hot class matrix (n × k) and ``Z`` is ``X``, a
power of it, a one-hot encoding of its categories, or the outer products of
its rows. Every version lives here:

- :func:`class_totals` — ``Yᵀ·1``, the per-class weight;
- :func:`class_sums` — ``Yᵀ·X`` (or ``Yᵀ·X²``), dense or sparse ``X``;
- :func:`category_counts` — ``Yᵀ·OneHot(X)`` for category codes;
- :func:`class_scatter` — per-class mean and scatter matrix ``Σ (x−μ)(x−μ)ᵀ``;
- :func:`soft_class_sums` — ``Rᵀ·X`` with soft class weights ``R`` (n × k),
  e.g. the responsibilities of EM on unlabeled rows.

On the host the work runs on all cores (row or nonzero blocks through the
shared pool); on a device it is one library call per block. Sums are
accumulated in ``dtype`` (float64 where the device has it: counts are exact
up to 2**53) without a float64 copy of ``X``.

Each kernel here that is not a one-hot product is a fast path beside its
plain reference (``paths.py``, measured by ``benchmarks/fast_paths.py``).
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import scipy.sparse as sp

from . import blocks
from .paths import fast
from .namespace import (
    device_library,
    get_namespace,
    has_sparse,
    is_host_array,
    is_sparse,
    on_host,
    sparse_lib,
)
from .sparse import (
    device_compressed,
    index_dtype,
    onehot_nonzero_columns,
    sparse_onehot_nonzero,
    sparse_with_values,
)
from .threads import n_threads, parallel_map


def onehot(codes, n_classes, *, dtype, xp, weights=None, first=0, by_class=False):
    """The (weighted) one-hot class matrix ``Y`` (n × k) of integer ``codes``;
    ``first``: its columns are classes ``first`` to ``first + n_classes - 1``;
    ``by_class``: made as its (k × n) transpose and returned as a view of it,
    column-major, as a sparse product takes its dense operand (cupyx copies a
    row-major one first)."""
    classes = xp.arange(first, first + n_classes, dtype=codes.dtype, device=codes.device)
    if by_class:
        Yt = xp.astype(xp.reshape(classes, (-1, 1)) == codes, dtype)
        return (Yt if weights is None else Yt * weights).T
    Y = xp.astype(xp.reshape(codes, (-1, 1)) == classes, dtype)
    if weights is not None:
        Y = Y * xp.reshape(weights, (-1, 1))
    return Y


def class_totals(codes, weights, n_classes, *, dtype, xp):
    """Per-class sum of sample weights (per-class row counts without weights).

    Fast path ``class_sums`` on the host: one compiled pass, no n × k one-hot
    matrix; 47-59× faster than its reference (``benchmarks/fast_paths.py``).
    """
    if on_host(xp) and fast("class_sums"):
        return np.bincount(codes, weights=weights, minlength=n_classes).astype(dtype, copy=False)
    total = None
    for start, stop in blocks.row_blocks(codes.shape[0], n_classes * 8, xp=xp):
        w = None if weights is None else weights[start:stop]
        part = xp.sum(onehot(codes[start:stop], n_classes, dtype=dtype, xp=xp, weights=w), axis=0)
        total = part if total is None else total + part
    return xp.zeros(n_classes, dtype=dtype, device=codes.device) if total is None else total


def class_sums(X, codes, weights, n_classes, *, xp, dtype, power=1):
    """``Yᵀ·X`` (``power=1``) or ``Yᵀ·(X ⊙ X)`` (``power=2``) in ``dtype``.

    ``X`` (n × d) is dense or CSR/CSC, ``codes`` the class index of every
    row, ``weights`` one per row or None, ``xp`` the namespace of ``X``.
    Returns the dense (n_classes, n_features) sums; the kernel is picked
    here, once, by what ``X`` is:

    - dense on the host: fast path ``class_sums``, ``Y`` as a sparse matrix
      (see below); 2.1-3.1× faster, in 3.8-7.4× less memory, than its
      reference, the dense one-hot product (``benchmarks/fast_paths.py``);
    - sparse: fast path ``sparse_class_sums``, never building ``Y``: a host
      CSR matrix summed class by class (:func:`_csr_class_sums`), a CSC one
      by scattering (:func:`_csc_class_sums`), on a device a product by
      columns (:func:`_device_sparse_class_sums`). Its reference is the
      sparse product ``(Xᵀ·Y)ᵀ`` with the dense one-hot ``Y``
      (:func:`_product_class_sums`); against it (``benchmarks/fast_paths.py``):
      CSR 1.7-2.4× faster from 1.6 million stored values (about even at 0.3
      million), CSC 3-8×.
    """
    if is_sparse(X):
        if not fast("sparse_class_sums"):
            return _product_class_sums(X, codes, weights, n_classes, power=power, dtype=dtype)
        if sparse_lib(X) is not np:
            return _device_sparse_class_sums(X, codes, weights, n_classes, power=power, dtype=dtype)
        kernel = _csr_class_sums if X.format == "csr" else _csc_class_sums
        return kernel(X, codes, weights, n_classes, power=power, dtype=dtype)
    host = on_host(xp) and fast("class_sums")
    out = None
    for start, stop, Xb in _upcast_row_blocks(X, n_classes, xp=xp, dtype=dtype, power=power):
        wb = None if weights is None else weights[start:stop]
        if host:
            # The one-hot Y as a sparse matrix: one streaming pass adding every
            # row into its class's row (a GEMM with an inner dimension of n and
            # k output rows is slow and scales badly in BLAS).
            m = stop - start
            values = np.ones(m, dtype=dtype) if wb is None else np.asarray(wb, dtype=dtype)
            Y = sp.csr_matrix((values, np.asarray(codes[start:stop]), np.arange(m + 1)), shape=(m, n_classes))
            part = np.asarray(Y.T @ Xb)
        else:
            # (Xᵀ·Y)ᵀ: OpenBLAS runs Yᵀ·X, an inner dimension of n and k output
            # rows, many times slower on the CPU (benchmarks/fast_paths.py).
            part = (Xb.T @ onehot(codes[start:stop], n_classes, dtype=dtype, xp=xp, weights=wb)).T
        out = part if out is None else out + part
    return out


def _upcast_row_blocks(X, n_classes, *, xp, dtype, power):
    """``(start, stop, X[start:stop] ** power in dtype)`` per row block of
    dense ``X``: each block upcast on its own, so no full float64 copy of X."""
    n, d = X.shape
    for start, stop in blocks.row_blocks(n, 8 * (d + n_classes), xp=xp):
        Xb = xp.astype(X[start:stop, ...], dtype, copy=False)
        yield start, stop, (Xb * Xb if power == 2 else Xb)


def _nonzero_values(data, power, weights, dtype, *, owned=False):
    """``data ** power * weights`` (one weight per value, or None) in ``dtype``, in a
    copy unless ``owned`` (``data`` is the caller's temporary and may be written)."""
    values = data.astype(dtype, copy=not owned)
    if power == 2:
        values *= values
    if weights is not None:
        values *= weights
    return values


def _summed_row(values, columns, width, out=None):
    """``values`` summed into their ``columns`` of a dense 1 × ``width`` row
    (``out``, zeroed first, if given) by densifying a one-row CSR matrix:
    scipy's compiled loop, with no cast of the columns to int64 and no GIL."""
    indptr = np.asarray([0, values.shape[0]], dtype=columns.dtype)
    return sp.csr_matrix((values, columns, indptr), shape=(1, width)).toarray(out=out)


def takes_in_place(out) -> bool:
    """Whether running sums ``out`` take a batch's in place (:func:`add_class_sums_into`):
    a host float64 array, C-ordered and writable, under fast path ``in_place_sums``."""
    return (fast("in_place_sums") and is_host_array(out) and out.dtype == np.float64
            and out.flags.c_contiguous and out.flags.writeable)


def add_class_sums_into(out, X, codes, weights, *, xp):
    """``out += Yᵀ·X`` in place, for running sums; False (nothing done) unless
    ``out`` is a host float64 array (k × d, C-ordered, writable).

    A CSR ``X`` with fewer nonzeros than ``out`` has entries adds its
    :func:`csr_class_entries` at those entries only (the work follows the
    batch, not k × d); otherwise the dense sums are added in place. Sums
    that would overflow are not written (False is returned).

    Fast path ``in_place_sums``: its reference (False: the caller merges
    into a new array) costs a k × d allocation and pass per batch; a stream
    of small sparse batches onto wide sums runs 9-10× faster, in 2.9× less
    memory, with it (``benchmarks/fast_paths.py``).
    """
    if not takes_in_place(out):
        return False
    n_classes = out.shape[0]
    if is_sparse(X) and X.format == "csr" and X.nnz < out.size:
        keys, values = csr_class_entries(X, codes, weights, n_classes)
        columns, rows = np.divmod(keys, n_classes)
        where = rows * out.shape[1] + columns  # unique: one write per entry
        flat = out.reshape(-1)
        new = flat[where] + values
        if not np.all(np.isfinite(new)):
            return False  # overflow: the caller's checks say so
        flat[where] = new
        return True
    batch = class_sums(X, codes, weights, n_classes, xp=xp, dtype=np.float64)
    # Counts are >= 0: the largest sum is at most the two largest entries'.
    if not np.isfinite(float(np.max(out)) + float(np.max(batch))):
        return False
    out += batch
    return True


def _csc_class_sums(X, codes, weights, n_classes, *, power, dtype):
    """:func:`class_sums` of a host CSC matrix: each stored value scattered into bin
    ``column * n_classes + code[row]`` (int32 keys where they fit), one pass over the
    nonzeros whatever the number of classes, filling the bins in order. Blocks of
    nonzeros whose keys and values take no more memory than ``X``'s index arrays (at
    least ``BLOCK_BYTES``) are scattered on all cores, one accumulator per thread.
    The result is a transposed view of a C-ordered (d, k) array."""
    n_features = X.shape[1]
    n_bins = n_features * n_classes
    key_dtype = index_dtype(np, n_bins)
    codes = codes.astype(key_dtype)
    threads = _threads(X.nnz)
    per_nnz = np.dtype(key_dtype).itemsize + np.dtype(dtype).itemsize
    budget = _piece_budget(X, per_nnz, threads)
    if X.nnz <= budget * (threads - 1):  # fewer pieces than threads: equal shares
        cuts = blocks.even_nnz_splits(X.indptr, threads)
    else:  # pieces of about ``budget`` stored values
        cuts = np.unique(np.concatenate([[0], blocks.nnz_cuts(X.indptr, budget), [n_features]]))

    def scatter(start, stop):
        lo, hi = X.indptr[start], X.indptr[stop]
        keys = codes[X.indices[lo:hi]]
        bins = np.arange(start, stop, dtype=key_dtype) * key_dtype(n_classes)
        keys += np.repeat(bins, np.diff(X.indptr[start : stop + 1]))
        row_weights = None if weights is None else weights[X.indices[lo:hi]]
        return _summed_row(_nonzero_values(X.data[lo:hi], power, row_weights, dtype), keys, n_bins)

    pieces = list(zip(cuts[:-1], cuts[1:]))
    if not pieces:  # no features
        return np.zeros((n_classes, n_features), dtype=dtype)
    parts = parallel_map(
        lambda group: functools.reduce(operator.iadd, (scatter(*piece) for piece in group)),
        blocks.round_robin(pieces, threads),
    )
    return functools.reduce(operator.iadd, parts).reshape(n_features, n_classes).T


def _product_class_sums(X, codes, weights, n_classes, *, power, dtype):
    """The reference of the sparse kernels of :func:`class_sums`: ``(Xᵀ·Y)ᵀ``, a sparse-dense
    product with the dense one-hot ``Y`` (n × k), in ``dtype``."""
    values = sparse_with_values(X, _nonzero_values(X.data, power, None, dtype))
    Y = onehot(codes, n_classes, dtype=dtype, xp=get_namespace(codes), weights=weights)
    return (values.T @ Y).T


def _column_class_keys(columns, classes, n_classes, key_dtype):
    """Keys ``column * n_classes + class`` in ``key_dtype``: the (feature, class)
    bin of every stored value, bins of a column next to each other."""
    keys = columns.astype(key_dtype, copy=False) * key_dtype(n_classes)
    keys += classes
    return keys


def _device_sparse_class_sums(X, codes, weights, n_classes, *, power, dtype):
    """:func:`class_sums` of a sparse ``X`` on a device, without atomics: ``X`` by columns
    (a CSR ``X`` converted, one transposition), whose transpose is a CSR matrix
    (d × n), times the one-hot ``Y``: the library's row-parallel product, each
    (feature, class) sum made by one thread from its column's stored values.
    An atomic add per stored value (``cupy.add.at`` into ``column * k + class``,
    or the transposed product) lands millions of times on the few bins of a
    frequent word. Each product reads ``X`` once: the classes are taken in
    groups whose one-hot columns fit ``blocks.block_bytes`` or the memory of
    the transposed copy (so all at once unless ``Y`` is larger than ``X``);
    nothing is read back to the host.
    """
    xp = get_namespace(codes)
    columns = X if X.format == "csc" else X.tocsc()
    # Xᵀ (d × n CSR) with the values in ``dtype`` (the transposition's own copy is cast in
    # place, or kept where it has that dtype). Its indices are sorted (the transposition
    # keeps the order of rows), and duplicate entries add up in a product as they would summed
    # first: recorded as canonical, so that neither reads a flag back.
    values = _nonzero_values(columns.data, power, None, dtype, owned=columns is not X)
    by_feature = device_compressed(columns, "csr", values, columns.indices, columns.indptr, X.shape[::-1], canonical=True)
    budget = max(blocks.block_bytes(xp), values.nbytes + columns.indices.nbytes)
    group = max(1, min(n_classes, budget // max(8 * X.shape[0], 1)))
    parts = []
    for first in range(0, n_classes, group):
        Y = onehot(codes, min(group, n_classes - first), dtype=dtype, xp=xp, weights=weights, first=first, by_class=True)
        parts.append(by_feature @ Y)
    return (parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)).T


def _csr_class_sums(X, codes, weights, n_classes, *, power, dtype):
    """:func:`class_sums` of a host CSR matrix, one class at a time.

    One accumulator of (feature, class) bins misses the cache on wide data
    (k × d float64 is tens of MB). Here the rows are put in class order (a
    stable sort), gathered in pieces (scipy's compiled row indexing) of at
    most :func:`_piece_budget` nonzeros, and each piece is scattered into
    its class's row of d bins, which stays in cache. The class-ordered rows
    are cut into equal shares of nonzeros, one per thread; a class row is
    written by the thread where the class begins, and a class that runs on
    into later shares is added up at the end.

    A matrix of one piece and one share whose k × d float64 sums stay in
    cache (:data:`_ONE_SCATTER_BINS`) takes :func:`_one_scatter_class_sums`.
    """
    n_features = X.shape[1]
    threads = _threads(X.nnz)
    budget = _piece_budget(X, X.indices.itemsize + X.data.itemsize + np.dtype(dtype).itemsize, threads)
    if (threads == 1 and X.nnz <= budget and np.dtype(dtype) == np.float64
            and n_classes * n_features <= _ONE_SCATTER_BINS):
        return _one_scatter_class_sums(X, codes, weights, n_classes, power=power)
    order = np.argsort(codes, kind="stable")
    sorted_codes = np.asarray(codes)[order]
    starts = np.zeros(X.shape[0] + 1, dtype=np.int64)  # the indptr of the class-ordered rows
    np.cumsum(np.diff(X.indptr)[order], out=starts[1:])
    class_starts = np.searchsorted(sorted_codes, np.arange(n_classes + 1))
    shares = blocks.even_nnz_splits(starts, threads)
    cuts = np.unique(np.concatenate([class_starts, shares, blocks.nnz_cuts(starts, budget)]))
    out = np.zeros((n_classes, n_features), dtype=dtype)  # empty classes stay zero

    def sum_share(bounds):
        lo, hi = bounds
        spill = None  # sums of a class begun in an earlier share
        mine = cuts[(cuts >= lo) & (cuts <= hi)]
        for a, b in zip(mine[:-1], mine[1:]):
            c = int(sorted_codes[a])
            carried = class_starts[c] < lo
            if carried and a == lo:
                spill = np.empty((1, n_features), dtype=dtype)
            target = spill if carried else out[c : c + 1]
            rows = order[a:b]
            piece = X[rows]
            row_weights = None if weights is None else np.repeat(weights[rows], np.diff(piece.indptr))
            values = _nonzero_values(piece.data, power, row_weights, dtype, owned=True)
            if a == max(class_starts[c], lo):  # the class's first piece in this share: written
                _summed_row(values, piece.indices, n_features, target)
            else:
                target += _summed_row(values, piece.indices, n_features)
        return int(sorted_codes[lo]), spill

    for c, spill in parallel_map(sum_share, zip(shares[:-1], shares[1:])):
        if spill is not None:
            out[c] += spill[0]
    return out


# k × d float64 sums of at most 512 KiB: one scatter over them stays in cache.
_ONE_SCATTER_BINS = 1 << 16


def _one_scatter_class_sums(X, codes, weights, n_classes, *, power):
    """:func:`_csr_class_sums` in float64 of a host CSR matrix that it would sum
    in one piece per class on one thread: every stored value scattered at once
    into its (class, feature) bin by ``np.bincount``, with no sort of the rows,
    no row gathers and no per-class pieces. Each bin adds the same values in
    the same order (its class's rows in order, each row's values as stored),
    from 0, in float64, as the per-class scatters: the same sums, bit for bit
    (tests/test_speed_kernels.py). With weights, best of 5 × 200 calls at load
    2-3: a 17 × 24 block of 3 classes (the Dask EM tests' CategoricalNB blocks)
    635-761 -> 30-34 µs, 240 × 24 610-793 -> 41-60 µs, 2000 × 500 of 5
    classes 1502-1803 -> 306-316 µs."""
    n_features = X.shape[1]
    per_row = np.diff(X.indptr)
    keys = np.repeat(np.asarray(codes, dtype=np.int64) * n_features, per_row)
    keys += X.indices
    row_weights = None if weights is None else np.repeat(weights, per_row)
    values = _nonzero_values(X.data, power, row_weights, np.float64)
    sums = np.bincount(keys, weights=values, minlength=n_classes * n_features)
    return sums.astype(np.float64, copy=False).reshape(n_classes, n_features)  # no values: int64 zeros


def _threads(nnz):
    """Threads for a kernel over ``nnz`` stored values: one for a few."""
    return n_threads() if nnz >= blocks.PARALLEL_NNZ else 1


def _piece_budget(X, per_nnz, threads):
    """Stored values per piece, at ``per_nnz`` bytes of temporaries each: the
    pieces of all threads take no more memory than ``X``'s index arrays (at
    least ``BLOCK_BYTES``)."""
    return max(max(X.indices.nbytes + X.indptr.nbytes, blocks.BLOCK_BYTES) // (per_nnz * threads), 1)


def summed_entries(keys, values):
    """``(keys, values)`` (non-negative keys) sorted by key, the values of
    equal keys summed one after another in the order they came, on the
    calling thread: split by key range over two threads, a fold of 4.6
    million entries took 40-60 % more CPU for about the same wall (idle
    machine: 0.23-0.27 s CPU against 0.16 s, 0.145-0.163 s wall against
    0.165 s; under load, where the second core is busy, 0.18-0.35 s against
    0.12-0.16 s, wall as CPU). Callers with several folds run them on the
    threads instead.

    Fast path ``sparse_class_sums``: values that are whole numbers from 0 to
    2**32 whose sums stay exact in float64 (counts: any order of the
    additions gives the sums the ordered additions give) are sorted packed
    with their keys, no order kept (:func:`_summed_counts`); 2.2-2.7x less
    CPU than the reference on the 4.6 million entries of a ComplementNB fit
    of Debian's package descriptions as 1-2grams (0.16 s against 0.38 s).
    The reference, and the path of any other values: keys and positions
    packed and sorted, then each key's values added in their order.
    """
    n = keys.shape[0]
    if n < 2:
        return keys, values
    top = int(keys.max())
    if n <= 2**32 and top < 2**32:
        counts = _whole_counts(values) if fast("sparse_class_sums") else None
        if counts is not None:
            return _summed_counts(keys, counts, top)
        # Key and position packed in one uint64: numpy's vectorised sort of
        # plain integers beats argsort several times over, and ties keep
        # their order.
        packed = keys.astype(np.uint64) << np.uint64(32)
        packed |= np.arange(n, dtype=np.uint64)
        packed.sort()
        order = (packed & np.uint64(2**32 - 1)).astype(np.intp)
        keys = (packed >> np.uint64(32)).astype(keys.dtype)
    else:
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    if first.all():
        return keys, values[order]
    # bincount sums each key's values in order, and faster than reduceat
    sums = np.bincount(np.cumsum(first) - 1, weights=values[order])
    return keys[first], sums


# Whole numbers below this add up exactly in float64, in any order.
_EXACT_SUMS = 2**53


def _whole_counts(values):
    """float64 ``values`` as uint32 if every one is a whole number from 0 to
    2**32 and every sum of them is exact in float64; else None."""
    low, high = values.min(), values.max()
    if not (low >= 0 and high < 2**32) or (low == 0 and np.signbit(values).any()):  # NaN fails; -0.0 kept
        return None
    counts = values.astype(np.uint32)
    if not np.array_equal(counts, values):
        return None
    if float(high) * values.shape[0] >= _EXACT_SUMS and not float(values.sum()) < _EXACT_SUMS / 2:
        return None
    return counts


def _summed_counts(keys, counts, top):
    """``(keys, float64 sums)`` of whole-number ``counts`` (uint32) at keys
    below ``top + 1`` (< 2**32), keys ascending and unique.

    Each key and count are packed in one uint32 (the count's low bits below
    the key's) and sorted, half the bytes of a uint64 key and position and no
    gather of the values after; the counts too large for their bits are
    summed apart, shifted, and added at their keys (every one of which the
    low bits kept). Keys too wide to leave 4 bits: key and count in a uint64.
    """
    count_bits = 32 - max(top.bit_length(), 1)
    if count_bits < 4:
        packed = keys.astype(np.uint64) << np.uint64(32)
        packed |= counts
        out, sums = _run_sums(packed, np.uint64(32), np.uint64(2**32 - 1), keys.dtype)
        return out, sums.astype(np.float64)
    shift, low_bits = np.uint32(count_bits), np.uint32((1 << count_bits) - 1)
    packed = keys.astype(np.uint32) << shift
    packed |= counts & low_bits
    out, sums = _run_sums(packed, shift, low_bits, keys.dtype)
    big = np.flatnonzero(counts > low_bits)
    if big.size:
        high_keys, high = _summed_counts(keys[big], counts[big] >> shift, top)
        sums[np.searchsorted(out, high_keys)] += high.astype(np.uint64) << np.uint64(count_bits)
    return out, sums.astype(np.float64)


def _run_sums(packed, shift, mask, dtype):
    """Sorted unique keys (``packed >> shift``, as ``dtype``) and the uint64
    sums of their ``packed & mask``; ``packed`` is sorted in place."""
    packed.sort()
    keys = packed >> shift
    first = np.empty(packed.shape[0], dtype=bool)
    first[0] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    sums = np.add.reduceat(packed & mask, starts, dtype=np.uint64)
    return keys[starts].astype(dtype), sums


def csr_class_entries(X, codes, weights, n_classes, *, summed=True):
    """``Yᵀ·X`` of a host CSR batch as its entries: keys ``column * k +
    class`` (int64) and float64 values, at a cost of O(nnz log nnz) (no
    array of size d or k × d). ``X`` is taken as it comes (unsorted
    indices, duplicates, integer values). ``summed``: the keys ascending
    and unique, their values summed; else one entry per stored value, in
    ``X``'s order (O(nnz): a log of entries sums them when it folds)."""
    counts = np.diff(X.indptr)
    lo, hi = int(X.indptr[0]), int(X.indptr[-1])
    # 32-bit keys where they fit: the sort, most of the work, goes faster.
    key = np.uint32 if n_classes * X.shape[1] < 2**32 else np.int64
    classes = np.repeat(np.asarray(codes).astype(key), counts)
    keys = _column_class_keys(X.indices[lo:hi], classes, n_classes, key)
    values = X.data[lo:hi].astype(np.float64)
    if weights is not None:
        values *= np.repeat(np.asarray(weights, dtype=np.float64), counts)
    if summed:
        keys, values = summed_entries(keys, values)
    return keys.astype(np.int64), values


def category_counts(X, codes, weights, offsets, n_classes, *, xp, dtype):
    """``Yᵀ·OneHot(X)`` (n_classes × M): per-class counts of every category of
    every feature, in ``dtype``.

    The categories of all features lie side by side in one flat axis of
    ``M = offsets[-1]`` columns (``offsets``: host int64, one more than the
    features): code ``X[i, j]`` of feature ``j`` is column ``offsets[j] +
    X[i, j]``. Dense ``X`` holds whole numbers, each below its feature's
    number of categories where its row's weight is not 0; the implicit
    zeros of a sparse ``X`` are category 0. ``codes``, ``weights`` and
    ``n_classes`` are as in :func:`class_sums`.

    Fast path ``category_counts`` for dense ``X`` on numpy and cupy: a
    histogram (:func:`_histogram_category_counts`), 14-25× faster in 5-9×
    less memory than its reference (``benchmarks/fast_paths.py``), the
    product with the one-hot categories: the path of other namespaces.
    """
    if is_sparse(X):
        return _sparse_category_counts(X, codes, weights, offsets, n_classes, xp=xp, dtype=dtype)
    if (on_host(xp) or has_sparse(xp)) and fast("category_counts"):
        return _histogram_category_counts(X, codes, weights, offsets, n_classes, xp=xp, dtype=dtype)
    n, d = X.shape
    n_columns = int(offsets[-1])
    device = codes.device
    out = xp.zeros((n_classes, n_columns), dtype=dtype, device=device)
    # No sparse matrices: compare each row block with every column's category.
    feature = np.repeat(np.arange(d, dtype=np.int64), np.diff(offsets))
    value = xp.asarray(np.arange(n_columns) - offsets[feature], dtype=X.dtype, device=device)
    feature = xp.asarray(feature, device=device)
    for start, stop in blocks.row_blocks(n, 8 * (n_columns + n_classes), xp=xp):
        w = None if weights is None else weights[start:stop]
        Y = onehot(codes[start:stop], n_classes, dtype=dtype, xp=xp, weights=w)
        oh = xp.astype(xp.take(X[start:stop, :], feature, axis=1) == value, dtype)
        out = out + (oh.T @ Y).T  # (Zᵀ·Y)ᵀ, as in class_sums
    return out


def _histogram_category_counts(X, codes, weights, offsets, n_classes, *, xp, dtype):
    """:func:`category_counts` of dense ``X`` as a histogram of the keys
    ``class * M + offsets[j] + X[i, j]``, with no one-hot matrix: on the host
    by ``np.bincount`` over row blocks on all cores, one accumulator per
    thread; on a device by ``cupy.add.at``, nothing read back (no sync).
    """
    n, d = X.shape
    n_columns = int(offsets[-1])
    n_bins = n_classes * n_columns
    device = codes.device
    key_dtype = index_dtype(xp, n_bins)
    start = xp.asarray(offsets[:-1], dtype=key_dtype, device=device)
    class_start = xp.reshape(xp.astype(codes, key_dtype) * key_dtype(n_columns), (-1, 1))
    # Categories of zero-weight rows are not seen, so they can lie past their
    # feature's columns: clipped to its last column, where they add 0.
    last = xp.asarray(np.diff(offsets).astype(X.dtype) - 1, device=device)

    def keys(a, b):
        block = xp.astype(X[a:b, :] if weights is None else xp.minimum(X[a:b, :], last), key_dtype)
        block += start
        block += class_start[a:b, :]
        return xp.reshape(block, (-1,))

    if not on_host(xp):
        scatter_add = device_library(xp).cupy.add.at
        out = xp.zeros(n_bins, dtype=dtype, device=device)
        for a, b in blocks.row_blocks(n, d * (np.dtype(key_dtype).itemsize + 8), xp=xp):
            if weights is None:
                w = xp.ones(((b - a) * d,), dtype=dtype, device=device)
            else:
                w = xp.reshape(xp.broadcast_to(xp.reshape(weights[a:b], (-1, 1)), (b - a, d)), (-1,))
            scatter_add(out, keys(a, b), w)
        return xp.reshape(out, (n_classes, n_columns))
    threads = n_threads()
    row_bytes = d * (np.dtype(key_dtype).itemsize + (8 if weights is not None else 0))
    # Keys of a block stay in cache; every thread gets blocks.
    pieces = blocks.row_blocks(n, row_bytes, blocks.HOST_BLOCK_BYTES, min_blocks=threads)

    def count(group):
        acc = np.zeros(n_bins, dtype=dtype)
        for a, b in group:
            w = None if weights is None else np.repeat(np.asarray(weights[a:b], dtype=np.float64), d)
            acc += np.bincount(keys(a, b), weights=w, minlength=n_bins)
        return acc

    groups = blocks.round_robin(pieces, threads)
    # A few keys (:data:`_SERIAL_KEYS`): the threads' groups counted here one after another, the same
    # sums in the same order, without the hand-over to the pool that costs more than their counting.
    parts = list(map(count, groups)) if n * d <= _SERIAL_KEYS else parallel_map(count, groups)
    return functools.reduce(operator.iadd, parts).reshape(n_classes, n_columns)


# Keys of a dense categorical histogram counted in the calling thread. category_counts of a 17 × 6
# block of 3 classes with weights (the Dask EM tests' CategoricalNB blocks) 269-354 -> 68-126 µs a
# call, 240 × 6 221-348 -> 97-157 µs (best of 5 × 300 calls, 3 alternating processes, load 1.7-2.0).
_SERIAL_KEYS = 1 << 12


def _sparse_category_counts(X, codes, weights, offsets, n_classes, *, xp, dtype):
    """:func:`category_counts` of sparse ``X``: the stored values are counted
    (one stored 1 each in a one-hot matrix), then category 0 of every
    feature also takes its implicit zeros: its class's total less the
    weight of the rows that store a value in that feature, a sum over the
    feature's own columns. Where no row of positive weight of a class has
    an implicit zero in a feature (an integer count: exact) that is exactly
    0, not the rounding between two orders of summation."""
    n_columns = int(offsets[-1])
    d = X.shape[1]
    device = codes.device
    nz = sparse_onehot_nonzero(X, sparse_lib(X).asarray(offsets), n_columns=n_columns, dtype=dtype)
    seen, _ = onehot_nonzero_columns(np.diff(offsets))
    # nz gives feature j its categories and then one column for unseen ones, from offsets[j] + j.
    nz_blocks = np.asarray(offsets, dtype=np.int64) + np.arange(d + 1)
    sums = class_sums(nz, codes, weights, n_classes, xp=xp, dtype=dtype)
    counts = xp.take(sums, xp.asarray(seen, device=device), axis=1)
    totals = xp.reshape(class_totals(codes, weights, n_classes, dtype=dtype, xp=xp), (-1, 1))
    zeros = totals - feature_block_sums(sums, nz_blocks, xp=xp)  # whole numbers without weights: exact
    if weights is not None:
        # Summed in any order, n weights round by under n·eps·total: a larger difference is
        # no zero count, so the host skips the pass counting rows where every one is larger.
        near = xp.abs(zeros) <= (4 * codes.shape[0] * xp.finfo(dtype).eps) * totals
        if not on_host(xp) or bool(xp.any(near)):
            positive = xp.astype(weights > 0, dtype)
            rows = xp.reshape(class_totals(codes, positive, n_classes, dtype=dtype, xp=xp), (-1, 1))
            stored = class_sums(nz, codes, positive, n_classes, xp=xp, dtype=dtype)
            zeros = xp.where(rows > feature_block_sums(stored, nz_blocks, xp=xp), zeros, xp.zeros_like(zeros))
    # Column offsets[j] (category 0 of feature j) takes zeros[:, j]; the others a 0.
    first = np.full(n_columns, d, dtype=np.int64)
    first[offsets[:-1]] = np.arange(d)
    pad = xp.zeros((n_classes, 1), dtype=dtype, device=device)
    return counts + xp.take(xp.concat([zeros, pad], axis=1), xp.asarray(first, device=device), axis=1)


def feature_block_sums(flat, offsets, *, xp):
    """Sum of every feature's block of columns: (k, M) -> (k, d), block ``j``
    being columns ``offsets[j]:offsets[j + 1]`` (host int64 ``offsets``).

    Each is a sum of its own block's values: a difference of running sums
    over all columns would carry the rounding of every block before it (a
    block of zeros came out ±1e-16). Blocks whose widths round up to the
    same power of two are gathered, padded with zeros to the widest of
    them, into one (k, blocks, width) array summed over its last axis: a
    gather per power of two, at most twice ``flat``'s size in all. The
    host has the segmented sum itself (``np.add.reduceat``).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    widths = np.diff(offsets)
    k, device = flat.shape[0], flat.device
    if on_host(xp):
        out = np.zeros((k, widths.shape[0]), dtype=flat.dtype)
        filled = widths > 0  # reduceat gives an empty block the value at its start, not 0
        if filled.any():
            out[:, filled] = np.add.reduceat(flat[:, : offsets[-1]], offsets[:-1][filled], axis=1)
        return out
    padded = xp.concat([flat, xp.zeros((k, 1), dtype=flat.dtype, device=device)], axis=1)
    size_class = np.ceil(np.log2(np.maximum(widths, 1))).astype(np.int64)
    parts, order = [], []
    for c in np.unique(size_class):
        feature = np.flatnonzero(size_class == c)
        width = int(widths[feature].max())
        columns = offsets[feature, None] + np.arange(width)
        columns = np.where(columns < offsets[feature + 1, None], columns, padded.shape[1] - 1)
        block = xp.take(padded, xp.asarray(columns.reshape(-1), device=device), axis=1)
        parts.append(xp.sum(xp.reshape(block, (k, feature.shape[0], width)), axis=2))
        order.append(feature)
    if len(parts) < 2:
        return parts[0] if parts else xp.zeros((k, 0), dtype=flat.dtype, device=device)
    where = np.empty(widths.shape[0], dtype=np.int64)
    where[np.concatenate(order)] = np.arange(widths.shape[0])
    return xp.take(xp.concat(parts, axis=1), xp.asarray(where, device=device), axis=1)


def class_scatter(X, codes, weights, n_classes, *, xp, dtype):
    """(weight, mean, scatter matrix) per class of one block of rows.

    The scatter matrices of all classes are one matrix product
    ``Zᵀ · R`` with ``Z = [Y[:, 1] ⊙ R, …, Y[:, k] ⊙ R]`` (n × k·d), ``R`` the
    rows centred on their class mean: no loop over classes, and a single
    GEMM (a batched product over a (k, d, n) stack is several times slower
    on the CPU).
    """
    Y = onehot(codes, n_classes, dtype=dtype, xp=xp, weights=weights)
    count = xp.sum(Y, axis=0)
    safe = xp.where(count > 0, count, xp.ones_like(count))
    mean = (Y.T @ X) / safe[:, None]
    resid = X - xp.take(mean, codes, axis=0)
    n, d = resid.shape
    wide = xp.reshape(xp.reshape(Y, (n, n_classes, 1)) * xp.reshape(resid, (n, 1, d)), (n, n_classes * d))
    scatter = xp.reshape(wide.T @ resid, (n_classes, d, d))
    return count, mean, scatter


def soft_class_sums(X, R, *, xp, dtype, power=1):
    """``Rᵀ·X`` (``power=1``) or ``Rᵀ·(X ⊙ X)`` (``power=2``) in ``dtype``:
    :func:`class_sums` with a dense soft class matrix ``R`` (n × k, in
    ``dtype``: each row's weight in every class, e.g. EM responsibilities
    times sample weights) for ``codes`` and ``weights``. Sparse ``X`` is one
    sparse-dense product ``(Xᵀ·R)ᵀ``, never densified.
    """
    if is_sparse(X):
        values = X.data if power == 1 else X.data * X.data
        Xp = type(X)((values, X.indices, X.indptr), shape=X.shape)
        return (Xp.T @ R).T
    out = xp.zeros((R.shape[1], X.shape[1]), dtype=dtype, device=R.device)
    for start, stop, Xb in _upcast_row_blocks(X, R.shape[1], xp=xp, dtype=dtype, power=power):
        out = out + (Xb.T @ R[start:stop, ...]).T  # (Xᵀ·R)ᵀ, as in class_sums
    return out
