"""``nbgpu bench``: nbgpu on the CPU and GPU against scikit-learn, same data.

It times ``fit`` and ``predict`` of every model on every backend side by side in one process: on
synthetic data of a size preset (``--size full`` is exactly the CPU targets of the speed issue,
``--size gpu`` the GPU corpus of >= 1e8 stored values) and on a real labelled corpus vectorised the
way people do (``bench_corpus``); ``--data streaming`` adds a wide hashed model streamed in chunks
and loaded from a file (``bench_streaming``). It prints what it built and a table of median times,
speed-ups over scikit-learn and achieved bandwidth (bytes of ``X`` read once / time), and keeps the
raw results as JSON and a PNG chart where asked (``bench_report``).

Data are built outside the timers; GPU calls are synchronised before the clock stops. Repeats of
the backends are interleaved (sklearn, nbgpu, sklearn, ...) so that a noisy machine disturbs them alike.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import os
import platform
import sys
import tempfile

import numpy as np
import scipy.sparse as sp

from .._array.devices import device_name as _device_name
from .._array.devices import gpu_array_like, gpu_versions, host_to_like, timed_runs
from .._array.namespace import to_numpy
from .._array.threads import n_threads
from . import bench_corpus, bench_report, bench_streaming

# ---- sizes ------------------------------------------------------------- #
# text: (documents, features, tokens per document, classes)
# categorical: (rows, features, categories, classes); gaussian: (rows, features, classes)
SIZES = {
    "tiny": {"text": (2_000, 2**12, 50, 5), "categorical": (2_000, 10, 5, 3), "gaussian": (5_000, 20, 3)},
    "small": {
        "text": (20_000, 2**16, 100, 20),
        "categorical": (20_000, 50, 10, 10),
        "gaussian": (50_000, 100, 10),
    },
    # The speed issue's CPU targets, exactly.
    "full": {
        "text": (100_000, 2**18, 100, 20),
        "categorical": (100_000, 50, 10, 10),
        "gaussian": (200_000, 100, 10),
    },
    # The GPU targets: >= 1e8 stored values.
    "gpu": {
        "text": (1_200_000, 2**20, 100, 20),
        "categorical": (2_000_000, 50, 10, 10),
        "gaussian": (4_000_000, 100, 10),
    },
}
# Documents of the real corpus used per size (None: all of it).
REAL_DOCS = {"tiny": 4_000, "small": None, "full": None, "gpu": None}
MODELS = ("MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "GaussianNB")
TEXT_MODELS = MODELS[:3]
DATA_OF = {**dict.fromkeys(TEXT_MODELS, "text"), "CategoricalNB": "categorical", "GaussianNB": "gaussian"}
DATA_SETS = ("synthetic", "real", "streaming")
BACKENDS = ("sklearn", "nbgpu-cpu", "nbgpu-gpu")
# The speed issue's CPU targets: scikit-learn time / nbgpu-CPU time.
CPU_TARGETS = {
    ("MultinomialNB", "fit"): 5.0,
    ("MultinomialNB", "predict"): 2.0,
    ("ComplementNB", "fit"): 5.0,
    ("ComplementNB", "predict"): 2.0,
    ("BernoulliNB", "fit"): 3.0,
    ("BernoulliNB", "predict"): 1.5,
    ("CategoricalNB", "fit"): 5.0,
    ("CategoricalNB", "predict"): 5.0,
    ("GaussianNB", "fit"): 1.5,
    ("GaussianNB", "predict"): 20.0,
}


# ---- data -------------------------------------------------------------- #
def zipf_corpus(n_docs, n_features, tokens_per_doc, n_classes, *, seed=0, exponent=1.0, topical=0.2):
    """A bag-of-words corpus whose word frequencies follow Zipf's law.

    Every document has a Poisson number of tokens; a token is a word of
    rank ``r`` with probability ``∝ 1 / r**exponent`` (words hashed onto
    ``n_features`` columns by a random permutation); a fraction ``topical``
    of the tokens is shifted by the document's class so the classes differ.

    Returns
    -------
    X : scipy.sparse.csr_matrix of float32 counts, int32 indices
    y : ndarray of int64 class labels
    """
    rng = np.random.default_rng(seed)
    lengths = rng.poisson(tokens_per_doc, n_docs)
    total = int(lengths.sum())
    cdf = np.cumsum(1.0 / np.arange(1, n_features + 1) ** exponent)
    ranks = np.searchsorted(cdf, rng.random(total) * cdf[-1])
    y = rng.integers(0, n_classes, n_docs)
    topic = rng.random(total) < topical
    doc_class = np.repeat(y, lengths)
    ranks = np.where(topic, (ranks + doc_class * 1013) % n_features, ranks)
    words = rng.permutation(n_features).astype(np.int32)[ranks]
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    index_dtype = np.int32 if total < 2**31 else np.int64
    X = sp.csr_matrix(
        (np.ones(total, np.float32), words, indptr.astype(index_dtype)), shape=(n_docs, n_features)
    )
    X.sum_duplicates()
    return X, y


def categorical_data(n, d, n_categories, n_classes, *, seed=0):
    """Integer category codes (as float32) that depend on the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    shift = rng.integers(0, n_categories, (n_classes, d))
    noise = rng.integers(0, n_categories, (n, d))
    keep = rng.random((n, d)) < 0.5
    X = np.where(keep, (shift[y] + noise // 3) % n_categories, noise)
    return X.astype(np.float32), y


def gaussian_data(n, d, n_classes, *, seed=0):
    """Normal features whose means depend on the class, float32."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    means = rng.standard_normal((n_classes, d)).astype(np.float32)
    X = rng.standard_normal((n, d), dtype=np.float32)
    X += means[y]
    return X, y


def make_data(kind, size):
    """(X, y) for a data kind ('text', 'categorical', 'gaussian') of a size preset."""
    shape = SIZES[size][kind]
    return {"text": zipf_corpus, "categorical": categorical_data, "gaussian": gaussian_data}[kind](*shape)


def bytes_read(X):
    """Bytes of ``X`` a single pass reads (values and index arrays)."""
    if sp.issparse(X) or hasattr(X, "indptr"):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(X.nbytes)


# ---- backends ---------------------------------------------------------- #
def available_backends():
    """The backends this machine can run."""
    return [b for b in BACKENDS if b != "nbgpu-gpu" or gpu_array_like() is not None]


def _estimator(backend, model):
    if backend == "sklearn":
        from sklearn import naive_bayes

        return getattr(naive_bayes, model)()
    import nbgpu

    return getattr(nbgpu, model)()


def _on_backend(backend, X, y):
    """X and y moved to the backend's device (outside the timers)."""
    like = backend_like(backend)
    return host_to_like(X, like), host_to_like(y, like)


def backend_like(backend):
    """An empty array on the device of ``backend`` (None for the host): what
    timings synchronise on."""
    return gpu_array_like() if backend == "nbgpu-gpu" else None


def device_name(backend):
    """A readable name of the processor a backend runs on."""
    return _device_name(backend_like(backend))


def versions():
    """Versions of the libraries in play."""
    import scipy
    import sklearn

    import nbgpu

    return {"python": platform.python_version(), "nbgpu": nbgpu.__version__, "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, **gpu_versions()}


# ---- the run ----------------------------------------------------------- #
def interleaved_times(calls, repeats, *, warm_up=True):
    """Seconds of every call in ``calls`` ({key: (fn, backend)}), ``repeats``
    rounds in which each call runs once in turn (after one warm-up round:
    first calls pay imports, allocations, kernel compiles)."""
    times = {key: [] for key in calls}
    for fn, backend in calls.values() if warm_up else ():
        timed_runs(fn, 1, backend_like(backend))
    for _ in range(repeats):
        for key, (fn, backend) in calls.items():
            times[key] += timed_runs(fn, 1, backend_like(backend))[0]
    return times


def timing_rows(model, times, *, nbytes):
    """One row per (op, backend) of ``times``, with the speed-up over scikit-learn."""
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
                "target": CPU_TARGETS.get((model, op)) if b == "nbgpu-cpu" else None,
                "same_predictions": None,
            }
        )
    return rows


def bench_model(model, X, y, backends, *, repeats, X_predict=None):
    """Median/min seconds of every op on every backend, repeats interleaved.

    ``fit`` on ``(X, y)``; ``predict`` on ``X_predict`` (default ``X``).
    Each row says whether the backend predicts exactly scikit-learn's labels.
    """
    X_predict = X if X_predict is None else X_predict
    data = {b: (*_on_backend(b, X, y), _on_backend(b, X_predict, None)[0]) for b in backends}
    fitted = {b: _estimator(b, model).fit(data[b][0], data[b][1]) for b in backends}
    predicted = {b: np.asarray(to_numpy(fitted[b].predict(data[b][2]))) for b in backends}

    def call(op, b):
        est, (Xb, yb, Xp) = fitted[b], data[b]
        return (lambda: est.fit(Xb, yb)) if op == "fit" else (lambda: est.predict(Xp))

    times = interleaved_times({(op, b): (call(op, b), b) for op in ("fit", "predict") for b in backends}, repeats)
    peak = {b: fit_peak_bytes(_estimator(b, model), *data[b][:2]) for b in backends if b != "nbgpu-gpu"}
    rows = timing_rows(model, times, nbytes=bytes_read(X))
    for row in rows:
        b = row["backend"]
        if row["op"] == "fit":
            row["fit_peak_extra_bytes"] = peak.get(b)
        if "sklearn" in predicted and b != "sklearn":
            row["same_predictions"] = bool(np.array_equal(predicted[b], predicted["sklearn"]))
    return rows


def fit_peak_bytes(estimator, X, y):
    """Peak memory allocated during one ``fit`` beyond what was held before.

    Measured with tracemalloc, which sees numpy's (and so scipy's) buffers.
    """
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        estimator.fit(X, y)
        return int(tracemalloc.get_traced_memory()[1] - before)
    finally:
        tracemalloc.stop()


def describe(kind, X, label=None):
    """Shape, stored values, dtype and a readable label of a data set, for the JSON."""
    out = {"kind": kind, "label": label or kind, "shape": list(X.shape), "dtype": str(X.dtype), "bytes": bytes_read(X)}
    if sp.issparse(X):
        out["nnz"] = int(X.nnz)
        out["index_bytes"] = int(X.indices.nbytes + X.indptr.nbytes)
        out["sorted_indices"] = bool(X.has_sorted_indices)
    return out


def synthetic_label(kind, size):
    """What ``make_data(kind, size)`` builds, in words."""
    shape = SIZES[size][kind]
    if kind == "text":
        n, d, tokens, k = shape
        return (
            f"text corpus (synthetic): {n:,} docs × {d:,} features, ~{tokens} tokens/doc, {k} classes, "
            "Zipf word frequencies, float32 counts, CSR with sorted indices"
        )
    if kind == "categorical":
        n, d, m, k = shape
        return f"categorical (synthetic): {n:,} rows × {d} features, {m} categories, {k} classes, float32 codes"
    n, d, k = shape
    return f"gaussian (synthetic): {n:,} rows × {d} features, {k} classes, float32"


def _new_results(size, backends, repeats):
    return {
        "size": size,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "devices": {b: device_name(b) for b in backends},
        "threads": n_threads(),
        "versions": versions(),
        "repeats": repeats,
        "data": {},
        "rows": [],
    }


def run_benchmarks(results, *, models, backends, data=("synthetic",), corpus=None, inputs=None, log=print):
    """Build every data set once, time every model on it, and add the rows to
    ``results`` (from :func:`_new_results`, which holds the size and repeats).

    ``data`` names the sets: "synthetic" (the size's synthetic data),
    "real" (the corpus at ``corpus``, a JSON-lines file, vectorised as each
    of ``inputs``), "streaming" (a wide hashed model streamed in chunks and
    loaded from a file).
    """
    size, repeats = results["size"], results["repeats"]
    if "synthetic" in data:
        _run_synthetic(results, size, models, backends, repeats, log)
    if "real" in data and corpus is not None:
        _run_real(results, size, [m for m in models if m in TEXT_MODELS], backends, repeats, corpus, inputs, log)
    if "streaming" in data:
        _run_streaming(results, size, [b for b in backends if b != "nbgpu-gpu"], log)
    if size == "full":
        results["cpu_targets_met"] = {
            f"{r['model']} {r['op']}": r["speedup_vs_sklearn"] >= r["target"]
            for r in results["rows"]
            if r["target"] is not None and r["speedup_vs_sklearn"] is not None
        }
    return results


def _add_rows(results, rows, data, *, targets=False):
    """Add ``rows`` of data set ``data`` to ``results``; the CPU targets are
    kept only where ``targets`` (they are set for the full synthetic sizes)."""
    for row in rows:
        row["data"] = data
        if not targets:
            row["target"] = None
    results["rows"].extend(rows)


def _run_synthetic(results, size, models, backends, repeats, log):
    cache = {}
    for model in models:
        kind = DATA_OF[model]
        if kind not in cache:
            label = synthetic_label(kind, size)
            log(f"building {label} ...")
            cache[kind] = make_data(kind, size)
            results["data"][kind] = describe(kind, cache[kind][0], label)
        log(f"timing {model} on {', '.join(backends)} ...")
        rows = bench_model(model, *cache[kind], backends, repeats=repeats)
        _add_rows(results, rows, kind, targets=size == "full")


def _run_real(results, size, models, backends, repeats, corpus, inputs, log):
    if corpus == bench_corpus.STDLIB_CORPUS:
        name = corpus
        texts, labels = bench_corpus.stdlib_corpus(limit=REAL_DOCS[size])
    else:
        name = os.path.basename(str(corpus)).removesuffix(".jsonl")
        texts, labels = bench_corpus.read_corpus(corpus, limit=REAL_DOCS[size])
    train, y_train, validation, y_validation = bench_corpus.split(texts, labels)
    for kind in inputs or bench_corpus.INPUT_KINDS:
        X_train, X_validation = bench_corpus.vectorize(kind, train, validation)
        key = f"{name} {kind}"
        label = bench_corpus.describe_inputs(name, kind, X_train, X_validation, len(np.unique(labels)))
        log(f"built {label}")
        results["data"][key] = {**describe(kind, X_train, label), "corpus": str(corpus), "real": True}
        for model in models:
            log(f"timing {model} on {key}, {', '.join(backends)} ...")
            rows = bench_model(model, X_train, y_train, backends, repeats=repeats, X_predict=X_validation)
            _add_rows(results, rows, key)


def _run_streaming(results, size, backends, log):
    n, d, tokens, k = bench_streaming.WIDE_SIZES[size]
    chunks = bench_streaming.CHUNKS
    label = (
        f"wide hashed model (synthetic): {n:,} docs × {d:,} features (2^{d.bit_length() - 1}), ~{tokens} tokens/doc, "
        f"{k} classes, float32 counts; streamed in {', '.join(map(str, chunks))} chunks, "
        f"then saved and loaded to predict {bench_streaming.VALIDATION_DOCS:,} docs; one timed run each"
    )
    log(f"building {label} ...")
    X, y = zipf_corpus(n + bench_streaming.VALIDATION_DOCS, d, tokens, k, seed=1)
    X_train, y_train, X_validation = X[:n], y[:n], X[n:]
    classes = np.unique(y_train)
    results["data"]["wide"] = describe("wide", X_train, label)
    model = "MultinomialNB"
    chunked = {c: bench_streaming.row_chunks(X_train, y_train, c) for c in chunks}

    def streamed(b, c):
        return lambda: bench_streaming.stream(_estimator(b, model), chunked[c], classes, X_validation[:1])

    with tempfile.TemporaryDirectory(prefix="nbgpu-bench-") as folder:
        files = {b: bench_streaming.save_model(b, _estimator(b, model).fit(X_train, y_train), folder)
                 for b in backends}
        calls = {(f"stream {c} chunk{'s' if c > 1 else ''}", b): (streamed(b, c), b)
                 for c in chunks for b in backends}
        for b in backends:
            load_and_predict = functools.partial(bench_streaming.load_and_predict, b, files[b], X_validation)
            calls["load+predict", b] = (load_and_predict, b)
        log(f"timing {model} streaming and load+predict on {', '.join(backends)}, one run each ...")
        # Every chunk costs a pass over the k × d statistics (scikit-learn
        # takes minutes for 100 chunks): one timed run, after the fits above.
        times = interleaved_times(calls, 1, warm_up=False)
        sizes = {b: os.path.getsize(files[b]) for b in backends}
    rows = timing_rows(model, times, nbytes=bytes_read(X_train))
    _add_rows(results, rows, "wide")
    one = {r["backend"]: r["median_s"] for r in rows if r["op"] == "stream 1 chunk"}
    for row in rows:
        if row["op"].startswith("stream"):
            row["vs_one_chunk"] = row["median_s"] / one[row["backend"]]
        if row["op"] == "load+predict":
            row["model_file_bytes"] = sizes[row["backend"]]


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
                        help="data sizes: tiny, small (default, about a minute on a laptop CPU), "
                        "full (the issue's CPU targets), gpu (>= 1e8 stored values)")
    parser.add_argument("--models", type=_csv(MODELS), default=list(MODELS),
                        help=f"comma-separated models (default: all of {','.join(MODELS)})")
    parser.add_argument("--backends", type=_csv(BACKENDS), default=None,
                        help="comma-separated backends among sklearn, nbgpu-cpu, nbgpu-gpu "
                        "(default: all this machine has)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per op (default 5)")
    parser.add_argument("--data", type=_csv(DATA_SETS), default=["synthetic", "real"],
                        help="comma-separated data sets: synthetic (built here), real (a labelled text corpus, "
                        "when one is found), streaming (a wide hashed model in 1, 10, 100 chunks, and loaded "
                        "from a file); default synthetic,real")
    parser.add_argument("--corpus", default=None,
                        help="the real corpus: a JSON-lines file or a folder holding "
                        f"{bench_corpus.DEFAULT_CORPUS}.jsonl (default: ${bench_corpus.CORPORA_ENV}, "
                        "then benchmarks/.corpora)")
    parser.add_argument("--inputs", type=_csv(tuple(bench_corpus.INPUT_KINDS)), default=None,
                        help="how the real corpus is vectorised: " + "; ".join(
                            f"{k}: {v}" for k, v in bench_corpus.INPUT_KINDS.items()) + " (default: all)")
    parser.add_argument("--out", default=None,
                        help="folder to keep the results in, as nbgpu-bench-<size>-<time>.json and .png "
                        f"(default: ${bench_report.RESULTS_ENV} if set, else none: only the table is printed)")
    parser.add_argument("--json", default=None, help="where to write the raw results "
                        "(default: in the --out folder, if any)")
    parser.add_argument("--png", default=None, help="where to write the chart "
                        "(default: next to the JSON, if any; 'none' for no chart)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --json or --png file")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only the table")


