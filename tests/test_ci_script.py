"""``bash ci/test.sh`` and the package metadata it installs from."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

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


def _gpu_script(tmp_path, also=(), **variables):
    """``NBGPU_GPU_DRY_RUN=1 bash ci/gpu.sh`` (on the CPU) with ``variables``."""
    env = subprocess_env(also=also, NBGPU_GPU_DRY_RUN="1", NBGPU_PYTHON=sys.executable, OUT=str(tmp_path),
                         **variables)
    return subprocess.run(["bash", str(ROOT / "ci" / "gpu.sh")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_gpu_scripts_dry_run_runs_the_checks_stage(tmp_path):
    # The stage, its log and its summary, over test_gpu.py (skipped without a GPU) and two of
    # test_device_paths.py's tests: the suite runs that whole file itself, the same way (the
    # stand-in device is its own, whatever NBGPU_TEST_BACKENDS says).
    result = _gpu_script(tmp_path, NBGPU_GPU_STAGES="checks", PYTEST_ADDOPTS=(
        "-k 'test_gpu.py or test_the_stand_in_refuses_what_cupy_refuses or test_device_category_counts_equal_the_host'"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "dry run on the CPU: device_emulated stands in for cupy; no GPU probe" in result.stdout
    (log,) = tmp_path.glob("gpu-checks-*.log")
    summary = log.read_text().splitlines()[-1]
    # Strict xfails (known gaps, tests/test_device_paths.py) are not failures.
    assert "passed" in summary and "skipped" in summary and " failed" not in summary, summary


def test_the_gpu_script_stops_in_one_line_when_nbgpu_cannot_be_imported(tmp_path):
    # As on a GPU machine reached without .whl/: array-api-compat is not there.
    shadow = tmp_path / "shadow" / "array_api_compat"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'array_api_compat'\", name='array_api_compat')\n")
    result = _gpu_script(tmp_path, also=[shadow.parent], NBGPU_GPU_STAGES="checks",
                         NBGPU_GPU_WHEELS=str(tmp_path / "no-wheels"))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("ci/gpu.sh: `import nbgpu` failed: No module named 'array_api_compat'"), line
    assert "bash ci/gpu_wheels.sh" in line and '".whl"' in line
    assert "stage" not in result.stdout


def test_a_gpu_script_stage_past_its_time_stops_the_run_in_one_line(tmp_path):
    # The stage's pytest gets its SIGINT 0.01 s in, during its start-up: about half the time here it
    # is lost there and the stage runs to its end (rc 124 all the same, after 7 s of tests): it is
    # given one test to run.
    result = _gpu_script(tmp_path, NBGPU_GPU_STAGES="checks,tests", NBGPU_GPU_STAGE_SECONDS="0.01",
                         PYTEST_ADDOPTS="-k test_the_stand_in_refuses_what_cupy_refuses")
    assert result.returncode == 124
    assert result.stderr.splitlines()[-1].startswith("ci/gpu.sh: stage checks ran past its 0.01 s"), result.stderr
    assert "stage tests" not in result.stdout and "results in" not in result.stdout


def test_the_gpu_script_header_asks_for_one_or_two_stages_per_call():
    header = (ROOT / "ci" / "gpu.sh").read_text(encoding="utf-8").split("set -uo pipefail")[0]
    assert "name one or two stages per call" in header
    assert "NBGPU_GPU_DRY_RUN" in header


# The suite's runs: a user's `bash ci/test.sh` runs it once; CI (.ci/run) runs it
# again on the plain reference paths. Both scripts are run here with stand-ins: a
# `python` that records its arguments, a ci/test.sh that records its environment.
def _the_runs_of_the_test_script(tmp_path, **variables):
    """What ``python -m pytest`` calls ci/test.sh's last lines make: ``[(NBGPU_REFERENCE, args), ...]``."""
    runs = SCRIPT[SCRIPT.index("\nset +e\n"):]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls"
    (bin_dir / "python").write_text(f'#!/bin/sh\necho "${{NBGPU_REFERENCE:-}}|$*" >> "{log}"\n')
    (bin_dir / "python").chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", **variables}
    result = subprocess.run(["bash", "-c", 'xdist=(-n auto -p no:benchmark)\n' + runs, "ci/test.sh", "-x"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return [tuple(line.split("|")) for line in log.read_text().splitlines()], result.stdout


def test_the_test_script_runs_the_suite_once_by_default(tmp_path):
    calls, _ = _the_runs_of_the_test_script(tmp_path)
    assert calls == [("", "-m pytest -n auto -p no:benchmark -x")]


def test_the_test_script_runs_it_again_on_the_reference_paths_when_asked(tmp_path):
    calls, stdout = _the_runs_of_the_test_script(tmp_path, NBGPU_TEST_REFERENCE="1")
    assert calls == [("", "-m pytest -n auto -p no:benchmark -x"), ("1", "-m pytest -n auto -p no:benchmark -x")]
    assert "the suite again on the reference paths (NBGPU_REFERENCE=1)" in stdout


def test_ci_runs_the_readmes_test_command_and_the_reference_run(tmp_path):
    (tmp_path / ".ci").mkdir()
    (tmp_path / "ci").mkdir()
    (tmp_path / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    (tmp_path / "ci" / "test.sh").write_text('echo "$NBGPU_TEST_REFERENCE $PWD"\n')
    env = {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", str(tmp_path)]
