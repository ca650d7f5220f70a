"""``nbgpu bench``: says what it builds, writes into the folder it names, never
replaces earlier results unasked, and times real text when a corpus is there."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbgpu._app import bench

QUICK = ["--size", "tiny", "--repeats", "1", "--models", "MultinomialNB", "--backends", "sklearn,nbgpu-cpu"]


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Run from an empty folder with no corpus and no results folder set."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("NBGPU_CORPORA", raising=False)
    monkeypatch.setenv("NBGPU_BENCH_DIR", str(tmp_path / "default-results"))
    return cwd


def test_results_go_to_the_named_folder_and_never_over_earlier_ones(elsewhere, tmp_path, capsys):
    out = tmp_path / "results"
    for _ in range(2):
        assert bench.main([*QUICK, "--data", "synthetic", "--out", str(out), "--png", "none"]) == 0
    captured = capsys.readouterr()
    files = sorted(out.glob("*.json"))
    assert len(files) == 2  # the second run did not replace the first
    assert list(elsewhere.iterdir()) == []  # nothing in the current folder
    assert f"results: {out}" in captured.err
    assert "text corpus (synthetic): 2,000 docs × 4,096 features, ~50 tokens/doc, 5 classes" in captured.err
    assert "median of 1 interleaved repeats" in captured.err and "threads: " in captured.err
    results = json.loads(files[0].read_text())
    assert results["data"]["text"]["label"].startswith("text corpus (synthetic)")
    assert "text corpus (synthetic)" in captured.out  # the table names its data


def test_default_folder_is_announced(elsewhere, tmp_path, capsys):
    assert bench.main([*QUICK, "--data", "synthetic", "--png", "none"]) == 0
    folder = tmp_path / "default-results"
    assert len(list(folder.glob("nbgpu-bench-tiny-*.json"))) == 1
    assert f"results: {folder}" in capsys.readouterr().err


def test_an_existing_file_is_replaced_only_when_asked(elsewhere, tmp_path, capsys):
    target = tmp_path / "mine.json"
    target.write_text("earlier results")
    assert bench.main([*QUICK, "--data", "synthetic", "--json", str(target), "--png", "none"]) == 2
    assert "exists; pass --overwrite" in capsys.readouterr().err
    assert target.read_text() == "earlier results"
    assert bench.main([*QUICK, "--data", "synthetic", "--json", str(target), "--png", "none", "--overwrite"]) == 0
    assert json.loads(target.read_text())["rows"]


def _corpus_file(path, n=600, seed=0):
    """A small labelled JSON-lines corpus: three topics over a shared vocabulary."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    labels = ["alpha", "beta", "gamma"]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            c = i % 3
            p = np.ones(len(words))
            p[c * 100 : (c + 1) * 100] += 4.0
            text = " ".join(rng.choice(words, size=rng.integers(5, 40), p=p / p.sum()))
            f.write(json.dumps({"text": text, "label": labels[c]}) + "\n")
    return path


def test_real_text_rows_use_the_corpus_and_say_so(elsewhere, tmp_path, capsys):
    corpus = _corpus_file(tmp_path / "pydoc-en.jsonl")
    argv = [*QUICK, "--data", "real", "--corpus", str(tmp_path), "--inputs", "tfidf32,counts64"]
    assert bench.main([*argv, "--out", str(tmp_path / "r"), "--png", "none"]) == 0
    captured = capsys.readouterr()
    assert f"real text: {corpus}" in captured.err
    (path,) = (tmp_path / "r").glob("*.json")
    results = json.loads(path.read_text())
    assert set(results["data"]) == {"pydoc-en tfidf32", "pydoc-en counts64"}
    for data in results["data"].values():
        assert data["real"] and "(real text): 480 train / 120 validation docs" in data["label"]
    assert results["data"]["pydoc-en counts64"]["dtype"] == "int64"
    assert not results["data"]["pydoc-en tfidf32"]["sorted_indices"]
    ours = [r for r in results["rows"] if r["backend"] == "nbgpu-cpu"]
    assert len(ours) == 4 and all(r["same_predictions"] for r in ours)
    assert "(real text)" in captured.out


def test_real_text_rows_use_the_standard_library_without_a_corpus(elsewhere, tmp_path, capsys):
    """No corpus built (a fresh install): the real-text rows run on the
    docstrings of this Python's standard library, read from its sources."""
    assert bench.main([*QUICK, "--data", "real", "--inputs", "counts64", "--out", str(tmp_path / "r"), "--png", "none"]) == 0
    captured = capsys.readouterr()
    assert "real text: docstrings of this Python's standard library" in captured.err
    (path,) = (tmp_path / "r").glob("*.json")
    results = json.loads(path.read_text())
    assert set(results["data"]) == {"python-stdlib counts64"}
    ours = [r for r in results["rows"] if r["backend"] == "nbgpu-cpu"]
    assert ours and all(r["same_predictions"] for r in ours)
    assert bench.main([*QUICK, "--corpus", str(tmp_path / "nothing-here")]) == 2


def test_the_standard_library_corpus():
    from nbgpu._app.bench import stdlib_corpus

    texts, labels = stdlib_corpus(limit=500)
    assert len(texts) == len(labels) == 500 and len(set(texts)) == 500
    assert all(isinstance(t, str) and len(t) >= 40 for t in texts)
    assert len(np.unique(labels)) >= 10
    again, _ = stdlib_corpus(limit=500)
    assert again == texts  # the same corpus on every run


@pytest.mark.parametrize("library", ["sklearn", "nbgpu-cpu"])
def test_streaming_and_model_file_helpers(library, tmp_path):
    X, y = bench.zipf_corpus(300, 2**10, 20, 4, seed=3)
    whole = bench._estimator(library, "MultinomialNB").fit(X, y)
    streamed = bench._estimator(library, "MultinomialNB")
    predicted = bench.stream(streamed, bench.row_chunks(X, y, 10), np.unique(y), X[:1])
    np.testing.assert_allclose(np.asarray(streamed.feature_count_), np.asarray(whole.feature_count_))
    np.testing.assert_array_equal(predicted, whole.predict(X[:1]))
    path = bench.save_model(library, whole, tmp_path)
    np.testing.assert_array_equal(bench.load_and_predict(library, path, X), whole.predict(X))
