"""Namespaces, devices, dtypes and sparse matrices.

This is the only module that knows array libraries by name. Model code asks it
for a namespace and calls only functions of the Array API standard; sparse
matrices (``scipy.sparse`` on the CPU, ``cupyx.scipy.sparse`` on a GPU) are not
in the standard, so every operation on them lives here. ``cupyx`` is only
looked at when it is already imported, so CPU users pay nothing for it.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import array_api_compat
import numpy as np
import scipy.sparse as sp
from array_api_compat import (
    is_cupy_namespace,
    is_numpy_namespace,
    is_torch_namespace,
)

__all__ = [
    "get_namespace",
    "get_device",
    "is_sparse",
]

# Row or nonzero blocks are sized so their temporaries stay near this many bytes.
BLOCK_BYTES = 64 * 2**20


# --------------------------------------------------------------------------- #
# Namespaces and devices
# --------------------------------------------------------------------------- #
def _cupyx_sparse():
    return sys.modules.get("cupyx.scipy.sparse")


def is_sparse(X) -> bool:
    """True for a scipy.sparse or (already imported) cupyx.scipy.sparse matrix."""
    if sp.issparse(X):
        return True
    mod = _cupyx_sparse()
    return mod is not None and mod.issparse(X)


def is_dask_array(X) -> bool:
    """True for a Dask array (only looked for when Dask is already imported)."""
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(X, mod.Array)


def _sparse_lib(X):
    """The dense library (numpy or cupy) behind a sparse matrix."""
    if sp.issparse(X):
        return np
    import cupy

    return cupy


def is_array(x) -> bool:
    """True for an array of any Array API library (not lists, not sparse)."""
    return array_api_compat.is_array_api_obj(x) and not is_sparse(x)


def get_namespace(*arrays):
    """The Array API namespace shared by ``arrays``.

    Sparse matrices map to the namespace of their dense library; ``None`` is
    ignored.
    """
    dense = []
    for a in arrays:
        if a is None:
            continue
        dense.append(_sparse_lib(a).empty(0) if is_sparse(a) else a)
    return array_api_compat.array_namespace(*dense)


def get_device(X):
    """The device of a dense array or of a sparse matrix's stored values."""
    if is_sparse(X):
        return array_api_compat.device(X.data)
    return array_api_compat.device(X)


def has_sparse(xp) -> bool:
    """Whether the namespace has a sparse matrix library this module drives."""
    return is_numpy_namespace(xp) or is_cupy_namespace(xp)


def has_float64(xp, device) -> bool:
    """Whether ``device`` computes in float64 (not every GPU backend does)."""
    try:
        info = xp.__array_namespace_info__()
        return "float64" in info.dtypes(device=device, kind="real floating")
    except Exception:  # a namespace without the inspection API
        return True


def accumulation_dtype(xp, device):
    """float64 where the device has it: counts stay exact up to 2**53."""
    return xp.float64 if has_float64(xp, device) else xp.float32


def result_dtype(dtype, xp, device):
    """The float dtype of parameters and scores for inputs of ``dtype``.

    float32 (and float16) inputs give float32; everything else gives float64
    where the device has it.
    """
    if dtype in (xp.float32, getattr(xp, "float16", None)):
        return xp.float32
    return accumulation_dtype(xp, device)


