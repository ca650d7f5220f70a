"""The declared dependencies are the ones the code needs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_numpy_floor_is_the_first_numpy_with_the_array_api_namespace():
    # Fitted models read ndarray.device (numpy >= 2): under numpy 1.26 every
    # fit raised AttributeError, so the metadata must not admit it.
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    floor = re.search(r'"numpy>=([0-9.]+)"', text)
    assert floor is not None, "pyproject.toml must declare numpy with a floor"
    assert int(floor.group(1).split(".")[0]) >= 2


def test_importing_under_numpy_1_says_what_is_needed():
    code = "import numpy; numpy.__version__ = '1.26.4'; import nbgpu; nbgpu.MultinomialNB"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode != 0
    assert "nbgpu needs numpy >= 2.0; numpy 1.26.4 is installed." in result.stderr
