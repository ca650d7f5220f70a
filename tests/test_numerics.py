"""Numerical behaviour: float32 accuracy of GaussianNB, exact float64 counts,
and degenerate but legal input giving finite, normalised probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import naive_bayes as sk

from _data import DISCRETE, MODELS, assert_attributes_close, ours, random_data, reference
from conftest import assert_namespace, to_numpy


def assert_normalised(proba, n_classes):
    proba = to_numpy(proba)
    assert proba.shape[1] == n_classes
    assert np.all(np.isfinite(proba))
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)


def _reference_input(name, X):
    return X.astype(np.int64) if name == "CategoricalNB" else X


# --------------------------------------------------------------------------- #
# GaussianNB in float32
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("offset", [0.0, 1e4, 1e6], ids=["centred", "mean_1e4_spread", "mean_1e6_spread"])
def test_gaussian_float32_joint_log_likelihood(backend, offset):
    """Relative error <= 1e-4 against a float64 reference on the same data,
    also where a feature's mean is 10^4 (10^6) times its spread."""
    rng = np.random.default_rng(71)
    n, d, k = 200, 16, 3
    y = rng.integers(0, k, size=n)
    X32 = (offset + rng.normal(size=(n, d)) + 0.5 * rng.normal(size=(k, d))[y]).astype(np.float32)
    X64 = X32.astype(np.float64)  # the float32 data, exactly
    want = sk.GaussianNB().fit(X64, y).predict_joint_log_proba(X64)
    model = ours("GaussianNB").fit(backend.asarray(X32), backend.asarray(y))
    jll = model.predict_joint_log_proba(backend.asarray(X32))
    assert_namespace(jll, backend)
    assert jll.dtype == backend.asarray(X32).dtype
    rel = np.abs(to_numpy(jll).astype(np.float64) - want) / np.abs(want)
    assert rel.max() <= 1e-4, rel.max()
    np.testing.assert_array_equal(to_numpy(model.predict(backend.asarray(X32))), np.argmax(want, axis=1))
    # Scoring centres X only where a mean is large against its spread: both ways are checked here.
    assert model._centred_ == (offset != 0.0)


def _cancelling_data(case):
    rng = np.random.default_rng(72)
    if case == "digits":  # pixels constant (variance epsilon_) in some classes, not in others
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(np.float32), y
    n, d, k = 200, 16, 3
    y = rng.integers(0, k, size=n)
    if case == "classes_100_spreads_apart":
        return (rng.normal(size=(n, d)) + 100.0 * rng.normal(size=(k, d))[y]).astype(np.float32), y
    # one class of a single point, far out: its variance is epsilon_ alone
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[0], y[0], y[1:] = 100.0, 1, 0
    return X, y


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("case", ["classes_100_spreads_apart", "one_point_class", "digits"])
def test_gaussian_float32_scores_where_the_expansion_cancels(backend, case, sparse):
    """The expanded form's terms, of size P(μ − s)², cancel near a class's mean.
    Where float32 rounding of them would matter, float32 input is scored in
    float64 (before: digits disagreed with float64 on 2.7% of predictions, a
    one-point class lost its own point, scores off by 10⁴)."""
    if sparse and not backend.has_sparse:
        pytest.skip(f"{backend.name} has no sparse matrices")
    X32, y = _cancelling_data(case)
    X64 = X32.astype(np.float64)  # the float32 data, exactly
    want = sk.GaussianNB().fit(X64, y).predict_joint_log_proba(X64)
    Xb = backend.sparse(X32) if sparse else backend.asarray(X32)
    model = ours("GaussianNB").fit(Xb, backend.asarray(y))
    jll = model.predict_joint_log_proba(Xb)
    assert jll.dtype == backend.asarray(X32).dtype
    err = np.abs(to_numpy(jll).astype(np.float64) - want) / np.maximum(1.0, np.abs(want))
    assert err.max() <= 1e-4, err.max()
    np.testing.assert_array_equal(to_numpy(model.predict(Xb)), np.argmax(want, axis=1))


def test_counts_are_exact_in_float64_for_float32_input():
    # 2**24 + 1 is not a float32 number: the counts must not pass through float32.
    X = np.array([[1, 2], [3, 0], [0, 5]], dtype=np.float32)
    y = np.array([0, 1, 1])
    w = np.array([2.0**24 + 1, 2.0**24 + 1, 1.0])
    for name in DISCRETE:
        model = ours(name).fit(X, y, sample_weight=w)
        assert model.class_count_.dtype == np.float64
        np.testing.assert_array_equal(model.class_count_, [2.0**24 + 1, 2.0**24 + 2])
    model = ours("MultinomialNB").fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(model.feature_count_, [[2.0**24 + 1, 2 * (2.0**24 + 1)], [3 * (2.0**24 + 1), 5.0]])
    assert model.feature_log_prob_.dtype == np.float32


