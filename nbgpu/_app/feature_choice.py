"""``nbgpu train --model auto`` on text: the features chosen with the model, from one pass.

The text is tokenized once and hashed into two column ranges of ``n`` columns each (``n`` =
``--hash-features``): unigram counts ``U`` in the first, word-bigram counts ``B`` in the second,
both in the hash space of a HashingVectorizer of ``n`` features (a bigram is the token ``"a b"``).
``U + B`` (the two ranges added column by column) is exactly what
``HashingVectorizer(ngram_range=(1, 2), n_features=n)`` makes of the texts, so either n-gram choice
is made of the same chunk, and the model saved with ``ngram_range`` (1, 2) sees at ``predict`` what
it was trained on.

A :class:`FeatureSet` is such a view and a term weighting: raw counts, or sublinear
``1 + log(tf)`` (scikit-learn's ``sublinear_tf``), a per-value map that ``predict`` repeats
(:func:`nbgpu._interop.vectorizer_settings.weighted`). Its per-class sums come from sums of the
chunk's stored values (:meth:`FeatureSet.terms`): the 1-2gram counts are the sums of ``U`` plus those
of ``B``, and a weighting that changes a stored value ``c`` is the counts' sums less the sums of
``c - w(c)`` over the stored values that are not 1 (:func:`corrections`), the few that it changes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._interop.vectorizer_settings import weighted

# What a stored value c gives up under each weighting of the statistics: c - w(c) (0 where c is 1).
# "presence" is BernoulliNB's binarized value (c > 0).
CORRECTIONS = {
    "sublinear": lambda c: np.where(c > 0, c - 1.0 - np.log(np.where(c > 0, c, 1.0)), 0.0),
    "presence": lambda c: c - (c > 0),
}


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

    def counts(self, X):
        """The rows ``X`` (host; hashed text as :func:`text_transform` makes them, else as read) as
        counts of this feature set's columns."""
        if self.ngram is None:
            return X
        width = X.shape[1] // 2  # unigrams, then bigrams
        return X[:, :width] if self.ngram == 1 else X[:, :width] + X[:, width:]

    def view(self, X):
        """The rows ``X`` as this feature set sees them (counts, weighted)."""
        return self.weighted(self.counts(X))

    def weighted(self, counts):
        """The ``counts`` of this feature set's columns (rows of :meth:`counts`, or some of their columns) weighted."""
        return weighted(counts, self.tf)

    def width(self, data_width):
        """The number of this feature set's columns, of data ``data_width`` wide."""
        return data_width if self.ngram is None else data_width // 2

    def terms(self, *, presence=False):
        """``[(sums, block, sign)]``: this feature set's per-class sums (its values binarized: ``presence``) as
        signed column blocks of sums of the stored values: block ``b`` of ``"counts"`` (the chunks' values as
        read) or of a weighting's :func:`corrections` holds columns ``b * width`` to ``(b + 1) * width``."""
        kind = "presence" if presence else self.tf
        out = [("counts", 0, 1.0)] + ([("counts", 1, 1.0)] if self.ngram == 2 else [])  # 1-2grams: U + B
        if kind != "counts":  # less what the weighting takes off the 1-2grams' (block 1) or unigrams' values
            out.append((kind, 1 if self.ngram == 2 else 0, -1.0))
        return out


def correction_views(X, *, text):
    """``[(offset, view)]``: the views of the rows ``X`` whose stored values :func:`corrections`
    are taken from, and where their columns go (text: unigrams, then 1-2grams; else X)."""
    if not text:
        return [(0, X)]
    width = X.shape[1] // 2
    return [(0, FeatureSet(1, "counts").counts(X)), (width, FeatureSet(2, "counts").counts(X))]


def corrections(view, kind):
    """``(rows, columns, values)`` of ``c - w(c)`` for the stored values ``c`` of the CSR ``view`` that
    weighting ``kind`` changes (those that are not 1)."""
    changed = np.flatnonzero(view.data != 1)
    rows = np.repeat(np.arange(view.shape[0]), np.diff(view.indptr))[changed]
    return rows, view.indices[changed], CORRECTIONS[kind](view.data[changed].astype(np.float64))


