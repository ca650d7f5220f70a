"""Parsing text in a forked child (``nbgpu/_app/parse_process.py``): the same
chunks as in a thread, errors and signals reported by the command, no child
left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env

from nbgpu._app.parse_process import ParseProcess

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the child process is forked on Linux only")

REPO = Path(__file__).resolve().parents[1]


def _forked(items, produce):
    # The test process may run threads (nbgpu's pool); produce here touches none of their locks.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ParseProcess(items, produce)


def _child_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_results_come_back_in_order_from_another_process():
    got = list(_forked(range(5), lambda index, item: (index, item * item, os.getpid())))
    assert [(i, v) for i, v, _ in got] == [(i, i * i) for i in range(5)]
    assert {pid for _, _, pid in got} != {os.getpid()}


def test_large_arrays_cross_the_pipe_whole():
    rng = np.random.default_rng(0)
    arrays = [rng.random(3_000_000) for _ in range(2)]
    got = list(_forked(range(2), lambda index, item: arrays[item]))
    for a, b in zip(got, arrays):
        np.testing.assert_array_equal(a, b)


def test_an_error_is_raised_where_it_happened():
    def produce(index, item):
        if item == 2:
            raise ValueError("t.jsonl line 7: not valid JSON")
        return item

    source = _forked(range(5), produce)
    seen = []
    with pytest.raises(ValueError, match="t.jsonl line 7: not valid JSON"):
        seen.extend(source)
    assert seen == [0, 1]


def test_an_error_that_cannot_be_pickled_keeps_its_message():
    class Odd(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a} and {b}")

    def produce(index, item):
        raise Odd("this", "that")

    with pytest.raises(ValueError, match="this and that"):
        list(_forked(range(1), produce))


def test_a_child_that_dies_is_reported():
    def produce(index, item):
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(RuntimeError, match="the process parsing the data was killed by signal 9"):
        list(_forked(range(1), produce))


def test_a_child_killed_within_a_chunk_is_reported_by_its_signal():
    """Killed while writing a chunk, the child leaves part of a pickle in the
    pipe: the command reports the signal, not the truncated pickle."""

    def produce(index, item):
        if index == 0:
            return np.zeros(1000)
        # A chunk larger than the pipe's buffer: the child blocks within it.
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGKILL)).start()
        return np.zeros(4_000_000)

    import threading

    source = _forked(range(2), produce)
    got = iter(source)
    next(got)
    time.sleep(0.5)  # the child is killed with part of the second chunk written
    with pytest.raises(RuntimeError, match="the process parsing the data was killed by signal 9"):
        next(got)


def test_a_child_ends_with_the_command(tmp_path):
    """A child whose command dies by SIGKILL (no clean-up runs) is ended by
    the kernel, not left parsing until its next write."""
    code = (
        "import os, sys, time\n"
        "from nbgpu._app.parse_process import ParseProcess\n"
        "source = ParseProcess(range(1), lambda i, item: time.sleep(60))\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(source._pid))\n"
        "os.kill(os.getpid(), 9)\n"
    )
    subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=subprocess_env(), timeout=60, check=False)
    pid = int((tmp_path / "pid").read_text())
    deadline = time.monotonic() + 10
    while _child_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _child_alive(pid)


def test_stopping_early_leaves_no_child():
    source = _forked(range(1000), lambda index, item: np.zeros(100_000))
    pid = source._pid
    for _ in source:
        break  # the consumer stops: the generator's close ends the child
    assert source._pid is None and not _child_alive(pid)


# The kernel may hand a process's SIGINT to any thread that does not block
# it (seen on the GPU machine: a CUDA driver thread); a read or a wait of the
# main thread is then not interrupted, only its Python handler is pending.
_SIGNAL_ELSEWHERE = """
import signal, sys, threading, time
from nbgpu._app.parse_process import ParseProcess
from nbgpu._interop.streaming import _Prefetcher
def forever(index, item):
    time.sleep(3600)
