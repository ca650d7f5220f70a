"""scipy.sparse input (CSR, CSC; matrix and array classes) for every model,
GaussianNB and CategoricalNB included: the same model and scores as the dense
input, and never a dense copy of X.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from _data import MODELS, PREDICT_METHODS, assert_models_equal, ours, random_data
from conftest import to_numpy

SPARSE = {
    "csr_matrix": sp.csr_matrix,
    "csc_matrix": sp.csc_matrix,
    "csr_array": sp.csr_array,
    "csc_array": sp.csc_array,
    "coo_array": sp.coo_array,  # converted to CSR
}


def _sparse_data(name, seed=41, n=80, d=12):
    X, y = random_data(name, n=n, d=d, k=3, seed=seed)
    if name == "GaussianNB":  # make it sparse: about 60% zeros
        X[np.random.default_rng(seed).uniform(size=X.shape) < 0.6] = 0.0
    return X, y


@pytest.mark.parametrize("fmt", list(SPARSE))
@pytest.mark.parametrize("name", MODELS)
def test_sparse_equals_dense(name, fmt):
    X, y = _sparse_data(name)
    assert (X == 0).mean() > 0.2  # the sparse paths really skip zeros
    dense = ours(name).fit(X, y)
    model = ours(name).fit(SPARSE[fmt](X), y)
    assert_models_equal(model, dense, name, rtol=1e-9)
    for method in PREDICT_METHODS:
        got = getattr(model, method)(SPARSE[fmt](X))
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, getattr(dense, method)(X), rtol=1e-9, atol=1e-9, err_msg=method)
    np.testing.assert_array_equal(model.predict(SPARSE[fmt](X)), dense.predict(X))


@pytest.mark.parametrize("name", MODELS)
def test_sparse_float32(name, dtype):
    X, y = _sparse_data(name)
    Xs = sp.csr_array(X.astype(dtype))
    model = ours(name).fit(Xs, y)
    proba = model.predict_proba(Xs)
    assert proba.dtype == np.dtype(dtype)
    assert model.class_count_.dtype == np.float64
    ref = ours(name).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(proba, ref, rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_non_canonical_sparse(name):
    """Duplicate entries (summed by scipy) and explicitly stored zeros."""
    X, y = _sparse_data(name, n=40, d=6)
    coo = sp.coo_matrix(X)
    half = coo.data / 2
    # Every value stored as two halves, plus a stored zero in every row.
    rows = np.concatenate([coo.row, coo.row, np.arange(40)])
    cols = np.concatenate([coo.col, coo.col, np.zeros(40, dtype=int)])
    data = np.concatenate([half, coo.data - half, np.zeros(40)])
    order = np.argsort(rows, kind="stable")  # CSR by hand: scipy's COO route would sum
    indptr = np.searchsorted(rows[order], np.arange(X.shape[0] + 1))
    X_odd = sp.csr_matrix((data[order], cols[order], indptr), shape=X.shape)
    assert not X_odd.has_canonical_format
    np.testing.assert_array_equal(X_odd.toarray(), X)
    dense = ours(name).fit(X, y)
    model = ours(name).fit(X_odd, y)
    assert_models_equal(model, dense, name, rtol=1e-9)
    np.testing.assert_allclose(model.predict_proba(X_odd), dense.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_categorical_implicit_zeros_are_category_zero():
    X = np.array([[0, 2], [1, 0], [0, 0], [2, 1], [0, 2], [1, 1]], dtype=float)
    y = np.array([0, 0, 1, 1, 1, 0])
    model = ours("CategoricalNB").fit(sp.csr_matrix(X), y)
    # Hand count of feature 0's categories per class: class 0 rows 0,1,5 -> 0,1,1.
    np.testing.assert_array_equal(model.category_count_[0], [[1, 2, 0], [2, 0, 1]])
    np.testing.assert_array_equal(model.category_count_[1], [[1, 1, 1], [1, 1, 1]])


@pytest.mark.parametrize("name", MODELS)
def test_wide_sparse_input_is_never_densified(name):
    """200k columns: fitting and scoring stay far below the size of a dense X."""
    n, d = 300, 200_000
    rng = np.random.default_rng(7)
    nnz = 3000
    X = sp.csr_matrix(
        (rng.integers(1, 4, size=nnz).astype(np.float64), (rng.integers(0, n, nnz), rng.integers(0, d, nnz))),
        shape=(n, d),
    )
    y = np.arange(n) % 3
    dense_bytes = n * d * 8  # 480 MB
    tracemalloc.start()
    try:
        model = ours(name).fit(X, y)
        proba = model.predict_proba(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < dense_bytes / 4, f"peak {peak / 2**20:.0f} MiB"
    assert proba.shape == (n, 3)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    if name in ("MultinomialNB", "ComplementNB", "BernoulliNB"):
        # Hand count of the columns that hold data (binarized for Bernoulli).
        used = np.unique(X.indices)
        Xc = X[:, used].toarray()
        Xc = (Xc > 0).astype(float) if name == "BernoulliNB" else Xc
        want = np.stack([Xc[y == c].sum(axis=0) for c in range(3)])
        np.testing.assert_array_equal(to_numpy(model.feature_count_)[:, used], want)
