"""Each fast path against its plain reference, side by side in one run.

    python benchmarks/fast_paths.py [--repeat 7] [--scale 1.0] [--only NAME,...] [--json FILE]

For every fast path of ``nbgpu._array.paths.FAST_PATHS`` it times one
operation on the same inputs with the fast path and with its reference
(``paths.reference(name)``), interleaved over ``--repeat`` runs (medians),
checks both give the same values, and records the peak memory each takes
(``tracemalloc``: numpy and scipy report their arrays to it) in one more,
untimed run. A fast path stays only while ``reference / fast`` is well
above 1 in time or memory (ARCHITECTURE.md, "Cost proportional to the
work"). ``--scale`` multiplies the sizes (0.1 for a quick look). The
machine and its load are recorded with the figures. Not a unit test: a
script for figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interleaved import interleaved_medians  # noqa: E402

import nbgpu  # noqa: E402
from nbgpu._array import class_sums as cs  # noqa: E402
from nbgpu._array import paths  # noqa: E402
from nbgpu._array.devices import device_name  # noqa: E402
from nbgpu._array.sparse import gathered_row_sums  # noqa: E402
from nbgpu._array.sums import dense  # noqa: E402
from nbgpu._array.threads import n_threads  # noqa: E402
from nbgpu._interop.model_archive import write_archive  # noqa: E402
from nbgpu._validation import check_finite  # noqa: E402


def _zipf_csr(rng, n, d, per_row, dtype=np.float64):
    """Hashed-text-like counts: Zipf-distributed columns, ``per_row`` stored values a row."""
    cols = (rng.zipf(1.3, n * per_row) - 1) % d
    rows = np.repeat(np.arange(n), per_row)
    X = sp.csr_matrix((np.ones(n * per_row, dtype=dtype), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    return X


def _cases(scale, rng):
    """``{name: (setup description, fast call, reference call)}``; each call returns comparable values."""
    s = lambda n: max(int(n * scale), 1)  # noqa: E731
    k = 20
    cases = {}

    n, d = s(200_000), 500
    X = rng.random((n, d))
    codes = rng.integers(0, k, n)
    cases["class_sums"] = (
        f"class_sums of dense X {n} x {d} float64, {k} classes",
        lambda: cs.class_sums(X, codes, None, k, xp=np, dtype=np.float64),
    )
    cases["class_sums (class_totals)"] = (
        f"class_totals of {s(5_000_000)} rows, {k} classes",
        (lambda c: lambda: cs.class_totals(c, None, k, dtype=np.float64, xp=np))(rng.integers(0, k, s(5_000_000))),
    )

    n, d = s(200_000), 2**17
    Xs = _zipf_csr(rng, n, d, 50)
    scodes = rng.integers(0, k, n)
    cases["sparse_class_sums"] = (
        f"class_sums of CSR X {n} x {d}, {Xs.nnz} stored, {k} classes",
        lambda: cs.class_sums(Xs, scodes, None, k, xp=np, dtype=np.float64),
    )
    Xc = Xs.tocsc()
    cases["sparse_class_sums (CSC)"] = (
        f"class_sums of the same X as CSC, {k} classes",
        lambda: cs.class_sums(Xc, scodes, None, k, xp=np, dtype=np.float64),
    )

    n, d, m = s(200_000), 40, 12
    Xcat = rng.integers(0, m, (n, d)).astype(np.float64)
    ccodes = rng.integers(0, 5, n)
    offsets = np.arange(d + 1, dtype=np.int64) * m
    cases["category_counts"] = (
        f"category_counts of dense X {n} x {d}, {m} categories each, 5 classes",
        lambda: cs.category_counts(Xcat, ccodes, None, offsets, 5, xp=np, dtype=np.float64),
    )

    # partial_fit of small sparse batches onto wide running sums (dense: under the sparse-sums width).
    d, batch, n_batches = 2**19, 200, 20
    batches = [_zipf_csr(rng, batch, d, 50) for _ in range(n_batches)]
    labels = [rng.integers(0, 4, batch) for _ in range(n_batches)]

    def stream():
        model = nbgpu.MultinomialNB()
        for Xb, yb in zip(batches, labels):
            model.partial_fit(Xb, yb, classes=np.arange(4))
        return dense(model._stats["feature_count"])

    cases["in_place_sums"] = (f"MultinomialNB.partial_fit of {n_batches} CSR batches of {batch} x {d}, 4 classes", stream)

    # A wide hashed-text model: sums kept sparse or dense.
    d, n = 2**20, s(20_000)
    Xw = _zipf_csr(rng, n, d, 100)
    yw = rng.integers(0, 53, n)

    def fit_wide():
        return nbgpu.MultinomialNB().fit(Xw, yw).predict(Xw[:100])

    cases["sparse_sums"] = (f"MultinomialNB.fit of CSR X {n} x {d}, {Xw.nnz} stored, 53 classes, then predict 100 rows",
                            fit_wide)

    # A fitted wide model (dense sums) scoring a few rows before its weights exist.
    d, n = 2**19, s(20_000)
    Xf = _zipf_csr(rng, n, d, 100)
    few = Xf[:10]

    def score_few():
        model.__dict__.pop("_weight_", None)  # as after fit: the weights not made yet
        return model.predict_log_proba(few)

    with paths.reference("sparse_sums"):  # the fast path under test is the scoring, not the sums
        model = nbgpu.MultinomialNB().fit(Xf, rng.integers(0, k, n))
    cases["few_columns"] = (f"predict_log_proba of 10 rows by a fitted MultinomialNB, {k} x {d}", score_few)

    n, d, m = s(200_000), 40, 12
    index = rng.integers(0, m, (n, d)) + np.arange(d) * m
    table = rng.random((d * m, k))
    cases["gathered_row_sums"] = (
        f"gathered_row_sums of a {n} x {d} index into a {d * m} x {k} table",
        lambda: gathered_row_sums(table, index, xp=np),
    )

    # Real-text-like scoring: a TF-IDF-sized CSR X in row blocks on the threads.
    n, d = s(40_000), 2**15
    Xr = _zipf_csr(rng, n, d, 50)
    Xr.data = rng.random(Xr.nnz)
    scorer = nbgpu.MultinomialNB().fit(Xr[:2000], rng.integers(0, 32, 2000))
    cases["row_views"] = (f"MultinomialNB.predict_log_proba of CSR X {n} x {d}, {Xr.nnz} stored, 32 classes",
                          lambda: scorer.predict_log_proba(Xr))

    n, d = s(200_000), 100
    Xf32 = rng.random((n, d), dtype=np.float32)
    bernoulli = nbgpu.BernoulliNB().fit(Xf32[:1000], rng.integers(0, k, 1000))
    cases["finite_by_sum"] = (
        f"check_finite of dense X {n} x {d} float32",
        lambda: (check_finite(Xf32, estimator=bernoulli), 0)[1],
    )
    cases["finite_by_sum (BernoulliNB.predict)"] = (
        f"BernoulliNB.predict of dense X {n} x {d} float32, {k} classes (each row block checked finite)",
        lambda: bernoulli.predict(Xf32),
    )

    # A wide model's file: sorted uint32 flat indices and whole-number float64 counts (Debian's 1-2gram
    # ComplementNB model has 2.4 million of each). Timed with reading the arrays back, the same on both.
    entries = s(2_400_000)
    members = {"indices": np.sort(rng.integers(0, 53 * 2**20, entries)).astype(np.uint32),
               "counts": np.minimum(rng.zipf(1.5, entries), 1000).astype(np.float64)}
    folder = Path(tempfile.mkdtemp(prefix="nbgpu-fast-paths-"))

    def saved():
        write_archive(folder / "m.nbgpu", members)
        with np.load(folder / "m.nbgpu") as stored:
            return np.concatenate([stored["indices"].astype(np.float64), stored["counts"]])

    cases["parallel_deflate"] = (f"write_archive of {entries} uint32 indices and float64 counts, then np.load", saved)
    return cases


def _device_cases(scale, rng):
    """``{name: (description, call)}`` of fast paths that run on a device only: counted on the emulated device
    (``tests/emulated_device.py``: launches, synchronisations, passes over X), not timed (on the CPU they do
    not run at all: the host checks each row block on its core)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import emulated_device as emu  # the tests' stand-in device

    from nbgpu.datasets import make_gaussian, make_zipf_text

    n = max(int(30_000 * scale), 50)
    Xt, yt = make_zipf_text(n, 2**20, tokens_per_doc=100, n_classes=20, random_state=0)
    Xg, yg = make_gaussian(max(int(20_000 * scale), 50), 20, n_classes=10, random_state=0)
    cases = {}
    for label, model, X, y in (("MultinomialNB CSR", nbgpu.MultinomialNB(), emu.cupyx.scipy.sparse.csr_matrix(Xt), yt),
                               ("MultinomialNB dense", nbgpu.MultinomialNB(), emu.cupy.asarray(Xt[:2_000, :2**14].toarray()),
                                yt[:2_000]),
                               ("KernelDensityNB dense", nbgpu.KernelDensityNB(), emu.cupy.asarray(Xg[:200]), yg[:200])):
        model.fit(X, emu.cupy.asarray(y))

        def predict(model=model, X=X):
            with emu.count_costs(X) as log:
                labels = model.predict(X)
            return labels.get(), log

        cases[f"deferred_checks ({label})"] = (f"{type(model).__name__}.predict of {label} X {X.shape}", predict)
    return cases


