"""Seeded data sets and comparison helpers shared by the tests.

Every data set is small (the whole suite runs on 2 cores) and deterministic.
``model_data(name, ...)`` gives data a model accepts: real values for
GaussianNB, counts for the count models, category codes for CategoricalNB.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import datasets
from sklearn import naive_bayes as sk

import nbgpu
from conftest import active_backends, backend_named, to_numpy

MODELS = ("GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB")
DISCRETE = MODELS[1:]
# Models whose X must be non-negative counts / category codes.
COUNT_MODELS = ("MultinomialNB", "ComplementNB", "CategoricalNB")

# The fitted attributes scikit-learn defines, per model.
_COMMON = ("classes_", "class_count_", "n_features_in_")
ATTRIBUTES = {
    "GaussianNB": (*_COMMON, "class_prior_", "theta_", "var_", "epsilon_"),
    "MultinomialNB": (*_COMMON, "class_log_prior_", "feature_count_", "feature_log_prob_"),
    "ComplementNB": (*_COMMON, "class_log_prior_", "feature_count_", "feature_all_", "feature_log_prob_"),
    "BernoulliNB": (*_COMMON, "class_log_prior_", "feature_count_", "feature_log_prob_"),
    "CategoricalNB": (*_COMMON, "class_log_prior_", "category_count_", "feature_log_prob_", "n_categories_"),
}
# Attributes holding counts: accumulated in float64 whatever the input dtype.
COUNT_ATTRIBUTES = ("class_count_", "feature_count_", "feature_all_", "category_count_")
PREDICT_METHODS = ("predict_proba", "predict_log_proba", "predict_joint_log_proba")


def ours(name, **params):
    return getattr(nbgpu, name)(**params)


def reference(name, **params):
    return getattr(sk, name)(**params)


# --------------------------------------------------------------------------- #
# Data
# --------------------------------------------------------------------------- #
def random_data(name, *, n=80, d=6, k=3, seed=0):
    """Random (X, y) suited to model ``name`` (float64 X, int y)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    y[:k] = np.arange(k)  # every class present
    shift = rng.normal(size=(k, d))
    if name == "GaussianNB":
        X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d) + shift[y]
    elif name == "CategoricalNB":
        X = rng.poisson(np.exp(shift[y] * 0.7)).astype(np.float64)
    elif name == "BernoulliNB":
        X = (rng.uniform(size=(n, d)) < 1 / (1 + np.exp(-2 * shift[y]))).astype(np.float64)
        X *= rng.integers(1, 4, size=(n, d))  # counts that binarize to the pattern
    else:
        X = rng.poisson(np.exp(shift[y])).astype(np.float64)
    return X, y


def quantize(X, n_bins=5):
    """Per-feature quantile bins 0..n_bins-1: category codes from real data."""
    edges = np.quantile(X, np.linspace(0, 1, n_bins + 1)[1:-1], axis=0)
    return np.stack([np.searchsorted(edges[:, j], X[:, j], side="right") for j in range(X.shape[1])], axis=1).astype(
        np.float64
    )


@functools.cache
def _sklearn_dataset(loader):
    X, y = getattr(datasets, loader)(return_X_y=True)
    return X.astype(np.float64), y


def zipf_corpus(n_docs=240, n_words=1500, k=3, seed=0, exponent=1.1):
    """A sparse bag-of-words corpus (CSR float64) with Zipfian word frequencies.

    Each class tilts the common Zipf distribution by a random log-normal
    factor per word, so the classes are learnable but overlap.
    """
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_words + 1) ** exponent
    tilt = np.exp(rng.normal(scale=0.8, size=(k, n_words)))
    probs = base * tilt
    probs /= probs.sum(axis=1, keepdims=True)
    y = np.arange(n_docs) % k
    rng.shuffle(y)
    lengths = rng.poisson(60, size=n_docs) + 1
    rows = [rng.multinomial(lengths[i], probs[y[i]]) for i in range(n_docs)]
    return sp.csr_matrix(np.array(rows, dtype=np.float64)), y


DATASETS = ("iris", "wine", "breast_cancer", "digits", "zipf")


