"""Input checks shared by every estimator.

Every error names the argument, what was expected and what was seen. A check of
the data's values is one reduction, in the input's own namespace and on its device.
"""

from __future__ import annotations

import functools
import math
import numbers
import threading
import warnings

import numpy as np

from ._array.paths import fast
from ._array.namespace import (
    get_device,
    get_namespace,
    input_kind,
    is_array,
    is_host_array,
    is_sparse,
    to_namespace,
    to_numpy,
)
from ._array.numerics import float_bits, float_warnings_off
from ._array.sparse import sparse_checked
from ._array import sums


def _as_array(X, name):
    """``X`` as an array (lists, pandas objects and the like as numpy); an object dtype
    of numbers as float64 (scikit-learn's rule)."""
    arr = X
    if not is_array(X):
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            msg = f"`{name}` could not be read as an array: {exc}"
            raise ValueError(msg) from exc
        if arr.dtype == object and callable(getattr(X, "to_numpy", None)):
            # pandas' nullable columns (Int64, Float64, boolean) hold pd.NA: as
            # float64 it is NaN, which the NaN checks (or missing="ignore") handle.
            try:
                return X.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                pass  # not numbers: said below
    if arr.dtype != object:
        return arr
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as exc:  # a dict among the values (TypeError), a word (ValueError)
        msg = f"`{name}` must hold numbers; a value of dtype object is not: {exc}"
        raise (TypeError if isinstance(exc, TypeError) else ValueError)(msg) from exc


def check_X(X, *, estimator, allow_nan=False, finite=True, sum_duplicates=True, fit=False):
    """``(X, kind)``: ``X`` as a 2-D float32/float64 array or CSR/CSC matrix, never written to, and its
    :class:`~nbgpu._array.namespace.InputKind` (what the call's later steps ask of it);
    taken as ``estimator``'s traits say (``_estimator/traits.py``: integers kept on the host for
    ``integer_input``; a sparse X's duplicates summed for ``acts_on_elements``, or for a ``fit``
    ``fit_acts_on_elements``, unless ``sum_duplicates=False``). ``allow_nan`` lets NaN through,
    ``finite=False`` leaves that check to the caller."""
    est = type(estimator).__name__
    sparse = is_sparse(X)
    if sparse:
        traits = estimator._traits
        elements = traits.acts_on_elements if not fit or traits.fit_acts_on_elements is None else traits.fit_acts_on_elements
        X = sparse_checked(X, elements=sum_duplicates and elements)
    else:
        X = _as_array(X, "X")
    code = getattr(X.dtype, "kind", None)
    if code == "c" or "complex" in str(X.dtype):
        msg = f"Complex data not supported: `X` has dtype {X.dtype}."
        raise ValueError(msg)
    if code is not None and code not in "biuf":
        msg = f"`X` must be numeric; got dtype {X.dtype}."
        raise ValueError(msg)
    if len(X.shape) != 2:
        msg = (
            f"Expected 2D array for `X`, got {len(X.shape)}D array of shape "
            f"{tuple(X.shape)} instead. Reshape your data either using "
            "X.reshape(-1, 1) if it has a single feature or X.reshape(1, -1) "
            "if it contains a single sample."
        )
        raise ValueError(msg)
    n, d = X.shape
    if n < 1:
        msg = f"`X` is empty: found array with 0 sample(s) (shape={tuple(X.shape)}) while a minimum of 1 is required by {est}."
        raise ValueError(msg)
    if d < 1:
        msg = f"`X` has no columns: found array with 0 feature(s) (shape={tuple(X.shape)}) while a minimum of 1 is required by {est}."
        raise ValueError(msg)
    xp = get_namespace(X)
    kind = input_kind(X, xp, sparse=sparse)
    keep = code in ("i", "u") and kind.host and estimator._traits.integer_input
    if X.dtype != kind.dtype and not keep:
        if sparse:
            # scipy's astype sums duplicates first (in the input itself): cast the values only.
            X = type(X)((X.data.astype(kind.dtype), X.indices, X.indptr), shape=X.shape)
        else:
            X = xp.astype(X, kind.dtype)
    if finite:
        check_finite(X, estimator=estimator, allow_nan=allow_nan)
    return X, kind