def feature_sets(*, text, ngram_fixed, tf=None):
    """The feature sets auto compares: hashed text (``text``) in unigrams and 1-2grams (unless
    ``ngram_fixed``: the vectorizer's as given), counts and sublinear tf (``tf`` fixes it);
    other data: their columns as they are (values need not be whole numbers there, and
    1 + log of a value below 1/e would be negative)."""
    weightings = (tf,) if tf is not None else ("counts", "sublinear") if text else ("counts",)
    ngrams = (1, 2) if text and not ngram_fixed else (None,)
    return [FeatureSet(n, w) for n in ngrams for w in weightings]


def text_transform(vectorizer):
    """``transform(texts)``: unigram counts, then bigram counts, of the HashingVectorizer parameters
    ``vectorizer`` (a dict; n_features each), side by side in one CSR matrix of twice the width. The
    words are tokenized and hashed once (nbgpu's fast path); where it does not apply (stop words,
    documents that are not text), the vectorizer of each n-gram length hashes them."""
    from ..text._transform import fast_plan

    plan = fast_plan({**vectorizer, "ngram_range": (1, 2)})
    if plan is None or plan.stop_words is not None or plan.analyzer != "word" or plan.alternate_sign \
            or plan.binary or plan.norm is not None:
        return _two_transforms(vectorizer)
    fallback = _two_transforms(vectorizer)

    def transform(texts):
        if not texts or not all(type(t) is str for t in texts):
            return fallback(texts)
        X = _unigrams_and_bigrams(texts, plan)
        if X is None:
            return fallback(texts)  # its error names the problem (a lone surrogate)
        return X

    return transform


def _two_transforms(vectorizer):
    from .readers import _text_transform

    unigrams = _text_transform({**vectorizer, "ngram_range": (1, 1)})
    bigrams = _text_transform({**vectorizer, "ngram_range": (2, 2)})
    return lambda texts: sp.hstack([unigrams(texts), bigrams(texts)], format="csr")


def _unigrams_and_bigrams(texts, plan):
    """The CSR matrix ``[U | B]`` of the documents ``texts`` (str) under ``plan`` (word 1-2grams): the
    hashes of the words and word pairs that ``HashingVectorizer`` makes, unigrams in the first
    ``plan.n_features`` columns, bigrams in the next; None for a lone surrogate."""
    from ..text._murmurhash import hash_to_index
    from ..text._pipeline import _chunk_bounds, _spans_word
    from ..text._rows import sum_cells
    from .._array.threads import parallel_map

    n = plan.n_features

    def chunk(bounds):
        docs = texts[bounds[0]:bounds[1]]
        pieces = _spans_word(docs, plan, np)  # unigrams, then bigrams (none below two words)
        # Each hash made its column here: unigrams' in [0, n), bigrams' in [n, 2n), taken as they are below.
        placed = [(hash_to_index(h, n, xp=np)[0] + np.uint32(i and n), rows) for i, (h, rows) in enumerate(pieces)]
        return sum_cells(placed, len(docs), 2 * n, signed=False, xp=np)

    try:
        parts = parallel_map(chunk, _chunk_bounds(texts, plan))
    except UnicodeEncodeError:
        return None
    offsets = np.cumsum([0] + [int(p[0][-1]) for p in parts])
    indptr = np.concatenate([[0]] + [p[0][1:] + o for p, o in zip(parts, offsets)])
    indices = np.concatenate([p[1] for p in parts])
    values = np.concatenate([p[2] for p in parts]).astype(plan.dtype)
    index = np.int32 if indptr[-1] <= np.iinfo(np.int32).max else np.int64
    X = sp.csr_matrix((values, indices.astype(index, copy=False), indptr.astype(index)), shape=(len(texts), 2 * n))
    X.has_sorted_indices = True
    X.has_canonical_format = True
    return X
