"""The estimator: scikit-learn's HashingVectorizer, computed as array code."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn import get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import HashingVectorizer as _SklearnHashingVectorizer

from ._transform import fast_plan, hashed_matrix

__all__ = ["HashingVectorizer"]


class HashingVectorizer(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
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

    _parameter_constraints: dict = dict(_SklearnHashingVectorizer._parameter_constraints)

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

    def _sklearn(self):
        """scikit-learn's HashingVectorizer with these parameters (one kept, to warn once as it does)."""
        twin = getattr(self, "_sklearn_twin", None)
        if twin is None:
            twin = self._sklearn_twin = _SklearnHashingVectorizer()
        return twin.set_params(**self.get_params())

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
        self._sklearn().fit(X, y)
        return self

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
        if isinstance(X, str):
            msg = "Iterable over raw text documents expected, string object received."
            raise ValueError(msg)
        if isinstance(self.n_features, numbers.Integral) and self.n_features < 1:  # scikit-learn's transform divides by it
            msg = f"The 'n_features' parameter of HashingVectorizer must be an int in the range [1, 2147483647]. Got {self.n_features} instead."
            raise ValueError(msg)
        plan = fast_plan(self.get_params())  # None: scikit-learn does the work
        if plan is None:
            return self._sklearn().transform(X)
        docs = X if isinstance(X, list) else list(X)
        if plan.stop_words is not None and docs:
            self._sklearn().build_analyzer()  # scikit-learn's stop-word consistency warning
        sparray = get_config().get("sparse_interface", "spmatrix") == "sparray"
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.string = True
        tags.input_tags.two_d_array = False
        tags.requires_fit = False
        return tags
