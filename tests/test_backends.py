"""Every model over the backend / device / dtype grid.

Outputs are in the namespace and on the device of the input; float32 in
gives float32 parameters and scores, counts are float64; values equal
scikit-learn's (float64 reference) to the input dtype's precision.
"""

from __future__ import annotations

import numpy as np
import pytest

from _data import (
    ATTRIBUTES,
    COUNT_ATTRIBUTES,
    MODELS,
    PREDICT_METHODS,
    assert_attributes_close,
    attribute,
    ours,
    random_data,
    reference,
)
from conftest import assert_namespace, to_numpy

TOL = {"float32": {"rtol": 2e-5, "atol": 1e-5}, "float64": {"rtol": 1e-6, "atol": 1e-10}}
# Attributes that are plain host values, not arrays of the input's namespace.
HOST_ATTRIBUTES = ("classes_", "n_features_in_", "epsilon_")


def _fitted_arrays(model, name):
    for attr in ATTRIBUTES[name]:
        if attr in HOST_ATTRIBUTES:
            continue
        value = getattr(model, attr)
        yield from ((attr, v) for v in (value if isinstance(value, list) else [value]))


def _reference_fit(name, X, y):
    X_ref = X.astype(np.int64) if name == "CategoricalNB" else X
    return reference(name).fit(X_ref, y), X_ref


@pytest.mark.parametrize("name", MODELS)
def test_fit_predict_on_backend(name, backend, dtype):
    X, y = random_data(name, n=70, d=5, k=3, seed=1)
    Xb = backend.asarray(X, dtype=dtype)
    model = ours(name).fit(Xb, backend.asarray(y))
    ref, X_ref = _reference_fit(name, X, y)
    in_dtype = Xb.dtype

    for attr, value in _fitted_arrays(model, name):
        assert_namespace(value, backend)
        want = {"n_categories_": backend.xp.int64}.get(attr, backend.xp.float64 if attr in COUNT_ATTRIBUTES else in_dtype)
        assert value.dtype == want, (attr, value.dtype)
    assert_namespace(model.classes_, backend)
    assert_attributes_close(model, ref, name, **TOL[dtype])

    for method in PREDICT_METHODS:
        out = getattr(model, method)(Xb)
        assert_namespace(out, backend)
        assert out.dtype == in_dtype, method
        assert tuple(out.shape) == (70, 3)
        np.testing.assert_allclose(to_numpy(out), getattr(ref, method)(X_ref), **TOL[dtype], err_msg=method)
    pred = model.predict(Xb)
    assert_namespace(pred, backend)
    np.testing.assert_array_equal(to_numpy(pred), ref.predict(X_ref))
    assert model.score(Xb, backend.asarray(y)) == pytest.approx(ref.score(X_ref, y))


@pytest.mark.parametrize("name", MODELS)
def test_partial_fit_on_backend(name, backend, dtype):
    """Chunked partial_fit on the backend equals one fit (chunking details in test_partial_fit)."""
    X, y = random_data(name, n=60, d=4, k=3, seed=2)
    Xb, yb = backend.asarray(X, dtype=dtype), backend.asarray(y)
    whole = ours(name).fit(Xb, yb)
    model = ours(name)
    for start in range(0, 60, 25):
        stop = min(start + 25, 60)
        model.partial_fit(Xb[start:stop, ...], yb[start:stop], classes=backend.asarray([0, 1, 2]))
    for attr in ATTRIBUTES[name]:
        a, b = attribute(model, attr), attribute(whole, attr)
        for u, v in zip(a, b) if isinstance(a, list) else [(a, b)]:
            np.testing.assert_allclose(u, v, **TOL[dtype], err_msg=attr)
    for attr, value in _fitted_arrays(model, name):
        assert_namespace(value, backend)


@pytest.mark.parametrize("name", MODELS)
def test_sample_weight_on_backend(name, backend):
    X, y = random_data(name, n=40, d=4, k=2, seed=3)
    w = np.arange(40) % 3
    model = ours(name).fit(backend.asarray(X), backend.asarray(y), sample_weight=backend.asarray(w, dtype="float64"))
    rep = ours(name).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(to_numpy(model.predict_log_proba(backend.asarray(X))), rep.predict_log_proba(X), rtol=1e-9)


@pytest.mark.parametrize("name", MODELS)
def test_model_moves_between_backends(name, backend):
    """to_device: a model fitted on numpy scores another namespace's input there."""
    X, y = random_data(name, n=50, d=4, k=3, seed=4)
    model = ours(name).fit(X, y)
    want = model.predict_proba(X)
    like = backend.asarray(np.zeros(1))
    model.to_device(like)
    for attr, value in _fitted_arrays(model, name):
        assert_namespace(value, backend)
    got = model.predict_proba(backend.asarray(X))
    assert_namespace(got, backend)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-12)