# --------------------------------------------------------------------------- #
# Checks of values on a device, made together (fast path "deferred_checks")
# --------------------------------------------------------------------------- #
_PENDING = threading.local()  # .asked: [(values, kind)] while checks_together runs its checks


def _deferred(values, kind):
    """True when a check of ``values`` for ``kind`` is left to :func:`checks_together` (device values only)."""
    asked = getattr(_PENDING, "asked", None)
    if asked is None or is_host_array(values):
        return False
    asked.append((values, kind))
    return True


def _looks_valid(values, kinds):
    """A 0-d bool array: True when ``values`` plainly pass the checks ``kinds``; False means "look closer".
    Finite and non-negative together are one max over the values' bits (as :func:`plainly_non_negative`);
    otherwise one reduction per check: a sum is finite without NaN and infinity, a minimum is >= 0 without
    a negative value or NaN, category codes are whole (``v % 1`` is 0, NaN for infinities) and >= 0."""
    xp = get_namespace(values)
    if math.prod(values.shape) == 0 or xp.isdtype(values.dtype, "bool"):
        return xp.asarray(True, device=values.device)
    flags = []
    integral = xp.isdtype(values.dtype, "integral")
    if integral or "category codes" in kinds:  # (whole codes are finite)
        kinds = kinds - {"finite", "no infinity"}
    bits = float_bits(values, xp=xp) if {"finite", "non-negative"} <= kinds else None
    if bits is not None:
        kinds = kinds - {"finite", "non-negative"}
        flags.append(xp.max(bits) < _INF_BITS[np.dtype(f"f{bits.dtype.itemsize}")])
    with float_warnings_off():  # an overflowing sum only sends the values to the exact check
        if "finite" in kinds:
            flags.append(xp.isfinite(xp.sum(values)))
        elif "no infinity" in kinds:
            flags.append(xp.logical_not(xp.any(xp.isinf(values))))
        if kinds & {"non-negative", "category codes"}:
            flags.append(xp.min(values) >= 0)
        if "category codes" in kinds and not integral:
            flags.append(xp.max(xp.remainder(values, xp.asarray(1.0, dtype=values.dtype, device=values.device))) == 0)
    return functools.reduce(xp.logical_and, flags)


def checks_together(check, *args, **kwargs):
    """Run ``check(*args, **kwargs)``, whose checks of device values (:func:`check_finite`,
    :func:`check_non_negative`, :func:`check_categories`) are made together: as few reductions
    as cover them, read back at once (one synchronisation). Only when they find something is
    ``check`` run again as it is, to raise its error (or to find that an overflowing sum or a
    -0.0 was nothing). Reference of fast path ``deferred_checks``: each check reads back."""
    if getattr(_PENDING, "asked", None) is not None or not fast("deferred_checks"):
        return check(*args, **kwargs)
    _PENDING.asked = asked = []
    try:
        check(*args, **kwargs)
    finally:
        _PENDING.asked = None
    groups = {}
    for values, kind in asked:
        groups.setdefault(id(values), (values, set()))[1].add(kind)
    if not groups:
        return None
    flags = [_looks_valid(values, kinds) for values, kinds in groups.values()]
    if not bool(functools.reduce(get_namespace(flags[0]).logical_and, flags)):  # the one synchronisation
        return check(*args, **kwargs)
    return None


def check_finite(X, *, estimator, name="X", allow_nan=False):
    """Raise on infinity in ``X`` (dense or sparse), and on NaN unless ``allow_nan``;
    the message starts as scikit-learn's does ("Input X contains NaN")."""
    est = type(estimator).__name__
    values = X.data if is_sparse(X) else X
    vxp = get_namespace(values)
    if vxp.isdtype(values.dtype, ("integral", "bool")):
        return  # always finite
    if _deferred(values, "no infinity" if allow_nan else "finite"):
        return
    if allow_nan and bool(vxp.any(vxp.isinf(values))):
        msg = f"Input {name} contains infinity: {est} needs finite values in `{name}`, or NaN for missing ones."
        raise ValueError(msg)
    if not allow_nan and not _finite_sum(values, vxp) and not bool(vxp.all(vxp.isfinite(values))):
        what = "NaN" if bool(vxp.any(vxp.isnan(values))) else "infinity"
        hint = " (pass missing='ignore' to treat NaN as missing)" if hasattr(estimator, "missing") else ""
        msg = f"Input {name} contains {what}: {est} needs finite values in `{name}`{hint}."
        raise ValueError(msg)


