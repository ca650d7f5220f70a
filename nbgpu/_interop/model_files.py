"""Model files that are safe to share: arrays and a JSON header, no pickle.

A model file is a numpy ``.npz`` archive (a zip of ``.npy`` arrays) with one
member ``header``: UTF-8 JSON holding the format name and version, the nbgpu
version, the estimator class, its parameters (a ColumnwiseNB's parts are
described alike, class and parameters), the arrays' checksums and
optional vectorizer settings. The other members are plain numeric (or
string) arrays: the labels, the feature names and the model's merged
statistics.

A fitted naive Bayes model is fully determined by its parameters, its
classes and its statistics, so only those are stored; loading re-runs the
model's own ``_finalize`` on them. There is one source of truth, and a loaded
model can go on learning with ``partial_fit``.

Loading never executes code from the file: arrays are read with
``allow_pickle=False``, the estimator class must be one of nbgpu's own, and
parameters and vectorizer settings come back as JSON values only.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._array.namespace import get_namespace, is_array, to_numpy
from .._estimator.base import _BaseNB
from .._models import MODELS
from .._version import __version__
from .atomic_files import atomic_output

FORMAT = "nbgpu-model"
FORMAT_VERSION = 1

__all__ = ["load", "save"]


class ModelFile(NamedTuple):
    """What a model file holds: the model, its vectorizer and the header."""

    model: _BaseNB
    vectorizer: object
    header: dict


# --------------------------------------------------------------------------- #
# Nested values <-> (JSON tree, flat arrays)
# --------------------------------------------------------------------------- #
def _flatten(value, key, arrays):
    """A JSON description of ``value``; its arrays go into ``arrays`` under ``key.*``."""
    if isinstance(value, _BaseNB):  # a part of a ColumnwiseNB
        return {"estimator": _estimator_spec(value, key, arrays, where=f"`{key}`")}
    if isinstance(value, slice):  # a part's columns
        bounds = [v.item() if isinstance(v, np.generic) else v for v in (value.start, value.stop, value.step)]
        if not all(map(_is_int_or_none, bounds)):
            msg = f"`{key}` is a slice with bounds {bounds}; only integer bounds can be saved in a model file."
            raise TypeError(msg)
        return {"slice": bounds}
    if isinstance(value, dict):
        return {"dict": {str(k): _flatten(v, f"{key}.{k}", arrays) for k, v in value.items()}}
    if isinstance(value, (tuple, list)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [_flatten(v, f"{key}.{i}", arrays) for i, v in enumerate(value)]}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if is_array(value):
        host = np.asarray(to_numpy(value))
        if host.dtype == object:
            msg = f"`{key}` is an object array, which cannot be saved without pickle."
            raise TypeError(msg)
        key = _free_key(key, arrays)
        arrays[key] = host
        return {"array": key}
    msg = f"`{key}` of type {type(value).__name__} cannot be saved in a model file."
    raise TypeError(msg)


def _unflatten(node, arrays, where):
    if not isinstance(node, dict) or len(node) != 1:
        msg = f"malformed entry {where!r} in the header"
        raise ValueError(msg)
    (kind, body), = node.items()
    if kind == "dict" and isinstance(body, dict):
        return {k: _unflatten(v, arrays, f"{where}.{k}") for k, v in body.items()}
    if kind in ("tuple", "list") and isinstance(body, list):
        items = [_unflatten(v, arrays, f"{where}.{i}") for i, v in enumerate(body)]
        return tuple(items) if kind == "tuple" else items
    if kind == "value" and (body is None or isinstance(body, (bool, int, float, str))):
        return body
    if kind == "array" and isinstance(body, str) and body in arrays:
        return arrays[body]
    if kind == "slice" and isinstance(body, list) and len(body) == 3 and all(map(_is_int_or_none, body)):
        return slice(*body)
    if kind == "estimator" and isinstance(body, dict) and set(body) == {"estimator", "params"}:
        return _estimator_from(body, arrays, where=f"header entry {where!r}", at=f"{where}.params")
    msg = f"malformed entry {where!r} in the header"
    raise ValueError(msg)


def _is_int_or_none(value):
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _free_key(key, arrays):
    """``key``, or ``key#n`` if taken: part names may contain dots, so two paths can spell alike."""
    free, n = key, 1
    while free in arrays:
        free, n = f"{key}#{n}", n + 1
    return free


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).view(np.uint8).reshape(-1).data).hexdigest()


