"""``nbgpu train --model auto`` (the default): family and alpha chosen by
5-fold cross-validation from the statistics, in the training pass."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

import nbgpu
from nbgpu._app import cli, model_choice
from nbgpu._app.model_choice import ALPHAS, FOLDS


def run(*args, capsys):
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _metadata(path):
    from nbgpu._interop.model_files import read_model_file

    return read_model_file(path).header["metadata"]


def _counts(n=600, d=40, k=3, seed=0, skew=False):
    """Count rows of k classes; ``skew``: class sizes 8:1:1 of close word
    distributions and rows of varied length, where MultinomialNB beats
    ComplementNB clearly."""
    rng = np.random.default_rng(seed)
    if skew:
        sizes = [n * 8 // 10, n // 10, n // 10]
        base = rng.dirichlet(np.full(d, 1.0))
        theta = np.stack([base * rng.lognormal(0, 0.25, d) for _ in sizes])
        theta /= theta.sum(axis=1, keepdims=True)
    else:
        sizes = [n // k] * k
        theta = rng.dirichlet(np.full(d, 0.3), size=k)
    y = np.concatenate([np.full(s, c) for c, s in enumerate(sizes)])
    rng.shuffle(y)
    lengths = rng.integers(5, 80, size=y.size) if skew else np.full(y.size, 20)
    X = np.stack([rng.multinomial(m, theta[c]) for c, m in zip(y, lengths)]).astype(np.float64)
    return X, y


def _explicit_search(X, y, *, sample_rows=model_choice.SAMPLE_ROWS):
    """The search done with the library, as a user would: per-fold models
    (rows mod 5), each candidate refitted on every fold but f, scored on all
    of fold f's rows (the test data are smaller than the sample)."""
    assert X.shape[0] // FOLDS <= sample_rows
    fold = np.arange(X.shape[0]) % FOLDS
    grid = [("MultinomialNB", {"alpha": a}) for a in ALPHAS]
    grid += [("ComplementNB", {"alpha": a}) for a in ALPHAS]
    grid += [("BernoulliNB", {"alpha": a}) for a in ALPHAS]
    means = []
    for family, params in grid:
        scores = []
        for f in range(FOLDS):
            model = getattr(nbgpu, family)(**params).fit(X[fold != f], y[fold != f])
            scores.append(np.mean(model.predict(X[fold == f]) == y[fold == f]))
        means.append(np.mean(scores))
    means = np.array(means)
    return grid[int(np.flatnonzero(means == means.max())[0])], means


@pytest.mark.parametrize("skew", [False, True])
def test_choice_equals_explicit_search(tmp_path, capsys, skew):
    X, y = _counts(skew=skew)
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", "--chunk-mb", "0.002",
                         capsys=capsys)
    assert status == 0, err
    (family, params), means = _explicit_search(X, y)
    model = nbgpu.load(tmp_path / "m.nbgpu")
    assert type(model).__name__ == family
    assert model.alpha == params["alpha"]
    assert getattr(model, "norm", False) == params.get("norm", False)
    # No refit: the saved model is the chosen one on all the rows.
    ref = getattr(nbgpu, family)(**params).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), rtol=1e-9, atol=1e-12)
    # The fold scores are those of the explicit search.
    search = _metadata(tmp_path / "m.nbgpu")["model_search"]
    np.testing.assert_allclose([c["mean"] for c in search["candidates"][:len(means)]], means, atol=1e-6)
    assert search["rows_scored"] == X.shape[0]
    assert search["chosen"] == {"estimator": family, **params}
    # The fold scores are printed, the chosen candidate marked.
    assert "5-fold cross-validation" in err and "±" in err
    marked = [line for line in err.splitlines() if line.startswith(" * ")]
    assert len(marked) == 1 and marked[0].split()[1].startswith(family)
    assert f"chose {model_choice.Candidate(family, params).name}" in err


def test_one_family_clearly_wins():
    """The data of ``skew=True`` are those where one family clearly wins."""
    X, y = _counts(skew=True)
    (family, _), means = _explicit_search(X, y)
    assert family == "MultinomialNB"
    n = len(ALPHAS)
    assert means[:n].max() > means[n:].max() + 0.02


