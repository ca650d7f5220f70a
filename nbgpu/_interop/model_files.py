"""Model files that are safe to load from anyone: arrays and a JSON header, no pickle.

A model file is a zip of ``.npy`` arrays (``model_archive.py``) with one member
``header``, UTF-8 JSON describing the estimator and listing every array with
its SHA-256 (``model_header.py``). A fitted model is fully determined by its
parameters, classes and statistics, so only those are stored (statistics that
are mostly zeros as their nonzero entries); the fitted parameters are derived
from the statistics after loading, and a loaded model can go on learning with
``partial_fit``.

Loading never executes code from the file and checks everything before it
builds anything: the archive's structure, the header, the arrays' declared
shapes and sizes against the header and against what the model's parameters,
classes and features imply (before any data is read), then the arrays'
checksums and values, last the parameters derived from them. Saving runs the
same checks but the last, so a file ``save`` writes is one ``load`` accepts.

The checksums are stored in the file they check: they detect accidental
corruption, not deliberate changes (whoever edits a file can recompute them).
"""

from __future__ import annotations

import contextlib
import functools
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._array import sums
from .._array.namespace import to_numpy
from .._array.threads import parallel_map
from .._estimator.base import _BaseNB
from .model_archive import Archive, ModelFileError, data_bytes, is_int, write_archive
from .model_header import (
    MAX_HEADER_BYTES,
    check_width,
    digest,
    estimator_class,
    estimator_from,
    estimator_spec,
    flatten,
    header_of,
    make_header,
    parse_header,
    unflatten,
)
from .vectorizer_settings import vectorizer_from_settings, vectorizer_settings
from .._estimator.scoring import check_fitted

__all__ = ["load", "save"]

# What a load may take without being told more: its memory is bounded by the
# bytes the file stores, not by the sizes it declares (zeros deflate 1000:1).
# Real models stay far below (benchmarks/model_file_cost.py measures them);
# a trusted larger one is opened with ``max_memory``.
MEMORY_FLOOR = 256 * 2**20
MEMORY_PER_FILE_BYTE = 64


class ModelFile(NamedTuple):
    """What a model file holds: the model, its vectorizer and the header."""

    model: _BaseNB
    vectorizer: object
    header: dict


class ModelInfo(NamedTuple):
    """What a model file's header says, with its labels, none of its statistics read: ``estimator`` is
    unfitted; ``statistics_bytes`` is the memory reading the statistics takes, as the header declares it."""

    estimator: _BaseNB
    classes: np.ndarray
    n_features: int
    statistics_bytes: int
    header: dict


def memory_needed(parsed, model_class):
    """Bytes a load of the file of header ``parsed`` holding a ``model_class`` takes at most, from the header alone:
    every array as read, statistics (stored sparse ones made dense) with the parameters derived from them, and
    statistics the model keeps sparse as its sparse layout (their parameters are derived as data asks for them)."""
    listed, stats = parsed.listed, parsed.header["stats"]
    top = stats.get("dict", {}) if isinstance(stats, dict) else {}
    kept = set()
    for name in model_class._traits.sparse_statistics:
        body = top[name].get("sparse") if isinstance(top.get(name), dict) else None
        if body and len(body["shape"]) == 2 and sums.stays_sparse(tuple(body["shape"]), listed[body["values"]].shape[0]):
            kept.add(body["values"])
    dense = layout = used = 0
    for kind, body in _statistics_arrays(stats):
        if kind == "array":
            dense += listed[body].nbytes
            used += listed[body].nbytes
            continue
        indices, values = listed[body["indices"]], listed[body["values"]]
        used += indices.nbytes + values.nbytes
        if body["values"] in kept:  # entries as read, a CSR and a CSC copy of them; per-column index and totals
            layout += 4 * (indices.nbytes + values.nbytes) + 24 * (body["shape"][1] + 1)
        else:
            dense += indices.nbytes + values.nbytes + data_bytes(values.dtype, body["shape"])
    others = sum(entry.nbytes for entry in listed.values()) - used  # labels, parameters
    return others + (1 + model_class._traits.derived_per_statistic) * dense + layout