def _finite_sum(values, xp):
    """Fast path ``finite_by_sum``: True when the sum of ``values`` is finite, so every value is (one
    reduction, no array of flags); False leaves it to the exact check (a NaN, an infinity, or finite
    values whose sum overflows)."""
    if not fast("finite_by_sum"):
        return False
    with float_warnings_off():
        return bool(xp.isfinite(xp.sum(values)))


def _values_min(X):
    values = X.data if is_sparse(X) else X
    if not values.size:
        return 0.0
    vxp = get_namespace(values)
    low = float(vxp.min(values))  # one read back
    if math.isnan(low):  # a missing value must not hide a negative one: only then a second pass
        big = vxp.asarray(math.inf, dtype=values.dtype, device=values.device)
        low = float(vxp.min(vxp.where(vxp.isnan(values), big, values)))
    return low


def check_non_negative(X, *, estimator, what="counts or frequencies"):
    """Raise when ``X`` holds a negative value; the message starts with scikit-learn's."""
    if _deferred(X.data if is_sparse(X) else X, "non-negative"):
        return
    low = _values_min(X)
    if low < 0 and is_sparse(X) and not X.has_canonical_format:
        # The parts of a duplicate entry may be negative where their sum is not.
        low = _values_min(sparse_checked(X, elements=True))
    if low < 0:
        msg = (
            f"Negative values in data passed to {type(estimator).__name__} (input X): "
            f"`X` must hold {what} >= 0; saw a minimum of {low:g}."
        )
        raise ValueError(msg)


# Bit patterns of +infinity: a float's bits read as an unsigned integer are
# below it exactly when the sign bit is clear and the value is finite.
_INF_BITS = {np.dtype(np.float16): 0x7C00, np.dtype(np.float32): 0x7F800000, np.dtype(np.float64): 0x7FF0000000000000}


def plainly_non_negative(X):
    """True when one read of host ``X``'s values shows all finite and >= 0 (counts);
    False means "look closer" (-0.0 included), not "invalid"."""
    values = X.data if is_sparse(X) else X
    if not isinstance(values, np.ndarray):
        return False
    if values.size == 0 or values.dtype.kind in "ub":
        return True
    if values.dtype.kind == "i":
        return int(values.min()) >= 0
    bits = _INF_BITS.get(values.dtype)
    return bits is not None and int(values.view(f"u{values.dtype.itemsize}").max()) < bits


def check_categories(X, *, estimator):
    """Raise unless ``X`` holds non-negative whole numbers (category codes)."""
    values = X.data if is_sparse(X) else X
    if _deferred(values, "category codes"):
        return
    vxp = get_namespace(values)
    low, fractional = -math.inf, False  # integers: whole numbers, checked for sign below
    if values.size and not vxp.isdtype(values.dtype, ("integral", "bool")):
        # The smallest value and whether any has a fraction (v % 1 > 0; NaN, a
        # missing value, and infinities compare False), read back together: one sync.
        one = vxp.asarray(1.0, dtype=values.dtype, device=values.device)
        with float_warnings_off():  # (inf % 1 is NaN)
            fraction = vxp.any(vxp.remainder(values, one) > 0)
        facts = vxp.stack([vxp.min(values), vxp.astype(fraction, values.dtype)])
        low, fractional = to_numpy(facts).tolist()
    if not low >= 0:  # a negative value, or NaN hiding one: the full check says which
        check_non_negative(X, estimator=estimator, what="category codes")
    if fractional:
        msg = (
            f"`X` passed to {type(estimator).__name__} must hold category "
            "codes 0, 1, 2, ... (whole numbers); it holds non-integer values. "
            "Encode categories with sklearn.preprocessing.OrdinalEncoder."
        )
        raise ValueError(msg)


