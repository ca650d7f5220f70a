"""SemiSupervisedNB on Dask arrays: EM with one tree of merges per iteration.

The fit must equal the in-memory EM on the computed arrays (parameters and
log-likelihoods to rounding, the same iterations, the same predictions),
read X once per iteration, and refuse input it cannot take. Dask's
synchronous scheduler runs the graphs (the cluster tests are in
test_dask.py).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from sklearn.exceptions import ConvergenceWarning  # noqa: E402

import nbgpu  # noqa: E402
from _data import (  # noqa: E402
    MODELS,
    assert_models_equal,
    dask_block_case,
    dask_rows,
    every_dask_block,
    random_data,
)
from conftest import assert_namespace, to_numpy  # noqa: E402

# The models SemiSupervisedNB takes, and the data kind of random_data for each.
DATA_KIND = {
    **{name: name for name in MODELS},
    "PoissonNB": "MultinomialNB",
    "NormalBayesClassifier": "GaussianNB",
    "KernelDensityNB": "GaussianNB",
}


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(name, n=240, labeled_every=3, seed=0):
    X, y = random_data(DATA_KIND[name], n=n, d=6, k=3, seed=seed)
    return X, np.where(np.arange(n) % labeled_every == 0, y, -1)


def _dask(X, rows, sparse=False):
    return dask_rows(X, rows, sparse=sparse)


def _fit(model, X, y, **kwargs):
    """``model.fit``, and the ConvergenceWarning messages it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X, y, **kwargs)
    return model, [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


def _assert_same_fit(ours, ref, X):
    """The same EM run: iterations, log-likelihoods, parameters, predictions."""
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(to_numpy(ours.classes_), to_numpy(ref.classes_))
    np.testing.assert_allclose(ours.log_likelihood_, ref.log_likelihood_, rtol=1e-10)
    name = type(ref.estimator_).__name__
    if name in MODELS:
        assert_models_equal(ours.estimator_, ref.estimator_, name, rtol=1e-10)
    if name != "KernelDensityNB":  # its statistics are the rows, in the order the merges met them
        _assert_trees_close(ours.estimator_._stats, ref.estimator_._stats)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-9, atol=1e-12)


def _assert_trees_close(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_trees_close(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _assert_trees_close(u, v)
    else:
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-10, atol=1e-12)


DENSE_ONLY = ("NormalBayesClassifier", "KernelDensityNB")


@functools.cache
def _in_memory_fit(name):
    """The in-memory EM test_equals_in_memory_fit compares with (dense X: the same for every block
    size and sparse kind; the tests only read it)."""
    X, y = _data(name)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=X.shape[0])
    params = {"max_iter": 100, "tol": 1e-6, "unlabeled_weight": 0.8}
    ref, ref_warned = _fit(nbgpu.SemiSupervisedNB(getattr(nbgpu, name)(), **params), X, y, sample_weight=w)
    return X, y, w, params, ref, ref_warned


# 17-row blocks: 15 blocks (two levels of merges, 8 children at most each: 8 + 7), half of them
# without a labeled row of some class, the last one (2 rows) without any labeled row, and every
# CategoricalNB block narrower in some feature than the whole. (7-row blocks, 35 of them, had the
# same; each block costs every EM iteration a task, so they took 2.3 times as long.)
@pytest.mark.parametrize("rows", [240, 37, 17], ids=["one-block", "uneven", "15-blocks"])
@pytest.mark.parametrize(
    ("name", "sparse"),
    [(name, sparse) for name in DATA_KIND for sparse in (False, True) if not (sparse and name in DENSE_ONLY)],
)
def test_equals_in_memory_fit(name, sparse, rows):
    X, y, w, params, ref, ref_warned = _in_memory_fit(name)
    Xd = _dask(X, rows, sparse)
    ours, warned = _fit(
        nbgpu.SemiSupervisedNB(getattr(nbgpu, name)(), **params), Xd, da.from_array(y, chunks=rows), sample_weight=w
    )
    assert ref.n_iter_ < 100 and not ref_warned and not warned  # stopped by tol
    _assert_same_fit(ours, ref, X)


def test_deep_merge_trees(monkeypatch):
    """Blocks merged in pairs through several levels: still the in-memory EM."""
    from nbgpu._interop import dask_blocks

    monkeypatch.setattr(dask_blocks, "MERGE_BYTES", 1)
    X, y = _data("GaussianNB")
    ref, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.GaussianNB(), max_iter=4, tol=0.0), X, y)
    ours, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.GaussianNB(), max_iter=4, tol=0.0), _dask(X, 11), y)
    _assert_same_fit(ours, ref, X)