def _statistics_arrays(node):
    """``(kind, body)`` of each array ("array" or "sparse") a checked statistics description uses."""
    kind, body = next(iter(node.items()))
    if kind == "dict":
        body = list(body.values())
    if kind in ("dict", "tuple", "list"):
        for value in body:
            yield from _statistics_arrays(value)
    elif kind == "estimator":  # a ColumnwiseNB's part: its parameters
        yield from _statistics_arrays(body["params"])
    elif kind in ("array", "sparse"):
        yield kind, body


def _check_memory(parsed, file_bytes, max_memory, where, model_class):
    """Raise a ModelFileError if loading the file ``where`` of ``file_bytes``, holding a ``model_class``, would take
    more than ``max_memory`` bytes (None: ``MEMORY_FLOOR`` or ``MEMORY_PER_FILE_BYTE`` per byte of the file,
    whichever is larger)."""
    needed = memory_needed(parsed, model_class)
    limit = max(MEMORY_FLOOR, MEMORY_PER_FILE_BYTE * file_bytes) if max_memory is None else max_memory
    if needed > limit:
        bound = "the default for its size" if max_memory is None else "max_memory"
        msg = (
            f"{where} stores {file_bytes} bytes but declares arrays whose loading takes up to {needed} bytes of "
            f"memory, more than {bound} allows ({limit} bytes); if you trust the file, allow {needed} bytes "
            f"(nbgpu.load's max_memory, the command line's --max-memory)"
        )
        raise ModelFileError(msg)


def _contents(parsed, resolve, *, statistics=True, core=False, budget=None):
    """``(unfitted model, its _become_fitted arguments, vectorizer)`` of a :class:`Parsed` header, checked, with arrays
    from ``resolve(kind, body)``. ``statistics=False`` skips the statistics and feature names; ``core=True`` loads no
    scikit-learn; ``budget(model class)`` raises if the load would take too much memory."""
    header, listed = parsed.header, parsed.listed
    n_features, dtype = header["n_features_in"], header["dtype"]
    if not is_int(n_features) or n_features < 1:
        raise ValueError(f"n_features_in must be a positive integer; got {n_features!r}")
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be float32 or float64; got {dtype!r}")
    check_width(n_features, parsed.stored)
    if budget is not None:  # before any array is read, parameters included
        budget(estimator_class(header["estimator"], "header entry 'estimator'", core=True))
    model = estimator_from(header, resolve, where="header entry 'estimator'", at="params", core=core)
    if "classes" not in listed:
        raise ValueError("there are no class labels ('classes')")
    classes = resolve("array", "classes")
    if classes.ndim != 1 or classes.shape[0] < 1:
        raise ValueError(f"classes must be a non-empty 1-D array; got shape {classes.shape}")
    if classes.shape[0] > 1 and not np.all(classes[1:] > classes[:-1]):
        raise ValueError("classes must be sorted and distinct")
    vectorizer = vectorizer_from_settings(header.get("vectorizer"), n_features, core=core, model=model)
    fitting = {"classes": classes, "n_features": n_features, "score_dtype": dtype}
    if not statistics:
        return model, fitting, vectorizer
    names = None
    if "feature_names_in" in listed:
        entry = listed["feature_names_in"]
        if entry.dtype.kind != "U" or entry.shape != (n_features,):
            raise ValueError(f"feature_names_in must be {n_features} strings; got {entry.dtype} of shape {entry.shape}")
        names = resolve("array", "feature_names_in").astype(object)
    k = classes.shape[0]
    # The layout first, on stand-ins: a file whose statistics do not fit its
    # classes and features is refused before their data is read.
    stand_ins = unflatten(header["stats"], _stand_ins(listed), "stats")
    model._check_statistics(stand_ins, k, n_features, feature_names=names, values=False)
    # The statistics the model keeps sparse (sums.py) are read as stored; unflatten has read the entries.
    entries = header["stats"].get("dict", {})
    kept = {entries[name]["sparse"]["values"] for name in model._traits.sparse_statistics if "sparse" in entries.get(name, {})}
    stats = unflatten(header["stats"], lambda kind, body: resolve(kind, body, sparse=kind == "sparse" and body["values"] in kept), "stats")
    model._check_statistics(stats, k, n_features, feature_names=names, values=True)
    return model, {**fitting, "stats": stats, "feature_names": names}, vectorizer


