"""Namespaces, devices and dtypes, and the one switch between host and device code.

The array layer is the only part of nbgpu that names array libraries. Model
code asks it for a namespace and calls only functions of the Array API
standard; ``cupyx`` is only looked at once ``cupy`` has been imported, so CPU
users pay nothing for it.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import types
from typing import Any

import array_api_compat
import array_api_compat.numpy  # to_namespace compares with it (compat loads it lazily)
import numpy as np
import scipy.sparse as sp
from array_api_compat import is_cupy_namespace, is_numpy_namespace, is_torch_namespace


# A CPU stand-in for the device library, registered by the test suite (its
# ``device_emulated`` backend); None in every product run.
_STAND_IN = None


def register_device_library(stand_in):
    """Serve ``stand_in``, a CPU stand-in of cupy and cupyx (None: none), for its own arrays.

    It has ``xp`` (its namespace), ``LIBRARY`` (what :func:`device_library`
    returns for ``xp``), ``DEVICE``, ``owns(x)`` and ``issparse(x)``.
    """
    global _STAND_IN
    _STAND_IN = stand_in


def _emulated_owns(x) -> bool:
    return _STAND_IN is not None and _STAND_IN.owns(x)


@functools.cache
def _cupy_library():
    import array_api_compat.cupy as xp
    import cupy
    import cupyx
    import cupyx.scipy.sparse
    import cupyx.scipy.special

    return types.SimpleNamespace(cupy=cupy, cupyx=cupyx, xp=xp, emulated=False)


def uses_device_library(xp) -> bool:
    """Whether ``xp`` is the namespace of the device library (cupy, or its CPU stand-in)."""
    return is_cupy_namespace(xp) or (_STAND_IN is not None and xp is _STAND_IN.xp)


def device_library(xp):
    """The one way device code reaches cupy and cupyx behind the device namespace ``xp``:
    an object with ``cupy``, ``cupyx`` (the modules, or the stand-in's) and ``xp``."""
    if _STAND_IN is not None and xp is _STAND_IN.xp:
        return _STAND_IN.LIBRARY
    if is_cupy_namespace(xp):
        return _cupy_library()
    msg = f"namespace {getattr(xp, '__name__', xp)!r} has no device library (cupy)"
    raise TypeError(msg)


def is_sparse(X) -> bool:
    """True for a scipy.sparse or (already imported) cupyx.scipy.sparse matrix."""
    if sp.issparse(X) or (_STAND_IN is not None and _STAND_IN.issparse(X)):
        return True
    # (A cupyx matrix exists only once its module is imported: looked up, never imported here.)
    mod = sys.modules.get("cupyx.scipy.sparse")
    return mod is not None and mod.issparse(X)


def is_dask_array(X) -> bool:
    """True for a Dask array (only looked for when Dask is already imported)."""
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(X, mod.Array)


def sparse_lib(X):
    """The dense library (numpy, or the device library's cupy) behind a sparse matrix."""
    if sp.issparse(X):
        return np
    if _emulated_owns(X):
        return _STAND_IN.cupy
    return _cupy_library().cupy


def is_host_array(x) -> bool:
    """True for a numpy array on the host (not an emulated device array)."""
    return isinstance(x, np.ndarray) and not _emulated_owns(x)


def is_array(x) -> bool:
    """True for an array of any Array API library (not lists, not sparse)."""
    return array_api_compat.is_array_api_obj(x) and not is_sparse(x)


def get_namespace(*arrays):
    """The Array API namespace shared by ``arrays`` (sparse: their dense library's; None ignored)."""
    arrays = [a for a in arrays if a is not None]
    dense = [sparse_lib(a).empty(0) if is_sparse(a) else a for a in arrays if not _emulated_owns(a)]
    if len(dense) == len(arrays):
        return array_api_compat.array_namespace(*dense)
    if any(is_array(a) for a in dense):
        msg = "Multiple namespaces for array inputs: the emulated device's and a host library's"
        raise TypeError(msg)
    return _STAND_IN.xp


def get_device(X):
    """The device of a dense array or of a sparse matrix's stored values."""
    if _emulated_owns(X):
        return _STAND_IN.DEVICE
    if is_sparse(X):
        return array_api_compat.device(X.data)
    return array_api_compat.device(X)


def has_sparse(xp) -> bool:
    """Whether ``xp`` has a sparse library this module drives (scipy.sparse, the device's cupyx)."""
    return on_host(xp) or uses_device_library(xp)


def accumulation_dtype(xp, device):
    """float64 where the device has it (not every GPU backend does): counts stay exact up to 2**53."""
    try:
        info = xp.__array_namespace_info__()
        has_float64 = "float64" in info.dtypes(device=device, kind="real floating")
    except Exception:  # a namespace without the inspection API
        has_float64 = True
    return xp.float64 if has_float64 else xp.float32


def score_dtype_name(dtype, *, xp):
    """"float32" for float32 and float16 inputs, else "float64": the name of the
    dtype of parameters and scores (:func:`result_dtype`) a fitted model records."""
    return "float32" if dtype in (xp.float32, getattr(xp, "float16", None)) else "float64"


def result_dtype(name, xp, device):
    """The float dtype of parameters and scores that ``name`` (:func:`score_dtype_name`) stands
    for: float32, or float64 where the device has it."""
    return xp.float32 if name == "float32" else accumulation_dtype(xp, device)


@dataclasses.dataclass(frozen=True)
class InputKind:
    """What one call's code paths need to know of its validated ``X``, asked once
    (``check_X``) and passed on, so that no layer asks again what ``X`` is."""

    xp: Any  #: the Array API namespace (a sparse matrix's: its dense library's)
    device: Any
    sparse: bool
    host: bool  #: takes the host code paths (:func:`on_host`)
    dtype: Any  #: of parameters and scores (:func:`result_dtype`)
    dtype_name: str  #: "float32" or "float64", what a fitted model records (:func:`score_dtype_name`)
    sums_dtype: Any  #: of statistics (:func:`accumulation_dtype`)


def input_kind(X, xp, *, sparse) -> InputKind:
    """The :class:`InputKind` of a 2-D array or sparse matrix ``X`` of namespace ``xp``."""
    device = get_device(X)
    name = score_dtype_name(X.dtype, xp=xp)
    sums = accumulation_dtype(xp, device)
    return InputKind(xp, device, sparse, on_host(xp), xp.float32 if name == "float32" else sums, name, sums)


def to_numpy(x):
    """A host numpy copy (or view) of any dense array."""
    if _emulated_owns(x):
        return x.get()
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
    if is_array(x) and get_namespace(x) is xp:
        return x if get_device(x) == device else array_api_compat.to_device(x, device)
    host = to_numpy(x) if is_array(x) else np.asarray(x)
    return xp.asarray(host, device=device)


def to_namespace_tree(value, xp, device):
    """Every array inside nested dicts/tuples/lists moved to ``xp`` on ``device``
    (sparse statistics, ``sparse_counts.py``, stay sparse only on the host)."""
    if callable(getattr(value, "moved", None)):  # a SparseCounts (it imports this module)
        return value.moved(xp, device)
    if is_array(value):
        if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
            return value  # string/object labels stay on the host
        return to_namespace(value, xp, device)
    if isinstance(value, dict):
        return {k: to_namespace_tree(v, xp, device) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_namespace_tree(v, xp, device) for v in value)
    return value


def first_array(tree):
    """The first numeric array in nested dicts/tuples/lists, or None."""
    if is_array(tree) and not (isinstance(tree, np.ndarray) and tree.dtype.kind not in "biuf"):
        return tree
    values = tree.values() if isinstance(tree, dict) else tree if isinstance(tree, (tuple, list)) else ()
    return next((found for v in values if (found := first_array(v)) is not None), None)


def on_host(xp) -> bool:
    """Whether arrays of ``xp`` take the host code paths: the one switch between host and device code.

    Host paths (numpy, scipy) split work over the CPU cores and read values back freely; device
    paths hand whole blocks to the library and keep synchronisations to a constant per call.
    """
    return is_numpy_namespace(xp)
