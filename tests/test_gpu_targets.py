"""The GPU speed goals' script (``benchmarks/gpu_targets.py``) says plainly when there is no GPU to measure."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from nbgpu._array.devices import gpu_array_like

_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gpu_targets.py"


@pytest.mark.skipif(gpu_array_like() is not None, reason="a GPU is present: the targets would be measured")
def test_without_a_gpu_it_exits_2_with_one_line(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("gpu_targets", _SCRIPT)
    gpu_targets = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_targets)
    assert gpu_targets.main(["--json", str(tmp_path / "out.json")]) == 2
    assert "no usable cupy/GPU" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
