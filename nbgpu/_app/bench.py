"""``nbgpu bench``: nbgpu on the CPU and GPU against scikit-learn, same data.

It times ``fit`` and ``predict`` of every model on every backend side by side in one process: on
synthetic data of a size preset (``--size full``: the sizes nbgpu's CPU speed goals are set at,
``--size gpu``: a corpus of >= 1e8 stored values), on a real labelled text corpus vectorised the way
people do (``INPUT_KINDS``) and, with ``--data streaming``, on a wide hashed model streamed in chunks
and loaded from a file. It ends with its answer (:func:`summary`): per model, how many times faster
than scikit-learn ``fit`` and ``predict`` are on each backend, whether the predictions were
scikit-learn's, the devices and the machine; ``--details`` adds a table per data set (median and
minimum times, achieved bandwidth: bytes of ``X`` read once / time, the memory a fit takes). Data are
built outside the timers; GPU calls are synchronised before the clock stops; the backends' repeats are
interleaved (sklearn, nbgpu, sklearn, ...) so that a noisy machine disturbs them alike.

The real corpora are JSON lines ``{"text": ..., "label": ...}`` (a checkout of the repository builds
larger ones), shuffled so that the first documents are a fair sample; where none is found, the
docstrings of the running Python's standard library stand in.

A chart (PNG, where matplotlib is installed) is written by default, in the temporary folder unless
``--png`` or ``--out`` says where; the raw results (JSON) are kept only where asked: in the folder
named by ``--out`` (else ``$NBGPU_BENCH_DIR``, if set), under names that carry the size and the time
of the run, or in the file named by ``--json``; an existing file is replaced only with ``--overwrite``."""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import gc
import importlib
import json
import os
import pickle
import platform
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import nbgpu

from .._array.devices import device_name as _device_name
from .._array.devices import gpu_array_like, gpu_versions, host_to_like, timed_runs
from .._array.namespace import to_numpy
from .._array.threads import n_threads
from .._interop.atomic_files import atomic_output
from ..datasets import _BENCH_PREDICTED_DOCS, _BENCH_SIZES, load_stdlib_docstrings, make_bench_data

