"""The estimator: scikit-learn's HashingVectorizer, computed as array code.

A thin scikit-learn shell over a core that imports none, so that the first
``transform`` in a process costs what the text costs (scikit-learn takes a
second or more to import). The class is made a scikit-learn estimator (its
bases become ``TransformerMixin, BaseEstimator, _Estimator``; every subclass
follows) as soon as scikit-learn is present or needed:

- at its definition, if ``sklearn.base`` is imported already;
- when an instance is made, fitted, transforms or gives or sets its parameters
  after ``sklearn.base`` was imported (a dictionary look-up per call);
- when something asks an instance for what only scikit-learn provides (repr,
  tags, metadata routing, HTML display, nested or unknown ``set_params``...).

Until then ``_Estimator`` stands in for ``get_params`` and ``set_params``, so
the fast path, the command line and model files need no scikit-learn. The one
difference: ``isinstance(v, sklearn.base.BaseEstimator)`` is False for a ``v``
made before scikit-learn was imported and not used since.
"""

from __future__ import annotations

import numbers
import sys
import threading

import numpy as np

from .._estimator.params import param_names
from ._transform import DEFAULTS, fast_plan, hashed_matrix

__all__ = ["HashingVectorizer"]

_LOCK = threading.Lock()
_SKLEARN_BASES = []  # not empty once HashingVectorizer's bases are scikit-learn's


def _with_sklearn():
    """Make HashingVectorizer (and its subclasses) a scikit-learn estimator; imports scikit-learn."""
    if _SKLEARN_BASES:
        return
    from sklearn.base import BaseEstimator, TransformerMixin

    with _LOCK:
        if _SKLEARN_BASES:
            return
        cls = HashingVectorizer
        cls.__bases__ = (TransformerMixin, BaseEstimator, _Estimator)
        # What the class statement would have run: no wrapping of transform's output (as
        # ``auto_wrap_output_keys=None``), metadata requests from the method signatures.
        super(cls, cls).__init_subclass__(auto_wrap_output_keys=None)
        _SKLEARN_BASES.append(BaseEstimator)


def _sync():
    """:func:`_with_sklearn` if scikit-learn's base classes are imported already (costs nothing more)."""
    if not _SKLEARN_BASES and "sklearn.base" in sys.modules:
        _with_sklearn()


def _sparray_output():
    """Whether scikit-learn's ``sparse_interface`` asks for sparse arrays (never set without scikit-learn)."""
    sklearn = sys.modules.get("sklearn")
    get_config = getattr(sklearn, "get_config", None)
    return get_config is not None and get_config().get("sparse_interface", "spmatrix") == "sparray"


class _Estimator:
    """scikit-learn's ``BaseEstimator`` until scikit-learn is imported: ``get_params`` and
    ``set_params`` here (the same results); anything else an instance lacks imports scikit-learn,
    makes the class its estimator, and is scikit-learn's. Last in the bases, so that once they are
    scikit-learn's, scikit-learn's methods are the ones called."""

    @classmethod
    def _get_param_names(cls):
        return list(param_names(cls))

    def get_params(self, deep=True):
        _sync()
        out = {}
        for key in param_names(type(self)):
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        _sync()
        names = param_names(type(self))
        if _SKLEARN_BASES or any("__" in key or key not in names for key in params):
            _with_sklearn()  # nested parameters and scikit-learn's error messages
            return type(self).set_params(self, **params)  # scikit-learn's now
        for key, value in params.items():
            setattr(self, key, value)
        return self

    def __repr__(self, N_CHAR_MAX=700):
        _with_sklearn()
        return type(self).__repr__(self, N_CHAR_MAX)

    def __getattr__(self, name):
        # Only called for attributes not found: scikit-learn's, or none.
        if _SKLEARN_BASES or (name.startswith("__") and not name.startswith("__sklearn_")):
            msg = f"{type(self).__name__!r} object has no attribute {name!r}"
            raise AttributeError(msg)
        try:
            _with_sklearn()
        except ImportError as exc:
            msg = f"{type(self).__name__!r} object has no attribute {name!r} (scikit-learn's, which is not importable)"
            raise AttributeError(msg) from exc
        return getattr(self, name)


class _SklearnConstraints:
    """``_parameter_constraints``: scikit-learn's HashingVectorizer's, imported when first read."""

    def __get__(self, obj, cls=None):
        from sklearn.feature_extraction.text import HashingVectorizer as Reference

        constraints = dict(Reference._parameter_constraints)
        HashingVectorizer._parameter_constraints = constraints
        return constraints


class HashingVectorizer(_Estimator):
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

    _parameter_constraints = _SklearnConstraints()
    _sklearn_twin = None  # scikit-learn's HashingVectorizer, made when first needed

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
        _sync()
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

    def _params(self):
        """The parameters, without scikit-learn."""
        return {name: getattr(self, name) for name in DEFAULTS}

    def _sklearn(self):
        """scikit-learn's HashingVectorizer with these parameters (one kept, to warn once as it does)."""
        _with_sklearn()
        twin = self._sklearn_twin
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
        _sync()
        if not _SKLEARN_BASES and self._valid_without_sklearn():  # scikit-learn would raise and warn nothing
            if isinstance(X, str):
                msg = "Iterable over raw text documents expected, string object received."
                raise ValueError(msg)
            return self
        self._sklearn().fit(X, y)
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
            and isinstance(p["decode_error"], str) and p["decode_error"] in ("strict", "ignore", "replace")
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
            scikit-learn's result: CSR, sorted indices, summed duplicates.
        """
        _sync()
        if isinstance(X, str):
            msg = "Iterable over raw text documents expected, string object received."
            raise ValueError(msg)
        if isinstance(self.n_features, numbers.Integral) and self.n_features < 1:  # scikit-learn's transform divides by it
            msg = f"The 'n_features' parameter of HashingVectorizer must be an int in the range [1, 2147483647]. Got {self.n_features} instead."
            raise ValueError(msg)
        plan = fast_plan(self._params())  # None: scikit-learn does the work
        if plan is None:
            return self._sklearn().transform(X)
        docs = X if isinstance(X, list) else list(X)
        if plan.stop_words is not None and docs:
            self._sklearn().build_analyzer()  # scikit-learn's stop-word consistency warning
        X = hashed_matrix(docs, plan, sparray=_sparray_output())
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

    def __sklearn_tags__(self):
        _with_sklearn()
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags


_sync()  # scikit-learn imported already: a scikit-learn estimator from the start
