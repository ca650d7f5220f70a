"""The fast path of HashingVectorizer as functions of its parameters.

Importing this module loads numpy and scipy.sparse, never scikit-learn: the
command line hashes its first chunk of text while scikit-learn and the
models are still being imported, and ``nbgpu.text.HashingVectorizer``
hashes without it. Rows are normalised here, value for value as
scikit-learn does. scikit-learn's own pieces (its English stop-word list,
its compiled MurmurHash3 for tokens longer than 1 KiB, its row
normalisation where sums of squared counts reach 2**53 or values are not
floats) are imported when first needed.
"""

from __future__ import annotations

import dataclasses
import functools
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ._array import get_namespace
from ._pipeline import hash_documents
from ._stopwords import StopWords

__all__ = ["DEFAULTS", "Plan", "fast_plan", "hashed_matrix"]

# scikit-learn's HashingVectorizer parameters and defaults (the estimator's
# signature; a test holds the three equal).
DEFAULTS = {
    "input": "content",
    "encoding": "utf-8",
    "decode_error": "strict",
    "strip_accents": None,
    "lowercase": True,
    "preprocessor": None,
    "tokenizer": None,
    "stop_words": None,
    "token_pattern": r"(?u)\b\w\w+\b",
    "ngram_range": (1, 1),
    "analyzer": "word",
    "n_features": 2**20,
    "binary": False,
    "norm": "l2",
    "alternate_sign": True,
    "dtype": np.float64,
}

# Token patterns the fast path implements: maximal runs of \w of a least length.
_TOKEN_PATTERNS = {
    r"(?u)\b\w\w+\b": 2,
    r"\b\w\w+\b": 2,
    r"(?u)\b\w+\b": 1,
    r"\b\w+\b": 1,
}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What the fast path computes (all scikit-learn parameters resolved)."""

    analyzer: str  # "word", "char" or "char_wb"
    ngram_range: tuple
    lowercase: bool
    strip_accents: object  # None, "ascii", "unicode" or a callable
    stop_words: object  # a StopWords or None
    min_token_chars: int  # 2 for r"\b\w\w+\b", 1 for r"\b\w+\b"
    n_features: int
    alternate_sign: bool
    binary: bool  # every stored value set to 1
    norm: object  # None, "l1" or "l2"
    dtype: np.dtype  # of the output values
    encoding: str
    decode_error: str
    has_bytes: bool = False  # some documents are bytes, to decode


@functools.cache
def _english_stop_words():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return StopWords(ENGLISH_STOP_WORDS)


def _is_int(value):
    return isinstance(value, Integral) and not isinstance(value, bool)


def _word_settings(params):
    """``(min_token_chars, StopWords or None)`` of the word analyzer; None if not accelerated."""
    pattern, stop = params["token_pattern"], params["stop_words"]
    min_token_chars = _TOKEN_PATTERNS.get(pattern) if isinstance(pattern, str) else None
    if params["tokenizer"] is not None or min_token_chars is None:
        return None
    if isinstance(stop, (list, tuple, set, frozenset)):
        stop = StopWords(stop)
    elif isinstance(stop, str) and stop == "english":
        stop = _english_stop_words()
    elif stop is not None:
        return None
    return min_token_chars, stop


def fast_plan(params):
    """The fast path's :class:`Plan` for HashingVectorizer parameters
    ``params`` (a dict; missing ones take the defaults), or None where
    scikit-learn's own code must do the work."""
    params = {**DEFAULTS, **params}
    analyzer, ngram_range, n_features = params["analyzer"], params["ngram_range"], params["n_features"]
    if params["input"] != "content" or params["preprocessor"] is not None:
        return None
    if not isinstance(analyzer, str) or analyzer not in ("word", "char", "char_wb"):
        return None
    if not (isinstance(ngram_range, tuple) and len(ngram_range) == 2 and all(map(_is_int, ngram_range))):
        return None
    if not 1 <= ngram_range[0] <= ngram_range[1]:
        return None
    if not (_is_int(n_features) and 1 <= n_features < 2**31) or params["norm"] not in (None, "l1", "l2"):
        return None
    try:
        dtype = np.dtype(params["dtype"])
    except TypeError:
        return None
    if not (dtype.kind in "ic" or (dtype.kind == "f" and dtype.itemsize >= 4)):
        return None
    strip = params["strip_accents"] or None
    if strip is not None and not (strip in ("ascii", "unicode") if isinstance(strip, str) else callable(strip)):
        return None
    words = _word_settings(params) if analyzer == "word" else (1, None)
    if words is None:
        return None
    return Plan(
        analyzer=analyzer,
        ngram_range=(int(ngram_range[0]), int(ngram_range[1])),
        lowercase=bool(params["lowercase"]),
        strip_accents=strip,
        stop_words=words[1],
        min_token_chars=words[0],
        n_features=int(n_features),
        alternate_sign=bool(params["alternate_sign"]),
        binary=bool(params["binary"]),
        norm=params["norm"],
        dtype=dtype,
        encoding=params["encoding"],
        decode_error=params["decode_error"],
    )


