"""The GPU benchmark says plainly when there is no GPU to measure."""

from __future__ import annotations

import pytest

from nbgpu._app import bench_gpu
from nbgpu._array.devices import gpu_array_like


@pytest.mark.skipif(gpu_array_like() is not None, reason="a GPU is present: the targets would be measured")
def test_without_a_gpu_it_exits_2_with_one_line(tmp_path, capsys):
    assert bench_gpu.main(["--json", str(tmp_path / "out.json")]) == 2
    assert "no usable cupy/GPU" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