def dataset(which, name):
    """(X, y) of a named data set prepared for model ``name``.

    ``zipf`` is sparse (CSR); the others are dense. Category codes for
    CategoricalNB come from quantile bins (digits and zipf are already
    whole numbers).
    """
    if which == "zipf":
        X, y = zipf_corpus()
        return X, y
    X, y = _sklearn_dataset(f"load_{which}")
    if which == "digits":
        X, y = X[::3], y[::3]  # a third of the rows keeps the suite fast
    if name == "CategoricalNB" and which != "digits":
        X = quantize(X)
    return X, y


def bernoulli_threshold(X):
    """A binarize threshold that splits a data set's values (not all ones)."""
    values = X.data if sp.issparse(X) else X.ravel()
    return float(np.median(values))


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


# Dask blocks are arrays of numpy or cupy (and their sparse matrices).
DASK_BLOCK_BACKENDS = ("numpy", "numpy_readonly", "device_emulated", "cupy")


def every_dask_block(test):
    """Parametrize ``test`` over the active backends of Dask blocks
    (``block_backend``), a count model and GaussianNB (``name``), and dense
    and sparse blocks (``sparse``); see :func:`dask_block_case`."""
    backends = [n for n in DASK_BLOCK_BACKENDS if n in active_backends()]
    test = pytest.mark.parametrize("block_backend", backends)(test)
    test = pytest.mark.parametrize("name", ["MultinomialNB", "GaussianNB"])(test)
    return pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])(test)


def dask_block_case(X, dtype, block_backend, sparse, rows=50):
    """``(backend, X as dtype, X in Dask blocks of that backend)``."""
    backend = backend_named(block_backend)
    X = X.astype(dtype)
    return backend, X, dask_rows(X, rows, sparse=sparse, backend=backend)


def dask_rows(X, rows, *, sparse=False, backend=None):
    """``X`` as a Dask array of ``rows``-row blocks: numpy arrays, or those of
    ``backend``; with ``sparse``, CSR matrices (scipy's, or the backend's)."""
    import dask.array as da

    if backend is None:
        Xd = da.from_array(X, chunks=(rows, X.shape[1]))
        return Xd.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0))) if sparse else Xd
    Xd = da.from_array(backend.asarray(X), chunks=(rows, X.shape[1]), asarray=False)
    if sparse:
        Xd = Xd.map_blocks(lambda b: backend.sparse(to_numpy(b)), meta=backend.sparse(np.zeros((0, X.shape[1]))))
    return Xd


# --------------------------------------------------------------------------- #
# Comparisons
# --------------------------------------------------------------------------- #
def attribute(model, attr):
    """A fitted attribute as numpy (a list of arrays for CategoricalNB's)."""
    value = getattr(model, attr)
    if isinstance(value, list):
        return [to_numpy(v) for v in value]
    if isinstance(value, (int, float, np.integer, np.floating)):
        return np.asarray(value)
    return to_numpy(value)


def assert_attributes_close(model, ref, name, *, rtol=1e-6, atol=0.0, skip=()):
    """Every scikit-learn attribute of ``model`` equals that of ``ref``."""
    for attr in ATTRIBUTES[name]:
        if attr in skip:
            continue
        a, b = attribute(model, attr), attribute(ref, attr)
        if attr in ("classes_", "n_features_in_", "n_categories_"):
            np.testing.assert_array_equal(a, b, err_msg=attr)
        elif isinstance(b, list):
            assert isinstance(a, list) and len(a) == len(b), attr
            for j, (aj, bj) in enumerate(zip(a, b)):
                np.testing.assert_allclose(aj, bj, rtol=rtol, atol=atol, err_msg=f"{attr}[{j}]")
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=attr)


