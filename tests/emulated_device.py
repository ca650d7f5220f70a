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
    if _COSTS:
        _account_sync(what, times)
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
# Device costs: launches, bytes, atomics, passes over X, per phase
# --------------------------------------------------------------------------- #
_COSTS = []  # the active CostLogs: an empty list costs each call one truth test

#: The phase of a device operation: that of the innermost nbgpu frame on the
#: stack whose function (first) or file (then) is named here; "other" when none
#: is. The one table of it (the cost report, ``benchmarks/device_cost.py``,
#: and its budgets, ``tests/test_device_cost.py``, read it from here).
PHASE_OF_FUNCTION = {
    # validation: the checks of X, the weights, the parameters and the summed statistics
    "check_X": "validation", "check_finite": "validation", "check_non_negative": "validation",
    "check_categories": "validation", "check_sample_weight": "validation", "_check_values": "validation",
    "_check_block_values": "validation", "_validated_for_scoring": "validation",
    "check_statistics_finite": "validation", "_check_params_for_fit": "validation",
    # labels: y checked, classes found, labels encoded as class indices, indices decoded as labels
    "check_y": "labels", "check_label_types": "labels", "unique_labels": "labels", "check_classes": "labels",
    "check_classes_unchanged": "labels", "encode_labels": "labels", "_labels_of": "labels",
    # sums: the per-class statistics of a batch, and merging them into the running ones
    "_accumulate": "sums", "_accumulate_onto": "sums", "_merge": "sums", "_moments": "sums",
    "_batch_statistics": "sums",
    # finalize: parameters derived from the statistics (at fit, or lazily at the first read)
    "_finalize": "finalize", "_become_fitted": "finalize", "_become_fitted_held": "finalize",
    "_derive_if_lazy": "finalize", "_ready_to_score": "finalize",
    # scores: the joint log-likelihood of row blocks, the posteriors and the decision
    "_joint_log_likelihood": "scores", "_excluded_and_joint": "scores", "_score_blocks": "scores",
    "scores_and_joint": "scores", "decide": "scores", "predict": "scores", "predict_proba": "scores",
    "predict_log_proba": "scores", "predict_joint_log_proba": "scores",
}
PHASE_OF_FILE = {
    "_validation.py": "validation",
    "_array/class_sums.py": "sums",
    "_array/sparse_counts.py": "sums",
    "_array/sums.py": "sums",
    "_estimator/scoring.py": "scores",
}
PHASES = ("validation", "labels", "sums", "finalize", "scores", "other")
_CODE_PHASE = {}  # code object -> (phase or None, "file:function" or None)


def _code_phase(code):
    found = _CODE_PHASE.get(code)
    if found is None:
        name = os.path.abspath(code.co_filename)
        if name == _THIS or not name.startswith(_PACKAGE):
            found = (None, None)
        else:
            rel = os.path.relpath(name, _PACKAGE).replace(os.sep, "/")
            phase = PHASE_OF_FUNCTION.get(code.co_name) or PHASE_OF_FILE.get(rel)
            found = (phase, f"{rel}:{code.co_name}")
        _CODE_PHASE[code] = found
    return found


def phase_and_site():
    """``(phase, "file:function")``: the phase (:data:`PHASE_OF_FUNCTION`) and the
    innermost nbgpu function of the current call."""
    frame = sys._getframe(1)
    site = None
    while frame is not None:
        phase, where = _code_phase(frame.f_code)
        if where is not None and site is None:
            site = where
        if phase is not None:
            return phase, site
        frame = frame.f_back
    return "other", site or "<outside nbgpu>"


