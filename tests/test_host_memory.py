"""After retain_freed_blocks, glibc reuses freed arrays' memory instead of faulting it in again."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import subprocess_env

ROOT = Path(__file__).resolve().parent.parent

# Ten "chunks" that each hold six arrays of 1 to 4 MiB together and drop them,
# in a fresh interpreter; prints the page faults taken.
_WORKLOAD = """
import sys, resource
import numpy as np
if sys.argv[1] == "retain":
    from nbgpu._array.host_memory import retain_freed_blocks
    retain_freed_blocks()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    held = [np.ones(k << 19, dtype=np.uint8) for k in (2, 4, 1, 8, 3, 6)]
    del held
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode):
    # glibc's own defaults: a MALLOC_*_ setting (Dask sets MALLOC_TRIM_THRESHOLD_
    # for its workers) fixes the thresholds, and then nothing raises them
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env = subprocess_env(env)
    out = subprocess.run([sys.executable, "-c", _WORKLOAD, mode], capture_output=True, text=True, env=env, check=True)
    return int(out.stdout)


@pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="the effect is glibc's malloc"
)
def test_freed_arrays_are_reused_not_faulted_in_again():
    pytest.importorskip("resource")
    plain, retained = _faults("plain"), _faults("retain")
    # up to 30,720 pages (10 x 12 MiB) mapped afresh; kept memory faults in once (3,072)
    assert retained * 3 < plain, f"{retained} page faults with the blocks retained, {plain} without"

