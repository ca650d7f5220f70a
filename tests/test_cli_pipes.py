"""Pipes: ``-`` is standard input for every command's data, read with ``--format``, the model's stored
reader (predict, evaluate) or the first bytes; gzip on a pipe; files told by content when their name
says nothing. Each command reading standard input runs for real in a subprocess with the data there;
the others (models trained from files, what they predict from files) run in this process."""

import gzip
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import subprocess_env

WORDS = {"fruit": "apple banana cherry grape melon", "vehicle": "car truck bus train tram",
         "colour": "red green blue yellow violet"}


def nbgpu(*args, cwd, data=None):
    env = subprocess_env()
    env.pop("NBGPU_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "nbgpu", *map(str, args)], cwd=cwd, env=env, input=data,
                          capture_output=True, timeout=300)


def ok(*args, cwd, data=None):
    result = nbgpu(*args, cwd=cwd, data=data)
    assert result.returncode == 0, result.stderr.decode()
    return result


def in_process(run, *args):
    """A command that reads no standard input, by nbgpu's main function in this process
    (conftest's ``run``, absolute paths): its stdout as bytes, as ``ok``'s."""
    status, out, err = run(*args)
    assert status == 0, err
    return out.encode()


def trained(*args):
    """``nbgpu train ARGS -q`` in this process, for a module's fixtures (it writes nothing)."""
    from nbgpu._app.cli import main

    assert main(["train", *map(str, args), "-q"]) == 0


def one_line_error(result, *expected):
    err = result.stderr.decode().strip().splitlines()
    assert result.returncode == 1 and len(err) == 1, err
    for text in expected:
        assert text in err[0], err[0]
    return err[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipes")
    rng = np.random.default_rng(0)
    lines, labels = [], []
    for _ in range(300):
        label = str(rng.choice(sorted(WORDS)))
        text = " ".join(rng.choice(WORDS[label].split(), size=6))
        lines.append(json.dumps({"text": text, "label": label}) + "\n")
        labels.append(label)
    jsonl = "".join(lines).encode()
    (d / "train.jsonl").write_bytes(jsonl)
    X = rng.normal(size=(200, 3)) + np.repeat(np.arange(2), 100)[:, None] * 3
    y = np.repeat(np.arange(2), 100)
    csv = "a,b,c,label\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{t}\n" for r, t in zip(X, y))
    (d / "train.csv").write_text(csv)
    return {"dir": d, "jsonl": jsonl, "gz": gzip.compress(jsonl), "csv": csv.encode(), "labels": labels}


@pytest.fixture(scope="module")
def text_model(files):
    d = files["dir"]
    trained(d / "train.jsonl", "-o", d / "text.nbgpu", "--model", "multinomial")
    return d / "text.nbgpu"


@pytest.fixture(scope="module")
def from_the_file(files, text_model):
    """``predict --proba`` of the models trained from the files (text: the module's text model;
    csv: one trained here), by table kind: the same commands for every way of piping them."""
    d = files["dir"]
    trained(d / "train.csv", "-o", d / "csv.nbgpu", "--model", "gaussian")
    return {"jsonl": ok("predict", text_model, d / "train.jsonl", "--proba", cwd=d).stdout,
            "csv": ok("predict", d / "csv.nbgpu", d / "train.csv", "--proba", cwd=d).stdout}


@pytest.mark.parametrize("kind, fmt", [("jsonl", "jsonl"), ("jsonl", None), ("csv", "csv"), ("csv", None),
                                       ("gz", "jsonl"), ("gz", None)])
def test_train_from_standard_input_as_from_the_file(files, from_the_file, tmp_path, run, kind, fmt):
    table = "csv" if kind == "csv" else "jsonl"
    flags = ["--model", "gaussian"] if kind == "csv" else ["--model", "multinomial"]
    given = [] if fmt is None else ["--format", fmt]
    ok("train", "-", "-o", tmp_path / "piped.nbgpu", *given, *flags, "-q", cwd=tmp_path, data=files[kind])
    piped = ok("predict", tmp_path / "piped.nbgpu", "-", "--proba", cwd=tmp_path, data=files[table]).stdout
    assert piped == from_the_file[table]
    # What the model file says (no standard input here: in-process).
    status, info, err = run("info", tmp_path / "piped.nbgpu")
    assert status == 0, err
    assert f"'format': '{table}'" in info