def test_text_default_is_auto(tmp_path, capsys):
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(50)]
    with open(tmp_path / "t.jsonl", "w") as f:
        for i in range(200):
            label = ["a", "b"][i % 2]
            text = " ".join(rng.choice(words[:30] if label == "a" else words[20:], size=8))
            f.write(json.dumps({"text": text, "label": label}) + "\n")
    status, _, err = run("train", tmp_path / "t.jsonl", "-o", tmp_path / "m.nbgpu", capsys=capsys)
    assert status == 0, err
    assert "chose" in err
    status, out, err = run("info", tmp_path / "m.nbgpu", capsys=capsys)
    assert status == 0, err
    assert "model_search:" in out and "5-fold cross-validation" in out and "held-out rows" in out
    status, out, _ = run("info", tmp_path / "m.nbgpu", "--json", capsys=capsys)
    assert json.loads(out)["model_search"]["rows_scored"] == 200


@pytest.mark.parametrize(("flags", "expected"), [
    (["--model", "complement"], ("ComplementNB", 1.0)),
    (["--alpha", "0.5"], ("MultinomialNB", 0.5)),  # --alpha alone: MultinomialNB, as before auto
    (["--model", "multinomial", "--alpha", "0.2"], ("MultinomialNB", 0.2)),
])
def test_explicit_model_wins(tmp_path, capsys, flags, expected):
    X, y = _counts(skew=True)
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", *flags, capsys=capsys)
    assert status == 0, err
    assert "cross-validation" not in err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    assert (type(model).__name__, model.alpha) == expected
    assert "model_search" not in _metadata(tmp_path / "m.nbgpu")


def test_auto_with_fixed_parameters(tmp_path, capsys):
    X, y = _counts(skew=True)
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    # --norm keeps ComplementNB with that norm; --alpha with --model auto fixes alpha.
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", "--model", "auto", "--norm",
                         "--alpha", "0.3", capsys=capsys)
    assert status == 0, err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    assert (type(model).__name__, model.alpha, model.norm) == ("ComplementNB", 0.3, True)
    # Parameters both families take apply to every candidate and the result.
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "p.nbgpu", "--class-prior", "0.2,0.3,0.5",
                         "--model", "auto", capsys=capsys)
    assert status == 0, err
    np.testing.assert_allclose(nbgpu.load(tmp_path / "p.nbgpu").class_prior, [0.2, 0.3, 0.5])


@pytest.mark.parametrize(("flags", "match"), [
    (["--var-smoothing", "1e-3"], "--var-smoothing does not apply to --model auto"),
    (["--binarize", "0.5"], "--binarize does not apply to --model auto"),
    (["--model", "auto", "--alpha", "-1"], "alpha"),
])
def test_auto_refuses_flags_of_other_models(tmp_path, capsys, flags, match):
    X, y = _counts()
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", *flags, capsys=capsys)
    assert status == 2
    assert match in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m.nbgpu").exists()


def _measurements(path, n=120, negative_at=0):
    rng = np.random.default_rng(2)
    y = np.arange(n) % 2
    # Whole numbers but one negative value: the negative value is what says "not counts".
    X = np.round(rng.normal(loc=y[:, None] * 2.0 + 5.0, scale=1.0, size=(n, 3)))
    X[negative_at, 0] = -1.5
    with open(path, "w") as f:
        f.write("a,b,c,label\n")
        for row, label in zip(X, y):
            f.write(",".join(f"{v:.4f}" for v in row) + f",{label}\n")
    return np.round(X, 4), y


@pytest.mark.parametrize("negative_at", [0, 110])  # in the first chunk, or after counts were fitted
def test_not_counts_fall_back_to_gaussian(tmp_path, capsys, negative_at):
    X, y = _measurements(tmp_path / "m.csv", negative_at=negative_at)
    status, _, err = run("train", tmp_path / "m.csv", "-o", tmp_path / "m.nbgpu", "--chunk-mb", "0.001",
                         capsys=capsys)
    assert status == 0, err
    assert "negative feature value (-1.5)" in err and "GaussianNB" in err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    ref = nbgpu.GaussianNB().fit(X, y)
    np.testing.assert_allclose(model.theta_, ref.theta_)
    # A flag GaussianNB does not take is refused, naming it.
    status, _, err = run("train", tmp_path / "m.csv", "-o", tmp_path / "n.nbgpu", "--model", "auto", "--norm",
                         capsys=capsys)
    assert status == 2 and "GaussianNB, which does not take --norm" in err