def check_n_features(estimator, n_features):
    """Raise unless ``n_features`` is the fitted number of features (scikit-learn's message)."""
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and n_features != expected:
        msg = f"X has {n_features} features, but {type(estimator).__name__} is expecting {expected} features as input."
        raise ValueError(msg)


def _float_arrays(stats, skip=()):
    """The floating-point arrays of nested statistics, but those under the dict keys ``skip``."""
    if isinstance(stats, dict):
        stats = [value for key, value in stats.items() if key not in skip]
    if isinstance(stats, (list, tuple, type({}.values()))):
        for item in stats:
            yield from _float_arrays(item, skip)
    elif is_array(stats):
        xp = get_namespace(stats)
        if xp.isdtype(stats.dtype, "real floating"):
            yield stats, xp
    elif sums.is_sparse(stats):
        yield from _float_arrays(sums.finiteness_witness(stats), skip)


def _largest_magnitude(values):
    values = values.data if is_sparse(values) else values
    if not values.size:
        return 0.0
    xp = get_namespace(values)
    magnitude = xp.abs(values)
    return float(xp.max(xp.where(xp.isnan(magnitude), xp.zeros_like(magnitude), magnitude)))


def check_statistics_finite(stats, *, estimator, X, sample_weight=None):
    """Raise unless the statistics a fit gathered from ``X`` are finite, and their totals: extreme inputs
    overflow float64 in the sums. A float array with a finite sum has finite entries: one reduction per
    array, one sync for all. Raw data a model keeps (trait ``raw_statistics``, NaN if missing) is not a sum."""
    with float_warnings_off():  # an overflowing total is what is looked for
        flags = [xp.isfinite(xp.sum(a)) for a, xp in _float_arrays(stats, estimator._traits.raw_statistics)]
        if not flags or bool(get_namespace(flags[0]).all(get_namespace(flags[0]).stack(flags))):
            return
    seen = f"`X` holds values up to {_largest_magnitude(X):.3g} in magnitude"
    scale = "rescale `X` (e.g. with sklearn.preprocessing.StandardScaler or MaxAbsScaler)"
    if sample_weight is not None:
        seen += f" and `sample_weight` weights up to {_largest_magnitude(sample_weight):.3g}"
        scale += " or scale `sample_weight` down (only the weights' ratios matter)"
    msg = (
        f"{type(estimator).__name__} cannot be fitted on this data: its statistics (sums over the "
        f"rows) overflow float64, so its predictions would not be numbers. {seen}; {scale}."
    )
    raise ValueError(msg)


def check_y(y, n_samples):
    """Validate target labels; return them as a 1-D array: numeric device arrays
    (torch, cupy, ...) stay in their namespace, anything else becomes numpy."""
    if y is None:
        msg = "This classifier requires y to be passed, but the target y is None: `y` needs one label per row of X."
        raise ValueError(msg)
    if is_sparse(y):
        msg = "`y` must be a dense 1-D array of labels; got a sparse matrix."
        raise ValueError(msg)
    if not is_array(y):
        y = np.asarray(y)
    check_label_types(y, "y")
    shape = tuple(y.shape)
    if len(shape) == 2 and shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning  # scikit-learn's own warning, as its models give

        msg = (
            "A column-vector y was passed when a 1d array was expected. Please "
            "change the shape of y to (n_samples,), for example using ravel()."
        )
        warnings.warn(msg, DataConversionWarning, stacklevel=3)
        y = get_namespace(y).reshape(y, (-1,))
    elif len(shape) != 1:
        msg = f"`y` must be 1-D with one label per row of X; got shape {shape}."
        raise ValueError(msg)
    if y.shape[0] != n_samples:
        msg = (
            f"Found input variables with inconsistent numbers of samples: [{n_samples}, {y.shape[0]}]; "
            f"`y` has {y.shape[0]} labels but `X` has {n_samples} rows; they must match."
        )
        raise ValueError(msg)
    if is_host_array(y):
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            msg = "`y` contains NaN or infinity; labels must be finite."
            raise ValueError(msg)
        # A 1-D array of integers or strings is always binary or multiclass:
        # skip the scan for its type (a unique pass, slow on strings).
        if y.dtype.kind not in "iubUS":
            from sklearn.utils.multiclass import type_of_target  # loaded only for labels that need it

            target = type_of_target(y, input_name="y")
            if target not in ("binary", "multiclass"):
                msg = (
                    f"Unknown label type: {target}. `y` must hold class labels "
                    "(integers, strings, ...), not continuous values or a label matrix."
                )
                raise ValueError(msg)
    else:
        xp = get_namespace(y)
        if xp.isdtype(y.dtype, "real floating") and not bool(xp.all(xp.isfinite(y) & (y == xp.round(y)))):
            msg = "Unknown label type: continuous. `y` must hold class labels, not continuous values."
            raise ValueError(msg)
    return y


