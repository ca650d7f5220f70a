"""SmoothingSearchCV against GridSearchCV over the same text Pipeline (CPU).

Run: PYTHONPATH=. python benchmarks/smoothing_search_pipeline.py [--docs N] [--quick]
TfidfVectorizer + MultinomialNB, 5 alphas x 2 fit_prior, 5 stratified folds,
on Debian package descriptions (read with ``apt-cache dumpavail``, as
streaming_real_text.py reads them; or ``--corpus FILE``, JSON lines {"text",
"label"}; the first 20,000 by default). GridSearchCV fits the whole Pipeline for every
grid point and fold (50 vectorizer fits); SmoothingSearchCV fits the vectorizer
once per fold (5) and finalizes every grid point from the fold's statistics.
Interleaved repeats, medians reported; best_params_ are asserted equal.
"""

import argparse

import numpy as np
from interleaved import interleaved_medians, print_ratios
from streaming_real_text import debian_descriptions, jsonl
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline

import nbgpu


def load(n_docs, corpus=None):
    texts, labels = jsonl(corpus) if corpus else debian_descriptions()
    return texts[:n_docs], labels[:n_docs]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="one repeat instead of 3")
    parser.add_argument("--corpus", help="JSON-lines corpus instead of Debian's descriptions")
    args = parser.parse_args()
    docs, y = load(args.docs, args.corpus)
    print(f"{args.corpus or 'Debian package descriptions'}: {len(docs)} documents, {len(np.unique(y))} labels")
    pipeline = Pipeline([("tfidf", TfidfVectorizer()), ("nb", nbgpu.MultinomialNB())])
    grid = {"nb__alpha": [0.003, 0.01, 0.03, 0.1, 0.3], "nb__fit_prior": [True, False]}
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    searches = {
        "GridSearchCV": lambda: GridSearchCV(pipeline, grid, cv=cv).fit(docs, y),
        "SmoothingSearchCV": lambda: nbgpu.SmoothingSearchCV(pipeline, grid, cv=cv).fit(docs, y),
    }
    medians, results = interleaved_medians(searches, 1 if args.quick else 3)
    ref, ours = results["GridSearchCV"], results["SmoothingSearchCV"]
    assert ours.best_params_ == ref.best_params_, (ours.best_params_, ref.best_params_)
    diff = np.max(np.abs(ref.cv_results_["mean_test_score"] - ours.cv_results_["mean_test_score"]))
    print(f"TfidfVectorizer + MultinomialNB, {len(ours.cv_results_['params'])} grid points x 5 folds:")
    print(f"  best_params_ equal: True ({ours.best_params_}), max |mean_test_score difference| = {diff:.1e}, "
          f"best score {ours.best_score_:.4f}")
    print(f"  GridSearchCV {medians['GridSearchCV']:.2f} s, SmoothingSearchCV {medians['SmoothingSearchCV']:.2f} s, "
          f"ratio {medians['GridSearchCV'] / medians['SmoothingSearchCV']:.1f}x")
    print_ratios(medians, "GridSearchCV")


if __name__ == "__main__":
    main()
