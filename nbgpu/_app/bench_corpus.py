"""Real text for ``nbgpu bench``: a labelled corpus vectorised the way people do it.

The corpora are JSON lines ``{"text": ..., "label": ...}`` built offline by
``benchmarks/corpora.py`` (in the repository, not in the package) into
``$NBGPU_CORPORA`` or ``benchmarks/.corpora``. Documents come in a fixed
shuffled order, so the first ``limit`` of them are a fair sample. Where
none is built, :func:`stdlib_corpus` makes one on every installation: the
docstrings of the running Python's standard library, read from its sources.

Each input kind is what a scikit-learn vectorizer hands a classifier, as
it comes: TF-IDF in float64 or float32 (unsorted column indices), integer
counts, and, for comparison, the float64 TF-IDF matrix with sorted indices.
"""

from __future__ import annotations

import ast
import json
import os
import sysconfig
from pathlib import Path

import numpy as np


DEFAULT_CORPUS = "pydoc-en"
# The corpus every installation has (stdlib_corpus).
STDLIB_CORPUS = "python-stdlib"
# Parts of the standard library folder that are not its documented modules.
_NOT_STDLIB = frozenset({"site-packages", "dist-packages", "test", "tests", "idlelib", "lib2to3", "turtledemo"})
# Where benchmarks/corpora.py puts the corpora (its --out and $NBGPU_CORPORA).
CORPORA_ENV = "NBGPU_CORPORA"
REPOSITORY_CORPORA = Path("benchmarks") / ".corpora"

INPUT_KINDS = {
    "tfidf64": "TfidfVectorizer(sublinear_tf=True, min_df=2): float64, unsorted indices",
    "tfidf32": "TfidfVectorizer(sublinear_tf=True, min_df=2, dtype=float32): unsorted indices",
    "counts64": "CountVectorizer(min_df=2): int64 counts, unsorted indices",
    "tfidf64-sorted": "the float64 TF-IDF matrix with its indices sorted (a canonical input)",
}
VALIDATION_SHARE = 0.2


def find_corpus(where=None, *, name=DEFAULT_CORPUS):
    """Path of corpus ``name``'s JSON lines file, or None if there is none.

    ``where`` is a ``.jsonl`` file or a folder holding ``NAME.jsonl``; by
    default ``$NBGPU_CORPORA``, then ``benchmarks/.corpora`` below the
    current folder (a checkout of the repository).
    """
    if where is not None:
        places = [Path(where), Path(where) / f"{name}.jsonl"]
    else:
        folders = (os.environ.get(CORPORA_ENV), REPOSITORY_CORPORA)
        places = [Path(folder) / f"{name}.jsonl" for folder in folders if folder]
    return next((path for path in places if path.is_file()), None)


def how_to_build(name=DEFAULT_CORPUS):
    """One line saying how to get a corpus."""
    return (
        f"build one with `python benchmarks/corpora.py build {name}` in a checkout of the repository "
        f"(or point --corpus or ${CORPORA_ENV} at a folder holding {name}.jsonl)"
    )


def stdlib_corpus(*, limit=None, minimum=40):
    """``(texts, labels)``: the docstrings of this Python's standard library
    (modules, classes, functions of at least 40 characters and 5 words),
    labelled by top-level module, those with fewer than ``minimum``
    documents pooled as "other"; identical texts kept once, in a fixed
    shuffled order (the first ``limit`` if given).

    Read from the sources with ``ast``: nothing is imported, run or
    downloaded, so every installation builds the same corpus for its Python.
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    seen, docs = set(), []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if _NOT_STDLIB.intersection(parts) or any(p.startswith("test") for p in parts):
            continue
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError):
            continue
        label = parts[0].removesuffix(".py")
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node)
                if text and len(text) >= 40 and len(text.split()) >= 5 and text not in seen:
                    seen.add(text)
                    docs.append((text, label))
    labels = np.asarray([label for _, label in docs])
    names, counts = np.unique(labels, return_counts=True)
    labels = np.where(np.isin(labels, names[counts < minimum]), "other", labels)
    order = np.random.default_rng(0).permutation(len(docs))[:limit]
    return [docs[i][0] for i in order], labels[order]


def read_corpus(path, *, limit=None):
    """``(texts, labels)`` of a JSON-lines corpus, the first ``limit`` documents if given."""
    texts, labels = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if limit is not None and len(texts) >= limit:
                break
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                texts.append(str(record["text"]))
                labels.append(record["label"])
            except (ValueError, KeyError, TypeError) as exc:
                msg = f"{path}:{number}: not a corpus record {{\"text\": ..., \"label\": ...}} ({exc})"
                raise ValueError(msg) from exc
    return texts, np.asarray(labels)


def split(texts, labels, *, validation=VALIDATION_SHARE, seed=0):
    """A stratified train / validation split: ``(train_texts, y_train, val_texts, y_val)``."""
    from sklearn.model_selection import train_test_split

    tr, va, ytr, yva = train_test_split(texts, labels, test_size=validation, random_state=seed, stratify=labels)
    return tr, np.asarray(ytr), va, np.asarray(yva)


def vectorize(kind, train_texts, validation_texts):
    """``(X_train, X_validation)`` of input kind ``kind`` (see ``INPUT_KINDS``)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    if kind not in INPUT_KINDS:
        msg = f"unknown input kind {kind!r}; known: {', '.join(INPUT_KINDS)}"
        raise ValueError(msg)
    if kind == "counts64":
        vectorizer = CountVectorizer(min_df=2)
    else:
        dtype = np.float32 if kind == "tfidf32" else np.float64
        vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2, dtype=dtype)
    X_train = vectorizer.fit_transform(train_texts)
    X_validation = vectorizer.transform(validation_texts)
    if kind == "tfidf64-sorted":
        X_train.sort_indices()
        X_validation.sort_indices()
    return X_train, X_validation


def describe_inputs(name, kind, X_train, X_validation, n_classes):
    """A one-line label of a real input, for the table and the JSON."""
    return (
        f"{name} (real text): {X_train.shape[0]:,} train / {X_validation.shape[0]:,} validation docs "
        f"× {X_train.shape[1]:,} features, {n_classes} classes, {X_train.nnz:,} stored values; "
        f"{INPUT_KINDS[kind]}"
    )