def _label_kind(kind):
    """"string", "number", "None" or the type's name, for a label's type."""
    if issubclass(kind, str):
        return "string"
    if kind is type(None):
        return "None"
    if issubclass(kind, numbers.Number):
        return "number"
    return kind.__name__


def check_label_types(labels, name):
    """Raise unless the labels of an object array are all strings or all
    numbers (they must sort: the classes are kept sorted)."""
    if not isinstance(labels, np.ndarray) or labels.dtype != object:
        return
    values = labels.ravel().tolist()
    # One pass in C over the labels' types; the kinds are few.
    kinds = {_label_kind(kind) for kind in set(map(type, values))}
    if len(kinds) <= 1 and kinds <= {"string", "number"}:
        return
    # The error path looks at values: a missing label (pandas' NaN) is named.
    kinds = {"NaN" if isinstance(v, float) and v != v else _label_kind(type(v)) for v in values}
    seen = ", ".join(sorted(kinds))
    mix = "Mix of label input types (string and number): " if {"string", "number"} <= kinds else ""
    missing = " (None and NaN are not labels)" if kinds & {"None", "NaN"} else ""
    msg = f"{mix}`{name}` holds labels of the kinds {seen}; labels must be all strings or all numbers{missing}."
    raise ValueError(msg)


def _small_codes_bound(*arrays):
    """``1 + max`` when every array is a non-empty numpy integer array of values in ``[0, max(4 n, 1024))``
    (``n`` the largest size), else None: such labels are counted or looked up in a table, one linear pass."""
    if not all(is_host_array(a) and np.can_cast(a.dtype, np.intp) and a.dtype.kind in "iu" and a.size for a in arrays):
        return None
    if min(int(a.min()) for a in arrays) < 0:
        return None
    top = max(int(a.max()) for a in arrays)
    return top + 1 if top < max(4 * max(a.size for a in arrays), 1024) else None


def unique_labels(y, name="y"):
    """Sorted distinct labels of ``y`` (the argument ``name``) in its namespace."""
    if _small_codes_bound(y) is not None:
        return np.flatnonzero(np.bincount(y)).astype(y.dtype)
    if is_host_array(y) and y.dtype.kind in "US" and y.ndim == 1:
        # A set of Python strings (at most 65,536 alive at once) takes half the time of np.unique;
        # Python orders str by code point and bytes bytewise, as numpy does.
        seen = set()
        step = 1 << 16
        for start in range(0, y.shape[0], step):
            seen.update(y[start : start + step].tolist())
        return np.array(sorted(seen), dtype=y.dtype)
    if is_host_array(y):
        check_label_types(y, name)
        try:
            return np.unique(y)
        except TypeError as exc:  # labels that do not sort against each other
            msg = f"`{name}` holds labels that cannot be sorted against each other: {exc}"
            raise ValueError(msg) from exc
    return get_namespace(y).unique_values(y)


def check_classes(classes):
    """Validate the ``classes`` argument of ``partial_fit``: sorted distinct labels."""
    if not is_array(classes):
        classes = np.asarray(classes)
    if len(classes.shape) != 1 or classes.shape[0] < 1:
        msg = f"`classes` must be a non-empty 1-D array of labels; got shape {tuple(classes.shape)}."
        raise ValueError(msg)
    xp = get_namespace(classes)
    if xp.isdtype(classes.dtype, "real floating") and not bool(xp.all(xp.isfinite(classes))):
        raise ValueError("`classes` contains NaN or infinity; labels are finite numbers or strings.")
    uniq = unique_labels(classes, "classes")
    if uniq.shape[0] != classes.shape[0]:
        msg = f"`classes` must not repeat a label; got {classes.shape[0]} entries but {uniq.shape[0]} distinct labels."
        raise ValueError(msg)
    return uniq