def assert_models_equal(a, b, name, *, rtol=1e-12):
    """Two of our models of the same kind have equal attributes and scores."""
    for attr in ATTRIBUTES[name]:
        u, v = attribute(a, attr), attribute(b, attr)
        pairs = zip(u, v) if isinstance(u, list) else [(u, v)]
        for p, q in pairs:
            if attr in ("classes_", "n_features_in_", "n_categories_"):
                np.testing.assert_array_equal(p, q, err_msg=attr)
            else:
                np.testing.assert_allclose(p, q, rtol=rtol, atol=1e-300, err_msg=attr)
    X, _ = random_data(name, n=30, d=a.n_features_in_, k=3, seed=99)
    if name == "CategoricalNB":
        X = np.minimum(X, to_numpy(a.n_categories_) - 1)
    for method in PREDICT_METHODS:
        np.testing.assert_allclose(
            to_numpy(getattr(a, method)(X)), to_numpy(getattr(b, method)(X)), rtol=1e-10, atol=1e-12, err_msg=method
        )


def assert_same_predictions(pred, ref_pred, ref_jll, *, tie=1e-7):
    """Equal labels, except where the reference's two best classes tie.

    A near tie can flip on a last-bit difference, which is no disagreement.
    """
    pred, ref_pred = np.asarray(pred), np.asarray(ref_pred)
    top2 = np.sort(ref_jll, axis=1)[:, -2:] if ref_jll.shape[1] > 1 else np.c_[ref_jll - 1, ref_jll]
    decided = (top2[:, 1] - top2[:, 0]) > tie * np.maximum(1.0, np.abs(top2[:, 1]))
    assert decided.mean() > 0.9, "too many ties for a meaningful comparison"
    np.testing.assert_array_equal(pred[decided], ref_pred[decided])


def gaussian_rounding_scale(model, X):
    """The size of the terms GaussianNB's expanded quadratic form cancels.

    ``-½ Σⱼ (xⱼ - μⱼ)² / σⱼ²`` is computed as ``-½ c²P + cμP - ½ μ²P`` on
    inputs ``c`` centred by the training mean ``m`` (ARCHITECTURE.md, design 1), so its
    rounding error is a few ulps of ``½ Σⱼ (|xⱼ - mⱼ| + |μⱼ - mⱼ|)² / σⱼ²``,
    which for a near-constant feature (σ² = epsilon_) far exceeds the result.
    Returns that scale, shape (n_samples, n_classes).
    """
    X = dense(X)
    m = X.mean(axis=0)
    theta, var = to_numpy(model.theta_), to_numpy(model.var_)
    spread = np.abs(X - m)[:, None, :] + np.abs(theta - m)[None, :, :]
    return 0.5 * np.sum(spread**2 / var, axis=2)


def assert_scores_close(model, ref, X_ours, X_ref, *, rtol=1e-6, atol=1e-10):
    """predict and the three predict_*proba methods agree with the reference.

    For GaussianNB the joint log-likelihood may also differ by 100 ulps of
    the terms its expanded quadratic form cancels (``gaussian_rounding_scale``);
    probabilities are held to ``rtol`` alone.
    """
    ref_jll = ref.predict_joint_log_proba(X_ref)
    for method in PREDICT_METHODS:
        got = to_numpy(getattr(model, method)(X_ours))
        want = getattr(ref, method)(X_ref)
        tol = atol
        if method == "predict_joint_log_proba" and type(model).__name__ == "GaussianNB":
            tol = atol + 100 * np.finfo(np.float64).eps * gaussian_rounding_scale(model, X_ref)
        np.testing.assert_array_less(np.abs(got - want), tol + rtol * np.abs(want), err_msg=method)
    assert_same_predictions(to_numpy(model.predict(X_ours)), ref.predict(X_ref), ref_jll)


def snapshot(model):
    """Every fitted attribute of a model (numpy copies), to detect changes."""
    out = {}
    for key, value in vars(model).items():
        if isinstance(value, dict):
            out[key] = {k: _copy(v) for k, v in value.items()}
        else:
            out[key] = _copy(value)
    return out


def _copy(value):
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    try:
        return np.array(to_numpy(value), copy=True)
    except Exception:  # plain Python values
        return value


def assert_snapshots_equal(a, b):
    assert a.keys() == b.keys()
    for key in a:
        _assert_equal(a[key], b[key], key)


def _assert_equal(a, b, where):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _assert_equal(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, tuple):
        for i, (u, v) in enumerate(zip(a, b)):
            _assert_equal(u, v, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, where
