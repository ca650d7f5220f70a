"""The estimator: scikit-learn's HashingVectorizer, computed as array code.

The class implements scikit-learn's estimator protocol itself rather than
inheriting it, so that hashing imports no scikit-learn (a second or more of a
process's start): scikit-learn recognises estimators by what they do
(``get_params``, ``set_params``, ``fit``, ``transform``, ``__sklearn_tags__``),
never by their base classes, so ``clone``, ``Pipeline`` and the searches take
it as they take its own. scikit-learn is imported where its own code is the
reference: its tags, the parameters the fast path does not cover (its
HashingVectorizer does the work), and ``fit``'s errors and warnings.
``isinstance(vectorizer, sklearn.base.BaseEstimator)`` is False, always.
"""

from __future__ import annotations

import inspect
import math
import numbers
import sys

import numpy as np

from .._estimator.params import param_names
from ._transform import DEFAULTS, fast_plan, hashed_matrix

__all__ = ["HashingVectorizer"]

_STRING_RECEIVED = "Iterable over raw text documents expected, string object received."
# The width scikit-learn's repr fills (pprint's default), the items of a sequence it shows.
_REPR_WIDTH = 80
_REPR_MAX_ITEMS = 30


def _sklearn_config(name, default):
    """scikit-learn's setting ``name``; ``default`` (its default) while it is not imported, when
    nothing can have changed it."""
    sklearn = sys.modules.get("sklearn")
    get_config = getattr(sklearn, "get_config", None)
    return default if get_config is None else get_config().get(name, default)


def _is_nan(value):
    return isinstance(value, numbers.Real) and math.isnan(value)


def _estimator_repr(name, params, defaults, n_char_max):
    """``name(key=value, ...)`` as scikit-learn prints an estimator: the parameters that differ
    from ``defaults`` (all of them under ``print_changed_only=False``) sorted by name, on one line
    when it fits in 80 characters, else filled as its pretty-printer fills them (lists and tuples
    too: the first 30 items); beyond ``n_char_max`` non-blank characters, the middle cut to ``...``."""
    if _sklearn_config("print_changed_only", True):
        params = {k: v for k, v in params.items()
                  if repr(v) != repr(defaults[k]) and not (_is_nan(v) and _is_nan(defaults[k]))}
    keys = sorted(params)
    items = [f"{k}={params[k]!r}" for k in keys]
    text = f"{name}({', '.join(items)})"
    if len(text) > _REPR_WIDTH:
        column = len(name) + 1
        text = f"{name}(" + _fill(items, column, 1, lambda i: _wide_param(keys[i], params[keys[i]], column)) + ")"
    return _cut_middle(text, n_char_max)


def _fill(reps, column, allowance, wide=None, max_items=None):
    """The compact fill of Python's pretty-printer, which scikit-learn's uses: ``reps`` joined by
    ", " while they fit in the width, a new line starting at ``column`` before one that does not,
    the last leaving ``allowance`` columns; ``wide(i)`` writes the i-th where no line can hold it;
    after ``max_items``, ``...``."""
    out, delim, newline = [], "", ",\n" + " " * column
    width = full = _REPR_WIDTH - column + 1
    for i, rep in enumerate(reps):
        if i == max_items:
            out.append(", ...")
            break
        if i == len(reps) - 1:
            width, full = width - allowance, full - allowance
        need = len(rep) + 2
        if width < need:
            width = full
            delim = delim and newline
        if width >= need:
            width -= need
            out += [delim, rep]
            delim = ", "
        else:
            out += [delim, wide(i) if wide else rep]
            delim = newline
    return "".join(out)


def _wide_param(key, value, column):
    """``key=value`` starting at ``column`` where a line cannot hold it: a list or tuple filled
    over lines after its bracket, anything else as is."""
    rep = repr(value)
    start = column + len(key) + 1
    if type(value) not in (list, tuple) or len(rep) <= _REPR_WIDTH - start - 1:
        return f"{key}={rep}"
    close = "]" if type(value) is list else (",)" if len(value) == 1 else ")")
    inner = _fill([repr(v) for v in value], start + 1, 1 + len(close), max_items=_REPR_MAX_ITEMS)
    return f"{key}={rep[0]}{inner}{close}"


def _cut_middle(text, n_char_max):
    """``text`` with its middle replaced by ``...`` when it holds more than ``n_char_max`` non-blank
    characters, about half of them kept at each end (the right end from a line break, where the
    two ends are on different lines), as scikit-learn's repr does."""
    nonblank = [i for i, c in enumerate(text) if not c.isspace()]
    if len(nonblank) <= n_char_max:
        return text
    keep = n_char_max // 2
    left, right = nonblank[keep - 1] + 1, nonblank[-keep]
    if "\n" in text[left:right]:
        right = text.rfind("\n", left, right)
    return text[:left] + "..." + text[right:] if left + 3 < right else text


