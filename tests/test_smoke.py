import numpy as np
from sklearn import naive_bayes as sk

import nbgpu
from conftest import assert_namespace, to_numpy

MODELS = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"]


def test_five_models_match_sklearn_on_every_backend(backend, dtype):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(60, 7)).astype(dtype)
    y = rng.integers(0, 3, size=60)
    for name in MODELS:
        ours = getattr(nbgpu, name)().fit(backend.asarray(X), backend.asarray(y))
        ref = getattr(sk, name)().fit(X.astype(np.float64) if name != "CategoricalNB" else X.astype(int), y)
        proba = ours.predict_proba(backend.asarray(X))
        assert_namespace(proba, backend)
        assert proba.dtype == backend.asarray(X).dtype
        rtol = 1e-4 if dtype == "float32" else 1e-9
        np.testing.assert_allclose(to_numpy(proba), ref.predict_proba(X), rtol=rtol, atol=1e-6)
        np.testing.assert_array_equal(to_numpy(ours.predict(backend.asarray(X))), ref.predict(X))
