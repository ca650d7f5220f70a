"""``bash ci/test.sh`` and the package metadata it installs from."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = (ROOT / "ci" / "test.sh").read_text(encoding="utf-8")


def test_pyproject_applies_without_setuptools_deprecation_warnings():
    pytest.importorskip("setuptools", minversion="77")  # the first with SPDX license expressions (PEP 639)
    code = (
        "import warnings\n"
        "from setuptools.config.pyprojecttoml import apply_configuration\n"
        "from setuptools.dist import Distribution\n"
        "warnings.simplefilter('error')\n"
        "dist = apply_configuration(Distribution(), 'pyproject.toml')\n"
        "print(dist.metadata.license_expression)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "BSD-3-Clause"
    floor = re.search(r'requires = \["setuptools>=(\d+)', (ROOT / "pyproject.toml").read_text()).group(1)
    assert int(floor) >= 77


def test_the_test_script_makes_its_own_fresh_environment():
    venv = re.search(r'venv="\$\{NBGPU_VENV:-([^}]+)\}"', SCRIPT).group(1)
    assert venv not in (".venv", ".venv/")  # the quick start's environment is left alone
    assert f"/{venv}/" in (ROOT / ".gitignore").read_text().splitlines()
    assert re.search(r'python3 -m venv --clear "\$venv"', SCRIPT)  # made afresh on every run


def test_the_test_script_installs_torchs_cpu_build():
    # "+cpu" names the CPU build: pip cannot fall back to PyPI's CUDA build.
    (line,) = [line for line in SCRIPT.splitlines() if "pip install" in line and "torch" in line]
    assert '"torch==2.13.0+cpu"' in line
