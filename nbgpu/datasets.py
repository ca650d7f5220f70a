"""Synthetic and built-in data sets for trying and timing the models.

Each ``make_*`` function returns ``(X, y)`` on the host (numpy, or a scipy
CSR matrix for text) shaped for one family of models, with labels
``0 .. n_classes - 1`` drawn uniformly; the same ``random_state`` gives the same
data. :func:`load_stdlib_docstrings` is a real labelled text corpus every
Python installation has. ``nbgpu bench`` times the models on these:
:func:`make_bench_data` builds the data of each of its size presets.

Examples
--------
>>> from nbgpu.datasets import make_zipf_text
>>> from nbgpu import MultinomialNB
>>> X, y = make_zipf_text(200, 2**10, n_classes=3, random_state=0)
>>> X.shape, X.dtype.name, y.dtype.name
((200, 1024), 'float32', 'int64')
>>> MultinomialNB().fit(X, y).score(X, y) > 0.9
True
"""

from __future__ import annotations

import ast
import collections
import gc
import numbers
import os
import sysconfig
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._estimator.params import Interval, InvalidParameterError, Options

__all__ = ["load_stdlib_docstrings", "make_bench_data", "make_categorical", "make_gaussian", "make_zipf_text"]

# make_zipf_text: the share of tokens moved by the document's class (what makes
# the classes differ) and the stride, prime to typical widths, they move by.
_TOPIC_SHARE = 0.2
_TOPIC_STRIDE = 1013
# Parts of the standard library folder that are not its documented modules.
_NOT_STDLIB = frozenset({"site-packages", "dist-packages", "idlelib", "lib2to3", "turtledemo"})
_COUNT = Interval(numbers.Integral, 1, None, closed="left")
# The data sets of `nbgpu bench --size SIZE` (make_bench_data), as the arguments of their make_*:
# text and wide (documents, features, tokens per document, classes), categorical (rows, features,
# categories, classes), gaussian (rows, features, classes). "full": the sizes nbgpu's CPU speed goals
# are set at; "gpu": >= 1e8 stored values. wide: a wide hashed model's corpus, its last
# _BENCH_PREDICTED_DOCS rows the documents predicted.
_BENCH_SIZES = {
    "tiny": {"text": (2_000, 2**12, 50, 5), "categorical": (2_000, 10, 5, 3), "gaussian": (5_000, 20, 3),
             "wide": (6_000, 2**20, 100, 50)},
    "small": {"text": (20_000, 2**16, 100, 20), "categorical": (20_000, 50, 10, 10), "gaussian": (50_000, 100, 10),
              "wide": (22_000, 2**20, 100, 50)},
    "full": {"text": (100_000, 2**18, 100, 20), "categorical": (100_000, 50, 10, 10),
             "gaussian": (200_000, 100, 10), "wide": (102_000, 2**20, 100, 50)},
    "gpu": {"text": (1_200_000, 2**20, 100, 20), "categorical": (2_000_000, 50, 10, 10),
            "gaussian": (4_000_000, 100, 10), "wide": (102_000, 2**20, 100, 50)},
}
_BENCH_PREDICTED_DOCS = 2_000


def _check(function, interval=_COUNT, **values):
    """Raise, naming the parameter of ``function``, if one of ``values`` is not in ``interval``."""
    for name, value in values.items():
        if not interval.is_satisfied_by(value):
            msg = f"The {name!r} parameter of {function} must be {interval}. Got {value!r} instead."
            raise InvalidParameterError(msg)


def _generator(random_state, function):
    """A numpy ``Generator`` from ``random_state`` (None: fresh entropy; an int: a seed; a Generator: itself)."""
    if random_state is None or isinstance(random_state, np.random.Generator) or (
        isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_))
        and random_state >= 0
    ):
        return np.random.default_rng(random_state)
    msg = (f"The 'random_state' parameter of {function} must be None, an int >= 0 or a "
           f"numpy.random.Generator. Got {random_state!r} instead.")
    raise InvalidParameterError(msg)


