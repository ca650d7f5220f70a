"""Merging fitted models, and conversion to and from scikit-learn."""

import numpy as np
import pytest
from sklearn import naive_bayes as sk

import nbgpu
from conftest import assert_namespace, to_numpy

MODELS = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"]
FITTED = {
    "GaussianNB": ["theta_", "var_", "class_count_", "class_prior_", "epsilon_"],
    "MultinomialNB": ["class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_"],
    "ComplementNB": ["class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_", "feature_all_"],
    "BernoulliNB": ["class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_"],
    "CategoricalNB": ["class_count_", "class_log_prior_", "category_count_", "feature_log_prob_", "n_categories_"],
}


def _data(name, seed=0, n=100, d=6):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    if name == "GaussianNB":
        X = rng.normal(size=(n, d)) * 3.0 + y[:, None]
    else:
        X = np.minimum(rng.poisson(1.0 + y[:, None] * 0.5, size=(n, d)), 6).astype(float)
    return X, y


def _host(a):
    return np.asarray(a) if isinstance(a, float) else to_numpy(a)


def _assert_same_model(got, want, name, rtol):
    for attr in FITTED[name]:
        a, b = getattr(got, attr), getattr(want, attr)
        pairs = zip(a, b, strict=True) if isinstance(b, list) else [(a, b)]
        for u, v in pairs:
            np.testing.assert_allclose(_host(u), _host(v), rtol=rtol, atol=rtol, err_msg=attr)
    np.testing.assert_array_equal(to_numpy(got.classes_), to_numpy(want.classes_))
    assert got.n_features_in_ == want.n_features_in_


# --------------------------------------------------------------------------- #
# merge
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", MODELS)
def test_merge_of_two_halves_equals_fit_on_all(backend, dtype, name):
    X, y = _data(name)
    if name == "CategoricalNB":
        X[:50] = np.minimum(X[:50], 2)  # halves see different numbers of categories
    Xb, yb = backend.asarray(X, dtype), backend.asarray(y)
    a = getattr(nbgpu, name)().partial_fit(Xb[:50, ...], yb[:50], classes=[0, 1, 2])
    b = getattr(nbgpu, name)().partial_fit(Xb[50:, ...], yb[50:], classes=[0, 1, 2])
    full = getattr(nbgpu, name)().fit(Xb, yb)
    a_proba = to_numpy(a.predict_proba(Xb))
    merged = a.merge(b)
    assert merged is not a and merged is not b
    np.testing.assert_array_equal(to_numpy(a.predict_proba(Xb)), a_proba)  # a unchanged
    rtol = 2e-5 if dtype == "float32" else 1e-10
    _assert_same_model(merged, full, name, rtol)
    proba = merged.predict_proba(Xb)
    assert_namespace(proba, backend)
    assert proba.dtype == Xb.dtype
    np.testing.assert_allclose(to_numpy(proba), to_numpy(full.predict_proba(Xb)), rtol=rtol, atol=rtol)
    # The merged model goes on learning like any other.
    merged.partial_fit(Xb[:10, ...], yb[:10])
    full.partial_fit(Xb[:10, ...], yb[:10])
    _assert_same_model(merged, full, name, rtol)


def test_merge_with_missing_values_and_across_namespaces():
    torch = pytest.importorskip("torch")
    X, y = _data("GaussianNB", 1)
    X[np.random.default_rng(2).random(X.shape) < 0.2] = np.nan
    a = nbgpu.GaussianNB(missing="ignore").fit(X[:60], y[:60])
    b = nbgpu.GaussianNB(missing="ignore").fit(torch.asarray(X[60:]), torch.asarray(y[60:]))
    merged = a.merge(b)
    assert isinstance(merged.theta_, np.ndarray)  # where `self` lives
    full = nbgpu.GaussianNB(missing="ignore").fit(X, y)
    _assert_same_model(merged, full, "GaussianNB", 1e-10)
    np.testing.assert_allclose(merged.predict_proba(X), full.predict_proba(X), rtol=1e-9)