# ---- sizes ------------------------------------------------------------- #
# The data of each --size and kind: nbgpu.datasets.make_bench_data's presets, the arguments of its make_*.
SIZES = _BENCH_SIZES
# Documents of the real corpus used per size (None: all of it).
REAL_DOCS = {"tiny": 4_000, "small": None, "full": None, "gpu": None}
# The wide model's corpus (make_bench_data("wide")): streamed in CHUNKS row chunks but its last
# VALIDATION_DOCS rows, which are predicted.
VALIDATION_DOCS = _BENCH_PREDICTED_DOCS
CHUNKS = (1, 10, 100)
MODELS = ("MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "GaussianNB")
TEXT_MODELS = MODELS[:3]
DATA_OF = {**dict.fromkeys(TEXT_MODELS, "text"), "CategoricalNB": "categorical", "GaussianNB": "gaussian"}
DATA_SETS = ("synthetic", "real", "streaming")
BACKENDS = ("sklearn", "nbgpu-cpu", "nbgpu-gpu")
RESULTS_ENV = "NBGPU_BENCH_DIR"  # the results folder where --out is not given
# nbgpu's CPU speed goals at --size full: scikit-learn time / nbgpu-CPU time.
CPU_TARGETS = {
    ("MultinomialNB", "fit"): 5.0, ("MultinomialNB", "predict"): 2.0,
    ("ComplementNB", "fit"): 5.0, ("ComplementNB", "predict"): 2.0,
    ("BernoulliNB", "fit"): 3.0, ("BernoulliNB", "predict"): 1.5,
    ("CategoricalNB", "fit"): 5.0, ("CategoricalNB", "predict"): 5.0,
    ("GaussianNB", "fit"): 1.5, ("GaussianNB", "predict"): 20.0,
}
DEFAULT_CORPUS = "pydoc-en"
STDLIB_CORPUS = "python-stdlib"  # the corpus every installation has (load_stdlib_docstrings)
# Where benchmarks/corpora.py puts the corpora (its --out and $NBGPU_CORPORA).
CORPORA_ENV = "NBGPU_CORPORA"
REPOSITORY_CORPORA = Path("benchmarks") / ".corpora"
INPUT_KINDS = {
    "tfidf64": "TfidfVectorizer(sublinear_tf=True, min_df=2): float64, unsorted indices",
    "tfidf32": "TfidfVectorizer(sublinear_tf=True, min_df=2, dtype=float32): unsorted indices",
    "counts64": "CountVectorizer(min_df=2): int64 counts, unsorted indices",
    "tfidf64-sorted": "the float64 TF-IDF matrix with its indices sorted (a canonical input)",
}


# ---- data -------------------------------------------------------------- #
stdlib_corpus = load_stdlib_docstrings  # its name here before nbgpu.datasets (tests/test_bench.py)


def bytes_read(X):
    """Bytes of ``X`` a single pass reads (values and index arrays)."""
    if hasattr(X, "indptr"):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(X.nbytes)


# ---- real text --------------------------------------------------------- #
def find_corpus(where=None):
    """The corpus file: ``where`` or ``DEFAULT_CORPUS.jsonl`` in it (None if neither is a file); by default in
    ``$NBGPU_CORPORA``, then ``benchmarks/.corpora`` below the current folder, else :data:`STDLIB_CORPUS`."""
    if where is not None:
        places = [Path(where), Path(where) / f"{DEFAULT_CORPUS}.jsonl"]
        return next((path for path in places if path.is_file()), None)
    folders = (os.environ.get(CORPORA_ENV), REPOSITORY_CORPORA)
    places = [Path(folder) / f"{DEFAULT_CORPUS}.jsonl" for folder in folders if folder]
    return next((path for path in places if path.is_file()), STDLIB_CORPUS)


def read_corpus(path, *, limit=None):
    """``(texts, labels)`` of a JSON-lines corpus or :data:`STDLIB_CORPUS`, the first ``limit`` if given."""
    if path == STDLIB_CORPUS:
        return load_stdlib_docstrings(limit=limit)
    texts, labels = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if limit is not None and len(texts) >= limit:
                break
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                texts.append(str(record["text"]))
                labels.append(record["label"])
            except (ValueError, KeyError, TypeError) as exc:
                msg = f"{path}:{number}: not a corpus record {{\"text\": ..., \"label\": ...}} ({exc})"
                raise ValueError(msg) from exc
    return texts, np.asarray(labels)


def split(texts, labels):
    """A stratified 80 / 20 train / validation split: ``(train_texts, y_train, val_texts, y_val)``."""
    from sklearn.model_selection import train_test_split

    tr, va, ytr, yva = train_test_split(texts, labels, test_size=0.2, random_state=0, stratify=labels)
    return tr, np.asarray(ytr), va, np.asarray(yva)


def vectorize(kind, train_texts, validation_texts):
    """``(X_train, X_validation)`` of input kind ``kind`` (see ``INPUT_KINDS``)."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    if kind not in INPUT_KINDS:
        msg = f"unknown input kind {kind!r}; known: {', '.join(INPUT_KINDS)}"
        raise ValueError(msg)
    if kind == "counts64":
        vectorizer = CountVectorizer(min_df=2)
    else:
        dtype = np.float32 if kind == "tfidf32" else np.float64
        vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2, dtype=dtype)
    X_train = vectorizer.fit_transform(train_texts)
    X_validation = vectorizer.transform(validation_texts)
    if kind == "tfidf64-sorted":
        X_train.sort_indices()
        X_validation.sort_indices()
    return X_train, X_validation


# ---- backends ---------------------------------------------------------- #
def available_backends():
    """The backends this machine can run."""
    return [b for b in BACKENDS if b != "nbgpu-gpu" or gpu_array_like() is not None]


def _estimator(backend, model):
    """A new ``model`` of scikit-learn (backend "sklearn") or of nbgpu."""
    library = importlib.import_module("sklearn.naive_bayes") if backend == "sklearn" else nbgpu
    return getattr(library, model)()


def _on_backend(backend, X, y):
    """X and y moved to the backend's device (outside the timers)."""
    like = backend_like(backend)
    return host_to_like(X, like), host_to_like(y, like)


def backend_like(backend):
    """An empty array on the device of ``backend`` (None for the host): what timings synchronise on."""
    return gpu_array_like() if backend == "nbgpu-gpu" else None


def device_name(backend):
    """A readable name of the processor a backend runs on."""
    return _device_name(backend_like(backend))


def versions():
    """Versions of the libraries in play."""
    import scipy
    import sklearn

    return {"python": platform.python_version(), "nbgpu": nbgpu.__version__, "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, **gpu_versions()}


# ---- the run ----------------------------------------------------------- #
def timed_rows(model, calls, repeats, *, nbytes, data, warm_up=True, targets=False):
    """A row per call of ``calls`` ({(op, backend): fn}) on data set ``data``: its seconds in ``repeats``
    rounds in which each call runs once in turn (after a warm-up round, where ``warm_up``: first calls pay
    imports, allocations, kernel compiles), the speed-up over scikit-learn and, where ``targets`` (full
    synthetic sizes), nbgpu-CPU's target."""
    times = {key: [] for key in calls}
    for (_, backend), fn in calls.items() if warm_up else ():
        timed_runs(fn, 1, backend_like(backend))
    for _ in range(repeats):
        for (op, backend), fn in calls.items():
            times[op, backend] += timed_runs(fn, 1, backend_like(backend))[0]
    rows = []
    for (op, b), ts in times.items():
        base = times.get((op, "sklearn"))
        median = float(np.median(ts))
        rows.append(
            {
                "model": model,
                "op": op,
                "backend": b,
                "median_s": median,
                "min_s": float(np.min(ts)),
                "times_s": [float(t) for t in ts],
                "bytes_of_X": nbytes,
                "bandwidth_GBps": nbytes / median / 1e9,
                "speedup_vs_sklearn": None if base is None else float(np.median(base)) / median,
                "speedup_vs_sklearn_of_min": None if base is None else float(np.min(base)) / float(np.min(ts)),
                "fit_peak_extra_bytes": None,
                "target": CPU_TARGETS.get((model, op)) if targets and b == "nbgpu-cpu" else None,
                "same_predictions": None,
                "data": data,
            }
        )
    return rows


def bench_model(model, X, y, backends, *, repeats, X_predict=None, data=None, targets=False):
    """The :func:`timed_rows` of ``fit`` on ``(X, y)`` and ``predict`` on ``X_predict`` (default ``X``) on every
    backend; each row says whether the backend predicts exactly scikit-learn's labels."""
    X_predict = X if X_predict is None else X_predict
    Xy = {b: _on_backend(b, X, y) for b in backends}
    Xp = {b: _on_backend(b, X_predict, None)[0] for b in backends}
    fitted = {b: _estimator(b, model).fit(*Xy[b]) for b in backends}
    predicted = {b: np.asarray(to_numpy(fitted[b].predict(Xp[b]))) for b in backends}
    calls = {("fit", b): functools.partial(fitted[b].fit, *Xy[b]) for b in backends}
    calls.update({("predict", b): functools.partial(fitted[b].predict, Xp[b]) for b in backends})
    rows = timed_rows(model, calls, repeats, nbytes=bytes_read(X), data=data, targets=targets)
    peak = {b: fit_peak_bytes(_estimator(b, model), *Xy[b]) for b in backends if b != "nbgpu-gpu"}
    for row in rows:
        if row["op"] == "fit":
            row["fit_peak_extra_bytes"] = peak.get(row["backend"])
        if "sklearn" in predicted and row["backend"] != "sklearn":
            row["same_predictions"] = bool(np.array_equal(predicted[row["backend"]], predicted["sklearn"]))
    return rows


def fit_peak_bytes(estimator, X, y):
    """Peak memory allocated during one ``fit`` beyond what was held before (tracemalloc sees numpy's buffers)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        estimator.fit(X, y)
        return int(tracemalloc.get_traced_memory()[1] - before)
    finally:
        tracemalloc.stop()


def describe(kind, X, label):
    """Shape, stored values, dtype and a readable label of a data set, for the JSON."""
    out = {"kind": kind, "label": label, "shape": list(X.shape), "dtype": str(X.dtype), "bytes": bytes_read(X)}
    if sp.issparse(X):
        out["nnz"] = int(X.nnz)
        out["index_bytes"] = int(X.indices.nbytes + X.indptr.nbytes)
        out["sorted_indices"] = bool(X.has_sorted_indices)
    return out


_LABELS = {  # what make_bench_data(kind, size) builds, filled with SIZES[size][kind]
    "text": "text corpus (synthetic): {:,} docs × {:,} features, ~{} tokens/doc, {} classes, "
            "Zipf word frequencies, float32 counts, CSR with sorted indices",
    "categorical": "categorical (synthetic): {:,} rows × {} features, {} categories, {} classes, float32 codes",
    "gaussian": "gaussian (synthetic): {:,} rows × {} features, {} classes, float32",
}


def _run_synthetic(results, models, backends, log):
    size, cache = results["size"], {}
    for model in models:
        kind = DATA_OF[model]
        if kind not in cache:
            label = _LABELS[kind].format(*SIZES[size][kind])
            log(f"building {label} ...")
            cache[kind] = make_bench_data(kind, size)
            results["data"][kind] = describe(kind, cache[kind][0], label)
        log(f"timing {model} on {', '.join(backends)} ...")
        results["rows"] += bench_model(model, *cache[kind], backends, repeats=results["repeats"], data=kind,
                                       targets=size == "full")


def _run_real(results, models, backends, corpus, inputs, log):
    name = os.path.basename(str(corpus)).removesuffix(".jsonl")
    texts, labels = read_corpus(corpus, limit=REAL_DOCS[results["size"]])
    train, y_train, validation, _ = split(texts, labels)
    for kind in inputs or INPUT_KINDS:
        X_train, X_validation = vectorize(kind, train, validation)
        key = f"{name} {kind}"
        label = (
            f"{name} (real text): {X_train.shape[0]:,} train / {X_validation.shape[0]:,} validation docs "
            f"× {X_train.shape[1]:,} features, {len(np.unique(labels))} classes, {X_train.nnz:,} stored values; "
            f"{INPUT_KINDS[kind]}"
        )
        log(f"built {label}")
        results["data"][key] = {**describe(kind, X_train, label), "corpus": str(corpus), "real": True}
        for model in models:
            log(f"timing {model} on {key}, {', '.join(backends)} ...")
            results["rows"] += bench_model(model, X_train, y_train, backends, repeats=results["repeats"],
                                           X_predict=X_validation, data=key)


# ---- streaming --------------------------------------------------------- #
def row_chunks(X, y, n_chunks):
    """``n_chunks`` consecutive row ranges of ``(X, y)`` (sliced outside any timer)."""
    cuts = np.linspace(0, X.shape[0], n_chunks + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]


def stream(estimator, chunks, classes, probe):
    """``partial_fit`` over ``chunks``, then ``predict(probe)``: a model whose
    parameters are made lazily pays for them there, once, as a user would."""
    for Xc, yc in chunks:
        estimator.partial_fit(Xc, yc, classes=classes)
    return estimator.predict(probe)


def save_model(backend, estimator, folder):
    """Write ``estimator`` the way its library saves models; the file's path."""
    path = os.path.join(folder, "wide-sklearn.pkl" if backend == "sklearn" else "wide.nbgpu")
    if backend == "sklearn":
        with open(path, "wb") as f:
            pickle.dump(estimator, f, protocol=pickle.HIGHEST_PROTOCOL)
    else:
        nbgpu.save(estimator, path)
    return path


def load_and_predict(backend, path, X):
    """Load the model at ``path`` and predict ``X``."""
    if backend == "sklearn":
        with open(path, "rb") as f:
            model = pickle.load(f)  # the benchmark's own file, written just before
    else:
        model = nbgpu.load(path)
    return model.predict(X)


def _run_streaming(results, backends, log):
    """A wide hashed model streamed in chunks, and loaded from a file to predict (nbgpu's model file
    against scikit-learn's pickle)."""
    n, d, tokens, k = SIZES[results["size"]]["wide"]
    n -= VALIDATION_DOCS
    label = (
        f"wide hashed model (synthetic): {n:,} docs × {d:,} features (2^{d.bit_length() - 1}), ~{tokens} tokens/doc, "
        f"{k} classes, float32 counts; streamed in {', '.join(map(str, CHUNKS))} chunks, "
        f"then saved and loaded to predict {VALIDATION_DOCS:,} docs; one timed run each"
    )
    log(f"building {label} ...")
    X, y = make_bench_data("wide", results["size"])
    X_train, y_train, X_validation = X[:n], y[:n], X[n:]
    classes = np.unique(y_train)
    results["data"]["wide"] = describe("wide", X_train, label)
    model = "MultinomialNB"
    chunked = {c: row_chunks(X_train, y_train, c) for c in CHUNKS}

    def streamed(b, c):
        return lambda: stream(_estimator(b, model), chunked[c], classes, X_validation[:1])

    with tempfile.TemporaryDirectory(prefix="nbgpu-bench-") as folder:
        files = {b: save_model(b, _estimator(b, model).fit(X_train, y_train), folder) for b in backends}
        calls = {(f"stream {c} chunk{'s' if c > 1 else ''}", b): streamed(b, c) for c in CHUNKS for b in backends}
        for b in backends:
            calls["load+predict", b] = functools.partial(load_and_predict, b, files[b], X_validation)
        log(f"timing {model} streaming and load+predict on {', '.join(backends)}, one run each ...")
        # Every chunk costs a pass over the k × d statistics (scikit-learn
        # takes minutes for 100 chunks): one timed run, after the fits above.
        rows = timed_rows(model, calls, 1, nbytes=bytes_read(X_train), data="wide", warm_up=False)
        sizes = {b: os.path.getsize(files[b]) for b in backends}
    results["rows"] += rows
    one = {r["backend"]: r["median_s"] for r in rows if r["op"] == "stream 1 chunk"}
    for row in rows:
        if row["op"].startswith("stream"):
            row["vs_one_chunk"] = row["median_s"] / one[row["backend"]]
        if row["op"] == "load+predict":
            row["model_file_bytes"] = sizes[row["backend"]]


# ---- the report -------------------------------------------------------- #
_SHORT = {"nbgpu-cpu": "CPU", "nbgpu-gpu": "GPU"}  # the summary's column names
_SAME = {None: "", True: "yes", False: "NO"}


def _ratio(value):
    return "" if value is None else f"{value:.2f}x"


def _times(value):
    """A speed-up as people write it: "0.7×", "2.3×", "41×"."""
    return f"{value:.0f}×" if value >= 9.95 else f"{value:.1f}×"


# The detailed table's columns: (header, alignment, cell of a row); a column
# whose every cell is empty (no targets below --size full, no GPU peak) is left out.
_COLUMNS = (
    ("model", "---", lambda r: r["model"]),
    ("op", "---", lambda r: r["op"] if r.get("vs_one_chunk") is None
     else f"{r['op']} ({r['vs_one_chunk']:.2f}x one chunk)"),
    ("backend", "---", lambda r: r["backend"]),
    ("median (ms)", "---:", lambda r: f"{1e3 * r['median_s']:.1f}"),
    ("min (ms)", "---:", lambda r: f"{1e3 * r['min_s']:.1f}"),
    ("vs scikit-learn (median)", "---:", lambda r: _ratio(r["speedup_vs_sklearn"])),
    ("(min)", "---:", lambda r: _ratio(r["speedup_vs_sklearn_of_min"])),
    ("GB/s of X", "---:", lambda r: f"{r['bandwidth_GBps']:.2f}"),
    ("fit peak extra (MB)", "---:", lambda r: "" if r["fit_peak_extra_bytes"] is None
     else f"{r['fit_peak_extra_bytes'] / 2**20:.0f}"),
    ("same predictions", ":---:", lambda r: _SAME[r.get("same_predictions")]),
    ("target", "---:", lambda r: "" if r["target"] is None else f">= {r['target']:g}x"),
)


def format_table(results):
    """The results as Markdown: a line per data set, then a table of its rows (``--details``)."""
    lines = []
    for key, data in results["data"].items():
        rows = [r for r in results["rows"] if r["data"] == key]
        if not rows:
            continue
        cells = [[cell(r) for _, _, cell in _COLUMNS] for r in rows]
        keep = [i for i in range(len(_COLUMNS)) if any(row[i] for row in cells)]
        lines += [
            "", f"**{key}**: {data['label']}", "",
            "| " + " | ".join(_COLUMNS[i][0] for i in keep) + " |",
            "|" + "|".join(_COLUMNS[i][1] for i in keep) + "|",
        ]
        lines += ["| " + " | ".join(row[i] for i in keep) + " |" for row in cells]
    return "\n".join(lines).lstrip("\n")


def _over_data(values):
    """Speed-ups of one model and operation on several data sets: their median, and their range."""
    middle = _times(float(np.median(values)))
    return middle if len(values) == 1 else f"{middle} ({_times(min(values))[:-1]}–{_times(max(values))})"


def _same_predictions(rows):
    """Whether a model's predictions were scikit-learn's on every data set and backend, in words."""
    seen = [r for r in rows if r.get("same_predictions") is not None]
    differ = dict.fromkeys(f"{r['data']} ({_SHORT[r['backend']]})" for r in seen if not r["same_predictions"])
    if differ:
        return "NO: " + ", ".join(differ)
    n = len({r["data"] for r in seen})
    return "" if not seen else "yes" if n == 1 else f"yes, all {n} data sets"


def _aligned(table):
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]


_CORE_LIBRARIES = ("python", "nbgpu", "numpy", "scipy", "scikit-learn")  # named first on the machine's line


def summary(results, *, files=()):
    """The answer, at most 12 lines: per model, nbgpu's speed-up over scikit-learn in ``fit`` and
    ``predict`` on each of its backends and whether it predicted scikit-learn's labels; then the
    wide model streamed (if run), the speed goals (``--size full``), the devices, the machine, and
    ``files`` (lines saying what was written where)."""
    rows = [r for r in results["rows"] if r["backend"] != "sklearn"]
    backends = [b for b in BACKENDS if b != "sklearn" and any(r["backend"] == b for r in rows)]
    ops = [(op, b) for b in backends for op in ("fit", "predict")]
    table = [["", *(f"{op} ({_SHORT[b]})" for op, b in ops), "same predictions"]]
    for model in (m for m in MODELS if any(r["model"] == m and r["op"] in ("fit", "predict") for r in rows)):
        mine = [r for r in rows if r["model"] == model and r["op"] in ("fit", "predict")]
        cells = []
        for op, b in ops:
            timed = [r for r in mine if (r["op"], r["backend"]) == (op, b)]
            ratios = [r["speedup_vs_sklearn"] for r in timed]
            if None in ratios:  # no scikit-learn to compare with: the median time
                cells.append(f"{1e3 * float(np.median([r['median_s'] for r in timed])):.1f} ms")
            else:
                cells.append(_over_data(ratios) if ratios else "")
        table.append([model, *cells, _same_predictions(mine) or "n/a"])
    several = any(len({r["data"] for r in rows if r["model"] == m and r["op"] in ("fit", "predict")}) > 1
                  for m in MODELS)
    repeats = results["repeats"]
    lines = [
        f"nbgpu against scikit-learn, size {results['size']}: times faster (× > 1: nbgpu is faster; median of "
        f"{repeats} run{'s' if repeats > 1 else ''}" + ("; over data sets: median (range))" if several else ")"),
        *(_aligned(table) if len(table) > 1 else ["(no nbgpu backend timed)"]),
    ]
    if rows and "sklearn" not in results["devices"]:
        lines.append("without the sklearn backend (--backends): median times instead of speed-ups")
    streamed = [r for r in rows if r["data"] == "wide" and r["speedup_vs_sklearn"] is not None]
    if streamed:
        lines.append("wide model (MultinomialNB, 2^20 features), CPU: " + ", ".join(
            f"{r['op'].replace('stream ', 'streamed in ')} {_times(r['speedup_vs_sklearn'])}" for r in streamed))
    goals = [r for r in rows if r["target"] is not None and r["speedup_vs_sklearn"] is not None]
    if goals:
        missed = [f"{r['model']} {r['op']} {_times(r['speedup_vs_sklearn'])} (goal {r['target']:g}×)"
                  for r in goals if r["speedup_vs_sklearn"] < r["target"]]
        lines.append(f"speed goals at this size (CPU): {len(goals) - len(missed)} of {len(goals)} met"
                     + (f"; missed: {', '.join(missed)}" if missed else ""))
    devices = [f"{_SHORT[b]} {results['devices'][b]}" for b in backends]
    if "nbgpu-cpu" in backends:
        devices[0] += f", {results['threads']} threads used"
    if "nbgpu-gpu" not in backends:
        devices.append("GPU not asked for" if results.get("gpu_found") else "no GPU found (no usable cupy/GPU)")
    lines.append(f"devices: {'; '.join(devices)}")
    v = results["versions"]
    lines.append(f"machine: {results['machine']}, {results.get('system', '')}; Python {v['python']}, nbgpu "
                 f"{v['nbgpu']}, scikit-learn {v['scikit-learn']}, numpy {v['numpy']}, scipy {v['scipy']}"
                 + "".join(f", {name} {v[name]}" for name in v if name not in _CORE_LIBRARIES))
    return [*lines, *files]


def _bars(ax, rows, groups, key, colours):
    """Bars of ``rows``' speed-ups over scikit-learn, one group per name in ``groups`` (``key(row)``), a bar
    per data set (``colours[data]``) and backend in each; returns {(data, backend): bars} for the legend."""
    drawn, width = {}, 0.8 / max(sum(key(r) == g for r in rows) for g in groups)
    for x, group in enumerate(groups):
        mine = [r for r in rows if key(r) == group]
        for i, r in enumerate(mine):
            at = x + (i - (len(mine) - 1) / 2) * width
            bars = ax.bar(at, r["speedup_vs_sklearn"], width, color=colours[r["data"]],
                          hatch="//" if r["backend"] == "nbgpu-gpu" else None, edgecolor="white", lw=0.5)
            drawn[r["data"], r["backend"]] = bars
            if r["target"]:
                ax.plot([at - width / 2, at + width / 2], [r["target"]] * 2, "k-", lw=2)
    return drawn


def chart(results):
    """A matplotlib figure of the speed-ups over scikit-learn: a panel for ``fit`` and one for ``predict``
    (a group of bars per model, a bar per data set, hatched on the GPU; black marks: the speed goals),
    and one for the wide model streamed, if run. Log scale, ticks written "2×"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    rows = [r for r in results["rows"] if r["backend"] != "sklearn" and r["speedup_vs_sklearn"]]
    palette = plt.get_cmap("tab10").colors
    colours = {key: palette[i % len(palette)] for i, key in enumerate(results["data"])}
    panels = [(op, [r for r in rows if r["op"] == op], lambda r: r["model"]) for op in ("fit", "predict")]
    panels.append(("wide model streamed, then loaded to predict", [r for r in rows if r["data"] == "wide"],
                   lambda r: r["op"]))
    panels = [(title, mine, key) for title, mine, key in panels if mine]
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(5.5 * max(len(panels), 1), 4.8), squeeze=False)
    drawn = {}
    for ax, (title, mine, key) in zip(axes[0], panels):
        groups = list(dict.fromkeys(key(r) for r in sorted(mine, key=lambda r: MODELS.index(r["model"]))))
        drawn.update(_bars(ax, mine, groups, key, colours))
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([g.removesuffix("NB") if g in MODELS else g.replace("stream ", "") for g in groups],
                           fontsize=8)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}×"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(title, fontsize=10)
    axes[0][0].set_ylabel("times faster than scikit-learn")
    labels = [f"{data}{'' if results['data'][data].get('real') else ' (synthetic)'}"
              f"{' on the GPU' if b == 'nbgpu-gpu' else ''}" for data, b in drawn]
    fig.legend(list(drawn.values()), labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8, frameon=False)
    devices = "; ".join(f"{_SHORT.get(b, b)}: {name}" for b, name in results["devices"].items() if b != "sklearn")
    fig.suptitle(f"nbgpu against scikit-learn, size {results['size']} ({devices})", fontsize=10)
    fig.tight_layout(rect=(0, 0.06 + 0.04 * (len(labels) // 4), 1, 1))
    return fig


def plot(results, path):
    """:func:`chart`, written as PNG to ``path`` (whole or not at all)."""
    import matplotlib.pyplot as plt

    fig = chart(results)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path, "wb") as f:
        fig.savefig(f, dpi=120, format="png")
    plt.close(fig)


# ---- command line ------------------------------------------------------ #
def _csv(choices):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad or not items:
            msg = f"expected a comma-separated subset of {', '.join(choices)}; got {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return items

    return parse


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Add the ``bench`` flags to ``parser``."""
    parser.add_argument("--size", choices=tuple(SIZES), default="small",
                        help="data sizes: tiny (seconds), small (default, about a minute on a laptop CPU), "
                        "full (the sizes nbgpu's CPU speed goals are set at, 100,000 documents: minutes), "
                        "gpu (>= 1e8 stored values, for a GPU)")
    parser.add_argument("--models", type=_csv(MODELS), default=list(MODELS),
                        help=f"comma-separated models (default: all of {','.join(MODELS)})")
    parser.add_argument("--backends", type=_csv(BACKENDS),
                        help="comma-separated backends among sklearn, nbgpu-cpu, nbgpu-gpu "
                        "(default: all this machine has)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per op (default 5)")
    parser.add_argument("--data", type=_csv(DATA_SETS), default=["synthetic", "real"],
                        help="comma-separated data sets: synthetic (built here), real (a labelled text corpus: "
                        "--corpus, else the docstrings of this Python's standard library), streaming (a wide hashed "
                        "model in 1, 10, 100 chunks, and loaded from a file); default synthetic,real")
    parser.add_argument("--corpus", help="the real corpus: a JSON-lines file or a folder holding "
                        f"{DEFAULT_CORPUS}.jsonl (default: ${CORPORA_ENV}, then benchmarks/.corpora in a "
                        "checkout of nbgpu's repository)")
    parser.add_argument("--inputs", type=_csv(tuple(INPUT_KINDS)), help="how the real corpus is vectorised: "
                        + "; ".join(f"{k}: {v}" for k, v in INPUT_KINDS.items()) + " (default: all)")
    parser.add_argument("--out", help="folder to keep the results in, as nbgpu-bench-<size>-<time>.json and .png "
                        f"(default: ${RESULTS_ENV} if set, else none: the raw results are not kept)")
    parser.add_argument("--json", help="where to write the raw results (default: in the --out folder, if any)")
    parser.add_argument("--png", help="where to write the chart (default, where matplotlib is installed: next to "
                        "the JSON, if any, else in the temporary folder; 'none' for no chart)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --json or --png file")
    parser.add_argument("--details", action="store_true", help="print a table per data set before the summary: "
                        "every timing, its minimum, the bandwidth, the memory a fit takes and, at --size full, "
                        "the speed goal")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only the results (no progress)")


def _free_name(folder, size, suffix):
    """``<folder>/nbgpu-bench-<size>-<time><suffix>``, with ``-2``, ``-3``, ... before the suffix if taken."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    stem = Path(folder) / f"nbgpu-bench-{size}-{stamp}"
    path, n = f"{stem}{suffix}", 2
    while Path(path).exists():
        path, n = f"{stem}-{n}{suffix}", n + 1
    return path


def _output_paths(args):
    """(results folder, JSON path, PNG path): the JSON only where asked for (--out, --json or
    $NBGPU_BENCH_DIR); the chart beside it, where --png says, or in the temporary folder (never in
    the current one unasked); None for what is not written."""
    env = os.environ.get(RESULTS_ENV)
    folder = os.path.abspath(args.out) if args.out else str(Path(env)) if env else None
    json_path = png_path = None
    if args.json:
        json_path = os.path.abspath(args.json)
        folder = os.path.dirname(json_path)
    elif folder is not None:
        json_path = _free_name(folder, args.size, ".json")
    if args.png and args.png != "none":
        png_path = os.path.abspath(args.png)
    elif not args.png:
        png_path = (os.path.splitext(json_path)[0] + ".png" if json_path is not None
                    else _free_name(tempfile.gettempdir(), args.size, ".png"))
    return folder, json_path, png_path


def run(args: argparse.Namespace) -> int:
    """Run the benchmark described by ``args``; the exit status."""
    if args.repeats < 1:
        print(f"--repeats must be >= 1; got {args.repeats}", file=sys.stderr)
        return 2
    have = available_backends()
    backends = args.backends or have
    missing = [b for b in backends if b not in have]
    if missing:
        print(f"backend(s) {', '.join(missing)} not available here (no usable cupy/GPU)", file=sys.stderr)
        return 2
    backends = [b for b in BACKENDS if b in backends]  # sklearn first: ratios need it
    folder, json_path, png_path = _output_paths(args)
    taken = [path for path in (json_path, png_path) if path is not None and Path(path).exists()]
    if taken and not args.overwrite:
        print(f"{taken[0]} exists; pass --overwrite to replace it (or name another file)", file=sys.stderr)
        return 2
    corpus = find_corpus(args.corpus) if "real" in args.data else None
    if corpus is None and "real" in args.data:
        print(f"--corpus {args.corpus}: no {DEFAULT_CORPUS}.jsonl there", file=sys.stderr)
        return 2
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    results = {
        "size": args.size,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "system": f"{platform.system()} {platform.machine()}",
        "gpu_found": "nbgpu-gpu" in have,
        "devices": {b: device_name(b) for b in backends},
        "threads": n_threads(),
        "versions": versions(),
        "repeats": args.repeats,
        "data": {},
        "rows": [],
    }
    log(f"nbgpu bench, size={args.size}: each time is the median of {args.repeats} interleaved repeats "
        f"({', '.join(backends)} in turn), after one warm-up call (streaming rows: one run each)")
    log(f"threads: {results['threads']} (NBGPU_NUM_THREADS); devices: "
        + "; ".join(f"{b}: {name}" for b, name in results["devices"].items()))
    log(f"results: {folder}" if folder is not None
        else "results: the summary at the end (--out DIR keeps the raw results too)")
    if corpus == STDLIB_CORPUS:
        log("real text: docstrings of this Python's standard library, read from its sources (a larger corpus: "
            f"build one with `python benchmarks/corpora.py build {DEFAULT_CORPUS}` in a checkout of the "
            f"repository (or point --corpus or ${CORPORA_ENV} at a folder holding {DEFAULT_CORPUS}.jsonl))")
    elif corpus is not None:
        log(f"real text: {corpus}")
    if "synthetic" in args.data:
        _run_synthetic(results, args.models, backends, log)
    if corpus is not None:
        _run_real(results, [m for m in args.models if m in TEXT_MODELS], backends, corpus, args.inputs, log)
    if "streaming" in args.data:
        _run_streaming(results, [b for b in backends if b != "nbgpu-gpu"], log)
    if args.size == "full":
        results["cpu_targets_met"] = {
            f"{r['model']} {r['op']}": r["speedup_vs_sklearn"] >= r["target"]
            for r in results["rows"]
            if r["target"] is not None and r["speedup_vs_sklearn"] is not None
        }
    files = []
    if json_path is not None:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(json_path) as f:
            json.dump(results, f, indent=1)
        files.append(f"raw results: {json_path}")
    if png_path is not None and not any(r["speedup_vs_sklearn"] for r in results["rows"] if r["backend"] != "sklearn"):
        files.append("chart: not drawn, no speed-up to show (it needs the sklearn backend and an nbgpu one)")
    elif png_path is not None:
        try:
            import matplotlib  # noqa: F401  (an optional dependency: the cli extra)
        except ImportError:
            files.append("chart: not drawn, matplotlib is not installed (pip install 'nbgpu[cli]')")
        else:
            plot(results, png_path)
            files.append(f"chart: {png_path}")
    if args.details:
        print(format_table(results), end="\n\n")
    print("\n".join(summary(results, files=["; ".join(files)] if files else [])))  # one line: 12 at most
    return 0


def main(argv=None) -> int:
    """``python -m nbgpu._app.bench [flags]``."""
    parser = argparse.ArgumentParser(prog="nbgpu bench", description=__doc__.splitlines()[0])
    configure_parser(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
