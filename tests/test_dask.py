"""Dask arrays: fit and predict on a real ``dask.distributed.LocalCluster``.

The cluster has two worker processes on loopback. A Dask fit must equal the
in-memory fit on the concatenated data (attributes to rounding, same
predictions), predict must stay lazy, and a worker that dies mid-fit must
give either the right model or an error, never a wrong model.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from sklearn.base import clone  # noqa: E402

import nbgpu  # noqa: E402
from _data import (  # noqa: E402
    MODELS,
    assert_models_equal,
    assert_snapshots_equal,
    dask_block_case,
    dask_rows,
    every_dask_block,
    random_data,
    snapshot,
)
from conftest import assert_namespace, to_numpy  # noqa: E402

# Every estimator, with data it accepts.
EXTRA = ("PoissonNB", "NormalBayesClassifier")


# The cluster's own monitoring, which no test here reads, at intervals that leave it nearly idle
# between the tests that use it: by default the workers' profiler samples every 10 ms, each
# server's event-loop tick runs every 20 ms and each nanny measures memory every 100 ms, about
# 0.19 CPU seconds per second of an idle cluster (0.03 so), for the whole module.
QUIET_CLUSTER = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


@pytest.fixture(scope="module")
def client():
    with __import__("dask").config.set(QUIET_CLUSTER):
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # any free port: None means 8787, and a warning (an error here) when it is taken
            worker_dashboard_address=None,
        )
        with distributed.Client(cluster) as c:
            yield c
        cluster.close()


def _data(name, n=240, d=6, k=3, seed=0):
    base = "MultinomialNB" if name in EXTRA else name
    X, y = random_data(base, n=n, d=d, k=k, seed=seed)
    if name == "NormalBayesClassifier":
        X = X + np.random.default_rng(seed).normal(size=X.shape)
    return X, y


def _blocks(X, rows=50, sparse=False):
    return dask_rows(X, rows, sparse=sparse)


def _assert_same_model(a, b, X):
    """Equal attributes (to rounding) and equal scores on ``X``."""
    name = type(a).__name__
    if name in MODELS:
        assert_models_equal(a, b, name, rtol=1e-9)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", MODELS + EXTRA)
def test_fit_equals_in_memory_fit(client, name):
    X, y = _data(name)
    model = getattr(nbgpu, name)().fit(_blocks(X), da.from_array(y, chunks=50))
    _assert_same_model(model, getattr(nbgpu, name)().fit(X, y), X)


@pytest.mark.parametrize("name", MODELS + ("PoissonNB",))
def test_sparse_blocks(client, name):
    X, y = _data(name)
    Xd = _blocks(X, rows=70, sparse=True)  # uneven blocks: 70, 70, 70, 30
    model = getattr(nbgpu, name)().fit(Xd, y)  # y in memory, cut to X's blocks
    _assert_same_model(model, getattr(nbgpu, name)().fit(sp.csr_matrix(X), y), X)
    proba = model.predict_proba(Xd)
    assert isinstance(proba, da.Array) and proba.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(proba.compute(), model.predict_proba(sp.csr_matrix(X)), rtol=1e-12)


def test_columnwise(client):
    X, y = _data("GaussianNB", d=6)
    Xc = np.c_[X[:, :3], np.abs(np.round(X[:, 3:] * 3))]
    model = nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0, 1, 2]), ("c", nbgpu.PoissonNB(), slice(3, 6))])
    fitted = model.fit(_blocks(Xc), da.from_array(y, chunks=50))
    _assert_same_model(fitted, clone(model).fit(Xc, y), Xc)
    assert fitted.named_estimators_["c"].classes_.tolist() == [0, 1, 2]


def test_predict_is_lazy_and_blockwise(client):
    X, y = _data("MultinomialNB", n=300)
    Xd = _blocks(X, rows=60)
    model = nbgpu.MultinomialNB().fit(Xd, y)
    ref = nbgpu.MultinomialNB().fit(X, y)
    for method in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba", "predict_risk"):
        out = getattr(model, method)(Xd)
        assert isinstance(out, da.Array), method
        assert out.chunks[0] == Xd.chunks[0], method
        np.testing.assert_allclose(out.compute(), getattr(ref, method)(X), rtol=1e-12, err_msg=method)
    assert model.score(Xd, da.from_array(y, chunks=60)) == pytest.approx(ref.score(X, y))
    w = np.random.default_rng(0).uniform(size=X.shape[0])
    assert model.score(Xd, y, sample_weight=w) == pytest.approx(ref.score(X, y, sample_weight=w))


def test_predict_and_score_with_an_empty_block():
    """A block of no rows (common after a boolean filter) made every predict method and
    score fail ("X is empty"), though fit skips such blocks."""
    X, y = _data("MultinomialNB", n=60)
    ref = nbgpu.MultinomialNB().fit(X, y)
    Xe = da.from_array(X, chunks=((30, 0, 30), X.shape[1]))
    ye = da.from_array(y, chunks=((30, 0, 30),))
    with __import__("dask").config.set(scheduler="threads"):
        model = nbgpu.MultinomialNB().fit(Xe, ye)
        for method in ("predict", "predict_proba", "predict_joint_log_proba"):
            np.testing.assert_allclose(getattr(model, method)(Xe).compute(), getattr(ref, method)(X), rtol=1e-12)
        assert model.score(Xe, ye) == pytest.approx(ref.score(X, y))


def test_weighted_score_after_a_boolean_filter():
    """Rows kept by a boolean mask have blocks of unknown size: a weighted score failed
    inside da.average ("Axis must be specified when shapes of a and weights differ")."""
    X, y = _data("MultinomialNB", n=60)
    w = np.random.default_rng(0).uniform(size=60)
    keep = X[:, 0] > 0
    model = nbgpu.MultinomialNB().fit(X, y)
    Xd, yd, wd, kd = (da.from_array(a, chunks=20) if a.ndim == 1 else _blocks(a, rows=20) for a in (X, y, w, keep))
    with __import__("dask").config.set(scheduler="threads"):
        got = model.score(Xd[kd], yd[kd], sample_weight=wd[kd])
    assert got == pytest.approx(model.score(X[keep], y[keep], sample_weight=w[keep]), rel=1e-12)


def test_classes_as_a_dask_array():
    """classes=<Dask array> failed: "got 3 entries but nan distinct labels" on a first
    partial_fit, an AttributeError ('__dlpack__') on a later one."""
    X, y = _data("MultinomialNB", n=60)
    classes = da.from_array(np.unique(y), chunks=2)
    ref = nbgpu.MultinomialNB().partial_fit(X, y, classes=np.unique(y))
    with __import__("dask").config.set(scheduler="threads"):
        on_dask = nbgpu.MultinomialNB().partial_fit(_blocks(X, rows=20), da.from_array(y, chunks=20), classes=classes)
        in_memory = nbgpu.MultinomialNB().partial_fit(X, y, classes=classes).partial_fit(X, y, classes=classes)
    np.testing.assert_array_equal(on_dask.classes_, ref.classes_)
    np.testing.assert_allclose(on_dask.feature_count_, ref.feature_count_)
    np.testing.assert_allclose(in_memory.feature_count_, 2 * ref.feature_count_)


@pytest.mark.parametrize(("labels", "match"), [
    ([None, "a"], r"`y` holds labels of the kinds \['NoneType', 'str'\]"),
    (["a", 1], r"`y` holds labels of the kinds \['int', 'str'\]"),
    ([0.0, np.nan], r"`y` contains NaN or infinity"),
])
def test_bad_dask_labels_are_named(labels, match):
    """Labels that do not sort failed with a TypeError from inside da.unique; NaN was
    blamed on `classes`, which the user had not given."""
    X, _ = _data("MultinomialNB", n=60)
    y = da.from_array(np.array(labels * 30, dtype=object if None in labels or "a" in labels else float), chunks=20)
    with __import__("dask").config.set(scheduler="threads"):
        for model in (nbgpu.MultinomialNB(), nbgpu.SemiSupervisedNB()):
            with pytest.raises(ValueError, match=match):
                model.fit(_blocks(X, rows=20), y)


def test_what_reads_its_data_in_memory_refuses_dask_arrays():
    """SmoothingSearchCV and chi2 failed inside (AttributeError 'device', a broadcast error)."""
    X, y = _data("MultinomialNB", n=60)
    Xd, yd = _blocks(X, rows=20), da.from_array(y, chunks=20)
    search = nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [0.1, 1.0]}, cv=3)
    with pytest.raises(TypeError, match=r"SmoothingSearchCV does not take Dask arrays \(`X` is one\)"):
        search.fit(Xd, y)
    with pytest.raises(TypeError, match=r"chi2 does not take Dask arrays \(`y` is one\)"):
        nbgpu.chi2(X, yd)


def test_partial_fit_with_classes_and_weights(client):
    X, y = _data("GaussianNB", n=300)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=X.shape[0])
    Xd, yd, wd = _blocks(X, rows=40), da.from_array(y, chunks=40), da.from_array(w, chunks=40)
    model = nbgpu.GaussianNB()
    model.partial_fit(Xd[:160], yd[:160], classes=[0, 1, 2], sample_weight=wd[:160])
    model.partial_fit(Xd[160:], yd[160:], sample_weight=wd[160:])
    _assert_same_model(model, nbgpu.GaussianNB().fit(X, y, sample_weight=w), X)


def test_string_labels_and_float32(client):
    X, y = _data("MultinomialNB")
    labels = np.array(["ham", "spam", "eggs"])[y]
    model = nbgpu.MultinomialNB().fit(_blocks(X.astype(np.float32)), da.from_array(labels, chunks=50))
    ref = nbgpu.MultinomialNB().fit(X.astype(np.float32), labels)
    assert model.classes_.tolist() == ["eggs", "ham", "spam"]
    assert model.feature_log_prob_.dtype == np.float32
    np.testing.assert_array_equal(model.predict(_blocks(X.astype(np.float32))).compute(), ref.predict(X))
    np.testing.assert_allclose(model.feature_count_, ref.feature_count_, rtol=0)


def test_semi_supervised_em(client):
    """SemiSupervisedNB's EM on the cluster (each iteration's model scattered
    to the workers) equals the in-memory EM; more in test_semi_supervised_dask.py."""
    X, y = _data("MultinomialNB")
    partial = np.where(np.arange(X.shape[0]) % 4 == 0, y, -1)
    ref = nbgpu.SemiSupervisedNB(max_iter=50, tol=1e-6).fit(X, partial)
    Xd = _blocks(X, rows=70, sparse=True)
    model = nbgpu.SemiSupervisedNB(max_iter=50, tol=1e-6).fit(Xd, da.from_array(partial, chunks=70))
    assert model.n_iter_ == ref.n_iter_ >= 2
    np.testing.assert_allclose(model.log_likelihood_, ref.log_likelihood_, rtol=1e-10)
    _assert_same_model(model.estimator_, ref.estimator_, X)
    np.testing.assert_array_equal(model.predict(Xd).compute(), ref.predict(X))


def test_bad_block_raises_and_leaves_model_unchanged(client):
    X, y = _data("MultinomialNB")
    model = nbgpu.MultinomialNB().fit(X, y)
    before = snapshot(model)
    bad = X.copy()
    bad[200, 1] = -1.0  # in the last block only
    with pytest.raises(ValueError, match="Negative values"):
        model.partial_fit(_blocks(bad), y)
    with pytest.raises(ValueError, match="not in the classes"):
        model.partial_fit(_blocks(X), np.where(y == 2, 7, y))
    with pytest.raises(ValueError, match="expecting 6 features"):
        model.partial_fit(_blocks(X[:, :4]), y)
    with pytest.raises(ValueError, match="`y` has 239 entries"):
        model.fit(_blocks(X), da.from_array(y[:-1], chunks=50))
    with pytest.raises(ValueError, match="requires y"):
        model.fit(_blocks(X), None)
    assert_snapshots_equal(before, snapshot(model))


def _die_once(block, flag):
    """Kill the worker process running this the first time (the flag file marks it)."""
    if block.shape[0] and not os.path.exists(flag):  # not on Dask's empty probe block
        with open(flag, "w"):
            pass
        os._exit(1)
    return block


def test_worker_dies_mid_fit(client, tmp_path):
    """The scheduler re-runs the lost tasks on a live worker: the model is still right."""
    X, y = _data("MultinomialNB", n=400)
    flag = str(tmp_path / "died")
    Xd = _blocks(X, rows=50)
    # Block 3's producer kills its worker once, while the other blocks are being fitted.
    parts = [b if i != 3 else b.map_blocks(_die_once, flag, meta=b._meta) for i, b in enumerate(Xd.blocks)]
    deadly = da.concatenate(parts, axis=0)
    model = nbgpu.MultinomialNB().fit(deadly, da.from_array(y, chunks=50))
    assert os.path.exists(flag), "the worker was not killed: the test tested nothing"
    _assert_same_model(model, nbgpu.MultinomialNB().fit(X, y), X)


def test_local_scheduler_without_cluster():
    """Without a distributed client Dask's local threads run the same graph."""
    X, y = _data("CategoricalNB")
    with __import__("dask").config.set(scheduler="threads"):
        model = nbgpu.CategoricalNB().fit(_blocks(X, rows=33), y)
    _assert_same_model(model, nbgpu.CategoricalNB().fit(X, y), X)


