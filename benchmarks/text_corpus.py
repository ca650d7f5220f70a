"""A labelled bag-of-words matrix for the benchmark scripts of this folder.

``load_counts()`` reads a corpus built by ``benchmarks/corpora.py`` (JSON
lines ``{"text", "label"}``; by default ``pydoc-en`` in ``$NBGPU_CORPORA``
or ``benchmarks/.corpora``) and turns it into word counts with
scikit-learn's ``CountVectorizer`` (int64 CSR, as a text pipeline hands it
over). Without a built corpus it says so and falls back to a synthetic
Zipfian corpus of the same shape, so the scripts always run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer


def corpus_path(name="pydoc-en"):
    folder = Path(os.environ.get("NBGPU_CORPORA", Path(__file__).resolve().parent / ".corpora"))
    return folder / f"{name}.jsonl"


def load_texts(name="pydoc-en"):
    """(texts, labels) of a built corpus, or None when it is not built."""
    path = corpus_path(name)
    if not path.exists():
        return None
    texts, labels = [], []
    with path.open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            texts.append(doc["text"])
            labels.append(doc["label"])
    return texts, np.asarray(labels)


def _synthetic(n_docs=35_000, n_words=60_000, n_classes=32, seed=0):
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_words + 1)
    y = rng.integers(0, n_classes, n_docs)
    lengths = rng.poisson(120, n_docs) + 1
    nnz_rows, cols = [], []
    tilt = np.exp(rng.normal(scale=0.8, size=(n_classes, n_words)))
    for c in range(n_classes):
        p = base * tilt[c]
        p /= p.sum()
        rows = np.flatnonzero(y == c)
        words = rng.choice(n_words, size=int(lengths[rows].sum()), p=p)
        nnz_rows.append(np.repeat(rows, lengths[rows]))
        cols.append(words)
    X = sp.csr_matrix(
        (np.ones(sum(map(len, cols)), dtype=np.int64), (np.concatenate(nnz_rows), np.concatenate(cols))),
        shape=(n_docs, n_words),
    )
    X.sum_duplicates()
    return X, y


def load_counts(name="pydoc-en", *, min_df=2):
    """(X int64 CSR word counts, y labels, description)."""
    loaded = load_texts(name)
    if loaded is None:
        X, y = _synthetic()
        return X, y, f"synthetic Zipfian corpus ({corpus_path(name)} not built: run benchmarks/corpora.py build)"
    texts, y = loaded
    X = CountVectorizer(min_df=min_df).fit_transform(texts)
    return X, y, f"{name} ({len(texts)} documents, CountVectorizer(min_df={min_df}))"
