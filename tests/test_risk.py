"""Minimum-risk decisions: ``loss_matrix`` and ``predict_risk`` on every model."""

import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu
from conftest import assert_namespace, to_numpy
from model_checks import EXTRA_MODELS, make_model

MODELS = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"]


def _data(n=90, d=6, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    # Class-dependent counts, so posteriors are neither flat nor certain.
    X = rng.poisson(1.0 + y[:, None] * np.linspace(0.2, 1.0, d)).astype(float)
    return np.minimum(X, 6), y


@pytest.mark.parametrize("name", MODELS + EXTRA_MODELS)
def test_zero_one_loss_is_argmax(backend, dtype, name):
    X, y = _data()
    Xb, yb = backend.asarray(X, dtype), backend.asarray(y)
    plain = make_model(name).fit(Xb, yb)
    zero_one = make_model(name, loss_matrix=1.0 - np.eye(3)).fit(Xb, yb)
    np.testing.assert_array_equal(to_numpy(zero_one.predict(Xb)), to_numpy(plain.predict(Xb)))
    risk = zero_one.predict_risk(Xb)
    assert_namespace(risk, backend)
    assert risk.dtype == Xb.dtype
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_numpy(risk), 1.0 - to_numpy(plain.predict_proba(Xb)), rtol=rtol, atol=rtol)
    # loss_matrix=None gives the same risks (the 0-1 loss).
    np.testing.assert_allclose(to_numpy(plain.predict_risk(Xb)), to_numpy(risk), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name", MODELS + EXTRA_MODELS)
def test_asymmetric_loss_matches_hand_computation(backend, name):
    X, y = _data(seed=1)
    loss = np.array([[0.0, 8.0, 3.0], [1.0, 0.0, 5.0], [0.5, 0.2, 0.0]])
    Xb = backend.asarray(X)
    est = make_model(name, loss_matrix=loss).fit(Xb, backend.asarray(y))
    proba = to_numpy(est.predict_proba(Xb))
    # R(c_i|x) = Σ_j λ_ij P(c_j|x), written out term by term.
    hand = np.zeros_like(proba)
    for i in range(3):
        for j in range(3):
            hand[:, i] += loss[i, j] * proba[:, j]
    risk = est.predict_risk(Xb)
    assert_namespace(risk, backend)
    np.testing.assert_allclose(to_numpy(risk), hand, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_numpy(risk), proba @ loss.T, rtol=1e-12, atol=1e-14)
    pred = to_numpy(est.predict(Xb))
    np.testing.assert_array_equal(pred, np.argmin(hand, axis=1))
    # The loss changes decisions: otherwise this test would prove nothing.
    assert np.any(pred != np.argmax(proba, axis=1))


def test_loss_matrix_is_read_at_predict_time_and_with_string_labels():
    X, y = _data(seed=2)
    labels = np.array(["ant", "bee", "cat"])[y]
    est = nbgpu.MultinomialNB().fit(X, labels)
    before = est.predict(X)
    # Deciding "ant" is free, anything else costs: everything becomes "ant".
    est.set_params(loss_matrix=[[0, 0, 0], [1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(est.predict(X), np.full(len(X), "ant"))
    est.set_params(loss_matrix=None)
    np.testing.assert_array_equal(est.predict(X), before)


def test_sparse_input_gives_the_dense_decisions():
    X, y = _data(seed=3)
    loss = np.array([[0.0, 4.0, 1.0], [2.0, 0.0, 1.0], [1.0, 6.0, 0.0]])
    for name in MODELS:
        est = getattr(nbgpu, name)(loss_matrix=loss).fit(X, y)
        np.testing.assert_allclose(est.predict_risk(sp.csr_matrix(X)), est.predict_risk(X), rtol=1e-10)
        np.testing.assert_array_equal(est.predict(sp.csr_matrix(X)), est.predict(X))


@pytest.mark.parametrize(
    "loss, match",
    [
        (np.ones((2, 2)), r"shape \(3, 3\).*got shape \(2, 2\)"),
        (np.ones(3), r"shape \(3, 3\)"),
        ([[0, 1, np.nan], [1, 0, 1], [1, 1, 0]], "finite"),
        ([[0, 1, np.inf], [1, 0, 1], [1, 1, 0]], "finite"),
        ([[0, -1, 1], [1, 0, 1], [1, 1, 0]], "non-negative.*-1"),
        ([["a", "b", "c"]] * 3, "numeric"),
    ],
)
def test_bad_loss_matrix_is_rejected_at_fit_and_at_predict(loss, match):
    X, y = _data()
    with pytest.raises(ValueError, match="loss_matrix") as info:
        nbgpu.GaussianNB(loss_matrix=loss).fit(X, y)
    assert info.match(match)
    est = nbgpu.GaussianNB().fit(X, y)
    stats = est._stats
    est.set_params(loss_matrix=loss)
    for method in (est.predict, est.predict_risk):
        with pytest.raises(ValueError, match="loss_matrix"):
            method(X)
    with pytest.raises(ValueError, match="loss_matrix"):
        est.partial_fit(X, y)
    assert est._stats is stats  # the failing call changed nothing


@pytest.mark.parametrize("name", EXTRA_MODELS)
@pytest.mark.parametrize(
    "loss, match",
    [(np.ones((2, 2)), r"shape \(3, 3\)"), ([[0, 1, np.nan], [1, 0, 1], [1, 1, 0]], "finite"), (np.eye(3) - 1, "non-negative")],
)
def test_bad_loss_matrix_of_the_extra_models_names_the_argument(name, loss, match):
    X, y = _data(seed=4)
    est = make_model(name, loss_matrix=loss)
    with pytest.raises(ValueError, match=rf"`loss_matrix`.*{match}"):
        est.fit(X, y)
    assert not hasattr(est, "classes_")
    est = make_model(name).fit(X, y)
    proba = est.predict_proba(X)
    est.set_params(loss_matrix=loss)
    with pytest.raises(ValueError, match="`loss_matrix`"):
        est.predict(X)
    np.testing.assert_array_equal(est.predict_proba(X), proba)  # the fitted model is unchanged


def test_loss_matrix_is_checked_against_the_classes_seen():
    X, y = _data()
    est = nbgpu.BernoulliNB(loss_matrix=1 - np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match=r"`loss_matrix` must have shape \(2, 2\)"):
        est.fit(X[y < 2], y[y < 2])