def _result_dtype_name(model):
    """"float32" if the model was fitted on float32 input, else "float64" (fit records it)."""
    return model._fit_dtype_


# --------------------------------------------------------------------------- #
# Vectorizer settings
# --------------------------------------------------------------------------- #
def _vectorizer_settings(vectorizer):
    from sklearn.feature_extraction.text import HashingVectorizer

    if vectorizer is None:
        return None
    if type(vectorizer) is not HashingVectorizer:
        msg = (
            "`vectorizer` must be a sklearn.feature_extraction.text.HashingVectorizer "
            f"(it is stateless, so its settings define it); got {type(vectorizer).__name__}."
        )
        raise TypeError(msg)
    settings = {}
    for name, value in vectorizer.get_params().items():
        if name == "dtype":
            value = np.dtype(value).name
        elif callable(value):
            msg = f"vectorizer parameter `{name}` is a callable, which a model file cannot hold (no pickle)."
            raise TypeError(msg)
        elif isinstance(value, tuple):
            value = list(value)
        settings[name] = value
    return settings


def _vectorizer_from(settings, where):
    from sklearn.feature_extraction.text import HashingVectorizer

    if settings is None:
        return None
    known = set(HashingVectorizer().get_params())
    if not isinstance(settings, dict) or not set(settings) <= known:
        msg = f"{where}: unknown vectorizer settings {sorted(set(settings) - known) if isinstance(settings, dict) else settings!r}"
        raise ValueError(msg)
    kwargs = dict(settings)
    if "ngram_range" in kwargs:
        kwargs["ngram_range"] = tuple(kwargs["ngram_range"])
    if "dtype" in kwargs:
        if kwargs["dtype"] not in ("float32", "float64"):
            msg = f"{where}: vectorizer dtype must be float32 or float64; got {kwargs['dtype']!r}"
            raise ValueError(msg)
        kwargs["dtype"] = np.dtype(kwargs["dtype"]).type
    vectorizer = HashingVectorizer(**kwargs)
    try:
        vectorizer._validate_params()
    except ValueError as exc:
        msg = f"{where}: invalid vectorizer settings: {exc}"
        raise ValueError(msg) from exc
    return vectorizer


# --------------------------------------------------------------------------- #
# Saving
# --------------------------------------------------------------------------- #
def _estimator_class(name, where):
    cls = MODELS.get(name) if isinstance(name, str) else None
    if cls is None:
        msg = f"{where}: estimator {name!r} is not an nbgpu naive Bayes model"
        raise ValueError(msg)
    return cls


def _estimator_spec(model, key, arrays, *, where):
    """The header's description of ``model``: its class and parameters, parts included.

    The top-level model and the parts of a ColumnwiseNB are described alike;
    their arrays go into ``arrays`` under ``key.*``.
    """
    name = type(model).__name__
    if _estimator_class(name, where) is not type(model):
        msg = f"{where}: {type(model).__module__}.{name} is not nbgpu's own {name}, so it cannot be saved."
        raise ValueError(msg)
    return {"estimator": name, "params": _flatten(model.get_params(deep=False), key, arrays)}


def _estimator_from(spec, arrays, *, where, at):
    """The unfitted estimator ``spec`` describes: only nbgpu's classes, parameters checked.

    ``where`` starts the error messages; ``at`` is where the parameters are in the header.
    """
    cls = _estimator_class(spec["estimator"], where)
    params = _unflatten(spec["params"], arrays, at)
    expected = set(cls._get_param_names())
    if not isinstance(params, dict) or set(params) != expected:
        seen = sorted(params) if isinstance(params, dict) else params
        msg = f"{where}: inconsistent model file: parameters {seen} are not those of {cls.__name__} {sorted(expected)}"
        raise ValueError(msg)
    model = cls(**params)
    try:
        model._validate_params()
    except (TypeError, ValueError) as exc:
        msg = f"{where}: inconsistent model file (invalid parameters of {cls.__name__}: {exc})"
        raise ValueError(msg) from exc
    return model


