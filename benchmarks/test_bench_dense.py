"""Categorical and Gaussian naive Bayes on dense data."""

import pytest


@pytest.mark.parametrize("op", ["fit", "predict"])
@pytest.mark.parametrize("model", ["CategoricalNB", "GaussianNB"])
def test_dense(run_bench, model, op, bench_backend, size):
    run_bench(model, op, bench_backend, "categorical" if model == "CategoricalNB" else "gaussian", size)
