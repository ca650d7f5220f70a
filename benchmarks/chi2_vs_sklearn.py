"""nbgpu.chi2 against sklearn.feature_selection.chi2 on real word counts (CPU).

Run: NBGPU_CORPORA=<folder with pydoc-en.jsonl> PYTHONPATH=. python benchmarks/chi2_vs_sklearn.py
Interleaved repeats, medians reported; the results are checked equal first.
Also times ``MultinomialNB.chi2_scores()`` (no pass over the data).
"""

import sys

import numpy as np
from interleaved import interleaved_medians, print_ratios
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
    calls = {
        "sklearn chi2": lambda: sk_chi2(X, y),
        "nbgpu.chi2": lambda: nbgpu.chi2(X, y),
        "MultinomialNB.chi2_scores()": model.chi2_scores,
    }
    medians, _ = interleaved_medians(calls, repeat)
    print_ratios(medians, "sklearn chi2", unit="ms")


if __name__ == "__main__":
    main(3 if "--quick" in sys.argv else 7)