def make_zipf_text(n_samples=1000, n_features=2**16, *, tokens_per_doc=100, n_classes=2, random_state=None):
    """A bag-of-words corpus whose word frequencies follow Zipf's law.

    Every document has a Poisson number of tokens (mean ``tokens_per_doc``);
    a token is the word of rank ``r`` with probability proportional to
    ``1 / r``, the ranks placed on the ``n_features`` columns by a random
    permutation. A fifth of the tokens is moved by an offset proportional to the
    document's class, so that the classes differ as topics do.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of documents (rows).
    n_features : int, default=65536
        Number of distinct words (columns), as a hashing vectorizer's width.
    tokens_per_doc : float, default=100
        Mean number of tokens in a document (> 0).
    n_classes : int, default=2
        Number of classes.
    random_state : None, int or numpy.random.Generator, default=None
        The source of randomness: an int for reproducible data.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), float32
        Word counts, sorted indices without duplicates; int32 indices up to
        2**31 stored values.
    y : ndarray of shape (n_samples,), int64
        Class labels in ``0 .. n_classes - 1``.

    See Also
    --------
    load_stdlib_docstrings : real text, labelled by module.

    Examples
    --------
    >>> from nbgpu.datasets import make_zipf_text
    >>> X, y = make_zipf_text(100, 512, tokens_per_doc=20, random_state=0)
    >>> X.shape, int(X.sum() > 0), sorted(set(y.tolist()))
    ((100, 512), 1, [0, 1])
    """
    _check("make_zipf_text", n_samples=n_samples, n_features=n_features, n_classes=n_classes)
    _check("make_zipf_text", Interval(numbers.Real, 0, None, closed="neither"), tokens_per_doc=tokens_per_doc)
    rng = _generator(random_state, "make_zipf_text")
    lengths = rng.poisson(tokens_per_doc, n_samples)
    total = int(lengths.sum())
    cdf = np.cumsum(1.0 / np.arange(1, n_features + 1))
    ranks = np.searchsorted(cdf, rng.random(total) * cdf[-1])
    y = rng.integers(0, n_classes, n_samples)
    topic = rng.random(total) < _TOPIC_SHARE
    doc_class = np.repeat(y, lengths)
    ranks = np.where(topic, (ranks + doc_class * _TOPIC_STRIDE) % n_features, ranks)
    words = rng.permutation(n_features).astype(np.int32)[ranks]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    index_dtype = np.int32 if total < 2**31 else np.int64
    X = sp.csr_matrix(
        (np.ones(total, np.float32), words, indptr.astype(index_dtype)), shape=(n_samples, n_features)
    )
    X.sum_duplicates()
    return X, y


