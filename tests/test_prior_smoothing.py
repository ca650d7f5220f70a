"""Smoothed class prior: ``prior_smoothing`` on every model."""

import numpy as np
import pytest
from sklearn import naive_bayes as sk

import nbgpu
from conftest import assert_namespace, to_numpy
from model_checks import EXTRA_MODELS, make_model

MODELS = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"]


def _data(seed=0):
    rng = np.random.default_rng(seed)
    # Unbalanced classes (one rare), so smoothing visibly moves the prior.
    y = rng.choice(4, size=80, p=[0.6, 0.25, 0.13, 0.02])
    y[:4] = [0, 1, 2, 3]
    X = rng.poisson(1.0 + y[:, None] * 0.4, size=(80, 5)).astype(float)
    w = rng.uniform(0.5, 2.0, size=80)
    return X, y, w


def _prior_attribute(est):
    """The fitted prior as the model keeps it: ``class_log_prior_``, else ``class_prior_``."""
    return est.class_log_prior_ if hasattr(est, "class_log_prior_") else est.class_prior_


def _log_prior(est):
    if not hasattr(est, "class_log_prior_"):
        return np.log(to_numpy(est.class_prior_))
    return to_numpy(est.class_log_prior_)


@pytest.mark.parametrize("name", MODELS + EXTRA_MODELS)
@pytest.mark.parametrize("smoothing", [0.0, 1.0, 2.5])
def test_prior_is_smoothed_counts(backend, name, smoothing):
    X, y, w = _data()
    est = make_model(name, prior_smoothing=smoothing)
    est.fit(backend.asarray(X), backend.asarray(y), sample_weight=backend.asarray(w))
    counts = np.array([w[y == c].sum() for c in range(4)])
    expected = (counts + smoothing) / (counts.sum() + 4 * smoothing)
    prior = _prior_attribute(est)
    assert_namespace(prior, backend)
    np.testing.assert_allclose(np.exp(_log_prior(est)), expected, rtol=1e-12)


@pytest.mark.parametrize("name", MODELS)
def test_zero_smoothing_keeps_the_sklearn_estimate(name):
    X, y, _ = _data(1)
    ours = getattr(nbgpu, name)(prior_smoothing=0.0).fit(X, y)
    ref = getattr(sk, name)().fit(X.astype(int) if name == "CategoricalNB" else X, y)
    ref_log = np.log(ref.class_prior_) if name == "GaussianNB" else ref.class_log_prior_
    np.testing.assert_allclose(_log_prior(ours), ref_log, rtol=1e-12)


@pytest.mark.parametrize("name", ["GaussianNB", "MultinomialNB", "BernoulliNB", "CategoricalNB", *EXTRA_MODELS])
def test_smoothing_shifts_the_joint_log_likelihood_by_the_log_prior(backend, name):
    X, y, _ = _data(2)
    Xb, yb = backend.asarray(X), backend.asarray(y)
    plain = make_model(name).fit(Xb, yb)
    laplace = make_model(name, prior_smoothing=1.0).fit(Xb, yb)
    counts = np.bincount(y, minlength=4)
    shift = np.log((counts + 1.0) / (counts.sum() + 4.0)) - np.log(counts / counts.sum())
    jll = to_numpy(plain.predict_joint_log_proba(Xb))
    diff = to_numpy(laplace.predict_joint_log_proba(Xb)) - jll
    # Rows far from a class have huge scores (a rare class has tiny variances).
    atol = 1e-13 * np.abs(jll).max(axis=0)
    np.testing.assert_allclose(diff, np.broadcast_to(shift, diff.shape), rtol=1e-9, atol=atol.max())


@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB", "CategoricalNB", "PoissonNB"])
def test_uniform_prior_stays_uniform(name):
    X, y, _ = _data(3)
    est = getattr(nbgpu, name)(fit_prior=False, prior_smoothing=3.0).fit(X, y)
    np.testing.assert_allclose(est.class_log_prior_, np.full(4, -np.log(4)), rtol=1e-12)


@pytest.mark.parametrize(
    ("name", "param"),
    [
        ("GaussianNB", "priors"),
        ("MultinomialNB", "class_prior"),
        ("CategoricalNB", "class_prior"),
        ("PoissonNB", "class_prior"),
        ("NormalBayesClassifier", "priors"),
        ("ColumnwiseNB", "priors"),
        ("KernelDensityNB", "priors"),
    ],
)
def test_fixed_prior_with_smoothing_is_an_error(name, param):
    X, y, _ = _data(4)
    fixed = [0.1, 0.2, 0.3, 0.4]
    est = make_model(name, **{param: fixed, "prior_smoothing": 1.0})
    with pytest.raises(ValueError, match=rf"`prior_smoothing=1`.*fixed `{param}`"):
        est.fit(X, y)
    assert not hasattr(est, "classes_")  # the failed fit left nothing behind
    with pytest.raises(ValueError, match=rf"`prior_smoothing=1`.*fixed `{param}`"):
        est.partial_fit(X, y, classes=np.unique(y))  # refused when made, not at the first predict
    assert not hasattr(est, "classes_")
    # Without smoothing the fixed prior is used as given.
    est.set_params(prior_smoothing=0.0).fit(X, y)
    np.testing.assert_allclose(np.exp(_log_prior(est)), fixed, rtol=1e-12)


@pytest.mark.parametrize("name", ["MultinomialNB", *EXTRA_MODELS])
@pytest.mark.parametrize("bad", [-0.5, np.inf, np.nan, "one"])
def test_bad_smoothing_is_rejected(name, bad):
    X, y, _ = _data()
    with pytest.raises(ValueError, match="prior_smoothing"):
        make_model(name, prior_smoothing=bad).fit(X, y)


@pytest.mark.parametrize("name", MODELS + EXTRA_MODELS)
def test_partial_fit_equals_fit(name):
    X, y, w = _data(5)
    full = make_model(name, prior_smoothing=0.7).fit(X, y, sample_weight=w)
    chunked = make_model(name, prior_smoothing=0.7)
    for part in np.array_split(np.arange(80), 3):
        chunked.partial_fit(X[part], y[part], classes=np.arange(4), sample_weight=w[part])
    np.testing.assert_allclose(_log_prior(chunked), _log_prior(full), rtol=1e-12)
    np.testing.assert_allclose(chunked.predict_proba(X), full.predict_proba(X), rtol=1e-9)
