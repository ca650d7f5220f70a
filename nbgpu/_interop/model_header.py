"""The JSON header of a model file: what it may say, and how values are written in it.

The header describes everything but the arrays' data: the format and its
version, the estimator class and parameters (a ColumnwiseNB's parts alike),
the number of features, the score dtype, the statistics as a tree whose
leaves name arrays, the vectorizer settings, free metadata, and the list of
arrays with the dtype, shape and SHA-256 of each.

A value is written as a one-key JSON object: ``{"value": 1.0}``,
``{"array": "param.alpha"}``, ``{"tuple": [...]}``, ``{"list": [...]}``,
``{"dict": {...}}``, ``{"slice": [start, stop, step]}``,
``{"estimator": {"estimator": "GaussianNB", "params": ...}}``, and, in
statistics only (format 2), ``{"sparse": {"shape": [...], "indices": key,
"values": key}}``: an array stored as its nonzero entries, ``values`` at
the flat (C-order) positions ``indices``.

Reading a header never builds anything: :func:`parse_header` checks it;
:func:`unflatten` turns a described value back into Python values.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
from typing import NamedTuple

import numpy as np

from .._array.namespace import is_array, to_numpy
from .._array import sums
from .._version import __version__
from .model_archive import (
    MAX_FILE_DATA_BYTES,
    ModelFileError,
    data_bytes,
    is_int,
    plain_dtype,
    plain_shape,
)
from .._estimator.params import validate_params

FORMAT = "nbgpu-model"
# 1: every array stored whole. 2: statistics may be stored sparse.
FORMAT_VERSION = 2
# The JSON header is small (no array data): a bound keeps parsing it cheap.
MAX_HEADER_BYTES = 16 * 2**20
# A sparse array is stored as int indices and values when that, with its
# second member (~300 bytes of zip and .npy headers), is smaller.
_MEMBER_OVERHEAD = 512
# The most elements any array of a model file may declare, a sparse one
# counted at its full size (what densifying it, or the d + 1 column index
# of a k × d one kept sparse, allocates): 1024 classes × 2**20 hashed
# features fit. More is refused before anything is allocated.
MAX_ARRAY_ELEMENTS = 2**30
# A model's per-feature arrays take O(n_features) memory whatever its file
# stores: a file wider than MAX_FREE_WIDTH features must store at least one
# statistic per WIDTH_PER_STORED of them (a hashed model trained on any real
# corpus does), so a few-kB file cannot make a load allocate gigabytes.
MAX_FREE_WIDTH = 2**22
WIDTH_PER_STORED = 1024


def flatten(value, key, arrays, *, sparse=None):
    """A JSON description of ``value``; its arrays go into ``arrays`` under ``key.*``. With a dict ``sparse``
    (statistics), arrays stored as their nonzero entries where smaller; ``sparse`` maps their values' keys to them."""
    from .._estimator.base import _BaseNB  # loaded by whoever saves a model

    if isinstance(value, _BaseNB):  # a part of a ColumnwiseNB
        return {"estimator": estimator_spec(value, key, arrays, where=f"`{key}`")}
    if isinstance(value, slice):  # a part's columns
        bounds = [v.item() if isinstance(v, np.generic) else v for v in (value.start, value.stop, value.step)]
        if not all(v is None or is_int(v) for v in bounds):
            msg = f"`{key}` is a slice with bounds {bounds}; only integer bounds can be saved in a model file."
            raise TypeError(msg)
        return {"slice": bounds}
    if isinstance(value, dict):
        return {"dict": {str(k): flatten(v, f"{key}.{k}", arrays, sparse=sparse) for k, v in value.items()}}
    if isinstance(value, (tuple, list)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [flatten(v, f"{key}.{i}", arrays, sparse=sparse) for i, v in enumerate(value)]}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if sums.is_sparse(value) and sparse is not None:  # statistics kept sparse: their entries
        whole, entries = value, sums.entries(value, _index_dtype(math.prod(value.shape)))
    elif is_array(value):
        whole = np.asarray(to_numpy(value))
        if whole.dtype == object:
            msg = f"`{key}` is an object array, which cannot be saved without pickle."
            raise TypeError(msg)
        entries = None if sparse is None else _sparse_parts(whole)
        if entries is None:
            key = _free_key(key, arrays)
            arrays[key] = whole
            return {"array": key}
    else:
        msg = f"`{key}` of type {type(value).__name__} cannot be saved in a model file."
        raise TypeError(msg)
    indices, values = (_free_key(f"{key}.{part}", arrays) for part in ("indices", "values"))
    arrays[indices], arrays[values] = entries
    sparse[values] = whole
    return {"sparse": {"shape": list(whole.shape), "indices": indices, "values": values}}


