"""Checks of statistics that come from outside a fit (a model file).

A model's ``_check_statistics`` hook (``base.py``) describes its statistics
with these helpers: entries, shapes, dtypes and possible values; every error
names the entry. With ``values=False`` only the layout is checked (the arrays
may be stand-ins whose data was not read yet). A wrong type is a ValueError
too: the statistics are the content of a file, not arguments of a call.
"""

from __future__ import annotations

import numpy as np

from .._array.sparse_counts import is_sparse_counts

# The dtypes statistics are stored in, by kind: sums in float64, or float32
# on a device without float64 (``accumulation_dtype``), and int64 category
# counts. Never float16 (a sum of 65,505 ones overflows it) nor longdouble
# (no portable layout: a file holding it could not be saved again).
_DTYPES = {"f": (np.dtype(np.float32), np.dtype(np.float64)), "i": (np.dtype(np.int64),), "u": ()}


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
    """``a`` (statistics entry ``name``) is a numpy array of one of ``shapes``; returns ``a``.

    A shape is a tuple of lengths or None (any length). ``kinds`` are the
    dtype kinds allowed ("f", "iu"), each in the dtypes of ``_DTYPES``. With
    ``values``, the total must be finite (so the entries are, and the model's
    sums do not overflow), and the entries >= 0 if ``non_negative``. With
    ``sparse``, a canonical scipy CSC array (``sparse_counts.py``) is taken too.
    """
    kept_sparse = sparse and is_sparse_counts(a)
    if kept_sparse and (a.csc.format != "csc" or not a.csc.has_canonical_format):
        msg = f"statistics entry {name!r} is a sparse {a.csc.format} array; expected a canonical CSC array"
        raise ValueError(msg)
    if not kept_sparse and not isinstance(a, np.ndarray):
        msg = f"statistics entry {name!r} must be an array; got {type(a).__name__}"
        raise ValueError(msg)  # noqa: TRY004  (a file's content, see above)
    allowed = [dtype for kind in kinds for dtype in _DTYPES[kind]]
    if a.dtype.newbyteorder("=") not in allowed:
        msg = f"statistics entry {name!r} has dtype {a.dtype}; expected {' or '.join(map(str, allowed))}"
        raise ValueError(msg)
    fits = (len(a.shape) == len(s) and all(want in (None, n) for n, want in zip(a.shape, s)) for s in shapes)
    if not any(fits):
        expected = " or ".join(str(tuple("any" if n is None else n for n in shape)) for shape in shapes)
        msg = f"statistics entry {name!r} has shape {a.shape}; expected {expected}"
        raise ValueError(msg)
    if not values:
        return a
    stored = a.csc.data if kept_sparse else a
    with np.errstate(over="ignore", invalid="ignore"):
        total_finite = stored.dtype.kind != "f" or bool(np.isfinite(np.sum(stored)))
    if not total_finite and not np.isfinite(stored).all():
        msg = f"statistics entry {name!r} holds NaN or infinity"
        raise ValueError(msg)
    if not total_finite:
        msg = (
            f"statistics entry {name!r} sums to infinity in {stored.dtype} (values up to {np.abs(stored).max():g}): "
            "the totals the model divides by would overflow"
        )
        raise ValueError(msg)
    if non_negative and stored.size and stored.min() < 0:
        msg = f"statistics entry {name!r} holds a negative value ({stored.min():g}); it is a sum of non-negative weights"
        raise ValueError(msg)
    return a


def check_class_count(a, n_classes, *, values, name="class_count"):
    """The per-class weights: (n_classes,) floats, >= 0, with a positive total (one
    class may weigh 0: ``partial_fit`` declares every class before it sees them all)."""
    check_array(a, name, [(n_classes,)], values=values, non_negative=True)
    if values and not a.sum() > 0:
        msg = f"statistics entry {name!r} sums to {a.sum():g}; a fitted model has seen a positive total weight"
        raise ValueError(msg)
    return a
