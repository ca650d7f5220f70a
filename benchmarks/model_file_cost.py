"""What loading a model file costs against what the file stores: real models and forged ones.

    python benchmarks/model_file_cost.py [--json FILE] [--quick]

For real models (scikit-learn's digits for every family, Zipf-distributed
hashed counts for wide text models, Gaussian data for the moment models)
it saves the model and reports the file's bytes, the memory the loader
declares a load takes (what ``max_memory`` is compared with, as
``nbgpu.load`` reports it when it refuses a file), their ratio (the
default bound allows 64, or 256 MiB), and, in a fresh process, the
seconds and peak resident memory (``VmHWM``) of ``nbgpu.load`` +
predicting one row, next to a process that only imports nbgpu. Then it
forges files that pass every checksum but declare gigabytes in zeros that
deflate 1000:1 (issue 34: NormalBayesClassifier d = 4096, GaussianNB
16 × 2**22, MultinomialNB 2 × 2**29 sparse counts) and reports how fast,
and in how much memory, they are refused. Not a unit test: a
script for figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import model_file_edits as edits  # noqa: E402  (forged files: the tests' helpers)

import nbgpu  # noqa: E402

_JOB = r"""
import json, sys, time
import numpy as np, scipy.sparse as sp
import nbgpu
nbgpu.MultinomialNB  # the estimator classes (and scikit-learn) imported before the timer
path, row = sys.argv[1], sys.argv[2]
start = time.perf_counter()
outcome = "loaded"
if path != "-":
    try:
        model = nbgpu.load(path)
        x = sp.load_npz(row) if row.endswith(".npz") else np.load(row)
        model.predict(x)
    except ValueError as exc:
        outcome = "refused: " + str(exc)[-120:]
seconds = time.perf_counter() - start
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
print(json.dumps({"seconds": seconds, "peak_mb": peak / 1024, "outcome": outcome}))
"""


def _zipf_counts(rng, n, k, d, per_row):
    cols = (rng.zipf(1.1, size=n * per_row) - 1) % d
    X = sp.csr_matrix((np.ones(n * per_row), (np.repeat(np.arange(n), per_row), cols)), shape=(n, d))
    X.sum_duplicates()
    return X, rng.integers(0, k, n)


def real_models(quick):
    from sklearn.datasets import load_digits

    rng = np.random.default_rng(0)
    X, y = load_digits(return_X_y=True)
    for name in ("GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "PoissonNB",
                 "NormalBayesClassifier", "KernelDensityNB"):
        yield f"{name} digits", getattr(nbgpu, name)(), X, y
    for n in (5_000,) if quick else (5_000, 200_000):
        Xz, yz = _zipf_counts(rng, n, 53, 2**20, 200)
        yield f"MultinomialNB hashed 53 x 2**20, {n} docs", nbgpu.MultinomialNB(), Xz, yz
    Xd, yd = _zipf_counts(rng, 20_000 if quick else 100_000, 20, 2**14, 400)
    yield "ComplementNB hashed 20 x 2**14 (dense counts)", nbgpu.ComplementNB(), Xd, yd
    Xi, yi = rng.integers(0, 5, size=(20_000, 2_000)).astype(float), rng.integers(0, 30, 20_000)
    yield "CategoricalNB small ints 30 x 2000", nbgpu.CategoricalNB(), Xi, yi
    Xg, yg = rng.normal(size=(20_000, 1_000)), rng.integers(0, 100, 20_000)
    yield "GaussianNB 100 x 1000", nbgpu.GaussianNB(), Xg, yg
    Xn, yn = rng.normal(size=(5_000, 300)), rng.integers(0, 5, 5_000)
    yield "NormalBayesClassifier 5 x 300", nbgpu.NormalBayesClassifier(), Xn, yn


def _base(folder, model, k):
    X = np.abs(np.random.default_rng(0).normal(size=(2 * k, 3)))
    members = edits.members(nbgpu.save(model.fit(X, np.arange(2 * k) % k), folder / "base.nbgpu"))
    return members, edits.header(members)


def forged_models(folder):
    """(name, path, one row) of files of compressed zeros within every element bound."""
    members, header = _base(folder, nbgpu.NormalBayesClassifier(), 2)
    header["n_features_in"] = d = 4096
    edits.put(members, header, "stats.mean", np.zeros((2, d)))
    edits.put(members, header, "stats.scatter", np.zeros((2, d, d)))
    yield "NormalBayesClassifier d=4096 of zeros", edits.write(folder / "normal.nbgpu", members, header, compress=True), d
    members, header = _base(folder, nbgpu.GaussianNB(), 16)
    header["n_features_in"] = d = 2**22
    for i in (1, 2):
        edits.put(members, header, f"stats.per_class.{i}", np.zeros((16, d)))
        edits.put(members, header, f"stats.total.{i}", np.zeros(d))
    yield "GaussianNB 16 x 2**22 of zeros", edits.write(folder / "gaussian.nbgpu", members, header, compress=True), d
    members, header = _base(folder, nbgpu.MultinomialNB(), 2)
    header["n_features_in"] = d = 2**29
    n = 2 * d // 1000
    edits.put_sparse(members, header, "feature_count", (2, d), (np.arange(n, dtype=np.int64) * 1000).astype("<u4"), np.ones(n))
    edits.put(members, header, "stats.class_count", np.full(2, n / 2))
    yield "MultinomialNB 2 x 2**29 sparse counts", edits.write(folder / "multinomial.nbgpu", members, header, compress=True), d


def _needed(path):
    """The bytes the loader declares a load of ``path`` takes: what it reports when refusing a file over its bound
    (``max_memory=1`` refuses every file, from its header, before reading any array)."""
    try:
        nbgpu.load(path, max_memory=1)
    except ValueError as exc:
        found = re.search(r"loading takes up to (\d+) bytes", str(exc))
        if found:
            return int(found.group(1))
        raise
    msg = f"{path}: loaded within max_memory=1, so the loader's declared bytes are unknown"
    raise RuntimeError(msg)


def _job(path, row):
    out = subprocess.run([sys.executable, "-c", _JOB, str(path), str(row)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--quick", action="store_true", help="smaller real models, no forged ones")
    args = parser.parse_args()
    rows = [{"model": "(import nbgpu only)", **_job("-", "-")}]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, model, X, y in real_models(args.quick):
            path = nbgpu.save(model.fit(X, y), folder / "real.nbgpu")
            row = folder / ("row.npz" if sp.issparse(X) else "row.npy")
            sp.save_npz(row, X[:1]) if sp.issparse(X) else np.save(row, X[:1])
            size, needed = path.stat().st_size, _needed(path)
            rows.append({"model": name, "file_bytes": size, "declared_bytes": needed, "ratio": needed / size, **_job(path, row)})
        if not args.quick:
            for name, path, d in forged_models(folder):
                row = folder / "row.npz"
                sp.save_npz(row, sp.csr_matrix((1, d)))
                size = path.stat().st_size
                rows.append({"model": name, "file_bytes": size, "declared_bytes": _needed(path),
                             "ratio": _needed(path) / size, **_job(path, row)})
    print(f"{'model':48s} {'file':>11s} {'declared':>14s} {'ratio':>7s} {'s':>6s} {'peak MB':>8s}  outcome")
    for r in rows:
        print(f"{r['model']:48s} {r.get('file_bytes', 0):>11,d} {r.get('declared_bytes', 0):>14,d} {r.get('ratio', 0):7.1f} "
              f"{r['seconds']:6.2f} {r['peak_mb']:8.0f}  {r['outcome'][:60]}")
    if args.json:
        meta = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(), "nbgpu": nbgpu.__version__}
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