source = ParseProcess(iter([1]), forever) if sys.argv[1] == "child" else _Prefetcher(iter([1]), forever, 1)
def elsewhere():
    time.sleep(0.5)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
threading.Thread(target=elsewhere, daemon=True).start()
try:
    for _ in source:
        pass
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("where", ["child", "thread"])
def test_a_signal_given_to_another_thread_still_ends_the_wait(where):
    result = subprocess.run([sys.executable, "-c", _SIGNAL_ELSEWHERE, where], capture_output=True, text=True,
                            env=subprocess_env(), timeout=60, check=False)
    assert result.stdout.strip() == "interrupted", result.stderr[-2000:]


def _cli(*args, env=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "nbgpu", *map(str, args)], capture_output=True, text=True,
                          env=subprocess_env(**(env or {})), timeout=300, check=False, **kwargs)


@pytest.fixture
def corpus(tmp_path):
    rng = np.random.default_rng(3)
    words = np.array([f"w{i}" for i in range(300)])
    for name, n in (("train.jsonl", 600), ("test.jsonl", 150)):
        with open(tmp_path / name, "w") as f:
            for _ in range(n):
                label = int(rng.integers(3))
                text = " ".join(words[rng.integers(0, 100, 30) + 100 * label])
                f.write(json.dumps({"text": text, "label": f"c{label}"}) + "\n")
    return tmp_path


def test_train_and_evaluate_give_the_same_files_either_way(corpus):
    reports = []
    for switch in ("1", "0"):
        env = {"NBGPU_PARSE_PROCESS": switch}
        model = corpus / f"m{switch}.nbgpu"
        train = _cli("train", corpus / "train.jsonl", "-o", model, "--ngram-range", "1,2", "--chunk-mb", "0.01", "-q",
                     env=env)
        assert train.returncode == 0, train.stderr
        evaluate = _cli("evaluate", model, corpus / "test.jsonl", "--json", "-q", env=env)
        assert evaluate.returncode == 0, evaluate.stderr
        predict = _cli("predict", model, corpus / "test.jsonl", "--proba", env=env)
        assert predict.returncode == 0, predict.stderr
        reports.append((json.loads(evaluate.stdout), predict.stdout))
    assert reports[0] == reports[1]
    assert reports[0][0]["accuracy"] > 0.9
    import nbgpu

    a, b = nbgpu.load(corpus / "m1.nbgpu"), nbgpu.load(corpus / "m0.nbgpu")
    np.testing.assert_array_equal(a.feature_count_, b.feature_count_)


def test_a_bad_line_is_reported_by_the_command(corpus):
    path = corpus / "bad.jsonl"
    path.write_text((corpus / "train.jsonl").read_text() + '{"text": "cut short\n')
    result = _cli("train", path, "-o", corpus / "m.nbgpu", "--chunk-mb", "0.01", "-q")
    assert result.returncode == 1
    assert result.stderr.startswith(f"nbgpu train: error: {path} line 601: not valid JSON (Unterminated string")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and not (corpus / "m.nbgpu").exists()


@pytest.mark.parametrize(("signum", "status", "line"), [(signal.SIGINT, 130, "nbgpu: interrupted"),
                                                         (signal.SIGTERM, 143, "nbgpu: terminated")])
def test_a_signal_while_text_is_parsed_leaves_nothing_behind(corpus, signum, status, line):
    fifo = corpus / "slow.jsonl"
    os.mkfifo(fifo)
    (corpus / "out").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "nbgpu", "train", str(fifo), "-o", str(corpus / "out" / "m.nbgpu"),
                             "--chunk-mb", "0.001"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=subprocess_env())
    with open(fifo, "wb") as writer:
        writer.write((corpus / "train.jsonl").read_bytes())
        writer.flush()
        time.sleep(3)  # reading, parsing and fitting are under way; the file has not ended
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False).stdout.split()
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == line and "Traceback" not in err
    assert os.listdir(corpus / "out") == []
    assert children, "the text was not parsed in a child process"
    time.sleep(0.2)
    assert not any(_child_alive(int(pid)) for pid in children)