# --------------------------------------------------------------------------- #
# Moving arrays between namespaces and devices
# --------------------------------------------------------------------------- #
def to_numpy(x):
    """A host numpy copy (or view) of any dense array."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):  # numpy's 0-d reductions
        return np.asarray(x)
    xp = array_api_compat.array_namespace(x)
    if is_cupy_namespace(xp):
        return x.get()
    if is_torch_namespace(xp):
        return x.detach().cpu().numpy()
    return np.from_dlpack(x)


def to_namespace(x, xp, device):
    """``x`` as an array of namespace ``xp`` on ``device``."""
    if x is None:
        return None
    if type(x) is np.ndarray and xp is array_api_compat.numpy:
        return x  # the common case, cheaply: scoring asks per row block
    if is_array(x) and array_api_compat.array_namespace(x) is xp:
        if array_api_compat.device(x) == device:
            return x
        return array_api_compat.to_device(x, device)
    host = to_numpy(x) if is_array(x) else np.asarray(x)
    return xp.asarray(host, device=device)


# --------------------------------------------------------------------------- #
# Numerics that some namespaces have built in
# --------------------------------------------------------------------------- #
def lgamma(a, *, xp):
    """log Γ(a) elementwise (not in the Array API standard), same namespace and device."""
    if is_numpy_namespace(xp):
        from scipy.special import gammaln

        return xp.asarray(gammaln(a))
    if is_torch_namespace(xp):
        import torch

        return torch.lgamma(a)
    if is_cupy_namespace(xp):
        from cupyx.scipy.special import gammaln

        return gammaln(a)
    # Other namespaces (array-api-strict): through the host and back.
    from scipy.special import gammaln

    host = np.asarray(gammaln(to_numpy(a)), dtype=to_numpy(a).dtype)
    return xp.asarray(host, device=array_api_compat.device(a))


def contiguous(a, *, xp):
    """``a`` laid out row-major where the library lets us say so.

    Sparse-times-dense products stream the dense operand row by row, so its
    layout decides their speed.
    """
    if is_numpy_namespace(xp):
        return np.ascontiguousarray(a)
    if is_cupy_namespace(xp):
        import cupy

        return cupy.ascontiguousarray(a)
    if is_torch_namespace(xp):
        return a.contiguous()
    return a


def log_in_place(x, *, xp):
    """``log(x)``, written over ``x`` (a temporary) where the library allows.

    Finalize works on k × d arrays of tens of MB: a fresh one costs its page
    faults on top of the pass.
    """
    if is_numpy_namespace(xp) and isinstance(x, np.ndarray) and x.flags.writeable:
        if x.ndim != 2:
            return np.log(x, out=x)
        parallel_map(lambda cols: np.log(x[:, cols], out=x[:, cols]), _column_chunks(x))
        return x
    return xp.log(x)


def _column_chunks(a):
    """Column slices of a 2-D host array, about ``HOST_BLOCK_BYTES`` each
    (finalize's k × d passes go over the cores in such chunks)."""
    rows, columns = a.shape
    step = max(1024, HOST_BLOCK_BYTES // max(rows * a.itemsize, 1))
    return [slice(j, min(j + step, columns)) for j in range(0, columns, step)]


def transposed_as(a, dtype, *, xp):
    """``a.T`` as a row-major array of ``dtype``.

    On numpy the cast and the transpose are one pass into one new array,
    in column chunks on all cores.
    """
    if is_numpy_namespace(xp):
        out = np.empty(a.shape[::-1], dtype=dtype)

        def chunk(cols):
            out[cols].T[...] = a[:, cols]

        parallel_map(chunk, _column_chunks(a))
        return out
    return contiguous(xp.astype(a, dtype).T, xp=xp)


# --------------------------------------------------------------------------- #
# Sparse matrices
# --------------------------------------------------------------------------- #
def sparse_canonical(X):
    """CSR or CSC (matrix or array class) kept as is; other formats become CSR.

    Duplicate entries are summed (in a copy: the input is left alone), so
    every stored value is one matrix element; binarizing, squaring and
    one-hot encoding act on elements, not on the parts of a sum.
    """
    if X.format not in ("csr", "csc"):
        return X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def sparse_values(X):
    """The stored values of a sparse matrix (a dense 1-D array)."""
    return X.data


def sparse_with_values(X, data):
    """A matrix with ``X``'s sparsity structure and new stored values."""
    out = X.copy()
    out.data = data
    return out


def sparse_binarize(X, threshold):
    """``X > threshold`` as a sparse matrix of ones (threshold >= 0 keeps zeros zero)."""
    keep = X.data > threshold
    if bool(keep.all()):
        # Nothing drops out (counts with threshold 0): share X's index arrays.
        return type(X)((keep.astype(X.dtype), X.indices, X.indptr), shape=X.shape, copy=False)
    out = sparse_with_values(X, keep.astype(X.dtype))
    out.eliminate_zeros()
    return out


def sparse_host_array(X, a):
    """A host numpy array moved to the library (numpy or cupy) of sparse ``X``."""
    return _sparse_lib(X).asarray(a)


def sparse_column_max(X, rows=None):
    """Per-column maximum as a dense 1-D array, implicit zeros included.

    ``rows`` (a boolean array, one per row) restricts it to the rows marked
    True; the others count as zeros.
    """
    lib = _sparse_lib(X)
    if rows is not None:
        sparse = sp if lib is np else _cupyx_sparse()
        X = sparse.diags(rows.astype(X.dtype)) @ X
    return lib.asarray(X.max(axis=0).toarray()).reshape(-1)


def _major_blocks(X, budget_nnz):
    """(start, stop, nnz_start, nnz_stop) over the major axis of CSR/CSC ``X``."""
    indptr = _sparse_lib(X).asarray(X.indptr)
    host_indptr = indptr.get() if hasattr(indptr, "get") else indptr
    n_major = host_indptr.shape[0] - 1
    start = 0
    while start < n_major:
        # The last major index whose nonzeros still fit the budget (at least one).
        limit = host_indptr[start] + budget_nnz
        stop = int(np.searchsorted(host_indptr, limit, side="right")) - 1
        stop = min(max(stop, start + 1), n_major)
        yield start, stop, int(host_indptr[start]), int(host_indptr[stop])
        start = stop


def n_threads():
    """CPU threads the host kernels split their work over (``NBGPU_NUM_THREADS``)."""
    env = os.environ.get("NBGPU_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, min(len(os.sched_getaffinity(0)), 8))
    except AttributeError:  # not on Linux
        return max(1, min(os.cpu_count() or 1, 8))


_POOL = None
_WORKING = threading.local()  # set while a thread runs items of a parallel_map


def parallel_map(fn, items):
    """``[fn(i) for i in items]`` on all cores: the caller and a shared pool.

    The kernels handed to it are numpy/scipy calls that release the GIL, so
    the threads run on separate cores. The calling thread takes items too
    (it is already running; a pool thread that has sat idle can be slow to
    get its core back) and every thread takes the next item when it is free,
    so a slow core holds up at most one item. Called from inside an item it
    runs serially (no nested waits on a busy pool).
    """
    global _POOL
    items = list(items)
    threads = min(n_threads(), len(items))
    if threads <= 1 or getattr(_WORKING, "active", False):
        return [fn(i) for i in items]
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=max(n_threads() - 1, 1), thread_name_prefix="nbgpu")
    results = [None] * len(items)
    order = iter(range(len(items)))
    lock = threading.Lock()
    failed = []

    def drain():
        _WORKING.active = True
        try:
            while not failed:
                with lock:
                    i = next(order, None)
                if i is None:
                    return
                results[i] = fn(items[i])
        except BaseException:
            failed.append(True)  # the others stop taking items
            raise
        finally:
            _WORKING.active = False

    # Our threads already use every core: BLAS threads on top of them
    # oversubscribe the cores and serialise on BLAS's own pool.
    with _blas_single_thread():
        helpers = [_POOL.submit(drain) for _ in range(threads - 1)]
        try:
            drain()
        finally:
            # A helper that has not started finds nothing left: cancel it
            # rather than wait for its thread; wait for the others.
            running = [helper for helper in helpers if not helper.cancel()]
            for helper in running:
                helper.exception()
        for helper in running:
            helper.result()  # raises a helper's error
    return results


def _forget_pool():
    # A forked child has none of the pool's threads: it starts its own.
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


_BLAS = None


def _blas_single_thread():
    """A context in which BLAS (OpenBLAS, MKL, ...) runs on one thread."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


# Host row blocks are sized to stay in cache (and small enough that BLAS
# runs each product on one thread); device blocks to amortise launches.
HOST_BLOCK_BYTES = 4 * 2**20


def float_warnings_off():
    """A context in which invalid or overflowing float operations (numpy's
    RuntimeWarnings) pass silently, for code that checks its results itself."""
    return np.errstate(invalid="ignore", over="ignore")


def blocks_on_host_threads(xp):
    """True where :func:`map_row_blocks` maps row blocks over the host's cores."""
    return is_numpy_namespace(xp)


def map_row_blocks(fn, n_rows, bytes_per_row, *, xp, host_budget=None):
    """``[fn(start, stop) for row blocks]``: on all cores for numpy.

    Blocks hold about ``host_budget`` (default ``HOST_BLOCK_BYTES``) of
    temporaries on the CPU (numpy) and are mapped over the thread pool;
    elsewhere about ``BLOCK_BYTES``, one after the other (the device or the
    library is already parallel).
    """
    host = blocks_on_host_threads(xp)
    budget = (host_budget or HOST_BLOCK_BYTES) if host else BLOCK_BYTES
    step = max(1, int(budget // max(bytes_per_row, 1)))
    blocks = [(a, min(a + step, n_rows)) for a in range(0, n_rows, step)]
    if not host:
        return [fn(a, b) for a, b in blocks]
    return parallel_map(lambda ab: fn(*ab), blocks)


def host_fit_block_bytes():
    """Temporaries of one row block of a fit on the CPU: the blocks of all
    threads together stay within ``BLOCK_BYTES``."""
    return max(BLOCK_BYTES // n_threads(), 1)


def dense_class_sums(X, codes, weights, n_classes, *, xp):
    """``Yᵀ·X`` for a dense block ``X`` (n × d), in ``X``'s dtype.

    On numpy the one-hot ``Y`` is a sparse matrix, so the work is one
    streaming pass adding every row into its class's row (a GEMM with an
    inner dimension of n and k output rows is slow and scales badly in
    BLAS); elsewhere it is the product with the dense one-hot matrix.
    """
    n = X.shape[0]
    if is_numpy_namespace(xp):
        values = np.ones(n, dtype=X.dtype) if weights is None else np.asarray(weights, dtype=X.dtype)
        Y = sp.csr_matrix((values, np.asarray(codes), np.arange(n + 1)), shape=(n, n_classes))
        return np.asarray(Y.T @ X)
    classes = xp.arange(n_classes, dtype=codes.dtype, device=codes.device)
    Y = xp.astype(xp.reshape(codes, (-1, 1)) == classes, X.dtype)
    if weights is not None:
        Y = Y * xp.reshape(xp.astype(weights, X.dtype), (-1, 1))
    return Y.T @ X


def is_host(xp) -> bool:
    """Whether ``xp`` is numpy, whose dense kernels here run on the host cores."""
    return is_numpy_namespace(xp)


def host_category_counts(X, codes, weights, col_start, n_classes, n_columns, *, dtype):
    """Per-class counts of the one-hot columns ``col_start[j] + X[:, j]`` (numpy).

    ``Yᵀ · OneHot(X)`` as a histogram: every entry's key ``class * n_columns
    + col_start[j] + X[i, j]`` goes through ``np.bincount`` (one compiled
    pass, no one-hot matrix is built). Row blocks are counted on all cores,
    one accumulator per thread. ``X`` holds whole numbers, each below its
    feature's number of columns where its row's weight is not 0.

    Returns
    -------
    counts : array of shape (n_classes, n_columns), ``dtype`` (float64: exact)
    """
    n, d = X.shape
    n_bins = n_classes * n_columns
    key_dtype = np.int32 if n_bins < 2**31 else np.int64
    row_bytes = d * (np.dtype(key_dtype).itemsize + (8 if weights is not None else 0))
    # Keys of a block stay within HOST_BLOCK_BYTES; every thread gets as many blocks.
    threads = n_threads()
    n_blocks = -(-max(1, n * row_bytes // HOST_BLOCK_BYTES) // threads) * threads
    step = -(-n // n_blocks)
    blocks = [(a, min(a + step, n)) for a in range(0, n, step)]
    threads = min(threads, len(blocks))
    start = np.asarray(col_start, dtype=key_dtype)
    class_start = np.asarray(codes).astype(key_dtype) * key_dtype(n_columns)

    # Categories of zero-weight rows are not seen, so they can lie past their
    # feature's columns: clipped to its last column, where they add 0.
    last = np.diff(np.append(start, n_columns)).astype(X.dtype) - 1

    def count(a, b):
        values = X[a:b] if weights is None else np.minimum(X[a:b], last)
        keys = values.astype(key_dtype)
        keys += start
        keys += class_start[a:b, None]
        w = None if weights is None else np.repeat(np.asarray(weights[a:b], dtype=np.float64), d)
        return np.bincount(keys.reshape(-1), weights=w, minlength=n_bins)

    def count_group(group):
        acc = np.zeros(n_bins, dtype=dtype)
        for a, b in group:
            acc += count(a, b)
        return acc

    parts = parallel_map(count_group, [blocks[i::threads] for i in range(threads)])
    out = parts[0]
    for part in parts[1:]:
        out += part
    return out.reshape(n_classes, n_columns)


def _even_splits(indptr, parts):
    """Cut points that split CSR/CSC ``indptr`` into ``parts`` ranges of equal nonzeros."""
    targets = np.linspace(0, int(indptr[-1]), parts + 1)[1:-1]
    cuts = np.searchsorted(indptr, targets, side="left")
    return np.unique(np.concatenate([[0], cuts, [indptr.shape[0] - 1]]))


# Below this many nonzeros a kernel runs on one thread: a pool hop costs more.
_PARALLEL_NNZ = 1 << 18


def _nonzero_values(data, power, weights, dtype):
    """``data ** power * weights`` in ``dtype``: a copy, never written into ``X``.

    ``weights`` (one per stored value) or None.
    """
    values = data.astype(dtype)
    if power == 2:
        values *= values
    if weights is not None:
        values *= weights
    return values


def sparse_class_sums(X, codes, weights, n_classes, *, power=1, dtype=None):
    """Per-class sums of the rows of sparse ``X`` (``Yᵀ·X`` without building ``Y``).

    A host CSR matrix is summed class by class (``_csr_class_sums``). Other
    input scatters each stored value into bin ``column * n_classes +
    code[row]``: one pass over the nonzeros whatever the number of classes,
    bins of a column next to each other (so a CSC matrix fills them in
    order), and the sums accumulated in float64 (exact counts) without a
    float64 copy of ``X``. Keys are int32 where the bins allow. On the CPU
    the nonzeros are cut into blocks whose keys and float64 values together
    take no more memory than ``X``'s index arrays (at least
    ``BLOCK_BYTES``), scattered on all cores, one accumulator per thread.

    Parameters
    ----------
    X : CSR or CSC matrix of shape (n_samples, n_features)
    codes : int array of shape (n_samples,)
        Class index of every row.
    weights : float array of shape (n_samples,) or None
    n_classes : int
    power : {1, 2}
        Sum the values (1) or their squares (2).
    dtype : accumulation dtype (float64 by default).

    Returns
    -------
    sums : dense array of shape (n_classes, n_features)
        C-ordered from a host CSR matrix; otherwise a transposed view of a
        C-ordered (n_features, n_classes) array.
    """
    lib = _sparse_lib(X)
    dtype = lib.float64 if dtype is None else dtype
    if lib is np and X.format == "csr":
        return _csr_class_sums(X, codes, weights, n_classes, power=power, dtype=dtype)
    n_samples, n_features = X.shape
    k = n_classes
    n_bins = n_features * k
    key_dtype = lib.int32 if n_bins < 2**31 else lib.int64
    is_csr = X.format == "csr"
    codes = codes.astype(key_dtype)

    def keys_values(start, stop, lo, hi):
        counts = lib.diff(X.indptr[start : stop + 1])
        if is_csr:
            keys = X.indices[lo:hi].astype(key_dtype) * key_dtype(k)
            keys += lib.repeat(codes[start:stop], counts)
        else:
            keys = codes[X.indices[lo:hi]]
            keys += lib.repeat(lib.arange(start, stop, dtype=key_dtype) * key_dtype(k), counts)
        rows = None
        if weights is not None:
            rows = lib.repeat(lib.arange(start, stop), counts) if is_csr else X.indices[lo:hi]
        return keys, _nonzero_values(X.data[lo:hi], power, None if rows is None else weights[rows], dtype)

    if lib is not np:
        from cupyx import scatter_add

        out = lib.zeros(n_bins, dtype=dtype)
        for start, stop, lo, hi in _major_blocks(X, max(BLOCK_BYTES // 16, 1)):
            if hi > lo:
                keys, values = keys_values(start, stop, lo, hi)
                scatter_add(out, keys, values)
        return out.reshape(n_features, k).T

    index_bytes = X.indices.nbytes + X.indptr.nbytes
    per_nnz = np.dtype(key_dtype).itemsize + np.dtype(dtype).itemsize
    threads = n_threads() if X.nnz >= _PARALLEL_NNZ else 1
    budget = max(max(index_bytes, BLOCK_BYTES) // (per_nnz * threads), 1)
    blocks = [b for b in _major_blocks(X, budget) if b[3] > b[2]]
    if threads > 1 and len(blocks) < threads:
        cuts = _even_splits(X.indptr, threads)
        blocks = [
            (int(a), int(b), int(X.indptr[a]), int(X.indptr[b])) for a, b in zip(cuts[:-1], cuts[1:])
        ]
    groups = [blocks[i::threads] for i in range(min(threads, len(blocks)))]

    def scatter(group):
        # Summing duplicates is what densifying a one-row CSR matrix does,
        # in scipy's compiled loop (no cast of keys to int64, no GIL).
        acc = None
        for block in group:
            keys, values = keys_values(*block)
            indptr = np.asarray([0, keys.shape[0]], dtype=key_dtype)
            row = sp.csr_matrix((values, keys, indptr), shape=(1, n_bins)).toarray()
            if acc is None:
                acc = row
            else:
                acc += row
        return acc

    parts = parallel_map(scatter, groups)
    if not parts:
        return np.zeros((k, n_features), dtype=dtype)
    out = parts[0]
    for part in parts[1:]:
        out += part
    return out.reshape(n_features, k).T


def _csr_class_sums(X, codes, weights, n_classes, *, power, dtype):
    """``sparse_class_sums`` of a host CSR matrix, one class at a time.

    Scattering every nonzero into a (feature, class) bin of one accumulator
    misses the cache on wide data (k × d float64 is tens of MB). Here the
    rows are put in class order (a stable sort of the codes), gathered in
    pieces (scipy's compiled row indexing) and every piece is scattered into
    its class's row of d bins, which stays in cache. A piece holds at most
    a budget of nonzeros, so the gathered copies of all threads take no more
    memory than ``X``'s index arrays (at least ``BLOCK_BYTES``). The
    class-ordered rows are cut into equal shares of nonzeros, one per
    thread; each class row has one writer, the thread where the class
    begins, and a class that runs on into later shares is added up at the
    end.
    """
    n_samples, n_features = X.shape
    order = np.argsort(codes, kind="stable")
    sorted_codes = np.asarray(codes)[order]
    # Nonzeros before each class-ordered row: the indptr of the sorted rows.
    starts = np.zeros(n_samples + 1, dtype=np.int64)
    np.cumsum(np.diff(X.indptr)[order], out=starts[1:])
    class_starts = np.searchsorted(sorted_codes, np.arange(n_classes + 1))

    threads = n_threads() if X.nnz >= _PARALLEL_NNZ else 1
    per_nnz = X.indices.itemsize + X.data.itemsize + np.dtype(dtype).itemsize
    budget = max(max(X.indices.nbytes + X.indptr.nbytes, BLOCK_BYTES) // (per_nnz * threads), 1)
    shares = _even_splits(starts, threads)
    cuts = np.unique(
        np.concatenate([class_starts, shares, np.searchsorted(starts, np.arange(budget, X.nnz, budget))])
    )
    out = np.zeros((n_classes, n_features), dtype=dtype)  # empty classes stay zero

    def scatter(a, b, target=None):
        """Sums of class-ordered rows a:b (one class), into ``target`` if given."""
        rows = order[a:b]
        piece = X[rows]
        row_weights = None if weights is None else np.repeat(weights[rows], np.diff(piece.indptr))
        values = _nonzero_values(piece.data, power, row_weights, dtype)
        indptr = np.asarray([0, values.shape[0]], dtype=piece.indices.dtype)
        # Densifying a one-row CSR matrix sums duplicate columns in scipy's
        # compiled loop (no GIL); it zeroes ``target`` first.
        return sp.csr_matrix((values, piece.indices, indptr), shape=(1, n_features)).toarray(out=target)

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
            if a == max(class_starts[c], lo):
                scatter(a, b, target)
            else:
                target += scatter(a, b)
        return int(sorted_codes[lo]), spill

    for c, spill in parallel_map(sum_share, zip(shares[:-1], shares[1:])):
        if spill is not None:
            out[c] += spill[0]
    return out


def sparse_matmul(X, W):
    """``X @ W`` for sparse ``X`` (n × d) and dense ``W`` (d × k): dense n × k.

    On the CPU a large CSR ``X`` is cut into row ranges of equal nonzeros,
    multiplied on all cores (scipy's kernel releases the GIL) without
    copying ``X``.
    """
    lib = _sparse_lib(X)
    threads = n_threads()
    if lib is not np or X.format != "csr" or threads == 1 or X.nnz < _PARALLEL_NNZ:
        return lib.asarray(X @ W)
    out_dtype = np.result_type(X.dtype, W.dtype)
    out = np.empty((X.shape[0], W.shape[1]), dtype=out_dtype)
    cuts = _even_splits(X.indptr, threads)

    def part(bounds):
        a, b = bounds
        lo, hi = X.indptr[a], X.indptr[b]
        view = sp.csr_matrix(
            (X.data[lo:hi], X.indices[lo:hi], X.indptr[a : b + 1] - lo), shape=(b - a, X.shape[1])
        )
        out[a:b] = view @ W

    parallel_map(part, zip(cuts[:-1], cuts[1:]))
    return out


def sparse_rows(X, start, stop):
    """Rows ``start:stop`` of a sparse matrix (CSR slicing is cheap)."""
    return X[start:stop]


def sparse_columns(X, index):
    """Columns ``index`` (host int array) of a sparse matrix, still sparse."""
    if index.shape[0] and np.array_equal(index, np.arange(index[0], index[0] + index.shape[0])):
        return X[:, int(index[0]) : int(index[0]) + index.shape[0]]
    return X[:, _sparse_lib(X).asarray(index)]


def onehot_csr(index, n_columns, *, dtype):
    """A CSR matrix with one stored 1 per entry of the integer matrix ``index``.

    Row ``i`` holds ones at columns ``index[i, :]``: the one-hot encoding of a
    categorical matrix whose per-feature column offsets are already added.
    Entries ``>= n_columns`` (categories unseen in training) are dropped.
    """
    lib = np if isinstance(index, np.ndarray) else _cupy()
    sparse = sp if lib is np else _cupyx_sparse()
    n, d = index.shape
    keep = index < n_columns
    if bool(keep.all()):
        indptr = lib.arange(0, n * d + 1, d, dtype=lib.int64)
        cols = index.reshape(-1)
    else:
        indptr = lib.concatenate(
            [lib.zeros(1, dtype=lib.int64), lib.cumsum(keep.sum(axis=1))]
        )
        cols = index[keep]
    data = lib.ones(cols.shape[0], dtype=dtype)
    return sparse.csr_matrix((data, cols, indptr), shape=(n, n_columns))


def gathered_row_sums(table, index, *, xp):
    """``Σ_j table[index[:, j], :]`` for every row of the integer matrix ``index``.

    That is ``OneHot(index) @ table``: on numpy and cupy a sparse product
    with one stored 1 per entry (scipy's kernel adds each gathered row of
    ``table`` in place, with no n × d × k temporary); elsewhere a gather and
    a sum over the middle axis.
    """
    n, d = index.shape
    if has_sparse(xp):
        lib = np if is_numpy_namespace(xp) else _cupy()
        sparse = sp if lib is np else _cupyx_sparse()
        flat = lib.reshape(index, (-1,))
        indptr = lib.arange(0, n * d + 1, d, dtype=flat.dtype)
        ones = lib.ones(n * d, dtype=table.dtype)
        return sparse.csr_matrix((ones, flat, indptr), shape=(n, table.shape[0])) @ table
    rows = xp.take(table, xp.astype(xp.reshape(index, (-1,)), xp.int64), axis=0)
    return xp.sum(xp.reshape(rows, (n, d, -1)), axis=1)


def _cupy():
    import cupy

    return cupy


def sparse_onehot_nonzero(X, offsets, *, dtype):
    """One-hot encoding of the stored values of an integer-valued sparse ``X``.

    Stored value ``v`` in column ``j`` becomes a 1 at column ``offsets[j] + v``;
    implicit zeros are not encoded (callers account for category 0 from the
    row totals). A value whose column would reach the next feature's block (a
    category unseen in training) goes to the extra column ``offsets[-1] + j``,
    so the result has ``offsets[-1] + n_features`` columns and ``X.nnz``
    stored ones.
    """
    lib = _sparse_lib(X)
    sparse = sp if lib is np else _cupyx_sparse()
    X = X.tocsr()
    n_columns = int(offsets[-1])
    feature = X.indices.astype(lib.int64)
    cols = offsets[feature] + X.data.astype(lib.int64)
    cols = lib.where(cols < offsets[feature + 1], cols, n_columns + feature)
    data = lib.ones(cols.shape[0], dtype=dtype)
    shape = (X.shape[0], n_columns + X.shape[1])
    return sparse.csr_matrix((data, cols, X.indptr.copy()), shape=shape)


# --------------------------------------------------------------------------- #
# Choosing a device and moving host data to it (command line, comparisons)
# --------------------------------------------------------------------------- #
def gpu_array_like():
    """An empty cupy array on the current GPU, or None when no GPU works.

    A GPU "works" when cupy imports and a small computation on it succeeds
    (a machine with cupy installed but no driver gives None).
    """
    try:
        import cupy
        import cupyx.scipy.sparse  # noqa: F401  (lets is_sparse see cupyx matrices)

        like = cupy.empty(0, dtype=cupy.float64)
        float(cupy.ones(2).sum())
        return like
    except Exception:  # ImportError, CUDA errors: no usable GPU
        return None


def host_to_like(X, like):
    """A host numpy array or scipy.sparse matrix on the namespace/device of ``like``.

    ``like=None`` (or a numpy array) keeps ``X`` on the host; a cupy array
    moves dense ``X`` to a cupy array and sparse ``X`` to the matching
    ``cupyx.scipy.sparse`` format.
    """
    if like is None or isinstance(like, np.ndarray):
        return X
    if sp.issparse(X):
        import cupyx.scipy.sparse as csp

        fmt = X.format if X.format in ("csr", "csc") else "csr"
        return getattr(csp, f"{fmt}_matrix")(X.asformat(fmt))
    return to_namespace(X, array_api_compat.array_namespace(like), array_api_compat.device(like))


def synchronize(like):
    """Wait until the device of ``like`` has finished its queued work (timings)."""
    if like is None or isinstance(like, np.ndarray):
        return
    xp = array_api_compat.array_namespace(like)
    if is_cupy_namespace(xp):
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    elif is_torch_namespace(xp) and like.device.type == "cuda":
        import torch

        torch.cuda.synchronize(like.device)


def host_sparse(fmt, data, indices, indptr, shape):
    """A scipy.sparse CSR/CSC matrix from its arrays (files store these)."""
    if fmt not in ("csr", "csc"):
        msg = f"sparse format must be 'csr' or 'csc'; got {fmt!r}."
        raise ValueError(msg)
    return getattr(sp, f"{fmt}_matrix")((data, indices, indptr), shape=tuple(int(s) for s in shape))
