"""The tests' helpers that must hold on the GPU machine, checked on every machine.

``subprocess_env``: a subprocess keeps every PYTHONPATH entry it was given
(ci/gpu.sh installs array-api-compat & co. with ``--target`` into a folder on
PYTHONPATH; nbgpu runs from the checkout there, not installed).
``same_device``: devices compared as the Array API compares them (torch
compares the index: ``torch.device("cuda") != cuda:0``). tests/test_gpu.py's
synchronisation counter: at cupy's hook, not through the deprecated guard.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, same_device, subprocess_env


def test_the_repository_comes_first_and_no_entry_is_dropped(tmp_path):
    given = [str(tmp_path / "site"), str(tmp_path / "other")]
    env = subprocess_env({"PYTHONPATH": os.pathsep.join(given), "KEEP": "1"}, EXTRA="2")
    entries = env["PYTHONPATH"].split(os.pathsep)
    assert entries[0] == str(REPO)
    assert entries[1:3] == given, entries
    assert "" not in entries  # an empty entry would put the working directory on the path
    assert (env["KEEP"], env["EXTRA"]) == ("1", "2")
    also = subprocess_env({"PYTHONPATH": given[0]}, also=[given[1]])["PYTHONPATH"].split(os.pathsep)
    assert also[:3] == [str(REPO), given[1], given[0]]


def test_a_pytest_subprocess_is_not_taken_for_an_xdist_worker():
    # ci/gpu.sh runs the suite in xdist workers: a nested pytest that inherits
    # PYTEST_XDIST_WORKER has pytest-benchmark warn, an error in the dry run.
    env = subprocess_env({"PYTEST_XDIST_WORKER": "gw3", "PYTEST_XDIST_WORKER_COUNT": "14", "KEEP": "1"})
    assert not any(name.startswith("PYTEST_XDIST_") for name in env)
    assert env["KEEP"] == "1"


def test_a_subprocess_imports_from_an_existing_pythonpath_entry(tmp_path):
    # As on the GPU machine: a dependency only in a --target folder on PYTHONPATH.
    site = tmp_path / "site"
    site.mkdir()
    (site / "nbgpu_probe_dependency.py").write_text("WHERE = 'target site'\n")
    env = subprocess_env({**os.environ, "PYTHONPATH": str(site)})
    code = "import nbgpu, nbgpu_probe_dependency as d; print(d.WHERE); print(nbgpu.__file__)"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    where, nbgpu_file = result.stdout.splitlines()
    assert where == "target site"
    assert Path(nbgpu_file).resolve().is_relative_to(REPO / "nbgpu")  # this checkout's, whatever is installed


def test_no_test_sets_pythonpath_by_itself():
    """Every subprocess environment goes through ``subprocess_env``: one that
    sets PYTHONPATH to the repository alone drops the GPU machine's --target site."""
    setting = re.compile(r"""["']PYTHONPATH["']\s*(:|\]\s*=)""")
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(Path(__file__).parent.glob("*.py"))
        if path.name not in ("conftest.py", Path(__file__).name)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if setting.search(line)
    ]
    assert found == [], "set PYTHONPATH with conftest.subprocess_env instead:\n" + "\n".join(found)


def test_torch_devices_compare_with_and_without_their_default_index():
    torch = pytest.importorskip("torch")
    # The same device, named with and without an index: torch itself says unequal
    # (as torch.device("cuda") against the cuda:0 a CUDA tensor reports).
    assert torch.device("cpu") != torch.device("cpu", 0)
    assert same_device(torch.device("cpu"), torch.device("cpu", 0))
    assert same_device(torch.device("cpu", 0), torch.empty(0).device)
    assert not same_device(torch.device("cpu"), torch.device("meta"))


def test_synchronisations_are_counted_without_cupys_deprecated_guard(monkeypatch):
    """tests/test_gpu.py counts at cupy's sync-detection hook: with a stand-in
    for the hook's module, every call is counted and the hook is put back.
    (``cupyx.allow_synchronize`` warns on every use since cupy 10, an error here.)"""
    import types

    import test_gpu

    calls = []
    syncdetect = types.ModuleType("cupy._core.syncdetect")
    syncdetect._declare_synchronize = lambda: calls.append("declared")
    core = types.ModuleType("cupy._core")
    core.syncdetect = syncdetect
    cupy = types.ModuleType("cupy")
    cupy._core = core
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupy._core", core)
    monkeypatch.setitem(sys.modules, "cupy._core.syncdetect", syncdetect)
    original = syncdetect._declare_synchronize

    def work():
        syncdetect._declare_synchronize()
        syncdetect._declare_synchronize()

    counts = test_gpu._count_syncs(work)
    assert sum(counts.values()) == 2 and calls == ["declared"] * 2, (counts, calls)
    assert syncdetect._declare_synchronize is original
    assert "allow_synchronize(" not in Path(test_gpu.__file__).read_text(encoding="utf-8")


def test_moving_a_host_array_works_in_a_fresh_interpreter():
    # bench_gpu's first call on the GPU machine: to_namespace compared with
    # array_api_compat.numpy, a submodule nothing had imported yet there.
    pytest.importorskip("array_api_strict")
    code = ("import numpy as np, array_api_strict as xp\n"
            "from nbgpu._array.namespace import to_namespace\n"
            "print(type(to_namespace(np.ones(2), xp, xp.Device('CPU_DEVICE'))).__module__)\n")
    result = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("array_api_strict"), result.stdout