def test_max_iter_warns_as_in_memory():
    X, y = _data("MultinomialNB")
    model = nbgpu.SemiSupervisedNB(max_iter=2, tol=0.0)
    ref, ref_warned = _fit(model, X, y)
    ours, warned = _fit(nbgpu.SemiSupervisedNB(max_iter=2, tol=0.0), _dask(X, 50, sparse=True), y)
    assert ours.n_iter_ == 2 and len(ours.log_likelihood_) == 3
    assert len(warned) == 1 and "did not converge in 2 iterations" in warned[0]
    assert warned[0][:60] == ref_warned[0][:60]
    _assert_same_fit(ours, ref, X)


def test_string_labels():
    X, y = _data("MultinomialNB")
    labels = np.array(["eggs", "ham", "spam"])[np.maximum(y, 0)]
    labels[y == -1] = "-1"
    ref, _ = _fit(nbgpu.SemiSupervisedNB(max_iter=50, tol=1e-6), X, labels)
    for given in (da.from_array(labels, chunks=60), labels):  # Dask labels or in memory, cut to X's blocks
        ours, _ = _fit(nbgpu.SemiSupervisedNB(max_iter=50, tol=1e-6), _dask(X, 60), given)
        assert ours.classes_.tolist() == ["eggs", "ham", "spam"]
        _assert_same_fit(ours, ref, X)
        assert ours.predict(_dask(X, 60)).compute().tolist() == ref.predict(X).tolist()
    # The int -1 among string labels (scikit-learn's convention), in memory with a Dask X:
    # refused as a "Mix of label input types" where the in-memory fit takes it.
    mixed = labels.astype(object)
    mixed[y == -1] = -1
    ours, _ = _fit(nbgpu.SemiSupervisedNB(max_iter=50, tol=1e-6), _dask(X, 60), mixed)
    _assert_same_fit(ours, ref, X)


def test_float32_blocks_give_float32_parameters():
    X, y = _data("GaussianNB")
    X = X.astype(np.float32)
    ref, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.GaussianNB(), max_iter=3, tol=0.0), X, y)
    ours, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.GaussianNB(), max_iter=3, tol=0.0), _dask(X, 50), y)
    assert ours.estimator_.theta_.dtype == np.float32
    assert ours.estimator_.class_count_.dtype == np.float64
    np.testing.assert_allclose(ours.log_likelihood_, ref.log_likelihood_, rtol=1e-10)
    np.testing.assert_allclose(ours.estimator_.theta_, ref.estimator_.theta_, rtol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_weights_zero_on_a_whole_block_and_dask_weights():
    """A block whose weights are all zero is no error (the whole is checked)."""
    X, y = _data("BernoulliNB")
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=X.shape[0])
    w[:60] = 0.0
    ref, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.BernoulliNB(), max_iter=5, tol=0.0), X, y, sample_weight=w)
    ours, _ = _fit(
        nbgpu.SemiSupervisedNB(nbgpu.BernoulliNB(), max_iter=5, tol=0.0),
        _dask(X, 60),
        da.from_array(y, chunks=60),
        sample_weight=da.from_array(w, chunks=60),
    )
    _assert_same_fit(ours, ref, X)


@pytest.mark.parametrize("case", ["all labeled", "unlabeled_weight=0", "max_iter=0"])
def test_no_iteration(case):
    X, y = _data("MultinomialNB")
    params = {"unlabeled_weight=0": {"unlabeled_weight": 0.0}, "max_iter=0": {"max_iter": 0}}.get(case, {})
    if case == "all labeled":
        y = random_data("MultinomialNB", n=240, d=6, k=3, seed=0)[1]
    ref, _ = _fit(nbgpu.SemiSupervisedNB(**params), X, y)
    ours, _ = _fit(nbgpu.SemiSupervisedNB(**params), _dask(X, 50), y)
    assert ours.n_iter_ == 0 and len(ours.log_likelihood_) == 1
    _assert_same_fit(ours, ref, X)


def test_unknown_block_sizes():
    """X and y filtered alike (block sizes unknown until computed) still fit."""
    X, y = _data("ComplementNB")
    keep = X[:, 0] < 3
    Xd, yd = _dask(X, 50), da.from_array(y, chunks=50)
    Xk, yk = Xd[da.from_array(keep, chunks=50)], yd[da.from_array(keep, chunks=50)]
    assert np.isnan(Xk.shape[0])
    ref, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.ComplementNB(), max_iter=4, tol=0.0), X[keep], y[keep])
    ours, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.ComplementNB(), max_iter=4, tol=0.0), Xk, yk)
    _assert_same_fit(ours, ref, X[keep])