def _output_paths(args):
    """(results folder, JSON path, PNG path), each None where nothing is to be
    written: files are written only where asked (--out, --json, --png, or
    $NBGPU_BENCH_DIR); names already taken in a folder get a suffix."""
    folder = os.path.abspath(args.out) if args.out else bench_report.default_results_dir()
    folder = None if folder is None else str(folder)
    json_path = png_path = None
    if args.json:
        json_path = os.path.abspath(args.json)
        folder = os.path.dirname(json_path)
    elif folder is not None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        json_path = str(bench_report.fresh_path(folder, f"nbgpu-bench-{args.size}-{stamp}", ".json"))
    if args.png and args.png != "none":
        png_path = os.path.abspath(args.png)
    elif not args.png and json_path is not None:
        png_path = os.path.splitext(json_path)[0] + ".png"
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
    problem = bench_report.refuse_to_overwrite([json_path, png_path], overwrite=args.overwrite)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    corpus = None
    if "real" in args.data:
        corpus = bench_corpus.find_corpus(args.corpus)
        if corpus is None and args.corpus is not None:
            print(f"--corpus {args.corpus}: no {bench_corpus.DEFAULT_CORPUS}.jsonl there", file=sys.stderr)
            return 2
        if corpus is None:  # none built: the one every installation has
            corpus = bench_corpus.STDLIB_CORPUS
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    results = _new_results(args.size, backends, args.repeats)
    log(f"nbgpu bench, size={args.size}: each time is the median of {args.repeats} interleaved repeats "
        f"({', '.join(backends)} in turn), after one warm-up call (streaming rows: one run each)")
    log(f"threads: {results['threads']} (NBGPU_NUM_THREADS); devices: "
        + "; ".join(f"{b}: {name}" for b, name in results["devices"].items()))
    log(f"results: {folder}" if folder is not None
        else "results: not kept (--out DIR keeps the raw results and the chart)")
    if corpus == bench_corpus.STDLIB_CORPUS:
        log("real text: docstrings of this Python's standard library, read from its sources (a larger corpus: "
            f"{bench_corpus.how_to_build()})")
    elif corpus is not None:
        log(f"real text: {corpus}")
    run_benchmarks(results, models=args.models, backends=backends, data=args.data, corpus=corpus,
                   inputs=args.inputs, log=log)
    print(bench_report.format_table(results))
    if json_path is not None:
        bench_report.write_json(results, json_path)
        print(f"\nraw results: {json_path}")
    if png_path is not None:
        try:
            import matplotlib  # noqa: F401  (an optional dependency: the cli extra)
        except ImportError:
            print("chart: skipped, matplotlib is not installed (pip install 'nbgpu[cli]')", file=sys.stderr)
        else:
            bench_report.plot(results, png_path, models=MODELS)
            print(f"chart: {png_path}")
    return 0


def main(argv=None) -> int:
    """``python -m nbgpu._app.bench [flags]``."""
    parser = argparse.ArgumentParser(prog="nbgpu bench", description=__doc__.splitlines()[0])
    configure_parser(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