def _check_parameters(model, part=""):
    """Raise ValueError if a parameter ``model`` derived holds NaN or +infinity (a ColumnwiseNB's parts too)."""
    model._derive_if_lazy()
    state = model.__dict__
    for name in state.get("_derived_") or ():
        if name == "estimators_":  # a ColumnwiseNB's fitted parts
            for part_name, fitted in zip(state["_part_names_"], state["estimators_"]):
                _check_parameters(fitted, f"{part}part {part_name!r}: ")
            continue
        stack = [state[name]]
        while stack:
            value = stack.pop()
            if isinstance(value, (list, tuple)):
                stack.extend(value)
            elif isinstance(value, np.ndarray) and value.dtype.kind == "f" and (np.isnan(value).any() or np.isposinf(value).any()):
                msg = f"{part}parameter {name!r} derived from the statistics holds NaN or +infinity (the model would predict NaN)"
                raise ValueError(msg)


def _outcome(read):
    """``read`` returning ``(array, None)``, or ``(None, error)`` for a ModelFileError."""

    def attempt(key):
        try:
            return read(key), None
        except ModelFileError as exc:
            return None, exc

    return attempt


def _raised(value, error):
    """``value``, or raise ``error``: an :func:`_outcome` undone."""
    if error:
        raise error
    return value


def _stand_ins(listed):
    """A ``resolve`` giving arrays of the declared dtypes and shapes that take no memory."""

    def resolve(kind, body):
        if kind == "array":
            return listed[body].stand_in()
        # A sparse array's members: 1-D integer indices and as many values, no more than its size.
        indices, values = listed[body["indices"]], listed[body["values"]]
        size = math.prod(body["shape"])
        if indices.dtype.kind not in "iu" or len(indices.shape) != 1 or values.shape != indices.shape or indices.shape[0] > size:
            msg = (
                f"sparse array of shape {body['shape']} has indices {indices.dtype} of shape {indices.shape} "
                f"and values of shape {values.shape}; expected 1-D integer indices and as many values, at most {size}"
            )
            raise ValueError(msg)
        return values.stand_in(tuple(body["shape"]))

    return resolve


def _file_arrays(archive, listed, where):
    """A ``resolve`` reading the arrays of an open model file when asked for, checked against ``listed``."""

    def read(key, member=None):
        entry = listed[key]
        array = archive.read(key, entry.dtype, entry.shape, member=member)
        if digest(array) != entry.sha256:
            msg = f"{where} is corrupted: array {key!r} does not match its SHA-256 checksum"
            raise ModelFileError(msg)
        return array

    def resolve(kind, body, *, sparse=False):
        if kind == "array":
            return read(body)
        # Their layout was checked on stand-ins. Opened here, then read (inflated,
        # hashed) on two threads (Archive.open says why); a failure is the first
        # member's, as if read one by one.
        keys = (body["indices"], body["values"])
        with contextlib.ExitStack() as stack:
            opened = [_outcome(lambda k: stack.enter_context(archive.open(k)))(key) for key in keys]  # one each
            read_opened = _outcome(lambda pair: read(pair[0], _raised(*pair[1])))
            (indices, error), (values, second) = parallel_map(read_opened, zip(keys, opened), blas=False)
        if error or second:  # exceptions are true
            raise error or second
        shape = tuple(body["shape"])
        size = math.prod(shape)
        if indices.size and (indices[0] < 0 or indices[-1] >= size or not np.all(indices[1:] > indices[:-1])):
            raise ModelFileError(f"{where}: inconsistent model file (sparse array {body['values']!r} has indices out of order or of range)")
        # The shape is within MAX_ARRAY_ELEMENTS (parse_header), yet need not
        # fit in this machine's memory: that too is an error about the file.
        try:
            if sparse and len(shape) == 2 and sums.stays_sparse(shape, indices.shape[0]):
                return sums.from_entries(indices, values, shape)
            dense = np.zeros(shape, dtype=values.dtype)
            dense.reshape(-1)[indices] = values
        except MemoryError as exc:
            msg = f"{where}: not enough memory for sparse array {body['values']!r} of shape {list(shape)} ({size} elements)"
            raise ModelFileError(msg) from exc
        return dense

    return resolve


