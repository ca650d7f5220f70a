"""Checks of statistics that come from outside a fit (a model file).

A model's ``_check_statistics`` hook (``base.py``) describes its statistics
with these helpers: entries, shapes, dtypes and possible values; every error
names the entry. With ``values=False`` only the layout is checked (the arrays
may be stand-ins whose data was not read yet). A wrong type is a ValueError
too: the statistics are the content of a file, not arguments of a call.
"""

from __future__ import annotations

import numpy as np

from .._array import sums

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
    ``sparse``, sums kept sparse (``sums.py``: a canonical scipy CSC array) are taken too.
    """
    kept_sparse = sparse and sums.is_sparse(a)
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


# How far two sums of the same weights, taken in different orders (or one a
# difference of sums: observed weights), may differ relative to their size:
# far above the rounding of sums of any length that fits in memory, far
# below any contradiction that changes a prediction.
_RTOL = {np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6}


def _rtol(*arrays):
    return max(_RTOL.get(np.dtype(a.dtype).newbyteorder("="), _RTOL[np.dtype(np.float32)]) for a in arrays)


def _first(bad):
    """The index of the first True entry of ``bad`` (a tuple of ints)."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))


def check_part_of(part, name, whole, whole_name, *, equal=False, what="weights of some of its rows"):
    """``part`` (statistics entry ``name``, host numpy) lies in [0, ``whole``] (``whole_name``, broadcast against it),
    or equals it with ``equal``, within a relative tolerance of ``whole``: sums of weights of some of a class's rows
    cannot be negative nor exceed its whole weight. ``values=True`` checks only (the arrays are finite)."""
    whole = np.broadcast_to(np.asarray(whole, dtype=np.float64), part.shape)
    tol = _rtol(part) * np.abs(whole)
    low = whole - tol if equal else -tol
    bad = (part < low) | (part > whole + tol)
    if bad.any():
        at = _first(bad)
        expected = f"{whole_name} ({whole[at]:g})" if equal else f"between 0 and {whole_name} ({whole[at]:g})"
        msg = f"statistics entry {name!r} holds {part[at]:g} at {list(at)}; expected {expected}: they are {what}"
        raise ValueError(msg)


def check_sum_of(total, name, terms, terms_name):
    """``total`` (statistics entry ``name``, broadcast) is the sum over the classes (axis 0) of ``terms``
    (``terms_name``), within a relative tolerance of the sum of the terms' sizes (they are summed in other orders)."""
    expected = np.sum(terms, axis=0)
    total, expected = np.broadcast_arrays(total, expected)
    with np.errstate(over="ignore", invalid="ignore"):  # products of finite statistics may overflow: not compared
        bad = np.abs(total - expected) > _rtol(terms) * np.sum(np.abs(terms), axis=0)
    bad &= np.isfinite(total) & np.isfinite(expected)
    if bad.any():
        at = _first(bad)
        msg = (
            f"statistics entry {name!r} is {total[at]:g} at {list(at)}; expected the sum of {terms_name!r} over the "
            f"classes, {expected[at]:g}: it is their total"
        )
        raise ValueError(msg)


def check_not_below(a, name, floor_scale, *, what):
    """Entries of ``a`` (statistics entry ``name``) are >= 0 up to a relative tolerance of ``floor_scale`` (the size of
    the sums they are computed from: rounding may leave a hair below 0, a negated entry is far below)."""
    with np.errstate(over="ignore"):  # an infinite scale admits any value: the finite total was checked
        tol = _rtol(a) * np.abs(np.broadcast_to(floor_scale, a.shape))
    bad = a < -tol
    if bad.any():
        at = _first(bad)
        msg = f"statistics entry {name!r} holds {a[at]:g} at {list(at)}; expected a value >= 0: it is {what}"
        raise ValueError(msg)


def check_smoothed_total(total, dtype, parameter, value, *, what):
    """Raise unless ``total`` (a float: a sum a model divides by, smoothed by hyper-parameter ``parameter`` of
    ``value``) is finite in ``dtype``: one that overflows makes every log-probability -inf, every prediction NaN."""
    with np.errstate(over="ignore"):
        finite = bool(np.isfinite(np.asarray(total, dtype=np.float64).astype(dtype)))
    if not finite:
        msg = (
            f"`{parameter}={value}` makes {what} overflow {np.dtype(dtype).name} (every log-probability would be "
            f"-inf, every prediction NaN); choose a smaller `{parameter}`"
        )
        raise ValueError(msg)


def check_prior_smoothing(model, class_count):
    """The smoothed class prior's total ``N + Kλ`` (``base.class_prior``) is finite."""
    smoothing = float(getattr(model, "prior_smoothing", 0.0) or 0.0)
    if smoothing > 0 and getattr(model, "fit_prior", True):  # else unused (a fixed prior takes no smoothing)
        total = float(np.sum(class_count, dtype=np.float64)) + class_count.shape[0] * smoothing
        check_smoothed_total(total, class_count.dtype, "prior_smoothing", f"{smoothing:g}", what="the class prior's total")