def test_merge_errors():
    X, y = _data("MultinomialNB")
    a = nbgpu.MultinomialNB().fit(X, y)
    with pytest.raises(TypeError, match="must be a MultinomialNB"):
        a.merge(nbgpu.BernoulliNB().fit(X, y))
    with pytest.raises(ValueError, match=r"parameters.*alpha=1.0 vs 0.5"):
        a.merge(nbgpu.MultinomialNB(alpha=0.5).fit(X, y))
    with pytest.raises(ValueError, match="fitted on 5 features, this model on 6"):
        a.merge(nbgpu.MultinomialNB().fit(X[:, :5], y))
    # Different classes merge into their union (tests/test_union_merge.py),
    # unless a parameter has one entry per class of each model.
    costly = nbgpu.MultinomialNB(loss_matrix=1.0 - np.eye(3)).fit(X, y)
    with pytest.raises(ValueError, match=r"classes \[1, 2, 3\] but this model has \[0, 1, 2\]"):
        costly.merge(nbgpu.MultinomialNB(loss_matrix=1.0 - np.eye(3)).fit(X, y + 1))
    with pytest.raises(Exception, match="not fitted"):
        a.merge(nbgpu.MultinomialNB())


# --------------------------------------------------------------------------- #
# to_sklearn / from_sklearn
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", MODELS)
def test_to_sklearn_predicts_like_the_model(backend, dtype, name):
    X, y = _data(name, 3)
    Xb = backend.asarray(X, dtype)
    ours = getattr(nbgpu, name)(prior_smoothing=0.5).fit(Xb, backend.asarray(y))
    ref = ours.to_sklearn()
    assert type(ref) is getattr(sk, name)
    assert isinstance(ref.classes_, np.ndarray)
    for attr in FITTED[name]:
        value = getattr(ref, attr)
        for v in value if isinstance(value, list) else [value]:
            assert isinstance(v, (np.ndarray, float))
            if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                assert v.dtype == np.float64
    Xh = X.astype(dtype).astype(int if name == "CategoricalNB" else np.float64)
    rtol = 2e-5 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(ref.predict_proba(Xh), to_numpy(ours.predict_proba(Xb)), rtol=rtol, atol=1e-7)
    np.testing.assert_array_equal(ref.predict(Xh), to_numpy(ours.predict(Xb)))


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_equals_the_original(name):
    X, y = _data(name, 4)
    labels = np.array(["no", "maybe", "yes"])[y]
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=len(y))
    original = getattr(nbgpu, name)().fit(X, labels, sample_weight=w)
    back = getattr(nbgpu, name).from_sklearn(original.to_sklearn())
    _assert_same_model(back, original, name, 1e-12)
    np.testing.assert_array_equal(back.predict(X), original.predict(X))
    # ... and learns on like the original. scikit-learn keeps no unweighted
    # moments of all rows; after a weighted fit GaussianNB rebuilds them from
    # the classes, so only the epsilon_ of later batches may move (by about
    # var_smoothing times the change in variance).
    back.partial_fit(X[:30], labels[:30])
    original.partial_fit(X[:30], labels[:30])
    _assert_same_model(back, original, name, 1e-9 if name == "GaussianNB" else 1e-12)


@pytest.mark.parametrize("name", MODELS)
def test_from_sklearn_predicts_like_sklearn_and_continues(name):
    X, y = _data(name, 6)
    ref = getattr(sk, name)().fit(X[:60].astype(int) if name == "CategoricalNB" else X[:60], y[:60])
    ours = getattr(nbgpu, name).from_sklearn(ref)
    seen = X[:60].astype(int) if name == "CategoricalNB" else X[:60]
    np.testing.assert_allclose(ours.predict_proba(X[:60]), ref.predict_proba(seen), rtol=1e-9)
    ours.partial_fit(X[60:], y[60:])
    _assert_same_model(ours, getattr(nbgpu, name)().fit(X, y), name, 1e-10)


