"""What a newcomer tries in the first hour: ``nbgpu.text`` as an attribute,
pickles that say which nbgpu version wrote them, the test command's parts."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import subprocess_env

import nbgpu
from _data import MODELS, random_data

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- #
# nbgpu.text
# --------------------------------------------------------------------------- #
def _fresh(code):
    """``code`` run by a fresh interpreter (this process may have imported nbgpu.text already)."""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=subprocess_env(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_nbgpu_text_is_an_attribute_of_the_package():
    out = _fresh("import nbgpu\nprint(nbgpu.text.__name__, nbgpu.text.HashingVectorizer.__name__)\n")
    assert out.split() == ["nbgpu.text", "HashingVectorizer"]


def test_nbgpu_text_is_imported_on_first_use_and_listed():
    # ``import nbgpu`` stays as light as it was; dir() shows the subpackage.
    out = _fresh("import sys, nbgpu\nprint('nbgpu.text' in sys.modules, 'text' in dir(nbgpu))\n")
    assert out.split() == ["False", "True"]


def test_an_unknown_attribute_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'texts'"):
        nbgpu.texts  # noqa: B018


# --------------------------------------------------------------------------- #
# Pickles record the nbgpu version that wrote them
# --------------------------------------------------------------------------- #
def _fitted(name, *, lazy=False):
    X, y = random_data(name)
    model = getattr(nbgpu, name)()
    if lazy:
        model.partial_fit(X, y, classes=np.unique(y))
    else:
        model.fit(X, y)
    return model, X


@pytest.mark.parametrize("lazy", [False, True], ids=["fit", "partial_fit"])
@pytest.mark.parametrize("name", MODELS)
def test_a_pickle_records_the_version_and_loads_silently_in_it(name, lazy):
    model, X = _fitted(name, lazy=lazy)
    expected = model.predict_proba(X) if not lazy else None
    state = model.__getstate__()
    assert state["_nbgpu_version"] == nbgpu.__version__
    data = pickle.dumps(model)
    assert "_nbgpu_version" not in model.__dict__  # the model itself is untouched
    loaded = pickle.loads(data)  # the suite makes any warning an error
    assert "_nbgpu_version" not in loaded.__dict__
    if expected is not None:
        np.testing.assert_array_equal(loaded.predict_proba(X), expected)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_an_unfitted_model_pickles_with_the_version():
    model = nbgpu.MultinomialNB(alpha=0.5)
    assert model.__getstate__()["_nbgpu_version"] == nbgpu.__version__
    assert pickle.loads(pickle.dumps(model)).alpha == 0.5


def _written_by(model, version):
    """The bytes of a pickle of ``model`` as nbgpu ``version`` would write it
    (``None``: as versions before the version was recorded)."""
    data = pickle.dumps(model, protocol=0)  # text: the version is one line, ``V<version>``
    current = f"\nV{nbgpu.__version__}\n".encode()
    assert data.count(current) == 1
    if version is None:  # the key, its value and their SETITEM gone: "...sV_nbgpu_version\np65\nV0.1.0\np66\nsb."
        key = re.search(rb"V_nbgpu_version\n(p\d+\n)?V" + re.escape(nbgpu.__version__.encode()) + rb"\n(p\d+\n)?s",
                        data)
        assert key is not None
        return data[: key.start()] + data[key.end() :]
    return data.replace(current, f"\nV{version}\n".encode())


@pytest.mark.parametrize("name", ["MultinomialNB", "GaussianNB"])
def test_a_pickle_of_another_version_warns_and_loads(name):
    model, X = _fitted(name)
    with pytest.warns(nbgpu.InconsistentVersionWarning) as caught:
        loaded = pickle.loads(_written_by(model, "0.0.1"))
    (warning,) = caught
    message = str(warning.message)
    assert f"{name} from nbgpu version 0.0.1 when using version {nbgpu.__version__}" in message, message
    assert warning.message.estimator_name == name
    assert warning.message.original_nbgpu_version == "0.0.1"
    assert warning.message.current_nbgpu_version == nbgpu.__version__
    assert "_nbgpu_version" not in loaded.__dict__
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))  # it still loads


def test_a_pickle_without_a_version_warns():
    model, X = _fitted("BernoulliNB")
    with pytest.warns(nbgpu.InconsistentVersionWarning, match="from an unknown nbgpu version"):
        loaded = pickle.loads(_written_by(model, None))
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_the_warning_is_a_user_warning_of_nbgpus_own():
    assert issubclass(nbgpu.InconsistentVersionWarning, UserWarning)
    assert "InconsistentVersionWarning" in nbgpu.__all__
    assert nbgpu.InconsistentVersionWarning.__module__.startswith("nbgpu.")


# --------------------------------------------------------------------------- #
# The test command (ci/test.sh): torch optional, both cores
# --------------------------------------------------------------------------- #
SCRIPT = (ROOT / "ci" / "test.sh").read_text(encoding="utf-8")


def test_the_test_extra_has_pytest_xdist_and_the_script_uses_it():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (test_extra,) = re.findall(r"^test = \[(.*)\]$", pyproject, re.M)
    assert '"pytest-xdist' in test_extra
    assert re.search(r'xdist=\(-n "\$workers"', SCRIPT)
    assert 'workers="${NBGPU_TEST_WORKERS:-auto}"' in SCRIPT
    assert re.search(r'^python -m pytest "\$\{xdist\[@\]\}" "\$@"$', SCRIPT, re.M)


def test_the_script_leaves_torch_out_in_one_line_where_it_cannot_be_installed():
    # Never PyPI's CUDA torch: only the "+cpu" build, and a failure is not the end of the run.
    (line,) = [line for line in SCRIPT.splitlines() if "pip install" in line and "torch" in line]
    assert '"torch==2.13.0+cpu"' in line and line.lstrip().startswith(("if ", "elif "))
    assert "the suite runs without the torch backend" in SCRIPT


def test_the_readme_states_the_suites_time_and_disk():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (paragraph,) = [p for p in readme.split("\n\n") if "ci/test.sh" in p and "pytest-xdist" in p]
    assert re.search(r"\d+ min", paragraph) and re.search(r"\d(\.\d)? GB", paragraph), paragraph
    assert "torch" in paragraph
