"""The ``nbgpu`` command, driven as a user would: ``python -m nbgpu`` in a subprocess, every
command at least once; what a command computes (its models against scikit-learn's) by its
main function in this process (:func:`in_process`)."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env
from sklearn import naive_bayes as sk
from sklearn.datasets import dump_svmlight_file, load_digits
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.metrics import accuracy_score, confusion_matrix, log_loss, precision_recall_fscore_support

from nbgpu._app.cli import main

import nbgpu

REPO = Path(__file__).resolve().parents[1]
MODELS = {"gaussian": "GaussianNB", "multinomial": "MultinomialNB", "complement": "ComplementNB",
          "bernoulli": "BernoulliNB", "categorical": "CategoricalNB"}


def nbgpu_cli(*args, cwd):
    env = subprocess_env()
    env.pop("NBGPU_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "nbgpu", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def in_process(run, monkeypatch, *args, cwd):
    """``nbgpu ARGS`` by its main function in this process (conftest's ``run``), from ``cwd``:
    succeeds; ``(stdout, stderr)``. For what a command computes: the subprocess is ``ok``'s."""
    monkeypatch.chdir(cwd)
    status, out, err = run(*args)
    assert status == 0, err
    return out, err


def ok(*args, cwd):
    result = nbgpu_cli(*args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result


def fails(*args, cwd, match):
    """The command fails with one clear line on stderr and no traceback."""
    result = nbgpu_cli(*args, cwd=cwd)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert match in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    """Digits as svmlight files (train 1400 rows / test 397 rows) and CSV."""
    d = tmp_path_factory.mktemp("digits")
    X, y = load_digits(return_X_y=True)
    Xtr, ytr, Xte, yte = X[:1400], y[:1400], X[1400:], y[1400:]
    dump_svmlight_file(Xtr, ytr, str(d / "train.svm"))
    dump_svmlight_file(Xte, yte, str(d / "test.svm"))
    np.savetxt(d / "train.csv", np.column_stack([Xtr, ytr]), delimiter=",", fmt="%g",
               header=",".join([f"p{i}" for i in range(64)] + ["label"]), comments="")
    np.savetxt(d / "test.csv", np.column_stack([Xte, yte]), delimiter=",", fmt="%g")
    return d, (Xtr, ytr, Xte, yte)


@pytest.mark.parametrize("model", list(MODELS))
def test_train_every_model_matches_scikit_learn(digits, model, tmp_path, run, monkeypatch):
    d, (Xtr, ytr, Xte, yte) = digits
    extra = ["--min-categories", "17"] if model == "categorical" else []
    # A tiny chunk size: the file streams through partial_fit in many pieces.
    in_process(run, monkeypatch, "train", d / "train.csv", "-o", "m.nbgpu", "--model", model, "--chunk-mb", "0.01",
               "-q", *extra, cwd=tmp_path)
    kwargs = {"min_categories": 17} if model == "categorical" else {}
    ref = getattr(sk, MODELS[model])(**kwargs).fit(Xtr, ytr)
    loaded = nbgpu.load(tmp_path / "m.nbgpu")
    assert type(loaded).__name__ == MODELS[model]
    np.testing.assert_array_equal(loaded.predict(Xte), ref.predict(Xte))
    np.testing.assert_allclose(loaded.predict_proba(Xte), ref.predict_proba(Xte), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize(
    ("model", "flags", "params"),
    [
        ("poisson", ["--prior-smoothing", "1", "--alpha", "0.5"], {"prior_smoothing": 1.0, "alpha": 0.5}),
        ("normal", ["--reg-covar", "0.1"], {"reg_covar": 0.1}),
    ],
)
def test_train_models_beyond_scikit_learn(digits, model, flags, params, tmp_path, run, monkeypatch):
    d, (Xtr, ytr, Xte, _) = digits
    in_process(run, monkeypatch, "train", d / "train.csv", "-o", "m.nbgpu", "--model", model, "--chunk-mb", "0.01",
               "-q", *flags, cwd=tmp_path)
    loaded = nbgpu.load(tmp_path / "m.nbgpu")
    ref = getattr(nbgpu, {"poisson": "PoissonNB", "normal": "NormalBayesClassifier"}[model])(**params).fit(Xtr, ytr)
    assert loaded.get_params() == ref.get_params()
    np.testing.assert_array_equal(loaded.predict(Xte), ref.predict(Xte))
    np.testing.assert_allclose(loaded.predict_proba(Xte), ref.predict_proba(Xte), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize(("model", "dtype"), [("gaussian", "float32"), ("categorical", "float64")])
def test_evaluate_reports_scikit_learn_metrics(digits, model, dtype, tmp_path, run, monkeypatch):
    d, (Xtr, ytr, Xte, yte) = digits
    kwargs = {"min_categories": 17} if model == "categorical" else {}
    ref = getattr(sk, MODELS[model])(**kwargs).fit(Xtr, ytr)
    ours = getattr(nbgpu, MODELS[model])(**kwargs).fit(Xtr.astype(dtype), ytr)
    nbgpu.save(ours, tmp_path / "m.nbgpu")
    # float32 on the CPU, as the model below: GaussianNB's float32 scores of
    # near-constant pixels (variances ~1e-8) differ by summation order, and
    # the log-loss of such tiny probabilities with them (a GPU gave 4.11 for 3.95).
    device = ("--device", "cpu") if dtype == "float32" else ()
    out, err = in_process(run, monkeypatch, "evaluate", "m.nbgpu", d / "test.csv", "--json", "--dtype", dtype, *device,
                          cwd=tmp_path)
    assert err == ""  # no warnings either (a warning in this process is an error: filterwarnings)
    report = json.loads(out)
    # The metrics of the model's own predictions (float32 may break near-ties
    # differently from scikit-learn's float64); in float64 they are scikit-learn's.
    pred, proba = ours.predict(Xte.astype(dtype)), ours.predict_proba(Xte.astype(dtype)).astype(np.float64)
    if dtype == "float64":
        np.testing.assert_array_equal(pred, ref.predict(Xte))
        np.testing.assert_allclose(proba, ref.predict_proba(Xte), rtol=1e-9, atol=1e-15)
    assert report["rows"] == len(yte)
    assert report["accuracy"] == pytest.approx(accuracy_score(yte, pred))
    proba = proba / proba.sum(axis=1, keepdims=True)
    rel = 1e-4 if dtype == "float32" else 1e-6
    assert report["log_loss"] == pytest.approx(log_loss(yte, proba, labels=ref.classes_), rel=rel)
    p, r, f, s = precision_recall_fscore_support(yte, pred, labels=ref.classes_, zero_division=0)
    got = report["per_class"]
    np.testing.assert_allclose([got[str(c)]["precision"] for c in ref.classes_], p)
    np.testing.assert_allclose([got[str(c)]["recall"] for c in ref.classes_], r)
    np.testing.assert_allclose([got[str(c)]["f1-score"] for c in ref.classes_], f)
    np.testing.assert_array_equal(report["confusion_matrix"], confusion_matrix(yte, pred, labels=ref.classes_))


def test_svmlight_streaming_equals_one_fit_and_proba_output(digits, tmp_path, run, monkeypatch):
    d, (Xtr, ytr, Xte, yte) = digits
    in_process(run, monkeypatch, "train", d / "train.svm", "-o", "small.nbgpu", "--chunk-mb", "0.005",
               "--zero-based", "yes", "--alpha", "0.3", "--no-fit-prior", cwd=tmp_path)
    model = nbgpu.load(tmp_path / "small.nbgpu")
    ref = nbgpu.MultinomialNB(alpha=0.3, fit_prior=False).fit(Xtr, ytr)
    np.testing.assert_allclose(model.feature_count_, ref.feature_count_)
    assert model.n_features_in_ == 64 and model.fit_prior is False
    in_process(run, monkeypatch, "predict", "small.nbgpu", d / "test.svm", "--proba", "-o", "p.csv", cwd=tmp_path)
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "prediction," + ",".join(f"proba_{c}" for c in range(10))
    table = np.loadtxt(lines[1:], delimiter=",")
    np.testing.assert_array_equal(table[:, 0], ref.predict(Xte))
    np.testing.assert_allclose(table[:, 1:], ref.predict_proba(Xte), rtol=1e-5, atol=1e-300)


def test_text_corpus_workflow(tmp_path):
    rng = np.random.default_rng(0)
    topics = {"sport": "ball goal team match win", "tech": "gpu code chip data model", "food": "bread soup salt cook"}
    docs = []
    for i in range(300):
        label = list(topics)[i % 3]
        words = rng.choice(topics[label].split() + "the a of and to".split(), size=12)
        docs.append({"text": " ".join(words).upper(), "label": label})
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(x) + "\n" for x in docs[:240]))
    (tmp_path / "test.jsonl").write_text("".join(json.dumps({"text": x["text"]}) + "\n" for x in docs[240:]))
    (tmp_path / "eval.jsonl").write_text("".join(json.dumps(x) + "\n" for x in docs[240:]))
    ok("train", "train.jsonl", "-o", "text.nbgpu", "--hash-features", "4096", "--ngram-range", "1,2",
       "--chunk-mb", "0.002", cwd=tmp_path)
    info = json.loads(ok("info", "text.nbgpu", "--json", cwd=tmp_path).stdout)
    assert info["vectorizer"]["n_features"] == 4096 and info["vectorizer"]["ngram_range"] == [1, 2]
    printed = ok("predict", "text.nbgpu", "test.jsonl", cwd=tmp_path).stdout  # to stdout
    vec = HashingVectorizer(n_features=4096, ngram_range=(1, 2), alternate_sign=False, norm=None)
    ref = nbgpu.MultinomialNB().fit(vec.transform([x["text"] for x in docs[:240]]), [x["label"] for x in docs[:240]])
    expected = ref.predict(vec.transform([x["text"] for x in docs[240:]]))
    assert printed.split() == expected.tolist()
    text = ok("evaluate", "text.nbgpu", "eval.jsonl", "--confusion-png", "cm.png", cwd=tmp_path).stdout
    assert "accuracy: " in text and "food" in text
    assert (tmp_path / "cm.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_subcommand_prints_help_and_info_lists_versions(tmp_path):
    result = ok(cwd=tmp_path)
    assert "usage: nbgpu" in result.stdout and "train" in result.stdout and "compare" in result.stdout
    info = json.loads(ok("info", "--json", cwd=tmp_path).stdout)
    assert info["nbgpu"] == nbgpu.__version__ and "scikit-learn" in info


def test_compare_matches_scikit_learn(tmp_path):
    out = json.loads(ok("compare", "--repeats", "1", "--json", "--device", "auto", cwd=tmp_path).stdout)
    rows = out["results"]
    assert {(r["dataset"], r["model"]) for r in rows} == {
        (d, m) for d in ("iris", "wine", "breast_cancer", "digits") for m in MODELS.values()
    }
    for r in rows:
        assert r["agreement"] == 1.0, r
        assert r["nbgpu"]["accuracy"] == r["sklearn"]["accuracy"]
        assert r["nbgpu"]["fit_s"] > 0 and r["sklearn"]["predict_s"] > 0
    from nbgpu._app.compare import format_table

    table = format_table(rows).splitlines()
    assert "acc nbgpu" in table[0] and len(table) == 2 + len(rows)


def test_bench_runs_and_writes_its_results(tmp_path, stdlib_docstrings):
    # Its real text is the standard library's docstrings from a corpus file: the documents (and
    # data names) of a run without one, less the 7 CPU seconds of parsing the sources again
    # (tests/test_bench.py and tests/test_datasets.py take that path).
    corpus = tmp_path / "python-stdlib.jsonl"
    corpus.write_text("".join(json.dumps({"text": t, "label": str(c)}) + "\n" for t, c in zip(*stdlib_docstrings)))
    out = tmp_path / "bench.json"
    result = nbgpu_cli(
        "bench", "--size", "tiny", "--repeats", "1", "--models", "MultinomialNB,GaussianNB",
        "--backends", "sklearn,nbgpu-cpu", "--corpus", corpus, "--json", str(out), "--png", "none", "--details",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    results = json.loads(out.read_text())
    assert {r["data"] for r in results["rows"]} >= {"text", "gaussian", "python-stdlib counts64"}
    rows = {(r["model"], r["op"], r["backend"]): r for r in results["rows"]}
    assert len(rows) == 2 * 2 * 2
    for (model, op, backend), r in rows.items():
        assert len(r["times_s"]) == 1 and r["median_s"] > 0
        assert r["speedup_vs_sklearn"] == pytest.approx(rows[(model, op, "sklearn")]["median_s"] / r["median_s"])
        assert r["target"] is None  # targets belong to --size full only
    assert "cpu_targets_met" not in results
    assert "| MultinomialNB | fit | nbgpu-cpu |" in result.stdout  # --details: the tables
    summary = result.stdout.splitlines()[-7:]  # then the answer
    assert summary[2].startswith("MultinomialNB ") and summary[3].startswith("GaussianNB ")
    assert summary[-1] == f"raw results: {out}"


# --------------------------------------------------------------------------- #
# Bad input: one line on stderr, a non-zero status, no file left behind
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("small")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(60, 5)).astype(float)
    y = rng.integers(0, 3, size=60)
    dump_svmlight_file(X, y, str(d / "train.svm"))
    dump_svmlight_file(np.hstack([X, X]), y, str(d / "wide.svm"))
    ok("train", d / "train.svm", "-o", d / "model.nbgpu", "--zero-based", "yes", "-q", cwd=d)
    return d


def _bad_cases(d):
    m = d / "model.nbgpu"
    return [
        (("train", "missing.svm", "-o", "o.nbgpu"), "no such file"),
        (("train", "empty.svm", "-o", "o.nbgpu"), "is empty"),
        (("train", "junk.svm", "-o", "o.nbgpu"), "not a valid svmlight"),
        (("train", "junk.csv", "-o", "o.nbgpu"), "must be numbers"),
        (("train", d / "train.svm", "-o", "o.nbgpu", "--format", "npz"), "not a readable .npz"),
        (("train", d / "train.svm", "-o", "o.nbgpu", "--var-smoothing", "1e-3"), "--var-smoothing does not apply", 2),
        (("train", d / "train.svm", "-o", "o.nbgpu", "--alpha", "-1"), "alpha", 2),
        # Bounds checked before reading (a whole file was trained, then the save refused ngram_range).
        (("train", d / "train.svm", "-o", "o.nbgpu", "--ngram-range", "1,11"), "1 <= MIN <= MAX <= 10", 2),
        (("train", d / "train.svm", "-o", "o.nbgpu", "--chunk-mb", "1e30"), "at most 65536", 2),
        (("train", d / "train.svm", "-o", "o.nbgpu", "--classes", "0,1"), "label(s) ['2']"),
        (("train", d / "train.svm", "-o", "nodir/o.nbgpu"), "does not exist"),
        (("predict", "fake.nbgpu", d / "train.svm"), "not an nbgpu model file"),
        (("predict", "missing.nbgpu", d / "train.svm"), "no such file"),
        (("predict", m, d / "wide.svm", "-o", "o.txt"), "more features than the 5"),
        (("evaluate", m, "empty.svm"), "is empty"),
        (("train", "data.unknown", "-o", "o.nbgpu"), "cannot tell the format"),
        (("info", "fake.nbgpu"), "not an nbgpu model file"),
    ]


@pytest.fixture
def bad_files(tmp_path, monkeypatch):
    (tmp_path / "empty.svm").write_text("")
    (tmp_path / "junk.svm").write_text("hello world\n")
    (tmp_path / "junk.csv").write_text("a,b\nx,1\n")
    (tmp_path / "fake.nbgpu").write_text("not a model\n")
    (tmp_path / "data.unknown").write_text("hello\n")  # no extension, and content of no known format
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBGPU_DEBUG", raising=False)
    return tmp_path


def test_bad_inputs_give_one_line_and_leave_no_file(small, bad_files, capsys):
    for args, match, *code in _bad_cases(small):
        status = main([str(a) for a in args])
        err = capsys.readouterr().err.strip().splitlines()
        assert status == (code[0] if code else 1), args
        assert len(err) == 1 and match in err[0], (args, err)
        assert err[0].startswith(f"nbgpu {args[0]}: error: ")
    assert sorted(os.listdir(bad_files)) == ["data.unknown", "empty.svm", "fake.nbgpu", "junk.csv", "junk.svm"]


def test_bad_inputs_from_a_shell(small, bad_files):
    # The same path as a user's shell sees it: exit status, one line, no traceback.
    for index in (1, 2, 9, 11, 12):
        args, match, *_ = _bad_cases(small)[index]
        fails(*args, cwd=bad_files, match=match)
    assert sorted(os.listdir(bad_files)) == ["data.unknown", "empty.svm", "fake.nbgpu", "junk.csv", "junk.svm"]


def test_failure_midway_leaves_no_partial_output(small, tmp_path):
    # The first chunk scores fine, a later line is broken: nothing may be written.
    good = (small / "train.svm").read_text()
    (tmp_path / "late.svm").write_text(good * 20 + "1 0:oops\n")
    (tmp_path / "pred.txt").write_text("previous\n")
    fails("predict", small / "model.nbgpu", "late.svm", "-o", "pred.txt", "--chunk-mb", "0.001",
          cwd=tmp_path, match="not a valid svmlight")
    assert (tmp_path / "pred.txt").read_text() == "previous\n"
    assert sorted(os.listdir(tmp_path)) == ["late.svm", "pred.txt"]


@pytest.mark.parametrize("proba", [False, True])
def test_predictions_are_one_record_per_row_whatever_the_labels(tmp_path, capsys, proba):
    """A label holding a line break was written bare: 30 rows gave 40 lines."""
    import csv

    X = np.random.default_rng(0).integers(0, 3, size=(30, 4))
    y = np.array(["a\nb", "c,d", 'e"f', "g\r\nh", ""])[np.arange(30) % 5]
    model = nbgpu.MultinomialNB().fit(X, y)
    nbgpu.save(model, tmp_path / "q.nbgpu")
    np.savetxt(tmp_path / "q.csv", X, delimiter=",", fmt="%d")
    assert main(["predict", str(tmp_path / "q.nbgpu"), str(tmp_path / "q.csv"), *(["--proba"] if proba else [])]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out, newline="")))
    assert [r[0] for r in rows[int(proba):]] == model.predict(X).tolist()


def test_labels_are_integers_only_as_python_writes_them(tmp_path, capsys):
    """'1_0', '+10', '010' and '١٠' were all read as the class 10 and merged with '10'."""
    data = tmp_path / "L.csv"
    data.write_text("f1,label\n1,1_0\n2,10\n3,+10\n4,010\n5,2\n6,\u0661\u0660\n", encoding="utf-8")
    assert main(["train", str(data), "-o", str(tmp_path / "m.nbgpu"), "--model", "multinomial", "-q"]) == 0
    assert nbgpu.load(tmp_path / "m.nbgpu").classes_.tolist() == sorted(["1_0", "10", "+10", "010", "2", "\u0661\u0660"])
    data.write_text("f1,label\n1,10\n2,2\n3,-3\n")
    assert main(["train", str(data), "-o", str(tmp_path / "i.nbgpu"), "--model", "multinomial", "-q"]) == 0
    assert nbgpu.load(tmp_path / "i.nbgpu").classes_.tolist() == [-3, 2, 10]
    # Evaluating integer classes: '010' is not the class 10 either.
    (tmp_path / "t.csv").write_text("f1,label\n1,010\n2,10\n")
    assert main(["evaluate", str(tmp_path / "i.nbgpu"), str(tmp_path / "t.csv"), "--json", "-q"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 2 and report["unseen_classes"] == {"010": 1}, report


def test_classes_written_as_numbers_match_numeric_labels(tmp_path, capsys):
    """--classes 1.0,2.0 with svmlight's labels 1.0 and 2.0 was refused: "label(s) ['1', '2']
    the model does not know (its classes: ['1.0', '2.0'])"."""
    data = tmp_path / "c.svm"
    data.write_text("1.0 1:1 2:3\n2.0 1:2 3:1\n1.0 2:2\n")
    assert main(["train", str(data), "-o", str(tmp_path / "m.nbgpu"), "--classes", "1.0,2.0", "-q"]) == 0
    model = nbgpu.load(tmp_path / "m.nbgpu")
    assert model.classes_.tolist() == ["1.0", "2.0"] and model.class_count_.tolist() == [2, 1]
    assert main(["train", str(data), "-o", str(tmp_path / "n.nbgpu"), "--classes", "1.0,3.0", "-q"]) == 1
    assert "label(s) ['2']" in capsys.readouterr().err


def test_predict_proba_is_valid_csv_for_any_label(tmp_path, capsys):
    import csv

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(30, 4))
    y = np.array(["a,b", 'c"d', "e"])[np.arange(30) % 3]
    model = nbgpu.MultinomialNB().fit(X, y)
    nbgpu.save(model, tmp_path / "q.nbgpu")
    np.savetxt(tmp_path / "q.csv", X, delimiter=",", fmt="%d")
    assert main(["predict", str(tmp_path / "q.nbgpu"), str(tmp_path / "q.csv"), "--proba"]) == 0
    rows = list(csv.reader(capsys.readouterr().out.splitlines()))
    assert rows[0] == ["prediction", "proba_a,b", 'proba_c"d', "proba_e"]
    assert [r[0] for r in rows[1:]] == model.predict(X).tolist()
    np.testing.assert_allclose(np.array([r[1:] for r in rows[1:]], dtype=float), model.predict_proba(X), rtol=1e-5)
