"""A wide hashed model streamed in chunks, and loaded from a file to predict.

What ``nbgpu bench --data streaming`` and ``benchmarks/test_bench_streaming.py``
time: ``partial_fit`` over 1, 10 and 100 row chunks of a corpus hashed onto
2**20 features with about 50 classes (every chunk costs at least a pass over
the k × d statistics, so this is where per-chunk work shows), and loading a
saved wide model then predicting (nbgpu's model file against scikit-learn's
pickle).
"""

from __future__ import annotations

import os
import pickle

import numpy as np

# (documents, features, tokens per document, classes) of the wide model's corpus.
WIDE_SIZES = {
    "tiny": (4_000, 2**20, 100, 50),
    "small": (20_000, 2**20, 100, 50),
    "full": (100_000, 2**20, 100, 50),
    "gpu": (100_000, 2**20, 100, 50),
}
CHUNKS = (1, 10, 100)
VALIDATION_DOCS = 2_000  # rows predicted after loading


def row_chunks(X, y, n_chunks):
    """``n_chunks`` consecutive row ranges of ``(X, y)`` (sliced outside any timer)."""
    cuts = np.linspace(0, X.shape[0], n_chunks + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]


def stream(estimator, chunks, classes, probe):
    """``partial_fit`` over ``chunks``, then ``predict(probe)``: a model whose
    parameters are made lazily pays for them there, once, as a user would."""
    for Xc, yc in chunks:
        estimator.partial_fit(Xc, yc, classes=classes)
    return estimator.predict(probe)


def save_model(backend, estimator, folder):
    """Write ``estimator`` the way its library saves models; the file's path."""
    if backend == "sklearn":
        path = os.path.join(folder, "wide-sklearn.pkl")
        with open(path, "wb") as f:
            pickle.dump(estimator, f, protocol=pickle.HIGHEST_PROTOCOL)
        return path
    import nbgpu

    path = os.path.join(folder, "wide.nbgpu")
    nbgpu.save(estimator, path)
    return path


def load_and_predict(backend, path, X):
    """Load the model at ``path`` and predict ``X``."""
    if backend == "sklearn":
        with open(path, "rb") as f:
            model = pickle.load(f)  # the benchmark's own file, written just before
    else:
        import nbgpu

        model = nbgpu.load(path)
    return model.predict(X)
