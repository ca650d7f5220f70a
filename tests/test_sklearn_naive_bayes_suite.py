"""scikit-learn's own naive Bayes test suite, run on nbgpu's classes.

``sklearn/tests/test_naive_bayes.py`` is loaded from the installed
scikit-learn with ``BernoulliNB``, ``CategoricalNB``, ``ComplementNB``,
``GaussianNB`` and ``MultinomialNB`` replaced by nbgpu's (see
``sklearn_suite.py``): code written against scikit-learn, its error messages
included, keeps working when the import changes. The few tests that cannot
pass by design are strict expected failures, each with its reason.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn import __version__ as sklearn_version
from sklearn import naive_bayes as sk

import nbgpu
from sklearn_suite import SKLEARN_VERSION, expected_failures, global_dtype, global_random_seed, load_suite  # noqa: F401

_NAMES = ("BernoulliNB", "CategoricalNB", "ComplementNB", "GaussianNB", "MultinomialNB")
SUITE = load_suite("tests/test_naive_bayes.py", {getattr(sk, n): getattr(nbgpu, n) for n in _NAMES})

_PRIVATE = "calls a private method of scikit-learn's class ({}), which nbgpu does not have"
KNOWN_FAILURES = [
    ("test_gnb_check_update_with_no_data", {}, AttributeError, _PRIVATE.format("GaussianNB._update_mean_variance")),
    ("test_check_alpha", {}, AttributeError, _PRIVATE.format("_BaseDiscreteNB._check_alpha")),
    ("test_alpha_vector", {}, AttributeError, _PRIVATE.format("_BaseDiscreteNB._check_alpha")),
    # By design: counts are float64 whatever the input dtype (exact up to 2**53).
    (
        "test_gnb_array_api_compliance",
        {"dtype_name": "float32"},
        AssertionError,
        "asserts that class_count_ has X's dtype; nbgpu keeps counts in float64 (here X is float32)",
    ),
    # By design: category codes are whole numbers (scikit-learn truncates
    # the iris measurements to integers without a word).
    (
        "test_discretenb_provide_prior_with_partial_fit",
        {"DiscreteNaiveBayes": nbgpu.CategoricalNB},
        ValueError,
        "feeds non-integer X (iris measurements) to CategoricalNB; nbgpu refuses non-integer category codes",
    ),
]
_known_failures = expected_failures(KNOWN_FAILURES)

# scikit-learn warns the same for the same input; this suite runs with
# warnings as errors, scikit-learn's does not.
pytestmark = pytest.mark.filterwarnings("ignore:alpha too small will result in numeric errors:UserWarning")

globals().update(SUITE.tests)

if SKLEARN_VERSION < (1, 8):
    # scikit-learn 1.8 gave this test atol=1e-12; before, it compared with rtol
    # alone, and a log-probability near 0 (-9.3e-10) computed without
    # cancellation differs from jll - logsumexp(jll) by ~3e-15. Its check, with
    # 1.8's tolerance:
    @pytest.mark.parametrize("Estimator", [getattr(nbgpu, name) for name in _NAMES])
    def test_predict_joint_proba(Estimator, global_random_seed):
        X, y = SUITE.module.get_random_integer_x_three_classes_y(global_random_seed)
        est = Estimator().fit(X, y)
        jll = est.predict_joint_log_proba(X)
        expected = jll - logsumexp(jll, axis=1, keepdims=True)
        np.testing.assert_allclose(est.predict_log_proba(X), expected, rtol=1e-7, atol=1e-12)


def test_every_class_is_replaced():
    """The suite really runs on nbgpu: every scikit-learn class it names is ours."""
    assert set(SUITE.replaced) == set(_NAMES)
    assert all(cls is getattr(nbgpu, name) for name, cls in SUITE.replaced.items())
    for value in vars(SUITE.module).values():
        if isinstance(value, list):
            assert not any(getattr(v, "__module__", "").startswith("sklearn.naive_bayes") for v in value)


def test_array_api_part_of_the_suite():
    """The suite's array API tests skip unless SCIPY_ARRAY_API=1 was set
    before scipy was imported: they run here in a subprocess that sets it
    (numpy, array_api_strict and torch on the CPU; CUDA ones where a GPU is)."""
    if "test_gnb_array_api_compliance" not in SUITE.tests:
        pytest.skip(f"scikit-learn {sklearn_version} has no test_gnb_array_api_compliance")
    root = Path(__file__).resolve().parents[1]
    # Not as an xdist worker (ci/gpu.sh runs the suite in workers): its
    # variables would make pytest-benchmark warn, an error here.
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}, "SCIPY_ARRAY_API": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark",
         "-k", "test_gnb_array_api_compliance",
         str(Path(__file__).relative_to(root))],
        cwd=root, env=env, capture_output=True, text=True, check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|xfailed|failed|errors?)", out.splitlines()[-1])}
    # numpy (4), array_api_strict float64 (4) and torch CPU float64 (4) pass;
    # the float32 ones (array_api_strict, torch CPU: 8) fail as expected. Torch
    # where installed (ci/test.sh installs it).
    torch = 1 if importlib.util.find_spec("torch") else 0
    assert counts.get("passed", 0) >= 8 + 4 * torch and counts.get("xfailed", 0) >= 4 + 4 * torch, out[-3000:]
