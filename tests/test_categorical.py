"""CategoricalNB: categories unseen in training are ignored for that row,
on every backend and for sparse input; codes within ``min_categories`` are
ordinary (smoothed) categories.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import naive_bayes as sk

import nbgpu
from nbgpu._models import categorical as _categorical
from conftest import assert_namespace, to_numpy


def _data(seed=81):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(50, 4)).astype(np.float64)
    y = rng.integers(0, 3, size=50)
    y[:3] = [0, 1, 2]
    return X, y


def _hand_jll(model, X):
    """log P(c) + Σ over the features whose category was seen of log P(x_j | c)."""
    prior = to_numpy(model.class_log_prior_)
    flp = [to_numpy(f) for f in model.feature_log_prob_]
    n_cat = to_numpy(model.n_categories_)
    out = np.tile(prior, (X.shape[0], 1))
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            v = int(X[i, j])
            if v < n_cat[j]:
                out[i] += flp[j][:, v]
    return out


def _with_unseen():
    X, y = _data()
    X_test = X[:8].copy()
    X_test[0, 1] = 3  # one unseen category
    X_test[1, 0] = 100  # far beyond
    X_test[2, [0, 2]] = [7, 5]  # two in one row
    X_test[3, :] = [9, 9, 9, 9]  # every feature unseen: the prior alone
    return X, y, X_test


def test_unseen_category_is_ignored_hand_computation():
    X, y, X_test = _with_unseen()
    model = nbgpu.CategoricalNB().fit(X, y)
    jll = model.predict_joint_log_proba(X_test)
    np.testing.assert_allclose(jll, _hand_jll(model, X_test), rtol=1e-12)
    np.testing.assert_allclose(jll[3], to_numpy(model.class_log_prior_), rtol=1e-12)


def test_unseen_category_equals_fit_without_that_feature():
    """Row 0's unseen feature 1 is as if feature 1 did not exist (scikit-learn oracle)."""
    X, y, X_test = _with_unseen()
    model = nbgpu.CategoricalNB().fit(X, y)
    others = [0, 2, 3]
    ref = sk.CategoricalNB().fit(X[:, others].astype(int), y)
    want = ref.predict_proba(X_test[:1, others].astype(int))
    np.testing.assert_allclose(model.predict_proba(X_test[:1]), want, rtol=1e-10)


@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_array"])
def test_unseen_category_sparse(fmt):
    X, y, X_test = _with_unseen()
    model = nbgpu.CategoricalNB().fit(getattr(sp, fmt)(X), y)
    got = model.predict_joint_log_proba(getattr(sp, fmt)(X_test))
    np.testing.assert_allclose(got, _hand_jll(model, X_test), rtol=1e-12)


def test_unseen_category_on_backend(backend, dtype):
    """The gather path (no sparse library) and the one-hot path agree."""
    X, y, X_test = _with_unseen()
    model = nbgpu.CategoricalNB().fit(backend.asarray(X, dtype=dtype), backend.asarray(y))
    out = model.predict_joint_log_proba(backend.asarray(X_test, dtype=dtype))
    assert_namespace(out, backend)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_numpy(out), _hand_jll(model, X_test), rtol=rtol)
    pred = model.predict(backend.asarray(X_test, dtype=dtype))
    np.testing.assert_array_equal(to_numpy(pred), np.argmax(_hand_jll(model, X_test), axis=1))


def test_codes_within_min_categories_are_ordinary_categories():
    X, y = _data()
    model = nbgpu.CategoricalNB(min_categories=6).fit(X, y)
    ref = sk.CategoricalNB(min_categories=6).fit(X.astype(int), y)
    X_test = X[:5].copy()
    X_test[:, 2] = 5  # never seen in training, but within n_categories_
    np.testing.assert_array_equal(model.n_categories_, [6, 6, 6, 6])
    np.testing.assert_allclose(model.predict_proba(X_test), ref.predict_proba(X_test.astype(int)), rtol=1e-10)


def test_unseen_behaviour_is_documented():
    doc = nbgpu.CategoricalNB.__doc__
    assert "unseen in training" in doc and "IndexError" in doc


@pytest.mark.parametrize("n_features", [1, 2, 5, 6])
@pytest.mark.parametrize("categories", [[3], [40], [3, 40]], ids=["few", "many", "mixed"])
def test_lookup_table_scores_match_hand_computation(backend, n_features, categories):
    """Dense scoring looks features up in pairs when every pair's table is
    small, one at a time otherwise: both layouts, odd and even numbers of
    features, with a category unseen in training in every feature."""
    rng = np.random.default_rng(83)
    m = np.resize(categories, n_features)
    X = (rng.random((300, n_features)) * m).astype(np.int64).astype(np.float64)
    y = rng.integers(0, 3, size=300)
    model = nbgpu.CategoricalNB().fit(backend.asarray(X), backend.asarray(y))
    paired = n_features > 1 and categories != [40]  # a pair of 40-category features needs 41² rows
    lookups = _categorical._groups(to_numpy(model.n_categories_))[0].shape[0]
    assert (lookups < n_features) == paired  # pairs: fewer lookups than features
    X_test = X[:40].copy()
    X_test[np.arange(40), np.arange(40) % n_features] = 1000  # unseen
    jll = model.predict_joint_log_proba(backend.asarray(X_test))
    assert_namespace(jll, backend)
    np.testing.assert_allclose(to_numpy(jll), _hand_jll(model, X_test), rtol=1e-5)
    ref = sk.CategoricalNB().fit(X, y)
    np.testing.assert_allclose(
        to_numpy(model.predict_joint_log_proba(backend.asarray(X))), ref.predict_joint_log_proba(X), rtol=1e-5
    )


@pytest.mark.parametrize("sparse", [False, True])
def test_a_uint64_code_past_int64_is_refused_not_wrapped(sparse):
    # Cast to int64 it wrapped to -1: a negative one-hot column (sparse), a table-size check that passed.
    X = np.array([[0, 1], [1, 0], [2**64 - 1, 0], [1, 1]], dtype=np.uint64)
    X = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match="would keep a table of 2 classes"):
        nbgpu.CategoricalNB().fit(X, [0, 1, 0, 1])
    model = nbgpu.CategoricalNB().fit(np.array([[0, 1], [1, 0], [2, 0], [1, 1]]), [0, 1, 0, 1])
    unseen = np.array([[7, 0]], dtype=np.uint64)  # a code fit never saw
    expected = model.predict_proba(unseen)
    huge = np.array([[2**64 - 1, 0]], dtype=np.uint64)
    np.testing.assert_allclose(model.predict_proba(sp.csr_matrix(huge) if sparse else huge), expected)
