"""Model file of a wide hashed-text model: load time against fit time, and memory.

    python benchmarks/model_file_wide.py [--log2-features 20] [--classes 53] [--rows 200000] [--repeats 3]

Fits MultinomialNB on synthetic hashed counts (Zipf-distributed feature
indices, as hashed words are), saves it, and then times, each in a fresh
process and interleaved over the repeats (medians reported):

- ``fit``: ``MultinomialNB().fit(X, y)`` (X read before the timer starts);
- ``load``: ``nbgpu.load(path)`` (reads and checks the statistics; the
  fitted parameters are derived when first used);
- ``load + predict 100``: load, then predict 100 documents (which derives
  the parameters);
- ``nbgpu info``: the whole command.

Every job imports nbgpu's estimator classes (and so scikit-learn) before
its timer starts: the figures are of the operations, not of imports.

Memory is each process's peak resident set (``VmHWM``), next to that
of a process that only imports nbgpu. Not a unit test: a script for
figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# Each job prints {"seconds": ..., "maxrss_kb": ...}; the timer covers the operation only.
_JOB = r"""
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
import nbgpu
kind, folder = sys.argv[1], sys.argv[2]
nbgpu.MultinomialNB, nbgpu.load  # the estimator classes (and scikit-learn) and model files imported before any timer
if kind == "fit":
    X, y = sp.load_npz(folder + "/X.npz"), np.load(folder + "/y.npy")
    start = time.perf_counter()
    nbgpu.MultinomialNB().fit(X, y)
elif kind == "load":
    start = time.perf_counter()
    nbgpu.load(folder + "/wide.nbgpu")
elif kind == "predict":  # load, then predict 100 documents (derives the parameters)
    X = sp.load_npz(folder + "/X.npz")[:100]
    start = time.perf_counter()
    nbgpu.load(folder + "/wide.nbgpu").predict(X)
elif kind == "info":
    from nbgpu.__main__ import main  # `python -m nbgpu`'s entry, in this process
    import contextlib, io
    with contextlib.redirect_stdout(io.StringIO()):
        main(["--version"])  # the command's modules imported before the timer
        start = time.perf_counter()
        main(["info", folder + "/wide.nbgpu", "--json"])
else:
    start = time.perf_counter()
seconds = time.perf_counter() - start
try:  # this process's own peak (ru_maxrss would count the parent's pages at the fork)
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "maxrss_kb": peak}))
"""


def _data(n_rows, n_features, n_classes, nnz_per_row, seed=0):
    rng = np.random.default_rng(seed)
    cols = (rng.zipf(1.1, size=n_rows * nnz_per_row) - 1) % n_features
    rows = np.repeat(np.arange(n_rows), nnz_per_row)
    X = sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(n_rows, n_features))
    X.sum_duplicates()
    return X, rng.integers(0, n_classes, size=n_rows)


def _job(kind, folder):
    out = subprocess.run([sys.executable, "-c", _JOB, kind, str(folder)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2-features", type=int, default=20)
    parser.add_argument("--classes", type=int, default=53)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--nnz-per-row", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", default="import,fit,load,predict,info", help="which of import,fit,load,predict,info to run")
    args = parser.parse_args()

    import nbgpu

    folder = Path(tempfile.mkdtemp(prefix="nbgpu-wide-"))
    X, y = _data(args.rows, 2**args.log2_features, args.classes, args.nnz_per_row)
    sp.save_npz(folder / "X.npz", X)
    np.save(folder / "y.npy", y)
    model = nbgpu.MultinomialNB().fit(X, y)
    start = time.perf_counter()
    path = nbgpu.save(model, folder / "wide.nbgpu")
    save_seconds = time.perf_counter() - start
    counts = model._stats["feature_count"]
    print(
        f"{args.rows} rows, {X.nnz} nonzeros, {args.classes} classes x 2^{args.log2_features} features: "
        f"statistics {counts.nbytes / 2**20:.0f} MiB ({np.count_nonzero(counts) / counts.size:.2%} nonzero); "
        f"file {path.stat().st_size / 2**20:.1f} MiB, saved in {save_seconds:.2f} s"
    )
    kinds = args.jobs.split(",")
    results = {kind: [] for kind in kinds}
    for _ in range(args.repeats):  # interleaved: each round runs every job once
        for kind in kinds:
            results[kind].append(_job(kind, folder))
    labels = {"import": "import nbgpu only", "fit": "fit", "load": "load", "predict": "load + predict 100", "info": "nbgpu info"}
    for kind in kinds:
        seconds = statistics.median(r["seconds"] for r in results[kind])
        rss = statistics.median(r["maxrss_kb"] for r in results[kind]) / 1024
        print(f"{labels[kind]:24s} {seconds:8.3f} s   peak RSS {rss:7.0f} MiB")
    if "fit" in kinds and "predict" in kinds:
        ratios = [p["seconds"] / f["seconds"] for p, f in zip(results["predict"], results["fit"])]
        print(f"load + predict 100 / fit: {statistics.median(ratios):.2f} (median of {len(ratios)} interleaved rounds)")


if __name__ == "__main__":
    main()
