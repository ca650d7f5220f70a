"""Checks shared by the tests of the models built on the core.

``assert_scores_match`` compares every scoring output of a fitted model with
a reference joint log-likelihood computed independently (scipy, scikit-learn,
by hand), including the namespace, device and dtype of the outputs.

Of scikit-learn's estimator checks, some test the core's input validation (its wording for a missing
``y``, object arrays, negative counts, all-zero weights). A model built on
the core shares those results, so such a check is an expected failure of a
new model exactly when the core's own estimator of the same kind fails it
too: computed here, so these expectations follow the core as it is fixed.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import softmax
from sklearn.utils import estimator_checks

import nbgpu
from conftest import assert_namespace, to_numpy

# The models beyond scikit-learn, by name (make_model builds any model by name).
EXTRA_MODELS = ["PoissonNB", "NormalBayesClassifier", "ColumnwiseNB"]

CORE_VALIDATION_CHECKS = (
    "check_all_zero_sample_weights_error",
    "check_dtype_object",
    "check_positive_only_tag_during_fit",
    "check_requires_y_none",
)


def make_model(name, **params):
    """An nbgpu model by class name; ColumnwiseNB as Gaussian columns 0-1 and Poisson counts after."""
    if name == "ColumnwiseNB":
        parts = [("gauss", nbgpu.GaussianNB(), [0, 1]), ("counts", nbgpu.PoissonNB(), slice(2, None))]
        return nbgpu.ColumnwiseNB(parts, **params)
    return getattr(nbgpu, name)(**params)


def inherited_failures(core_twin, checks=CORE_VALIDATION_CHECKS):
    """``{check name: reason}`` for those of ``checks`` that ``core_twin`` fails."""
    failed = {}
    for name in checks:
        check = getattr(estimator_checks, name, None)
        if check is None:  # not in this scikit-learn (older ones lack some)
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check(type(core_twin).__name__, core_twin)
        except Exception as exc:  # noqa: BLE001 - any failure of the core counts
            failed[name] = f"the core's {type(core_twin).__name__} fails it too: {type(exc).__name__}"
    return failed


def assert_scores_match(clf, X, reference_jll, backend, *, rtol, atol=0.0):
    """Joint log-likelihood, posteriors and predictions of ``clf`` on ``X``
    equal those of ``reference_jll`` (numpy, one column per class)."""
    jll = clf.predict_joint_log_proba(X)
    assert_namespace(jll, backend)
    assert jll.dtype == X.dtype
    np.testing.assert_allclose(to_numpy(jll), reference_jll, rtol=rtol, atol=atol)
    proba = clf.predict_proba(X)
    assert_namespace(proba, backend)
    np.testing.assert_allclose(to_numpy(proba), softmax(reference_jll, axis=1), atol=max(rtol, atol))
    np.testing.assert_array_equal(to_numpy(clf.predict(X)), np.argmax(reference_jll, axis=1))
