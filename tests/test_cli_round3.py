"""Command line, issue 26: blank lines of JSON-lines text, closed standard
streams, and a JSON line holding one very long token."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env

from nbgpu._app.cli import main
from nbgpu._app.readers import _text_transform

REPO = Path(__file__).resolve().parents[1]


def _records(n=200):
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    texts = (" ".join(words[(i * 7 + j * (1 + i % 2)) % 6] for j in range(3 + i % 5)) for i in range(n))
    return [json.dumps({"text": text, "label": "ab"[i % 2]}) for i, text in enumerate(texts)]


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def records_model(tmp_path_factory):
    """``nbgpu train`` of ``_records()`` (the default model search, 3 s of CPU), made once for the
    tests that only read a good model; they never write to it."""
    folder = tmp_path_factory.mktemp("records_model")
    data = _write(folder / "d.jsonl", _records())
    assert main(["train", str(data), "-o", str(folder / "m.nbgpu"), "-q"]) == 0
    return folder / "m.nbgpu"


def _run(args, capsys):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _one_line(err, status, expected_status, match):
    lines = err.strip().splitlines()
    assert status == expected_status, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert match in lines[0], lines[0]


# --------------------------------------------------------------------------- #
# Blank lines: skipped, as JSON lines reads them; a chunk of them holds no rows
@pytest.mark.parametrize("extra", [[], ["--stop-words", "english"]])
def test_a_chunk_of_blank_lines_is_skipped(tmp_path, capsys, extra):
    records = _records()
    plain = _write(tmp_path / "plain.jsonl", records)
    blank = _write(tmp_path / "blank_first.jsonl", [""] * 3000 + records[:100] + ["  ", "\t"] * 500 + records[100:])
    assert _run(["train", plain, "-o", tmp_path / "m.nbgpu", "-q", *extra], capsys)[0] == 0
    status, _, err = _run(["train", blank, "-o", tmp_path / "b.nbgpu", "-q", "--chunk-mb", "0.001", *extra], capsys)
    assert status == 0, err
    expected = _run(["predict", tmp_path / "m.nbgpu", plain, "-q"], capsys)
    for model in ("m.nbgpu", "b.nbgpu"):
        status, out, err = _run(["predict", tmp_path / model, blank, "-q", "--chunk-mb", "0.001"], capsys)
        assert status == 0, err
        assert out == expected[1]
    status, out, err = _run(["evaluate", tmp_path / "b.nbgpu", blank, "-q", "--chunk-mb", "0.001"], capsys)
    assert status == 0, err
    assert "rows: 200" in out


@pytest.mark.parametrize("content", ["\n" * 50, "  \n\t\n" * 10, "\n" * 3000], ids=["blank", "spaces", "many"])
@pytest.mark.parametrize("chunk", [[], ["--chunk-mb", "0.001"]])
def test_a_file_of_blank_lines_holds_no_data_rows(tmp_path, capsys, records_model, content, chunk):
    data = tmp_path / "blank.jsonl"
    data.write_text(content)
    status, _, err = _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q", *chunk], capsys)
    _one_line(err, status, 1, f"{data} holds no data rows")
    assert not (tmp_path / "m.nbgpu").exists()
    for command in ("predict", "evaluate"):  # a good model (trained once for the module) on the blank file
        status, _, err = _run([command, records_model, data, "-q", *chunk], capsys)
        _one_line(err, status, 1, f"{data} holds no data rows")


def test_a_lone_surrogate_is_still_refused(tmp_path, capsys):
    data = tmp_path / "s.jsonl"
    data.write_text('{"text": "a \\ud800 b", "label": "a"}\n')
    status, _, err = _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q"], capsys)
    _one_line(err, status, 1, "line 1: a text holds a lone surrogate")


@pytest.mark.parametrize("where", ["label", "text"])
def test_a_number_of_too_many_digits_is_named_with_its_line(tmp_path, capsys, where):
    """Python refuses to convert an int of more than 4,300 digits (a ValueError
    that is not a JSON error): the file and line say where."""
    huge = "9" * 5000
    bad = f'{{"text": "a b", "label": {huge}}}' if where == "label" else f'{{"text": "a b", "label": 1, "n": {huge}}}'
    data = _write(tmp_path / "d.jsonl", [*_records(3), bad])
    status, _, err = _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q"], capsys)
    _one_line(err, status, 1, f"{data} line 4: a number with more digits than Python converts")


@pytest.mark.parametrize("params", [{}, {"stop_words": "english"}, {"n_features": 1000, "dtype": np.float32}])
def test_no_texts_give_no_rows(params):
    X = _text_transform({"alternate_sign": False, "norm": None, **params})([])
    assert X.shape == (0, params.get("n_features", 2**20))
    assert X.dtype == params.get("dtype", np.float64)


# --------------------------------------------------------------------------- #
# Closed standard streams (``>&-``, ``2>&-``): status 0, or one line and 1
def _console(args, cwd, redirect):
    env = subprocess_env()
    env.pop("NBGPU_DEBUG", None)
    command = ["sh", "-c", f'exec "$@" {redirect}', "sh", sys.executable, "-m", "nbgpu", *map(str, args)]
    return subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def corpus(tmp_path):
    _write(tmp_path / "d.jsonl", _records())
    return tmp_path


@pytest.mark.parametrize("redirect", [">&-", "2>&-", ">&- 2>&-"])
@pytest.mark.parametrize("quiet", [["-q"], []])
def test_a_command_with_nothing_to_write_there_succeeds(corpus, redirect, quiet):
    result = _console(["train", "d.jsonl", "-o", "m.nbgpu", *quiet], corpus, redirect)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert (corpus / "m.nbgpu").is_file()
    if redirect == ">&-" and not quiet:
        assert "trained MultinomialNB" in result.stderr
    if not quiet:
        return  # the predict below is the same command (-q) as the quiet case's, with the same redirect
    result = _console(["predict", "m.nbgpu", "d.jsonl", "-o", "p.txt", "-q"], corpus, redirect)
    assert result.returncode == 0, result.stderr
    assert len((corpus / "p.txt").read_text().splitlines()) == 200


@pytest.mark.parametrize(
    "args",
    [["predict", "m.nbgpu", "d.jsonl", "-q"], ["evaluate", "m.nbgpu", "d.jsonl", "-q"],
     ["predict", "m.nbgpu", "d.jsonl", "-o", "/dev/stdout", "-q"], ["train", "d.jsonl", "-o", "-", "-q"]],
)
def test_output_to_a_closed_standard_output_is_one_line(corpus, records_model, args):
    shutil.copy(records_model, corpus / "m.nbgpu")  # the model of d.jsonl, trained once for the module
    before = sorted(os.listdir(corpus))
    result = _console(args, corpus, ">&-")
    _one_line(result.stderr, result.returncode, 1, "standard output (-o ")
    assert "which is closed" in result.stderr
    assert sorted(os.listdir(corpus)) == before


def test_info_to_a_closed_standard_output_is_one_line(corpus):
    result = _console(["info"], corpus, ">&-")
    _one_line(result.stderr, result.returncode, 1, "nbgpu info: error: standard output is closed")


# --------------------------------------------------------------------------- #
# A JSON line holding one long token
def test_a_json_line_with_a_long_token(tmp_path, capsys):
    from sklearn.feature_extraction.text import HashingVectorizer as Reference

    records = _records()
    token = "x" * (2 * 2**20)
    data = _write(tmp_path / "long.jsonl", [*records[:50], json.dumps({"text": f"alpha {token} beta", "label": "a"})])
    assert _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q"], capsys)[0] == 0
    status, out, err = _run(["predict", tmp_path / "m.nbgpu", data, "-q", "--proba"], capsys)
    assert status == 0, err
    assert len(out.splitlines()) == 52
    # the model counted the token where scikit-learn hashes it
    import nbgpu

    model = nbgpu.load(tmp_path / "m.nbgpu")
    column = Reference(alternate_sign=False, norm=None).transform([token]).indices[0]
    counts = np.asarray(model.feature_count_)
    assert counts[list(model.classes_).index("a"), column] == 1



@pytest.mark.parametrize(("signalled", "status", "line"), [("Terminated", 143, "nbgpu: terminated"),
                                                         ("KeyboardInterrupt", 130, "nbgpu: interrupted")])
def test_a_signal_behind_another_error_ends_as_the_signal(monkeypatch, capsys, tmp_path, signalled, status, line):
    """A signal during an import can surface as that import's own error
    ("initialization failed"): the command ends as the signal, not as an error."""
    from nbgpu._app import cli, signals

    def interrupted(args):
        try:
            raise getattr(signals, signalled, None) or KeyboardInterrupt
        except BaseException as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(cli, "cmd_info", interrupted)
    assert main(["info", str(tmp_path / "m.nbgpu")]) == status
    assert capsys.readouterr().err.strip().splitlines() == [line]
