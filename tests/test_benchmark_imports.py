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

# The benchmarks that import private modules, and why: each measures an internal that no public means reaches
# (the data, backends and size presets of `nbgpu bench` are public: nbgpu.datasets.make_bench_data,
# benchmarks/backends.py).
ON_PURPOSE = {
    "csv_reader_memory.py": "the command's CSV reader alone, and the import baseline of its modules, measured",
    "device_cost.py": "sets the block planner's sizes for the run",
    "fast_paths.py": "each fast path's kernel beside its plain reference, called directly",
    "gpu_reference.py": "nbgpu's fit split into its steps (validation, labels, sums, ...), each timed alone",
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
