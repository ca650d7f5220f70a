"""pytest-benchmark set-up: data built once outside the timers, GPU synchronised.

Run with ``pytest benchmarks/`` (the unit-test run only collects ``tests/``).
Options: ``--bench-sizes tiny,small`` (sizes of ``nbgpu._app.bench.SIZES``, default
tiny,small; ``full`` is the speed issue's CPU targets) and
``--bench-backends sklearn,nbgpu-cpu,nbgpu-gpu`` (default: all this machine
has; a requested backend that cannot run fails the session).
"""

from __future__ import annotations

import functools

import pytest

from nbgpu._app import bench as _bench
from nbgpu._array.devices import synchronize


def pytest_addoption(parser):
    parser.addoption("--bench-sizes", default="tiny,small", help="comma-separated size presets")
    parser.addoption("--bench-backends", default=None, help="comma-separated backends")


def _option_list(config, name, default):
    raw = config.getoption(name)
    return default if raw is None else [t.strip() for t in raw.split(",") if t.strip()]


def pytest_configure(config):
    sizes = _option_list(config, "--bench-sizes", ["tiny", "small"])
    unknown = [s for s in sizes if s not in _bench.SIZES]
    if unknown:
        raise pytest.UsageError(f"--bench-sizes: unknown {unknown}; known {list(_bench.SIZES)}")
    have = _bench.available_backends()
    backends = _option_list(config, "--bench-backends", have)
    missing = [b for b in backends if b not in have]
    if missing:
        raise pytest.UsageError(f"--bench-backends: {missing} requested but not usable here")
    config._nbgpu_bench = {"sizes": sizes, "backends": backends}


def pytest_generate_tests(metafunc):
    chosen = metafunc.config._nbgpu_bench
    if "size" in metafunc.fixturenames:
        metafunc.parametrize("size", chosen["sizes"])
    if "bench_backend" in metafunc.fixturenames:
        metafunc.parametrize("bench_backend", chosen["backends"])


@functools.lru_cache(maxsize=4)
def _data(kind, size, variant):
    """(X, y) for a data kind and size; ``variant`` scales the text density."""
    if kind == "text" and variant != 1.0:
        n, d, tokens, k = _bench.SIZES[size]["text"]
        return _bench.zipf_corpus(n, d, int(tokens * variant), k)
    return _bench.make_data(kind, size)


@pytest.fixture
def run_bench(benchmark):
    """Time ``op`` of ``model`` on ``backend`` with data of ``kind``/``size``.

    The estimator is fitted once outside the timer (predict) and every timed
    call ends with a device synchronisation.
    """

    def run(model, op, backend, kind, size, variant=1.0):
        X, y = _data(kind, size, variant)
        Xb, yb = _bench._on_backend(backend, X, y)
        like = _bench.backend_like(backend)
        est = _bench._estimator(backend, model).fit(Xb, yb)
        synchronize(like)

        def call():
            out = est.fit(Xb, yb) if op == "fit" else est.predict(Xb)
            synchronize(like)
            return out

        benchmark.group = f"{model} {op} size={size}" + (f" density x{variant:g}" if variant != 1.0 else "")
        benchmark.extra_info.update(
            {"model": model, "op": op, "backend": backend, "size": size, "bytes_of_X": _bench.bytes_read(X)}
        )
        benchmark.pedantic(call, rounds=5, iterations=1, warmup_rounds=1)

    return run
