"""``sample_weight``: an integer weight is that many repeated rows, a zero
weight is a dropped row, for every model and for dense and sparse input.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _data import MODELS, assert_attributes_close, assert_models_equal, ours, random_data, reference
from conftest import to_numpy

CONTAINERS = {"dense": np.asarray, "csr": sp.csr_matrix, "csc_array": sp.csc_array}


def _weights(n, seed=0):
    w = np.random.default_rng(seed).integers(0, 4, size=n)
    w[:3] = [0, 1, 3]
    return w


@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("name", MODELS)
def test_integer_weights_equal_repeated_rows(name, container):
    X, y = random_data(name, n=60, d=5, k=3, seed=31)
    w = _weights(60)
    wrap = CONTAINERS[container]
    weighted = ours(name).fit(wrap(X), y, sample_weight=w)
    repeated = ours(name).fit(wrap(np.repeat(X, w, axis=0)), np.repeat(y, w))
    assert_models_equal(weighted, repeated, name, rtol=1e-10)


@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("name", MODELS)
def test_zero_weights_equal_dropped_rows(name, container):
    X, y = random_data(name, n=60, d=5, k=3, seed=32)
    # The dropped rows hold extreme values: they must not leak into any
    # statistic (GaussianNB's epsilon_, CategoricalNB's n_categories_).
    X[::4] = X[::4] * 10 + 7
    w = np.ones(60)
    w[::4] = 0
    keep = w > 0
    wrap = CONTAINERS[container]
    weighted = ours(name).fit(wrap(X), y, sample_weight=w)
    dropped = ours(name).fit(wrap(X[keep]), y[keep])
    assert_models_equal(weighted, dropped, name, rtol=1e-10)


@pytest.mark.parametrize("name", MODELS)
def test_weighted_fit_matches_sklearn(name):
    X, y = random_data(name, n=60, d=5, k=3, seed=33)
    w = np.random.default_rng(1).uniform(0.1, 3.0, size=60)
    X_ref = X.astype(np.int64) if name == "CategoricalNB" else X
    model = ours(name).fit(X, y, sample_weight=w)
    ref = reference(name).fit(X_ref, y, sample_weight=w)
    # scikit-learn's GaussianNB takes epsilon_ from the unweighted variance
    # (so a zero weight is not a dropped row there); ours from the weighted one.
    skip = ("epsilon_", "var_") if name == "GaussianNB" else ()
    assert_attributes_close(model, ref, name, skip=skip)
    if name == "GaussianNB":
        np.testing.assert_allclose(
            to_numpy(model.var_) - model.epsilon_, ref.var_ - ref.epsilon_, rtol=1e-9, atol=1e-12
        )
        Xc = X - np.average(X, axis=0, weights=w)
        weighted_var = np.average(Xc * Xc, axis=0, weights=w)
        assert model.epsilon_ == pytest.approx(1e-9 * weighted_var.max(), rel=1e-12)
    np.testing.assert_allclose(to_numpy(model.predict_proba(X)), ref.predict_proba(X_ref), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("form", ["list", "scalar", "float32", "int"])
def test_weight_containers(name, form):
    X, y = random_data(name, n=30, d=3, k=2, seed=34)
    w = np.full(30, 2.0)
    given = {"list": w.tolist(), "scalar": 2.0, "float32": w.astype(np.float32), "int": w.astype(np.int64)}[form]
    model = ours(name).fit(X, y, sample_weight=given)
    assert_models_equal(model, ours(name).fit(X, y, sample_weight=w), name)


@pytest.mark.parametrize("name", MODELS)
def test_sample_weight_is_not_modified(name):
    X, y = random_data(name, n=30, d=3, k=2, seed=35)
    w = np.linspace(0.5, 2.0, 30)
    before = w.copy()
    w.flags.writeable = False  # a write would raise
    ours(name).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(w, before)
