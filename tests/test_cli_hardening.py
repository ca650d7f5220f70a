"""The command line's rough edges: outputs, signals, option errors, messages.

Every failure is one line on stderr and a documented status (2: the command
was called wrong; 1: a file could not be used; 130/143: interrupted or
terminated), leaves no partial file and never destroys an input.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import fifo_writer, subprocess_env, wait_until_it_waits_for_input
from sklearn.datasets import dump_svmlight_file

import nbgpu
from nbgpu._app import cli
from nbgpu._app.cli import main
from nbgpu._app.options import PARAMETERS, flag
from nbgpu._interop import atomic_files
from nbgpu._interop.atomic_files import atomic_output

REPO = Path(__file__).resolve().parents[1]


def one_line(err, status, expected_status, match):
    lines = err.strip().splitlines()
    assert status == expected_status, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert match in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(80, 6)).astype(float)
    y = rng.integers(0, 3, size=80)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"), zero_based=True)
    nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "m.nbgpu")
    return tmp_path, X, y


def _cli(*args, cwd, **kwargs):
    env = subprocess_env()
    env.pop("NBGPU_DEBUG", None)
    return subprocess.Popen([sys.executable, *kwargs.pop("python", []), "-m", "nbgpu", *map(str, args)], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


# --------------------------------------------------------------------------- #
# Outputs: checked first, never an input, links followed, modes kept
# --------------------------------------------------------------------------- #
def test_output_in_a_missing_directory_fails_before_any_work(data, run, monkeypatch):
    d, _, _ = data
    (d / "junk.svm").write_text("not svmlight at all\n")  # reading it would fail differently
    status, _, err = run("train", d / "junk.svm", "-o", d / "nodir" / "m.nbgpu")
    one_line(err, status, 1, "directory")
    status, _, err = run("evaluate", d / "m.nbgpu", d / "junk.svm", "--confusion-png", d / "nodir" / "cm.png")
    one_line(err, status, 1, f"cannot write {d / 'nodir' / 'cm.png'}: directory")


def test_output_in_a_read_only_directory_fails_before_any_work(data, run, monkeypatch):
    d, _, _ = data
    (d / "ro").mkdir()
    real = os.access
    # Root may write anywhere: ask os.access as an ordinary user would be answered.
    monkeypatch.setattr(atomic_files.os, "access", lambda p, m: False if Path(p) == d / "ro" else real(p, m))
    (d / "junk.svm").write_text("not svmlight at all\n")
    status, _, err = run("train", d / "junk.svm", "-o", d / "ro" / "m.nbgpu")
    one_line(err, status, 1, f"directory {d / 'ro'} is not writable")
    status, _, err = run("predict", d / "m.nbgpu", d / "junk.svm", "-o", d)
    one_line(err, status, 1, "it is a directory")


@pytest.mark.parametrize(
    "args",
    [
        ("train", "{d}/d.svm", "-o", "{d}/d.svm"),
        ("train", "{d}/d.svm", "-o", "{d}/link.svm"),  # a symbolic link to the data
        ("train", "{d}/d.svm", "-o", "{d}/hard.svm"),  # a hard link to the data
        ("predict", "{d}/m.nbgpu", "{d}/d.svm", "-o", "{d}/d.svm"),
        ("predict", "{d}/m.nbgpu", "{d}/d.svm", "-o", "{d}/m.nbgpu"),
        ("evaluate", "{d}/m.nbgpu", "{d}/d.svm", "-o", "{d}/d.svm"),
        ("evaluate", "{d}/m.nbgpu", "{d}/d.svm", "--confusion-png", "{d}/m.nbgpu"),
    ],
)
def test_an_output_that_is_an_input_is_refused(data, run, args):
    d, _, _ = data
    os.symlink(d / "d.svm", d / "link.svm")
    os.link(d / "d.svm", d / "hard.svm")
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    status, _, err = run(*(a.format(d=d) for a in args))
    one_line(err, status, 1, "is the input file")
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


def test_writing_through_a_symlink_replaces_its_target(data, run):
    d, _, _ = data
    (d / "models").mkdir()
    (d / "models" / "real.nbgpu").write_text("old")
    os.symlink(d / "models" / "real.nbgpu", d / "current.nbgpu")
    status, _, err = run("train", d / "d.svm", "-o", d / "current.nbgpu", "-q")
    assert status == 0, err
    assert (d / "current.nbgpu").is_symlink()
    assert os.readlink(d / "current.nbgpu") == str(d / "models" / "real.nbgpu")
    assert nbgpu.load(d / "models" / "real.nbgpu").n_features_in_ == 6
    assert sorted(os.listdir(d / "models")) == ["real.nbgpu"]


def test_an_existing_file_keeps_its_permissions(data, run):
    d, _, _ = data
    (d / "private.nbgpu").write_text("old")
    os.chmod(d / "private.nbgpu", 0o600)
    assert run("train", d / "d.svm", "-o", d / "private.nbgpu", "-q")[0] == 0
    assert stat.S_IMODE(os.stat(d / "private.nbgpu").st_mode) == 0o600
    os.chmod(d / "private.nbgpu", 0o640)
    assert run("predict", d / "m.nbgpu", d / "d.svm", "-o", d / "private.nbgpu")[0] == 0
    assert stat.S_IMODE(os.stat(d / "private.nbgpu").st_mode) == 0o640
    mask = os.umask(0o022)
    try:
        assert run("train", d / "d.svm", "-o", d / "new.nbgpu", "-q")[0] == 0
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(d / "new.nbgpu").st_mode) == 0o644


def test_standard_output_is_written_directly(data):
    d, X, _ = data
    expected = nbgpu.load(d / "m.nbgpu").predict(X)
    for target in ("-", "/dev/stdout"):
        proc = _cli("predict", "m.nbgpu", "d.svm", "-o", target, cwd=d)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.split() == [str(v) for v in expected]
    assert sorted(os.listdir(d)) == ["d.svm", "m.nbgpu"]
    # A model to standard output (a zip archive written to a pipe), read back.
    env = subprocess_env()
    result = subprocess.run([sys.executable, "-m", "nbgpu", "train", "d.svm", "-o", "-", "-q"], cwd=d, env=env,
                            capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    (d / "piped.nbgpu").write_bytes(result.stdout)
    np.testing.assert_array_equal(nbgpu.load(d / "piped.nbgpu").predict(X), expected)


def test_evaluate_leaves_no_picture_when_the_report_fails(data, run, monkeypatch):
    d, _, _ = data

    def broken(report, model_name):
        raise OSError("disk full")

    monkeypatch.setattr(cli, "report_text", broken)
    status, _, err = run("evaluate", d / "m.nbgpu", d / "d.svm", "--confusion-png", d / "cm.png", "-o", d / "r.txt")
    one_line(err, status, 1, "disk full")
    assert sorted(os.listdir(d)) == ["d.svm", "m.nbgpu"]


def test_stale_temporary_files_of_dead_runs_are_removed(tmp_path):
    host = atomic_files._host()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".m.nbgpu.{host}-{dead.pid}.abc123.nbgpu-partial"
    live = tmp_path / f".m.nbgpu.{host}-{os.getpid()}.def456.nbgpu-partial"
    other_host = tmp_path / f".m.nbgpu.elsewhere-{dead.pid}.ghi789.nbgpu-partial"
    other_file = tmp_path / f".n.nbgpu.{host}-{dead.pid}.jkl012.nbgpu-partial"
    for p in (stale, live, other_host, other_file):
        p.write_text("partial")
    with atomic_output(tmp_path / "m.nbgpu") as f:
        f.write("whole")
    assert sorted(os.listdir(tmp_path)) == sorted(["m.nbgpu", live.name, other_host.name, other_file.name])
    assert socket.gethostname()  # the host part comes from here


# --------------------------------------------------------------------------- #
# Signals: one line, 130 / 143, no traceback, no partial file
# --------------------------------------------------------------------------- #
def _slow_training_input(d):
    """A FIFO that delivers some rows and then waits: training is under way and not done."""
    fifo = d / "slow.svm"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize(("signum", "status", "line"), [(signal.SIGINT, 130, "nbgpu: interrupted"),
                                                         (signal.SIGTERM, 143, "nbgpu: terminated")])
def test_a_signal_during_training_leaves_nothing_behind(data, signum, status, line):
    d, _, _ = data
    (d / "out").mkdir()
    fifo = _slow_training_input(d)
    proc = _cli("train", fifo, "-o", d / "out" / "m.nbgpu", "--chunk-mb", "0.001", cwd=d)
    with fifo_writer(fifo, proc) as writer:
        rows = (d / "d.svm").read_bytes()
        writer.write(rows * 20)
        writer.flush()
        wait_until_it_waits_for_input(proc, writer)  # it has read and fitted what it got, and waits for more
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == line and "Traceback" not in err
    assert os.listdir(d / "out") == []


@pytest.mark.parametrize(("signum", "status", "line"), [(signal.SIGINT, 130, "nbgpu: interrupted"),
                                                         (signal.SIGTERM, 143, "nbgpu: terminated")])
def test_a_signal_while_modules_load_ends_cleanly(data, signum, status, line):
    d, _, _ = data
    # -X importtime reports every import as it ends: signal once scipy is loading.
    proc = _cli("train", "d.svm", "-o", "m2.nbgpu", cwd=d, python=["-X", "importtime"])
    for text in proc.stderr:
        if "scipy" in text:
            break
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == line and "Traceback" not in err
    assert sorted(os.listdir(d)) == ["d.svm", "m.nbgpu"]


# --------------------------------------------------------------------------- #
# Option errors: one line, status 2, before any file is read
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("options", "match"),
    [
        (["--model", "categorical", "--min-categories", "0"], "argument --min-categories: expected a positive integer, got '0'"),
        (["--ngram-range", "3,1"], "argument --ngram-range: expected 1 <= MIN <= MAX <= 10, got '3,1'"),
        (["--chunk-mb", "nan"], "argument --chunk-mb: expected a finite number, got 'nan'"),
        (["--chunk-mb", "inf"], "argument --chunk-mb: expected a finite number, got 'inf'"),
        (["--chunk-mb", "1e-9"], "argument --chunk-mb: 1e-9 MiB is less than one byte"),
        (["--chunk-mb", "-1"], "argument --chunk-mb: expected a positive number of MiB"),
        (["--alpha", "nan"], "argument --alpha: expected a finite number, got 'nan'"),
        (["--class-prior", "0.5,x"], "argument --class-prior: expected comma-separated finite numbers"),
        (["--hash-features", "0"], "argument --hash-features: expected a positive integer"),
        (["--n-features", "4000000000"], "argument --n-features: expected at most 2147483647"),
        (["--loss-matrix", "0,1;1"], "argument --loss-matrix: expected a square matrix of numbers"),
        (["--loss-matrix", "costs.csv"], "argument --loss-matrix: expected a square matrix of numbers, as a CSV file or as rows 'c11,c12;c21,c22'; got 'costs.csv' (no such file)"),
        (["--missing", "drop"], "argument --missing: invalid choice: 'drop'"),
        (["--var-smoothing", "1e-3"], "--var-smoothing does not apply to --model auto"),
        (["--var-smoothing", "1e-3", "--model", "multinomial"], "--var-smoothing does not apply to MultinomialNB"),
        (["--alpha", "-1"], "alpha"),
        (["--classes", "a,,b"], "--classes: expected comma-separated labels"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_option_errors_are_one_line_and_status_2(data, run, options, match):
    d, _, _ = data
    (d / "junk.svm").write_text("not svmlight\n")  # never read: the options fail first
    status, _, err = run("train", d / "junk.svm", "-o", d / "o.nbgpu", *options)
    line = one_line(err, status, 2, match)
    assert line.startswith(("nbgpu train: error: ", "nbgpu: error: "))
    assert not (d / "o.nbgpu").exists()


def test_usage_errors_from_a_shell_are_one_line_and_status_2(data):
    d, _, _ = data
    proc = _cli("train", "d.svm", "--chunk-mb", "1e-9", "-o", "x", cwd=d)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert err == "nbgpu train: error: argument --chunk-mb: 1e-9 MiB is less than one byte (see 'nbgpu train --help')\n"
    proc = _cli("frobnicate", cwd=d)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and len(err.splitlines()) == 1 and "invalid choice: 'frobnicate'" in err


def test_the_parameters_listed_in_an_error_are_flags_that_exist(data, run, capsys):
    d, _, _ = data
    for model, name in cli.MODELS.items():
        accepted = getattr(nbgpu, name)().get_params()
        foreign = next(p for p in PARAMETERS if p not in accepted)
        value = [] if PARAMETERS[foreign].get("action") else ["1"]
        status, _, err = run("train", d / "d.svm", "-o", d / "o.nbgpu", "--model", model, flag(foreign), *value)
        line = one_line(err, status, 2, f"{flag(foreign)} does not apply to {name}")
        listed = line.split("(its parameters: ")[1].rstrip(")").split(", ")
        assert set(listed) == {flag(p) for p in accepted}  # every parameter settable, and only real flags
    assert main(["train", "--help"]) == 0
    usage = capsys.readouterr().out
    assert all(f in usage for f in map(flag, PARAMETERS))


# --------------------------------------------------------------------------- #
# Every documented parameter is settable
# --------------------------------------------------------------------------- #
def test_loss_matrix_from_a_csv_file_or_rows(data, run):
    d, X, y = data
    rows = [[0, 1, 4], [2, 0, 1], [1, 3, 0]]
    (d / "costs.csv").write_text("# cost of deciding row when the truth is column\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    ref = nbgpu.MultinomialNB(loss_matrix=rows).fit(X, y)
    for given in (d / "costs.csv", "0,1,4;2,0,1;1,3,0"):
        assert run("train", d / "d.svm", "-o", d / "lm.nbgpu", "--loss-matrix", given, "-q")[0] == 0
        model = nbgpu.load(d / "lm.nbgpu")
        np.testing.assert_array_equal(model.get_params()["loss_matrix"], rows)
        np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    status, _, err = run("train", d / "d.svm", "-o", d / "lm.nbgpu", "--loss-matrix", "0,1;1,0", "-q")
    one_line(err, status, 1, "`loss_matrix` must have shape (3, 3)")


def test_missing_values_in_csv(tmp_path, run):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 2, size=60)
    lines = ["a,b,c,label"] + [",".join("" if (i + j) % 7 == 0 else f"{v:.6g}" for j, v in enumerate(row)) + f",{t}"
                               for i, (row, t) in enumerate(zip(X, y))]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    status, _, err = run("train", tmp_path / "m.csv", "-o", tmp_path / "g.nbgpu", "--model", "gaussian", "-q")
    assert status == 1 and "NaN" in err
    status, _, err = run("train", tmp_path / "m.csv", "-o", tmp_path / "g.nbgpu", "--model", "gaussian", "--missing", "ignore", "-q")
    assert status == 0, err
    Xn = np.genfromtxt(tmp_path / "m.csv", delimiter=",", skip_header=1)[:, :3]
    ref = nbgpu.GaussianNB(missing="ignore").fit(Xn, y)
    np.testing.assert_allclose(nbgpu.load(tmp_path / "g.nbgpu").predict_proba(Xn), ref.predict_proba(Xn), rtol=1e-9)


def test_csv_without_a_label_column_says_which_it_took(tmp_path, run):
    (tmp_path / "d.csv").write_text("a,b,kind\n1,2,x\n3,4,y\n")
    status, _, err = run("train", tmp_path / "d.csv", "-o", tmp_path / "m.nbgpu")
    assert status == 0
    assert "no column named 'label'; the last column ('kind') is taken as the label (--label-column chooses another)" in err
    status, _, err = run("train", tmp_path / "d.csv", "-o", tmp_path / "m.nbgpu", "--label-column", "kind")
    assert "taken as the label" not in err


def test_a_header_of_numbered_columns_is_a_header(tmp_path, run):
    """pandas writes integer column names as 0,1,...: that header was trained on as a
    row (a class 'label'), with a note that no column is named 'label'."""
    (tmp_path / "d.csv").write_text("0,1,label\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n")
    status, _, err = run("train", tmp_path / "d.csv", "-o", tmp_path / "m.nbgpu", "--model", "gaussian")
    assert status == 0 and "taken as the label" not in err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    assert model.classes_.tolist() == ["a", "b"] and model.class_count_.sum() == 4
    (tmp_path / "e.csv").write_text("0,1,y\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n")
    status, _, err = run("train", tmp_path / "e.csv", "-o", tmp_path / "n.nbgpu", "--model", "gaussian", "--label-column", "y")
    assert status == 0 and nbgpu.load(tmp_path / "n.nbgpu").class_count_.sum() == 4


# --------------------------------------------------------------------------- #
# Model files that are not
# --------------------------------------------------------------------------- #
def _not_models(d):
    with open(d / "serialized.nbgpu", "wb") as f:
        pickle.dump({"a": 1}, f)
    np.save(d / "objects.npy", np.array([None, 1], dtype=object))
    os.replace(d / "objects.npy", d / "objects.nbgpu")
    np.save(d / "plain.npy", np.arange(3))
    os.replace(d / "plain.npy", d / "plain.nbgpu")
    (d / "random.nbgpu").write_bytes(np.random.default_rng(0).bytes(300))
    np.savez(d / "data.npz", X=np.ones((2, 2)), y=np.arange(2))
    np.savez(d / "objects.npz", X=np.array([None], dtype=object))
    return ["serialized.nbgpu", "objects.nbgpu", "plain.nbgpu", "random.nbgpu", "data.npz", "objects.npz"]


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_file_that_is_not_a_model_says_so_without_pickle_advice(data, run, command):
    d, _, _ = data
    for name in _not_models(d):
        status, _, err = run(command, d / name, d / "d.svm")
        line = one_line(err, status, 1, "not an nbgpu model file")
        assert "pickle" not in line.lower(), line


def test_model_metadata_that_is_not_an_object(data, run):
    d, X, y = data
    # save refuses metadata that is not a JSON object, so no such file is written ...
    with pytest.raises(TypeError, match="`metadata` must be a dict"):
        nbgpu.save(nbgpu.MultinomialNB().fit(X, y), d / "odd.nbgpu", metadata="just text")
    assert not (d / "odd.nbgpu").exists()
    # ... and reader settings the command line cannot use are refused when read.
    nbgpu.save(nbgpu.MultinomialNB().fit(X, y), d / "odd.nbgpu", metadata={"reader": {"zero_based": "yes"}})
    status, _, err = run("predict", d / "odd.nbgpu", d / "d.svm")
    one_line(err, status, 1, "reader setting zero_based='yes'")


# --------------------------------------------------------------------------- #
# Messages that name the file and say what is wrong
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("big.svm", b"1 0:1\n0 4000000000:1\n", "big.svm line 2: not a valid svmlight/libsvm line (a feature index is larger than 2147483647)"),
        ("latin.csv", "a,b,label\n1,2,x\n1,2,\xe9\n".encode("latin-1"), "latin.csv line 3: not valid UTF-8 text (byte 0xe9)"),
        ("latin.jsonl", '{"text": "caf\xe9", "label": 1}\n'.encode("latin-1"), "latin.jsonl line 1: not valid UTF-8 text"),
        ("nolabel.jsonl", b'{"text": "a", "label": 1}\n{"text": "b", "label": null}\n', 'nolabel.jsonl line 2: "label" is null'),
        ("oob.npz", None, "oob.npz: its sparse matrix arrays are inconsistent"),
        ("objects.npz", None, "objects.npz holds object arrays"),
    ],
)
def test_bad_data_names_the_file(tmp_path, run, name, content, match):
    path = tmp_path / name
    if name == "oob.npz":
        np.savez(path, data=np.ones(2), indices=np.array([0, 10**9]), indptr=np.array([0, 1, 2]),
                 shape=np.array([2, 64]), format=np.array("csr"), y=np.array([0, 1]))
    elif name == "objects.npz":
        np.savez(path, X=np.ones((2, 2)), y=np.array([None, "a"], dtype=object))
    else:
        path.write_bytes(content)
    status, _, err = run("train", path, "-o", tmp_path / "m.nbgpu")
    one_line(err, status, 1, match)
    assert not (tmp_path / "m.nbgpu").exists()


def test_oob_npz_from_a_shell(tmp_path):
    np.savez(tmp_path / "oob.npz", data=np.ones(2), indices=np.array([0, 10**9]), indptr=np.array([0, 1, 2]),
             shape=np.array([2, 64]), format=np.array("csr"), y=np.array([0, 1]))
    proc = _cli("train", "oob.npz", "-o", "m.nbgpu", cwd=tmp_path)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert len(err.splitlines()) == 1 and err.startswith("nbgpu train: error: oob.npz: its sparse matrix arrays")
    assert sorted(os.listdir(tmp_path)) == ["oob.npz"]


# --------------------------------------------------------------------------- #
# The confusion matrix picture
# --------------------------------------------------------------------------- #
def test_confusion_matrix_picture_readable_with_many_classes(tmp_path, run):
    from nbgpu._app.evaluation import confusion_figure

    rng = np.random.default_rng(0)
    k = 60
    centres = rng.normal(scale=3.0, size=(k, 4))
    y = np.repeat(np.arange(k), 10)
    X = centres[y] + rng.normal(size=(len(y), 4))
    labels = np.array([f"category-with-a-long-name-{i:02d}" for i in range(k)])[y]
    nbgpu.save(nbgpu.GaussianNB().fit(X, labels), tmp_path / "g.nbgpu")
    np.savetxt(tmp_path / "t.csv", X, delimiter=",", fmt="%.6g", header="a,b,c,d", comments="")
    text = (tmp_path / "t.csv").read_text().splitlines()
    (tmp_path / "t.csv").write_text("\n".join([text[0] + ",label"] + [f"{r},{lab}" for r, lab in zip(text[1:], labels)]) + "\n")
    status, out, err = run("evaluate", tmp_path / "g.nbgpu", tmp_path / "t.csv", "--json", "--confusion-png", tmp_path / "cm.png",
                           "--confusion-normalize")
    assert status == 0, err
    assert f"confusion matrix of {k} classes -> {tmp_path / 'cm.png'}" in err
    png = (tmp_path / "cm.png").read_bytes()
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert min(width, height) >= 1500  # grows with the classes (60 labels at a readable size)
    report = json.loads(out)
    fig = confusion_figure(report, normalize=True)
    ax, _bar = fig.axes  # the matrix and its colour bar
    image = ax.images[0].get_array()
    np.testing.assert_allclose(np.asarray(image).sum(axis=1), 1.0)  # rows of shares
    assert all(t.get_rotation() == 90 for t in ax.get_xticklabels())
    assert ax.get_xticklabels()[0].get_text().endswith("…")  # long labels cut
    assert not ax.texts  # no cell values at 60 classes
    small = confusion_figure({**report, "classes": report["classes"][:3],
                              "confusion_matrix": [[5, 1, 0], [0, 4, 2], [1, 0, 6]]})
    assert small.get_size_inches()[1] < fig.get_size_inches()[1]
    assert len(small.axes[0].texts) == 9  # counts written in the cells


def test_a_model_larger_than_memory_is_refused_before_it_is_built(tmp_path, run):
    # A stray index (a typo, a corrupt file) would make a model of two billion features.
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    classes = int(memory // (2**31 * 32)) + 2  # enough classes that the model exceeds this machine's memory
    rows = [f"{c} 1:1\n" for c in range(classes - 1)] + [f"{classes - 1} 2147483646:1\n"]
    (tmp_path / "stray.svm").write_text("".join(rows))
    status, _, err = run("train", tmp_path / "stray.svm", "-o", tmp_path / "m.nbgpu", "--zero-based", "yes", "--model", "multinomial")
    line = one_line(err, status, 1, f"a MultinomialNB of {classes} classes and 2147483647 features needs about")
    assert "--n-features bounds it" in line and str(tmp_path / "stray.svm") in line
    # Hashed text: the width is --hash-features' (the advice was svmlight's)
    (tmp_path / "t.jsonl").write_text("".join(f'{{"text": "w{c}", "label": {c}}}\n' for c in range(classes)))
    status, _, err = run("train", tmp_path / "t.jsonl", "-o", tmp_path / "t.nbgpu", "--hash-features", "2147483647", "--alpha", "1")
    line = one_line(err, status, 1, "2147483647 features needs about")
    assert line.endswith("(--hash-features sets the number of hashed text features)"), line


def test_device_gpu_without_a_gpu_is_one_line(data, run, monkeypatch):
    d, _, _ = data
    monkeypatch.setattr("nbgpu._array.devices.gpu_array_like", lambda: None)
    status, _, err = run("train", d / "d.svm", "-o", d / "g.nbgpu", "--device", "gpu")
    one_line(err, status, 1, "--device gpu: no usable GPU")
    assert not (d / "g.nbgpu").exists()


def test_evaluate_reads_true_and_false_for_a_model_of_bool_classes(tmp_path, run):
    """Every CSV label ("False" too) was the class True: text to bool is True unless empty."""
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    nbgpu.save(nbgpu.GaussianNB().fit(X, X[:, 0] > 5), tmp_path / "b.nbgpu")
    (tmp_path / "b.csv").write_text("f,label\n0,False\n1,false\n10,True\n11,1\n")
    status, out, _ = run("evaluate", tmp_path / "b.nbgpu", tmp_path / "b.csv", "--json", "-q")
    report = json.loads(out)
    assert status == 0 and report["accuracy"] == 1.0 and report["unseen_classes"] == {}
    (tmp_path / "c.csv").write_text("f,label\n0,maybe\n")
    status, out, _ = run("evaluate", tmp_path / "b.nbgpu", tmp_path / "c.csv", "--json", "-q")
    assert json.loads(out)["unseen_classes"] == {"maybe": 1}


def test_a_label_column_named_at_predict_is_one(tmp_path, run):
    """--label-column was ignored where the file has as many columns as the model has
    features: predict read the labels as a feature."""
    (tmp_path / "tr.csv").write_text("a,b,label\n1,2,0\n2,1,0\n9,8,1\n8,9,1\n")
    (tmp_path / "te.csv").write_text("a,label\n1,1\n9,0\n")
    assert run("train", tmp_path / "tr.csv", "-o", tmp_path / "g.nbgpu", "--model", "gaussian", "-q")[0] == 0
    for command in ("predict", "evaluate"):
        status, _, err = run(command, tmp_path / "g.nbgpu", tmp_path / "te.csv", "--label-column", "label")
        one_line(err, status, 1, "te.csv has 2 columns; the model expects 2 features and the label column")


def test_predict_and_evaluate_read_one_based_svmlight_when_told(tmp_path, run):
    """A model trained on another format read every svmlight file as zero-based, and
    predict/evaluate had no --zero-based: a one-based file was shifted by one feature."""
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    X, y = rng.poisson(np.repeat([[1, 4, 0.5], [4, 1, 0.5]], 30, axis=0)), np.repeat([0, 1], 30)
    np.savez(tmp_path / "d.npz", X=X, y=y)
    assert run("train", tmp_path / "d.npz", "-o", tmp_path / "m.nbgpu", "--model", "multinomial", "-q")[0] == 0
    dump_svmlight_file(X, y, str(tmp_path / "one.svm"), zero_based=False)
    dump_svmlight_file(X, y, str(tmp_path / "zero.svm"), zero_based=True)
    zero = run("predict", tmp_path / "m.nbgpu", tmp_path / "zero.svm")
    one = run("predict", tmp_path / "m.nbgpu", tmp_path / "one.svm", "--zero-based", "no")
    assert zero[0] == one[0] == 0 and zero[1] == one[1]
    assert zero[1].split() == [str(v) for v in nbgpu.load(tmp_path / "m.nbgpu").predict(X)]