def check_classes_unchanged(classes, fitted):
    """Raise unless ``classes`` (a later ``partial_fit`` argument) equals the fitted ``classes_``."""
    try:
        same, why = np.array_equal(to_numpy(check_classes(classes)), to_numpy(fitted)), ""
    except ValueError as exc:  # e.g. a repeated label: not the classes of the model either
        same, why = False, f" ({exc})"
    if not same:
        shown = (to_numpy(classes) if is_array(classes) else np.asarray(classes)).tolist()
        # scikit-learn's words ("on last call"): the classes never change after the first.
        msg = (
            f"`classes={shown}` is not the same as on last call to partial_fit, "
            f"was: {to_numpy(fitted).tolist()} (fixed by the first call){why}."
        )
        raise ValueError(msg)


def _raise_unknown_labels(unknown, classes):
    """Raise, led by scikit-learn's words, for labels not in ``classes`` (lists cut short)."""
    msg = (
        "The target label(s) in y do not exist in the initial classes: "
        f"`y` contains label(s) {unknown[:10].tolist()} that are not in the classes "
        f"{classes.tolist()[:20]} fixed by the first call to partial_fit (or by `classes`)."
    )
    raise ValueError(msg)


def encode_labels(y, classes, *, xp, device):
    """Class index of every label, as an int64 array of ``xp`` on ``device``; raises
    if a label is not one of ``classes`` (dropping those rows would lose data)."""
    # Labels on a device are encoded there (numeric classes are moved to them):
    # no round trip of the labels through the host.
    if is_host_array(y) or (is_host_array(classes) and classes.dtype.kind not in "biuf"):
        yh, ch = to_numpy(y), to_numpy(classes)
        bound = _small_codes_bound(yh, ch)
        if bound is not None:
            # Label -> class index through a table; -1 marks a label not in classes.
            table = np.full(bound, -1, dtype=np.int64)
            table[ch] = np.arange(ch.shape[0])
            clipped = np.take(table, yh)
            bad = clipped < 0
        else:
            try:
                codes = np.searchsorted(ch, yh)
            except TypeError as exc:
                msg = f"labels in `y` (dtype {yh.dtype}) cannot be compared with `classes_` (dtype {ch.dtype})."
                raise ValueError(msg) from exc
            clipped = np.minimum(codes, ch.shape[0] - 1)
            bad = ch[clipped] != yh
        if np.any(bad):
            _raise_unknown_labels(np.unique(yh[bad]), ch)
        return xp.asarray(clipped.astype(np.int64, copy=False), device=device)
    yxp = get_namespace(y)
    classes = yxp.asarray(classes, device=get_device(y)) if get_namespace(classes) is not yxp else classes
    codes = yxp.searchsorted(classes, y)
    # searchsorted gives 0..n: n (a label past the last class) becomes n - 1,
    # by arithmetic (compat's clip for cupy is a masked assignment: syncs).
    clipped = codes - yxp.astype(codes >= classes.shape[0], codes.dtype)
    bad = yxp.take(classes, clipped) != y
    if bool(yxp.any(bad)):
        _raise_unknown_labels(np.unique(to_numpy(y)[to_numpy(bad)]), to_numpy(classes))
    codes = yxp.astype(clipped, yxp.int64)
    return codes if yxp is xp else xp.asarray(to_numpy(codes), device=device)