# --------------------------------------------------------------------------- #
# Degenerate but legal input
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", MODELS)
def test_one_class(name):
    X, _ = random_data(name, n=30, d=4, seed=72)
    y = np.full(30, 7)
    model = ours(name).fit(X, y)
    ref = reference(name).fit(_reference_input(name, X), y)
    proba = model.predict_proba(X)
    assert_normalised(proba, 1)
    np.testing.assert_array_equal(model.predict(X), y)
    np.testing.assert_allclose(to_numpy(model.predict_joint_log_proba(X)), ref.predict_joint_log_proba(
        _reference_input(name, X)), rtol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_constant_features(name):
    X, y = random_data(name, n=40, d=5, seed=73)
    X[:, 1] = 1.0
    X[:, 3] = 0.0
    model = ours(name).fit(X, y)
    ref = reference(name).fit(_reference_input(name, X), y)
    assert_normalised(model.predict_proba(X), 3)
    assert_attributes_close(model, ref, name)
    # A test value never seen in a constant feature still scores finitely.
    X_new = X.copy()
    X_new[:, 1] = 2.0
    assert_normalised(model.predict_proba(X_new), 3)


@pytest.mark.parametrize("name", MODELS)
def test_every_row_identical(name):
    """No spread at all (GaussianNB: every variance zero): still finite."""
    X = np.tile([[1.0, 2.0, 0.0]], (6, 1))
    y = np.array([0, 0, 0, 0, 1, 1])
    model = ours(name).fit(X, y)
    X_far = np.array([[3.0, 0.0, 1.0]])
    for X_test in (X[:2], X_far):
        assert_normalised(model.predict_proba(X_test), 2)
    if name == "GaussianNB":
        # Identical statistics in every class: the prior decides (scikit-learn
        # divides by a zero variance here).
        np.testing.assert_allclose(model.predict_proba(X[:2]), [[4 / 6, 2 / 6]] * 2, rtol=1e-12)
    else:
        ref = reference(name).fit(_reference_input(name, X), y)
        # (scikit-learn's CategoricalNB fails on X_far's unseen categories.)
        for X_test in (X[:2],) if name == "CategoricalNB" else (X[:2], X_far):
            np.testing.assert_allclose(
                model.predict_proba(X_test), ref.predict_proba(_reference_input(name, X_test)), rtol=1e-9
            )


def test_huge_joint_log_likelihood_stays_normalised(dtype):
    """|jll| beyond 1/ulp (1e7 in float32, 1e16 in float64): rows still sum to one."""
    # Two classes with the same mean and variance: far away, both scores are
    # huge and differ only by the log prior ratio.
    X = np.array([[0.0], [1.0], [2.0]] * 3, dtype=dtype)
    y = np.array([0, 0, 0, 1, 1, 1, 1, 1, 1])
    model = ours("GaussianNB").fit(X, y)
    far = np.array([[1e9], [-1e9], [5e8]], dtype=dtype)
    assert float(np.abs(model.predict_joint_log_proba(far)).min()) > 1e17
    assert_normalised(model.predict_proba(far), 2)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(far)).sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("alpha", [1e-10, 0.0])
@pytest.mark.parametrize("name", DISCRETE)
def test_tiny_alpha(name, alpha):
    X, y = random_data(name, n=40, d=6, seed=74)
    X[y == 0, 2] = 0  # feature 2 never occurs in class 0: a zero count
    model = ours(name, alpha=alpha, force_alpha=True).fit(X, y)
    X_test = X.copy()
    X_test[:, 2] = 1  # ... but does at test time
    for method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        out = to_numpy(getattr(model, method)(X_test))
        assert not np.any(np.isnan(out)), method
    assert_normalised(model.predict_proba(X_test), 3)
    if alpha > 0:  # scikit-learn is finite too and agrees
        ref = reference(name, alpha=alpha, force_alpha=True).fit(_reference_input(name, X), y)
        np.testing.assert_allclose(
            to_numpy(model.predict_proba(X_test)), ref.predict_proba(_reference_input(name, X_test)), rtol=1e-6,
            atol=1e-12,
        )


@pytest.mark.parametrize("scale", [1e100, 1e-100, "mixed"])
def test_gaussian_extreme_magnitudes(scale):
    X, y = random_data("GaussianNB", n=60, d=4, seed=75)
    factor = np.array([1e100, 1e-100, 1e100, 1.0]) if scale == "mixed" else scale
    Xs = X * factor
    model = ours("GaussianNB").fit(Xs, y)
    ref = reference("GaussianNB").fit(Xs, y)
    proba = model.predict_proba(Xs)
    assert_normalised(proba, 3)
    np.testing.assert_allclose(proba, ref.predict_proba(Xs), rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(model.predict(Xs), ref.predict(Xs))


@pytest.mark.parametrize("scale", [1e100, 1e-100])
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_count_models_extreme_magnitudes(name, scale):
    X, y = random_data(name, n=60, d=4, seed=76)
    model = ours(name).fit(X * scale, y)
    assert_normalised(model.predict_proba(X * scale), 3)


@pytest.mark.parametrize("name", MODELS)
def test_zero_prior_class_is_never_predicted(name):
    X, y = random_data(name, n=60, d=4, seed=77)
    arg = "priors" if name == "GaussianNB" else "class_prior"
    model = ours(name, **{arg: [0.0, 0.5, 0.5]}).fit(X, y)
    proba = to_numpy(model.predict_proba(X))
    assert_normalised(proba, 3)
    if name != "ComplementNB":  # ComplementNB ignores the prior (scikit-learn's rule)
        np.testing.assert_array_equal(proba[:, 0], 0.0)
        assert 0 not in to_numpy(model.predict(X))


@pytest.mark.parametrize("sparse", [False, True])
def test_complement_norm_with_one_feature_is_a_tie_not_nan(sparse):
    """With one feature every complement probability is 1: the normalised weights were
    0 / 0 (NaN posteriors, as scikit-learn's). They are 0: every class ties."""
    import scipy.sparse as sp

    X = np.array([[1], [2], [0], [3]])
    X = sp.csr_matrix(X) if sparse else X
    model = ours("ComplementNB", norm=True).fit(X, [0, 1, 0, 1])
    np.testing.assert_array_equal(model.feature_log_prob_, [[0.0], [0.0]])
    assert_normalised(model.predict_proba(X), 2)
