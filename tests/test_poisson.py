import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import poisson
from sklearn.datasets import load_digits

from conftest import assert_namespace, to_numpy
from model_checks import assert_scores_match, inherited_failures
from nbgpu import MultinomialNB, PoissonNB
from sklearn_suite import parametrize_with_checks


def count_data(n=120, d=7, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    rates = rng.gamma(2.0, 1.5, size=(k, d))
    rates[:, 0] = 0.0  # a feature never seen non-zero
    rates[0, 1] = 0.0  # a feature one class never shows
    return rng.poisson(rates[y]).astype(float), y


def reference_rates(X, y, alpha, sample_weight=None):
    """λ_cj = (S_cj + α λ̄_j) / (N_c + α), λ̄_j the pooled rate."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    classes = np.unique(y)
    S = np.stack([w[y == c] @ X[y == c] for c in classes])
    N = np.array([w[y == c].sum() for c in classes])
    pooled = S.sum(axis=0) / N.sum()
    return (S + alpha * pooled) / (N[:, None] + alpha), N / N.sum()


def reference_jll(X, y, alpha, sample_weight=None, log_prior=None):
    """Σⱼ log Poisson(xⱼ; λ_cj) + log P(c), straight from scipy.stats.poisson."""
    rate, prior = reference_rates(X, y, alpha, sample_weight)
    log_prior = np.log(prior) if log_prior is None else log_prior
    with np.errstate(divide="ignore"):
        return np.stack([poisson.logpmf(X, rate[c]).sum(axis=1) + log_prior[c] for c in range(rate.shape[0])], axis=1)


def test_matches_scipy_poisson_on_every_backend(backend, dtype):
    X, y = count_data()
    X = X[:, 1:]  # (the all-zero feature has its own test)
    clf = PoissonNB(alpha=0.5).fit(backend.asarray(X, dtype), backend.asarray(y))
    Xb = backend.asarray(X, dtype)
    assert_namespace(clf.rate_, backend)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    assert_scores_match(clf, Xb, reference_jll(X, y, 0.5), backend, rtol=rtol)
    np.testing.assert_allclose(to_numpy(clf.rate_), reference_rates(X, y, 0.5)[0], rtol=rtol)


def test_sparse_input_matches_dense(backend):
    if not backend.has_sparse:
        pytest.skip(f"{backend.name} has no sparse matrices")
    X, y = count_data()
    dense = PoissonNB().fit(backend.asarray(X), backend.asarray(y))
    for fmt in ("csr", "csc"):
        Xs = backend.sparse(X, fmt)
        clf = PoissonNB().fit(Xs, backend.asarray(y))
        np.testing.assert_allclose(to_numpy(clf.rate_), to_numpy(dense.rate_), rtol=1e-12)
        np.testing.assert_allclose(
            to_numpy(clf.predict_joint_log_proba(Xs)), to_numpy(dense.predict_joint_log_proba(backend.asarray(X))), rtol=1e-12
        )


def test_sparse_input_is_never_densified():
    # 20,000 × 1,000,000 with 20,000 nonzeros: a dense float64 copy would need 160 GB.
    rng = np.random.default_rng(0)
    n, d, nnz = 20_000, 1_000_000, 20_000
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    X = sp.csr_matrix((rng.integers(1, 5, nnz).astype(float), (rows, cols)), shape=(n, d))
    y = rng.integers(0, 2, n)
    clf = PoissonNB().fit(X, y)
    jll = clf.predict_joint_log_proba(X[:50])
    assert jll.shape == (50, 2) and np.all(np.isfinite(jll))
    # Spot-check one row against the definition on its nonzeros.
    rate, prior = clf.rate_, np.exp(clf.class_log_prior_)
    row = X[7]
    expect = [
        poisson.logpmf(row.data, rate[c, row.indices]).sum() - rate[c].sum() + rate[c, row.indices].sum() + np.log(prior[c])
        for c in range(2)
    ]
    np.testing.assert_allclose(jll[7], expect, rtol=1e-9)


def test_a_feature_never_seen_does_not_change_the_posterior():
    X, y = count_data()
    clf = PoissonNB().fit(X, y)
    assert np.all(to_numpy(clf.rate_)[:, 0] == 0)
    X_new = X[:5].copy()
    X_new[:, 0] = 3.0
    without = PoissonNB().fit(X[:, 1:], y)
    np.testing.assert_allclose(clf.predict_proba(X_new), without.predict_proba(X_new[:, 1:]), rtol=1e-10)
    assert np.all(np.isfinite(clf.predict_joint_log_proba(X_new)))


def test_alpha_zero_gives_maximum_likelihood_rates():
    X, y = count_data()
    clf = PoissonNB(alpha=0.0).fit(X, y)
    ml = np.stack([X[y == c].mean(axis=0) for c in range(3)])
    np.testing.assert_allclose(clf.rate_, ml, rtol=1e-12)


def test_per_feature_alpha():
    X, y = count_data()
    alpha = np.linspace(0.1, 3.0, X.shape[1])
    clf = PoissonNB(alpha=alpha).fit(X, y)
    np.testing.assert_allclose(clf.rate_, reference_rates(X, y, alpha)[0], rtol=1e-12)


@pytest.mark.parametrize("chunks", [[0, 50, 51, 120], [0, 1, 120], [0, 30, 60, 90, 120]])
def test_partial_fit_in_chunks_equals_fit(backend, chunks):
    X, y = count_data()
    full = PoissonNB().fit(backend.asarray(X), backend.asarray(y))
    part = PoissonNB()
    for a, b in zip(chunks[:-1], chunks[1:]):
        part.partial_fit(backend.asarray(X[a:b]), backend.asarray(y[a:b]), classes=[0, 1, 2])
    np.testing.assert_allclose(to_numpy(part.rate_), to_numpy(full.rate_), rtol=1e-12)
    Xb = backend.asarray(X)
    np.testing.assert_allclose(to_numpy(part.predict_joint_log_proba(Xb)), to_numpy(full.predict_joint_log_proba(Xb)), rtol=1e-12)


def test_sample_weight_equals_repeated_rows(backend):
    X, y = count_data()
    w = np.random.default_rng(3).integers(0, 4, size=len(y))
    weighted = PoissonNB().fit(backend.asarray(X), backend.asarray(y), sample_weight=backend.asarray(w.astype(float)))
    repeated = PoissonNB().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(to_numpy(weighted.rate_), repeated.rate_, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(weighted.predict_joint_log_proba(backend.asarray(X))), repeated.predict_joint_log_proba(X), rtol=1e-12)


def test_class_prior_and_fit_prior():
    X, y = count_data()
    prior = np.array([0.6, 0.3, 0.1])
    clf = PoissonNB(class_prior=prior).fit(X, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), reference_jll(X, y, 1.0, log_prior=np.log(prior)), rtol=1e-12)
    flat = PoissonNB(fit_prior=False).fit(X, y)
    np.testing.assert_allclose(flat.predict_joint_log_proba(X), reference_jll(X, y, 1.0, log_prior=np.log(np.full(3, 1 / 3))), rtol=1e-12)


def test_real_data_digits_matches_scipy():
    X, y = load_digits(return_X_y=True)  # pixel intensities 0..16: counts
    clf = PoissonNB().fit(X, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), reference_jll(X, y, 1.0), rtol=1e-10)
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize(
    "params, X_change, match",
    [
        ({}, lambda X: -X, "`X` must hold counts"),
        ({"alpha": -1.0}, None, "alpha"),
        ({"alpha": [1.0, 2.0]}, None, "`alpha` must be a scalar or have one value per feature"),
        ({"class_prior": [0.5, 0.5]}, None, "`class_prior` must have one probability per class"),
    ],
)
def test_bad_input_names_the_argument(params, X_change, match):
    X, y = count_data()
    X = X if X_change is None else X_change(X + 1)
    with pytest.raises(ValueError, match=match):
        PoissonNB(**params).fit(X, y)


def test_negative_values_at_predict_time_are_refused():
    X, y = count_data()
    clf = PoissonNB().fit(X, y)
    with pytest.raises(ValueError, match="`X` must hold counts"):
        clf.predict(-X - 1)


@parametrize_with_checks([PoissonNB()], expected_failed_checks=lambda est: inherited_failures(MultinomialNB()))
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_to_device_then_predict_and_partial_fit_there(backend):
    X, y = count_data()
    clf = PoissonNB().partial_fit(X[:60], y[:60], classes=[0, 1, 2])
    clf.to_device(backend.asarray(np.zeros(1)))
    assert_namespace(clf.rate_, backend)
    clf.partial_fit(backend.asarray(X[60:]), backend.asarray(y[60:]))
    full = PoissonNB().fit(X, y)
    np.testing.assert_allclose(to_numpy(clf.predict_joint_log_proba(backend.asarray(X))), full.predict_joint_log_proba(X), rtol=1e-12)


def test_merge_of_models_fitted_on_disjoint_data_equals_one_fit():
    X, y = count_data()
    a = PoissonNB().partial_fit(X[:40], y[:40], classes=[0, 1, 2])
    b = PoissonNB().partial_fit(X[40:], y[40:], classes=[0, 1, 2])
    full = PoissonNB().fit(X, y)
    np.testing.assert_allclose(a.merge(b).rate_, full.rate_, rtol=1e-12)
    with pytest.raises(TypeError, match="no scikit-learn counterpart"):
        full.to_sklearn()



@pytest.mark.parametrize("missing", ["error", "ignore"])
def test_duplicate_entries_fit_as_their_sums(missing):
    """A fit sums X's values, so duplicate entries are kept as they come (a fit-time trait); with
    missing="ignore" a NaN among them makes the summed entry missing, so there they are summed first."""
    X, y = count_data(n=60)
    if missing == "ignore":
        X[3, 2], X[5, 4] = np.nan, np.nan
    canonical = sp.csr_matrix(X)
    # Each row's entries twice, in reversed order: its values less 1, then 1s (a NaN: NaN, then 1).
    counts = np.diff(canonical.indptr)
    rows = [slice(a, b) for a, b in zip(canonical.indptr[:-1], canonical.indptr[1:])]
    indices = np.concatenate([np.concatenate([canonical.indices[r][::-1]] * 2) for r in rows])
    data = np.concatenate([np.concatenate([canonical.data[r][::-1] - 1.0, np.ones(b - a)])
                           for r, a, b in zip(rows, canonical.indptr[:-1], canonical.indptr[1:])])
    split = sp.csr_matrix((data, indices, np.concatenate([[0], np.cumsum(2 * counts)])), shape=X.shape)
    np.testing.assert_array_equal(split.toarray(), X)  # (toarray sums them; NaN + 1 is NaN)
    ref = PoissonNB(missing=missing).fit(canonical, y)
    model = PoissonNB(missing=missing).fit(split, y)
    for name in ("class_count_", "feature_count_", "rate_"):
        np.testing.assert_allclose(getattr(model, name), getattr(ref, name), rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(model.predict_log_proba(split), ref.predict_log_proba(canonical), rtol=1e-10)