def save(model, path, *, vectorizer=None, metadata=None):
    """Save a fitted model to one file that is safe to share (no pickle).

    The file holds the estimator class, its parameters, the class labels, the
    model's statistics and, optionally, the settings of the
    ``HashingVectorizer`` that turns text into its features. It is written
    under a temporary name and renamed, so it is never left half-written.
    The fitted parameters are not stored (nor computed): they are derived
    from the statistics after loading.

    Parameters
    ----------
    model : fitted nbgpu estimator
        Fitted on any namespace and device; arrays are stored on the host.
    path : str or path-like
        Where to write (any file name; ``.nbgpu`` is customary).
    vectorizer : nbgpu.text.HashingVectorizer, sklearn.feature_extraction.text.HashingVectorizer or dict, optional
        Stored as its settings (a dict: its parameters, the others at their
        defaults); :func:`load` rebuilds one with the same
        parameters and output (nbgpu's, whichever was saved). Only
        settings :func:`load` accepts can be stored: text content (not file
        names), scikit-learn's token patterns, n-grams up to 10, common text
        encodings, and the model's number of features.
    metadata : dict, optional
        JSON-serialisable information kept in the header (e.g. how the
        training file was read).

    Returns
    -------
    path : pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        If the model could not be loaded back from the file, e.g. its
        statistics hold NaN or infinity; nothing is written then.
    TypeError
        If a parameter, the labels, the vectorizer or ``metadata`` cannot be
        stored without pickle.

    Examples
    --------
    >>> import numpy as np, nbgpu, tempfile, os
    >>> X, y = np.array([[1, 0], [0, 2], [3, 1]]), np.array(["spam", "ham", "spam"])
    >>> model = nbgpu.MultinomialNB().fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "model.nbgpu")
    >>> _ = nbgpu.save(model, path)
    >>> nbgpu.load(path).predict(X).tolist()
    ['spam', 'ham', 'spam']
    """
    if not isinstance(model, _BaseNB):
        inner = getattr(model, "estimator_", None)  # a meta-estimator (SemiSupervisedNB): its fitted model is saved
        hint = " (save its fitted model: nbgpu.save(model.estimator_, path))" if isinstance(inner, _BaseNB) else ""
        msg = f"`model` must be an nbgpu estimator; got {type(model).__name__}{hint}."
        raise TypeError(msg)
    if metadata is not None and not isinstance(metadata, dict):
        msg = f"`metadata` must be a dict (a JSON object); got {type(metadata).__name__}."
        raise TypeError(msg)
    check_fitted(model)
    arrays, dense = {}, {}
    spec = estimator_spec(model, "param", arrays, where="save")
    stats = flatten(model._stats, "stats", arrays, sparse=dense)
    classes = np.asarray(to_numpy(model.classes_))
    if classes.dtype == object:
        msg = "`classes_` holds Python objects; only labels of a numpy dtype (numbers, strings) can be saved."
        raise TypeError(msg)
    arrays["classes"] = classes
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        arrays["feature_names_in"] = np.asarray(names, dtype=str)
    n_features = int(model.n_features_in_)
    raw = make_header(arrays, **spec, n_features_in=n_features, dtype=model._fit_dtype_, stats=stats,
                      vectorizer=vectorizer_settings(vectorizer, n_features, model=model), metadata=metadata or {})
    path = Path(path)
    try:
        _check_writable(raw, arrays, dense)
    except (ValueError, TypeError) as exc:
        msg = f"{path} was not written: the model file would not load ({exc})"
        raise ValueError(msg) from exc
    write_archive(path, {"header": np.frombuffer(raw, dtype=np.uint8), **arrays})
    return path


def _check_writable(raw, arrays, dense):
    """Raise unless the file of header ``raw`` and ``arrays`` passes load's checks."""
    if len(raw) > MAX_HEADER_BYTES:
        raise ValueError(f"its header takes {len(raw)} bytes; at most {MAX_HEADER_BYTES} are allowed (large metadata?)")
    parsed = parse_header(raw, arrays, "the model file")
    # The same checks, no scikit-learn, on the arrays as loading would see them (sparse ones whole).
    _contents(parsed, lambda kind, body, sparse=False: arrays[body] if kind == "array" else dense[body["values"]], core=True)


