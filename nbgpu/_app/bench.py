"""``nbgpu bench``: nbgpu on the CPU and GPU against scikit-learn, same data.

With no arguments it builds a small synthetic corpus (about a minute on a
laptop CPU), times ``fit`` and ``predict`` of every model on every backend
side by side in one process, prints a table of median times, speed-ups over
scikit-learn and achieved bandwidth (bytes of ``X`` read once / time), and
writes the raw results as JSON and a PNG chart. ``--size full`` is exactly
the CPU target sizes of the speed issue; ``--size gpu`` is the GPU corpus
(>= 1e8 stored values).

Data are built outside the timers; GPU calls are synchronised before the
clock stops. Repeats of the backends are interleaved (sklearn, nbgpu,
sklearn, ...) so that a noisy machine disturbs them alike.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys

import numpy as np
import scipy.sparse as sp

from .._array.devices import device_name as _device_name
from .._array.devices import gpu_array_like, gpu_versions, host_to_like, timed_runs

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
MODELS = ("MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "GaussianNB")
DATA_OF = {
    "MultinomialNB": "text",
    "ComplementNB": "text",
    "BernoulliNB": "text",
    "CategoricalNB": "categorical",
    "GaussianNB": "gaussian",
}
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
    if like is None:
        return X, y
    return host_to_like(X, like), host_to_like(y, like)


def backend_like(backend):
    """An empty array on the device of ``backend`` (None for the host): what
    timings synchronise on."""
    return gpu_array_like() if backend == "nbgpu-gpu" else None


def _timed(fn, backend):
    return timed_runs(fn, 1, backend_like(backend))[0][0]


def device_name(backend):
    """A readable name of the processor a backend runs on."""
    return _device_name(backend_like(backend))


def versions():
    """Versions of the libraries in play."""
    import scipy
    import sklearn

    import nbgpu

    out = {"python": platform.python_version(), "nbgpu": nbgpu.__version__, "numpy": np.__version__}
    out.update({"scipy": scipy.__version__, "scikit-learn": sklearn.__version__})
    out.update(gpu_versions())
    return out


# ---- the run ----------------------------------------------------------- #
def bench_model(model, X, y, backends, *, repeats, ops=("fit", "predict")):
    """Median/min seconds of every op on every backend, repeats interleaved."""
    data = {b: _on_backend(b, X, y) for b in backends}
    fitted = {}
    times = {(op, b): [] for op in ops for b in backends}
    for b in backends:  # warm-up: first calls pay imports, allocations, kernel compiles
        Xb, yb = data[b]
        _timed(lambda: _estimator(b, model).fit(Xb, yb).predict(Xb), b)
        fitted[b] = _estimator(b, model).fit(Xb, yb)
    for _ in range(repeats):
        for op in ops:
            for b in backends:
                Xb, yb = data[b]
                est = fitted[b]
                fn = (lambda: est.fit(Xb, yb)) if op == "fit" else (lambda: est.predict(Xb))
                times[(op, b)].append(_timed(fn, b))
    peak = {b: fit_peak_bytes(_estimator(b, model), *data[b]) for b in backends if b != "nbgpu-gpu"}
    nbytes = bytes_read(X)
    rows = []
    for op in ops:
        base = float(np.median(times[(op, "sklearn")])) if "sklearn" in backends else None
        base_min = float(np.min(times[(op, "sklearn")])) if "sklearn" in backends else None
        for b in backends:
            ts = times[(op, b)]
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
                    "speedup_vs_sklearn": None if base is None else base / median,
                    "speedup_vs_sklearn_of_min": None if base_min is None else base_min / float(np.min(ts)),
                    "fit_peak_extra_bytes": peak.get(b) if op == "fit" else None,
                    "target": CPU_TARGETS.get((model, op)) if b == "nbgpu-cpu" else None,
                }
            )
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


def describe(kind, X):
    """Shape, stored values and dtype of a data set, for the JSON."""
    out = {"kind": kind, "shape": list(X.shape), "dtype": str(X.dtype), "bytes": bytes_read(X)}
    if sp.issparse(X):
        out["nnz"] = int(X.nnz)
        out["index_bytes"] = int(X.indices.nbytes + X.indptr.nbytes)
    return out


def run_benchmarks(*, size, models, backends, repeats, log=print):
    """Build the data of every model's kind once and time every model on it."""
    results = {
        "size": size,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "devices": {b: device_name(b) for b in backends},
        "threads": _threads(),
        "versions": versions(),
        "repeats": repeats,
        "data": {},
        "rows": [],
    }
    cache = {}
    for model in models:
        kind = DATA_OF[model]
        if kind not in cache:
            log(f"building {kind} data {SIZES[size][kind]} ...")
            cache[kind] = make_data(kind, size)
            results["data"][kind] = describe(kind, cache[kind][0])
        log(f"timing {model} on {', '.join(backends)} ...")
        rows = bench_model(model, *cache[kind], backends, repeats=repeats)
        for row in rows:
            row["data"] = kind
            if size != "full":  # the targets are set at the full sizes only
                row["target"] = None
        results["rows"].extend(rows)
    if size == "full":
        results["cpu_targets_met"] = {
            f"{r['model']} {r['op']}": r["speedup_vs_sklearn"] >= r["target"]
            for r in results["rows"]
            if r["target"] is not None and r["speedup_vs_sklearn"] is not None
        }
    return results


