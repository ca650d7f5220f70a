"""The console entry (``nbgpu``, ``python -m nbgpu``) exits without the garbage
collector's last sweep (``nbgpu.__main__.console``): its outputs must be whole,
its exit status the command's, and the exit handlers must run."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env

from nbgpu.__main__ import main

REPO = Path(__file__).resolve().parent.parent


def _corpus(path, n=400):
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            label = "ab"[i % 2]
            text = " ".join(words[(i * 7 + j * (1 + i % 2)) % 6] for j in range(5 + i % 9))
            f.write(json.dumps({"text": text, "label": label}) + "\n")


def _console(args, cwd, code="from nbgpu.__main__ import console; console()"):
    # Block-buffered standard streams, as in a pipe by default: what is not
    # flushed before the process ends is lost.
    env = subprocess_env({k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_output_through_a_pipe_is_whole(tmp_path):
    _corpus(tmp_path / "d.jsonl")
    assert main(["train", str(tmp_path / "d.jsonl"), "-o", str(tmp_path / "m.nbgpu"), "-q"]) == 0
    expected = io.StringIO()
    with contextlib.redirect_stdout(expected):
        assert main(["predict", str(tmp_path / "m.nbgpu"), str(tmp_path / "d.jsonl"), "-o", "-", "-q"]) == 0
    result = _console(["predict", "m.nbgpu", "d.jsonl", "-o", "-", "-q"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected.getvalue()
    assert len(result.stdout.splitlines()) >= 400


def test_status_and_error_line_are_the_commands(tmp_path):
    result = _console(["evaluate", "missing.nbgpu", "missing.jsonl", "-q"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().startswith("nbgpu evaluate: error:")
    usage = _console(["train"], tmp_path)
    assert usage.returncode == 2


def test_exit_handlers_run(tmp_path):
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "from nbgpu.__main__ import console\n"
        "console()\n"
    )
    result = _console(["--version"], tmp_path, code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "handler ran"
