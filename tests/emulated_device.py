"""A CPU stand-in for cupy and cupyx: nbgpu's device code paths, run without a GPU.

A test-suite module: nbgpu does not ship it and no product module names it.
Importing it registers it with the array layer
(:func:`nbgpu._array.namespace.register_device_library`), whose
:func:`~nbgpu._array.namespace.device_library` then serves :data:`LIBRARY`
for its arrays as it serves cupy and cupyx for cupy's (the
``device_emulated`` test backend). numpy and scipy.sparse compute; the
stand-in adds the rules of cupy that a host library does not have, so that
code which would break on a GPU breaks here:

- its arrays (:class:`DeviceArray`) are not numpy arrays (``isinstance(x,
  np.ndarray)`` is False) and refuse implicit conversion: ``np.asarray``,
  ``np.array`` and ``__array__`` raise cupy's TypeError; ``.get()`` (or
  ``cupy.asnumpy``) gives the host array. They form a namespace of their own
  (:data:`xp`): a host numpy array as an operand is a TypeError (cupy's
  "Unsupported type"), so is ``operator.index`` of one, an element is a 0-d
  array, and only the ndarray methods and attributes cupy has exist;
  ``cupy.asarray`` and ``xp.asarray`` copy host data (an upload);
- :data:`xp` runs array_api_compat's generic implementations bound to the
  emulated library as ``array_api_compat.cupy`` binds them to cupy (e.g.
  ``clip`` is a masked assignment, two synchronisations per bound, as on
  cupy); the functions compat writes for cupy alone (``asarray``,
  ``astype``, ``count_nonzero``...) are compat's numpy versions;
- every point at which cupy waits for the device is a synchronisation:
  ``bool``, ``float``, ``int``, ``.item()``, ``.get()``, boolean-mask
  indexing (reading and assigning), ``nonzero``/``unique``/``compress``, and
  the cupyx operations that read device values back as cupy 14.2's sources
  do (the ``(data, indices, indptr)`` constructor reads both ends of
  ``indptr`` and leaves the canonical flag unknown, ``max(axis=...)``
  compresses its result twice, an unknown canonical flag is computed).
  :func:`count_syncs` counts them by nbgpu line;
- sparse matrices have only the part of cupyx's API that nbgpu uses, store
  what cupyx stores (bool or float values, int32 indices where they fit),
  cache their canonical-format flag as cupyx does, and note every dense
  operand cupyx would copy to column-major order (:func:`count_syncs` too);
- only the names defined here exist; a test checks each against the
  installed cupy (``tests/test_cupy_api.py``).

What it still does not model: timing, memory and its exhaustion, races
between CUDA streams (streams here only log their events; work is done when
called), kernels that cupy would compile (none are checked), more than one
device, ``__cuda_array_interface__``/DLPack exchange with other libraries,
numpy's dtype promotion where cupy's differs (numpy computes here), the
results of ``max(axis=...)`` (cupyx returns a COO matrix, here a CSR one),
cuSPARSE's own choices of algorithm, and the array_api_compat.cupy functions
written for cupy alone (compat's numpy versions run instead).
"""

from __future__ import annotations

import collections
import contextlib
import operator
import os
import sys
import threading
import types
import warnings
import weakref

import array_api_compat.numpy as _compat_numpy
import numpy as np
import scipy.sparse as sp
import scipy.special
from array_api_compat._internal import get_xp
from array_api_compat.common import _aliases as _compat_aliases

import nbgpu
from nbgpu._array import namespace as _namespace

# --------------------------------------------------------------------------- #
# Synchronisations
# --------------------------------------------------------------------------- #
_PACKAGE = os.path.dirname(os.path.abspath(nbgpu.__file__))
_THIS = os.path.abspath(__file__)
_LOGS = []
_LOCK = threading.Lock()


class SyncLog:
    """What a :func:`count_syncs` block saw: synchronisations by nbgpu line,
    uploads of host data by nbgpu line (cupy copies pageable host memory
    with a blocking copy, which waits for the device too), and the bytes of
    dense operands a sparse product copied to column-major."""

    def __init__(self):
        self.sites = collections.Counter()
        self.uploads = collections.Counter()
        self.fortran_copies = []

    @property
    def total(self):
        return sum(self.sites.values())

    def __repr__(self):
        return (
            f"SyncLog({self.total} syncs: {dict(self.sites.most_common())}; "
            f"uploads: {dict(self.uploads.most_common())})"
        )