def test_gaussian_from_sklearn_keeps_sklearn_epsilon():
    # scikit-learn takes epsilon_ from the first partial_fit batch only.
    X, y = _data("GaussianNB", 7)
    ref = sk.GaussianNB().partial_fit(X[:20] * 0.1, y[:20], classes=[0, 1, 2]).partial_fit(X[20:], y[20:])
    ours = nbgpu.GaussianNB.from_sklearn(ref)
    assert ours.epsilon_ == pytest.approx(ref.epsilon_, rel=1e-12)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-9)


def test_round_trip_keeps_nbgpu_parameters_and_feature_names():
    X, y = _data("MultinomialNB", 8)
    original = nbgpu.MultinomialNB(prior_smoothing=2.0).fit(X, y)
    ref = original.to_sklearn()
    np.testing.assert_allclose(ref.predict_proba(X), original.predict_proba(X), rtol=1e-12)
    back = nbgpu.MultinomialNB.from_sklearn(ref, prior_smoothing=2.0)
    _assert_same_model(back, original, "MultinomialNB", 1e-12)
    # Column names of a DataFrame travel both ways.
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"w{j}" for j in range(X.shape[1])])
    named = nbgpu.MultinomialNB().fit(frame, y)
    ref = named.to_sklearn()
    np.testing.assert_array_equal(ref.feature_names_in_, frame.columns)
    np.testing.assert_allclose(ref.predict_proba(frame), named.predict_proba(frame), rtol=1e-12)
    back = nbgpu.MultinomialNB.from_sklearn(ref)
    np.testing.assert_array_equal(back.feature_names_in_, frame.columns)
    np.testing.assert_array_equal(back.predict(frame), named.predict(frame))


def test_conversion_errors():
    X, y = _data("MultinomialNB")
    with pytest.raises(ValueError, match="loss_matrix"):
        nbgpu.MultinomialNB(loss_matrix=1 - np.eye(3)).fit(X, y).to_sklearn()
    with pytest.raises(TypeError, match="must be a fitted sklearn.naive_bayes.MultinomialNB; got BernoulliNB"):
        nbgpu.MultinomialNB.from_sklearn(sk.BernoulliNB().fit(X, y))
    with pytest.raises(TypeError, match="no parameter"):
        nbgpu.MultinomialNB.from_sklearn(sk.MultinomialNB().fit(X, y), missing="ignore")
    with pytest.raises(Exception, match="not fitted"):
        nbgpu.MultinomialNB.from_sklearn(sk.MultinomialNB())
    with pytest.raises(Exception, match="not fitted"):
        nbgpu.MultinomialNB().to_sklearn()


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB"])
def test_partial_fit_after_moving_the_model(name):
    torch = pytest.importorskip("torch")
    X, y = _data(name, 9)
    moved = getattr(nbgpu, name)().fit(X[:50], y[:50]).to_device(torch.empty(0))
    moved.partial_fit(torch.asarray(X[50:]), torch.asarray(y[50:]))
    assert isinstance(moved.class_count_, torch.Tensor)
    full = getattr(nbgpu, name)().fit(X, y)
    _assert_same_model(moved, full, name, 1e-10)


@pytest.mark.parametrize("name", ["GaussianNB", "CategoricalNB"])
def test_to_sklearn_of_a_model_fitted_with_missing_values(name):
    X, y = _data(name, 10)
    Xn = X.copy()
    Xn[np.random.default_rng(11).random(X.shape) < 0.2] = np.nan
    # (every category kept, as a value seen only where NaN was put stays unknown)
    extra = {"min_categories": 7} if name == "CategoricalNB" else {}
    ours = getattr(nbgpu, name)(missing="ignore", **extra).fit(Xn, y)
    ref = ours.to_sklearn()  # serves complete rows exactly
    Xh = X.astype(int) if name == "CategoricalNB" else X
    np.testing.assert_allclose(ref.predict_proba(Xh), ours.predict_proba(X), rtol=1e-9, atol=1e-12)
