"""SmoothingSearchCV against GridSearchCV over the same nbgpu estimator, on real word counts (CPU).

Run: NBGPU_CORPORA=<folder with pydoc-en.jsonl> PYTHONPATH=. python benchmarks/smoothing_search_vs_gridsearch.py
A 10-point alpha grid, 5 stratified folds; interleaved repeats, medians
reported; best_params_ and mean_test_score are checked equal first.
"""

import sys

import numpy as np
from interleaved import interleaved_medians, print_ratios
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from text_corpus import load_counts

import nbgpu


def main(repeat=3):
    X, y, what = load_counts()
    print(f"{what}: {X.shape[0]} x {X.shape[1]}, {X.nnz} nonzeros, {len(np.unique(y))} classes")
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for est, grid in (
        (nbgpu.MultinomialNB(), {"alpha": list(np.logspace(-3, 0, 10))}),
        (nbgpu.ComplementNB(), {"alpha": list(np.logspace(-2, 0, 5)), "norm": [False, True]}),
    ):
        searches = {
            "GridSearchCV": lambda est=est, grid=grid: GridSearchCV(est, grid, cv=cv).fit(X, y),
            "SmoothingSearchCV": lambda est=est, grid=grid: nbgpu.SmoothingSearchCV(est, grid, cv=cv).fit(X, y),
        }
        medians, results = interleaved_medians(searches, repeat)
        ref, ours = results["GridSearchCV"], results["SmoothingSearchCV"]
        diff = np.max(np.abs(ref.cv_results_["mean_test_score"] - ours.cv_results_["mean_test_score"]))
        n_points = len(ours.cv_results_["params"])
        print(f"{type(est).__name__}, {n_points} grid points x 5 folds:")
        print(f"  best_params_ equal: {ref.best_params_ == ours.best_params_} ({ours.best_params_}), "
              f"max |mean_test_score difference| = {diff:.1e}, best score {ours.best_score_:.4f}")
        print_ratios(medians, "GridSearchCV")


if __name__ == "__main__":
    main(1 if "--quick" in sys.argv else 3)
