"""scikit-learn's estimator checks with the parameters of issue 4 switched on.

Each variant must pass every check that the estimator passes with its
defaults (checks the core still fails are the core's to fix, not hidden here).
"""

import warnings

import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

import nbgpu

VARIANTS = [
    nbgpu.GaussianNB(prior_smoothing=1.0, missing="ignore"),
    nbgpu.MultinomialNB(prior_smoothing=1.0),
    nbgpu.ComplementNB(prior_smoothing=0.5),
    nbgpu.BernoulliNB(prior_smoothing=2.0),
    nbgpu.CategoricalNB(prior_smoothing=0.5, missing="ignore"),
    nbgpu.PoissonNB(prior_smoothing=1.0, missing="ignore"),
    nbgpu.NormalBayesClassifier(prior_smoothing=1.0),
    nbgpu.ColumnwiseNB(
        [("diag", nbgpu.GaussianNB(missing="ignore"), slice(None)), ("full", nbgpu.NormalBayesClassifier(), slice(None))],
        prior_smoothing=1.0,
    ),
    nbgpu.ColumnwiseNB(  # every part takes NaN: allow_nan, so the checks feed it NaN
        [("diag", nbgpu.GaussianNB(missing="ignore"), slice(None)), ("counts", nbgpu.PoissonNB(missing="ignore"), slice(None))],
        prior_smoothing=0.5,
    ),
]


def _failed(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    assert len(results) > 50  # the checks ran
    return {r["check_name"] for r in results if r["status"] == "failed"}


@pytest.mark.parametrize("estimator", VARIANTS, ids=repr)
def test_variant_passes_what_the_default_passes(estimator):
    default = clone(estimator).set_params(prior_smoothing=0.0)
    for name in default.get_params():  # the model's own, or a part's (<part>__missing)
        if name == "missing" or name.endswith("__missing"):
            default.set_params(**{name: "error"})
    assert _failed(estimator) <= _failed(default)
