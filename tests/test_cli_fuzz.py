"""Fuzzing the command line's readers and training with mutated data files.

Small valid svmlight, CSV, JSON-lines and .npz files are mutated (bytes
replaced, inserted, deleted, lines repeated; array contents and shapes
changed) and ``nbgpu train`` runs on them in-process with ``NBGPU_DEBUG=1``,
so that an exception reaches the test instead of the one-line handler. It
must succeed or raise a ValueError whose message is one line and names the
file (or an argument); any other exception type, or a warning, fails. A fixed
budget of examples, derandomized: the same cases on every run.
"""

from __future__ import annotations

import io
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbgpu._app.cli import main

FUZZ = settings(max_examples=40, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SEEDS = {
    "svmlight": b"1 0:1 3:2.5\n0 1:4 2:1\n2 0:3 3:1 5:2\n1 2:2\n0 4:1 5:1\n",
    "csv": b"a,b,c,label\n1,2,3,x\n4,5,6,y\n0.5,2,1,x\n3,3,3,z\n",
    "jsonl": b'{"text": "red ball goal", "label": "sport"}\n{"text": "chip code", "label": "tech"}\n'
             b'{"text": "goal team", "label": "sport"}\n{"text": "gpu data", "label": 3}\n',
}
OPTIONS = {
    "svmlight": ["--n-features", "64", "--chunk-mb", "0.00003"],  # 31-byte chunks: several per file
    "csv": ["--model", "gaussian", "--chunk-mb", "0.00003"],
    "jsonl": ["--hash-features", "64", "--chunk-mb", "0.00003"],
    "npz": [],
}
ALPHABET = list(b"0123456789:., -+e\n\"{}[]#") + [0xFF, 0x00, ord("n"), ord("a"), ord("i"), ord("f")]

mutation = st.one_of(
    st.tuples(st.just("replace"), st.integers(0, 200), st.sampled_from(ALPHABET)),
    st.tuples(st.just("insert"), st.integers(0, 200), st.binary(min_size=1, max_size=6)
              | st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=6).map(bytes)),
    st.tuples(st.just("delete"), st.integers(0, 200), st.integers(1, 8)),
    st.tuples(st.just("repeat_line"), st.integers(0, 20), st.integers(1, 50)),
)


def _mutate(data, mutations):
    data = bytearray(data)
    for kind, at, arg in mutations:
        if kind == "replace" and data:
            data[at % len(data)] = arg
        elif kind == "insert":
            data[at % (len(data) + 1) : at % (len(data) + 1)] = arg
        elif kind == "delete" and data:
            del data[at % len(data) : at % len(data) + arg]
        elif kind == "repeat_line":
            lines = bytes(data).splitlines(keepends=True)
            if lines:
                line = lines[at % len(lines)]
                data = bytearray(b"".join(lines) + line * arg)
    return bytes(data)


def _train(path, fmt, options):
    """``nbgpu train`` in-process; None on success, else the exception raised."""
    out = Path(path).with_name("model.nbgpu")
    old = os.environ.get("NBGPU_DEBUG")
    os.environ["NBGPU_DEBUG"] = "1"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            status = main(["train", str(path), "--format", fmt, "-o", str(out), "-q", *options])
    except Exception as exc:  # noqa: BLE001  (judged by the caller)
        return exc
    finally:
        if old is None:
            os.environ.pop("NBGPU_DEBUG", None)
        else:
            os.environ["NBGPU_DEBUG"] = old
    assert status == 0
    assert out.stat().st_size > 0
    return None


def _judge(exc, path):
    if exc is None:
        return
    assert type(exc) is ValueError or isinstance(exc, ValueError) and type(exc).__name__ == "UsageError", (
        f"{type(exc).__name__}: {exc}"
    )
    text = str(exc)
    assert Path(path).name in text or "`" in text, text  # names the file, or the argument
    assert "Traceback" not in text and "allow_pickle" not in text


@pytest.mark.parametrize("fmt", ["svmlight", "csv", "jsonl"])
@FUZZ
@given(mutations=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_text_files(fmt, mutations):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"data.{fmt}"
        path.write_bytes(_mutate(SEEDS[fmt], mutations))
        _judge(_train(path, fmt, OPTIONS[fmt]), path)
        assert set(os.listdir(d)) <= {path.name, "model.nbgpu"}  # no temporary file left


npz_arrays = st.fixed_dictionaries({
    "n_rows": st.integers(0, 6),
    "n_cols": st.integers(0, 5),
    "indices": st.lists(st.integers(-3, 2**33), max_size=8),
    "indptr": st.lists(st.integers(-2, 10), max_size=8),
    "data": st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=8),
    "y": st.one_of(st.lists(st.integers(-2, 3), max_size=7), st.lists(st.text(max_size=2), max_size=7),
                   st.lists(st.floats(allow_nan=True, width=32), max_size=7)),
    "format": st.sampled_from(["csr", "csc", "coo", "bsr", ""]),
    "dense": st.booleans(),
    "corrupt": st.one_of(st.none(), st.tuples(st.integers(0, 2000), st.integers(0, 255))),
})


@FUZZ
@given(spec=npz_arrays)
def test_mutated_npz_files(spec):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "data.npz"
        y = np.array(spec["y"]) if spec["y"] else np.zeros(0)
        if spec["dense"]:
            values = np.resize(np.array(spec["data"] or [1.0]), spec["n_rows"] * spec["n_cols"])
            arrays = {"X": values.reshape(spec["n_rows"], spec["n_cols"]), "y": y}
        else:
            arrays = {"data": np.array(spec["data"], dtype=np.float64), "indices": np.array(spec["indices"]),
                      "indptr": np.array(spec["indptr"]), "shape": np.array([spec["n_rows"], spec["n_cols"]]),
                      "format": np.array(spec["format"]), "y": y}
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        raw = bytearray(buf.getvalue())
        if spec["corrupt"] is not None:
            at, value = spec["corrupt"]
            raw[at % len(raw)] = value
        path.write_bytes(bytes(raw))
        _judge(_train(path, "npz", OPTIONS["npz"]), path)
        assert set(os.listdir(d)) <= {path.name, "model.nbgpu"}


def test_the_judge_can_fail(tmp_path):
    with pytest.raises(AssertionError):
        _judge(TypeError("boom"), tmp_path / "x.svm")
    with pytest.raises(AssertionError):
        _judge(ValueError("something broke"), tmp_path / "x.svm")  # names neither the file nor an argument
    _judge(ValueError(f"{tmp_path / 'x.svm'} line 2: not valid"), tmp_path / "x.svm")
