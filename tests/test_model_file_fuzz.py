"""Fuzzing model files: every mutation of a valid file loads or is refused with a ValueError.

A fixed budget of hypothesis examples (derandomized, so CI is reproducible)
mutates valid model files: flipped bytes, truncation, edits of the zip's
headers and members, of the JSON header, and arrays replaced with their
checksums recomputed (so only the model's own checks can refuse them).
Every outcome must be a working model or a ValueError naming the file, and
loading must stay within a memory bound. ``ci/fuzz/model_file_target.py``
runs the same mutations for hours under atheris.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_file_fuzzing import check_outcome, mutated, seed_files


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return [path.read_bytes() for path in seed_files(tmp_path_factory.mktemp("seeds"))]


@settings(max_examples=200, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.integers(0, 2**32 - 1))
def test_mutated_model_files_load_or_are_refused(seeds, tmp_path_factory, case):
    # A failing case replays with: python ci/fuzz/model_file_target.py --replay CASE
    path = tmp_path_factory.mktemp("case") / "mutated.nbgpu"
    path.write_bytes(mutated(seeds, case)[1])
    check_outcome(path)


def test_seed_files_load(seeds, tmp_path):
    for i, seed in enumerate(seeds):
        path = tmp_path / f"seed{i}.nbgpu"
        path.write_bytes(seed)
        assert check_outcome(path) == "loaded"