@pytest.mark.parametrize("data", ["-", "/dev/stdin"])
@pytest.mark.parametrize("fmt", [None, "jsonl"])
def test_predict_and_evaluate_read_with_the_model_s_reader(files, text_model, data, fmt):
    d, given = files["dir"], [] if fmt is None else ["--format", fmt]
    head = b"".join(files["jsonl"].splitlines(keepends=True)[:10])
    predicted = ok("predict", text_model, data, *given, cwd=d, data=head).stdout.decode().split()
    assert predicted == files["labels"][:10]
    report = ok("evaluate", text_model, data, *given, cwd=d, data=files["gz"]).stdout.decode()
    assert "rows: 300" in report and "accuracy: 1.0000" in report


def test_files_without_an_extension_are_told_by_content(files, tmp_path, run):
    # Files, not pipes: in this process.
    d = files["dir"]
    (tmp_path / "texts").write_bytes(files["jsonl"])
    (tmp_path / "texts_gz").write_bytes(files["gz"])
    (tmp_path / "table").write_bytes(files["csv"])
    in_process(run, "train", tmp_path / "texts", "-o", tmp_path / "t.nbgpu", "--model", "multinomial", "-q")
    in_process(run, "train", tmp_path / "texts_gz", "-o", tmp_path / "g.nbgpu", "--model", "multinomial", "-q")
    in_process(run, "train", tmp_path / "table", "-o", tmp_path / "c.nbgpu", "--model", "gaussian", "-q")
    assert b"rows: 300" in in_process(run, "evaluate", tmp_path / "g.nbgpu", tmp_path / "texts")
    assert b"rows: 200" in in_process(run, "evaluate", tmp_path / "c.nbgpu", tmp_path / "table")
    in_process(run, "train", d / "train.jsonl", "-o", tmp_path / "ref.nbgpu", "--model", "multinomial", "-q")
    ref = in_process(run, "predict", tmp_path / "ref.nbgpu", d / "train.jsonl", "--proba")
    assert in_process(run, "predict", tmp_path / "t.nbgpu", tmp_path / "texts", "--proba") == ref


def test_svmlight_on_standard_input_and_npz_refused_in_one_line(tmp_path, run):
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(1)
    X, y = rng.integers(0, 4, size=(120, 6)).astype(float), rng.integers(0, 3, size=120)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"), zero_based=True)
    in_process(run, "train", tmp_path / "d.svm", "-o", tmp_path / "file.nbgpu", "--model", "multinomial", "-q")
    data = (tmp_path / "d.svm").read_bytes()
    ok("train", "-", "-o", tmp_path / "piped.nbgpu", "--model", "multinomial", "-q", cwd=tmp_path, data=data)
    expected = in_process(run, "predict", tmp_path / "file.nbgpu", tmp_path / "d.svm", "--proba")
    assert ok("predict", tmp_path / "piped.nbgpu", "-", "--proba", cwd=tmp_path, data=data).stdout == expected
    # A zip archive is read by seeking: recognised on a pipe by its first bytes, and refused in one line.
    np.savez(tmp_path / "d.npz", X=X, y=y)
    result = nbgpu("train", "-", "-o", tmp_path / "n.nbgpu", cwd=tmp_path, data=(tmp_path / "d.npz").read_bytes())
    one_line_error(result, "standard input: an .npz archive must be a regular file")


def test_errors_on_standard_input_are_one_line(files, text_model, tmp_path):
    d = files["dir"]
    one_line_error(nbgpu("train", "-", "-o", tmp_path / "m.nbgpu", cwd=tmp_path, data=b"\x00\x01 what\n"),
                   "cannot tell the format of standard input", "--format")
    one_line_error(nbgpu("train", "-", "-o", tmp_path / "m.nbgpu", cwd=tmp_path, data=b""),
                   "standard input is empty")
    one_line_error(nbgpu("train", "-", "-o", tmp_path / "m.nbgpu", cwd=tmp_path, data=files["gz"][:200]),
                   "standard input", "gzip data end early")
    bad = files["jsonl"].splitlines(keepends=True)[0] + b"not json\n"
    one_line_error(nbgpu("evaluate", text_model, "-", cwd=d, data=bad), "standard input line 2", "not valid JSON")
    assert not (tmp_path / "m.nbgpu").exists()
