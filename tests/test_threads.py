"""The BLAS thread limit of the CPU pool: one BLAS thread while the pool's
threads run kernels, BLAS's own setting again afterwards, also when several
threads of the caller score at the same time.
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import OpenBLASController, ThreadpoolController

import nbgpu
from _data import random_data
from nbgpu._array import blocks
from nbgpu._array.threads import blas_single_thread, parallel_map

# BLAS's own setting during these tests: not 1, so a limit left behind shows.
OWN_BLAS_THREADS = 3


@functools.cache
def _blas():
    return ThreadpoolController().select(user_api="blas")  # a scan of the loaded libraries: once


def blas_threads():
    """The thread counts of the BLAS libraries loaded in the process."""
    return {info["num_threads"] for info in _blas().info()}


def release_blas_control():
    """No thread controls a pthreads OpenBLAS any more (threadpoolctl 3.8
    ignores the limits other threads set while one does)."""
    release = getattr(OpenBLASController, "clear_controlling_thread", None)
    if release is not None:
        release(force=True)


def set_blas_threads(n):
    """Set BLAS to ``n`` threads as a user's standalone threadpoolctl call
    does: this thread then controls a pthreads OpenBLAS."""
    release_blas_control()
    _blas().limit(limits=n)


@pytest.fixture
def own_blas_setting():
    """BLAS at OWN_BLAS_THREADS for the test, nobody in control of it, and
    BLAS's setting back after the test."""
    if not _blas().lib_controllers:
        pytest.fail("threadpoolctl finds no BLAS library under numpy: the limit cannot be checked")
    before = _blas().info()
    set_blas_threads(OWN_BLAS_THREADS)
    release_blas_control()
    assert blas_threads() == {OWN_BLAS_THREADS}
    yield
    release_blas_control()
    _blas().limit(limits=before)
    release_blas_control()


@pytest.fixture
def many_blocks(monkeypatch):
    """Two pool threads and row blocks of a few rows: every call is a parallel section."""
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 4096)


def test_limit_in_force_inside_a_parallel_section(own_blas_setting, many_blocks):
    seen = parallel_map(lambda _: frozenset(blas_threads()), range(64))
    assert set(seen) == {frozenset({1})}
    assert blas_threads() == {OWN_BLAS_THREADS}


def test_no_limit_where_the_caller_says_no_blas_runs(own_blas_setting, many_blocks):
    """``blas=False`` (hashing text, inflating a file): BLAS keeps its own
    setting, and the results are the same."""
    seen = parallel_map(lambda i: (i, frozenset(blas_threads())), range(64), blas=False)
    assert seen == [(i, frozenset({OWN_BLAS_THREADS})) for i in range(64)]


