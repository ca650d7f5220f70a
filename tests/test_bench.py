"""``nbgpu bench``: says what it builds, writes into the folder it names, never
replaces earlier results unasked, times real text when a corpus is there, and
ends with its answer: a summary of at most 12 lines, the tables on request."""

from __future__ import annotations

import json
import tempfile

import numpy as np
import pytest

from nbgpu._app import bench
from nbgpu.datasets import make_zipf_text

QUICK = ["--size", "tiny", "--repeats", "1", "--models", "MultinomialNB", "--backends", "sklearn,nbgpu-cpu"]


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """Run from an empty folder with no corpus and no results folder set."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("NBGPU_CORPORA", raising=False)
    monkeypatch.setenv("NBGPU_BENCH_DIR", str(tmp_path / "default-results"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where an unasked chart goes
    (tmp_path / "tmp").mkdir()
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
    assert "MultinomialNB" in captured.out.splitlines()[-4]  # the summary, last


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
    assert "yes, all 2 data sets" in captured.out


def test_real_text_rows_use_the_standard_library_without_a_corpus(elsewhere, tmp_path, capsys, monkeypatch,
                                                                  stdlib_docstrings):
    """No corpus built (a fresh install): the real-text rows run on the
    docstrings of this Python's standard library, read from its sources."""
    # The corpus the loader gives (test_the_standard_library_corpus), built once for the suite.
    texts, labels = stdlib_docstrings
    monkeypatch.setattr(bench, "load_stdlib_docstrings", lambda *, limit=None: (texts[:limit], labels[:limit]))
    assert bench.main([*QUICK, "--data", "real", "--inputs", "counts64", "--out", str(tmp_path / "r"), "--png", "none"]) == 0
    captured = capsys.readouterr()
    assert "real text: docstrings of this Python's standard library" in captured.err
    (path,) = (tmp_path / "r").glob("*.json")
    results = json.loads(path.read_text())
    assert set(results["data"]) == {"python-stdlib counts64"}
    ours = [r for r in results["rows"] if r["backend"] == "nbgpu-cpu"]
    assert ours and all(r["same_predictions"] for r in ours)
    assert bench.main([*QUICK, "--corpus", str(tmp_path / "nothing-here")]) == 2


def test_the_standard_library_corpus(stdlib_docstrings):
    from nbgpu._app.bench import stdlib_corpus
    from nbgpu.datasets import load_stdlib_docstrings

    # The bench's corpus is nbgpu.datasets' (its `limit` and its sameness on every run:
    # tests/test_datasets.py); its first 500 documents as the bench reads them.
    assert stdlib_corpus is load_stdlib_docstrings
    texts, labels = stdlib_docstrings[0][:500], stdlib_docstrings[1][:500]
    assert len(texts) == len(labels) == 500 and len(set(texts)) == 500
    assert all(isinstance(t, str) and len(t) >= 40 for t in texts)
    assert len(np.unique(labels)) >= 10


@pytest.mark.parametrize("library", ["sklearn", "nbgpu-cpu"])
def test_streaming_and_model_file_helpers(library, tmp_path):
    X, y = make_zipf_text(300, 2**10, tokens_per_doc=20, n_classes=4, random_state=3)
    whole = bench._estimator(library, "MultinomialNB").fit(X, y)
    streamed = bench._estimator(library, "MultinomialNB")
    predicted = bench.stream(streamed, bench.row_chunks(X, y, 10), np.unique(y), X[:1])
    np.testing.assert_allclose(np.asarray(streamed.feature_count_), np.asarray(whole.feature_count_))
    np.testing.assert_array_equal(predicted, whole.predict(X[:1]))
    path = bench.save_model(library, whole, tmp_path)
    np.testing.assert_array_equal(bench.load_and_predict(library, path, X), whole.predict(X))


# ---- the report --------------------------------------------------------- #
def _row(model, op, backend, data, speedup, *, same=True, target=None):
    return {"model": model, "op": op, "backend": backend, "data": data, "median_s": 0.01, "min_s": 0.009,
            "speedup_vs_sklearn": speedup, "speedup_vs_sklearn_of_min": speedup, "bandwidth_GBps": 1.0,
            "fit_peak_extra_bytes": None, "same_predictions": None if backend == "sklearn" else same,
            "target": target}


