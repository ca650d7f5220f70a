"""KernelDensityNB: per class and feature, scikit-learn's KernelDensity; the product over features."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import dataset
from conftest import assert_namespace, to_numpy
from scipy.stats import gaussian_kde
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KernelDensity

import nbgpu
from sklearn_suite import parametrize_with_checks

KERNELS = ("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine")


def reference_jll(model, X, y, Xt, w=None):
    """Σ_j KernelDensity(h_cj).score_samples + log prior, class by class."""
    h = to_numpy(model.bandwidth_)
    out = np.tile(np.log(to_numpy(model.class_prior_)), (Xt.shape[0], 1))
    for c, label in enumerate(to_numpy(model.classes_)):
        rows = y == label
        for j in range(X.shape[1]):
            seen = rows & ~np.isnan(X[:, j])
            kd = KernelDensity(bandwidth=float(h[c, j]), kernel=model.kernel)
            kd.fit(X[seen, j : j + 1], sample_weight=None if w is None else w[seen])
            present = ~np.isnan(Xt[:, j])
            out[present, c] += kd.score_samples(Xt[present, j : j + 1])
    return out


def some_data(seed=0, n=70, d=3, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 2.0, d) + y[:, None]
    return X, y, rng.normal(size=(15, d)) * 2.0 + 1.0


@pytest.mark.parametrize("bandwidth", [0.6, "scott", "silverman"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_equals_sklearn_kernel_density(kernel, bandwidth):
    X, y, Xt = some_data()
    w = np.random.default_rng(1).uniform(0.2, 3.0, X.shape[0])
    model = nbgpu.KernelDensityNB(bandwidth=bandwidth, kernel=kernel).fit(X, y, sample_weight=w)
    ref = reference_jll(model, X, y, Xt, w)
    jll = model.predict_joint_log_proba(Xt)
    np.testing.assert_array_equal(np.isfinite(jll), np.isfinite(ref))
    np.testing.assert_allclose(jll[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rule", ["scott", "silverman"])
def test_bandwidth_rules_are_scipys(rule):
    X, y, _ = some_data(seed=2)
    model = nbgpu.KernelDensityNB(bandwidth=rule).fit(X, y)
    for c in range(3):
        for j in range(X.shape[1]):
            kde = gaussian_kde(X[y == c, j], bw_method=rule)
            assert model.bandwidth_[c, j] == pytest.approx(np.sqrt(kde.covariance[0, 0]), rel=1e-12)


def test_a_class_without_spread_takes_the_features_spread():
    X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0], [3.0, 5.0], [2.0, 4.0]])
    y = np.array([0, 0, 1, 1, 1])
    h = nbgpu.KernelDensityNB(bandwidth="scott").fit(X, y).bandwidth_
    assert h[0, 0] == pytest.approx(np.std(X[:, 0], ddof=1) * 2 ** -0.2)
    assert np.all(np.isfinite(h)) and np.all(h > 0)


def test_better_than_gaussian_nb_on_multimodal_features():
    """Class 0 sits at -3 or +3 (spread 1), class 1 at 0 with the same
    variance (10): GaussianNB sees two equal normals, the kernel densities
    see the modes."""
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 2, n)
    modes = np.where(rng.random((n, 2)) < 0.5, -3.0, 3.0) + rng.normal(size=(n, 2))
    X = np.where(y[:, None] == 0, modes, rng.normal(scale=np.sqrt(10.0), size=(n, 2)))
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0)
    kde = nbgpu.KernelDensityNB(bandwidth="silverman").fit(Xa, ya).score(Xb, yb)
    gauss = nbgpu.GaussianNB().fit(Xa, ya).score(Xb, yb)
    assert kde > gauss + 0.1, (kde, gauss)


def test_partial_fit_and_merge_equal_fit():
    X, y, Xt = some_data(seed=3)
    full = nbgpu.KernelDensityNB(bandwidth="scott").fit(X, y)
    parts = nbgpu.KernelDensityNB(bandwidth="scott")
    for rows in np.array_split(np.arange(X.shape[0]), 4):
        parts.partial_fit(X[rows], y[rows], classes=[0, 1, 2])
    a = nbgpu.KernelDensityNB(bandwidth="scott").fit(X[::2], y[::2])
    b = nbgpu.KernelDensityNB(bandwidth="scott").partial_fit(X[1::2], y[1::2], classes=[0, 1, 2])
    for other in (parts, a.merge(b)):
        np.testing.assert_allclose(other.bandwidth_, full.bandwidth_, rtol=1e-12)
        np.testing.assert_allclose(other.predict_joint_log_proba(Xt), full.predict_joint_log_proba(Xt), rtol=1e-12)


@pytest.mark.parametrize("kernel", ["tophat", "epanechnikov", "linear", "cosine"])
def test_no_class_has_density_posteriors_are_the_floored_limit(kernel):
    """Wine, standardised, h = 0.2: many test rows have density 0 under every class
    (NaN posteriors before). The posterior is that of scikit-learn's densities
    floored at a tiny ε (here e^-700), a defined limit; the joint stays exact."""
    X, y = dataset("wine", "GaussianNB")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    train = np.arange(X.shape[0]) % 4 != 0
    model = nbgpu.KernelDensityNB(bandwidth=0.2, kernel=kernel).fit(X[train], y[train])
    Xt = X[~train]
    exact = reference_jll(model, X[train], y[train], Xt)
    nowhere = np.all(np.isinf(exact), axis=1)
    assert 5 <= nowhere.sum() < Xt.shape[0]  # both kinds of row
    np.testing.assert_allclose(model.predict_joint_log_proba(Xt), exact, rtol=1e-9)
    floored = np.tile(np.log(model.class_prior_), (Xt.shape[0], 1))
    for c, label in enumerate(model.classes_):
        for j in range(X.shape[1]):
            kd = KernelDensity(bandwidth=0.2, kernel=kernel).fit(X[train][y[train] == label, j : j + 1])
            floored[:, c] += np.maximum(kd.score_samples(Xt[:, j : j + 1]), -700.0)
    expected = np.exp(floored - floored.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = model.predict_proba(Xt)
        np.testing.assert_allclose(proba, expected, rtol=1e-9, atol=1e-200)  # ε's remnants
        np.testing.assert_array_equal(model.predict(Xt), model.classes_[np.argmax(expected, axis=1)])
        np.testing.assert_allclose(np.exp(model.predict_log_proba(Xt)), proba, rtol=1e-12)
    # Where a class has density everywhere, nothing changed: the exact posterior.
    somewhere = ~nowhere
    exact_post = np.exp(exact[somewhere] - np.logaddexp.reduce(exact[somewhere], axis=1, keepdims=True))
    np.testing.assert_allclose(proba[somewhere], exact_post, rtol=1e-9, atol=1e-300)


def test_a_class_of_prior_zero_stays_excluded():
    X = np.array([[0.0], [0.1], [5.0], [5.1]])
    y = np.array([0, 0, 1, 1])
    model = nbgpu.KernelDensityNB(bandwidth=0.5, kernel="tophat", priors=[0.0, 1.0]).fit(X, y)
    # Class 0 has density at 0.05 but prior 0; class 1 none: class 1 (posterior 1), not 0 / 0.
    np.testing.assert_array_equal(model.predict_proba([[0.05], [10.0]]), [[0.0, 1.0], [0.0, 1.0]])
    assert np.all(np.isneginf(model.predict_joint_log_proba([[0.05]])))


def test_missing_values_are_left_out():
    X, y, Xt = some_data(seed=4)
    X[::5, 0] = np.nan
    X[3, 2] = np.nan
    Xt[::3, 1] = np.nan
    model = nbgpu.KernelDensityNB(bandwidth="silverman", missing="ignore").fit(X, y)
    np.testing.assert_allclose(model.predict_joint_log_proba(Xt), reference_jll(model, X, y, Xt), rtol=1e-9)
    with pytest.raises(ValueError, match="NaN"):
        nbgpu.KernelDensityNB().fit(X, y)


def test_model_file_round_trip(tmp_path):
    X, y, Xt = some_data(seed=5)
    model = nbgpu.KernelDensityNB(bandwidth="scott", kernel="epanechnikov").fit(X, y)
    nbgpu.save(model, tmp_path / "kde.npz")
    loaded = nbgpu.load(tmp_path / "kde.npz")
    assert isinstance(loaded, nbgpu.KernelDensityNB) and loaded.kernel == "epanechnikov"
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(Xt), model.predict_joint_log_proba(Xt))
    loaded.partial_fit(Xt, np.zeros(Xt.shape[0], dtype=int))  # goes on learning


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_on_every_backend(backend, dtype, kernel):
    X, y, Xt = some_data(seed=6)
    Xt[0] = 50.0  # no class has density there with a compact kernel
    model = nbgpu.KernelDensityNB(bandwidth="scott", kernel=kernel).fit(backend.asarray(X, dtype), backend.asarray(y))
    ref = nbgpu.KernelDensityNB(bandwidth="scott", kernel=kernel).fit(X, y)
    for method in ("predict_joint_log_proba", "predict_proba"):
        out = getattr(model, method)(backend.asarray(Xt, dtype))
        assert_namespace(out, backend)
        np.testing.assert_allclose(to_numpy(out), getattr(ref, method)(Xt), rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-7)


def test_smoothing_search_over_the_bandwidth():
    from sklearn.model_selection import GridSearchCV

    X, y = dataset("wine", "GaussianNB")
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    grid = {"bandwidth": [0.2, 0.5, 1.0, "scott"], "kernel": ["gaussian", "epanechnikov"]}
    ours = nbgpu.SmoothingSearchCV(nbgpu.KernelDensityNB(), grid).fit(X, y)
    ref = GridSearchCV(nbgpu.KernelDensityNB(), grid).fit(X, y)
    assert ours.best_params_ == ref.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], rtol=1e-12)


def test_bad_input():
    X, y, _ = some_data()
    with pytest.raises(TypeError, match="does not accept sparse input"):
        nbgpu.KernelDensityNB().fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="bandwidth"):
        nbgpu.KernelDensityNB(bandwidth=0.0).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth"):
        nbgpu.KernelDensityNB(bandwidth="normal").fit(X, y)
    with pytest.raises(ValueError, match="kernel"):
        nbgpu.KernelDensityNB(kernel="box").fit(X, y)
    with pytest.raises(ValueError, match="`priors` must have one probability per class"):
        nbgpu.KernelDensityNB(priors=[0.5, 0.5]).fit(X, y)


@parametrize_with_checks(
    [nbgpu.KernelDensityNB(), nbgpu.KernelDensityNB(bandwidth="scott", missing="ignore")],
    expected_failed_checks=lambda est: {
        "check_array_api_same_namespace": "nbgpu scores input of any namespace/device instead of refusing it"
    },
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