def _device_counts(name, what, call):
    """The emulated device's counts of ``call`` with fast path ``name`` and with its reference."""
    path = name.split(" ")[0]
    with paths.all_fast():
        fast, fast_log = call()
        with paths.reference(path):
            reference, reference_log = call()
    np.testing.assert_array_equal(fast, reference)
    keys = ("launches", "syncs", "x_reads")
    counts = {label: {key: round(getattr(log, key), 3) for key in keys}
              for label, log in (("fast", fast_log), ("reference", reference_log))}
    print(f"{name:40s} " + "  ".join(f"{key} {counts['fast'][key]} (reference {counts['reference'][key]})" for key in keys)
          + f"   ({what})", flush=True)
    return {"fast_path": path, "what": what, "emulated_device": counts}


def _peak_bytes(call):
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _values(result):
    return np.asarray(result.toarray() if sp.issparse(result) else result)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--json", default=None, help="where to write the results")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cases = _cases(args.scale, rng)
    only = {name.strip() for name in args.only.split(",") if name.strip()}
    report = {
        "machine": device_name(),
        "threads": n_threads(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "load_average_before": os.getloadavg(),
        "nice": os.nice(0),  # a shared machine: run at -20 (as root) to measure closer to quiet
        "repeat": args.repeat,
        "scale": args.scale,
        "cases": {},
    }
    for name, (what, call) in cases.items():
        if only and name not in only:
            continue
        path = name.split(" ")[0]

        def reference(call=call, path=path):
            with paths.reference(path):
                return call()

        with paths.all_fast():
            medians, results = interleaved_medians({"fast": call, "reference": reference}, args.repeat)
            peaks = {"fast": _peak_bytes(call), "reference": _peak_bytes(reference)}
        np.testing.assert_allclose(_values(results["fast"]), _values(results["reference"]), rtol=1e-9, atol=1e-12)
        entry = {
            "fast_path": path,
            "what": what,
            "seconds": medians,
            "peak_bytes": peaks,
            "time_ratio": medians["reference"] / medians["fast"],
            "memory_ratio": peaks["reference"] / max(peaks["fast"], 1),
        }
        report["cases"][name] = entry
        print(f"{name:28s} fast {medians['fast'] * 1e3:9.2f} ms  reference {medians['reference'] * 1e3:9.2f} ms  "
              f"time x{entry['time_ratio']:5.2f}  memory x{entry['memory_ratio']:5.2f}   ({what})", flush=True)
    for name, (what, call) in _device_cases(args.scale, rng).items():
        if not only or name in only or name.split(" ")[0] in only:
            report["cases"][name] = _device_counts(name, what, call)
    report["load_average_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
