"""Missing values: ``missing="ignore"`` on GaussianNB, CategoricalNB and PoissonNB."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import norm, poisson
from sklearn import naive_bayes as sk

import nbgpu
from conftest import assert_namespace, to_numpy


def _gaussian_data(seed=0, n=120, d=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    X = rng.normal(size=(n, d)) + y[:, None] * np.linspace(0.5, 1.5, d)
    X[:, 2] *= 0.1  # the column dropped below never holds the largest variance
    return X, y


def _categorical_data(seed=0, n=150, d=5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    X = np.minimum(rng.poisson(1.0 + y[:, None] * 0.7, size=(n, d)), 5).astype(float)
    return X, y


def _data(name, seed):
    """Gaussian data for GaussianNB; small counts (also category codes) otherwise."""
    return _gaussian_data(seed) if name == "GaussianNB" else _categorical_data(seed)


def _reference(name):
    """The same model on complete data, from another implementation where there is one."""
    return nbgpu.PoissonNB() if name == "PoissonNB" else getattr(sk, name)()


def _with_nan(X, fraction, seed, columns=None):
    rng = np.random.default_rng(seed)
    X = X.copy()
    mask = rng.random(X.shape) < fraction
    if columns is not None:
        mask[:, [j for j in range(X.shape[1]) if j not in columns]] = False
    X[mask] = np.nan
    return X


# --------------------------------------------------------------------------- #
# Fit: a missing value adds nothing to its feature's statistics
# --------------------------------------------------------------------------- #
def test_gaussian_statistics_skip_missing_values(backend, dtype):
    X, y = _gaussian_data()
    Xn = _with_nan(X, 0.2, seed=1)
    est = nbgpu.GaussianNB(missing="ignore").fit(backend.asarray(Xn, dtype), backend.asarray(y))
    assert_namespace(est.theta_, backend)
    Xn = Xn.astype(dtype).astype(float)
    epsilon = 1e-9 * np.max(np.nanvar(Xn, axis=0))
    mean = np.stack([np.nanmean(Xn[y == c], axis=0) for c in range(3)])
    var = np.stack([np.nanvar(Xn[y == c], axis=0) for c in range(3)]) + epsilon
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_numpy(est.theta_), mean, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(to_numpy(est.var_), var, rtol=rtol)
    np.testing.assert_allclose(est.epsilon_, epsilon, rtol=rtol)
    np.testing.assert_array_equal(to_numpy(est.class_count_), np.bincount(y))


def test_categorical_counts_skip_missing_values(backend):
    X, y = _categorical_data()
    Xn = _with_nan(X, 0.25, seed=2)
    est = nbgpu.CategoricalNB(missing="ignore").fit(backend.asarray(Xn), backend.asarray(y))
    for j, counts in enumerate(est.category_count_):
        assert_namespace(counts, backend)
        hand = np.zeros((3, int(np.nanmax(Xn[:, j])) + 1))
        for xv, c in zip(Xn[:, j], y):
            if not np.isnan(xv):
                hand[c, int(xv)] += 1
        np.testing.assert_array_equal(to_numpy(counts), hand)


def _poisson_rates_by_hand(X, y, alpha=1.0, w=None):
    """λ_cj = (S_cj + α λ̄_j) / (N_cj + α) over the observed entries of X only."""
    w = np.ones(len(y)) if w is None else w
    seen = ~np.isnan(X)
    S = np.stack([w[y == c] @ np.where(seen, X, 0.0)[y == c] for c in np.unique(y)])
    N = np.stack([w[y == c] @ seen[y == c] for c in np.unique(y)])
    pooled = S.sum(axis=0) / N.sum(axis=0)
    return (S + alpha * pooled) / (N + alpha), S


def test_poisson_rates_skip_missing_values(backend, dtype):
    X, y = _categorical_data(20)
    Xn = _with_nan(X, 0.25, seed=21)
    Xn[y == 1, 3] = np.nan  # a class that never shows feature 3: it gets the pooled rate
    w = np.random.default_rng(22).uniform(0.5, 2.0, size=len(y))
    est = nbgpu.PoissonNB(missing="ignore", alpha=0.5)
    est.fit(backend.asarray(Xn, dtype), backend.asarray(y), sample_weight=backend.asarray(w))
    assert_namespace(est.rate_, backend)
    rate, S = _poisson_rates_by_hand(Xn, y, alpha=0.5, w=w)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_numpy(est.rate_), rate, rtol=rtol)
    np.testing.assert_allclose(to_numpy(est.feature_count_), S, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(est.class_count_), np.bincount(y, weights=w), rtol=1e-12)


# --------------------------------------------------------------------------- #
# Predict: a missing feature is left out of the row's likelihood
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "PoissonNB"])
def test_equals_model_without_the_missing_feature(backend, name):
    """NaN in column 2 of the test rows (and of some training rows) is exactly
    the model fitted and scored without column 2."""
    X, y = _data(name, 3)
    train = _with_nan(X, 0.3, seed=4, columns=[2])
    test = X.copy()
    test[:, 2] = np.nan
    keep = [0, 1, 3, 4]
    ours = getattr(nbgpu, name)(missing="ignore").fit(backend.asarray(train), backend.asarray(y))
    ref = _reference(name).fit(X[:, keep], y)
    proba = ours.predict_proba(backend.asarray(test))
    assert_namespace(proba, backend)
    np.testing.assert_allclose(to_numpy(proba), ref.predict_proba(X[:, keep]), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(to_numpy(ours.predict(backend.asarray(test))), ref.predict(X[:, keep]))


def test_gaussian_scores_match_hand_computation(backend, dtype):
    X, y = _gaussian_data(5)
    est = nbgpu.GaussianNB(missing="ignore").fit(backend.asarray(_with_nan(X, 0.1, seed=6), dtype), backend.asarray(y))
    test = _with_nan(X[:30], 0.4, seed=7).astype(dtype)
    test[0, :] = np.nan  # a row with nothing observed scores the prior alone
    jll = to_numpy(est.predict_joint_log_proba(backend.asarray(test)))
    theta, var = to_numpy(est.theta_).astype(float), to_numpy(est.var_).astype(float)
    log_prior = np.log(to_numpy(est.class_prior_).astype(float))
    hand = np.empty((30, 3))
    for i in range(30):
        seen = ~np.isnan(test[i])
        for c in range(3):
            terms = norm.logpdf(test[i, seen], theta[c, seen], np.sqrt(var[c, seen]))
            hand[i, c] = log_prior[c] + terms.sum()
    rtol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(jll, hand, rtol=rtol, atol=rtol)


def test_categorical_scores_match_hand_computation(backend):
    X, y = _categorical_data(8)
    est = nbgpu.CategoricalNB(missing="ignore").fit(backend.asarray(_with_nan(X, 0.1, seed=9)), backend.asarray(y))
    test = _with_nan(X[:30], 0.4, seed=10)
    jll = to_numpy(est.predict_joint_log_proba(backend.asarray(test)))
    flp = [to_numpy(f) for f in est.feature_log_prob_]
    hand = np.tile(to_numpy(est.class_log_prior_), (30, 1))
    for i in range(30):
        for j in range(X.shape[1]):
            if not np.isnan(test[i, j]):
                hand[i] += flp[j][:, int(test[i, j])]
    np.testing.assert_allclose(jll, hand, rtol=1e-12)


def test_poisson_scores_match_hand_computation(backend, dtype):
    X, y = _categorical_data(23)
    Xn = _with_nan(X, 0.15, seed=24)
    est = nbgpu.PoissonNB(missing="ignore").fit(backend.asarray(Xn, dtype), backend.asarray(y))
    test = _with_nan(X[:30], 0.4, seed=25)
    test[0, :] = np.nan  # a row with nothing observed scores the prior alone
    jll = to_numpy(est.predict_joint_log_proba(backend.asarray(test, dtype)))
    rate, _ = _poisson_rates_by_hand(Xn, y)
    log_prior = np.log(np.bincount(y) / len(y))
    # Σ over the observed entries of log Poisson(x; λ_cj) = x log λ − λ − log x!
    hand = np.stack([np.nansum(poisson.logpmf(test, rate[c]), axis=1) + log_prior[c] for c in range(3)], axis=1)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(jll, hand, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(jll[0], log_prior, rtol=rtol)


def test_poisson_each_row_equals_the_model_without_its_missing_feature():
    """Row i misses feature i mod d: its scores are those of a model fitted
    and scored without that feature."""
    X, y = _categorical_data(26)
    est = nbgpu.PoissonNB(missing="ignore").fit(X, y)
    test = X[:20].copy()
    d = X.shape[1]
    test[np.arange(20), np.arange(20) % d] = np.nan
    jll = est.predict_joint_log_proba(test)
    for j in range(d):
        keep = [k for k in range(d) if k != j]
        rows = np.arange(20) % d == j
        ref = nbgpu.PoissonNB().fit(X[:, keep], y).predict_joint_log_proba(test[rows][:, keep])
        np.testing.assert_allclose(jll[rows], ref, rtol=1e-12)


# --------------------------------------------------------------------------- #
# Sparse input, chunked fitting, errors
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "PoissonNB"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_equals_dense(name, fmt):
    X, y = _data(name, 11)
    X[np.abs(X) < 0.5] = 0.0  # real sparsity for the Gaussian data
    Xn = _with_nan(X, 0.15, seed=12)
    dense = getattr(nbgpu, name)(missing="ignore").fit(Xn, y)
    sparse = getattr(nbgpu, name)(missing="ignore").fit(sp.csr_matrix(Xn).asformat(fmt), y)
    test = _with_nan(X[:40], 0.3, seed=13)
    np.testing.assert_allclose(
        sparse.predict_joint_log_proba(sp.csr_matrix(test).asformat(fmt)),
        dense.predict_joint_log_proba(test),
        rtol=1e-9,
    )


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "PoissonNB"])
def test_partial_fit_with_missing_equals_fit(name):
    X, y = _data(name, 14)
    Xn = _with_nan(X, 0.2, seed=15)
    Xn[:40, 1] = np.nan  # a whole chunk without feature 1
    full = getattr(nbgpu, name)(missing="ignore").fit(Xn, y)
    chunked = getattr(nbgpu, name)(missing="ignore")
    for part in np.array_split(np.arange(len(y)), 3):
        chunked.partial_fit(Xn[part], y[part], classes=[0, 1, 2])
    np.testing.assert_allclose(chunked.predict_joint_log_proba(Xn), full.predict_joint_log_proba(Xn), rtol=1e-10)


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "PoissonNB"])
def test_nan_is_an_error_by_default_and_infinity_always(name):
    X, y = _categorical_data(16)
    Xn = _with_nan(X, 0.1, seed=17)
    with pytest.raises(ValueError, match=r"NaN.*missing='ignore'"):
        getattr(nbgpu, name)().fit(Xn, y)
    fitted = getattr(nbgpu, name)().fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict(Xn)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        getattr(nbgpu, name)(missing="ignore").fit(X, y)


def test_missing_value_does_not_hide_a_bad_category():
    X, y = _categorical_data(18)
    X[0, 0], X[1, 0] = np.nan, -1.0
    with pytest.raises(ValueError, match="Negative"):
        nbgpu.CategoricalNB(missing="ignore").fit(X, y)
    X[1, 0] = 0.5
    with pytest.raises(ValueError, match="whole numbers"):
        nbgpu.CategoricalNB(missing="ignore").fit(X, y)


def test_missing_parameter_is_validated_and_sets_the_tag():
    X, y = _gaussian_data()
    with pytest.raises(ValueError, match="missing"):
        nbgpu.GaussianNB(missing="drop").fit(X, y)
    assert nbgpu.GaussianNB(missing="ignore").__sklearn_tags__().input_tags.allow_nan
    assert not nbgpu.GaussianNB().__sklearn_tags__().input_tags.allow_nan


def test_poisson_merge_with_missing_equals_one_fit():
    """One part without any NaN ((k, 1) observed weights), one with: still exact."""
    X, y = _categorical_data(27)
    Xn = X.copy()
    Xn[60:] = _with_nan(X[60:], 0.3, seed=28)
    a = nbgpu.PoissonNB(missing="ignore").partial_fit(Xn[:60], y[:60], classes=[0, 1, 2])
    b = nbgpu.PoissonNB(missing="ignore").partial_fit(Xn[60:], y[60:], classes=[0, 1, 2])
    full = nbgpu.PoissonNB(missing="ignore").fit(Xn, y)
    for merged in (a.merge(b), b.merge(a)):
        np.testing.assert_allclose(merged.rate_, full.rate_, rtol=1e-12)
        np.testing.assert_allclose(merged.predict_joint_log_proba(Xn), full.predict_joint_log_proba(Xn), rtol=1e-12)


def test_poisson_switching_to_missing_ignore_keeps_the_statistics_exact():
    X, y = _categorical_data(29)
    Xn = X.copy()
    Xn[70:] = _with_nan(X[70:], 0.3, seed=30)
    est = nbgpu.PoissonNB().partial_fit(Xn[:70], y[:70], classes=[0, 1, 2])
    est.set_params(missing="ignore").partial_fit(Xn[70:], y[70:])
    full = nbgpu.PoissonNB(missing="ignore").fit(Xn, y)
    np.testing.assert_allclose(est.rate_, full.rate_, rtol=1e-12)


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB", "PoissonNB"])
def test_to_device_then_partial_fit_with_missing_there(backend, name):
    X, y = _data(name, 31)
    Xn = _with_nan(X, 0.2, seed=32)
    est = getattr(nbgpu, name)(missing="ignore").partial_fit(Xn[:70], y[:70], classes=[0, 1, 2])
    est.to_device(backend.asarray(np.zeros(1)))
    est.partial_fit(backend.asarray(Xn[70:]), backend.asarray(y[70:]))
    jll = est.predict_joint_log_proba(backend.asarray(Xn))
    assert_namespace(jll, backend)
    full = getattr(nbgpu, name)(missing="ignore").fit(Xn, y)
    np.testing.assert_allclose(to_numpy(jll), full.predict_joint_log_proba(Xn), rtol=1e-10)
