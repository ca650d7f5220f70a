"""Checks of statistics that come from outside a fit (a model file).

A model's ``_check_statistics`` hook (see ``base.py``) describes its
statistics with these helpers: which entries, of which shapes and dtypes,
and which values are possible. Every error names the entry. With
``values=False`` only the layout is checked: the arrays may then be
stand-ins of the right shape and dtype whose data was not read yet.

They raise ValueError whatever is wrong, a wrong type included: the
statistics are the content of a file, not arguments of a call.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

_FINITE_BLOCK = 2**20  # elements per pass of the finiteness check: bounded temporaries


def check_keys(stats, required, optional=(), *, name="statistics"):
    """``stats`` is a dict with every key of ``required`` and others only
    from ``optional`` (any others if ``optional`` is None)."""
    if not isinstance(stats, dict):
        msg = f"{name} must be a dict of arrays; got {type(stats).__name__}"
        raise ValueError(msg)  # noqa: TRY004  (a file's content, see above)
    keys = set(stats)
    allowed = keys if optional is None else set(required) | set(optional)
    if not set(required) <= keys <= allowed:
        msg = f"{name} have entries {sorted(map(str, keys))}; expected {sorted(required)}" + (
            f" and optionally {sorted(optional)}" if optional else ""
        )
        raise ValueError(msg)


def check_tuple(value, length, name):
    """``value`` is a tuple of ``length`` entries (e.g. a Gaussian's (count, mean, M2))."""
    if not isinstance(value, tuple) or len(value) != length:
        msg = f"statistics entry {name!r} must be a tuple of {length} arrays"
        raise ValueError(msg)
    return value


def check_array(a, name, shapes, *, values, kinds="f", non_negative=False, sparse=False):
    """``a`` (statistics entry ``name``) is a numpy array of one of ``shapes``.

    A shape is a tuple whose entries are lengths or None (any length).
    ``kinds`` are the numpy dtype kinds allowed ("f": floating, "iu":
    integers). With ``values``, the entries must be finite, and >= 0 if
    ``non_negative``. With ``sparse``, a canonical scipy CSC array is taken
    too (``sparse_counts.py``), its stored values checked. Returns ``a``.
    """
    kept_sparse = sparse and sp.issparse(a)
    if kept_sparse and (a.format != "csc" or not a.has_canonical_format):
        msg = f"statistics entry {name!r} is a sparse {a.format} array; expected a canonical CSC array"
        raise ValueError(msg)
    if not kept_sparse and not isinstance(a, np.ndarray):
        msg = f"statistics entry {name!r} must be an array; got {type(a).__name__}"
        raise ValueError(msg)  # noqa: TRY004  (a file's content, see above)
    if a.dtype.kind not in kinds:
        msg = f"statistics entry {name!r} has dtype {a.dtype}; expected a dtype of kind {kinds!r}"
        raise ValueError(msg)
    if not any(_fits(a.shape, shape) for shape in shapes):
        expected = " or ".join(str(tuple("any" if n is None else n for n in shape)) for shape in shapes)
        msg = f"statistics entry {name!r} has shape {a.shape}; expected {expected}"
        raise ValueError(msg)
    if values:
        stored = a.data if kept_sparse else a
        if stored.dtype.kind == "f" and not _all_finite(stored):
            msg = f"statistics entry {name!r} holds NaN or infinity"
            raise ValueError(msg)
        if non_negative and stored.size and stored.min() < 0:
            msg = f"statistics entry {name!r} holds a negative value ({stored.min():g}); it is a sum of non-negative weights"
            raise ValueError(msg)
    return a


def check_class_count(a, n_classes, *, values, name="class_count"):
    """The per-class weights: (n_classes,) floats, >= 0, with a positive total.

    A single class may have weight 0 (``partial_fit`` declares every class
    before it sees them all), but not all of them: ``fit`` refuses data of
    total weight 0.
    """
    check_array(a, name, [(n_classes,)], values=values, non_negative=True)
    if values and not a.sum() > 0:
        msg = f"statistics entry {name!r} sums to {a.sum():g}; a fitted model has seen a positive total weight"
        raise ValueError(msg)
    return a


def _fits(shape, pattern):
    return len(shape) == len(pattern) and all(p is None or n == p for n, p in zip(shape, pattern))


def _all_finite(a):
    flat = a.reshape(-1)
    return all(np.isfinite(flat[i : i + _FINITE_BLOCK]).all() for i in range(0, flat.shape[0], _FINITE_BLOCK))
