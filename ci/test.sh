#!/usr/bin/env bash
# Create a fresh virtual environment, install nbgpu with its test extras the
# way the README says, and run the CPU test suite.
#   NBGPU_VENV            where to put the environment (default: .venv-test, made
#                         afresh on every run; the quick start's .venv is left alone)
#   NBGPU_TORCH_INDEX     a package index that holds torch's CPU build (e.g.
#                         https://download.pytorch.org/whl/cpu), where it is reachable
#   NBGPU_TEST_BACKENDS   backends that must run (default: every CPU backend)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${NBGPU_VENV:-.venv-test}"
python3 -m venv --clear "$venv"
. "$venv/bin/activate"
python -m pip install -q --upgrade pip
# The torch backend of the test grid is torch's CPU build, named by its local
# version "+cpu" so that pip never falls back to PyPI's CUDA build (gigabytes of
# GPU libraries). PyPI does not host "+cpu" wheels: it comes from
# NBGPU_TORCH_INDEX, or from a wheel directory or index in the pip
# configuration (the team's machines have torch-2.13.0+cpu there).
python -m pip install -q "torch==2.13.0+cpu" ${NBGPU_TORCH_INDEX:+--extra-index-url "$NBGPU_TORCH_INDEX"}
python -m pip install -q -e ".[test,dask,bench]"
export NBGPU_TEST_BACKENDS="${NBGPU_TEST_BACKENDS:-numpy,numpy_readonly,array_api_strict,array_api_strict_device1,torch}"
python -m pytest "$@"
