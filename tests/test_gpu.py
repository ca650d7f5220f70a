"""The GPU checks: cupy and cupyx calls nbgpu relies on, every model against
numpy, streaming, Dask with cupy blocks and the synchronisations per call.

Marked ``gpu``: they run where the cupy backend runs (``ci/gpu.sh`` requests
it) and are skipped, saying why, elsewhere. The CPU stand-in
(``tests/test_device_paths.py``) checks the same paths' logic on every
machine; these check that cupy behaves as the stand-in says.
"""

from __future__ import annotations

import collections
import traceback

import numpy as np
import pytest
import scipy.sparse as sp
from _data import random_data
from conftest import active_backends, to_numpy

import nbgpu
from nbgpu._array import blocks
from nbgpu._array.devices import host_to_like
from nbgpu._array.sparse import device_compressed

pytestmark = pytest.mark.gpu

MODELS = ("MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB", "GaussianNB", "CategoricalNB", "NormalBayesClassifier")
DATA = {"PoissonNB": "MultinomialNB", "NormalBayesClassifier": "GaussianNB"}


@pytest.fixture(scope="module")
def gpu():
    if "cupy" not in active_backends():
        pytest.skip("needs cupy and a CUDA GPU")
    import cupy
    import cupyx
    import cupyx.scipy.sparse as csp

    return cupy, cupyx, csp


def _on_gpu(csp, cp, X, fmt):
    if fmt == "dense":
        return cp.asarray(X)
    return getattr(csp, f"{fmt}_matrix")(sp.csr_matrix(X).asformat(fmt))