@pytest.mark.fast_path("lazy_parameters")  # its reference derives the parameters after the fit
def test_a_text_train_imports_no_threadpoolctl(tmp_path):
    """Hashing and fitting text call no BLAS: a ``nbgpu train`` on it never
    imports threadpoolctl, nor scans the loaded libraries."""
    import json
    import subprocess
    import sys

    rows = [{"text": f"word{i % 7} other{i % 3} and more", "label": f"c{i % 2}"} for i in range(200)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    code = (
        "import sys; from nbgpu._app import cli\n"
        "try: cli.main(['train', 't.jsonl', '-o', 'm.nbgpu', '--model', 'complement', '-q'])\n"
        "except SystemExit: pass\n"
        "print('threadpoolctl' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"], out.stderr
    assert (tmp_path / "m.nbgpu").exists()


def test_limit_restored_when_a_kernel_raises(own_blas_setting, many_blocks):
    def kernel(i):
        if i == 5:
            raise KeyError("item five")
        return i

    with pytest.raises(KeyError, match="item five"):
        parallel_map(kernel, range(16))
    assert blas_threads() == {OWN_BLAS_THREADS}


def test_limit_counts_overlapping_users(own_blas_setting):
    """The first user to enter sets the limit, the last to leave restores it,
    whatever order they leave in."""
    first, second = blas_single_thread(), blas_single_thread()
    first.__enter__()
    second.__enter__()
    assert blas_threads() == {1}
    first.__exit__(None, None, None)  # the first leaves while the second is inside
    assert blas_threads() == {1}
    second.__exit__(None, None, None)
    assert blas_threads() == {OWN_BLAS_THREADS}


def _in_thread(fn):
    errors = []

    def run():
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 (reported by the caller)
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def test_last_to_leave_is_another_thread(own_blas_setting):
    """Thread A sets the limit, thread B enters, A leaves (and lives on), B
    leaves last and must restore BLAS although A set the limit."""
    a_inside, b_inside, a_left, finish = (threading.Event() for _ in range(4))
    inside = []

    def a():
        with blas_single_thread():
            a_inside.set()
            b_inside.wait(10)
        a_left.set()
        finish.wait(10)  # alive while B leaves

    def b():
        a_inside.wait(10)
        with blas_single_thread():
            inside.append(blas_threads())
            b_inside.set()
            a_left.wait(10)
        inside.append(blas_threads())

    (ta, ea), (tb, eb) = _in_thread(a), _in_thread(b)
    tb.join()
    finish.set()
    ta.join()
    assert not ea and not eb, ea + eb
    assert inside == [{1}, {OWN_BLAS_THREADS}]
    assert blas_threads() == {OWN_BLAS_THREADS}


def test_limit_in_force_when_another_thread_set_blas(own_blas_setting, many_blocks):
    """A parallel section run from a worker thread holds BLAS to one thread
    even when the user's main thread set BLAS itself (and so controls it)."""
    set_blas_threads(OWN_BLAS_THREADS)  # the main thread now controls OpenBLAS
    seen = []
    thread, errors = _in_thread(lambda: seen.extend(parallel_map(lambda _: frozenset(blas_threads()), range(16))))
    thread.join()
    assert not errors, errors
    assert set(seen) == {frozenset({1})}
    assert blas_threads() == {OWN_BLAS_THREADS}
    set_blas_threads(2)  # the user's thread still sets BLAS as it likes
    assert blas_threads() == {2}


def test_overlapping_predict_proba_calls_restore_blas(own_blas_setting, many_blocks, monkeypatch):
    """8 threads calling predict_proba at once, each a parallel section of its
    own: BLAS runs on one thread while any of them scores, and on its own
    number of threads again afterwards (a limit that restores what it saw on
    entry, or one that another thread cannot restore, leaves it at 1)."""
    X, y = random_data("GaussianNB", n=600, d=20, k=4, seed=70)
    model = nbgpu.GaussianNB().fit(X, y)
    expected = model.predict_proba(X)
    release_blas_control()  # the fit's thread does not keep control of BLAS
    seen = []
    score = nbgpu.GaussianNB._joint_log_likelihood

    def recording(self, *args, **kwargs):
        seen.append(frozenset(blas_threads()))
        return score(self, *args, **kwargs)

    monkeypatch.setattr(nbgpu.GaussianNB, "_joint_log_likelihood", recording)
    start = threading.Barrier(8)

    def caller():
        start.wait(10)
        return [model.predict_proba(X) for _ in range(10)]

    # A pool's threads live on after their calls (as a server's do): the
    # thread that set the limit may be alive, and another one the last to leave.
    with ThreadPoolExecutor(max_workers=8) as callers:
        results = [future.result() for future in [callers.submit(caller) for _ in range(8)]]
        assert blas_threads() == {OWN_BLAS_THREADS}
    for proba in (p for batch in results for p in batch):
        np.testing.assert_array_equal(proba, expected)
    assert len(seen) >= 8 * 10 * 2 and set(seen) == {frozenset({1})}
    assert blas_threads() == {OWN_BLAS_THREADS}
