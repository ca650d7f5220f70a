"""scikit-learn as the oracle: same predictions, probabilities and fitted
attributes on random data and on real data sets, with parameters varied.

All comparisons are in float64 on numpy / scipy.sparse inputs; the backend
grid is covered in test_backends.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _data import (
    DATASETS,
    MODELS,
    assert_attributes_close,
    assert_scores_close,
    bernoulli_threshold,
    dataset,
    dense,
    ours,
    random_data,
    reference,
)
from conftest import to_numpy


def reference_input(name, X):
    """What scikit-learn accepts: dense for Gaussian/Categorical, ints for Categorical."""
    if name == "CategoricalNB":
        return dense(X).astype(np.int64)
    if name == "GaussianNB":
        return dense(X)
    return X


def fit_both(name, X, y, *, sample_weight=None, **params):
    model = ours(name, **params).fit(X, y, sample_weight=sample_weight)
    ref = reference(name, **params).fit(reference_input(name, X), y, sample_weight=sample_weight)
    return model, ref


def check_parity(name, X, y, X_test=None, **params):
    model, ref = fit_both(name, X, y, **params)
    assert_attributes_close(model, ref, name)
    X_test = X if X_test is None else X_test
    assert_scores_close(model, ref, X_test, reference_input(name, X_test))
    return model, ref


@pytest.mark.parametrize("which", DATASETS)
@pytest.mark.parametrize("name", MODELS)
def test_real_datasets(name, which):
    X, y = dataset(which, name)
    params = {"binarize": bernoulli_threshold(X)} if name == "BernoulliNB" else {}
    model, ref = check_parity(name, X, y, **params)
    # Real data, real decisions: the accuracy is the reference's.
    assert model.score(X, y) == pytest.approx(ref.score(reference_input(name, X), y))


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("seed", [0, 1])
def test_random_data(name, seed):
    X, y = random_data(name, seed=seed, n=120, d=9, k=4)
    X_test, _ = random_data(name, seed=seed + 100, n=50, d=9, k=4)
    if name == "CategoricalNB":  # scikit-learn fails on categories unseen in fit
        X_test = np.minimum(X_test, X.max(axis=0))
    check_parity(name, X, y, X_test)


# --------------------------------------------------------------------------- #
# Parameters varied
# --------------------------------------------------------------------------- #
def _alpha_array(d, seed=3):
    return np.random.default_rng(seed).uniform(0.1, 2.0, size=d)


@pytest.mark.parametrize(
    "params",
    [
        {"var_smoothing": 0.0},
        {"var_smoothing": 1e-3},
        {"var_smoothing": 0.5},
        {"priors": [0.2, 0.3, 0.5]},
        {"priors": np.array([0.1, 0.4, 0.5])},
    ],
    ids=str,
)
def test_gaussian_parameters(params):
    X, y = random_data("GaussianNB", n=90, d=5, k=3, seed=4)
    check_parity("GaussianNB", X, y, **params)


COUNT_PARAMS = [
    {"alpha": 0.5},
    {"alpha": 2.5, "fit_prior": False},
    {"alpha": 1e-10, "force_alpha": True},
    {"class_prior": [0.5, 0.25, 0.25]},
    {"class_prior": np.array([0.1, 0.6, 0.3]), "fit_prior": False},
    {"alpha": "array"},
]


def _resolve(params, d):
    return {k: (_alpha_array(d) if isinstance(v, str) else v) for k, v in params.items()}


@pytest.mark.parametrize("params", COUNT_PARAMS, ids=str)
def test_multinomial_parameters(params):
    X, y = random_data("MultinomialNB", n=90, d=7, k=3, seed=5)
    check_parity("MultinomialNB", X, y, **_resolve(params, 7))


@pytest.mark.parametrize("params", [*COUNT_PARAMS, {"norm": True}, {"norm": True, "alpha": "array"}], ids=str)
def test_complement_parameters(params):
    X, y = random_data("ComplementNB", n=90, d=7, k=3, seed=6)
    check_parity("ComplementNB", X, y, **_resolve(params, 7))


@pytest.mark.parametrize(
    "params",
    [*COUNT_PARAMS[:-1], {"binarize": None}, {"binarize": 1.5}, {"binarize": 0.0, "alpha": 0.3}],
    ids=str,
)
def test_bernoulli_parameters(params):
    X, y = random_data("BernoulliNB", n=90, d=7, k=3, seed=7)
    if params.get("binarize", 0.0) is None:
        X = (X > 0).astype(np.float64)  # binarize=None presumes binary input
    check_parity("BernoulliNB", X, y, **params)


@pytest.mark.parametrize(
    "params",
    [*COUNT_PARAMS[:-1], {"min_categories": 9}, {"min_categories": np.array([1, 12, 3, 2, 30, 4, 5])}],
    ids=str,
)
def test_categorical_parameters(params):
    X, y = random_data("CategoricalNB", n=90, d=7, k=3, seed=8)
    check_parity("CategoricalNB", X, y, **params)


@pytest.mark.parametrize("name", ["BernoulliNB", "CategoricalNB"])
def test_per_feature_alpha_is_feature_by_feature(name):
    """A per-feature alpha equals fitting every feature alone with its alpha.

    scikit-learn cannot take an alpha array for these two models, so its
    one-feature fits are the oracle (naive Bayes treats features
    independently; only feature_log_prob_ depends on alpha).
    """
    d = 5
    X, y = random_data(name, n=70, d=d, k=3, seed=9)
    alpha = _alpha_array(d)
    model = ours(name, alpha=alpha).fit(X, y)
    X_ref = reference_input(name, X)
    jll = np.zeros((X.shape[0], 3))
    for j in range(d):
        ref = reference(name, alpha=float(alpha[j])).fit(X_ref[:, [j]], y)
        flp = model.feature_log_prob_[j] if name == "CategoricalNB" else model.feature_log_prob_[:, j]
        want = ref.feature_log_prob_[0] if name == "CategoricalNB" else ref.feature_log_prob_[:, 0]
        np.testing.assert_allclose(to_numpy(flp), want, rtol=1e-10)
        jll += ref.predict_joint_log_proba(X_ref[:, [j]]) - ref.class_log_prior_
    jll += ref.class_log_prior_
    np.testing.assert_allclose(to_numpy(model.predict_joint_log_proba(X)), jll, rtol=1e-10)


@pytest.mark.parametrize("name", MODELS[1:])
def test_force_alpha_false_clips_tiny_alpha_with_a_warning(name):
    X, y = random_data(name, n=60, d=4, seed=10)
    with pytest.warns(UserWarning, match="alpha too small"):
        model = ours(name, alpha=0.0, force_alpha=False).fit(X, y)
    with pytest.warns(UserWarning, match="alpha too small"):
        ref = reference(name, alpha=0.0, force_alpha=False).fit(reference_input(name, X), y)
    assert_attributes_close(model, ref, name)


# --------------------------------------------------------------------------- #
# Labels
# --------------------------------------------------------------------------- #
LABELS = {
    "ints": np.array([0, 1, 2]),
    "non_contiguous_ints": np.array([-7, 3, 1000]),
    "strings": np.array(["cat", "dog", "emu"]),
    "whole_floats": np.array([1.0, 2.0, 5.0]),
    "bools": np.array([False, True]),
}


@pytest.mark.parametrize("kind", LABELS)
@pytest.mark.parametrize("name", MODELS)
def test_labels(name, kind):
    labels = LABELS[kind]
    X, codes = random_data(name, n=60, d=4, k=labels.shape[0], seed=11)
    y = labels[codes]
    model, ref = check_parity(name, X, y)
    pred = model.predict(X)
    assert np.asarray(to_numpy(pred)).dtype == y.dtype
    np.testing.assert_array_equal(model.classes_, LABELS[kind])


def test_sparse_reference_path_matches_dense():
    """The scikit-learn sparse path and ours agree on the Zipf corpus (CSC too)."""
    X, y = dataset("zipf", "MultinomialNB")
    check_parity("MultinomialNB", sp.csc_matrix(X), y)


def test_score_is_scikit_learns_accuracy():
    """score is accuracy_score of predict (without its label analysis), with
    string labels, weights, and its refusals."""
    from sklearn.metrics import accuracy_score

    rng = np.random.default_rng(5)
    X = rng.poisson(2.0, (200, 6))
    y = np.array(["spam", "ham", "eggs"])[rng.integers(0, 3, 200)]
    w = rng.random(200)
    import nbgpu

    model = nbgpu.MultinomialNB().fit(X[:100], y[:100])
    pred = model.predict(X[100:])
    assert model.score(X[100:], y[100:]) == accuracy_score(y[100:], pred)
    assert model.score(X[100:], list(y[100:]), sample_weight=w[100:]) == accuracy_score(y[100:], pred, sample_weight=w[100:])
    with pytest.raises(ValueError, match="Mix of label input types"):
        model.score(X[100:], np.arange(100))
    with pytest.raises(ValueError, match="one label per row"):
        model.score(X[100:], y[:50])
