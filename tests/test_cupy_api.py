"""nbgpu names only cupy/cupyx functions and attributes the installed cupy has.

Device code reaches cupy only through ``namespace.device_library``, and the
CPU stand-in (``tests/emulated_device.py``) defines only the names
that code uses: the ``device_emulated`` test run fails on any other. Here
every name the stand-in defines is looked up in the real cupy, which imports
without a GPU. The check runs in a separate interpreter, so the test run
itself never imports cupy: with ``NBGPU_CUPY_PATH`` set (a folder holding
cupy, e.g. ``pip install --target DIR --no-deps cupy-cuda12x fastrlock
cuda-pathfinder``; ci/test.sh makes one) or where cupy is installed; skipped
otherwise.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
from conftest import subprocess_env

import emulated_device as emu


def _cupy_env():
    """Environment of an interpreter that imports cupy, or a skip."""
    path = os.environ.get("NBGPU_CUPY_PATH")
    if path:
        if not Path(path, "cupy").is_dir():
            pytest.fail(f"NBGPU_CUPY_PATH={path!r} holds no cupy package")
        return subprocess_env(also=[path])
    if importlib.util.find_spec("cupy") is None:
        pytest.skip("cupy is not installed (set NBGPU_CUPY_PATH to a folder holding it; ci/test.sh does)")
    return subprocess_env()


def _run(script, env):
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _public(obj):
    return sorted(n for n in vars(obj) if not n.startswith("_"))


def _names():
    """Dotted names the stand-in defines, as cupy spells them."""
    names = []

    def walk(module, prefix):
        for name in _public(module):
            value = getattr(module, name)
            names.append(f"{prefix}.{name}")
            if isinstance(value, types.ModuleType):
                walk(value, f"{prefix}.{name}")

    walk(emu.cupy, "cupy")
    walk(emu.cupyx, "cupyx")
    return names


def _members():
    """Methods and properties of the stand-in's classes, by real class."""
    own = {
        "cupy.ndarray": _public(emu.DeviceArray),
        "cupy.cuda.Stream": _public(emu.Stream),
        "cupy.cuda.Device": _public(emu.Device),
    }
    sparse = set()
    for cls in (emu._CompressedMatrix, emu.csr_matrix, emu.csc_matrix):
        sparse.update(n for n, _ in inspect.getmembers(cls) if not n.startswith("_"))
    sparse -= {"data", "indices", "indptr"}  # instance attributes in cupyx (set by its constructor)
    for fmt in ("csr", "csc"):
        own[f"cupyx.scipy.sparse.{fmt}_matrix"] = sorted(sparse)
    return own


CHECK = textwrap.dedent(
    """
    import importlib, json, sys, warnings
    warnings.simplefilter("ignore")  # cupy's import-time notes about CUDA are not the question here
    names, members = json.loads(sys.stdin.read())
    import cupy, cupyx, cupyx.scipy.sparse, cupyx.scipy.special
    def find(dotted):
        parts = dotted.split(".")
        obj = importlib.import_module(parts[0])
        for part in parts[1:]:
            obj = getattr(obj, part)
        return obj
    missing = []
    for dotted in names:
        try:
            find(dotted)
        except AttributeError:
            missing.append(dotted)
    for owner, attrs in members.items():
        cls = find(owner)
        missing += [f"{owner}.{a}" for a in attrs if not hasattr(cls, a)]
    print(json.dumps({"version": cupy.__version__, "missing": missing}))
    """
)


def test_every_cupy_name_nbgpu_uses_exists_in_the_installed_cupy():
    env = _cupy_env()
    payload = json.dumps([_names(), _members()])
    result = subprocess.run(
        [sys.executable, "-c", CHECK], input=payload, capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["missing"] == [], f"cupy {report['version']} lacks {report['missing']}"


def test_cupyx_sparse_is_found_right_after_a_plain_import_of_cupy():
    """cupy imports cupyx lazily: a user who only ran ``import cupy`` must still
    get cupyx sparse matrices recognised (their module is imported by making one:
    is_sparse looks it up, never imports it), and CategoricalNB's device path its
    sparse module."""
    env = _cupy_env()
    out = _run(
        textwrap.dedent(
            """
            import sys, warnings
            warnings.simplefilter("ignore")
            import cupy
            assert "cupyx.scipy.sparse" not in sys.modules
            from nbgpu._array.namespace import device_library, is_sparse
            import array_api_compat.cupy as xp
            assert not is_sparse(cupy.float64) and "cupyx.scipy.sparse" not in sys.modules
            import cupyx
            matrix = object.__new__(cupyx.scipy.sparse.csr_matrix)  # (no GPU here: no __init__)
            mod = sys.modules["cupyx.scipy.sparse"]
            assert is_sparse(matrix)
            assert device_library(xp).cupyx.scipy.sparse is mod
            print("found", mod.__name__)
            """
        ),
        env,
    )
    assert "found cupyx.scipy.sparse" in out