def test_one_pass_over_X_per_iteration():
    """X is computed once for the labeled statistics, then once per model
    scored: n_iter_ + 2 times in all, nothing persisted."""
    X, y = _data("MultinomialNB")
    computed = []

    def counted(block):
        computed.append(block.shape[0])
        return block

    for params in ({"max_iter": 3, "tol": 0.0}, {"max_iter": 100, "tol": 1e-4}):
        computed.clear()
        Xd = _dask(X, 40).map_blocks(counted, meta=np.empty((0, 0)))
        model, _ = _fit(nbgpu.SemiSupervisedNB(**params), Xd, y)
        assert model.n_iter_ >= 2
        assert len(computed) == Xd.numblocks[0] * (model.n_iter_ + 2)
        assert sum(computed) == X.shape[0] * (model.n_iter_ + 2)


def test_predict_is_lazy_and_blockwise():
    X, y = _data("CategoricalNB", n=300)
    Xd = _dask(X, 70)
    model, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.CategoricalNB(), max_iter=3, tol=0.0), Xd, y)
    ref, _ = _fit(nbgpu.SemiSupervisedNB(nbgpu.CategoricalNB(), max_iter=3, tol=0.0), X, y)
    for method in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        out = getattr(model, method)(Xd)
        assert isinstance(out, da.Array), method
        assert out.chunks[0] == Xd.chunks[0], method
        np.testing.assert_allclose(out.compute(), getattr(ref, method)(X), rtol=1e-9, atol=1e-12, err_msg=method)
    truth = random_data("CategoricalNB", n=300, d=6, k=3, seed=0)[1]
    assert model.score(Xd, da.from_array(truth, chunks=70)) == pytest.approx(ref.score(X, truth))


@every_dask_block
def test_blocks_of_every_backend(block_backend, dtype, name, sparse):
    """numpy or cupy blocks: the in-memory EM on the same backend, parameters in its namespace."""
    X, y = _data(name)
    backend, X, Xd = dask_block_case(X, dtype, block_backend, sparse)
    # The in-memory fit on the same backend (and the same sparse kind).
    Xm = backend.sparse(X) if sparse else backend.asarray(X)
    ref, _ = _fit(nbgpu.SemiSupervisedNB(getattr(nbgpu, name)(), max_iter=3, tol=0.0), Xm, y)
    ours, _ = _fit(nbgpu.SemiSupervisedNB(getattr(nbgpu, name)(), max_iter=3, tol=0.0), Xd, y)
    assert_namespace(ours.estimator_.class_count_, backend)
    proba = ours.predict_proba(Xd).compute()
    assert_namespace(proba, backend)
    rtol = 1e-5 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(ours.log_likelihood_, ref.log_likelihood_, rtol=1e-10 if dtype == "float64" else 1e-6)
    np.testing.assert_allclose(to_numpy(proba), to_numpy(ref.predict_proba(Xm)), rtol=rtol, atol=1e-7)


def test_bad_input():
    X, y = _data("MultinomialNB")
    model = nbgpu.SemiSupervisedNB()
    with pytest.raises(ValueError, match=r"`X` must be chunked by rows only .* got 2 column chunks \(3, 3\)"):
        model.fit(da.from_array(X, chunks=(50, 3)), y)
    with pytest.raises(ValueError, match="Expected a 2D Dask array for `X`"):
        model.fit(da.from_array(X[:, 0], chunks=50), y)
    with pytest.raises(ValueError, match="no labeled row"):
        model.fit(_dask(X, 50), da.from_array(np.full(240, -1), chunks=50))
    with pytest.raises(ValueError, match="`y` has 239 entries but X has 240 rows"):
        model.fit(_dask(X, 50), da.from_array(y[:-1], chunks=50))
    with pytest.raises(ValueError, match="requires y"):
        model.fit(_dask(X, 50), None)
    bad = X.copy()
    bad[230, 2] = -1.0  # an unlabeled row of the last block
    with pytest.raises(ValueError, match="Negative values"):
        model.fit(_dask(bad, 50), y)
    w = np.ones(240)
    w[y != -1] = 0.0
    with pytest.raises(ValueError, match="`sample_weight` is zero on every labeled row"):
        model.fit(_dask(X, 50), y, sample_weight=w)
    with pytest.raises(ValueError, match="`sample_weight` is zero on every labeled row"):
        model.fit(X, y, sample_weight=w)  # the same words in memory
    with pytest.raises(ValueError, match="`X` is empty"):
        model.fit(_dask(X[:0], 50), y[:0])
    assert not hasattr(model, "estimator_")
