"""scikit-learn's estimator contract, and the models inside Pipeline and
GridSearchCV.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler

import nbgpu
from _data import MODELS, dataset
from conftest import subprocess_env
from sklearn_suite import parametrize_with_checks

# CategoricalNB refuses non-integer X (issue 2: "non-integer categories" is
# bad input), where scikit-learn's CategoricalNB truncates it. These checks
# feed uniform floats in [0, 1) without applying the `categorical` input tag.
_FLOAT_DATA = "feeds non-integer X to a categorical model; nbgpu refuses non-integer categories by design"
# ARCHITECTURE.md, design 2, "array in, array out": a fitted model scores input of any
# namespace, moving its parameters there; scikit-learn expects a refusal.
_ANY_NAMESPACE = "nbgpu scores input of any namespace/device (array in, array out) instead of refusing it"
EXPECTED_FAILED = {name: {"check_array_api_same_namespace": _ANY_NAMESPACE} for name in MODELS}
EXPECTED_FAILED["CategoricalNB"].update(
    {
        "check_sample_weight_equivalence_on_dense_data": _FLOAT_DATA,
        "check_sample_weight_equivalence_on_sparse_data": _FLOAT_DATA,
        "check_classifiers_one_label_sample_weights": _FLOAT_DATA,
    }
)


def expected_failed_checks(estimator):
    return EXPECTED_FAILED[type(estimator).__name__]


# The array API checks skip themselves unless SCIPY_ARRAY_API=1 was set
# before scipy was imported; test_array_api_checks runs them that way.
@parametrize_with_checks([getattr(nbgpu, name)() for name in MODELS], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# check_estimator(on_fail=None)'s statuses for the array API checks only (it would run every
# check, which test_sklearn_estimator_checks already runs: 5x the time): the same generator, the
# same name of a check (the function behind its wrappers and partials) and the same statuses.
_ARRAY_API_SCRIPT = """
import json, sys
from functools import partial
from unittest import SkipTest
import nbgpu
from sklearn.utils.estimator_checks import estimator_checks_generator
sys.path.insert(0, "tests")
from test_estimator_checks import MODELS, expected_failed_checks

def check_name(check):
    while hasattr(check, "__wrapped__"):
        check = check.__wrapped__
    return check.func.__name__ if isinstance(check, partial) else check.__name__

out = []
for name in MODELS:
    expected = expected_failed_checks(getattr(nbgpu, name)())
    for est, check in estimator_checks_generator(getattr(nbgpu, name)(), expected_failed_checks=expected, mark=None):
        if "array_api" not in check_name(check):
            continue
        try:
            check(est)
            status, exc = "passed", None
        except SkipTest as e:
            status, exc = "skipped", e
        except Exception as e:
            status, exc = ("xfail" if check_name(check) in expected else "failed"), e
        out.append([name, check_name(check), status, str(exc)[:300]])
print(json.dumps(out))
"""


def test_array_api_checks():
    """scikit-learn's array API checks with SCIPY_ARRAY_API=1 (in a subprocess:
    the variable only counts before scipy is imported)."""
    root = Path(__file__).resolve().parents[1]
    env = subprocess_env(SCIPY_ARRAY_API="1")
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _ARRAY_API_SCRIPT], cwd=root, env=env, capture_output=True, text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    bad = [r for r in results if r[2] not in ("passed", "skipped", "xfail")]
    assert not bad, bad
    passed = [r for r in results if r[2] == "passed"]
    # numpy, array_api_strict (two devices) and torch CPU where installed (ci/test.sh
    # installs it), for all five models (CUDA, MPS, XPU, cupy and dpnp skip here).
    assert {r[0] for r in passed} == set(MODELS)
    assert len(passed) >= 5 * (6 if importlib.util.find_spec("torch") else 3), len(passed)


def test_categorical_refuses_the_float_data_of_those_checks():
    """The reason given above, checked: the same data raises our error."""
    X = np.random.RandomState(42).rand(15, 30)
    with pytest.raises(ValueError, match="whole numbers"):
        nbgpu.CategoricalNB().fit(X, np.arange(15) % 3)


@pytest.mark.parametrize("name", MODELS)
def test_pipeline_and_grid_search(name):
    X, y = dataset("wine", "GaussianNB")
    if name == "GaussianNB":
        steps, grid = [StandardScaler()], {"gaussiannb__var_smoothing": [1e-9, 1e-3, 1e-1]}
    elif name == "CategoricalNB":
        steps = [KBinsDiscretizer(n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf")]
        grid = {"categoricalnb__alpha": [0.1, 1.0], "kbinsdiscretizer__n_bins": [3, 5]}
    elif name == "BernoulliNB":
        steps, grid = [StandardScaler()], {"bernoullinb__alpha": [0.1, 1.0], "bernoullinb__binarize": [0.0, 0.5]}
    else:
        steps, grid = [], {f"{name.lower()}__alpha": [0.01, 0.1, 1.0]}
    pipe = make_pipeline(*steps, getattr(nbgpu, name)())
    search = GridSearchCV(pipe, grid, cv=3).fit(X, y)
    assert search.best_score_ > 0.6  # wine is easy; a broken model scores ~0.4
    assert set(search.cv_results_["params"][0]) == set(grid)
    pred = search.predict(X)
    assert pred.shape == y.shape
    assert search.score(X, y) == pytest.approx(np.mean(pred == y))


def test_text_pipeline_on_sparse_counts():
    """CountVectorizer's scipy.sparse output goes straight in, never densified."""
    docs = ["the cat sat", "the dog barked", "a cat and a dog", "dogs bark", "cats sit", "the cat purred"] * 5
    y = np.array([0, 1, 1, 1, 0, 0] * 5)
    pipe = make_pipeline(CountVectorizer(), nbgpu.MultinomialNB())
    scores = cross_val_score(pipe, docs, y, cv=3)
    assert scores.mean() > 0.8
    Xt = pipe[:-1].fit_transform(docs)
    assert sp.issparse(Xt)


def test_sparse_corpus_in_grid_search():
    X, y = dataset("zipf", "MultinomialNB")
    search = GridSearchCV(nbgpu.ComplementNB(), {"alpha": [0.1, 1.0], "norm": [False, True]}, cv=3).fit(X, y)
    assert search.best_score_ > 0.8
