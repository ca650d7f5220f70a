"""Threads updating one model lose nothing (issue 34).

A data-loader pool or a service feeding batches to one model as they come:
four threads × 50 ``partial_fit`` calls counted 11,801 of 40,001 rows
(MultinomialNB) before updates held the model's lock. Each case here
compares the model the threads made with one fit on all their rows.
"""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu

_THREADS, _CALLS, _ROWS = 4, 50, 20


def _batches(seed, sparse=False):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(_CALLS):
        X = rng.integers(0, 4, size=(_ROWS, 6)).astype(float)
        y = rng.integers(0, 3, size=_ROWS)
        out.append((sp.csr_matrix(X) if sparse else X, y))
    return out


def _columnwise():
    return nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0, 1, 2]), ("m", nbgpu.MultinomialNB(), [3, 4, 5])])


_MODELS = {
    "MultinomialNB": nbgpu.MultinomialNB,
    "ComplementNB": nbgpu.ComplementNB,
    "BernoulliNB": nbgpu.BernoulliNB,
    "CategoricalNB": nbgpu.CategoricalNB,
    "PoissonNB": nbgpu.PoissonNB,
    "GaussianNB": nbgpu.GaussianNB,
    "NormalBayesClassifier": nbgpu.NormalBayesClassifier,
    "KernelDensityNB": nbgpu.KernelDensityNB,
    "ColumnwiseNB": _columnwise,
}


def _run(workers):
    errors = []

    def guarded(work):
        try:
            work()
        except Exception as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("name", list(_MODELS))
def test_threads_feeding_one_model_lose_no_batch(name, sparse):
    if sparse and name in ("GaussianNB", "NormalBayesClassifier", "KernelDensityNB", "ColumnwiseNB"):
        pytest.skip("dense input only")
    feeds = [_batches(seed, sparse) for seed in range(_THREADS)]
    model = _MODELS[name]()
    classes = np.arange(3)

    def feed(batches):
        def work():
            for X, y in batches:
                model.partial_fit(X, y, classes=classes)  # the first calls race to start the model
                model.predict(X[:2])

        return work

    _run([feed(b) for b in feeds])
    every = [b for f in feeds for b in f]
    X = sp.vstack([x for x, _ in every]) if sparse else np.concatenate([x for x, _ in every])
    y = np.concatenate([y for _, y in every])
    reference = _MODELS[name]().fit(X, y)
    assert float(np.sum(model.class_count_)) == _THREADS * _CALLS * _ROWS
    # Batches are added in another order than one fit's: equal up to rounding.
    np.testing.assert_allclose(model.predict_joint_log_proba(X), reference.predict_joint_log_proba(X), rtol=1e-9, atol=1e-9)


def test_predictions_meanwhile_see_one_model_or_the_next():
    # Every batch has the same rows: each prediction made while threads add them must be the
    # posteriors of the model of a whole number of batches, never of a half-added one.
    X, y = _batches(0)[0]
    model = nbgpu.MultinomialNB(alpha=0.5).fit(X, y)
    reference, whole = nbgpu.MultinomialNB(alpha=0.5).fit(X, y), []
    for _ in range(2 * _CALLS + 1):
        whole.append(reference.predict_proba(X))
        reference.partial_fit(X, y)
    seen = []

    def update():
        for _ in range(_CALLS):
            model.partial_fit(X, y)

    def predict():
        for _ in range(_CALLS):
            seen.append(model.predict_proba(X))

    _run([update, update, predict, predict])
    for proba in seen:
        assert any(np.allclose(proba, w, rtol=1e-12, atol=0) for w in whole)
    assert float(np.sum(model.class_count_)) == (2 * _CALLS + 1) * _ROWS


def test_a_refit_during_updates_leaves_a_whole_model():
    first, second = _batches(1), _batches(2)
    model = nbgpu.GaussianNB().partial_fit(*first[0], classes=np.arange(3))

    def update():
        for X, y in first[1:]:
            model.partial_fit(X, y)

    def refit():
        for X, y in second[:10]:
            model.fit(X, y)

    _run([update, refit])
    # Whatever the order, the model is the last fit plus whole batches after it.
    n = float(np.sum(model.class_count_))
    assert n % _ROWS == 0 and _ROWS <= n <= _CALLS * _ROWS
    assert np.isfinite(model.var_).all()