def save(model, path, *, vectorizer=None, metadata=None):
    """Save a fitted model to one file that is safe to share (no pickle).

    The file holds the estimator class, its parameters, the class labels, the
    model's statistics and, optionally, the settings of the
    ``HashingVectorizer`` that turns text into its features. It is written
    under a temporary name and renamed, so it is never left half-written.

    Parameters
    ----------
    model : fitted nbgpu estimator
        Fitted on any namespace and device; arrays are stored on the host.
    path : str or path-like
        Where to write (any file name; ``.nbgpu`` is customary).
    vectorizer : sklearn.feature_extraction.text.HashingVectorizer, optional
        Stored as its settings; :func:`load` rebuilds an identical one.
    metadata : dict, optional
        JSON-serialisable information kept in the header (e.g. how the
        training file was read).

    Returns
    -------
    path : pathlib.Path
        The file written.

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
        msg = f"`model` must be an nbgpu estimator; got {type(model).__name__}."
        raise TypeError(msg)
    model._check_is_fitted()
    arrays = {}
    spec = _estimator_spec(model, "param", arrays, where="save")
    stats = _flatten(model._stats, "stats", arrays)
    classes = np.asarray(to_numpy(model.classes_))
    if classes.dtype == object:
        msg = "`classes_` holds Python objects; only labels of a numpy dtype (numbers, strings) can be saved."
        raise TypeError(msg)
    arrays["classes"] = classes
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        arrays["feature_names_in"] = np.asarray(names, dtype=str)
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nbgpu_version": __version__,
        **spec,  # "estimator" and "params"
        "n_features_in": int(model.n_features_in_),
        "dtype": _result_dtype_name(model),
        "stats": stats,
        "vectorizer": _vectorizer_settings(vectorizer),
        "metadata": metadata or {},
        "arrays": {k: {"dtype": a.dtype.str, "shape": list(a.shape), "sha256": _digest(a)} for k, a in arrays.items()},
    }
    text = json.dumps(header, allow_nan=True)
    members = {"header": np.frombuffer(text.encode("utf-8"), dtype=np.uint8), **arrays}
    path = Path(path)
    with atomic_output(path, "wb") as f:
        np.savez_compressed(f, **members)
    return path


# --------------------------------------------------------------------------- #
# Loading
# --------------------------------------------------------------------------- #
def _read_archive(path):
    """(header dict, arrays dict) of a model file, every member checked."""
    where = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115  (closed below, also when np.load fails)
    except FileNotFoundError as exc:
        raise ValueError(f"{where}: no such file") from exc
    except OSError as exc:
        raise ValueError(f"{where} cannot be read ({exc})") from exc
    with handle:
        try:
            archive = np.load(handle, allow_pickle=False)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            msg = f"{where} is not an nbgpu model file (not a readable .npz archive: {exc})"
            raise ValueError(msg) from exc
        if not isinstance(archive, np.lib.npyio.NpzFile):
            msg = f"{where} is not an nbgpu model file (it is a single .npy array, not an archive)"
            raise ValueError(msg)
        with archive:
            members = {key: _member(archive, key, where) for key in archive.files}
    header = _parse_header(members.pop("header", None), where)
    listed = header.get("arrays")
    if not isinstance(listed, dict) or set(listed) != set(members):
        msg = f"{where} has been tampered with: its arrays do not match the list in its header"
        raise ValueError(msg)
    for key, a in members.items():
        spec = listed[key]
        ok = isinstance(spec, dict) and spec.get("dtype") == a.dtype.str and spec.get("shape") == list(a.shape)
        if not ok or spec.get("sha256") != _digest(a):
            msg = f"{where} has been tampered with or corrupted: array {key!r} does not match its checksum"
            raise ValueError(msg)
    return header, members


def _member(archive, key, where):
    try:
        return archive[key]
    except ValueError as exc:
        if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
            msg = f"{where}: member {key!r} is an object array; refusing to load it (that would need pickle)"
        else:
            msg = f"{where}: member {key!r} cannot be read ({exc})"
        raise ValueError(msg) from exc
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile) as exc:
        msg = f"{where} is corrupted: member {key!r} cannot be read ({exc})"
        raise ValueError(msg) from exc


def _parse_header(raw, where):
    foreign = f"{where} is not an nbgpu model file"
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise ValueError(f"{foreign} (no nbgpu header)")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{foreign} (its header is not valid JSON: {exc!r})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{foreign} (the header does not say format {FORMAT!r})")
    version = header.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"{where}: invalid model format version {version!r}")
    if version > FORMAT_VERSION:
        msg = (
            f"{where} uses model format version {version} (written by nbgpu "
            f"{header.get('nbgpu_version', '?')}); this nbgpu {__version__} reads "
            f"versions up to {FORMAT_VERSION}: upgrade nbgpu to load it"
        )
        raise ValueError(msg)
    return header


def _check_stats_arrays(stats, where):
    values = stats.values() if isinstance(stats, dict) else stats if isinstance(stats, (list, tuple)) else [stats]
    for value in values:
        if isinstance(value, (dict, list, tuple)):
            _check_stats_arrays(value, where)
        elif isinstance(value, np.ndarray):
            if value.dtype.kind not in "biuf":
                msg = f"{where}: statistics must be numeric arrays; found dtype {value.dtype}"
                raise ValueError(msg)
            if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                msg = f"{where}: statistics contain NaN or infinity"
                raise ValueError(msg)


def read_model_file(path):
    """Load a model file into a :class:`ModelFile` (model, vectorizer, header).

    Raises ValueError with a one-line message naming the file for anything
    that is not a complete, untampered nbgpu model file.
    """
    where = str(path)
    header, arrays = _read_archive(path)
    bad = f"{where}: inconsistent model file"
    try:
        model = _estimator_from(header, arrays, where=where, at="params")
        stats = _unflatten(header["stats"], arrays, "stats")
        n_features = header["n_features_in"]
        dtype_name = header["dtype"]
        vectorizer = _vectorizer_from(header.get("vectorizer"), where)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{bad} (missing or malformed header entry {exc})") from exc
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features < 1:
        raise ValueError(f"{bad}: n_features_in must be a positive integer; got {n_features!r}")
    if dtype_name not in ("float32", "float64"):
        raise ValueError(f"{bad}: dtype must be float32 or float64; got {dtype_name!r}")
    classes = arrays.get("classes")
    if classes is None or classes.ndim != 1 or classes.shape[0] < 1:
        raise ValueError(f"{bad}: classes must be a non-empty 1-D array")
    if classes.shape[0] > 1 and not np.all(classes[1:] > classes[:-1]):
        raise ValueError(f"{bad}: classes must be sorted and distinct")
    _check_stats_arrays(stats, where)
    names = arrays["feature_names_in"].astype(object) if "feature_names_in" in arrays else None
    try:
        model._become_fitted(stats, classes, n_features=n_features, feature_names=names, score_dtype=dtype_name)
        # Score one row: the statistics must fit the classes and features.
        xp = get_namespace(np.empty(0))
        probe = model._model_input(np.zeros((1, n_features), dtype=dtype_name), xp)
        jll = model._joint_log_likelihood(probe, xp=xp, device="cpu", dtype=getattr(xp, dtype_name))
        if tuple(jll.shape) != (1, classes.shape[0]):
            raise ValueError(f"scores of shape {tuple(jll.shape)} for {classes.shape[0]} classes")
    except Exception as exc:  # any failure here means the file contradicts itself
        raise ValueError(f"{bad} ({type(exc).__name__}: {exc})") from exc
    return ModelFile(model, vectorizer, header)


def load(path, *, return_vectorizer=False):
    """Load a model saved with :func:`save`; never executes code from the file.

    Parameters
    ----------
    path : str or path-like
    return_vectorizer : bool, default=False
        Also return the stored ``HashingVectorizer`` (None if there is none).

    Returns
    -------
    model : nbgpu estimator
        Fitted, with numpy arrays (move it with ``model.to_device(like)``);
        it can be updated further with ``partial_fit``.
    vectorizer : HashingVectorizer or None
        Only when ``return_vectorizer=True``.

    Raises
    ------
    ValueError
        If the file is missing, truncated, corrupted, tampered with, not an
        nbgpu model file, holds object arrays, or is of a newer format
        version than this nbgpu reads.

    Examples
    --------
    >>> import nbgpu
    >>> model = nbgpu.load("model.nbgpu")  # doctest: +SKIP
    """
    loaded = read_model_file(path)
    if return_vectorizer:
        return loaded.model, loaded.vectorizer
    return loaded.model
