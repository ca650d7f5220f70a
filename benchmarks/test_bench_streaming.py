"""A wide hashed model (2**20 features, 50 classes): ``partial_fit`` in 1, 10
and 100 chunks (then one prediction, so lazily made parameters are paid
for), and loading a saved model to predict."""

import functools

import numpy as np
import pytest

from nbgpu._app import bench as _bench  # the wide run of `nbgpu bench --data streaming`
from nbgpu.datasets import make_zipf_text


@functools.lru_cache(maxsize=1)
def _wide(size):
    n, d, tokens, k = _bench.WIDE_SIZES[size]
    X, y = make_zipf_text(n + _bench.VALIDATION_DOCS, d, tokens_per_doc=tokens, n_classes=k, random_state=1)
    return X[:n], y[:n], X[n:]


def _host_only(backend):
    if backend == "nbgpu-gpu":
        pytest.skip("streaming from host chunks on a GPU is timed by benchmarks/gpu_targets.py")


@pytest.mark.parametrize("chunks", _bench.CHUNKS)
def test_stream_wide_model(benchmark, bench_backend, size, chunks):
    _host_only(bench_backend)
    X, y, X_validation = _wide(size)
    parts = _bench.row_chunks(X, y, chunks)
    classes, probe = np.unique(y), X_validation[:1]
    benchmark.group = f"MultinomialNB stream wide size={size} chunks={chunks}"
    benchmark.extra_info.update({"backend": bench_backend, "chunks": chunks, "size": size})
    benchmark.pedantic(
        lambda: _bench.stream(_bench._estimator(bench_backend, "MultinomialNB"), parts, classes, probe),
        rounds=1 if chunks >= 100 else 3, iterations=1, warmup_rounds=0,  # 100 chunks: minutes for scikit-learn
    )


def test_load_then_predict_wide_model(benchmark, bench_backend, size, tmp_path):
    _host_only(bench_backend)
    X, y, X_validation = _wide(size)
    model = _bench._estimator(bench_backend, "MultinomialNB").fit(X, y)
    path = _bench.save_model(bench_backend, model, tmp_path)
    del model
    benchmark.group = f"MultinomialNB load+predict wide size={size}"
    benchmark.extra_info.update({"backend": bench_backend, "size": size})
    benchmark.pedantic(
        lambda: _bench.load_and_predict(bench_backend, path, X_validation), rounds=3, iterations=1, warmup_rounds=0
    )