@contextlib.contextmanager
def _checked(where, *, unexpected=()):
    """What the block finds wrong with the file as a ModelFileError naming the file (exceptions of the types
    ``unexpected`` too, with their type)."""
    try:
        yield
    except ModelFileError:
        raise
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"{where}: inconsistent model file ({exc})") from exc
    except MemoryError as exc:  # sizes within the bounds, but not within this machine's memory
        raise ModelFileError(f"{where}: not enough memory to load it ({exc or 'MemoryError'})") from exc
    except unexpected as exc:
        raise ModelFileError(f"{where}: inconsistent model file ({type(exc).__name__}: {exc})") from exc


def _read_contents(path, max_memory=None, **options):
    """``(where, parsed header, (model, fitting, vectorizer))`` of the model file ``path`` (see ``_contents``); its
    memory bounded as :func:`load` says."""
    where = str(path)
    with Archive(path) as archive:
        parsed = header_of(archive, where)
        resolve = _file_arrays(archive, parsed.listed, where)
        budget = functools.partial(_check_memory, parsed, archive.size, max_memory, where)
        with _checked(where):
            return where, parsed, _contents(parsed, resolve, budget=budget, **options)


def read_model_file(path, *, core=False, max_memory=None):
    """Load a model file into a :class:`ModelFile`; ``core`` as for ``_contents`` (the command line), ``max_memory``
    as for :func:`load`. Raises ValueError with a one-line message naming the file for anything that is not a
    complete, consistent nbgpu model file, or a larger one than it may be."""
    where, parsed, (model, fitting, vectorizer) = _read_contents(path, max_memory, core=core)
    # The statistics passed every check: any failure now means the file contradicts itself. The parameters are
    # derived now (deferred k × d ones at first use) and checked: checked statistics can still overflow into NaN.
    with _checked(where, unexpected=Exception), np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        model._become_fitted(**fitting, lazy=True)
        _check_parameters(model)
    return ModelFile(model, vectorizer, parsed.header)


def read_model_info(path, *, core=False):
    """What the header of a model file says, and its labels (:class:`ModelInfo`), all checked; the statistics are
    never read, so this is cheap for any size of model."""
    _, parsed, (model, fitting, _) = _read_contents(path, statistics=False, core=core)
    return ModelInfo(model, fitting["classes"], fitting["n_features"], parsed.statistics_bytes, parsed.header)


def load(path, *, return_vectorizer=False, max_memory=None):
    """Load a model saved with :func:`save`; never executes code from the file.

    Parameters
    ----------
    path : str or path-like
    return_vectorizer : bool, default=False
        Also return the stored ``HashingVectorizer`` (None if there is none).
    max_memory : int, optional
        The most bytes of memory the load may take, as the file's header
        declares its arrays (statistics, and the parameters derived from
        them). By default 256 MiB or 64 times the file's size, whichever is
        larger: far above what real models need (their statistics compress
        little), far below what a small file of compressed zeros can
        declare. Raise it to open a large file you trust.

    Returns
    -------
    model : nbgpu estimator
        Fitted, with numpy arrays (move it with ``model.to_device(like)``);
        it can be updated further with ``partial_fit``.
    vectorizer : nbgpu.text.HashingVectorizer or None
        Only when ``return_vectorizer=True``.

    Raises
    ------
    ValueError
        If the file is missing, truncated, corrupted (an array does not
        match the SHA-256 checksum stored with it), not an nbgpu model file,
        inconsistent (e.g. statistics that do not fit its classes and
        features, are not finite, overflow in their totals or make
        parameters that are not numbers), declares an array of more than
        ``MAX_ARRAY_ELEMENTS`` (2**30) elements or more than 2**22 features
        with fewer than one stored statistic per 1024 of them, declares
        arrays that take more memory than ``max_memory`` (a small file
        cannot make a load take gigabytes: the error says how much it
        would take), holds object arrays or vectorizer
        settings nbgpu does not vouch for, or is of a newer format version
        than this nbgpu reads. The checksums detect accidental corruption
        only: they are stored in the file, so whoever edits it can update
        them.

    Examples
    --------
    >>> import nbgpu
    >>> model = nbgpu.load("model.nbgpu")  # doctest: +SKIP
    """
    if max_memory is not None and (not is_int(max_memory) or max_memory < 1):
        msg = f"`max_memory` must be a positive int (bytes) or None; got {max_memory!r}."
        raise ValueError(msg)
    loaded = read_model_file(path, max_memory=max_memory)
    return (loaded.model, loaded.vectorizer) if return_vectorizer else loaded.model
