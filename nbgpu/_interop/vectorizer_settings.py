"""The text vectorizer of a model file: stored as its settings, accepted only if safe.

A ``HashingVectorizer`` is stateless, so its settings define it. A model
file may come from anyone, and the settings decide what ``predict`` does
with its input: ``input="filename"`` would open the files named in the
data, and a token pattern is a regular expression that can take
exponential time. So :func:`check_settings` accepts only what nbgpu writes
and can vouch for (text content, scikit-learn's token patterns, word or
character n-grams of bounded length, common text encodings, the model's
number of features), both when a file is written and when it is read;
:func:`check_for_model` refuses settings whose output the model refuses
(``alternate_sign=True``'s negative values for a model of counts).
:func:`vectorizer_settings` and :func:`vectorizer_from_settings` are the
one place that maps a vectorizer to settings and back.

``nbgpu train --model auto`` may also choose a term weighting (:data:`TERM_WEIGHTINGS`), stored in
the model's metadata as ``features: {"tf": ...}`` and applied to the vectorizer's output by
:func:`weighted`, at training and at ``predict``/``evaluate`` alike.
"""

from __future__ import annotations

import codecs

import numpy as np

from ..text._transform import DEFAULTS as HASHING_PARAMETERS
from .model_archive import is_int

# scikit-learn's default (words of 2+ characters), and words of any length.
TOKEN_PATTERNS = (r"(?u)\b\w\w+\b", r"(?u)\b\w+\b")
# Tokens per document grow with the n-gram length; beyond this it is no
# longer a bag of words.
MAX_NGRAM = 10
# Text encodings (by codecs' canonical name) whose decoding takes linear time.
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-32", "ascii", "iso8859-1", "cp1252")
_CHOICES = {
    "input": ("content",),
    "decode_error": ("strict", "ignore", "replace"),
    "strip_accents": (None, "ascii", "unicode"),
    "analyzer": ("word", "char", "char_wb"),
    "norm": (None, "l1", "l2"),
    "dtype": ("float32", "float64"),
    "preprocessor": (None,),
    "tokenizer": (None,),
    "token_pattern": TOKEN_PATTERNS,
}
_FLAGS = ("lowercase", "binary", "alternate_sign")
MAX_STOP_WORDS = 100_000


def _classes():
    """The vectorizer classes a model file can hold: nbgpu's HashingVectorizer
    (the one loading gives back: the same matrices, faster) and scikit-learn's."""
    from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashingVectorizer

    from ..text import HashingVectorizer

    return (HashingVectorizer, SklearnHashingVectorizer)


def vectorizer_settings(vectorizer, n_features, *, model=None):
    """The JSON settings of ``vectorizer`` (None for None), checked as :func:`check_settings` does (and against
    ``model`` by :func:`check_for_model`, if given); ``vectorizer`` is a HashingVectorizer or a dict of its
    parameters, the others at their defaults (the command line's: no object made)."""
    if vectorizer is None:
        return None
    if isinstance(vectorizer, dict):
        params = {**HASHING_PARAMETERS, **vectorizer}
    elif type(vectorizer) in _classes():
        params = vectorizer.get_params()
    else:
        names = "nbgpu.text.HashingVectorizer, sklearn.feature_extraction.text.HashingVectorizer or a dict of their parameters"
        msg = f"`vectorizer` must be a {names} (it is stateless, so its settings define it); got {type(vectorizer).__name__}."
        raise TypeError(msg)
    settings = {}
    for name, value in params.items():
        if callable(value) and name != "dtype":
            msg = f"vectorizer parameter `{name}` is a callable, which a model file cannot hold (no pickle)."
            raise TypeError(msg)
        if name == "dtype":
            value = np.dtype(value).name
        elif isinstance(value, (tuple, frozenset, set)):
            value = list(value)
        settings[name] = value
    try:
        check_settings(settings, n_features)
        if model is not None:
            check_for_model(settings, model)
    except ValueError as exc:
        msg = f"`vectorizer` cannot be saved with the model: {exc}"
        raise ValueError(msg) from exc
    return settings


def vectorizer_from_settings(settings, n_features, *, core=False, model=None):
    """The vectorizer that ``settings`` (from a model file) describe, None for None; ``core=True``: its checked
    keyword arguments instead, which loads no scikit-learn. With ``model``, checked by :func:`check_for_model` too."""
    if settings is None:
        return None
    kwargs = check_settings(settings, n_features)
    if model is not None:
        check_for_model(settings, model)
    return kwargs if core else _classes()[0](**kwargs)


