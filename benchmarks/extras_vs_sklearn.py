"""Wall-clock of NormalBayesClassifier and PoissonNB against their nearest scikit-learn peers.

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/extras_vs_sklearn.py
(best of 3; CPU; pass ``--quick`` for a smaller size). Not part of the test run.
"""

import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn import naive_bayes as sk
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis

from nbgpu import NormalBayesClassifier, PoissonNB


def best(f, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(scale=1.0):
    rng = np.random.default_rng(0)
    n, d, k = int(200_000 * scale), 50, 10
    X, y = rng.normal(size=(n, d)), rng.integers(0, k, n)
    ours, qda = NormalBayesClassifier(reg_covar=0.0), QuadraticDiscriminantAnalysis()
    print(f"dense {n} x {d}, {k} classes")
    print(f"  fit            NormalBayesClassifier {best(lambda: ours.fit(X, y)):.3f}s   QDA {best(lambda: qda.fit(X, y)):.3f}s")
    print(f"  predict_proba  NormalBayesClassifier {best(lambda: ours.predict_proba(X)):.3f}s   QDA {best(lambda: qda.predict_proba(X)):.3f}s")
    print(f"  max |P_ours - P_qda| = {np.abs(ours.predict_proba(X) - qda.predict_proba(X)).max():.1e}")

    n, d, k = int(100_000 * scale), 50_000, 20
    nnz = int(n * d * 0.002)
    Xs = sp.csr_matrix((rng.integers(1, 5, nnz).astype(float), (rng.integers(0, n, nnz), rng.integers(0, d, nnz))), shape=(n, d))
    Xs.sum_duplicates()
    ys = rng.integers(0, k, n)
    pois, mult = PoissonNB(), sk.MultinomialNB()
    print(f"sparse CSR {n} x {d}, {Xs.nnz} nonzeros, {k} classes")
    print(f"  fit                      PoissonNB {best(lambda: pois.fit(Xs, ys)):.3f}s   sklearn MultinomialNB {best(lambda: mult.fit(Xs, ys)):.3f}s")
    print(f"  predict_proba            PoissonNB {best(lambda: pois.predict_proba(Xs)):.3f}s   sklearn MultinomialNB {best(lambda: mult.predict_proba(Xs)):.3f}s")
    print(f"  predict_joint_log_proba  PoissonNB {best(lambda: pois.predict_joint_log_proba(Xs)):.3f}s (with -sum log x!)")


if __name__ == "__main__":
    main(0.1 if "--quick" in sys.argv else 1.0)