# --------------------------------------------------------------------------- #
# cupy / cupyx calls
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_sparse_times_dense(gpu, dtype, fmt, order):
    cp, _, csp = gpu
    H = sp.random(50, 40, density=0.2, format=fmt, random_state=1, dtype=dtype)
    W = np.asarray(np.random.default_rng(1).standard_normal((40, 7)), dtype=dtype, order=order)
    got = getattr(csp, f"{fmt}_matrix")(H) @ cp.asarray(W)
    np.testing.assert_allclose(cp.asnumpy(got), H @ W, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_matrices_built_without_synchronising(gpu):
    """device_compressed: an empty matrix handed its arrays equals cupyx's own
    constructor, multiplies as canonical and reads nothing back."""
    cp, _, csp = gpu
    H = sp.random(60, 30, density=0.2, format="csr", random_state=2, dtype=np.float64)
    data, indices, indptr = (cp.asarray(a) for a in (H.data, H.indices.astype(np.int32), H.indptr.astype(np.int32)))
    W = cp.asfortranarray(cp.asarray(np.random.default_rng(2).standard_normal((30, 4))))
    built = {}

    def build():
        built["M"] = device_compressed(data, "csr", data, indices, indptr, H.shape, canonical=True)
        built["out"] = built["M"] @ W

    syncs = _count_syncs(build)
    assert sum(syncs.values()) == 0, f"expected no synchronisation, saw {dict(syncs)}"
    out = built["out"]
    np.testing.assert_allclose(cp.asnumpy(out), H @ cp.asnumpy(W), rtol=1e-12)
    assert out.flags.f_contiguous


def test_scatter_add_max_and_searchsorted(gpu):
    # cupy.add.at / maximum.at (cupyx.scatter_* warn since cupy 14).
    cp, _, _ = gpu
    out = cp.zeros(10, dtype=cp.float64)
    cp.add.at(out, cp.asarray([1, 1, 9], dtype=cp.int32), cp.asarray([0.5, 0.25, 2.0]))
    assert cp.asnumpy(out)[[1, 9]].tolist() == [0.75, 2.0]
    top = cp.zeros(4, dtype=cp.float32)
    cp.maximum.at(top, cp.asarray([2, 2, 0], dtype=cp.int32), cp.asarray([3.0, 5.0, 1.0], dtype=cp.float32))
    assert cp.asnumpy(top).tolist() == [1.0, 0.0, 5.0, 0.0]
    indptr = cp.asarray([0, 2, 2, 5], dtype=cp.int32)
    rows = cp.searchsorted(indptr[1:], cp.arange(5, dtype=cp.int32), side="right")
    assert cp.asnumpy(rows).tolist() == [0, 0, 2, 2, 2]


def test_sparse_reductions_and_slices(gpu):
    cp, _, csp = gpu
    H = sp.random(50, 40, density=0.2, format="csr", random_state=3)
    G = csp.csr_matrix(H)
    np.testing.assert_allclose(cp.asnumpy(G.max(axis=0).toarray()).ravel(), H.max(axis=0).toarray().ravel())
    assert G[5:17, ...].shape == (12, 40)
    assert csp.csc_matrix(H.tocsc())[5:17, ...].shape == (12, 40)


def test_special_and_linear_algebra(gpu):
    cp, _, _ = gpu
    import array_api_compat.cupy as xp
    from cupyx.scipy.special import gammaln

    assert gammaln(cp.ones(3, dtype=cp.float32) + 1).dtype == cp.float32
    A = cp.asarray(np.stack([np.eye(3) * 2, np.eye(3) * 3]))
    assert xp.linalg.cholesky(A).shape == (2, 3, 3)
    assert xp.linalg.solve(A, xp.broadcast_to(xp.eye(3, dtype=A.dtype), A.shape)).shape == (2, 3, 3)
    assert xp.linalg.eigvalsh(A).shape == (2, 3)


# --------------------------------------------------------------------------- #
# Inputs that only a GPU sees
# --------------------------------------------------------------------------- #
def test_integer_sparse_to_the_gpu(gpu):
    cp, _, _ = gpu
    rng = np.random.default_rng(4)
    X = sp.csr_matrix(rng.integers(0, 3, (40, 10)))
    y = rng.integers(0, 2, 40)
    assert host_to_like(X, cp.empty(0)).dtype == np.float64
    model = nbgpu.fit_stream(nbgpu.MultinomialNB(), [(X, y)], classes=[0, 1], device="gpu")
    np.testing.assert_allclose(to_numpy(model.feature_count_), nbgpu.MultinomialNB().fit(X, y).feature_count_)
    labels = np.array(["neg", "pos"])[y]
    model = nbgpu.fit_stream(nbgpu.MultinomialNB(), [(X.astype(float), labels)], classes=["neg", "pos"], device="gpu")
    assert model.predict(cp.asarray(X.toarray(), dtype=cp.float64)).tolist()[:3] == model.predict(X.toarray()).tolist()[:3]


def test_dask_with_cupy_blocks(gpu):
    cp, _, _ = gpu
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, y = random_data("MultinomialNB", n=120, d=5, seed=5)
    with dask.config.set(scheduler="synchronous"):
        blocks_ = da.from_array(cp.asarray(X), chunks=(40, 5), asarray=False)
        model = nbgpu.MultinomialNB().fit(blocks_, y)
        assert type(model.predict(blocks_).compute()).__module__.startswith("cupy")
        assert model.score(blocks_, y) == pytest.approx(nbgpu.MultinomialNB().fit(X, y).score(X, y))


# --------------------------------------------------------------------------- #
# Every model against numpy
# --------------------------------------------------------------------------- #
def _cases():
    for name in MODELS:
        for fmt in ("dense", "csr", "csc"):
            if name != "NormalBayesClassifier" or fmt == "dense":
                yield name, fmt


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "fmt"), list(_cases()))
def test_model_on_gpu_equals_numpy(gpu, name, fmt, dtype):
    cp, _, csp = gpu
    X, y = random_data(DATA.get(name, name), n=300, d=8, seed=6)
    X = X.astype(dtype)
    w = np.random.default_rng(6).uniform(0, 2, X.shape[0])
    w[:10] = 0.0
    host = X if fmt == "dense" else sp.csr_matrix(X).asformat(fmt)
    ref = getattr(nbgpu, name)().fit(host, y, sample_weight=w)
    model = getattr(nbgpu, name)().fit(_on_gpu(csp, cp, X, fmt), cp.asarray(y), sample_weight=cp.asarray(w))
    half = getattr(nbgpu, name)().partial_fit(_on_gpu(csp, cp, X[:150], fmt), y[:150], classes=[0, 1, 2], sample_weight=w[:150])
    half.partial_fit(_on_gpu(csp, cp, X[150:], fmt), y[150:], sample_weight=w[150:])
    tol = {"rtol": 2e-4, "atol": 2e-5} if dtype == np.float32 else {"rtol": 1e-9, "atol": 1e-12}
    for m in (model, half):
        np.testing.assert_allclose(to_numpy(m.predict_proba(_on_gpu(csp, cp, X, fmt))), ref.predict_proba(host), **tol)
        np.testing.assert_array_equal(to_numpy(m.predict(_on_gpu(csp, cp, X, fmt))), ref.predict(host))