def _results(*, gpu=False, size="small", targets=False):
    """What a run on five models and two text data sets leaves, with known speed-ups."""
    backends = ["sklearn", "nbgpu-cpu", *(["nbgpu-gpu"] if gpu else [])]
    data = {key: {"label": f"{key} data", **({"real": True} if key == "corpus counts64" else {})}
            for key in ("text", "corpus counts64", "categorical", "gaussian")}
    rows = []
    for model in bench.MODELS:
        for key in [bench.DATA_OF[model], *(["corpus counts64"] if model in bench.TEXT_MODELS else [])]:
            for op in ("fit", "predict"):
                for b in backends:
                    speedup = 1.0 if b == "sklearn" else 3.0 if key == "text" else 0.5 if b == "nbgpu-cpu" else 40.0
                    synthetic = key == bench.DATA_OF[model]  # the speed goals are set on the synthetic data
                    target = bench.CPU_TARGETS[model, op] if targets and synthetic and b == "nbgpu-cpu" else None
                    rows.append(_row(model, op, b, key, speedup, same=(model, key) != ("BernoulliNB", "text"),
                                     target=target))
    devices = {"sklearn": "A CPU", "nbgpu-cpu": "A CPU", **({"nbgpu-gpu": "A GPU"} if gpu else {})}
    versions = {"python": "3.x", "nbgpu": "0.x", "numpy": "2.x", "scipy": "1.x", "scikit-learn": "1.x"}
    return {"size": size, "repeats": 5, "machine": "host", "system": "Linux x86_64", "gpu_found": gpu,
            "devices": devices, "threads": 4, "versions": versions, "data": data, "rows": rows}


def test_the_summary_answers_in_at_most_12_lines():
    lines = bench.summary(_results(gpu=True), files=["chart: /somewhere/c.png"])
    assert len(lines) <= 12
    assert "median of 5 runs; over data sets: median (range)" in lines[0]
    assert lines[1].split() == ["fit", "(CPU)", "predict", "(CPU)", "fit", "(GPU)", "predict", "(GPU)", "same",
                                "predictions"]
    by_model = {line.split()[0]: line for line in lines[2:7]}
    assert list(by_model) == list(bench.MODELS)
    # Two data sets: the median of 3× and 0.5×, then the range; one data set: its figure.
    assert by_model["MultinomialNB"].split()[1:5] == ["1.8×", "(0.5–3.0×)", "1.8×", "(0.5–3.0×)"]
    assert by_model["MultinomialNB"].endswith("yes, all 2 data sets")
    assert by_model["BernoulliNB"].endswith("NO: text (CPU), text (GPU)")
    assert by_model["GaussianNB"].split()[1:5] == ["0.5×", "0.5×", "40×", "40×"]
    assert lines[-3] == "devices: CPU A CPU, 4 threads used; GPU A GPU"
    assert lines[-2].startswith("machine: host, Linux x86_64; Python 3.x, nbgpu 0.x, scikit-learn 1.x")
    assert lines[-1] == "chart: /somewhere/c.png"


def test_the_summary_says_which_speed_goals_were_missed():
    lines = bench.summary(_results(size="full", targets=True))
    (goals,) = [line for line in lines if line.startswith("speed goals")]
    assert goals.startswith("speed goals at this size (CPU): 4 of 10 met; missed: MultinomialNB fit 3.0× (goal 5×), "
                            "ComplementNB fit 3.0× (goal 5×), CategoricalNB fit 0.5× (goal 5×)")
    assert lines[-2] == "devices: CPU A CPU, 4 threads used; no GPU found (no usable cupy/GPU)"
    assert len(lines) <= 12


def test_the_detailed_table_has_no_empty_column():
    plain = bench.format_table(_results()).splitlines()
    header = next(line for line in plain if line.startswith("| model"))
    assert "target" not in header and "fit peak extra" not in header
    assert header.count("|") - 1 == len(bench._COLUMNS) - 2
    assert all(line.count("|") == header.count("|") for line in plain if line.startswith("|"))
    full = bench.format_table(_results(size="full", targets=True))
    assert "| target |" in full and "| >= 5x |" in full


def test_the_chart_is_readable():
    pytest.importorskip("matplotlib")
    fig = bench.chart(_results(gpu=True))
    fig.canvas.draw()
    for ax, title in zip(fig.axes, ("fit", "predict")):
        assert ax.get_title() == title
        assert [t.get_text() for t in ax.get_xticklabels()] == [m.removesuffix("NB") for m in bench.MODELS]
        ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        assert ticks and all(t.endswith("×") and "10^" not in t and "$" not in t for t in ticks), ticks
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_a_chart_is_written_unasked_only_to_the_temporary_folder(elsewhere, tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    monkeypatch.delenv("NBGPU_BENCH_DIR")
    assert bench.main([*QUICK, "--data", "synthetic", "--quiet"]) == 0
    (chart,) = (tmp_path / "tmp").glob("nbgpu-bench-tiny-*.png")
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"chart: {chart}" and len(out) <= 12
    assert list(elsewhere.iterdir()) == []


def test_without_scikit_learn_the_summary_gives_times():
    results = _results()
    results["rows"] = [{**r, "speedup_vs_sklearn": None, "same_predictions": None}
                       for r in results["rows"] if r["backend"] != "sklearn"]
    del results["devices"]["sklearn"]
    lines = bench.summary(results)
    assert lines[2].split()[:5] == ["MultinomialNB", "10.0", "ms", "10.0", "ms"] and lines[2].endswith("n/a")
    assert "without the sklearn backend" in lines[-3]