def _sparse_parts(a):
    """(flat indices, values) of the nonzero entries of ``a`` if storing them is smaller, else None.
    Nonzero by bit pattern, so -0.0 is kept and the array comes back bit for bit."""
    if a.dtype.kind not in "biuf" or a.ndim == 0:
        return None
    bits = a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a
    index_dtype = _index_dtype(a.size)
    if np.count_nonzero(bits) * (index_dtype.itemsize + a.dtype.itemsize) + _MEMBER_OVERHEAD >= a.nbytes:
        return None
    indices = np.flatnonzero(bits).astype(index_dtype)
    return indices, np.ravel(a)[indices]


def _index_dtype(size):
    """The dtype of the flat indices of the stored entries of an array of ``size``."""
    return np.dtype("<u4") if size <= 2**32 else np.dtype("<i8")


def _free_key(key, arrays):
    """``key``, or ``key#n`` if taken: part names may contain dots, so two paths can spell alike."""
    free, n = key, 1
    while free in arrays:
        free, n = f"{key}#{n}", n + 1
    return free


def digest(a):
    """SHA-256 (hex) of the bytes of ``a`` in C order."""
    return hashlib.sha256(np.ascontiguousarray(a).view(np.uint8).reshape(-1).data).hexdigest()


def estimator_class(name, where, *, core=False):
    """nbgpu's estimator class called ``name`` (``core=True``: its core class, no scikit-learn), else a
    ValueError. The models load here: reading a header alone needs none."""
    from .._models import model_class

    cls = model_class(name, core=core)
    if cls is None:
        msg = f"{where}: estimator {name!r} is not an nbgpu naive Bayes model"
        raise ValueError(msg)
    return cls


def estimator_spec(model, key, arrays, *, where):
    """The header's "estimator" and "params" of ``model`` (or a ColumnwiseNB's part); arrays under ``key.*``."""
    name = type(model).__name__
    if type(model) is not estimator_class(name, where, core=True) and type(model) is not estimator_class(name, where):
        msg = f"{where}: {type(model).__module__}.{name} is not nbgpu's own {name}, so it cannot be saved."
        raise ValueError(msg)
    params = {**model._params(), **model._fitted_params()}  # the parameters its statistics go with
    return {"estimator": name, "params": flatten(params, key, arrays)}


def make_header(arrays, **fields):
    """The header (UTF-8 JSON) of a model file of ``arrays``; ``fields`` from "estimator" to "metadata"."""
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nbgpu_version": __version__,
        **fields,
        "arrays": {k: {"dtype": a.dtype.str, "shape": list(a.shape), "sha256": digest(a)} for k, a in arrays.items()},
    }
    return json.dumps(header, allow_nan=True).encode("utf-8")


class Listed:
    """One array of the header's list: where it is described, dtype, shape, checksum."""

    __slots__ = ("dtype", "key", "sha256", "shape")

    def __init__(self, key, entry, where):
        self.key = key
        at = f"{where}: array {key!r} in the header's list"
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "sha256"}:
            raise ModelFileError(f"{at} is malformed")
        self.dtype = plain_dtype(entry["dtype"], at)
        self.shape = plain_shape(entry["shape"], at)
        _check_elements(self.shape, at)
        self.sha256 = entry["sha256"]
        if not (isinstance(self.sha256, str) and len(self.sha256) == 64):
            raise ModelFileError(f"{at} has no SHA-256 checksum")

    @property
    def nbytes(self):
        return data_bytes(self.dtype, self.shape)

    def stand_in(self, shape=None):
        """A read-only array of this dtype and ``shape`` (default: its own) that takes no memory."""
        return np.broadcast_to(np.zeros((), dtype=self.dtype), self.shape if shape is None else shape)