def make_categorical(n_samples=1000, n_features=10, *, n_categories=5, n_classes=2, random_state=None):
    """Categorical features whose most frequent category depends on the class.

    Half of the values (at random) are a class-and-feature category plus a
    small noise; the other half are uniform over the categories.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=10
        Number of columns.
    n_categories : int, default=5
        Number of categories of every column: codes ``0 .. n_categories - 1``.
    n_classes : int, default=2
        Number of classes.
    random_state : None, int or numpy.random.Generator, default=None
        The source of randomness: an int for reproducible data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float32
        Category codes (whole numbers), as :class:`nbgpu.CategoricalNB` reads them.
    y : ndarray of shape (n_samples,), int64
        Class labels in ``0 .. n_classes - 1``.

    Examples
    --------
    >>> from nbgpu.datasets import make_categorical
    >>> X, y = make_categorical(50, 4, n_categories=3, random_state=0)
    >>> X.shape, float(X.max()) <= 2
    ((50, 4), True)
    """
    _check("make_categorical", n_samples=n_samples, n_features=n_features, n_categories=n_categories,
           n_classes=n_classes)
    rng = _generator(random_state, "make_categorical")
    y = rng.integers(0, n_classes, n_samples)
    shift = rng.integers(0, n_categories, (n_classes, n_features))
    noise = rng.integers(0, n_categories, (n_samples, n_features))
    keep = rng.random((n_samples, n_features)) < 0.5
    X = np.where(keep, (shift[y] + noise // 3) % n_categories, noise)
    return X.astype(np.float32), y


def make_gaussian(n_samples=1000, n_features=20, *, n_classes=2, random_state=None):
    """Standard normal features shifted by a mean of each class.

    The class means are standard normal too, so the classes overlap as much
    as ``n_features`` lets them.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=20
        Number of columns.
    n_classes : int, default=2
        Number of classes.
    random_state : None, int or numpy.random.Generator, default=None
        The source of randomness: an int for reproducible data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float32
        The features.
    y : ndarray of shape (n_samples,), int64
        Class labels in ``0 .. n_classes - 1``.

    Examples
    --------
    >>> from nbgpu.datasets import make_gaussian
    >>> X, y = make_gaussian(100, 3, n_classes=4, random_state=0)
    >>> X.shape, X.dtype.name, len(set(y.tolist()))
    ((100, 3), 'float32', 4)
    """
    _check("make_gaussian", n_samples=n_samples, n_features=n_features, n_classes=n_classes)
    rng = _generator(random_state, "make_gaussian")
    y = rng.integers(0, n_classes, n_samples)
    means = rng.standard_normal((n_classes, n_features)).astype(np.float32)
    X = rng.standard_normal((n_samples, n_features), dtype=np.float32)
    X += means[y]
    return X, y


def make_bench_data(data, size="small"):
    """The synthetic data set ``nbgpu bench --size SIZE`` times, built as it builds it.

    The same data on every call (seeded): to time or profile the models, or
    one's own pipeline, on the data of nbgpu's published figures (the README's
    speed table is ``size="full"``) outside the command.

    Parameters
    ----------
    data : {"text", "categorical", "gaussian", "wide"}
        ``"text"``: the corpus of :func:`make_zipf_text` that MultinomialNB,
        ComplementNB and BernoulliNB are timed on; ``"categorical"``
        (:func:`make_categorical`): CategoricalNB's; ``"gaussian"``
        (:func:`make_gaussian`): GaussianNB's; ``"wide"``: the corpus of the
        wide hashed model of ``--data streaming`` (2**20 features, 50
        classes), whose last 2,000 rows are the documents it predicts.
    size : {"tiny", "small", "full", "gpu"}, default="small"
        The preset: ``"full"`` is the size nbgpu's CPU speed goals are set at
        (100,000 documents), ``"gpu"`` at least 1e8 stored values.

    Returns
    -------
    X : scipy.sparse.csr_matrix or ndarray, float32
        As the ``make_*`` function of ``data`` returns it.
    y : ndarray of shape (X.shape[0],), int64
        Class labels.

    See Also
    --------
    make_zipf_text, make_categorical, make_gaussian : the same data at any size.

    Examples
    --------
    >>> from nbgpu.datasets import make_bench_data
    >>> X, y = make_bench_data("text", "tiny")
    >>> X.shape, len(set(y.tolist()))
    ((2000, 4096), 5)
    """
    _check("make_bench_data", Options(next(iter(_BENCH_SIZES.values()))), data=data)
    _check("make_bench_data", Options(_BENCH_SIZES), size=size)
    shape = _BENCH_SIZES[size][data]
    if data in ("text", "wide"):
        n, d, tokens, n_classes = shape
        seed = 1 if data == "wide" else 0  # the wide corpus is not the text one grown
        return make_zipf_text(n, d, tokens_per_doc=tokens, n_classes=n_classes, random_state=seed)
    if data == "categorical":
        n, d, n_categories, n_classes = shape
        return make_categorical(n, d, n_categories=n_categories, n_classes=n_classes, random_state=0)
    n, d, n_classes = shape
    return make_gaussian(n, d, n_classes=n_classes, random_state=0)


def _statement_nodes(tree):
    """The nodes of ``tree`` that hold statements, in :func:`ast.walk`'s order: the
    expressions, where no docstring is, are not walked (a walk 3-4x faster: a fifth of a build's CPU)."""
    todo = collections.deque([tree])
    while todo:
        node = todo.popleft()
        todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, _HOLDS_STATEMENTS))
        yield node


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _stdlib_sources(root):
    """The ``.py`` files under ``root`` outside :data:`_NOT_STDLIB` and the tests, in sorted order. The
    excluded folders are not entered: site-packages may hold far more files than the library itself."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [s for s in subfolders if s not in _NOT_STDLIB and not s.startswith("test")]
        found += [Path(folder, f) for f in files if f.endswith(".py") and not f.startswith("test")]
    return sorted(found)


def load_stdlib_docstrings(*, limit=None):
    """The docstrings of this Python's standard library, labelled by module.

    Docstrings of at least 40 characters and 5 words, each text once,
    labelled by the top-level module it is first found in (modules with
    fewer than 40 of them pooled as ``"other"``), in a fixed shuffled order.
    They are read from the sources with :mod:`ast`: nothing is imported, run
    or downloaded, so every installation of a Python version builds the same
    corpus (some thousands of documents, a few seconds).

    Parameters
    ----------
    limit : int or None, default=None
        Return the first ``limit`` documents only.

    Returns
    -------
    texts : list of str
        The documents.
    labels : ndarray of shape (len(texts),), str
        Their modules (``"json"``, ``"email"``, ..., ``"other"``).

    See Also
    --------
    make_zipf_text : synthetic word counts of any size.
    """
    if limit is not None:
        _check("load_stdlib_docstrings", Interval(numbers.Integral, 0, None, closed="left"), limit=limit)
    root = Path(sysconfig.get_paths()["stdlib"])
    docs = {}  # text: label of its first place
    # The syntax trees hold no reference cycles (reference counting frees each file's), so the
    # cyclic collector, run by their millions of nodes, is paused: a build 3.75-5.00 -> 3.39-4.12 CPU s
    # (medians 4.2 -> 3.5 of 4 alternating processes, load 2.0-2.1).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for path in _stdlib_sources(root):
            parts = path.relative_to(root).parts
            try:
                tree = ast.parse(path.read_bytes(), filename=str(path))
            except (SyntaxError, ValueError):
                continue
            label = parts[0].removesuffix(".py")
            for node in _statement_nodes(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    text = ast.get_docstring(node)
                    if text and len(text) >= 40 and len(text.split()) >= 5:
                        docs.setdefault(text, label)
    finally:
        if collecting:
            gc.enable()
    texts, labels = list(docs), np.asarray(list(docs.values()))
    names, counts = np.unique(labels, return_counts=True)
    labels = np.where(np.isin(labels, names[counts < 40]), "other", labels)
    order = np.random.default_rng(0).permutation(len(docs))[:limit]
    return [texts[i] for i in order], labels[order]
