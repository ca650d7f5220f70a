"""Scoring in row blocks on all cores: each block checks its own values, so a
bad value anywhere (here: in the last block) is still a clear error; and the
thread pool behind it keeps order, errors and nesting right.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import warnings

import numpy as np
import pytest

import nbgpu
from _data import MODELS, PREDICT_METHODS, ours, random_data
from nbgpu._array import blocks, threads

N_ROWS = 3000


@pytest.fixture
def many_blocks(monkeypatch):
    """Two threads and scoring blocks of a few rows: the last row is in the last block."""
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 4096)


# The value that breaks each model's contract, and the words of its error.
BAD_VALUES = [
    (np.nan, "NaN"),
    (np.inf, "infinity"),
    (-np.inf, "infinity"),
]
MODEL_BAD_VALUES = {
    "MultinomialNB": [(-1.0, "Negative values")],
    "ComplementNB": [(-1.0, "Negative values")],
    "CategoricalNB": [(-1.0, "Negative values"), (1.5, "whole numbers")],
}


@pytest.mark.parametrize("method", ("predict", *PREDICT_METHODS))
@pytest.mark.parametrize("name", MODELS)
def test_a_bad_value_in_the_last_block_is_an_error(many_blocks, name, method):
    X, y = random_data(name, n=N_ROWS, d=5, seed=3)
    model = ours(name).fit(X, y)
    before = {key: np.copy(value) for key, value in vars(model).items() if isinstance(value, np.ndarray)}
    for value, words in BAD_VALUES + MODEL_BAD_VALUES.get(name, []):
        Xb = X.copy()
        Xb[-1, 2] = value
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy warning on the way to the error
            with pytest.raises(ValueError, match=words):
                getattr(model, method)(Xb)
    for key, value in before.items():  # a failed call changes nothing
        np.testing.assert_array_equal(getattr(model, key), value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gaussian_nan_is_an_error_even_beside_a_zero_prior_class(many_blocks, dtype):
    """A zero-prior class scores -inf legitimately; a NaN or infinity in X must
    still be told apart from it."""
    X, y = random_data("GaussianNB", n=N_ROWS, d=5, seed=4)
    X = X.astype(dtype)
    model = nbgpu.GaussianNB(priors=[0.0, 0.5, 0.5]).fit(X, y)
    assert np.all(np.isneginf(model.predict_joint_log_proba(X)[:, 0]))
    for value, words in BAD_VALUES:
        Xb = X.copy()
        Xb[N_ROWS // 2, 0] = value
        with pytest.raises(ValueError, match=words):
            model.predict(Xb)


def test_gaussian_overflowing_scores_warn_instead_of_failing(many_blocks):
    """A finite float32 value whose square overflows is not bad input: the
    prediction goes on, and the warning names the cause."""
    X, y = random_data("GaussianNB", n=N_ROWS, d=5, seed=5)
    X = X.astype(np.float32)
    model = nbgpu.GaussianNB().fit(X, y)
    Xb = X.copy()
    Xb[-1, 1] = 1e30
    with pytest.warns(RuntimeWarning, match="too large for float32"):
        jll = model.predict_joint_log_proba(Xb)
    assert np.all(np.isfinite(jll[:-1]))
    assert not np.any(np.isfinite(jll[-1]))
    np.testing.assert_array_equal(jll[:-1], model.predict_joint_log_proba(X[:-1]))


@pytest.mark.parametrize("name", MODELS)
def test_scores_do_not_depend_on_the_blocks(monkeypatch, name):
    X, y = random_data(name, n=N_ROWS, d=5, seed=6)
    model = ours(name).fit(X, y)
    monkeypatch.setenv("NBGPU_NUM_THREADS", "1")
    whole = model.predict_joint_log_proba(X)
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 4096)
    np.testing.assert_allclose(model.predict_joint_log_proba(X), whole, rtol=1e-12)
    np.testing.assert_array_equal(model.predict(X), np.asarray(model.classes_)[np.argmax(whole, axis=1)])


@pytest.mark.parametrize("name", MODELS)
def test_wide_sparse_rows_are_blocked_by_their_stored_values(monkeypatch, name):
    # 2**17 columns, 8 stored values a row: sized by the width, a block held
    # about 2 rows (CategoricalNB/GaussianNB: 1,000 blocks here, minutes at 50k rows).
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    n, d = 2000, 2**17
    X = sp.random(n, d, density=8 / d, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.ceil(X.data * 3)
    y = rng.integers(0, 3, n)
    model = ours(name).fit(X, y)
    calls = []
    score = type(model)._joint_log_likelihood
    monkeypatch.setattr(type(model), "_joint_log_likelihood", lambda self, Xb, **kw: calls.append(Xb.shape[0]) or
                        score(self, Xb, **kw))
    model.predict_joint_log_proba(X)
    assert len(calls) <= 16, f"{len(calls)} row blocks for {n} rows of {X.nnz // n} stored values"


# --------------------------------------------------------------------------- #
# The thread pool
# --------------------------------------------------------------------------- #
def test_parallel_map_keeps_order_and_uses_the_caller(monkeypatch):
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    seen = set()
    # Each thread's first item waits for the other thread's: a pool thread
    # cannot take every item (as it may on a busy machine) unless the caller
    # takes none, and then the wait times out.
    both = threading.Barrier(2, timeout=30)
    first = threading.local()

    def work(i):
        if not getattr(first, "taken", False):
            first.taken = True
            both.wait()
        seen.add(threading.current_thread().name)
        return i * i

    assert threads.parallel_map(work, range(200)) == [i * i for i in range(200)]
    assert threading.current_thread().name in seen  # the caller took items too


def test_parallel_map_raises_the_error_of_an_item_after_all_threads_stop(monkeypatch):
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    running = []
    lock = threading.Lock()

    def work(i):
        with lock:
            running.append(i)
        if i == 5:
            raise KeyError("item five")
        return i

    with pytest.raises(KeyError, match="item five"):
        threads.parallel_map(work, range(50))
    count = len(running)
    assert count < 50  # the threads stopped taking items
    assert threads.parallel_map(lambda i: i, range(10)) == list(range(10))  # the pool still works
    assert len(running) == count  # nothing of the failed call ran on afterwards


def test_parallel_map_inside_an_item_runs_serially(monkeypatch):
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")

    def outer(i):
        me = threading.current_thread().name
        inner = threads.parallel_map(lambda j: (j, threading.current_thread().name), range(5))
        assert all(name == me for _, name in inner)
        return [j for j, _ in inner]

    assert threads.parallel_map(outer, range(6)) == [list(range(5))] * 6


@pytest.mark.parametrize("priors", [None, [0.0, 0.5, 0.5]], ids=["fitted_priors", "zero_prior"])
def test_gaussian_bad_values_are_errors_on_every_backend(backend, priors):
    """Off the host's thread pool the scores of all blocks are checked with
    one synchronisation; the error is the same."""
    X, y = random_data("GaussianNB", n=200, d=4, seed=7)
    model = nbgpu.GaussianNB(priors=priors).fit(backend.asarray(X), backend.asarray(y))
    for value, words in BAD_VALUES:
        Xb = X.copy()
        Xb[150, 3] = value
        with pytest.raises(ValueError, match=words):
            model.predict_proba(backend.asarray(Xb))


def _map_in_child(queue):
    queue.put(threads.parallel_map(lambda i: 2 * i, range(50)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_parallel_map_works_in_a_forked_child(monkeypatch):
    """A child forked after the pool started has none of its threads: it must
    not wait for them (multiprocessing's fork start method)."""
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    assert threads.parallel_map(lambda i: i, range(10)) == list(range(10))  # the pool is running
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_map_in_child, args=(queue,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python >= 3.12 warns of fork with threads
        child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("parallel_map hung in a forked child")
    assert child.exitcode == 0
    assert queue.get(timeout=5) == [2 * i for i in range(50)]