def check_settings(settings, n_features):
    """The keyword arguments ``settings`` stand for, if nbgpu can vouch for them; else a ValueError naming the first
    setting that is not accepted."""
    known = set(HASHING_PARAMETERS)
    if not isinstance(settings, dict) or set(settings) != known:
        seen = sorted(map(str, settings)) if isinstance(settings, dict) else type(settings).__name__
        msg = f"vectorizer settings must be exactly {sorted(known)}; got {seen}"
        raise ValueError(msg)
    for name, allowed in _CHOICES.items():
        if not any(settings[name] is a or (isinstance(a, str) and settings[name] == a) for a in allowed):
            raise ValueError(f"vectorizer setting {name}={settings[name]!r} is not accepted; expected one of {list(allowed)}")
    for name in _FLAGS:
        if not isinstance(settings[name], bool):
            raise ValueError(f"vectorizer setting {name}={settings[name]!r} must be true or false")  # noqa: TRY004
    if not _is_text_encoding(settings["encoding"]):
        raise ValueError(f"vectorizer setting encoding={settings['encoding']!r} is not accepted; expected one of {list(ENCODINGS)}")
    stop = settings["stop_words"]
    words = isinstance(stop, list) and len(stop) <= MAX_STOP_WORDS and all(isinstance(w, str) for w in stop)
    if not (stop is None or stop == "english" or words):
        raise ValueError(f"vectorizer setting stop_words must be null, 'english' or a list of words; got {stop!r:.80}")
    ngram = settings["ngram_range"]
    if not (isinstance(ngram, list) and len(ngram) == 2 and all(map(is_int, ngram)) and 1 <= ngram[0] <= ngram[1] <= MAX_NGRAM):
        raise ValueError(f"vectorizer setting ngram_range={ngram!r} is not accepted; expected [low, high] with 1 <= low <= high <= {MAX_NGRAM}")
    if settings["n_features"] != n_features or not is_int(settings["n_features"]):
        raise ValueError(f"vectorizer setting n_features={settings['n_features']!r} differs from the model's {n_features} features")
    stop = list(stop) if words else stop  # a copy: the settings stay as they are
    return {**settings, "ngram_range": tuple(ngram), "dtype": np.dtype(settings["dtype"]).type, "stop_words": stop}


def check_for_model(settings, model):
    """Raise a ValueError naming ``alternate_sign`` if the vectorizer of ``settings`` (checked) makes negative values
    and ``model`` (an nbgpu estimator, fitted or not) refuses them: every prediction on its output would fail."""
    if not settings["alternate_sign"]:
        return
    refusing = _refusing_negative(model)
    if refusing is not None:
        msg = (
            f"vectorizer setting alternate_sign=True makes negative feature values, which {refusing} refuses "
            "(it takes values >= 0), so every prediction would fail; use a vectorizer with alternate_sign=False"
        )
        raise ValueError(msg)


def _refusing_negative(model, where=""):
    """``model``'s name (``model`` or a ColumnwiseNB's part, which sees some of the vectorizer's columns) if it
    refuses negative input, else None. Asked of the check ``predict`` runs, ``_check_values``, on one negative
    value: the core classes the command line uses have no scikit-learn tags (``positive_only`` says the same)."""
    parts = getattr(model, "estimators", None)  # a ColumnwiseNB's (name, estimator, columns)
    if isinstance(parts, (list, tuple)):
        named = [part for part in parts if isinstance(part, (tuple, list)) and len(part) == 3]  # malformed: fit says so
        found = (_refusing_negative(est, f"{where}part {name!r} ") for name, est, _ in named)
        return next((name for name in found if name is not None), None)
    try:
        model._check_values(np.full((1, 1), -1.0))
    except ValueError:
        return f"{where}{type(model).__name__}"
    return None


def _is_text_encoding(name):
    if not isinstance(name, str) or len(name) > 40:
        return False
    try:
        return codecs.lookup(name).name in ENCODINGS
    except (LookupError, ValueError, TypeError):
        return False


# Term weightings of a vectorizer's counts: as they are, or scikit-learn's ``sublinear_tf`` (1 + log tf).
TERM_WEIGHTINGS = ("counts", "sublinear")


def check_weighting(features, where):
    """The term weighting that ``features`` (a model file's ``metadata['features']``, None if absent) name;
    a ValueError naming ``where`` if it is not one of :data:`TERM_WEIGHTINGS`."""
    if features is None:
        return "counts"
    tf = features.get("tf", "counts") if isinstance(features, dict) else None
    if tf not in TERM_WEIGHTINGS:
        shown = features.get("tf") if isinstance(features, dict) else features
        msg = f"{where}: inconsistent model file (features tf={shown!r:.80}; expected one of {list(TERM_WEIGHTINGS)})"
        raise ValueError(msg)
    return tf


def weighted(X, tf):
    """The counts ``X`` (a host CSR matrix, or a dense array) weighted by ``tf`` (of :data:`TERM_WEIGHTINGS`):
    ``X`` itself for counts, else a copy with every stored nonzero count c made 1 + log(c)."""
    if tf == "counts":
        return X
    out = X.copy()
    values = out.data if hasattr(out, "indices") else out
    present = values > 0  # 1 + log(c) for counts of at least 1; zeros stay zero
    values[present] = 1.0 + np.log(values[present])
    return out
