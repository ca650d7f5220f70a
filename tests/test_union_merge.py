"""Models fitted on different sets of classes merge into the union of their classes."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn

import nbgpu

MODELS = {
    "MultinomialNB": lambda: nbgpu.MultinomialNB(),
    "ComplementNB": lambda: nbgpu.ComplementNB(),
    "BernoulliNB": lambda: nbgpu.BernoulliNB(),
    "PoissonNB": lambda: nbgpu.PoissonNB(),
    "GaussianNB": lambda: nbgpu.GaussianNB(),
    "CategoricalNB": lambda: nbgpu.CategoricalNB(),
    "NormalBayesClassifier": lambda: nbgpu.NormalBayesClassifier(),
    "KernelDensityNB": lambda: nbgpu.KernelDensityNB(bandwidth=0.7),
    "ColumnwiseNB": lambda: nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0, 1]), ("p", nbgpu.PoissonNB(), [2, 3])]),
}


def _site_data(seed):
    """Two sites that saw different classes: labels 'a','b' at one, 'b','c','d' at the other."""
    rng = np.random.default_rng(seed)
    y = np.array(["a", "b", "c", "d"])[rng.integers(0, 4, 400)]
    centre = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    X = rng.poisson([[centre[label] * (j + 1) for j in range(4)] for label in y]).astype(np.float64)
    first = np.isin(y, ["a", "b"]) & (np.arange(400) % 2 == 0)
    second = np.isin(y, ["b", "c", "d"]) & ~first
    return X, y, first, second


@pytest.mark.parametrize("name", MODELS)
def test_merge_of_different_classes_equals_one_fit_on_the_union(name):
    X, y, first, second = _site_data(0)
    a = MODELS[name]().fit(X[first], y[first])
    b = MODELS[name]().fit(X[second], y[second])
    merged = a.merge(b)
    whole = MODELS[name]().fit(X[first | second], y[first | second])
    np.testing.assert_array_equal(merged.classes_, ["a", "b", "c", "d"])
    np.testing.assert_allclose(merged.class_count_, whole.class_count_)
    keep = first | second
    np.testing.assert_allclose(merged.predict_joint_log_proba(X[keep]), whole.predict_joint_log_proba(X[keep]), rtol=1e-8)
    np.testing.assert_array_equal(merged.predict(X), whole.predict(X))
    # Either order, and neither input changes.
    np.testing.assert_allclose(b.merge(a).predict_proba(X), merged.predict_proba(X), rtol=1e-8)
    assert a.classes_.tolist() == ["a", "b"] and b.classes_.tolist() == ["b", "c", "d"]


def test_merged_model_goes_on_learning_all_classes():
    X, y, first, second = _site_data(1)
    merged = nbgpu.MultinomialNB().fit(X[first], y[first]).merge(nbgpu.MultinomialNB().fit(X[second], y[second]))
    rest = ~(first | second)
    merged.partial_fit(X[rest], y[rest])
    np.testing.assert_allclose(merged.feature_count_, nbgpu.MultinomialNB().fit(X, y).feature_count_)


def test_integer_labels_of_different_sets_merge():
    rng = np.random.default_rng(2)
    X = rng.poisson(3.0, (200, 5))
    y = rng.integers(0, 5, 200)
    low, high = y < 3, y >= 2
    high &= ~low
    merged = nbgpu.MultinomialNB().fit(X[low], y[low]).merge(nbgpu.MultinomialNB().fit(X[high], y[high]))
    np.testing.assert_array_equal(merged.classes_, np.arange(5))
    np.testing.assert_allclose(merged.feature_count_, nbgpu.MultinomialNB().fit(X, y).feature_count_)


@pytest.mark.parametrize("param", ["loss_matrix", "class_prior"])
def test_per_class_parameters_must_be_unset_to_merge_different_classes(param):
    X, y, first, second = _site_data(3)
    values = {"loss_matrix": 1.0 - np.eye(2), "class_prior": [0.5, 0.5]}
    a = nbgpu.MultinomialNB(**{param: values[param]}).fit(X[first], y[first])
    b = nbgpu.MultinomialNB(**{param: values[param]})
    b.fit(X[second][np.isin(y[second], ["c", "d"])], y[second][np.isin(y[second], ["c", "d"])])
    with pytest.raises(ValueError, match=f"{param} has one entry per class"):
        a.merge(b)


def test_labels_of_different_kinds_do_not_merge():
    X, y, first, second = _site_data(4)
    a = nbgpu.MultinomialNB().fit(X[first], y[first])
    b = nbgpu.MultinomialNB().fit(X[second], np.searchsorted(["b", "c", "d"], y[second]))
    with pytest.raises(ValueError, match="labels of dtype"):
        a.merge(b)


def test_a_merged_estimator_is_a_clone_of_the_first():
    # Metadata requests are kept and a ColumnwiseNB's parts come back unfitted, as scikit-learn's clone does.
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 4, (40, 3)), np.arange(40) % 2
    with sklearn.config_context(enable_metadata_routing=True):
        a = nbgpu.MultinomialNB().set_score_request(sample_weight=True).fit(X[:20], y[:20])
        merged = a.merge(nbgpu.MultinomialNB().fit(X[20:], y[20:]))
        assert merged.get_metadata_routing().score.requests["sample_weight"] is True
    parts = [("g", nbgpu.GaussianNB().fit(X[:, :1], y), [0]), ("m", nbgpu.MultinomialNB(), [1, 2])]
    c = nbgpu.ColumnwiseNB(parts).fit(X[:20], y[:20])
    merged = c.merge(nbgpu.ColumnwiseNB(parts).fit(X[20:], y[20:]))
    assert not hasattr(merged.estimators[0][1], "classes_")
