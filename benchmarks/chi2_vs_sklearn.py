"""nbgpu.chi2 against sklearn.feature_selection.chi2 on real word counts (CPU).

Run: NBGPU_CORPORA=<folder with pydoc-en.jsonl> PYTHONPATH=. python benchmarks/chi2_vs_sklearn.py
Interleaved repeats, medians reported; the results are checked equal first.
Also times ``MultinomialNB.chi2_scores()`` (no pass over the data).
"""

import sys
import time

import numpy as np
from sklearn.feature_selection import chi2 as sk_chi2
from text_corpus import load_counts

import nbgpu


def main(repeat=7):
    X, y, what = load_counts()
    print(f"{what}: {X.shape[0]} x {X.shape[1]}, {X.nnz} nonzeros, {len(np.unique(y))} classes, dtype {X.dtype}")
    ours, ref = nbgpu.chi2(X, y), sk_chi2(X, y)
    for a, b, name in zip(ours, ref, ("chi2", "pvalues")):
        ok = np.isfinite(b)
        rel = np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(b[ok]), 1e-300))
        print(f"  max relative difference of {name}: {rel:.1e}")
    model = nbgpu.MultinomialNB().fit(X, y)
    timings = {"sklearn chi2": [], "nbgpu.chi2": [], "MultinomialNB.chi2_scores()": []}
    calls = {
        "sklearn chi2": lambda: sk_chi2(X, y),
        "nbgpu.chi2": lambda: nbgpu.chi2(X, y),
        "MultinomialNB.chi2_scores()": model.chi2_scores,
    }
    for _ in range(repeat):
        for name, call in calls.items():
            t0 = time.perf_counter()
            call()
            timings[name].append(time.perf_counter() - t0)
    base = np.median(timings["sklearn chi2"])
    for name, ts in timings.items():
        med = np.median(ts)
        print(f"  {name:30s} median {med * 1e3:8.1f} ms   sklearn / this = {base / med:6.1f}x")


if __name__ == "__main__":
    main(3 if "--quick" in sys.argv else 7)
