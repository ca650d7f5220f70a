"""A wide hashed model (2**20 features, 50 classes; ``nbgpu bench --data streaming``'s, built by
``nbgpu.datasets.make_bench_data("wide")``): ``partial_fit`` in 1, 10 and 100 chunks (then one
prediction, so lazily made parameters are paid for), and loading a saved model to predict."""

import functools
import pickle

import numpy as np
import pytest

import nbgpu
from backends import estimator  # benchmarks/backends.py
from nbgpu.datasets import make_bench_data

CHUNKS = (1, 10, 100)
PREDICTED = 2_000  # the wide corpus's last rows: the documents predicted


@functools.lru_cache(maxsize=1)
def _wide(size):
    X, y = make_bench_data("wide", size)
    return X[:-PREDICTED], y[:-PREDICTED], X[-PREDICTED:]


def _host_only(backend):
    if backend == "nbgpu-gpu":
        pytest.skip("streaming from host chunks on a GPU is timed by benchmarks/gpu_targets.py")


def _stream(model, parts, classes, probe):
    for Xc, yc in parts:
        model.partial_fit(Xc, yc, classes=classes)
    return model.predict(probe)


@pytest.mark.parametrize("chunks", CHUNKS)
def test_stream_wide_model(benchmark, bench_backend, size, chunks):
    _host_only(bench_backend)
    X, y, X_validation = _wide(size)
    cuts = np.linspace(0, X.shape[0], chunks + 1).astype(int)
    parts = [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]  # sliced outside the timer
    classes, probe = np.unique(y), X_validation[:1]
    benchmark.group = f"MultinomialNB stream wide size={size} chunks={chunks}"
    benchmark.extra_info.update({"backend": bench_backend, "chunks": chunks, "size": size})
    benchmark.pedantic(
        lambda: _stream(estimator(bench_backend, "MultinomialNB"), parts, classes, probe),
        rounds=1 if chunks >= 100 else 3, iterations=1, warmup_rounds=0,  # 100 chunks: minutes for scikit-learn
    )


def test_load_then_predict_wide_model(benchmark, bench_backend, size, tmp_path):
    _host_only(bench_backend)
    X, y, X_validation = _wide(size)
    model = estimator(bench_backend, "MultinomialNB").fit(X, y)
    path = tmp_path / ("wide-sklearn.pkl" if bench_backend == "sklearn" else "wide.nbgpu")
    if bench_backend == "sklearn":  # as each library saves a model
        path.write_bytes(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
        load = lambda: pickle.loads(path.read_bytes())  # noqa: E731, S301  (the file written just above)
    else:
        nbgpu.save(model, path)
        load = lambda: nbgpu.load(path)  # noqa: E731
    del model
    benchmark.group = f"MultinomialNB load+predict wide size={size}"
    benchmark.extra_info.update({"backend": bench_backend, "size": size})
    benchmark.pedantic(lambda: load().predict(X_validation), rounds=3, iterations=1, warmup_rounds=0)
