"""Data files parsed in a background thread while the command fits or
scores (``readers.parsed_chunks``): errors and signals are reported by the
command, which leaves no output behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import fifo_writer, subprocess_env, wait_until_it_waits_for_input


# The kernel may hand a process's SIGINT to any thread that does not block
# it (seen on the GPU machine: a CUDA driver thread); a read or a wait of the
# main thread is then not interrupted, only its Python handler is pending.
# (The parser thread is that other thread here.)
_SIGNAL_ELSEWHERE = """
import signal, threading, time
from nbgpu._interop.streaming import _Prefetcher
signal.signal(signal.SIGINT, signal.default_int_handler)  # the default, whatever the suite inherited
def forever(index, item):
    time.sleep(3600)
source = _Prefetcher(iter([1]), forever, 1)
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


def _assert_interrupted(code):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=subprocess_env(), timeout=60, check=False)
    assert result.stdout.strip() == "interrupted", result.stderr[-2000:]


def test_a_signal_given_to_another_thread_still_ends_the_wait():
    _assert_interrupted(_SIGNAL_ELSEWHERE)


# Python ignores an exception raised in a weakref callback or __del__ (seen on
# the GPU machine: SIGINT while modules load, in importlib's lock cleanup).
_SIGNAL_IN_DEL = """
import signal, time
from nbgpu._app.signals import terminate_like_interrupt
class Spin:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)  # the handler runs in here
        for _ in range(10000):
            pass
with terminate_like_interrupt():
    try:
        Spin()
        time.sleep(30)
        print("not interrupted")
    except KeyboardInterrupt:
        print("interrupted")
"""


def test_a_signal_whose_exception_python_ignores_still_ends_the_command():
    _assert_interrupted(_SIGNAL_IN_DEL)


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
    try:
        with fifo_writer(fifo, proc) as writer:
            writer.write((corpus / "train.jsonl").read_bytes())
            writer.flush()
            wait_until_it_waits_for_input(proc, writer)  # it read, parsed and fitted what it got; no end yet
            proc.send_signal(signum)
            _out, err = proc.communicate(timeout=120)
    except BrokenPipeError:  # the command stopped reading: its own words say why
        proc.kill()
        _out, err = proc.communicate(timeout=120)
        pytest.fail(f"the command closed its input early (status {proc.returncode}): {err[-3000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=120)
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == line and "Traceback" not in err
    assert os.listdir(corpus / "out") == []


@pytest.mark.parametrize("model", [[], ["--model", "multinomial"]])
def test_the_device_is_chosen_before_any_parser_thread_starts(corpus, run, monkeypatch, model):
    # On the GPU machine cupy, imported while the parser thread ran, met
    # importlib's deadlock guard and came back partly initialised.
    import threading

    from nbgpu._app import cli

    threads_at_start = len(threading.enumerate())
    seen = []

    def device(kind):
        seen.append(len(threading.enumerate()))
        return None

    monkeypatch.setattr(cli, "_device", device)
    status, _, err = run("train", corpus / "train.jsonl", "-o", corpus / "m.nbgpu", "--chunk-mb", "0.01", "-q", *model)
    assert status == 0, err
    assert seen == [threads_at_start]


@pytest.mark.parametrize("flags", [["--alpha", "-1"], ["--model", "auto", "--alpha", "-1"]])
def test_a_bad_parameter_is_a_usage_error_before_the_device_is_looked_at(corpus, run, flags):
    status, _, err = run("train", corpus / "train.jsonl", "-o", corpus / "m.nbgpu", "--device", "gpu", *flags)
    assert status == 2 and "'alpha' parameter" in err, err


def _descriptors_of(path):
    """This process's file descriptors open on ``path`` (Linux)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                found.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            pass
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists open files through /proc")
@pytest.mark.parametrize("bad", [b"1,zz,3,x\n", b"1,2,x\n", b"1,-2,3,x\n"], ids=["parse", "width", "fit"])
def test_a_failed_train_closes_its_file_while_the_caller_keeps_the_error(tmp_path, bad, monkeypatch):
    # The error comes from the parser thread (parse, width) or the fit (fit), chunks after the first;
    # with the collector off, only a file closed when the command fails is closed at all.
    import gc

    from nbgpu._app.cli import main

    path = tmp_path / "data.csv"
    path.write_bytes(b"a,b,c,label\n" + b"1,2,3,x\n4,5,6,y\n" * 20 + bad + b"1,2,3,x\n" * 20)
    monkeypatch.setenv("NBGPU_DEBUG", "1")  # the exception itself, not the one-line handler
    gc.disable()
    try:
        with pytest.raises(ValueError, match="data.csv") as caught:
            main(["train", str(path), "--format", "csv", "--model", "multinomial", "-o",
                  str(tmp_path / "m.nbgpu"), "-q", "--chunk-mb", "0.00003"])
        deadline = time.monotonic() + 10  # the parser thread closes it as it stops
        while _descriptors_of(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert caught.value is not None and _descriptors_of(path) == []
    finally:
        gc.enable()