@every_dask_block
def test_blocks_of_every_backend(block_backend, dtype, name, sparse):
    """numpy or cupy blocks: fitted statistics and lazy outputs in the blocks' namespace."""
    X, y = _data(name)
    backend, X, Xd = dask_block_case(X, dtype, block_backend, sparse)
    with __import__("dask").config.set(scheduler="threads"):
        model = getattr(nbgpu, name)().fit(Xd, y)
        proba = model.predict_proba(Xd).compute()
    ref = getattr(nbgpu, name)().fit(backend.asarray(X), y)
    assert_namespace(proba, backend)
    assert proba.dtype == backend.asarray(X).dtype
    rtol = 1e-5 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(to_numpy(proba), to_numpy(ref.predict_proba(backend.asarray(X))), rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(to_numpy(model.class_count_), to_numpy(ref.class_count_), rtol=0)


def test_in_memory_X_with_dask_labels(client):
    """Labels and weights as Dask arrays beside an in-memory X are computed first."""
    X, y = _data("BernoulliNB")
    w = np.random.default_rng(2).uniform(size=X.shape[0])
    model = nbgpu.BernoulliNB().fit(X, da.from_array(y, chunks=50), sample_weight=da.from_array(w, chunks=50))
    _assert_same_model(model, nbgpu.BernoulliNB().fit(X, y, sample_weight=w), X)
    assert model.score(X, da.from_array(y, chunks=50)) == pytest.approx(model.score(X, y))


@pytest.mark.parametrize("merge_bytes", [1, 2**40], ids=["pairs", "eights"])
def test_deep_merge_trees(client, monkeypatch, merge_bytes):
    """Many blocks merge through several levels, in pairs or eight at a time: still one fit."""
    from nbgpu._interop import dask_blocks

    monkeypatch.setattr(dask_blocks, "MERGE_BYTES", merge_bytes)
    X, y = _data("GaussianNB", n=300)
    model = nbgpu.GaussianNB().fit(_blocks(X, rows=7), da.from_array(y, chunks=7))  # 43 blocks
    _assert_same_model(model, nbgpu.GaussianNB().fit(X, y), X)


def test_blocks_ship_statistics_only():
    """A block task returns the statistics a fit would keep, not a fitted model."""
    from nbgpu._interop import dask as _dask
    from nbgpu._interop import dask_blocks

    X, y = _data("MultinomialNB", n=60)
    stats = _dask._fit_block(nbgpu.MultinomialNB(alpha=0.5), X, y, None, np.arange(3))
    ref = nbgpu.MultinomialNB(alpha=0.5).partial_fit(X, y, classes=np.arange(3))._stats
    assert stats.keys() == ref.keys()
    for key in ref:
        np.testing.assert_array_equal(stats[key], ref[key])
    assert _dask._fit_block(nbgpu.MultinomialNB(), X[:0], y[:0], None, np.arange(3)) is None
    # Wide statistics are merged in pairs, small ones eight at a time.
    assert dask_blocks._split_every(20, 2**20) == 2
    assert dask_blocks._split_every(3, 6) == 8


@pytest.mark.parametrize("where", ["threads", "synchronous", "distributed"])
@pytest.mark.parametrize(
    ("name", "sparse"), [("MultinomialNB", False), ("MultinomialNB", True), ("GaussianNB", False)]
)
def test_lazy_results_are_the_model_at_the_call(request, name, sparse, where):
    """A lazy predict computed after a partial_fit or a refit of the model is the model of the
    call on every scheduler: the local ones read the live model (a later partial_fit adds into
    its running sums in place), distributed pickled it when the graph was sent."""
    import copy

    import dask

    X, y = _data(name, n=120)
    X1, y1 = _data(name, n=60, seed=1)
    X2, y2 = X[:, ::-1] * 7 + 3, (y + 1) % 3  # far from the first fit
    Xd = _blocks(X, rows=40, sparse=sparse)
    methods = ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba")
    scheduler = "threads" if where == "distributed" else where
    with dask.config.set(scheduler=scheduler) if where != "distributed" else _client_of(request):
        for update in ("partial_fit", "fit"):
            model = getattr(nbgpu, name)().fit(Xd, da.from_array(y, chunks=40))
            model.partial_fit(X1, y1)  # lazy parameters of statistics a later partial_fit adds into
            at_call = copy.deepcopy(model)
            expected = {method: getattr(at_call, method)(X) for method in methods}
            lazy = {method: getattr(model, method)(Xd) for method in methods}
            getattr(model, update)(X2, y2)
            assert not np.allclose(model.predict_proba(X), expected["predict_proba"])  # the update shows
            for method in methods:
                got = lazy[method].compute() if where == "distributed" else lazy[method].compute(scheduler=scheduler)
                np.testing.assert_allclose(got, expected[method], rtol=1e-9, atol=1e-12, err_msg=f"{update} {method}")
            if where == "distributed":
                assert 0 <= model.score(Xd, y) <= 1  # score builds its graph from the same frozen model


def _client_of(request):
    import contextlib

    request.getfixturevalue("client")
    return contextlib.nullcontext()
