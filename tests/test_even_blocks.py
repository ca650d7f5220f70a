"""Scoring's host row blocks are of one size and a multiple of the threads in number (the threads end
together), a sparse X of many stored values is split over the threads even where one block would
hold it, and the scores stay scikit-learn's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.naive_bayes import ComplementNB as SkComplementNB

import nbgpu
from nbgpu._array import blocks


def _sparse_counts(n=1500, d=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.01, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.ceil(X.data * 4)
    return X, rng.integers(0, 5, n)


def _block_rows(model, X, monkeypatch):
    calls = []
    score = type(model)._joint_log_likelihood
    monkeypatch.setattr(type(model), "_joint_log_likelihood",
                        lambda self, Xb, **kw: calls.append(Xb.shape[0]) or score(self, Xb, **kw))
    proba = model.predict_proba(X)
    monkeypatch.undo()
    return sorted(calls), proba


@pytest.mark.parametrize("threads", [2, 3])
def test_blocks_are_even_and_a_multiple_of_the_threads(threads, monkeypatch):
    X, y = _sparse_counts()
    model = nbgpu.ComplementNB().fit(X, y)
    monkeypatch.setenv("NBGPU_NUM_THREADS", str(threads))
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 5 * 8 * 500)  # 1,500 rows of 5 classes: 3 blocks asked for
    rows, proba = _block_rows(model, X, monkeypatch)
    assert len(rows) % threads == 0 and sum(rows) == X.shape[0]
    assert rows[-1] - rows[0] <= 1
    want = SkComplementNB().fit(X, y).predict_proba(X)
    np.testing.assert_allclose(proba, want, rtol=1e-10, atol=1e-12)


def test_a_sparse_x_of_many_stored_values_is_split_over_the_threads(monkeypatch):
    X, y = _sparse_counts()
    model = nbgpu.ComplementNB().fit(X, y)
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    monkeypatch.setattr(blocks, "PARALLEL_NNZ", X.nnz)
    rows, proba = _block_rows(model, X, monkeypatch)
    assert rows == [750, 750]
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    monkeypatch.setattr(blocks, "PARALLEL_NNZ", X.nnz + 1)  # fewer stored values: one block
    one, whole = _block_rows(model, X, monkeypatch)
    assert one == [1500]
    np.testing.assert_array_equal(proba, whole)  # a row's score does not depend on its block


def test_dense_input_in_one_budget_stays_one_block(monkeypatch):
    rng = np.random.default_rng(1)
    X, y = rng.poisson(1.0, (400, 6)).astype(float), rng.integers(0, 3, 400)
    model = nbgpu.MultinomialNB().fit(X, y)
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    rows, _ = _block_rows(model, X, monkeypatch)
    assert rows == [400]