def _root(a):
    """The numpy array that owns ``a``'s memory."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _operands(value, out):
    """Device arrays and sparse matrices in ``value`` (nested sequences, dicts)."""
    if isinstance(value, (DeviceArray, _CompressedMatrix)):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _operands(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _operands(v, out)
    return out


def _buffers(x):
    """The numpy arrays of a device array or sparse matrix."""
    if isinstance(x, DeviceArray):
        return (x._a,)
    m = x._m
    return (m.data, m.indices, m.indptr)


def _elements(x):
    """Entries of ``x`` (a sparse matrix: its stored values)."""
    return x._a.size if isinstance(x, DeviceArray) else x._m.data.size


def _nbytes(x):
    return sum(b.nbytes for b in _buffers(x))


_METRICS = ("launches", "syncs", "bytes_read", "bytes_written", "bytes_allocated", "atomics", "x_reads")


class CostLog:
    """What a :func:`count_costs` block cost on the emulated device.

    - ``launches``: device operations that run a kernel (every call into the
      namespace, cupy/cupyx, a device-array operator or method, a cupyx
      sparse operation); views (slices, reshapes, transposes, a cast or
      ``asarray`` that returns its argument) and ``empty`` launch nothing;
    - ``syncs``: device→host synchronisations (as :func:`count_syncs`),
      ``sync_sites`` by (phase, nbgpu line and cause);
    - ``bytes_read``: the bytes of the device operands of each launch (a
      sparse matrix: data, indices and indptr; a gather: what it gathers and
      its indices); ``bytes_written``: the bytes of its new results (and of
      what an in-place operation or assignment overwrites);
      ``bytes_allocated``: the bytes of new device arrays; uploads and
      downloads are counted apart (``uploads``, ``bytes_uploaded``,
      ``bytes_downloaded``);
    - ``atomics``: elements scattered by read-modify-write to addresses
      that other threads may share: each index of ``cupy.add.at``/
      ``maximum.at`` (and cupyx's deprecated ``scatter_add``), and each
      stored value × output column of a product of a CSC matrix with a
      dense one (cupyx runs it as the transposed CSR product, which
      cuSPARSE computes by scattering). A CSR × dense product (row-parallel
      gathers), dense GEMMs and reductions use no atomics;
    - ``x_reads``: passes over X: per launch, each operand that holds one
      entry per element (dense) or stored value (sparse) of X counts its
      entries / X's (a gather, ``take``, the entries it gathers, at most
      those). Such arrays are X (:meth:`register_x`), views of it
      (a row block, ``X.data``), sparse matrices made of its arrays, the
      results of an operation on such an array that have as many entries
      (``X - mu``, ``X.data ** 2``, keys from ``X.indices``, a cast), and,
      for sparse X, 1-D arrays as long as one seen (the row of each stored
      value: ``searchsorted`` of an ``arange``); arrays of another size made
      from them (a kernel matrix, ``X - mu_c`` for all classes at once)
      count in bytes only. Entries are compared, not dtypes; ``x_writes``
      likewise for the results;
    - ``row_blocks``: the most blocks nbgpu cut X into: row blocks of
      :func:`nbgpu._array.blocks.row_blocks` (device calls, X's rows) or
      pieces of stored values of the device's sparse sums (1 when neither);
    - ``by_phase``: each count by phase (:data:`PHASE_OF_FUNCTION`);
      ``sites``: launches, ``x_sites``: passes over X, by (phase, innermost
      nbgpu function, operation).
    """

    def __init__(self):
        self.launches = self.syncs = self.atomics = 0
        self.bytes_read = self.bytes_written = self.bytes_allocated = 0
        self.uploads = self.bytes_uploaded = self.bytes_downloaded = 0
        self.x_reads = self.x_writes = 0.0
        self.by_phase = {p: dict.fromkeys(_METRICS, 0) for p in PHASES}
        self.sites = collections.Counter()
        self.x_sites = collections.Counter()
        self.sync_sites = collections.Counter()
        self.row_block_calls = []  # (n_rows, blocks) of each blocks.row_blocks call
        self.nnz_pieces = collections.Counter()  # (shape, nnz) -> pieces of stored values summed
        self.x_elements = 0
        self.x_rows = None
        self.x_sparse = False
        self.bytes_of_X = 0
        self._x_roots = {}
        self._x_sizes = set()

    # ---- X and what is derived from it --------------------------------- #
    def register_x(self, X):
        """Count passes over device array or sparse matrix ``X``."""
        self.x_elements = _elements(X)
        self.x_rows = X.shape[0]
        self.x_sparse = isinstance(X, _CompressedMatrix)
        self.bytes_of_X = _nbytes(X)
        self._mark_x(X)

    def _mark_x(self, x):
        buffers = _buffers(x) if isinstance(x, DeviceArray) else _buffers(x)[:2]  # not indptr
        for b in buffers:
            root = _root(b)
            key = id(root)
            if key not in self._x_roots:
                self._x_roots[key] = weakref.ref(root, lambda _, key=key, roots=self._x_roots: roots.pop(key, None))
        if _elements(x) > 1:
            self._x_sizes.add(_elements(x))

    def _is_x(self, x):
        return self.x_elements and id(_root(_buffers(x)[0])) in self._x_roots

    @property
    def row_blocks(self):
        """The most blocks X was cut into: row blocks (``blocks.row_blocks``
        of X's rows) or pieces of its stored values (the device's sparse sums)."""
        counts = [n for rows, n in self.row_block_calls if self.x_rows is None or rows == self.x_rows]
        counts += [n for (shape, _), n in self.nnz_pieces.items() if self.x_rows is None or shape[0] == self.x_rows]
        return max(counts, default=1)

    # ---- recording ------------------------------------------------------ #
    def _add(self, phase, **counts):
        row = self.by_phase[phase]
        for key, value in counts.items():
            setattr(self, key, getattr(self, key) + value)
            row[key] += value

    def _launch(self, phase, site, name, operands, results, *, launches, read, written, allocated, atomics,
                views_of_x=False, x_read=None, gather=False):
        x_reads = 0.0
        if self.x_elements:
            x_ops = [o for o in operands if self._is_x(o)]
            sizes = {n for n in map(_elements, x_ops) if n > 1}
            self._x_sizes.update(sizes)  # a row block's, a piece's
            if x_read is None:
                x_reads = sum(_elements(o) for o in x_ops) / self.x_elements if launches or read else 0.0
                if gather:  # a gather reads the entries it gathers, at most all of them
                    x_reads = min(x_reads, sum(map(_elements, results)) / self.x_elements)
            elif x_ops:
                x_reads = x_read
            for r in results:
                n = _elements(r)
                if (views_of_x and x_ops or n in sizes
                        or self.x_sparse and isinstance(r, DeviceArray) and r.ndim == 1 and n in self._x_sizes):
                    self._mark_x(r)
                    if not views_of_x:
                        self.x_writes += n / self.x_elements
        self._add(phase, launches=launches, bytes_read=read, bytes_written=written, bytes_allocated=allocated,
                  atomics=atomics, x_reads=x_reads)
        if launches:
            self.sites[(phase, site, name)] += launches
        if x_reads:
            self.x_sites[(phase, site, name)] += x_reads

    def as_dict(self):
        """The counts as plain numbers (JSON)."""
        out = {key: getattr(self, key) for key in _METRICS}
        out.update(
            x_reads=round(self.x_reads, 3), x_writes=round(self.x_writes, 3), bytes_of_X=self.bytes_of_X,
            row_blocks=self.row_blocks, uploads=self.uploads, bytes_uploaded=self.bytes_uploaded,
            bytes_downloaded=self.bytes_downloaded,
            phases={p: {k: (round(v, 3) if k == "x_reads" else v) for k, v in row.items()}
                    for p, row in self.by_phase.items() if any(row.values())},
        )
        return out

    def __repr__(self):
        return (f"CostLog({self.launches} launches, {self.syncs} syncs, {self.x_reads:.2f} passes over X, "
                f"{self.atomics} atomics, {self.row_blocks} row blocks)")


def _account(name, args, result, *, launches=1, read=None, written=0, atomics=0, views_of_x=False,
             allocated=None, x_read=None, gather=False):
    """Record one device operation on ``args`` giving ``result`` in every active
    :class:`CostLog`. Unless ``allocated`` is given, new results (not views of
    an operand) are allocated and written, and an operation whose results are
    all views launches nothing unless it writes in place (``written``) or
    scatters. ``views_of_x``: the results hold what the operands hold (a
    sparse slice or conversion), X-sized where they are; ``x_read``: the
    passes over X it makes when not all of its X-sized operands."""
    operands = _operands(args, [])
    results = _operands(result, [])
    if not operands and not results:
        return
    if allocated is None:
        roots = {id(_root(b)) for o in operands for b in _buffers(o)}
        allocated = 0
        for r in results:
            allocated += sum(b.nbytes for b in _buffers(r) if id(_root(b)) not in roots)
        if not allocated and not written and not atomics and launches == 1:
            launches = 0  # a view (or the argument itself) costs no kernel
        written += allocated if launches else 0
    if launches == 0 and not allocated and not views_of_x:
        return
    if read is None:
        read = sum(_nbytes(o) for o in operands) if launches else 0
    phase, site = phase_and_site()
    with _LOCK:
        for log in _COSTS:
            log._launch(phase, site, name, operands, results, launches=launches, read=read, written=written,
                        allocated=allocated, atomics=atomics, views_of_x=views_of_x, x_read=x_read, gather=gather)


def _account_transfer(kind, x):
    """An upload of host data into new device ``x`` ("upload") or into ``x``
    ("copy in", ``ndarray.set``), or a download of ``x`` ("download")."""
    phase, _ = phase_and_site()
    nbytes = _nbytes(x)
    with _LOCK:
        for log in _COSTS:
            if kind in ("upload", "copy in"):  # a new device array, or host data copied into one
                log.uploads += 1
                log.bytes_uploaded += nbytes
                if kind == "upload":
                    log._add(phase, bytes_allocated=nbytes)
            else:
                log.bytes_downloaded += nbytes
                log._launch(phase, "", ".get()", [x], [], launches=0, read=nbytes, written=0, allocated=0,
                            atomics=0)


def _account_scatter(name, target, indices, values):
    """``ufunc.at(target, indices, values)``: one atomic read-modify-write of
    ``target`` per element scattered (the indices' broadcast size)."""
    arrays = [_host(i) for i in (indices if isinstance(indices, tuple) else (indices,))]
    arrays = [i for i in arrays if isinstance(i, np.ndarray)]
    if isinstance(_host(values), np.ndarray):
        arrays.append(_host(values))
    n = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
    n = int(np.prod(n))
    _account(name, (indices, values), None, written=n * target.itemsize, atomics=n)


def _account_sync(what, times):
    phase, site = phase_and_site()
    with _LOCK:
        for log in _COSTS:
            log._add(phase, syncs=times)
            log.sync_sites[(phase, f"{site} {what}")] += times


_BLOCKS_PATCHED = []  # (module, name, original) while a CostLog is active


def _patch_blocks():
    """Record how nbgpu cuts X while a CostLog is active: the row blocks of
    ``blocks.row_blocks`` and the pieces of stored values of the device's
    sparse sums (``sparse.stored_rows(X, lo, hi)``, one call a piece)."""
    from nbgpu._array import blocks, sparse

    def row_blocks(n_rows, *args, _original=blocks.row_blocks, **kwargs):
        out = _original(n_rows, *args, **kwargs)
        if _COSTS and kwargs.get("xp") is xp:  # the device's blocks
            with _LOCK:
                for log in _COSTS:
                    log.row_block_calls.append((n_rows, len(out)))
        return out

    def stored_rows(X, lo=0, hi=None, _original=sparse.stored_rows):
        if _COSTS and hi is not None:
            with _LOCK:
                for log in _COSTS:
                    log.nnz_pieces[(X.shape, X.nnz)] += 1
                    if log.x_elements and hi - lo > 1:
                        log._x_sizes.add(hi - lo)  # the piece's arrays of one entry per stored value
        return _original(X, lo, hi)

    for name, wrapper, original in (("row_blocks", row_blocks, blocks.row_blocks),
                                    ("stored_rows", stored_rows, sparse.stored_rows)):
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").startswith("nbgpu") and getattr(module, name, None) is original:
                _BLOCKS_PATCHED.append((module, name, original))
                setattr(module, name, wrapper)


def _unpatch_blocks():
    while _BLOCKS_PATCHED:
        module, name, original = _BLOCKS_PATCHED.pop()
        setattr(module, name, original)


@contextlib.contextmanager
def count_costs(X=None):
    """Count the device costs (:class:`CostLog`) of the block; ``X``: the device
    array or sparse matrix whose passes ``x_reads`` counts. Outside such a
    block the stand-in pays one test of an empty list per operation."""
    log = CostLog()
    if X is not None:
        log.register_x(X)
    with _LOCK:
        _COSTS.append(log)
        if len(_COSTS) == 1:
            _patch_blocks()
    try:
        yield log
    finally:
        with _LOCK:
            _COSTS.remove(log)
            if not _COSTS:
                _unpatch_blocks()


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
        result = _wrap(op(a, b))
        if _COSTS:
            _account(name, (self, other), result)
        return result

    method.__name__ = name
    return method


def _inplace(op, name):
    def method(self, other):
        _refuse_host((other,), name)
        op(self._a, _host(other))
        if _COSTS:
            _account(name, (self, other), None, written=self.nbytes)
        return self

    method.__name__ = name
    return method


def _unary(op, name):
    def method(self):
        result = _wrap(op(self._a))
        if _COSTS:
            _account(name, self, result)
        return result

    method.__name__ = name
    return method


def _method(name, syncs=False):
    """ndarray method ``name`` on the device (host operands refused)."""

    def method(self, *args, **kwargs):
        _refuse_host(args, f"ndarray.{name}")
        _refuse_host(tuple(kwargs.values()), f"ndarray.{name}")
        if syncs:
            _sync(f".{name}()")
        result = _wrap_like(getattr(self._a, name)(*_unwrap(args), **_unwrap(kwargs)), (self,))
        if _COSTS:  # a method giving None worked in place (fill, sort)
            _account(f".{name}", (self, args, kwargs), result, written=self.nbytes if result is None else 0)
        return result

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
            if _COSTS:
                _account(f"numpy.{ufunc.__name__}", inputs, None, written=sum(o.nbytes for o in out))
            return out[0] if len(out) == 1 else out
        if _COSTS and method == "at":
            _account_scatter(f"numpy.{ufunc.__name__}.at", inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None)
            return None
        result = _wrap(result)
        if _COSTS:
            _account(f"numpy.{ufunc.__name__}", inputs, result)
        return result

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host(args, f"numpy.{func.__name__}")
        _refuse_host(tuple(kwargs.values()), f"numpy.{func.__name__}")
        result = _wrap_like(func(*_unwrap(args), **_unwrap(kwargs)), args)
        if _COSTS:
            _account(f"numpy.{func.__name__}", (args, kwargs), result)
        return result

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
        result = _wrap(self._a[_index_key(key)])
        if _COSTS:  # a view launches nothing; a gather reads what it gathers and its indices
            _account("getitem", (self, key), result, read=_nbytes(result) + sum(map(_nbytes, _operands(key, []))))
        return result

    def __setitem__(self, key, value):
        hkey = _index_key(key)
        self._a[hkey] = _host(value)  # host values are uploaded, as cupy does
        if _COSTS:
            target = self._a[hkey]
            written = target.nbytes if isinstance(target, np.ndarray) else self.itemsize
            _account("setitem", (value, key), None, written=written)

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
        if _COSTS:
            _account_transfer("download", self)
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
        if _COSTS:
            _account_transfer("copy in", self)

    def view(self, dtype=None):
        return DeviceArray(self._a.view() if dtype is None else self._a.view(dtype))

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        result = _wrap_like(self._a.astype(dtype, order=order, copy=copy), (self,))
        if _COSTS:
            _account(".astype", self, result)
        return result

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


_NO_KERNEL = {"empty", "empty_like"}  # allocations only


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
            result = DeviceArray(np.array(result, copy=True))  # an upload copies
            if _COSTS:
                _account_transfer("upload", result)
            return result
        result = _wrap_like(result, args)
        if _COSTS:
            if name == "take":  # a gather reads what it gathers and its indices (as ``getitem``)
                indices = args[1] if len(args) > 1 else kwargs["indices"]
                _account(name, (args, kwargs), result, read=_nbytes(result) + _nbytes(indices), gather=True)
            else:
                _account(name, (args, kwargs), result, launches=0 if name in _NO_KERNEL else 1)
        return result

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
        result = _wrap(np.asarray(_unwrap(a), dtype=dtype, order=order))
        if _COSTS:
            _account("asarray", a, result)
        return result
    _upload()
    result = DeviceArray(np.array(a, dtype=dtype, order=order or "K", copy=True))
    if _COSTS:
        _account_transfer("upload", result)
    return result


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
        if _COSTS:
            self._account_init(arg1, copy)

    def _account_init(self, arg1, copy):
        name = f"{self.format}_matrix()"
        if sp.issparse(arg1):
            _account_transfer("upload", self)
        elif isinstance(arg1, _CompressedMatrix):
            if arg1._m is not self._m or copy:  # a conversion or a copy
                _account(name, arg1, self, allocated=_nbytes(self), written=_nbytes(self), views_of_x=True)
        elif isinstance(arg1, tuple) and len(arg1) == 3:  # index arrays of another dtype are converted
            changed = [(old, new) for old, new in zip(arg1[1:], (self._m.indices, self._m.indptr))
                       if old.dtype != new.dtype]
            if changed:
                nbytes = sum(new.nbytes for _, new in changed)
                _account(name, [old for old, _ in changed], None, launches=len(changed), allocated=nbytes,
                         written=nbytes)
            if any(_root(b) is _root(_host(arg1[0])) for b in (self._m.data,)):
                _account(name, arg1[0], self, launches=0, allocated=0, views_of_x=True, x_read=0.0)
        else:  # an empty matrix of a shape: its indptr filled
            _account(name, (), self)

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
            if _COSTS:  # one pass over the indices
                _account("has_canonical_format", self.indices, None, allocated=0)
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
            if _COSTS:
                _account("has_sorted_indices", self.indices, None, allocated=0)
            self._flags["sorted"] = _in_order(self._m, strictly=False)
        return self._flags["sorted"]

    @has_sorted_indices.setter
    def has_sorted_indices(self, value):
        self._flags["sorted"] = bool(value)

    def sum_duplicates(self):
        if self.has_canonical_format:
            return
        _sync("sum_duplicates (new number of stored values)")
        if _COSTS:
            _account("sum_duplicates", self, None, allocated=_nbytes(self), written=_nbytes(self))
        self._m.sum_duplicates()
        self._flags.update(canonical=True, sorted=True)

    def eliminate_zeros(self):
        _sync("eliminate_zeros (kept number of stored values)")
        if _COSTS:
            _account("eliminate_zeros", self, None, allocated=_nbytes(self), written=_nbytes(self))
        self._m.eliminate_zeros()

    # ---- copies and conversions ------------------------------------------ #
    def _converted(self, name, out):
        """``out``, a copy or conversion of this matrix: one pass (cuSPARSE's csr2csc for a conversion)."""
        if _COSTS and out is not self:
            _account(name, self, out, allocated=_nbytes(out), written=_nbytes(out), views_of_x=True)
        return out

    def copy(self):
        return self._converted(".copy", self._new(self._m.copy(), self._flags))

    def astype(self, dtype, copy=True):
        if np.dtype(dtype).type not in _SPARSE_DTYPES:
            msg = "Only bool, float32, float64, complex64 and complex128 are supported"
            raise ValueError(msg)
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return self._converted(".astype", self._new(self._m.astype(dtype), self._flags))

    def asformat(self, format):
        if format is None or format == self.format:
            return self
        return getattr(self, f"to{format}")()

    def tocsr(self, copy=False):
        if self.format == "csr":
            return self.copy() if copy else self
        return self._converted(".tocsr", self._new(self._m.tocsr()))

    def tocsc(self, copy=False):
        if self.format == "csc":
            return self.copy() if copy else self
        return self._converted(".tocsc", self._new(self._m.tocsc()))

    def transpose(self, axes=None, copy=False):
        host = self._m.transpose(copy=copy)
        return self._new(host, self._flags)

    @property
    def T(self):
        return self.transpose()

    def get(self, stream=None):
        """A host scipy.sparse copy (cupyx's ``get``)."""
        _sync(".get()")
        if _COSTS:
            _account_transfer("download", self)
        return self._m.copy()

    def toarray(self, order=None):
        result = DeviceArray(self._m.toarray(order=order))
        if _COSTS:
            _account(".toarray", self, result)
        return result

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
        result = self._new(sp.csr_matrix(mat._m.max(axis=axis)), {})
        if _COSTS:
            _account(".max", mat, result, allocated=_nbytes(result), written=_nbytes(result))
        return result

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
        result = self._new(out.asformat(self.format), flags)
        if _COSTS:
            if _whole(minor) and isinstance(major, slice) and major.step in (None, 1):
                # cupyx: data and indices are views; one kernel makes the new indptr
                nbytes = result._m.indptr.nbytes
                _account("sparse row slice", self, result, read=nbytes, written=nbytes, allocated=nbytes,
                         views_of_x=True, x_read=0.0)
            else:
                _account("sparse index", (self, key), result, allocated=_nbytes(result), written=_nbytes(result),
                         views_of_x=True)
        return result

    # ---- products ---------------------------------------------------------- #
    def __matmul__(self, other):
        if owns(other) and isinstance(other, _CompressedMatrix):
            _sync("sparse @ sparse (result size)")
            result = self._new(sp.csr_matrix(self._m @ other._m))
            if _COSTS:
                _account("sparse @ sparse", (self, other), result, allocated=_nbytes(result),
                         written=_nbytes(result))
            return result
        if not isinstance(other, DeviceArray):
            msg = f"unsupported operand type for @ with a device sparse matrix: {type(other).__name__}"
            raise TypeError(msg)
        self.sum_duplicates()
        if other.ndim == 2 and not other._a.flags.f_contiguous:
            _fortran_copy(other.nbytes)  # cupyx: cupy.asfortranarray(other)
            if _COSTS:
                _account("asfortranarray (sparse @ dense)", other, None, allocated=other.nbytes, written=other.nbytes)
        result = self._m @ _host(other)
        result = DeviceArray(np.asfortranarray(result)) if result.ndim == 2 else _wrap(result)
        if _COSTS:
            # cupyx multiplies a CSC matrix as the transposed CSR product, which cuSPARSE
            # computes by scattering each stored value into every output column.
            columns = other.shape[1] if other.ndim == 2 else 1
            _account("sparse @ dense", (self, other), result,
                     atomics=self._m.data.size * columns if self.format == "csc" else 0)
        return result

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
    result = DeviceArray(np.empty(shape, dtype=dtype, order=order))
    if _COSTS:
        _account("empty", (), result, launches=0)
    return result


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
        if _COSTS:
            _account_scatter(name, a, indices, b)


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
