"""Run scikit-learn's own naive Bayes tests on nbgpu's classes.

:func:`load_suite` loads ``sklearn/tests/test_naive_bayes.py`` from the
installed scikit-learn (never a copy) as a fresh module and replaces, in that
module only, every scikit-learn estimator class it imported by nbgpu's class
of the same name: the imported names and the lists built from them at import
(the parametrizations read those lists when pytest collects them).

A test module does ``globals().update(load_suite(...).tests)`` and imports
the fixtures below; pytest then collects scikit-learn's tests there, and the
tests run on nbgpu's estimators with scikit-learn's assertions and messages.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import sklearn
from sklearn.utils import estimator_checks


@dataclass
class Suite:
    module: object
    tests: dict
    replaced: dict


# (major, minor) of the installed scikit-learn: some references changed.
SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])


def load_suite(relative_path, substitutes):
    """The scikit-learn test module at ``relative_path`` (inside the installed
    ``sklearn`` package) with the classes in ``substitutes`` ({scikit-learn
    class: replacement}) replaced; its ``tests`` are the ``test_*`` functions."""
    path = Path(sklearn.__file__).parent / relative_path
    if not path.is_file():
        pytest.fail(f"the installed scikit-learn has no {relative_path} (looked at {path})")
    name = "sklearn_suite_" + re.sub(r"\W", "_", relative_path.removesuffix(".py"))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    replaced = {}
    for key, value in list(vars(module).items()):
        if isinstance(value, type) and value in substitutes:
            setattr(module, key, substitutes[value])
            replaced[key] = substitutes[value]
        elif isinstance(value, list):
            # In place: the parametrize marks hold these very list objects.
            value[:] = [substitutes.get(v, v) if isinstance(v, type) else v for v in value]
    tests = {key: value for key, value in vars(module).items() if key.startswith("test_") and callable(value)}
    for test in tests.values():
        _listed_parametrizations(test)
    return Suite(module, tests, replaced)


def parametrize_with_checks(estimators, **kwargs):
    """scikit-learn's ``parametrize_with_checks``, its checks given to pytest
    as a list (before 1.8 scikit-learn gives a generator, which pytest 9
    deprecates: an error in this suite)."""
    mark = estimator_checks.parametrize_with_checks(estimators, **kwargs)

    def decorate(test):
        test = mark(test)
        _listed_parametrizations(test)
        return test

    return decorate


def _listed_parametrizations(test):
    """Parameter values given as a generator become a list (pytest deprecates
    generators there, and this suite runs with warnings as errors)."""
    marks = getattr(test, "pytestmark", [])
    for i, mark in enumerate(marks):
        if mark.name == "parametrize" and len(mark.args) > 1 and not isinstance(mark.args[1], Collection):
            names, values, *rest = mark.args
            marks[i] = pytest.mark.parametrize(names, list(values), *rest, **mark.kwargs).mark


# --------------------------------------------------------------------------- #
# The fixtures scikit-learn's conftest gives its tests (same meaning; nothing
# else of that conftest is taken: it also limits BLAS threads for the run).
# --------------------------------------------------------------------------- #
def _random_seeds():
    raw = os.environ.get("SKLEARN_TESTS_GLOBAL_RANDOM_SEED")
    if raw is None:
        return [42]
    if raw == "all":
        return list(range(100))
    if "-" in raw:
        start, stop = raw.split("-")
        return list(range(int(start), int(stop) + 1))
    return [int(raw)]


@pytest.fixture(params=_random_seeds())
def global_random_seed(request):
    """scikit-learn's seed fixture: 42 unless SKLEARN_TESTS_GLOBAL_RANDOM_SEED says otherwise."""
    return request.param


@pytest.fixture(params=[np.float32, np.float64])
def global_dtype(request):
    """scikit-learn's dtype fixture; float32 always runs (scikit-learn runs
    it only with SKLEARN_RUN_FLOAT32_TESTS=1): nbgpu is built for float32."""
    return request.param


def expected_failures(known):
    """An autouse fixture that marks the tests in ``known`` as strict
    expected failures: ``[(test function name, {parameter: value}, error
    type, reason)]``; a test is one when its parameters include those, and
    it must fail with that error (another error is a failure)."""

    @pytest.fixture(autouse=True)
    def _known_failures(request):
        node = request.node
        params = getattr(getattr(node, "callspec", None), "params", {})
        for name, where, error, reason in known:
            if name == node.originalname and all(k in params and params[k] == v for k, v in where.items()):
                node.add_marker(pytest.mark.xfail(reason=reason, raises=error, strict=True))

    return _known_failures
