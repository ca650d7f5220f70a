"""nbgpu.datasets: shapes, dtypes, labels, determinism under ``random_state``, argument errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu
from nbgpu.datasets import load_stdlib_docstrings, make_bench_data, make_categorical, make_gaussian, make_zipf_text

MAKERS = {
    "make_zipf_text": lambda **kw: make_zipf_text(60, 300, tokens_per_doc=15, n_classes=3, **kw),
    "make_categorical": lambda **kw: make_categorical(60, 7, n_categories=4, n_classes=3, **kw),
    "make_gaussian": lambda **kw: make_gaussian(60, 7, n_classes=3, **kw),
}


def _same(a, b):
    if sp.issparse(a):
        return a.shape == b.shape and (a != b).nnz == 0
    return np.array_equal(a, b)


def test_zipf_text():
    X, y = make_zipf_text(60, 300, tokens_per_doc=15, n_classes=3, random_state=0)
    assert sp.issparse(X) and X.format == "csr" and X.shape == (60, 300)
    assert X.dtype == np.float32 and X.indices.dtype == np.int32 and X.has_sorted_indices
    assert np.all(X.data >= 1) and np.all(X.data == np.round(X.data))  # summed duplicate tokens
    assert y.shape == (60,) and y.dtype == np.int64 and set(y.tolist()) == {0, 1, 2}
    assert abs(X.sum() / 60 - 15) < 3  # a Poisson number of tokens of mean 15 per document


def test_categorical():
    X, y = make_categorical(60, 7, n_categories=4, n_classes=3, random_state=0)
    assert X.shape == (60, 7) and X.dtype == np.float32 and y.dtype == np.int64
    assert set(np.unique(X).tolist()) <= {0.0, 1.0, 2.0, 3.0} and set(y.tolist()) == {0, 1, 2}


def test_gaussian():
    X, y = make_gaussian(60, 7, n_classes=3, random_state=0)
    assert X.shape == (60, 7) and X.dtype == np.float32 and y.dtype == np.int64
    assert set(y.tolist()) == {0, 1, 2} and np.isfinite(X).all()


@pytest.mark.parametrize(("maker", "model"), [("make_zipf_text", "MultinomialNB"),
                                             ("make_categorical", "CategoricalNB"),
                                             ("make_gaussian", "GaussianNB")])
def test_the_classes_can_be_learned(maker, model):
    X, y = MAKERS[maker](random_state=1)
    assert getattr(nbgpu, model)().fit(X, y).score(X, y) > 0.7


@pytest.mark.parametrize(("data", "maker", "shape"), [
    ("text", make_zipf_text, (2_000, 2**12)), ("categorical", make_categorical, (2_000, 10)),
    ("gaussian", make_gaussian, (5_000, 20)), ("wide", make_zipf_text, (6_000, 2**20)),
])
def test_bench_data_is_the_makers_data_seeded(data, maker, shape):
    # `nbgpu bench --size tiny`'s data: the same on every call, and the wide corpus not the text one's.
    X, y = make_bench_data(data, "tiny")
    assert X.shape == shape and y.shape == (shape[0],)
    X2, y2 = make_bench_data(data, "tiny")
    assert _same(X, X2) and np.array_equal(y, y2)
    if data != "wide":
        Xm, _ = maker(*shape, **{"text": {"tokens_per_doc": 50, "n_classes": 5},
                                 "categorical": {"n_categories": 5, "n_classes": 3},
                                 "gaussian": {"n_classes": 3}}[data], random_state=0)
        assert _same(X, Xm)
    else:
        assert set(y.tolist()) == set(range(50))


@pytest.mark.parametrize("maker", MAKERS)
def test_random_state(maker):
    make = MAKERS[maker]
    X, y = make(random_state=4)
    X2, y2 = make(random_state=4)
    assert _same(X, X2) and np.array_equal(y, y2)
    X3, _ = make(random_state=np.random.default_rng(4))  # a Generator: the same stream as its seed
    assert _same(X, X3)
    assert not _same(X, make(random_state=5)[0])
    assert not _same(make()[0], make()[0])  # None: fresh entropy


@pytest.mark.parametrize("maker", MAKERS)
@pytest.mark.parametrize("bad", [-1, 1.5, True, "0", np.random.RandomState(0)])
def test_bad_random_state(maker, bad):
    with pytest.raises(ValueError, match=rf"'random_state' parameter of {maker} must be None, an int >= 0 "
                       rf"or a numpy.random.Generator\. Got .* instead"):
        MAKERS[maker](random_state=bad)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: make_zipf_text(0), "'n_samples' parameter of make_zipf_text must be an int in the range "
         r"\[1, inf\)\. Got 0 instead"),
        (lambda: make_zipf_text(5, 2.0), r"'n_features' .* must be an int .* Got 2\.0 instead"),
        (lambda: make_zipf_text(5, 8, tokens_per_doc=0), r"'tokens_per_doc' .* must be a float in the range "
         r"\(0\.0, inf\)\. Got 0 instead"),
        (lambda: make_zipf_text(5, 8, tokens_per_doc=float("nan")), r"'tokens_per_doc' .* Got nan instead"),
        (lambda: make_zipf_text(5, 8, n_classes=0), r"'n_classes' .* Got 0 instead"),
        (lambda: make_categorical(5, 3, n_categories=0), r"'n_categories' parameter of make_categorical .* "
         r"Got 0 instead"),
        (lambda: make_categorical(5, None), r"'n_features' parameter of make_categorical .* Got None instead"),
        (lambda: make_gaussian(-3, 2), r"'n_samples' parameter of make_gaussian .* Got -3 instead"),
        (lambda: make_gaussian(3, 2, n_classes="2"), r"'n_classes' .* Got '2' instead"),
        (lambda: make_bench_data("texts"), r"'data' parameter of make_bench_data must be a str among "
         r"\{'categorical', 'gaussian', 'text', 'wide'\}\. Got 'texts' instead"),
        (lambda: make_bench_data("text", "huge"), r"'size' parameter of make_bench_data must be a str among "
         r"\{'full', 'gpu', 'small', 'tiny'\}\. Got 'huge' instead"),
        (lambda: load_stdlib_docstrings(limit=-1), r"'limit' parameter of load_stdlib_docstrings must be an int "
         r"in the range \[0, inf\)\. Got -1 instead"),
    ],
)
def test_argument_errors(call, message):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert isinstance(error.value, TypeError)  # scikit-learn's InvalidParameterError is both


def test_stdlib_docstrings(stdlib_docstrings):
    assert gc.isenabled()
    texts, labels = load_stdlib_docstrings(limit=300)
    assert gc.isenabled()  # paused during the build only
    assert len(texts) == len(labels) == 300 and len(set(texts)) == 300
    assert all(isinstance(t, str) and len(t) >= 40 and len(t.split()) >= 5 for t in texts)
    assert labels.dtype.kind == "U" and len(np.unique(labels)) >= 5
    # The same corpus on every run, and `limit` keeps its first documents: another call, the
    # whole corpus (tests/conftest.py, built once for the tests that read it).
    again, again_labels = stdlib_docstrings
    assert again[:300] == texts and np.array_equal(again_labels[:300], labels)
