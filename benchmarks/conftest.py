"""pytest-benchmark set-up: data built once outside the timers, GPU synchronised.

Run with ``pytest benchmarks/`` (the unit-test run only collects ``tests/``).
Options: ``--bench-sizes tiny,small`` (the size presets of ``nbgpu bench --size``, whose data
``nbgpu.datasets.make_bench_data`` builds; default tiny,small; ``full`` is the speed issue's CPU targets),
``--bench-backends sklearn,nbgpu-cpu,nbgpu-gpu`` (default: all this machine
has; a requested backend that cannot run fails the session),
``--bench-corpus NAME`` (the real corpus of ``corpora.py``, default pydoc-en;
its tests skip where ``corpora.py`` cannot build it) and ``--bench-docs N``
(use its first N documents only).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import backends as _backends  # benchmarks/backends.py
from nbgpu.datasets import make_bench_data, make_zipf_text

# The real corpus as pipelines hand it over (nbgpu bench --inputs names the same kinds).
INPUT_KINDS = {
    "tfidf64": {"tfidf": True},
    "tfidf32": {"tfidf": True, "dtype": np.float32},
    "counts64": {},
    "tfidf64-sorted": {"tfidf": True, "sorted": True},  # a canonical input, for comparison
}


def pytest_addoption(parser):
    parser.addoption("--bench-sizes", default="tiny,small", help="comma-separated size presets")
    parser.addoption("--bench-backends", default=None, help="comma-separated backends")
    parser.addoption("--bench-corpus", default="pydoc-en", help="real corpus (corpora.py name)")
    parser.addoption("--bench-docs", type=int, default=None, help="documents of the real corpus to use")


def _option_list(config, name, default):
    raw = config.getoption(name)
    return default if raw is None else [t.strip() for t in raw.split(",") if t.strip()]


def pytest_configure(config):
    sizes = _option_list(config, "--bench-sizes", ["tiny", "small"])
    unknown = [s for s in sizes if s not in _backends.SIZES]
    if unknown:
        raise pytest.UsageError(f"--bench-sizes: unknown {unknown}; known {list(_backends.SIZES)}")
    have = _backends.available()
    backends = _option_list(config, "--bench-backends", have)
    missing = [b for b in backends if b not in have]
    if missing:
        raise pytest.UsageError(f"--bench-backends: {missing} requested but not usable here")
    config._nbgpu_bench = {
        "sizes": sizes,
        "backends": backends,
        "corpus": config.getoption("--bench-corpus"),
        "docs": config.getoption("--bench-docs"),
    }


def pytest_generate_tests(metafunc):
    chosen = metafunc.config._nbgpu_bench
    if "size" in metafunc.fixturenames:
        metafunc.parametrize("size", chosen["sizes"])
    if "bench_backend" in metafunc.fixturenames:
        metafunc.parametrize("bench_backend", chosen["backends"])
    if "input_kind" in metafunc.fixturenames:
        metafunc.parametrize("input_kind", list(INPUT_KINDS))


@functools.lru_cache(maxsize=4)
def _data(kind, size, variant):
    """(X, y) of ``nbgpu bench --size size`` for a data kind; ``variant`` scales the text density:
    the same number of documents, width and classes, ``variant`` times the tokens per document."""
    if variant == 1.0:
        return make_bench_data(kind, size)
    X, y = _data(kind, size, 1.0)
    tokens = round(float(X.sum()) / X.shape[0])  # the preset's mean (a Poisson mean: within a fraction of one)
    return make_zipf_text(*X.shape, tokens_per_doc=int(tokens * variant), n_classes=len(np.unique(y)), random_state=0)


@functools.lru_cache(maxsize=1)
def _corpus(name, docs):
    try:
        import corpora  # benchmarks/corpora.py: builds real corpora offline
    except ImportError:
        pytest.skip("benchmarks/corpora.py is not here: it builds the real corpora")
    try:
        return corpora.load(name, limit=docs)
    except corpora.CorpusUnavailable as exc:
        pytest.skip(f"corpus {name} cannot be built here: {exc}")


@functools.lru_cache(maxsize=2)
def _real(name, docs, kind):
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.model_selection import train_test_split

    texts, labels = _corpus(name, docs)
    train, validation, y_train, _ = train_test_split(texts, labels, test_size=0.2, random_state=0, stratify=labels)
    how = INPUT_KINDS[kind]
    if how.get("tfidf"):
        vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2, dtype=how.get("dtype", np.float64))
    else:
        vectorizer = CountVectorizer(min_df=2)
    X_train, X_validation = vectorizer.fit_transform(train), vectorizer.transform(validation)
    if how.get("sorted"):
        X_train.sort_indices()
        X_validation.sort_indices()
    return X_train, np.asarray(y_train), X_validation


@pytest.fixture
def real_text(request):
    """``real_text(kind)``: (X_train, y_train, X_validation) of the real corpus
    vectorised as ``kind`` (a key of ``INPUT_KINDS``)."""
    chosen = request.config._nbgpu_bench
    return lambda kind: _real(chosen["corpus"], chosen["docs"], kind)


@pytest.fixture
def time_op(benchmark):
    """Time ``op`` ("fit" on ``X, y`` or "predict" on ``X_predict``) of
    ``model`` on ``backend``, in group ``group``.

    The estimator is fitted once outside the timer (predict) and every timed
    call ends with a device synchronisation.
    """

    def run(model, op, backend, X, y, *, group, X_predict=None, extra=None):
        X_predict = X if X_predict is None else X_predict
        Xb, yb, Xp = (_backends.to_backend(backend, a) for a in (X, y, X_predict))
        est = _backends.estimator(backend, model).fit(Xb, yb)
        _backends.synchronize(backend)

        def call():
            out = est.fit(Xb, yb) if op == "fit" else est.predict(Xp)
            _backends.synchronize(backend)
            return out

        benchmark.group = group
        benchmark.extra_info.update(
            {"model": model, "op": op, "backend": backend, "bytes_of_X": _backends.bytes_read(X), **(extra or {})}
        )
        benchmark.pedantic(call, rounds=5, iterations=1, warmup_rounds=1)

    return run


@pytest.fixture
def run_bench(time_op):
    """Time ``op`` of ``model`` on ``backend`` with synthetic data of ``kind``/``size``."""

    def run(model, op, backend, kind, size, variant=1.0):
        X, y = _data(kind, size, variant)
        group = f"{model} {op} size={size}" + (f" density x{variant:g}" if variant != 1.0 else "")
        time_op(model, op, backend, X, y, group=group, extra={"size": size})

    return run
