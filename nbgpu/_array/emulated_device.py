"""A CPU stand-in for cupy and cupyx: nbgpu's device code paths, run without a GPU.

Device code reaches its library only through :func:`namespace.device_library`:
on a GPU that is cupy and cupyx, for arrays of this module (the
``device_emulated`` test backend) it is :data:`LIBRARY`. numpy and
scipy.sparse compute; the stand-in adds the rules of cupy that a host
library does not have, so that code which would break on a GPU breaks here:

- its arrays (:class:`DeviceArray`) form a namespace of their own (:data:`xp`):
  a host numpy array as an operand is a TypeError (cupy's "Unsupported
  type"), so is ``operator.index`` of one, and an element is a 0-d array;
  ``cupy.asarray`` and ``xp.asarray`` copy host data (an upload);
- every point at which cupy waits for the device is a synchronisation:
  ``bool``, ``float``, ``int``, ``.item()``, ``.get()``, boolean-mask
  indexing, and the cupyx operations that read device values back (as cupy
  14.2's sources do). :func:`count_syncs` counts them by nbgpu line;
- sparse matrices have only the part of cupyx's API that nbgpu uses, store
  what cupyx stores (bool or float values, int32 indices where they fit),
  cache their canonical-format flag as cupyx does, and note every dense
  operand cupyx would copy to column-major order (:func:`count_syncs` too);
- only the names defined here exist; a test checks each against the
  installed cupy (``tests/test_cupy_api.py``).

What it cannot show: timing, memory, races between CUDA streams (streams
here only log their events), and the host conversions numpy does silently
(``np.asarray`` of a :class:`DeviceArray` works here and fails on cupy).
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
import types
import weakref

import array_api_compat.numpy as _compat_numpy
import numpy as np
import scipy.sparse as sp
import scipy.special

# --------------------------------------------------------------------------- #
# Synchronisations
# --------------------------------------------------------------------------- #
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
    """``file:line`` of the innermost nbgpu frame outside this module."""
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
        if device not in (None, 0):
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


def _host(a):
    """The numpy view of a device array (anything else as it is)."""
    return a.view(np.ndarray) if isinstance(a, DeviceArray) else a


def _is_host_array(a):
    return isinstance(a, np.ndarray) and not isinstance(a, DeviceArray)


def _refuse_host(values, where):
    for v in values:
        if _is_host_array(v):
            msg = f"Unsupported type {np.ndarray} (a host array as an operand of {where} on the device)"
            raise TypeError(msg)
        if isinstance(v, (list, tuple)):
            _refuse_host(v, where)


def _wrap(result):
    """numpy results as device arrays (scalars as 0-d arrays, as cupy returns)."""
    if isinstance(result, DeviceArray):
        return result
    if isinstance(result, np.ndarray):
        return result.view(DeviceArray)
    if isinstance(result, np.generic):
        return np.asarray(result).view(DeviceArray)
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if isinstance(result, list):
        return [_wrap(r) for r in result]
    return result


def _unwrap(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return _host(value)


def _index_key(key):
    """An index for numpy; a boolean mask synchronises (its size is read back)."""
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        if isinstance(part, np.ndarray) and part.dtype == np.bool_ and part.ndim > 0:
            _sync("boolean-mask indexing")
    return _unwrap(key)


class DeviceArray(np.ndarray):
    """An array on the emulated device (``cupy.ndarray``)."""

    __array_priority__ = 100.0

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        _refuse_host(inputs, f"numpy.{ufunc.__name__}")
        if out is not None:
            _refuse_host(out, f"numpy.{ufunc.__name__}")
            kwargs["out"] = tuple(_host(o) for o in out)
        result = getattr(ufunc, method)(*(_host(a) for a in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(args, f"numpy.{func.__name__}")
        _refuse_host(tuple(kwargs.values()), f"numpy.{func.__name__}")
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def __array_namespace__(self, api_version=None):
        return xp

    def __getitem__(self, key):
        return _wrap(np.ndarray.__getitem__(_host(self), _index_key(key)))

    def __setitem__(self, key, value):
        np.ndarray.__setitem__(_host(self), _index_key(key), _host(value))

    # Reading a value back waits for the device.
    def _read_back(convert, what):  # a method factory used in the class body
        def method(self):
            _sync(what)
            return convert(_host(self))

        return method

    __bool__ = _read_back(bool, "bool()")
    __float__ = _read_back(float, "float()")
    __int__ = _read_back(int, "int()")
    __complex__ = _read_back(complex, "complex()")
    del _read_back

    def __index__(self):
        msg = "a device array cannot be used as a Python integer (cupy arrays have no __index__)"
        raise TypeError(msg)

    def item(self, *args):
        _sync(".item()")
        return _host(self).item(*args)

    def tolist(self):
        _sync(".tolist()")
        return _host(self).tolist()

    def get(self, stream=None):
        """A host copy (``cupy.ndarray.get``)."""
        _sync(".get()")
        return np.array(_host(self), copy=True)

    def set(self, arr, stream=None):
        """Copy host ``arr`` in (``cupy.ndarray.set``)."""
        if stream is not None:
            stream._log("copy")
        np.copyto(_host(self), arr)

    # Methods numpy answers with host scalars.
    def argmax(self, *args, **kwargs):
        return _wrap(_host(self).argmax(*args, **kwargs))

    def argmin(self, *args, **kwargs):
        return _wrap(_host(self).argmin(*args, **kwargs))

    def nonzero(self):
        _sync(".nonzero()")
        return _wrap(_host(self).nonzero())

    @property
    def device(self):
        return DEVICE


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
        if uploads and args and not isinstance(args[0], DeviceArray):
            _upload()
        result = fn(*_unwrap(args), **_unwrap(kwargs))
        if uploads and isinstance(result, np.ndarray) and not isinstance(result, DeviceArray):
            result = np.array(result, copy=True)  # an upload copies
        return _wrap(result)

    call.__name__ = name
    call.__doc__ = f"``{name}`` on the emulated device."
    return call


# --------------------------------------------------------------------------- #
# The Array API namespace of device arrays (array_api_compat.cupy's role)
# --------------------------------------------------------------------------- #
_SYNCING_FUNCTIONS = {"nonzero", "unique_values", "unique_counts", "unique_inverse", "unique_all"}
_UPLOADING_FUNCTIONS = {"asarray", "from_dlpack"}


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
    """An Array API namespace whose functions make device arrays."""

    def __init__(self, base, name):
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "__name__", name)

    def __getattr__(self, name):
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


#: The Array API namespace of :class:`DeviceArray` (what array_api_compat.cupy is to cupy).
xp = _Namespace(_compat_numpy, "nbgpu._array.emulated_device.xp")


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
        out._m, out._flags = host, dict(flags or {})
        return out

    # ---- stored arrays (device views; assigning takes device arrays) ---- #
    def _array(name):
        def get(self):
            return getattr(self._m, name).view(DeviceArray)

        def put(self, value):
            if not isinstance(value, DeviceArray):
                msg = f"{name} of a device sparse matrix must be a device array; got {type(value).__name__}"
                raise TypeError(msg)
            setattr(self._m, name, _host(value))

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
        return self._m.toarray(order=order).view(DeviceArray)

    def max(self, axis=None, out=None, *, explicit=False):
        if axis is None:
            _sync("max()")
            return _wrap(self._m.max())
        # A per-axis maximum sums duplicates and compresses its result.
        self.sum_duplicates()
        _sync("max(axis) (compress)")
        return self._new(sp.csr_matrix(self._m.max(axis=axis)), {})

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
        elif _is_host_array(rows) or _is_host_array(cols):
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
        if other.ndim == 2 and not other.flags.f_contiguous:
            _fortran_copy(other.nbytes)  # cupyx: cupy.asfortranarray(other)
        result = self._m @ _host(other)
        return np.asfortranarray(result).view(DeviceArray) if result.ndim == 2 else _wrap(result)

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
    mod = types.ModuleType(name, f"The emulated ``{name.rsplit('.', 1)[-1]}`` (see nbgpu._array.emulated_device).")
    for key, value in attributes.items():
        setattr(mod, key, value)
    return mod


def _asnumpy(a, stream=None):
    if isinstance(a, DeviceArray):
        return a.get()
    return np.asarray(a)


def _asarray(a, dtype=None, order=None):
    if isinstance(a, DeviceArray):
        return a.astype(dtype, copy=False) if dtype is not None else a
    _upload()
    return np.array(a, dtype=dtype, order=order or "K", copy=True).view(DeviceArray)


def _empty(shape, dtype=float, order="C"):
    return np.empty(shape, dtype=dtype, order=order).view(DeviceArray)


def _scatter(ufunc, name):
    def scatter(a, slices, value):
        if not isinstance(a, DeviceArray):
            msg = f"{name}: the target must be a device array; got {type(a).__name__}"
            raise TypeError(msg)
        _refuse_host((slices, value), name)
        ufunc.at(_host(a), _unwrap(slices), _host(value))

    scatter.__name__ = name
    return scatter


_NUMPY_FUNCTIONS = (
    "arange", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "concatenate", "stack",
    "cumsum", "diff", "where", "searchsorted", "minimum", "maximum", "take", "any", "all", "min", "max",
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
    bool_=np.bool_, int32=np.int32, int64=np.int64, float32=np.float32, float64=np.float64,
    **{name: _device_function(getattr(np, name), name) for name in _NUMPY_FUNCTIONS},
)

cupyx = _module(
    "cupyx",
    scatter_add=_scatter(np.add, "scatter_add"),
    empty_pinned=empty_pinned,
    scipy=_module(
        "cupyx.scipy",
        sparse=_module("cupyx.scipy.sparse", csr_matrix=csr_matrix, csc_matrix=csc_matrix, issparse=issparse),
        special=_module("cupyx.scipy.special", gammaln=_device_function(scipy.special.gammaln, "gammaln")),
    ),
)

#: What :func:`namespace.device_library` returns for arrays of this module.
LIBRARY = types.SimpleNamespace(cupy=cupy, cupyx=cupyx, xp=xp, emulated=True)