def _threads():
    from .._array.threads import n_threads

    return n_threads()


def format_table(results):
    """The results as a Markdown table."""
    lines = [
        "| model | op | backend | median (ms) | min (ms) | vs scikit-learn (median) | (min) "
        "| GB/s of X | fit peak extra (MB) | target |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results["rows"]:
        ratio = "" if r["speedup_vs_sklearn"] is None else f"{r['speedup_vs_sklearn']:.2f}x"
        ratio_min = "" if r["speedup_vs_sklearn_of_min"] is None else f"{r['speedup_vs_sklearn_of_min']:.2f}x"
        target = "" if r["target"] is None else f">= {r['target']:g}x"
        peak = "" if r["fit_peak_extra_bytes"] is None else f"{r['fit_peak_extra_bytes'] / 2**20:.0f}"
        lines.append(
            f"| {r['model']} | {r['op']} | {r['backend']} | {1e3 * r['median_s']:.1f} | {1e3 * r['min_s']:.1f} | "
            f"{ratio} | {ratio_min} | {r['bandwidth_GBps']:.2f} | {peak} | {target} |"
        )
    return "\n".join(lines)


def plot(results, path):
    """A bar chart of the speed-ups over scikit-learn (log scale), as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results["rows"] if r["backend"] != "sklearn" and r["speedup_vs_sklearn"]]
    labels = sorted({(r["model"], r["op"]) for r in rows}, key=lambda mo: (MODELS.index(mo[0]), mo[1]))
    backends = [b for b in BACKENDS if any(r["backend"] == b for r in rows)]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels)), 4))
    width = 0.8 / max(len(backends), 1)
    for i, b in enumerate(backends):
        value = {(r["model"], r["op"]): r["speedup_vs_sklearn"] for r in rows if r["backend"] == b}
        xs = [j + i * width for j in range(len(labels))]
        ax.bar(xs, [value.get(lab, 0) for lab in labels], width, label=b)
    targets = {(r["model"], r["op"]): r["target"] for r in rows if r["target"]}
    for j, lab in enumerate(labels):
        target = targets.get(lab)
        if target and "nbgpu-cpu" in backends:
            x0 = j + backends.index("nbgpu-cpu") * width
            ax.plot([x0 - width / 2, x0 + width / 2], [target, target], "k-", lw=2)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speed-up over scikit-learn (x)")
    ax.set_xticks([j + width * (len(backends) - 1) / 2 for j in range(len(labels))])
    ax.set_xticklabels([f"{m.replace('NB', '')}\n{o}" for m, o in labels], fontsize=8)
    ax.set_title(f"nbgpu bench, size={results['size']} ({results['devices'].get('nbgpu-cpu', '')})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
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
                        help="data sizes: tiny, small (default, about a minute on a laptop CPU), "
                        "full (the issue's CPU targets), gpu (>= 1e8 stored values)")
    parser.add_argument("--models", type=_csv(MODELS), default=list(MODELS),
                        help=f"comma-separated models (default: all of {','.join(MODELS)})")
    parser.add_argument("--backends", type=_csv(BACKENDS), default=None,
                        help="comma-separated backends among sklearn, nbgpu-cpu, nbgpu-gpu "
                        "(default: all this machine has)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per op (default 5)")
    parser.add_argument("--json", default=None, help="where to write the raw results "
                        "(default: nbgpu-bench-<size>-<date>.json)")
    parser.add_argument("--png", default=None, help="where to write the chart "
                        "(default: next to the JSON; 'none' for no chart)")
    parser.add_argument("--quiet", action="store_true", help="print only the table")


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
    log = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    results = run_benchmarks(size=args.size, models=args.models, backends=backends,
                             repeats=args.repeats, log=log)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d")
    json_path = args.json or f"nbgpu-bench-{args.size}-{stamp}.json"
    os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    print(format_table(results))
    print(f"\nraw results: {json_path}")
    if args.png != "none":
        png_path = args.png or os.path.splitext(json_path)[0] + ".png"
        try:
            import matplotlib  # noqa: F401  (an optional dependency: the cli extra)
        except ImportError:
            print("chart: skipped, matplotlib is not installed (pip install 'nbgpu[cli]')", file=sys.stderr)
        else:
            plot(results, png_path)
            print(f"chart: {png_path}")
    return 0


def main(argv=None) -> int:
    """``python -m nbgpu._bench [flags]``."""
    parser = argparse.ArgumentParser(prog="nbgpu bench", description=__doc__.splitlines()[0])
    configure_parser(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
