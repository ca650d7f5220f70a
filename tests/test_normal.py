import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris, load_wine
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

from conftest import assert_namespace, to_numpy
from model_checks import assert_scores_match, inherited_failures
from nbgpu import GaussianNB, NormalBayesClassifier
from sklearn_suite import SKLEARN_VERSION, parametrize_with_checks


def correlated_data(n=150, d=4, k=3, seed=0, loc=0.0):
    """Classes with different means and different full covariances."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(k):
        a = rng.normal(size=(d, d))
        cov = a @ a.T + 0.5 * np.eye(d)
        X.append(rng.multivariate_normal(rng.normal(size=d) * 2 + loc, cov, size=n // k + 5 * c))
        y.append(np.full(n // k + 5 * c, c))
    return np.vstack(X), np.concatenate(y)


def reference_jll(X, y, reg, sample_weight=None, priors=None):
    """log N(x; μ_c, Σ_c) + log P(c) from scipy, with the weighted ML covariance."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    classes = np.unique(y)
    out = []
    total = w.sum()
    for i, c in enumerate(classes):
        Xc, wc = X[y == c], w[y == c]
        mean = wc @ Xc / wc.sum()
        cov = ((Xc - mean) * wc[:, None]).T @ (Xc - mean) / wc.sum() + reg * np.eye(X.shape[1])
        prior = wc.sum() / total if priors is None else priors[i]
        out.append(multivariate_normal(mean, cov).logpdf(X) + np.log(prior))
    return np.stack(out, axis=1)


def test_matches_scipy_on_every_backend(backend, dtype):
    X, y = correlated_data()
    clf = NormalBayesClassifier(reg_covar=1e-4).fit(backend.asarray(X, dtype), backend.asarray(y))
    Xb = backend.asarray(X, dtype)
    assert_namespace(clf.covariance_, backend)
    tol = 1e-4 if dtype == "float32" else 1e-10
    ref = reference_jll(X.astype(dtype).astype(float), y, 1e-4)
    assert_scores_match(clf, Xb, ref, backend, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_numpy(clf.predict_log_proba(Xb)), ref - logsumexp(ref, axis=1, keepdims=True), atol=tol)


# Before 1.8 scikit-learn's QDA used the unbiased covariance (divided by n - 1).
_ML_QDA = pytest.mark.skipif(SKLEARN_VERSION < (1, 8), reason="scikit-learn < 1.8: QDA's covariance is not the maximum-likelihood one")


@_ML_QDA
@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_matches_qda_without_regularisation(load):
    # Both use the maximum-likelihood covariance; only their regularisations differ.
    X, y = load(return_X_y=True)
    ours = NormalBayesClassifier(reg_covar=0.0).fit(X, y)
    qda = QuadraticDiscriminantAnalysis(reg_param=0.0, store_covariance=True).fit(X, y)
    np.testing.assert_allclose(ours.means_, qda.means_, rtol=1e-12)
    np.testing.assert_allclose(ours.class_prior_, qda.priors_, rtol=1e-12)
    np.testing.assert_allclose(ours.covariance_, np.stack(qda.covariance_), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), qda.predict_proba(X), atol=1e-8)
    np.testing.assert_allclose(ours.predict_log_proba(X), qda.predict_log_proba(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), qda.predict(X))


@_ML_QDA
def test_qda_priors_correspond():
    X, y = load_iris(return_X_y=True)
    priors = np.array([0.2, 0.3, 0.5])
    ours = NormalBayesClassifier(reg_covar=0.0, priors=priors).fit(X, y)
    qda = QuadraticDiscriminantAnalysis(priors=priors).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), qda.predict_proba(X), atol=1e-8)


@pytest.mark.parametrize("chunks", [[0, 37, 90, 150, 165], [0, 1, 2, 165], [0, 60, 165]])
def test_partial_fit_in_chunks_equals_fit(backend, chunks):
    X, y = correlated_data(loc=5.0)
    order = np.random.default_rng(1).permutation(len(y))
    X, y = X[order], y[order]
    full = NormalBayesClassifier().fit(backend.asarray(X), backend.asarray(y))
    part = NormalBayesClassifier()
    for a, b in zip(chunks[:-1], chunks[1:]):
        part.partial_fit(backend.asarray(X[a:b]), backend.asarray(y[a:b]), classes=[0, 1, 2])
    for name in ("class_count_", "means_", "covariance_", "precisions_cholesky_"):
        np.testing.assert_allclose(to_numpy(getattr(part, name)), to_numpy(getattr(full, name)), rtol=1e-10, atol=1e-12)
    Xb = backend.asarray(X)
    np.testing.assert_allclose(
        to_numpy(part.predict_joint_log_proba(Xb)), to_numpy(full.predict_joint_log_proba(Xb)), rtol=1e-10
    )


def test_sample_weight_equals_repeated_rows(backend):
    X, y = correlated_data(n=60)
    w = np.random.default_rng(2).integers(0, 4, size=len(y))
    weighted = NormalBayesClassifier().fit(backend.asarray(X), backend.asarray(y), sample_weight=backend.asarray(w.astype(float)))
    repeated = NormalBayesClassifier().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    for name in ("class_prior_", "means_", "covariance_"):
        np.testing.assert_allclose(to_numpy(getattr(weighted, name)), getattr(repeated, name), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        to_numpy(weighted.predict_joint_log_proba(backend.asarray(X))), repeated.predict_joint_log_proba(X), rtol=1e-10
    )
    np.testing.assert_allclose(
        to_numpy(weighted.predict_joint_log_proba(backend.asarray(X))), reference_jll(X, y, 1e-6, sample_weight=w), rtol=1e-9
    )


