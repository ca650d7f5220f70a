"""``nbgpu train --model auto`` on text: the features chosen with the model, from one pass.

The text is hashed once into two column ranges of ``n`` columns each (``n`` = ``--hash-features``):
unigram counts ``U`` in the first, unigram and word-bigram counts ``U + B`` in the second, both in
the hash space of a HashingVectorizer of ``n`` features. ``U + B`` is exactly what
``HashingVectorizer(ngram_range=(1, 2), n_features=n)`` makes of the texts (a bigram is the token
``"a b"`` hashed into the same space), so either n-gram choice is a column selection of the same
chunk, and the model saved with ``ngram_range`` (1, 2) sees at ``predict`` what it was trained on.
The reader's thread hashes ``U`` and ``B`` (tokenizing twice) and adds them; the training thread
only selects columns.

A :class:`FeatureSet` is such a view and a term weighting: raw counts, or sublinear
``1 + log(tf)`` (scikit-learn's ``sublinear_tf``), a per-value map that ``predict`` repeats
(:func:`nbgpu._interop.vectorizer_settings.weighted`). Every feature set keeps statistics of its
own per fold; candidates of a feature set share them.
"""

from __future__ import annotations

from typing import NamedTuple

import scipy.sparse as sp

from .._interop.vectorizer_settings import weighted


class FeatureSet(NamedTuple):
    """What the model sees: ``ngram`` None (the data's columns as they are) or the highest word
    n-gram (1 or 2) of the hashed text; ``tf``: "counts" or "sublinear"."""

    ngram: object
    tf: str

    @property
    def name(self):
        words = "columns" if self.ngram is None else ("unigrams" if self.ngram == 1 else "1-2grams")
        return f"{words}, {'sublinear tf' if self.tf == 'sublinear' else 'counts'}"

    def record(self):
        """The model file's description (``metadata['features']``) of this feature set."""
        out = {"tf": self.tf}
        if self.ngram is not None:
            out["ngram_range"] = [1, self.ngram]
        return out

    def view(self, X):
        """The rows ``X`` (host; hashed text as :func:`text_transform` makes them, else as read) as this
        feature set sees them."""
        if self.ngram is not None:
            width = X.shape[1] // 2  # unigrams, then unigrams and bigrams
            X = X[:, :width] if self.ngram == 1 else X[:, width:]
        return weighted(X, self.tf)


def feature_sets(*, text, ngram_fixed, tf=None):
    """The feature sets auto compares: hashed text (``text``) in unigrams and 1-2grams (unless
    ``ngram_fixed``: the vectorizer's as given), counts and sublinear tf (``tf`` fixes it);
    other data: their columns as they are (values need not be whole numbers there, and
    1 + log of a value below 1/e would be negative)."""
    weightings = (tf,) if tf is not None else ("counts", "sublinear") if text else ("counts",)
    ngrams = (1, 2) if text and not ngram_fixed else (None,)
    return [FeatureSet(n, w) for n in ngrams for w in weightings]


def text_transform(vectorizer):
    """``transform(texts)``: unigram counts, then unigram and bigram counts, of the HashingVectorizer
    parameters ``vectorizer`` (a dict; n_features each), side by side in one CSR matrix of twice the width."""
    from .readers import _text_transform

    unigrams = _text_transform({**vectorizer, "ngram_range": (1, 1)})
    bigrams = _text_transform({**vectorizer, "ngram_range": (2, 2)})

    def transform(texts):
        U = unigrams(texts)
        return sp.hstack([U, U + bigrams(texts)], format="csr")

    return transform
