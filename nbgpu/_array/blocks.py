"""The one block planner: how rows, nonzeros and columns are cut into blocks.

Every kernel that works in pieces asks here how big the pieces are. The
budgets are module attributes read at every call (never copied at import),
so a test or a user can change them for a run.
"""

from __future__ import annotations

import numpy as np

from .namespace import on_host
from .threads import n_threads, parallel_map

# Row or nonzero blocks are sized so their temporaries stay near this many bytes.
BLOCK_BYTES = 64 * 2**20

# A device block is this many times larger: each costs tens of kernel
# launches (microseconds each, whatever their size), and a 64 MiB block
# moves in tens of microseconds on a current GPU, so smaller blocks are
# bound by their launches (benchmarks/results/gpu-targets-*.json).
DEVICE_BLOCK_FACTOR = 16

# Host row blocks are sized to stay in cache (and small enough that BLAS
# runs each product on one thread).
HOST_BLOCK_BYTES = 4 * 2**20

# Below this many nonzeros a sparse kernel runs on one thread: a pool hop
# costs more than it saves.
PARALLEL_NNZ = 1 << 18


def block_bytes(xp=None):
    """The block budget where ``xp`` computes (None: the host)."""
    return BLOCK_BYTES if xp is None or on_host(xp) else BLOCK_BYTES * DEVICE_BLOCK_FACTOR


def row_blocks(n_rows, bytes_per_row, budget=None, *, min_blocks=1, xp=None):
    """``[(start, stop), ...]`` row ranges whose temporaries fit ``budget`` bytes.

    ``budget`` defaults to :func:`block_bytes` of ``xp``; ``min_blocks``
    cuts small inputs finer (e.g. one block per thread at least).
    """
    budget = block_bytes(xp) if budget is None else budget
    step = max(1, int(budget // max(bytes_per_row, 1)))
    step = max(1, min(step, -(-n_rows // max(min_blocks, 1))))
    return [(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]


def map_row_blocks(fn, n_rows, bytes_per_row, *, xp, host_budget=None):
    """``[fn(start, stop) for each row block]``: on all cores on the host.

    Host blocks hold about ``host_budget`` (default ``HOST_BLOCK_BYTES``) of
    temporaries and are mapped over the thread pool; device blocks about
    :func:`block_bytes`, one after the other (the device is already parallel).
    """
    if not on_host(xp):
        return [fn(a, b) for a, b in row_blocks(n_rows, bytes_per_row, xp=xp)]
    pieces = row_blocks(n_rows, bytes_per_row, host_budget or HOST_BLOCK_BYTES)
    return parallel_map(lambda ab: fn(*ab), pieces)


def host_fit_block_bytes():
    """Temporaries of one row block of a fit on the host: the blocks of all
    threads together stay within ``BLOCK_BYTES``."""
    return max(BLOCK_BYTES // n_threads(), 1)


def nnz_cuts(indptr, budget_nnz):
    """Major indices that cut a host ``indptr`` every ``budget_nnz`` stored values."""
    return np.searchsorted(indptr, np.arange(budget_nnz, int(indptr[-1]), budget_nnz))


def even_nnz_splits(indptr, parts):
    """Cut points that split a host ``indptr`` into ``parts`` ranges of equal nonzeros."""
    targets = np.linspace(0, int(indptr[-1]), parts + 1)[1:-1]
    cuts = np.searchsorted(indptr, targets, side="left")
    return np.unique(np.concatenate([[0], cuts, [indptr.shape[0] - 1]]))


def column_chunks(shape, itemsize):
    """Column slices of a 2-D host array of ``shape``, about ``HOST_BLOCK_BYTES``
    each (finalize's k × d passes go over the cores in such chunks)."""
    rows, columns = shape
    step = max(1024, HOST_BLOCK_BYTES // max(rows * itemsize, 1))
    return [slice(j, min(j + step, columns)) for j in range(0, columns, step)]


def round_robin(blocks, parts):
    """``blocks`` dealt into at most ``parts`` groups, one per thread."""
    parts = max(1, min(parts, len(blocks)))
    return [blocks[i::parts] for i in range(parts)]
