"""partial_fit in 1, 10 and 100 chunks against one fit of the same rows.

A wide hashed-text model (2**20 features, 50 classes, 60,000 documents of a
Zipfian synthetic corpus, CSR float32), ComplementNB; each run ends with a
predict of 20,000 documents, which derives the parameters partial_fit
deferred and lays the weights out for a large product as fit does (a
predict of a few rows would gather only the weights it uses). Medians of
interleaved repeats, one process. Run from the repository root:

    python benchmarks/streaming_vs_fit.py [repeats]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import nbgpu
from nbgpu._app.bench import zipf_corpus


def main(repeats=3):
    X, y = zipf_corpus(60_000, 2**20, 100, 50, seed=0)
    classes = np.arange(50)

    def run(n_chunks):
        model = nbgpu.ComplementNB()
        start = time.perf_counter()
        if n_chunks == 0:
            model.fit(X, y)
        else:
            step = -(-X.shape[0] // n_chunks)
            for a in range(0, X.shape[0], step):
                model.partial_fit(X[a : a + step], y[a : a + step], classes=classes)
        model.predict(X[:20_000])
        return time.perf_counter() - start

    times = {n: [] for n in (0, 1, 10, 100)}
    for _ in range(repeats):
        for n in times:
            times[n].append(run(n))
    median = {n: float(np.median(t)) for n, t in times.items()}
    for n, t in median.items():
        label = "one fit" if n == 0 else f"{n} chunks"
        print(f"{label:10s} {t:7.3f} s   {t / median[0]:5.2f}x one fit")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