def _check_elements(shape, at):
    """Raise unless an array of ``shape`` (described at ``at``) is within ``MAX_ARRAY_ELEMENTS``."""
    size = math.prod(shape)
    if size > MAX_ARRAY_ELEMENTS:
        msg = f"{at} declares shape {list(shape)} ({size} elements), beyond the bound of {MAX_ARRAY_ELEMENTS} elements of an array in a model file"
        raise ModelFileError(msg)


class Parsed(NamedTuple):
    """A checked header: the JSON, its arrays (key -> :class:`Listed`) and what the statistics take."""

    header: dict
    listed: dict
    stored: int  # elements of the arrays the statistics use (a sparse one's members)
    statistics_bytes: int  # the memory reading the statistics takes


def header_of(archive, where):
    """The :class:`Parsed` header of an open model file (an :class:`Archive`)."""
    raw = archive.read("header", np.dtype(np.uint8), max_bytes=MAX_HEADER_BYTES) if "header" in archive.members else None
    if raw is None or raw.ndim != 1:
        raise ModelFileError(f"{where} is not an nbgpu model file (no nbgpu header)")
    return parse_header(raw.tobytes(), [name for name in archive.members if name != "header"], where)


def parse_header(raw, archive_names, where):
    """The :class:`Parsed` header of the file ``where``: ``raw`` its bytes, ``archive_names`` the other members."""
    foreign = f"{where} is not an nbgpu model file"
    try:
        header = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        raise ModelFileError(f"{foreign} (its header is not valid JSON: {exc!r})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ModelFileError(f"{foreign} (the header does not say format {FORMAT!r})")
    version = header.get("format_version")
    if not is_int(version) or version < 1:
        raise ModelFileError(f"{where}: invalid model format version {version!r}")
    if version > FORMAT_VERSION:
        msg = (
            f"{where} uses model format version {version} (written by nbgpu "
            f"{header.get('nbgpu_version', '?')}); this nbgpu {__version__} reads "
            f"versions up to {FORMAT_VERSION}: upgrade nbgpu to load it"
        )
        raise ModelFileError(msg)
    required = ("estimator", "params", "n_features_in", "dtype", "stats", "arrays")
    missing = [key for key in required if key not in header]
    if missing:
        raise ModelFileError(f"{where}: inconsistent model file (the header has no {missing})")
    if not isinstance(header.get("metadata", {}), dict):
        raise ModelFileError(f"{where}: inconsistent model file (the header's metadata is not a JSON object)")
    listed = header["arrays"]
    if not isinstance(listed, dict) or set(listed) != set(archive_names):
        raise ModelFileError(f"{where} is corrupted: its arrays do not match the list in its header")
    listed = {key: Listed(key, entry, where) for key, entry in listed.items()}
    return Parsed(header, listed, *_check_references(header, listed, version, where))


def _check_references(header, listed, version, where):
    """(elements, bytes) of the statistics' arrays; raise unless each listed array is used once, within bounds."""
    params, params_bytes = _arrays_of(header["params"], listed, f"{where}: header entry 'params'", sparse=False)
    stats, stats_bytes = _arrays_of(header["stats"], listed, f"{where}: header entry 'stats'", sparse=version >= 2)
    labels = [key for key in ("classes", "feature_names_in") if key in listed]
    used = collections.Counter(labels + params + stats)
    if max(used.values(), default=1) > 1 or set(used) != set(listed):
        repeated = sorted(k for k, n in used.items() if n > 1)
        unused = sorted(set(listed) - set(used))
        msg = f"{where}: inconsistent model file (arrays used twice {repeated}, or never {unused})"
        raise ModelFileError(msg)
    total = sum(listed[key].nbytes for key in labels) + params_bytes + stats_bytes
    if total > MAX_FILE_DATA_BYTES:
        msg = f"{where} declares {total} bytes of arrays, beyond the bound of {MAX_FILE_DATA_BYTES} for a model file"
        raise ModelFileError(msg)
    return sum(math.prod(listed[key].shape) for key in stats), stats_bytes


def check_width(n_features, stored):
    """Raise unless ``n_features`` is within what ``stored`` statistics allow (``MAX_FREE_WIDTH``)."""
    if n_features > MAX_FREE_WIDTH and n_features > WIDTH_PER_STORED * stored:
        msg = (
            f"n_features_in is {n_features} but the statistics store {stored} values: beyond "
            f"{MAX_FREE_WIDTH} features a model file must store one per {WIDTH_PER_STORED} features at least"
        )
        raise ValueError(msg)


def _arrays_of(node, listed, where, *, sparse):
    """(keys of the arrays a described value uses, bytes they take to load), its structure checked.
    A sparse array (allowed if ``sparse``) counts its members and its whole size."""
    keys, total, stack = [], 0, [node]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or len(node) != 1:
            raise ModelFileError(f"{where}: malformed entry in the header")
        ((kind, body),) = node.items()
        if kind == "dict" and isinstance(body, dict):
            stack.extend(body.values())
        elif kind in ("tuple", "list") and isinstance(body, list):
            stack.extend(body)
        elif kind == "estimator" and isinstance(body, dict) and "params" in body:
            stack.append(body["params"])
        elif kind == "array":
            if not isinstance(body, str):
                raise ModelFileError(f"{where}: malformed array in the header")
            keys.append(body)
            total += _listed(listed, body, where).nbytes
        elif kind == "sparse":
            if not (isinstance(body, dict) and set(body) == {"shape", "indices", "values"}):
                raise ModelFileError(f"{where}: malformed sparse array in the header")
            plain_shape(body["shape"], f"{where}: sparse array")
            if not (isinstance(body["indices"], str) and isinstance(body["values"], str)):
                raise ModelFileError(f"{where}: malformed sparse array in the header")
            if not sparse:
                msg = f"{where}: inconsistent model file (a sparse array outside the statistics of format 2)"
                raise ModelFileError(msg)
            indices, values = (_listed(listed, body[k], where) for k in ("indices", "values"))
            _check_elements(body["shape"], f"{where}: sparse array {values.key!r}")
            keys += [indices.key, values.key]
            total += data_bytes(values.dtype, body["shape"]) + indices.nbytes + values.nbytes
    return keys, total


def _listed(listed, key, where):
    if key not in listed:
        raise ModelFileError(f"{where}: inconsistent model file (array {key!r} is not in the header's list)")
    return listed[key]


def unflatten(node, resolve, where):
    """The value ``node`` describes; ``resolve(kind, body)`` gives each array ("array" or "sparse")."""
    kind, body = next(iter(node.items())) if isinstance(node, dict) and len(node) == 1 else (None, None)
    if kind == "dict" and isinstance(body, dict):
        return {k: unflatten(v, resolve, f"{where}.{k}") for k, v in body.items()}
    if kind in ("tuple", "list") and isinstance(body, list):
        items = [unflatten(v, resolve, f"{where}.{i}") for i, v in enumerate(body)]
        return tuple(items) if kind == "tuple" else items
    # An int within int64 (JSON allows any size), which numpy and every parameter check can take.
    if kind == "value" and (body is None or isinstance(body, (bool, float, str)) or (isinstance(body, int) and -(2**63) <= body < 2**63)):
        return body
    if kind in ("array", "sparse"):
        return resolve(kind, body)
    if kind == "slice" and isinstance(body, list) and len(body) == 3 and all(v is None or is_int(v) for v in body):
        return slice(*body)
    if kind == "estimator" and isinstance(body, dict) and set(body) == {"estimator", "params"}:
        return estimator_from(body, resolve, where=f"header entry {where!r}", at=f"{where}.params")
    msg = f"malformed entry {where!r} in the header"
    raise ValueError(msg)


def estimator_from(spec, resolve, *, where, at, core=False):
    """The unfitted estimator ``spec`` describes: only nbgpu's classes, parameters checked.
    ``where`` starts the error messages; ``at`` is where the parameters are."""
    cls = estimator_class(spec["estimator"], where, core=core)
    params = unflatten(spec["params"], resolve, at)
    expected = set(cls._get_param_names())
    if not isinstance(params, dict) or set(params) != expected:
        seen = sorted(params) if isinstance(params, dict) else params
        msg = f"{where}: parameters {seen} are not those of {cls.__name__} {sorted(expected)}"
        raise ValueError(msg)
    model = cls(**params)
    try:
        validate_params(model)
    except (TypeError, ValueError) as exc:
        msg = f"{where}: invalid parameters of {cls.__name__}: {exc}"
        raise ValueError(msg) from exc
    return model