def test_quiet_prints_nothing(tmp_path, capsys):
    X, y = _counts()
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", "-q", capsys=capsys)
    assert status == 0 and err == ""


def test_late_classes_and_tiny_files(tmp_path, capsys):
    """A class that appears in the last chunk only; a file of fewer rows than folds."""
    X, y = _counts(n=300)
    y[-5:] = 7
    dump_svmlight_file(X, y, str(tmp_path / "late.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "late.svm", "-o", tmp_path / "m.nbgpu", "--chunk-mb", "0.002",
                         capsys=capsys)
    assert status == 0, err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    np.testing.assert_array_equal(model.classes_, [0, 1, 2, 7])
    np.testing.assert_allclose(model.feature_count_, nbgpu.MultinomialNB().fit(X, y).feature_count_)
    dump_svmlight_file(X[:3], y[:3], str(tmp_path / "tiny.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "tiny.svm", "-o", tmp_path / "t.nbgpu", capsys=capsys)
    assert status == 0, err
    np.testing.assert_array_equal(nbgpu.load(tmp_path / "t.nbgpu").classes_, np.unique(y[:3]))
    assert _metadata(tmp_path / "t.nbgpu")["model_search"]["rows_scored"] == 3


@pytest.mark.parametrize("step", [1000, 100, 7])
def test_sample_is_uniform_bounded_and_the_same_however_the_stream_is_cut(step):
    sample = model_choice._Sample(50)
    for start in range(0, 1000, step):
        rows = np.arange(start, min(start + step, 1000))
        sample.add(sp.csr_matrix(rows[:, None].astype(float)), rows, np.arange(rows.size), model_choice.row_keys(start, rows.size))
    assert sample.rows == 50
    np.testing.assert_array_equal(sample.X.toarray().ravel(), sample.y)
    assert sample.y.min() < 300 and sample.y.max() > 700  # not the first rows only
    assert np.all(np.diff(sample.y) > 0)  # in stream order
    keys = model_choice.row_keys(0, 1000)
    assert np.unique(keys).size == 1000
    np.testing.assert_array_equal(sample.y, np.sort(np.argsort(keys)[:50]))  # the 50 rows of least key


def test_narrower_later_chunks_take_one_pass(tmp_path, capsys):
    """svmlight chunks whose highest feature index falls after the first
    chunk keep the width of the fold models: no second pass."""
    X, y = _counts(n=300)
    X[:30, -1] = 3  # the last feature appears in the first chunk only
    X[30:, -1] = 0
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", "--chunk-mb", "0.002",
                         capsys=capsys)
    assert status == 0, err
    assert "second pass" not in err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    np.testing.assert_allclose(model.feature_count_, nbgpu.MultinomialNB().fit(X, y).feature_count_)


def test_passes_are_counted_to_a_third(tmp_path, capsys):
    """A second pass for a wider svmlight chunk, then values that are not
    counts: GaussianNB in a third pass, and the summary says so."""
    rng = np.random.default_rng(4)
    n = 120
    y = np.arange(n) % 2
    X = np.zeros((n, 10))
    X[:, :5] = rng.integers(1, 4, size=(n, 5))
    X[60:, 9] = 1.0  # wider from row 60
    X[110, 0] = -1.5  # not counts, found after counts were fitted
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "train.svm", "-o", tmp_path / "m.nbgpu", "--chunk-mb", "0.0005",
                         capsys=capsys)
    assert status == 0, err
    assert "second pass" in err and "GaussianNB" in err
    assert "three passes" in err
    np.testing.assert_allclose(nbgpu.load(tmp_path / "m.nbgpu").theta_, nbgpu.GaussianNB().fit(X, y).theta_)


def test_a_fold_whose_columns_no_other_fold_saw(tmp_path):
    # Five rows, so each fold holds one: a held-out row may use only columns that no other
    # row uses (their sums have no entries; numpy's bincount of nothing is int64, and the
    # weights of such columns were once refused as "not inexact").
    path = tmp_path / "tiny.svmlight"
    path.write_bytes(b"1 3:2.5\n0\n2 0:3 3:1 5:2\n1 2:2\n0 4:1 5:1\n")
    model = tmp_path / "tiny.nbgpu"
    assert cli.main(["train", str(path), "--format", "svmlight", "-o", str(model), "-q", "--n-features", "64"]) == 0
    assert nbgpu.load(model).predict(sp.csr_matrix((1, 64))).shape == (1,)