def test_priors_are_used_as_given():
    X, y = correlated_data()
    priors = [0.5, 0.3, 0.2]
    clf = NormalBayesClassifier(priors=priors, reg_covar=0.0).fit(X, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), reference_jll(X, y, 0.0, priors=priors), rtol=1e-10)


def test_float32_keeps_accuracy_far_from_the_origin():
    X, y = correlated_data(loc=1e4)
    ref = NormalBayesClassifier().fit(X, y).predict_proba(X)
    got = NormalBayesClassifier().fit(X.astype(np.float32), y).predict_proba(X.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref, atol=2e-3)


def test_full_covariance_beats_naive_bayes_on_correlated_classes():
    # Two classes that differ only in the sign of a correlation: invisible to
    # a diagonal model, easy for a full covariance.
    rng = np.random.default_rng(0)
    a = rng.multivariate_normal([0, 0], [[1, 0.95], [0.95, 1]], size=500)
    b = rng.multivariate_normal([0, 0], [[1, -0.95], [-0.95, 1]], size=500)
    X, y = np.vstack([a, b]), np.repeat([0, 1], 500)
    assert NormalBayesClassifier().fit(X, y).score(X, y) > 0.85
    assert GaussianNB().fit(X, y).score(X, y) < 0.6


def test_real_data_wine_matches_scipy():
    X, y = load_wine(return_X_y=True)
    clf = NormalBayesClassifier(reg_covar=1e-3).fit(X, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), reference_jll(X, y, 1e-3), rtol=1e-9)
    assert clf.score(X, y) > 0.95


def test_singular_covariance_says_raise_reg_covar():
    X, y = load_iris(return_X_y=True)
    X = np.column_stack([X, 2.0 * X[:, 0]])  # collinear feature: every Σ is singular
    clf = NormalBayesClassifier(reg_covar=0.0)
    with pytest.raises(ValueError, match="raise `reg_covar`"):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_")
    NormalBayesClassifier(reg_covar=1e-6).fit(X, y)  # regularised: fine


def test_class_with_too_few_samples_for_its_covariance():
    X, y = correlated_data(n=60, d=5)
    X, y = np.vstack([X, X[:2] + 1.0]), np.concatenate([y, [7, 7]])  # 2 rows, 5 features
    with pytest.raises(ValueError, match=r"class index\(es\) \[3\].*reg_covar"):
        NormalBayesClassifier(reg_covar=0.0).fit(X, y)
    assert NormalBayesClassifier(reg_covar=1e-3).fit(X, y).predict(X[-2:]).tolist() == [7, 7]


def test_failed_refit_leaves_model_unchanged():
    X, y = correlated_data()
    clf = NormalBayesClassifier().fit(X, y)
    before = clf.predict_joint_log_proba(X)
    clf.set_params(reg_covar=0.0)
    with pytest.raises(ValueError, match="reg_covar"):
        clf.fit(np.column_stack([X[:, :3], X[:, 0]]), y)
    np.testing.assert_array_equal(clf.predict_joint_log_proba(X), before)


def test_sparse_input_is_refused_with_a_clear_error():
    X, y = correlated_data()
    with pytest.raises(TypeError, match="needs dense `X`"):
        NormalBayesClassifier().fit(sp.csr_matrix(X), y)
    clf = NormalBayesClassifier().fit(X, y)
    with pytest.raises(TypeError, match="needs dense `X`"):
        clf.predict(sp.csr_matrix(X))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"priors": [0.5, 0.5]}, "`priors` must have one probability per class"),
        ({"priors": [0.5, 0.3, 0.3]}, "`priors` must sum to 1"),
        ({"reg_covar": -1.0}, "reg_covar"),
    ],
)
def test_bad_parameters_name_the_argument(params, match):
    X, y = correlated_data()
    with pytest.raises(ValueError, match=match):
        NormalBayesClassifier(**params).fit(X, y)


def test_bad_inputs_name_the_argument():
    X, y = correlated_data()
    with pytest.raises(ValueError, match="`y` has"):
        NormalBayesClassifier().fit(X, y[:-1])
    with pytest.raises(ValueError, match="classes must be passed"):
        NormalBayesClassifier().partial_fit(X, y)
    clf = NormalBayesClassifier().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        clf.predict(X[:, :3])
    with pytest.raises(ValueError, match="`sample_weight` must contain at least one non-zero weight"):
        NormalBayesClassifier().fit(X, y, sample_weight=np.zeros(len(y)))


@parametrize_with_checks(
    [NormalBayesClassifier()],
    expected_failed_checks=lambda est: inherited_failures(GaussianNB(), ("check_dtype_object", "check_requires_y_none")),
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_to_device_then_predict_and_partial_fit_there(backend):
    X, y = correlated_data()
    clf = NormalBayesClassifier().partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    clf.to_device(backend.asarray(np.zeros(1)))
    assert_namespace(clf.precisions_cholesky_, backend)
    clf.partial_fit(backend.asarray(X[100:]), backend.asarray(y[100:]))
    full = NormalBayesClassifier().fit(X, y)
    np.testing.assert_allclose(to_numpy(clf.predict_joint_log_proba(backend.asarray(X))), full.predict_joint_log_proba(X), rtol=1e-10)


def test_merge_of_models_fitted_on_disjoint_data_equals_one_fit():
    X, y = correlated_data(loc=3.0)
    order = np.random.default_rng(4).permutation(len(y))
    X, y = X[order], y[order]
    a = NormalBayesClassifier().partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    b = NormalBayesClassifier().partial_fit(X[50:], y[50:], classes=[0, 1, 2])
    full = NormalBayesClassifier().fit(X, y)
    merged = a.merge(b)
    np.testing.assert_allclose(merged.covariance_, full.covariance_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(merged.predict_joint_log_proba(X), full.predict_joint_log_proba(X), rtol=1e-10)
