"""Moving a fitted model between namespaces and devices with ``to_device``.

A model fitted on numpy (the CPU) is moved to every backend of the grid
(array_api_strict's second device stands in for a GPU on a CPU-only
machine; cupy and torch CUDA run when requested) and back: predictions and
fitted arrays follow, and a moved model keeps learning with partial_fit.
"""

import numpy as np
import pytest
from conftest import assert_namespace, to_numpy
from sklearn.datasets import load_iris

import nbgpu

MODELS = ["MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "GaussianNB"]


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return np.round(X).astype(np.float32), y


@pytest.mark.parametrize("name", MODELS)
def test_moved_model_predicts_the_same_on_the_target(backend, name, iris):
    X, y = iris
    cpu = getattr(nbgpu, name)().fit(X, y)
    expected_proba = cpu.predict_proba(X)
    moved = getattr(nbgpu, name)().fit(X, y).to_device(backend.asarray(np.zeros(1, np.float32)))

    Xb = backend.asarray(X)
    proba = moved.predict_proba(Xb)
    assert_namespace(proba, backend)
    np.testing.assert_allclose(to_numpy(proba), expected_proba, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(moved.predict(Xb)), cpu.predict(X))
    assert_namespace(moved.class_count_, backend)
    assert_namespace(moved.classes_, backend)

    back = moved.to_device(np.zeros(1))
    assert isinstance(back.class_count_, np.ndarray)
    np.testing.assert_allclose(back.predict_proba(X), expected_proba, rtol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_moved_model_keeps_learning(backend, name, iris):
    X, y = iris
    first, second = slice(0, None, 2), slice(1, None, 2)
    model = getattr(nbgpu, name)().partial_fit(X[first], y[first], classes=np.unique(y))
    model.to_device(backend.asarray(np.zeros(1, np.float32)))
    Xs, ys = np.ascontiguousarray(X[second]), np.ascontiguousarray(y[second])
    model.partial_fit(backend.asarray(Xs), backend.asarray(ys))
    full = getattr(nbgpu, name)().fit(X, y)
    np.testing.assert_allclose(to_numpy(model.class_count_), full.class_count_)
    np.testing.assert_allclose(
        to_numpy(model.predict_proba(backend.asarray(X))), full.predict_proba(X), rtol=1e-4, atol=1e-6
    )


def test_to_device_with_namespace_and_device(iris):
    array_api_strict = pytest.importorskip("array_api_strict")
    X, y = iris
    device = array_api_strict.Device("device1")
    model = nbgpu.GaussianNB().fit(X, y).to_device(xp=array_api_strict, device=device)
    out = model.predict(array_api_strict.asarray(X, device=device))
    assert out.device == device
    np.testing.assert_array_equal(to_numpy(out), nbgpu.GaussianNB().fit(X, y).predict(X))


def test_to_device_needs_a_target(iris):
    X, y = iris
    with pytest.raises(ValueError, match="like"):
        nbgpu.MultinomialNB().fit(X, y).to_device()