def test_fit_stream_on_gpu_equals_fit(gpu):
    rng = np.random.default_rng(7)
    X = sp.random(3000, 500, density=0.05, format="csr", random_state=7, dtype=np.float32)
    X.data = np.ceil(X.data * 5)
    y = rng.integers(0, 4, 3000)
    chunks = [(X[i : i + 500], y[i : i + 500]) for i in range(0, 3000, 500)]
    for model in (nbgpu.MultinomialNB(), nbgpu.GaussianNB()):
        got = nbgpu.fit_stream(model, iter(chunks), classes=np.arange(4), device="gpu", prefetch=2)
        ref = type(model)().fit(X, y)
        name = "feature_count_" if hasattr(ref, "feature_count_") else "theta_"
        np.testing.assert_allclose(to_numpy(getattr(got, name)), getattr(ref, name), rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------- #
# Synchronisations per call (cupy's own sync-detection hook)
# --------------------------------------------------------------------------- #
def _count_syncs(fn):
    """Synchronisations while ``fn()`` runs, by nbgpu source line.

    Counted at the hook cupy calls where it reads back (``ndarray.get``, which
    ``asnumpy``, ``item``, ``float`` and the like go through) and at
    ``Device.synchronize``: ``cupyx.allow_synchronize``, the public face of
    that hook, warns on every use since cupy 10 (which the suite makes an
    error), and cupy has no supported replacement. The hook misses
    synchronisations outside cupy; the CPU stand-in counts the same calls on
    every machine (tests/test_device_paths.py)."""
    try:
        from cupy._core import syncdetect
    except ImportError:
        syncdetect = None
    if not hasattr(syncdetect, "_declare_synchronize"):
        pytest.skip("this cupy has no sync-detection hook (cupy._core.syncdetect._declare_synchronize) to count with")
    counts = collections.Counter()
    original = syncdetect._declare_synchronize

    def counting():
        frames = [f for f in traceback.extract_stack()[:-1] if "/nbgpu/" in f.filename]
        counts[f"{frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else "outside"] += 1
        original()

    syncdetect._declare_synchronize = counting
    try:
        fn()
    finally:
        syncdetect._declare_synchronize = original
    return counts


@pytest.mark.parametrize(("name", "fmt"), list(_cases()))
def test_synchronisations_do_not_grow_with_row_blocks(gpu, monkeypatch, name, fmt):
    cp, _, csp = gpu
    X, y = random_data(DATA.get(name, name), n=2000, d=8, seed=8)
    totals = []
    monkeypatch.setattr(blocks, "DEVICE_BLOCK_FACTOR", 1)  # the budgets below are the device's
    for budget in (blocks.BLOCK_BYTES, 16384, 4096):
        monkeypatch.setattr(blocks, "BLOCK_BYTES", budget)
        model = getattr(nbgpu, name)()
        fit = _count_syncs(lambda model=model: model.fit(_on_gpu(csp, cp, X, fmt), cp.asarray(y)))
        predict = _count_syncs(lambda model=model: model.predict_proba(_on_gpu(csp, cp, X, fmt)))
        totals.append((sum(fit.values()), sum(predict.values()), fit, predict))
    assert totals[1][:2] == totals[2][:2], totals
    # Cutting a device matrix into row blocks reads its indptr once; one block reads nothing.
    assert totals[0][0] == totals[1][0] and totals[0][1] <= totals[1][1] <= totals[0][1] + 1, totals
    assert max(totals[2][:2]) <= 12, totals
