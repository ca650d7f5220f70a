"""Multinomial, complement and Bernoulli on a Zipfian sparse corpus."""

import pytest


@pytest.mark.parametrize("op", ["fit", "predict"])
@pytest.mark.parametrize("model", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
@pytest.mark.parametrize("density", [0.25, 1.0, 4.0], ids=lambda v: f"density{v:g}")
def test_text(run_bench, model, op, bench_backend, size, density):
    run_bench(model, op, bench_backend, "text", size, variant=density)
