"""The flat public API: ``nbgpu.__all__`` is sorted and every name imports."""

from __future__ import annotations

import importlib

import pytest
from sklearn.base import is_classifier

import nbgpu
from _data import MODELS


def test_all_is_sorted_and_unique():
    assert list(nbgpu.__all__) == sorted(nbgpu.__all__)
    assert len(set(nbgpu.__all__)) == len(nbgpu.__all__)


@pytest.mark.parametrize("name", nbgpu.__all__)
def test_every_name_imports(name):
    module = importlib.import_module("nbgpu")
    assert getattr(module, name) is not None
    exec(f"from nbgpu import {name}", {})  # noqa: S102  (the import statement users write)


@pytest.mark.parametrize("name", MODELS)
def test_the_five_models_are_public_classifiers(name):
    assert name in nbgpu.__all__
    assert is_classifier(getattr(nbgpu, name)())


def test_version():
    assert isinstance(nbgpu.__version__, str) and nbgpu.__version__.count(".") >= 2


def test_no_private_names_exported():
    assert not [n for n in nbgpu.__all__ if n.startswith("_") and n != "__version__"]


def test_public_estimators_are_class_statements_tools_can_read():
    # IDEs and inspect read source: each estimator is a class statement of its own name, and the
    # package's lazily loaded names are all imported where type checkers look (TYPE_CHECKING).
    import ast
    import inspect
    from pathlib import Path

    for name in ("BernoulliNB", "CategoricalNB", "ComplementNB", "GaussianNB", "KernelDensityNB",
                 "MultinomialNB", "NormalBayesClassifier", "PoissonNB", "ColumnwiseNB"):
        cls = getattr(nbgpu, name)
        assert f"class {name}(" in inspect.getsource(cls)
        assert cls.__doc__.lstrip().split()[0]  # numpydoc and scikit-learn's HTML read it
    package = Path(nbgpu.__file__).parent
    assert (package / "py.typed").is_file()
    tree = ast.parse((package / "__init__.py").read_text())
    checked = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING")
    imported = {alias.asname or alias.name for node in ast.walk(checked) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert set(nbgpu.__all__) - {"__version__"} <= imported


@pytest.mark.parametrize("module", ["datasets", "text"])
def test_public_modules_load_on_first_use(module):
    # ``nbgpu.text`` and ``nbgpu.datasets`` are public modules outside ``__all__`` (as scikit-learn's
    # submodules): reachable as attributes, listed by dir(), loaded only when used.
    import subprocess
    import sys

    code = f"import sys, nbgpu; print(any(m.startswith('nbgpu.{module}') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
    assert module in dir(nbgpu)
    public = getattr(nbgpu, module)
    assert public is importlib.import_module(f"nbgpu.{module}")
    assert list(public.__all__) == sorted(public.__all__)
    for name in public.__all__:
        assert not name.startswith("_")
        exec(f"from nbgpu.{module} import {name}", {})  # noqa: S102