class HashingVectorizer:
    r"""Hash text documents into a sparse matrix of token occurrences, fast.

    A drop-in replacement for
    :class:`sklearn.feature_extraction.text.HashingVectorizer`: same
    parameters, and the same matrix value for value (shape, dtype, sorted
    indices, summed duplicates).  Tokenisation, n-grams, MurmurHash3 and the
    column/sign arithmetic run as array code on all CPU cores; what that code
    does not cover (a callable analyzer, preprocessor or tokenizer, other
    token patterns, ``input="filename"`` or ``"file"``, ``dtype=float16`` and
    other unusual dtypes, documents that are not ``str`` or ``bytes``) is
    handed to scikit-learn's own HashingVectorizer.

    It is a scikit-learn estimator by protocol, not by inheritance: it imports
    no scikit-learn to hash text, and works in ``Pipeline``, ``clone``,
    ``GridSearchCV`` and pickles as scikit-learn's own; it is not an instance
    of ``sklearn.base.BaseEstimator``.

    Parameters
    ----------
    input : {'filename', 'file', 'content'}, default='content'
        What the items of ``X`` are; only ``'content'`` (the text itself) is
        accelerated.
    encoding : str, default='utf-8'
        Encoding used to decode ``bytes`` documents.
    decode_error : {'strict', 'ignore', 'replace'}, default='strict'
        What to do with bytes that are not valid in ``encoding``.
    strip_accents : {'ascii', 'unicode'} or callable, default=None
        Remove accents during preprocessing, as scikit-learn does.
    lowercase : bool, default=True
        Lowercase the documents (``str.lower``) before tokenizing.
    preprocessor : callable, default=None
        Replaces the preprocessing step (handed to scikit-learn).
    tokenizer : callable, default=None
        Replaces the tokenizing step of ``analyzer='word'`` (handed to
        scikit-learn).
    stop_words : {'english'}, list, default=None
        Tokens removed before word n-grams are formed (``analyzer='word'``).
    token_pattern : str or None, default=r"(?u)\\b\\w\\w+\\b"
        Regular expression of a token; ``r"(?u)\b\w\w+\b"`` and
        ``r"(?u)\b\w+\b"`` (with or without ``(?u)``) are accelerated.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        Lengths of the word or character n-grams.
    analyzer : {'word', 'char', 'char_wb'} or callable, default='word'
        Word n-grams, character n-grams, or character n-grams inside words
        padded with a space.
    n_features : int, default=2**20
        Number of columns of the output.
    binary : bool, default=False
        Set every stored value to 1 before normalising.
    norm : {'l1', 'l2'}, default='l2'
        Row normalisation; ``None`` for none.
    alternate_sign : bool, default=True
        Give each column a sign from its hash.
    dtype : type, default=np.float64
        Type of the values of the output.

    Attributes
    ----------
    This estimator is stateless and has no fitted attributes.

    See Also
    --------
    sklearn.feature_extraction.text.HashingVectorizer : The reference this
        estimator reproduces.
    sklearn.feature_extraction.text.CountVectorizer : Counts with a vocabulary.

    Examples
    --------
    >>> from nbgpu.text import HashingVectorizer
    >>> corpus = [
    ...     'This is the first document.',
    ...     'This document is the second document.',
    ...     'And this is the third one.',
    ...     'Is this the first document?',
    ... ]
    >>> vectorizer = HashingVectorizer(n_features=2**4)
    >>> X = vectorizer.fit_transform(corpus)
    >>> print(X.shape)
    (4, 16)
    """

    def __init__(
        self,
        *,
        input="content",
        encoding="utf-8",
        decode_error="strict",
        strip_accents=None,
        lowercase=True,
        preprocessor=None,
        tokenizer=None,
        stop_words=None,
        token_pattern=r"(?u)\b\w\w+\b",
        ngram_range=(1, 1),
        analyzer="word",
        n_features=(2**20),
        binary=False,
        norm="l2",
        alternate_sign=True,
        dtype=np.float64,
    ):
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.strip_accents = strip_accents
        self.preprocessor = preprocessor
        self.tokenizer = tokenizer
        self.analyzer = analyzer
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.stop_words = stop_words
        self.n_features = n_features
        self.ngram_range = ngram_range
        self.binary = binary
        self.norm = norm
        self.alternate_sign = alternate_sign
        self.dtype = dtype

    # ------------------------------------------------------------------ #
    # scikit-learn's estimator protocol
    # ------------------------------------------------------------------ #
    @classmethod
    def _get_param_names(cls):
        """The sorted parameter names of ``__init__`` (scikit-learn's ``BaseEstimator`` method)."""
        return list(param_names(cls))

    def get_params(self, deep=True):
        """Get the parameters of this estimator.

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of parameters that are estimators,
            as ``<parameter>__<name>``.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        out = {}
        for name in param_names(type(self)):
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params):
        """Set the parameters of this estimator.

        Parameters
        ----------
        **params : dict
            Parameter names (``<parameter>__<name>`` for a parameter's own
            parameters) mapped to their new values.

        Returns
        -------
        self : HashingVectorizer
        """
        names = param_names(type(self))
        nested = {}
        for key, value in params.items():
            name, delim, sub_key = key.partition("__")
            if name not in names:
                msg = f"Invalid parameter {name!r} for estimator {self}. Valid parameters are: {list(names)!r}."
                raise ValueError(msg)
            if delim:
                nested.setdefault(name, {})[sub_key] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self, N_CHAR_MAX=700):
        signature = inspect.signature(type(self).__init__).parameters
        defaults = {name: signature[name].default for name in param_names(type(self))}
        return _estimator_repr(type(self).__name__, self.get_params(deep=False), defaults, N_CHAR_MAX)

    def __getstate__(self):
        # scikit-learn's twin is a cache: a pickle needs no scikit-learn
        return {k: v for k, v in self.__dict__.items() if k != "_sklearn_twin"}

    def __sklearn_tags__(self):
        # Only scikit-learn asks for tags: it is imported already.
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=TransformerTags(),
            input_tags=InputTags(string=True, two_d_array=False),
            requires_fit=False,
        )

    # ------------------------------------------------------------------ #
    # the transformer
    # ------------------------------------------------------------------ #
    def _params(self):
        """The parameters, as a dict (those of a subclass's own ``__init__`` too)."""
        return {name: getattr(self, name) for name in DEFAULTS}

    def _sklearn(self):
        """scikit-learn's HashingVectorizer with these parameters (one kept, to warn once as it does)."""
        twin = self.__dict__.get("_sklearn_twin")
        if twin is None:
            from sklearn.feature_extraction.text import HashingVectorizer as Reference

            twin = self._sklearn_twin = Reference()
        return twin.set_params(**self._params())

    def partial_fit(self, X, y=None):
        """Do nothing: this estimator is stateless (as scikit-learn's).

        Parameters
        ----------
        X : iterable of str
            Ignored.
        y : None
            Ignored.

        Returns
        -------
        self : HashingVectorizer
        """
        return self

    def fit(self, X, y=None):
        """Validate the parameters, as scikit-learn's ``fit`` does.

        Parameters
        ----------
        X : iterable of str or bytes
            Ignored apart from being checked not to be a single string.
        y : None
            Ignored.

        Returns
        -------
        self : HashingVectorizer
        """
        if self._valid_without_sklearn():  # scikit-learn would raise and warn nothing
            if isinstance(X, str):
                raise ValueError(_STRING_RECEIVED)
            return self
        self._sklearn().fit(X, y)  # its errors and warnings
        return self

    def _valid_without_sklearn(self):
        """Whether scikit-learn's ``fit`` would neither raise nor warn about these parameters, told
        without it for the parameters the fast path takes (False: ask scikit-learn)."""
        p = self._params()
        if fast_plan(p) is None:
            return False
        stop, pattern, strip = p["stop_words"], p["token_pattern"], p["strip_accents"]
        return (
            all(isinstance(p[name], (bool, np.bool_)) for name in ("lowercase", "binary", "alternate_sign"))
            and isinstance(p["encoding"], str)
            and isinstance(p["decode_error"], str)
            and p["decode_error"] in ("strict", "ignore", "replace")
            and (strip is None or callable(strip) or (isinstance(strip, str) and strip in ("ascii", "unicode")))
            and (stop is None or isinstance(stop, list) or (isinstance(stop, str) and stop == "english"))
            and (pattern is None or isinstance(pattern, str))
            and p["tokenizer"] is None
            and p["n_features"] < np.iinfo(np.int32).max  # scikit-learn's interval is open there
            # scikit-learn warns of word settings a character analyzer does not use
            and (p["analyzer"] == "word" or (stop is None and pattern in (None, DEFAULTS["token_pattern"])))
        )

    def transform(self, X):
        """Hash a sequence of documents into a document-term matrix.

        Parameters
        ----------
        X : iterable of str or bytes, length n_samples
            The documents.

        Returns
        -------
        X : sparse matrix of shape (n_samples, n_features)
            scikit-learn's result: CSR, sorted indices, summed duplicates
            (a sparse array under scikit-learn's ``sparse_interface="sparray"``).
        """
        if isinstance(X, str):
            raise ValueError(_STRING_RECEIVED)
        if isinstance(self.n_features, numbers.Integral) and self.n_features < 1:  # scikit-learn's transform divides by it
            msg = f"The 'n_features' parameter of HashingVectorizer must be an int in the range [1, 2147483647]. Got {self.n_features} instead."
            raise ValueError(msg)
        plan = fast_plan(self._params())  # None: scikit-learn does the work
        if plan is None:
            return self._sklearn().transform(X)
        docs = X if isinstance(X, list) else list(X)
        if plan.stop_words is not None and docs:
            self._sklearn().build_analyzer()  # scikit-learn's stop-word consistency warning
        sparray = _sklearn_config("sparse_interface", "spmatrix") == "sparray"
        X = hashed_matrix(docs, plan, sparray=sparray)
        return self._sklearn().transform(docs) if X is None else X

    def fit_transform(self, X, y=None):
        """Validate the parameters and hash the documents.

        Parameters
        ----------
        X : iterable of str or bytes, length n_samples
            The documents.
        y : None
            Ignored.

        Returns
        -------
        X : sparse matrix of shape (n_samples, n_features)
        """
        return self.fit(X, y).transform(X)
