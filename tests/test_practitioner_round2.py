"""Issue 25, the practitioner's round 2: what a user of the ``nbgpu`` command
and of ``SemiSupervisedNB`` ran into, each against scikit-learn's behaviour."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_digits, load_iris
from sklearn.metrics import accuracy_score, classification_report, log_loss

import nbgpu
from nbgpu._app.cli import main


def _csv(path, X, y, names):
    rows = [",".join(names)] + [",".join([*(f"{v:g}" for v in x), str(label)]) for x, label in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")


# --------------------------------------------------------------------------- #
# 1. evaluate: classes the model never saw are errors, listed by name
# --------------------------------------------------------------------------- #
@pytest.fixture
def rare_classes(tmp_path):
    """A model of three desktops and a test set with two it never saw."""
    rng = np.random.default_rng(0)
    names = ["gnome", "kde", "xfce", "gnustep", "enlightenment"]
    centres = rng.integers(0, 6, size=(5, 8))
    y_train = np.repeat(names[:3], 30)
    X_train = rng.poisson(centres[np.repeat(np.arange(3), 30)] + 1)
    y_test = np.array([*np.repeat(names[:3], 5), "gnustep", "gnustep", "gnustep", "enlightenment"])
    codes = np.array([names.index(v) for v in y_test])
    X_test = rng.poisson(centres[codes] + 1)
    features = [f"f{i}" for i in range(8)]
    _csv(tmp_path / "train.csv", X_train, y_train, [*features, "label"])
    _csv(tmp_path / "test.csv", X_test, y_test, [*features, "label"])
    assert main(["train", str(tmp_path / "train.csv"), "-o", str(tmp_path / "m.nbgpu"), "-q", "--model", "multinomial"]) == 0
    reference = nbgpu.MultinomialNB().fit(X_train.astype(float), y_train)
    return tmp_path, X_test.astype(float), y_test, reference


def test_evaluate_counts_unseen_classes_as_errors_like_scikit_learn(rare_classes, capsys):
    d, X_test, y_test, reference = rare_classes
    status = main(["evaluate", str(d / "m.nbgpu"), str(d / "test.csv"), "--json", "-o", str(d / "r.json"), "-q"])
    assert status == 0, capsys.readouterr().err
    report = json.loads((d / "r.json").read_text())
    predicted = reference.predict(X_test)
    assert report["rows"] == len(y_test)
    assert report["accuracy"] == pytest.approx(accuracy_score(y_test, predicted))
    assert report["unseen_classes"] == {"enlightenment": 1, "gnustep": 3}
    assert report["classes"] == ["gnome", "kde", "xfce", "enlightenment", "gnustep"]
    expected = classification_report(y_test, predicted, labels=report["classes"], output_dict=True, zero_division=0)
    for name in report["classes"]:
        for metric in ("precision", "recall", "f1-score", "support"):
            assert report["per_class"][name][metric] == pytest.approx(expected[name][metric]), (name, metric)
    for average in ("macro avg", "weighted avg"):
        assert report["averages"][average]["f1-score"] == pytest.approx(expected[average]["f1-score"])
    # The log-loss is over the rows of classes the model knows.
    known = np.isin(y_test, reference.classes_)
    assert report["log_loss_rows"] == int(known.sum())
    expected_loss = log_loss(y_test[known], reference.predict_proba(X_test[known]), labels=reference.classes_)
    assert report["log_loss"] == pytest.approx(expected_loss, rel=1e-6)
    matrix = np.asarray(report["confusion_matrix"])
    assert matrix.shape == (5, 5) and matrix[3:, 3:].sum() == 0 and matrix.sum() == len(y_test)


def test_evaluate_text_report_names_the_unseen_classes(rare_classes, capsys):
    d, *_ = rare_classes
    png = d / "cm.png"
    assert main(["evaluate", str(d / "m.nbgpu"), str(d / "test.csv"), "--confusion-png", str(png), "-q"]) == 0
    text = capsys.readouterr().out
    listed = "enlightenment (support 1), gnustep (support 3)"
    assert f"classes the model never saw (their rows count as errors): {listed}" in text
    assert "over the 15 rows of classes the model knows" in text
    line = next(row for row in text.splitlines() if row.strip().startswith("gnustep"))
    assert line.split()[1:5] == ["0.0000", "0.0000", "0.0000", "3"] and "never seen by the model" in line
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_evaluate_with_integer_classes_and_a_word_label(tmp_path, capsys):
    """Words among integer labels: the known rows are still matched as integers."""
    X, y = load_iris(return_X_y=True)
    _csv(tmp_path / "train.csv", X, y, ["a", "b", "c", "d", "label"])
    test = list(y[::10].astype(str))
    test[0] = "unknown"
    _csv(tmp_path / "test.csv", X[::10], test, ["a", "b", "c", "d", "label"])
    model = str(tmp_path / "m.nbgpu")
    assert main(["train", str(tmp_path / "train.csv"), "-o", model, "-q", "--model", "gaussian"]) == 0
    assert main(["evaluate", str(tmp_path / "m.nbgpu"), str(tmp_path / "test.csv"), "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    reference = nbgpu.GaussianNB().fit(X, y).predict(X[::10])
    assert report["unseen_classes"] == {"unknown": 1}
    assert report["accuracy"] == pytest.approx(np.mean((reference == y[::10])[1:]) * 14 / 15)


def test_evaluate_when_no_row_has_a_known_class(rare_classes, capsys):
    d, *_ = rare_classes
    (d / "strangers.csv").write_text("f0,f1,f2,f3,f4,f5,f6,f7,label\n1,2,3,4,5,6,7,8,gnustep\n")
    assert main(["evaluate", str(d / "m.nbgpu"), str(d / "strangers.csv"), "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["accuracy"] == 0.0 and report["log_loss"] is None and report["unseen_classes"] == {"gnustep": 1}


# --------------------------------------------------------------------------- #
# 2. train: a continuous label column is refused, as the library refuses it
# --------------------------------------------------------------------------- #
@pytest.fixture
def iris_csv(tmp_path):
    X, y = load_iris(return_X_y=True)
    _csv(tmp_path / "iris.csv", X, y, ["sl", "sw", "pl", "pw", "label"])
    return tmp_path / "iris.csv"


@pytest.mark.parametrize("column", ["sl", "0"])
def test_train_refuses_a_continuous_label_column(iris_csv, column, capsys):
    X, _ = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        nbgpu.GaussianNB().fit(X[:, 1:], X[:, 0])  # the library's answer
    out = iris_csv.parent / "m.nbgpu"
    assert main(["train", str(iris_csv), "--label-column", column, "--model", "gaussian", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "column 'sl'" in err[0] and "continuous" in err[0] and "--label-column" in err[0]
    assert not out.exists()


def test_train_refuses_continuous_svmlight_labels(tmp_path, capsys):
    dump_svmlight_file(np.eye(4), [0.5, 1.5, 0.5, 2.25], str(tmp_path / "r.svm"))
    assert main(["train", str(tmp_path / "r.svm"), "-o", str(tmp_path / "m.nbgpu")]) == 1
    err = capsys.readouterr().err.strip()
    assert "the labels are continuous values" in err and len(err.splitlines()) == 1


def test_train_takes_whole_number_labels_and_words(iris_csv, tmp_path, capsys):
    """Labels written as floats but whole (2.0) are classes, so are words with numbers among them."""
    X, y = load_iris(return_X_y=True)
    _csv(tmp_path / "whole.csv", X, y.astype(float), ["sl", "sw", "pl", "pw", "label"])
    assert main(["train", str(tmp_path / "whole.csv"), "-o", str(tmp_path / "w.nbgpu"), "-q"]) == 0
    assert len(nbgpu.load(tmp_path / "w.nbgpu").classes_) == 3  # not refused (the labels are whole)
    words = np.where(y == 0, "setosa", np.char.mod("%.1f", y + 0.5))
    _csv(tmp_path / "words.csv", X, words, ["sl", "sw", "pl", "pw", "label"])
    assert main(["train", str(tmp_path / "words.csv"), "-o", str(tmp_path / "s.nbgpu"), "-q"]) == 0
    assert nbgpu.load(tmp_path / "s.nbgpu").classes_.tolist() == ["1.5", "2.5", "setosa"]


# --------------------------------------------------------------------------- #
# 3. bench: -q, and nothing written unasked
# --------------------------------------------------------------------------- #
QUICK = ["--size", "tiny", "--repeats", "1", "--models", "MultinomialNB", "--backends", "sklearn,nbgpu-cpu",
         "--data", "synthetic"]


def test_bench_takes_q_and_writes_nothing_unasked(tmp_path, monkeypatch, capsys):
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("NBGPU_BENCH_DIR", raising=False)
    # No chart: matplotlib keeps caches in HOME (the default chart: test_bench.py).
    assert main(["bench", "-q", *QUICK, "--png", "none"]) == 0
    captured = capsys.readouterr()
    assert any(line.startswith("MultinomialNB ") for line in captured.out.splitlines())
    assert "raw results" not in captured.out and captured.err == ""
    assert list(home.iterdir()) == [] and list(cwd.iterdir()) == []


def test_bench_writes_where_asked(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("NBGPU_BENCH_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["bench", *QUICK, "--json", str(tmp_path / "r.json"), "--png", "none"]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["rows"]
    assert "results: " in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


# --------------------------------------------------------------------------- #
# 4. SemiSupervisedNB: string labels with the int -1 for unlabeled rows
# --------------------------------------------------------------------------- #
def test_semi_supervised_takes_scikit_learn_string_convention():
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    unlabeled = rng.random(y.shape[0]) < 0.8
    numeric = np.where(unlabeled, -1, y)
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])
    # As sklearn.semi_supervised takes them: an object array of strings, -1 the int.
    strings = np.array([-1 if u else names[v] for u, v in zip(unlabeled, y)], dtype=object)
    assert isinstance(strings[np.argmax(unlabeled)], int)
    by_number = nbgpu.SemiSupervisedNB(max_iter=30, tol=1e-2).fit(X, numeric)
    by_name = nbgpu.SemiSupervisedNB(max_iter=30, tol=1e-2).fit(X, strings)
    assert sorted(by_name.classes_.tolist()) == sorted(names.tolist())
    # The classes in sorted order of names, the same model otherwise.
    order = np.searchsorted(names[np.argsort(names)], names)  # class i (a digit) -> its column by name
    np.testing.assert_allclose(by_name.predict_proba(X)[:, order], by_number.predict_proba(X), rtol=1e-6, atol=1e-12)
    np.testing.assert_array_equal(by_name.predict(X), names[by_number.predict(X)])


# --------------------------------------------------------------------------- #
# 5. info: sizes in words, classes as the model holds them
# --------------------------------------------------------------------------- #
def test_info_labels_the_sizes_and_types_the_classes(tmp_path, capsys):
    X, y = load_digits(return_X_y=True)
    dump_svmlight_file(X, y, str(tmp_path / "digits.svm"))
    model = tmp_path / "d.nbgpu"
    assert main(["train", str(tmp_path / "digits.svm"), "-o", str(model), "-q", "--model", "gaussian"]) == 0
    capsys.readouterr()
    assert main(["info", str(model)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "classes: 10 integers: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]" in lines
    statistics = next(line for line in lines if line.startswith("statistics in memory when loaded: "))
    assert "KiB" in statistics and "bytes)" in statistics
    size = model.stat().st_size
    assert any(line.startswith("file size: ") and f"({size} bytes)" in line for line in lines)
    assert not any(line.startswith("statistics_bytes") for line in lines)
    assert main(["info", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["classes"] == list(range(10)) == nbgpu.load(model).classes_.tolist()
    assert info["file_bytes"] == size and info["statistics_bytes"] > 0


def test_info_quotes_string_classes(tmp_path, capsys):
    path = nbgpu.save(nbgpu.MultinomialNB().fit(np.eye(3), ["b", "a", "10"]), tmp_path / "m")
    assert main(["info", str(path)]) == 0
    assert "classes: 3 strings: ['10', 'a', 'b']" in capsys.readouterr().out.splitlines()
