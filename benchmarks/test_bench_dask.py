"""Dask fit of a corpus larger than a worker's memory limit, on 1 and 2 workers.

The same fit as ``benchmarks/dask_scaling.py`` (which also prints the
speed-up), timed by pytest-benchmark: compare the two rows of the group.
"""

import numpy as np
import pytest

pytest.importorskip("distributed")

import dask_scaling

SIZES = {**dask_scaling.DEFAULTS, "blocks": 48}
WORKER_MEMORY = "1GB"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    paths = dask_scaling.write_corpus(str(tmp_path_factory.mktemp("corpus")), **SIZES)
    assert dask_scaling.corpus_bytes(paths) > 1.2 * 2**30  # more than one worker may hold
    return dask_scaling.dask_corpus(paths, docs=SIZES["docs"], features=SIZES["features"])


@pytest.mark.parametrize("n_workers", [1, 2])
def test_dask_fit(benchmark, corpus, n_workers):
    X, y = corpus
    classes = np.arange(SIZES["classes"])
    with dask_scaling.cluster(n_workers, WORKER_MEMORY):
        dask_scaling.fit_once(X[: SIZES["docs"]], y[: SIZES["docs"]], classes)  # warm-up
        benchmark.group = f"dask MultinomialNB fit, corpus > worker memory ({WORKER_MEMORY})"
        benchmark.extra_info.update({"n_workers": n_workers, **SIZES})
        model = benchmark.pedantic(dask_scaling.fit_once, args=(X, y, classes), rounds=3, iterations=1)
    assert model.class_count_.sum() == X.shape[0]
