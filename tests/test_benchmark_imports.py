"""benchmarks/ uses nbgpu's public API, save where a benchmark measures an internal on purpose.

The scripts' job strings (code run in a fresh process) are read too: a regular
expression over each file's text, not an AST scan.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
PRIVATE_IMPORT = re.compile(r"^\s*(?:from|import)\s+(nbgpu(?:\.\w+)*\._(?!_)\w*(?:\.\w+)*)", re.MULTILINE)

# The benchmarks that import private modules, and why: each measures that module or reproduces a run
# of `nbgpu bench` (its size presets and harness, nbgpu/_app/bench.py) under another driver.
ON_PURPOSE = {
    "code_paths.py": "the names the estimators' private base class defines, counted",
    "conftest.py": "the pytest-benchmark form of `nbgpu bench`: its presets, vectorisation, backends "
                   "and the device synchronisation every timed call ends with",
    "csv_reader_memory.py": "the command's CSV reader and its modules' baseline, measured",
    "device_cost.py": "sets the block planner's sizes for the run",
    "fast_paths.py": "each fast path beside its plain reference, and their kernels",
    "gpu_reference.py": "nbgpu's steps (validation, labels) timed one by one; `nbgpu bench`'s size presets",
    "gpu_targets.py": "`nbgpu bench --size gpu`'s runs and the pinned host-to-device copies, measured",
    "model_file_cost.py": "the model file's archive, header and memory bound, measured",
    "test_bench_real_text.py": "`nbgpu bench`'s input kinds of the real corpus",
    "test_bench_streaming.py": "`nbgpu bench --data streaming`'s presets and streaming protocol",
}


def _private_imports(path):
    return sorted(set(PRIVATE_IMPORT.findall(path.read_text(encoding="utf-8"))))


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("*.py")), ids=lambda p: p.name)
def test_benchmarks_import_public_nbgpu(path):
    private = _private_imports(path)
    if path.name in ON_PURPOSE:
        assert private, f"{path.name} imports nothing private now: remove it from ON_PURPOSE"
    else:
        assert private == [], (f"{path.name} imports {private}: use nbgpu's public API (nbgpu.datasets builds "
                               "the synthetic data), or list it in ON_PURPOSE with what it measures")
