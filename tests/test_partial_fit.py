"""``fit`` is ``partial_fit`` from empty statistics: any chunking gives the
model one ``fit`` gives, GaussianNB included (where scikit-learn's does not).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _data import MODELS, PREDICT_METHODS, assert_models_equal, ours, random_data, reference
from conftest import to_numpy

N = 90


def chunkings(n):
    return {
        "one": [n],
        "halves": [n // 2, n - n // 2],
        "sevens": [7] * (n // 7) + ([n % 7] if n % 7 else []),
        "uneven": [1, 2, 50, n - 53],
        "single_rows_then_rest": [1] * 5 + [n - 5],
    }


def partial(name, X, y, sizes, *, sample_weight=None, classes=(0, 1, 2), **params):
    model = ours(name, **params)
    start = 0
    for size in sizes:
        stop = start + size
        sw = None if sample_weight is None else sample_weight[start:stop]
        model.partial_fit(X[start:stop], y[start:stop], classes=np.asarray(classes), sample_weight=sw)
        start = stop
    assert start == X.shape[0]
    return model


def _data(name):
    X, y = random_data(name, n=N, d=6, k=3, seed=21)
    # Sorted by the first feature: early chunks lack the large values (for
    # CategoricalNB: the high categories, so n_categories_ grows), and some
    # chunks lack a class.
    order = np.argsort(X[:, 0], kind="stable")
    return X[order], y[order]


@pytest.mark.parametrize("chunking", list(chunkings(N)))
@pytest.mark.parametrize("name", MODELS)
def test_chunked_partial_fit_equals_fit(name, chunking):
    X, y = _data(name)
    whole = ours(name).fit(X, y)
    assert_models_equal(partial(name, X, y, chunkings(N)[chunking]), whole, name)


@pytest.mark.parametrize("name", MODELS)
def test_chunked_partial_fit_with_weights_and_parameters(name):
    X, y = _data(name)
    w = np.random.default_rng(0).uniform(0, 3, size=N)
    params = {"GaussianNB": {"var_smoothing": 1e-2}, "ComplementNB": {"norm": True}}.get(name, {"alpha": 0.3})
    whole = ours(name, **params).fit(X, y, sample_weight=w)
    assert_models_equal(partial(name, X, y, chunkings(N)["sevens"], sample_weight=w, **params), whole, name)


@pytest.mark.parametrize("name", MODELS)
def test_chunks_mix_dense_and_sparse(name):
    X, y = _data(name)
    model = ours(name)
    cuts = [0, 20, 45, 70, N]
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        chunk = X[a:b] if i % 2 == 0 else (sp.csr_matrix if i == 1 else sp.csc_array)(X[a:b])
        model.partial_fit(chunk, y[a:b], classes=[0, 1, 2])
    assert_models_equal(model, ours(name).fit(X, y), name)


@pytest.mark.parametrize("name", MODELS)
def test_discrete_partial_fit_matches_sklearn_partial_fit(name):
    """scikit-learn's own partial_fit (where it is chunking-invariant) agrees."""
    X, y = _data(name)
    model = partial(name, X, y, chunkings(N)["uneven"])
    X_ref = X.astype(np.int64) if name == "CategoricalNB" else X
    ref = reference(name).fit(X_ref, y)
    for method in PREDICT_METHODS:
        np.testing.assert_allclose(to_numpy(getattr(model, method)(X)), getattr(ref, method)(X_ref), rtol=1e-9)


def test_gaussian_epsilon_does_not_depend_on_chunking():
    # Chunks of very different spread: scikit-learn re-derives epsilon_ from
    # the last chunk, so its chunked model differs from its fit; ours does not.
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(scale=100.0, size=(30, 3)), rng.normal(scale=0.01, size=(30, 3))])
    y = np.arange(60) % 2
    fitted = ours("GaussianNB").fit(X, y)
    ref = reference("GaussianNB").fit(X, y)
    assert fitted.epsilon_ == pytest.approx(ref.epsilon_, rel=1e-12)
    ref_chunked = reference("GaussianNB")
    ref_chunked.partial_fit(X[:30], y[:30], classes=[0, 1])
    ref_chunked.partial_fit(X[30:], y[30:])
    assert ref_chunked.epsilon_ < 1e-6 * ref.epsilon_  # scikit-learn's chunking dependence
    for sizes in ([30, 30], [1] * 60, [59, 1]):
        model = partial("GaussianNB", X, y, sizes, classes=(0, 1))
        assert model.epsilon_ == pytest.approx(fitted.epsilon_, rel=1e-12)
        assert_models_equal(model, fitted, "GaussianNB")


@pytest.mark.parametrize("name", MODELS)
def test_partial_fit_after_fit_continues_and_fit_resets(name):
    X, y = _data(name)
    model = ours(name).fit(X[:40], y[:40])
    model.partial_fit(X[40:], y[40:])
    assert_models_equal(model, ours(name).fit(X, y), name)
    model.fit(X[40:], y[40:])  # fit forgets everything learned before
    assert_models_equal(model, ours(name).fit(X[40:], y[40:]), name)


@pytest.mark.parametrize("name", MODELS)
def test_classes_may_be_repeated_on_later_calls(name):
    X, y = _data(name)
    model = ours(name).partial_fit(X[:45], y[:45], classes=[2, 0, 1])  # any order
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    model.partial_fit(X[45:], y[45:], classes=np.array([0, 1, 2]))
    assert_models_equal(model, ours(name).fit(X, y), name)


@pytest.mark.parametrize("name", MODELS)
def test_class_absent_from_all_data_so_far(name):
    """A class named in ``classes`` but not yet seen has zero count and finite scores."""
    X, y = _data(name)
    keep = y != 2
    model = ours(name).partial_fit(X[keep], y[keep], classes=[0, 1, 2])
    assert float(to_numpy(model.class_count_)[2]) == 0.0
    proba = to_numpy(model.predict_proba(X[keep]))
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    model.partial_fit(X[~keep], y[~keep])
    whole = ours(name).fit(np.concatenate([X[keep], X[~keep]]), np.concatenate([y[keep], y[~keep]]))
    assert_models_equal(model, whole, name)