@contextlib.contextmanager
def count_syncs():
    """Count the synchronisations (and column-major copies) inside the block."""
    log = SyncLog()
    with _LOCK:
        _LOGS.append(log)
    try:
        yield log
    finally:
        with _LOCK:
            _LOGS.remove(log)


def _caller():
    """``file:line`` of the innermost nbgpu frame (array_api_compat's and
    this module's frames skipped)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if name != _THIS and name.startswith(_PACKAGE):
            return f"{os.path.relpath(name, _PACKAGE)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<outside nbgpu>"


def _sync(what, times=1):
    if _LOGS:
        site = f"{_caller()} {what}"
        with _LOCK:
            for log in _LOGS:
                log.sites[site] += times


def _upload():
    if _LOGS:
        site = _caller()
        with _LOCK:
            for log in _LOGS:
                log.uploads[site] += 1


def _fortran_copy(nbytes):
    if _LOGS:
        with _LOCK:
            for log in _LOGS:
                log.fortran_copies.append(nbytes)


# --------------------------------------------------------------------------- #
# The device and its arrays
# --------------------------------------------------------------------------- #
class Device:
    """The one emulated GPU (``cupy.cuda.Device``)."""

    id = 0

    def __init__(self, device=None):
        if device not in (None, 0) and not isinstance(device, Device):
            msg = f"the emulated device library has one device (0); got {device!r}"
            raise ValueError(msg)

    def __eq__(self, other):
        return isinstance(other, Device)

    def __hash__(self):
        return hash(Device)

    def __repr__(self):
        return "<CUDA Device 0 (emulated)>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        _sync("Device.synchronize()")


DEVICE = Device()

_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."
)


def _host(a):
    """The numpy array behind a device array (anything else as it is)."""
    return a._a if isinstance(a, DeviceArray) else a


def _refuse_host(values, where):
    for v in values:
        if isinstance(v, np.ndarray):
            msg = f"Unsupported type {np.ndarray} (a host array as an operand of {where} on the device)"
            raise TypeError(msg)
        if isinstance(v, (list, tuple)):
            _refuse_host(v, where)


def _wrap(result):
    """numpy results as device arrays (scalars as 0-d arrays, as cupy returns)."""
    if isinstance(result, np.ndarray):
        return DeviceArray(result)
    if isinstance(result, np.generic):
        return DeviceArray(np.asarray(result))
    if isinstance(result, tuple) and hasattr(result, "_fields"):  # a named tuple (unique_*)
        return type(result)(*(_wrap(r) for r in result))
    if isinstance(result, (tuple, list)):
        return type(result)(_wrap(r) for r in result)
    return result


def _unwrap(value):
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return _host(value)


def _wrap_like(result, args):
    """``_wrap(result)``, but an input array given back unchanged is returned as
    itself (cupy's ``asarray``/``astype(copy=False)`` return their argument)."""
    if isinstance(result, np.ndarray):
        for a in args:
            if isinstance(a, DeviceArray) and a._a is result:
                return a
    return _wrap(result)


def _has_device(value):
    if isinstance(value, (list, tuple)):
        return any(_has_device(v) for v in value)
    return isinstance(value, DeviceArray)


def _index_key(key):
    """An index for numpy; a boolean mask synchronises (cupy reads the number
    of True values back, to read or to assign)."""
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        a = _host(part)
        if isinstance(a, np.ndarray) and a.dtype == np.bool_ and a.ndim > 0:
            _sync("boolean-mask indexing")
    return _unwrap(key)


class _Flags:
    """``cupy.ndarray.flags``: only the three flags cupy has (no ``writeable``)."""

    def __init__(self, a):
        self.c_contiguous = bool(a.flags.c_contiguous)
        self.f_contiguous = bool(a.flags.f_contiguous)
        self.owndata = bool(a.flags.owndata)

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous", "OWNDATA": "owndata"}[name])


def _binary(op, name, reflected=False):
    def method(self, other):
        if isinstance(other, _CompressedMatrix):
            return NotImplemented
        _refuse_host((other,), name)
        a, b = (_host(other), self._a) if reflected else (self._a, _host(other))
        return _wrap(op(a, b))

    method.__name__ = name
    return method


def _inplace(op, name):
    def method(self, other):
        _refuse_host((other,), name)
        op(self._a, _host(other))
        return self

    method.__name__ = name
    return method


def _unary(op, name):
    def method(self):
        return _wrap(op(self._a))

    method.__name__ = name
    return method


def _method(name, syncs=False):
    """ndarray method ``name`` on the device (host operands refused)."""

    def method(self, *args, **kwargs):
        _refuse_host(args, f"ndarray.{name}")
        _refuse_host(tuple(kwargs.values()), f"ndarray.{name}")
        if syncs:
            _sync(f".{name}()")
        return _wrap_like(getattr(self._a, name)(*_unwrap(args), **_unwrap(kwargs)), (self,))

    method.__name__ = name
    return method


class DeviceArray:
    """An array on the emulated device (``cupy.ndarray``): a numpy array held,
    not inherited, so numpy cannot take it for one of its own."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100.0

    def __init__(self, a):
        self._a = a

    # ---- no implicit conversion to the host, as in cupy ------------------- #
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        _refuse_host(inputs, f"numpy.{ufunc.__name__}")
        if out is not None:
            _refuse_host(out, f"numpy.{ufunc.__name__}")
            kwargs["out"] = tuple(_host(o) for o in out)
        result = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(args, f"numpy.{func.__name__}")
        _refuse_host(tuple(kwargs.values()), f"numpy.{func.__name__}")
        return _wrap_like(func(*_unwrap(args), **_unwrap(kwargs)), args)

    def __array_namespace__(self, api_version=None):
        return xp

    # ---- attributes -------------------------------------------------------- #
    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a))
    T = property(lambda self: DeviceArray(self._a.T))
    mT = property(lambda self: DeviceArray(self._a.mT))
    real = property(lambda self: DeviceArray(self._a.real))
    imag = property(lambda self: DeviceArray(self._a.imag))

    @property
    def device(self):
        return DEVICE

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            msg = "iteration over a 0-d array"
            raise TypeError(msg)
        return (self[i] for i in range(len(self._a)))

    def __getitem__(self, key):
        return _wrap(self._a[_index_key(key)])

    def __setitem__(self, key, value):
        self._a[_index_key(key)] = _host(value)  # host values are uploaded, as cupy does

    # ---- reading a value back waits for the device ----------------------- #
    def _read_back(convert, what):  # a method factory used in the class body
        def method(self):
            _sync(what)
            return convert(self._a)

        return method

    __bool__ = _read_back(bool, "bool()")
    __float__ = _read_back(float, "float()")
    __int__ = _read_back(int, "int()")
    __complex__ = _read_back(complex, "complex()")
    del _read_back

    def __index__(self):
        msg = "a device array cannot be used as a Python integer (cupy arrays have no __index__)"
        raise TypeError(msg)

    def __format__(self, spec):
        if self._a.ndim == 0:
            _sync("format()")
            return format(self._a.item(), spec)
        return format(str(self), spec)

    def __repr__(self):  # cupy reads the values back; a debugging aid here, not counted
        return repr(self._a).replace("array(", "device_array(", 1)

    def __str__(self):
        return str(self._a)

    def item(self, *args):
        _sync(".item()")
        return self._a.item(*args)

    def tolist(self):
        _sync(".tolist()")
        return self._a.tolist()

    def get(self, stream=None, order="C", out=None):
        """A host copy (``cupy.ndarray.get``)."""
        _sync(".get()")
        if out is not None:
            np.copyto(out, self._a)
            return out
        return np.array(self._a, copy=True, order=order)

    def set(self, arr, stream=None):
        """Copy host ``arr`` in (``cupy.ndarray.set``)."""
        if isinstance(arr, DeviceArray):
            msg = "set() takes a host array (a numpy.ndarray)"
            raise TypeError(msg)
        if stream is not None:
            stream._log("copy")
        np.copyto(self._a, arr)

    def view(self, dtype=None):
        return DeviceArray(self._a.view() if dtype is None else self._a.view(dtype))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        return _wrap_like(self._a.astype(dtype, order=order, copy=copy), (self,))

    __hash__ = None


_BINARY = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "matmul": operator.matmul,
    "and": operator.and_, "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift,
}
for _name, _op in _BINARY.items():
    setattr(DeviceArray, f"__{_name}__", _binary(_op, f"__{_name}__"))
    setattr(DeviceArray, f"__r{_name}__", _binary(_op, f"__r{_name}__", reflected=True))
    setattr(DeviceArray, f"__i{_name}__", _inplace(getattr(operator, f"i{_name}"), f"__i{_name}__"))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(DeviceArray, f"__{_name}__", _binary(getattr(operator, _name), f"__{_name}__"))
for _name, _op in {"neg": operator.neg, "pos": operator.pos, "abs": operator.abs, "invert": operator.invert}.items():
    setattr(DeviceArray, f"__{_name}__", _unary(_op, f"__{_name}__"))
# The cupy.ndarray methods nbgpu may call (tests/test_cupy_api.py checks each exists in cupy).
for _name in (
    "all", "any", "argmax", "argmin", "argsort", "clip", "conj", "copy", "cumprod", "cumsum", "diagonal", "dot",
    "fill", "flatten", "max", "mean", "min", "prod", "ravel", "repeat", "reshape", "round", "sort", "squeeze",
    "std", "sum", "swapaxes", "take", "trace", "transpose", "var",
):
    setattr(DeviceArray, _name, _method(_name))
DeviceArray.nonzero = _method("nonzero", syncs=True)
del _name, _op


def owns(x):
    """Whether ``x`` is an array or sparse matrix of this stand-in."""
    return isinstance(x, (DeviceArray, _CompressedMatrix))


def _device_function(fn, name, *, uploads=False, syncs=False):
    """``fn`` (a numpy function) as the device library's function ``name``."""

    def call(*args, **kwargs):
        device = kwargs.pop("device", None)
        if device is not None and device != DEVICE:
            msg = f"{name}: device {device!r} is not the emulated device"
            raise ValueError(msg)
        if not uploads:
            _refuse_host(args, name)
            _refuse_host(tuple(kwargs.values()), name)
        if syncs:
            _sync(f"{name}()")
        on_host = uploads and args and not _has_device(args[0])
        if on_host:
            _upload()
        result = fn(*_unwrap(args), **_unwrap(kwargs))
        if on_host and isinstance(result, np.ndarray):
            return DeviceArray(np.array(result, copy=True))  # an upload copies
        return _wrap_like(result, args)

    call.__name__ = name
    call.__doc__ = f"``{name}`` on the emulated device."
    return call


# --------------------------------------------------------------------------- #
# The Array API namespace of device arrays (array_api_compat.cupy's role)
# --------------------------------------------------------------------------- #
# Functions whose result size depends on the values: cupy reads a count back.
_SYNCING_FUNCTIONS = {"nonzero", "flatnonzero", "argwhere", "unique", "compress", "extract"}
_UPLOADING_FUNCTIONS = {"asarray", "array", "from_dlpack"}
# What array_api_compat.cupy binds to cupy with get_xp (array_api_compat/cupy/_aliases.py):
# the generic implementations, run here on the emulated library (vecdot,
# isdtype and unstack: cupy 14 has its own, as numpy does).
_GENERIC = (
    "arange", "empty", "empty_like", "eye", "full", "full_like", "linspace", "ones", "ones_like", "zeros",
    "zeros_like", "unique_all", "unique_counts", "unique_inverse", "unique_values", "std", "var",
    "cumulative_sum", "cumulative_prod", "clip", "permute_dims", "reshape", "argsort", "sort", "nonzero",
    "matmul", "matrix_transpose", "tensordot", "sign", "finfo", "iinfo",
)


class _Info:
    """``__array_namespace_info__()`` of the emulated namespace."""

    def __init__(self):
        self._base = _compat_numpy.__array_namespace_info__()

    def default_device(self):
        return DEVICE

    def devices(self):
        return [DEVICE]

    def capabilities(self):
        return self._base.capabilities()

    def default_dtypes(self, *, device=None):
        return self._base.default_dtypes()

    def dtypes(self, *, device=None, kind=None):
        return self._base.dtypes(kind=kind)


class _Namespace:
    """A namespace whose functions make device arrays: ``base``'s functions
    wrapped, ``own`` names first."""

    def __init__(self, base, name, own=None):
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_own", dict(own or {}))
        object.__setattr__(self, "__name__", name)

    def __getattr__(self, name):
        if name in self._own:
            value = self._own[name]
        else:
            value = getattr(self._base, name)
            if isinstance(value, types.ModuleType):
                value = _Namespace(value, f"{self.__name__}.{name}")
            elif callable(value) and not isinstance(value, type):
                value = _device_function(
                    value, name, uploads=name in _UPLOADING_FUNCTIONS, syncs=name in _SYNCING_FUNCTIONS
                )
        object.__setattr__(self, name, value)
        return value

    def __array_namespace_info__(self):
        return _Info()

    def __repr__(self):
        return f"<namespace {self.__name__}>"


def _asarray(a, dtype=None, order=None, *, blocking=None):
    """``cupy.asarray``: a device array as it is (cast), host data uploaded."""
    if isinstance(a, DeviceArray):
        return a.astype(dtype, copy=False) if dtype is not None else a
    if _has_device(a):  # a sequence of device arrays: stacked on the device
        return _wrap(np.asarray(_unwrap(a), dtype=dtype, order=order))
    _upload()
    return DeviceArray(np.array(a, dtype=dtype, order=order or "K", copy=True))


#: The whole of cupy as array_api_compat's generic functions reach it (numpy's
#: functions on device arrays); nbgpu itself sees only :data:`cupy` below.
_full_cupy = _Namespace(np, "cupy", {"asarray": _asarray})

#: The Array API namespace of :class:`DeviceArray` (what array_api_compat.cupy is to cupy).
xp = _Namespace(
    _compat_numpy,
    "emulated_device.xp",
    {name: get_xp(_full_cupy)(getattr(_compat_aliases, name)) for name in _GENERIC},
)


# --------------------------------------------------------------------------- #
# Sparse matrices (cupyx.scipy.sparse)
# --------------------------------------------------------------------------- #
_INT32_MAX = np.iinfo(np.int32).max


def _index_dtype(arrays, maxval):
    """cupyx's choice for a matrix class: int32 unless a value needs int64.

    Checking the contents of an int64 array reads its minimum and maximum
    back: two synchronisations each.
    """
    if maxval is not None and maxval > _INT32_MAX:
        return np.int64
    for arr in arrays:
        if not np.can_cast(arr.dtype, np.int32):
            if arr.size == 0:
                continue
            _sync("int64 index contents check", times=2)
            if arr.min() >= np.iinfo(np.int32).min and arr.max() <= _INT32_MAX:
                continue
            return np.int64
    return np.int32


_SPARSE_DTYPES = (np.bool_, np.float32, np.float64, np.complex64, np.complex128)


class _CompressedMatrix:
    """A CSR or CSC matrix on the emulated device (the cupyx classes)."""

    format = ""
    _scipy = None

    def __init__(self, arg1, shape=None, dtype=None, copy=False):
        flags = {}
        if isinstance(arg1, _CompressedMatrix):
            host = arg1._m.asformat(self.format, copy=copy)
            if arg1.format == self.format:
                flags = dict(arg1._flags)
        elif sp.issparse(arg1):  # a copy from the host
            host = arg1.asformat(self.format, copy=True)
        elif isinstance(arg1, tuple) and len(arg1) == 2 and all(isinstance(s, (int, np.integer)) for s in arg1):
            m, n = (int(s) for s in arg1)
            host = self._scipy((m, n), dtype=dtype or np.float64)
            host.indices = host.indices.astype(np.int32)
            host.indptr = host.indptr.astype(np.int32)
        elif isinstance(arg1, tuple) and len(arg1) == 3:
            host = self._from_arrays(*arg1, shape=shape)
        else:
            msg = "Unsupported initializer format"
            raise ValueError(msg)
        if dtype is not None:
            host = host.astype(dtype)
        if np.dtype(host.dtype).type not in _SPARSE_DTYPES:
            msg = "Only bool, float32, float64, complex64 and complex128 are supported"
            raise ValueError(msg)
        self._m = host
        self._flags = flags
        self._views = {}

    def _from_arrays(self, data, indices, indptr, *, shape):
        for a in (data, indices, indptr):
            if not (isinstance(a, DeviceArray) and a.ndim == 1):
                msg = "data, indices, and indptr must be 1-D cupy arrays"
                raise ValueError(msg)
        if len(data) != len(indices):
            msg = "indices and data should have the same size"
            raise ValueError(msg)
        data, indices, indptr = _host(data), _host(indices), _host(indptr)
        if indptr.size:
            _sync("sparse matrix from arrays (indptr ends)")
            if indptr[0] != 0:
                msg = f"index pointer should start with 0 (got {indptr[0]})"
                raise ValueError(msg)
            live = int(indptr[-1])
            if live > data.size:
                msg = f"last index pointer ({live}) exceeds the size of data/indices ({data.size})"
                raise ValueError(msg)
            data, indices = data[:live], indices[:live]
        idx = _index_dtype((indices, indptr), None if shape is None else max(shape))
        if shape is None:
            _sync("sparse matrix shape from indices")
            shape = self._swap(indptr.size - 1, int(indices.max()) + 1)
        major = self._swap(*shape)[0]
        if indptr.size != major + 1:
            msg = f"index pointer size ({indptr.size}) should be ({major + 1})"
            raise ValueError(msg)
        host = self._scipy(tuple(shape), dtype=data.dtype)
        host.data, host.indices, host.indptr = data, indices.astype(idx), indptr.astype(idx)
        return host

    def _swap(self, a, b):
        return (a, b) if self.format == "csr" else (b, a)

    def _new(self, host, flags=None):
        out = type(self).__new__(_FORMATS[host.format])
        out._m, out._flags, out._views = host, dict(flags or {}), {}
        return out

    # ---- stored arrays (device views; assigning takes device arrays) ---- #
    def _array(name):
        def get(self):
            host = getattr(self._m, name)
            view = self._views.get(name)
            if view is None or view._a is not host:  # one wrapper per stored array: ``X.data is X.data``
                view = self._views[name] = DeviceArray(host)
            return view

        def put(self, value):
            if not isinstance(value, DeviceArray):
                msg = f"{name} of a device sparse matrix must be a device array; got {type(value).__name__}"
                raise TypeError(msg)
            setattr(self._m, name, value._a)
            self._views[name] = value

        return property(get, put)

    data = _array("data")
    indices = _array("indices")
    indptr = _array("indptr")
    del _array

    @property
    def shape(self):
        return self._m.shape

    @property
    def ndim(self):
        return 2

    @property
    def dtype(self):
        return self._m.data.dtype

    @property
    def nnz(self):
        return int(self._m.data.size)

    @property
    def device(self):
        return DEVICE

    # ---- format flags, cached as cupyx caches them ---------------------- #
    @property
    def has_canonical_format(self):
        if self._m.data.size == 0:
            self._flags.update(canonical=True, sorted=True)
        elif self._flags.get("sorted") is False:
            self._flags["canonical"] = False
        elif "canonical" not in self._flags:
            _sync("has_canonical_format")
            self._flags["canonical"] = _in_order(self._m, strictly=True)
            if self._flags["canonical"]:
                self._flags["sorted"] = True
        return self._flags["canonical"]

    @has_canonical_format.setter
    def has_canonical_format(self, value):
        self._flags["canonical"] = bool(value)
        if value:
            self._flags["sorted"] = True

    @property
    def has_sorted_indices(self):
        if "sorted" not in self._flags:
            _sync("has_sorted_indices")
            self._flags["sorted"] = _in_order(self._m, strictly=False)
        return self._flags["sorted"]

    @has_sorted_indices.setter
    def has_sorted_indices(self, value):
        self._flags["sorted"] = bool(value)

    def sum_duplicates(self):
        if self.has_canonical_format:
            return
        _sync("sum_duplicates (new number of stored values)")
        self._m.sum_duplicates()
        self._flags.update(canonical=True, sorted=True)

    def eliminate_zeros(self):
        _sync("eliminate_zeros (kept number of stored values)")
        self._m.eliminate_zeros()

    # ---- copies and conversions ------------------------------------------ #
    def copy(self):
        return self._new(self._m.copy(), self._flags)

    def astype(self, dtype, copy=True):
        if np.dtype(dtype).type not in _SPARSE_DTYPES:
            msg = "Only bool, float32, float64, complex64 and complex128 are supported"
            raise ValueError(msg)
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return self._new(self._m.astype(dtype), self._flags)

    def asformat(self, format):
        if format is None or format == self.format:
            return self
        return getattr(self, f"to{format}")()

    def tocsr(self, copy=False):
        if self.format == "csr":
            return self.copy() if copy else self
        return self._new(self._m.tocsr())

    def tocsc(self, copy=False):
        if self.format == "csc":
            return self.copy() if copy else self
        return self._new(self._m.tocsc())

    def transpose(self, axes=None, copy=False):
        host = self._m.transpose(copy=copy)
        return self._new(host, self._flags)

    @property
    def T(self):
        return self.transpose()

    def get(self, stream=None):
        """A host scipy.sparse copy (cupyx's ``get``)."""
        _sync(".get()")
        return self._m.copy()

    def toarray(self, order=None):
        return DeviceArray(self._m.toarray(order=order))

    def max(self, axis=None, out=None, *, explicit=False):
        if axis is None:
            _sync("max()")
            return _wrap(self._m.max())
        # cupyx 14.2 (_minmax_mixin._min_or_max_axis): CSC for axis 0, CSR for
        # 1, duplicates summed there (its canonical flag read), then the
        # result's values and indices compressed to the nonzero ones: two
        # reads of a count (cupy.compress). The result is COO there.
        axis = axis + 2 if axis < 0 else axis
        mat = self.tocsc() if axis == 0 else self.tocsr()
        mat.sum_duplicates()
        _sync("max(axis) (cupy.compress of the result)", times=2)
        return self._new(sp.csr_matrix(mat._m.max(axis=axis)), {})

    # ---- indexing: slices of rows or columns -------------------------------- #
    def __getitem__(self, key):
        rows, cols = _two_keys(key)
        out, flags = self._m, dict(self._flags)
        major, minor = self._swap(rows, cols)
        if not _whole(major):
            if isinstance(major, slice) and major.step in (None, 1):
                _sync("major-axis slice (indptr ends)", times=2)
            else:
                _sync("major-axis fancy index")
                flags = {}
        if not _whole(minor):
            _sync("minor-axis index (kept number of stored values)")
            if not isinstance(minor, slice):
                flags = {}
        if isinstance(rows, DeviceArray) or isinstance(cols, DeviceArray):
            rows, cols = _host(rows), _host(cols)
        elif isinstance(rows, np.ndarray) or isinstance(cols, np.ndarray):
            msg = "Unsupported type numpy.ndarray as a sparse index (a host array on the device)"
            raise TypeError(msg)
        out = out[rows, :] if self.format == "csr" else out[:, cols]
        out = out[:, cols] if self.format == "csr" else out[rows, :]
        return self._new(out.asformat(self.format), flags)

    # ---- products ---------------------------------------------------------- #
    def __matmul__(self, other):
        if owns(other) and isinstance(other, _CompressedMatrix):
            _sync("sparse @ sparse (result size)")
            return self._new(sp.csr_matrix(self._m @ other._m))
        if not isinstance(other, DeviceArray):
            msg = f"unsupported operand type for @ with a device sparse matrix: {type(other).__name__}"
            raise TypeError(msg)
        self.sum_duplicates()
        if other.ndim == 2 and not other._a.flags.f_contiguous:
            _fortran_copy(other.nbytes)  # cupyx: cupy.asfortranarray(other)
        result = self._m @ _host(other)
        return DeviceArray(np.asfortranarray(result)) if result.ndim == 2 else _wrap(result)

    def __repr__(self):
        return f"<{self.shape[0]}x{self.shape[1]} emulated device {self.format.upper()} matrix, {self.nnz} stored>"


def _in_order(m, *, strictly):
    """Whether every row (CSR) or column (CSC) has increasing indices
    (strictly: no duplicates either), read from the arrays, not scipy's cache."""
    indptr, indices = m.indptr, m.indices
    if indices.size < 2:
        return True
    step = np.diff(indices.astype(np.int64))
    ok = step > 0 if strictly else step >= 0
    # Steps across a row boundary do not count.
    boundary = np.zeros(indices.size - 1, dtype=bool)
    ends = indptr[1:-1]
    ends = ends[(ends > 0) & (ends < indices.size)]
    boundary[ends - 1] = True
    return bool(np.all(ok | boundary))


def _two_keys(key):
    if not isinstance(key, tuple):
        key = (key,)
    key = tuple(k for k in key if k is not Ellipsis)
    if len(key) == 1:
        return key[0], slice(None)
    if len(key) == 2:
        return key
    msg = f"too many indices for a sparse matrix: {key!r}"
    raise IndexError(msg)


def _whole(k):
    return isinstance(k, slice) and k == slice(None)


class csr_matrix(_CompressedMatrix):
    """A CSR matrix on the emulated device."""

    format = "csr"
    _scipy = sp.csr_matrix


class csc_matrix(_CompressedMatrix):
    """A CSC matrix on the emulated device."""

    format = "csc"
    _scipy = sp.csc_matrix


_FORMATS = {"csr": csr_matrix, "csc": csc_matrix}


def issparse(x):
    return isinstance(x, _CompressedMatrix)


# --------------------------------------------------------------------------- #
# Streams and pinned memory (cupy.cuda)
# --------------------------------------------------------------------------- #
_LOCAL = threading.local()
STREAM_EVENTS = collections.deque(maxlen=10_000)  # (operation, stream, event) for tests


class Event:
    """A CUDA event: a point in the work queued on ``stream``."""

    def __init__(self, stream):
        self.stream = stream


class Stream:
    """A CUDA stream; entering it makes it the current one of this thread."""

    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.name = "null" if null else f"stream-{id(self):x}"

    def _log(self, operation, event=None):
        STREAM_EVENTS.append((operation, self, event))

    def __enter__(self):
        stack = getattr(_LOCAL, "streams", None)
        if stack is None:
            stack = _LOCAL.streams = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _LOCAL.streams.pop()
        return False

    def record(self, event=None):
        event = Event(self)
        self._log("record", event)
        return event

    def wait_event(self, event):
        self._log("wait", event)

    def synchronize(self):
        _sync("Stream.synchronize()")

    def __repr__(self):
        return f"<emulated {self.name}>"


Stream.null = Stream(null=True)


def get_current_stream():
    stack = getattr(_LOCAL, "streams", None)
    return stack[-1] if stack else Stream.null


_PINNED = weakref.WeakValueDictionary()  # data pointer -> pinned host buffer


class _PinnedBuffer(np.ndarray):
    """Host memory from :func:`empty_pinned` (weakly referenceable)."""


def empty_pinned(shape, dtype=float, order="C"):
    """Page-locked host memory (``cupyx.empty_pinned``): a numpy array here."""
    out = np.empty(shape, dtype=dtype, order=order).view(_PinnedBuffer)
    _PINNED[out.ctypes.data] = out
    return out


class _PointerAttributes:
    def __init__(self, type):
        self.type = type


def _pointer_get_attributes(ptr):
    """``cupy.cuda.runtime.pointerGetAttributes``: host-registered or not."""
    return _PointerAttributes(1 if ptr in _PINNED else 0)


# --------------------------------------------------------------------------- #
# The library: the names nbgpu may use, as cupy and cupyx spell them
# --------------------------------------------------------------------------- #
def _module(name, **attributes):
    mod = types.ModuleType(name, f"The emulated ``{name.rsplit('.', 1)[-1]}`` (see tests/emulated_device.py).")
    for key, value in attributes.items():
        setattr(mod, key, value)
    return mod


def _asnumpy(a, stream=None):
    if isinstance(a, DeviceArray):
        return a.get()
    return np.asarray(a)


def _empty(shape, dtype=float, order="C"):
    return DeviceArray(np.empty(shape, dtype=dtype, order=order))


class _Ufunc:
    """A cupy ufunc: callable elementwise, and ``at`` (cupy's scatter, atomic)."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self._call = _device_function(ufunc, ufunc.__name__)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def at(self, a, indices, b=None):
        name = f"{self.__name__}.at"
        if not isinstance(a, DeviceArray):
            msg = f"{name}: the target must be a device array; got {type(a).__name__}"
            raise TypeError(msg)
        _refuse_host((indices, b), name)
        self._ufunc.at(a._a, _unwrap(indices), _host(b))


def _deprecated_scatter(ufunc, name, replacement):
    """cupyx's ``scatter_*``: cupy 14 warns on every call (the suite makes it an error)."""

    def scatter(a, slices, value):
        warnings.warn(f"`ndarray.{name}` is deprecated. Please use `cupy.{replacement}.at` instead.",
                      DeprecationWarning, stacklevel=2)
        ufunc.at(a, slices, value)

    scatter.__name__ = name
    return scatter


_NUMPY_FUNCTIONS = (
    "arange", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "concatenate", "stack",
    "cumsum", "diff", "where", "searchsorted", "minimum", "take", "any", "all", "min", "max",
    "isnan", "isfinite", "log", "exp",
)

cuda = _module(
    "cupy.cuda",
    Device=Device,
    Stream=Stream,
    Event=Event,
    get_current_stream=get_current_stream,
    runtime=_module("cupy.cuda.runtime", pointerGetAttributes=_pointer_get_attributes, memoryTypeHost=1),
)

cupy = _module(
    "cupy",
    ndarray=DeviceArray,
    cuda=cuda,
    asarray=_asarray,
    asnumpy=_asnumpy,
    ascontiguousarray=_device_function(np.ascontiguousarray, "ascontiguousarray"),
    asfortranarray=_device_function(np.asfortranarray, "asfortranarray"),
    empty=_empty,
    add=_Ufunc(np.add),
    maximum=_Ufunc(np.maximum),
    bool_=np.bool_, int32=np.int32, int64=np.int64, float32=np.float32, float64=np.float64,
    **{name: _device_function(getattr(np, name), name) for name in _NUMPY_FUNCTIONS},
)

cupyx = _module(
    "cupyx",
    scatter_add=_deprecated_scatter(cupy.add, "scatter_add", "add"),
    scatter_max=_deprecated_scatter(cupy.maximum, "scatter_max", "maximum"),
    empty_pinned=empty_pinned,
    scipy=_module(
        "cupyx.scipy",
        sparse=_module("cupyx.scipy.sparse", csr_matrix=csr_matrix, csc_matrix=csc_matrix, issparse=issparse),
        special=_module(
            "cupyx.scipy.special",
            gammaln=_device_function(scipy.special.gammaln, "gammaln"),
            chdtrc=_device_function(scipy.special.chdtrc, "chdtrc"),
        ),
    ),
)

#: What :func:`namespace.device_library` returns for arrays of this module.
LIBRARY = types.SimpleNamespace(cupy=cupy, cupyx=cupyx, xp=xp, emulated=True)

# The one hook: the array layer serves LIBRARY for this module's arrays.
_namespace.register_device_library(sys.modules[__name__])