# Sums of whole numbers below this are exact in float64, whatever the order of the additions.
_EXACT_SUMS = 2**53


def _normalize_counts(X, norm):
    """Divide the rows of the float CSR ``X`` of whole numbers (signed counts) by their ``norm`` in
    place, value for value as scikit-learn's ``inplace_csr_row_normalize_l1``/``_l2``: a sequential
    sum in float64 of ``|x|`` or of ``x * x`` (the square rounded to X's dtype), its square root,
    each value divided in float64 and rounded to X's dtype, rows summing to 0 left as they are.
    Every addend is a whole number, so any order of additions gives that sum while it stays below
    2**53; False (X untouched) where a sum might not."""
    data, indptr = X.data, X.indptr
    if data.size == 0:
        return True
    counts = np.diff(indptr)
    nonempty = counts > 0
    terms = np.abs(data) if norm == "l1" else data * data
    sums = np.add.reduceat(terms.astype(np.float64, copy=False), indptr[:-1][nonempty])
    if not sums.max() < _EXACT_SUMS:
        return False
    if norm == "l2":
        sums = np.sqrt(sums)
    sums[sums == 0.0] = 1.0  # stored zeros only (signs that cancel): left, as scikit-learn skips them
    np.divide(data, np.repeat(sums, counts[nonempty]), out=data)  # in float64, rounded to X's dtype
    return True


def hashed_matrix(docs, plan, *, sparray=False):
    """scikit-learn's matrix for the list ``docs`` by the fast path of
    ``plan`` (from :func:`fast_plan`), or None where its own code must do
    the work (documents that are not text, lone surrogates)."""
    kinds = set(map(type, docs))
    if not docs or not all(issubclass(k, (str, bytes)) for k in kinds):
        return None
    if any(issubclass(k, bytes) for k in kinds):
        plan = dataclasses.replace(plan, has_bytes=True)
    try:
        indptr, indices, values = hash_documents(docs, plan, xp=get_namespace(np.empty(0)))
    except UnicodeEncodeError:  # lone surrogates: scikit-learn raises its error
        return None
    index_dtype = np.int32 if int(indptr[-1]) <= np.iinfo(np.int32).max else np.int64
    X = (sp.csr_array if sparray else sp.csr_matrix)(
        (values.astype(plan.dtype), indices.astype(index_dtype, copy=False), indptr.astype(index_dtype)),
        shape=(len(docs), plan.n_features),
        dtype=plan.dtype,
    )
    X.has_sorted_indices = True
    X.has_canonical_format = True
    if plan.binary:
        X.data.fill(1)
    if plan.norm is not None and plan.dtype in (np.float32, np.float64):
        # what normalize does to a float CSR matrix, without its input checks
        if not _normalize_counts(X, plan.norm):
            from sklearn.utils.sparsefuncs_fast import inplace_csr_row_normalize_l1, inplace_csr_row_normalize_l2

            (inplace_csr_row_normalize_l2 if plan.norm == "l2" else inplace_csr_row_normalize_l1)(X)
    elif plan.norm is not None:
        from sklearn.preprocessing import normalize

        X = normalize(X, norm=plan.norm, copy=False)
    return X