def check_sample_weight(sample_weight, n_samples, *, xp, device, dtype, any_positive=True):
    """Validate ``sample_weight``; return it as ``dtype`` on ``device`` (or None).
    ``any_positive=False`` lets every weight be zero (one block of the data, whose caller checks the whole)."""
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        sw = xp.full((n_samples,), float(sample_weight), dtype=dtype, device=device)
    else:
        sw = sample_weight if is_array(sample_weight) else _as_array(sample_weight, "sample_weight")
        if len(sw.shape) != 1 or sw.shape[0] != n_samples:
            msg = (
                f"`sample_weight` must have shape ({n_samples},), one weight per "
                f"row of X; got shape {tuple(sw.shape)}."
            )
            raise ValueError(msg)
        sw = xp.astype(to_namespace(sw, xp, device), dtype)
    if not bool(xp.all(xp.isfinite(sw))):
        msg = "`sample_weight` contains NaN or infinity; weights must be finite."
        raise ValueError(msg)
    if bool(xp.any(sw < 0)):
        msg = f"`sample_weight` must be non-negative; saw a minimum of {float(xp.min(sw)):g}."
        raise ValueError(msg)
    if any_positive and not bool(xp.any(sw > 0)):
        msg = "`sample_weight` must contain at least one non-zero weight; all are zero."
        raise ValueError(msg)
    return sw


def check_prior(prior, n_classes, *, name):
    """Validate a vector of class probabilities; return float64 numpy or None."""
    if prior is None:
        return None
    p = np.asarray(to_numpy(prior) if is_array(prior) else prior, dtype=np.float64)
    # Each message is led by scikit-learn's words for the same error.
    if p.ndim != 1 or p.shape[0] != n_classes:
        msg = (
            "Number of priors must match number of classes: "
            f"`{name}` must have one probability per class ({n_classes}); got shape {p.shape}."
        )
        raise ValueError(msg)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        lead = "Priors must be non-negative: " if np.all(np.isfinite(p)) else ""
        msg = f"{lead}`{name}` must hold non-negative finite probabilities; got {p.tolist()}."
        raise ValueError(msg)
    if not np.isclose(p.sum(), 1.0):
        msg = f"The sum of the priors should be 1: `{name}` must sum to 1; its values {p.tolist()} sum to {p.sum():.6g}."
        raise ValueError(msg)
    return p


ALPHA_LOWER_BOUND = 1e-10


def check_alpha(alpha, n_features, *, force_alpha, warn=True):
    """Validate the smoothing ``alpha`` (scalar or one per feature); float64 numpy.
    Below 1e-10 without ``force_alpha`` it is raised to 1e-10, warning if ``warn``."""
    a = np.asarray(to_numpy(alpha) if is_array(alpha) else alpha, dtype=np.float64)
    if a.ndim > 1 or (a.ndim == 1 and a.shape[0] != n_features):
        msg = f"`alpha` must be a scalar or have one value per feature ({n_features}); got shape {a.shape}."
        raise ValueError(msg)
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        # scikit-learn's words lead (it too accepts 0, see force_alpha).
        msg = f"All values in alpha must be greater than 0 (or 0 itself): `alpha` must be finite and >= 0; saw a minimum of {np.min(a):g}."
        raise ValueError(msg)
    if np.min(a) < ALPHA_LOWER_BOUND and not force_alpha:
        if warn:
            msg = (
                f"alpha too small will result in numeric errors, setting alpha = "
                f"{ALPHA_LOWER_BOUND:.1e}. Use `force_alpha=True` to keep alpha unchanged."
            )
            warnings.warn(msg, UserWarning, stacklevel=3)
        a = np.maximum(a, ALPHA_LOWER_BOUND)
    return a


def check_loss_matrix(loss, n_classes):
    """Validate a k × k matrix of decision costs (``[i, j]``: deciding class ``i``
    when the truth is class ``j``); return float64 numpy or None."""
    if loss is None:
        return None
    try:
        m = np.asarray(to_numpy(loss) if is_array(loss) else loss, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        msg = f"`loss_matrix` must be a numeric (n_classes, n_classes) array: {exc}"
        raise ValueError(msg) from exc
    if m.shape != (n_classes, n_classes):
        msg = (
            f"`loss_matrix` must have shape ({n_classes}, {n_classes}), one row and "
            f"one column per class of `classes_`; got shape {m.shape}."
        )
        raise ValueError(msg)
    if not np.all(np.isfinite(m)):
        msg = "`loss_matrix` must hold finite costs; it contains NaN or infinity."
        raise ValueError(msg)
    if np.any(m < 0):
        msg = f"`loss_matrix` must hold non-negative costs; saw a minimum of {m.min():g}."
        raise ValueError(msg)
    return m
