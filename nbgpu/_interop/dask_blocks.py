"""What every Dask fit shares: row blocks, the arguments cut to match them,
a tree of merge tasks over per-block results, and objects sent once.

``dask.py`` (fit, predict, score) and ``dask_em.py`` (SemiSupervisedNB's EM)
build their task graphs from these pieces. Dask itself is imported only
inside the functions that need it.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from .._array import sums
from .._array.namespace import first_array, get_device, get_namespace, is_dask_array, to_namespace_tree
from .._estimator.base import _BaseNB
from .._estimator.model_lock import lock_of

# A merge task holds its children's statistics at once: at most this many
# bytes of them (and at least two children, at most eight).
MERGE_BYTES = 256 * 2**20


def _split_every(n_classes, n_features):
    """Children per merge task: shallow trees for small statistics, pairs for wide ones."""
    # About three float64 classes × features arrays (Gaussian moments) per set.
    per_set = 3 * 8 * n_classes * n_features
    return int(min(8, max(2, MERGE_BYTES // max(per_set, 1))))


def _check_2d(X):
    if X.ndim != 2:
        msg = f"Expected a 2D Dask array for `X`, got {X.ndim}D array of shape {X.shape} instead."
        raise ValueError(msg)


def _rows_only(X):
    """``X`` with every column in one chunk, so that a block is a set of whole rows."""
    _check_2d(X)
    if X.numblocks[1] != 1:
        X = X.rechunk({1: -1})
    return X


def _sizes_known(sizes):
    """True unless a size is NaN (a Dask block whose size is not known yet)."""
    return not any(size != size for size in sizes)


def _known_row_chunks(X, name):
    chunks = X.chunks[0]
    if not _sizes_known(chunks):
        msg = (
            f"`{name}` has row blocks of unknown size; pass `y` (and `sample_weight`) "
            f"as Dask arrays with the same blocks, or call {name}.compute_chunk_sizes() first."
        )
        raise ValueError(msg)
    return chunks


def _row_pieces(values, X, name):
    """``values`` (labels, weights or None) cut into pieces matching X's row blocks: delayed
    pieces of a Dask array (rechunked where sizes are known), else cut on the client."""
    n_blocks = X.numblocks[0]
    if values is None or isinstance(values, numbers.Number):
        return [values] * n_blocks
    if is_dask_array(values):
        if values.ndim != 1:
            msg = f"`{name}` must be 1-D with one entry per row of X; got shape {values.shape}."
            raise ValueError(msg)
        if _sizes_known(X.chunks[0] + values.chunks[0]):
            if values.shape[0] != X.shape[0]:
                msg = f"`{name}` has {values.shape[0]} entries but X has {X.shape[0]} rows; they must match."
                raise ValueError(msg)
            values = values.rechunk((X.chunks[0],))
        elif values.numblocks[0] != n_blocks:
            msg = (
                f"`{name}` has {values.numblocks[0]} row blocks of unknown size but X has "
                f"{n_blocks}; give them the same blocks."
            )
            raise ValueError(msg)
        return list(values.to_delayed().ravel())
    host = values if hasattr(values, "shape") and not isinstance(values, list) else np.asarray(values)
    chunks = _known_row_chunks(X, "X")
    if len(host.shape) != 1 or host.shape[0] != X.shape[0]:
        msg = f"`{name}` must hold one entry per row of X ({X.shape[0]}); got shape {tuple(host.shape)}."
        raise ValueError(msg)
    bounds = np.cumsum((0, *chunks))
    return [host[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


# Merge tasks are module-level functions: they pickle by reference.
def _merge_children(template, children):
    """The merged statistics of several children (``None`` for empty blocks)."""
    present = [child for child in children if child is not None]
    return functools.reduce(lambda a, b: _merge_stats(template, a, b), present) if present else None


def _merge_stats(template, a, b):
    """``a`` and ``b`` merged by the model's ``_merge``, in the namespace and on the device of ``a``."""
    like = first_array(a)
    xp, device = get_namespace(like), get_device(like)
    return template._merge(a, to_namespace_tree(b, xp, device), xp=xp)


def _merge_tree(level, merge, template, fan_in):
    """The delayed per-block results ``level`` combined by ``merge(template, children)`` tasks
    of at most ``fan_in`` children each, level by level, as one (None for no blocks)."""
    while len(level) > 1:
        level = [merge(template, level[i : i + fan_in]) for i in range(0, len(level), fan_in)]
    return level[0] if level else None


def _shared(obj):
    """``obj`` as an argument of many tasks, sent to the cluster once: scattered to every
    worker under a distributed client (inside the graph it would travel once per compute),
    else one constant of the graph."""
    import dask
    from dask.base import get_scheduler

    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):  # no distributed, or no client running
        client = None
    if client is None or get_scheduler() != client.get:  # Dask's local schedulers
        return dask.delayed(obj, pure=True)
    return client.scatter(obj, broadcast=True, hash=False)


def _frozen(model):
    """``model`` as it is now, for a lazy graph: a shallow copy (its own ``__dict__``) with
    its parameters derived, so computing the graph later, after a refit or a ``partial_fit``
    of ``model``, scores the model of the call on every scheduler (``distributed`` pickles
    the model when the graph is sent, the local schedulers would read the live object).
    A refit, ``partial_fit`` or ``to_device`` replaces the attributes of ``model``, but a
    model that adds a batch into its running sums in place (one overriding
    ``_accumulate_onto``: the count models' ``feature_count``) would change statistics the copy
    still reads (weights made when first read, or a column at a time for sparse ``X``):
    those the copy gets copied, with the attributes that are they. Costs at most one
    copy of the statistics (k × d, or the stored entries of sparse ones)."""
    if not isinstance(model, _BaseNB):
        return model
    with lock_of(model).reading():  # one whole model: no update while it is copied
        model._derive_if_lazy()
        frozen = object.__new__(type(model))
        frozen.__dict__.update(model.__dict__)
        stats = model.__dict__["_stats"]
        if type(model)._accumulate_onto is _BaseNB._accumulate_onto:  # merges into new arrays
            return frozen
        copies = {}
        for key, value in stats.items():
            copies[id(value)] = sums.copy(value)
        frozen._stats = {key: copies[id(value)] for key, value in stats.items()}
        for name, value in model.__dict__.items():  # a derived attribute that is a statistic (feature_count_)
            if name != "_stats" and id(value) in copies:
                frozen.__dict__[name] = copies[id(value)]
    return frozen


def distinct_labels(y):
    """The sorted distinct labels of the Dask array ``y``, computed on the workers and checked as an
    in-memory ``y`` is (NaN, None, labels of two kinds): never a TypeError from the sort."""
    import dask.array as da

    from .._validation import check_label_types, check_y

    try:
        values = da.unique(y).compute()
    except TypeError as exc:  # labels that do not sort against each other: say which kinds
        kinds = y.map_blocks(lambda b: np.array(sorted({type(v).__name__ for v in b.tolist()}), dtype=object),
                             chunks=(np.nan,), dtype=object).compute()
        msg = f"`y` holds labels of the kinds {sorted(set(kinds.tolist()))}, which do not sort against each other ({exc})"
        raise ValueError(msg) from None
    check_label_types(values, "y")
    return check_y(values, values.shape[0])
