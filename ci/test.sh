#!/usr/bin/env bash
# Create a fresh virtual environment, install nbgpu with its test extras the
# way the README says, and run the CPU test suite.
#   NBGPU_VENV            where to put the environment (default: .venv)
#   NBGPU_TEST_BACKENDS   backends that must run (default: every CPU backend)
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${NBGPU_VENV:-.venv}"
python3 -m venv "$venv"
. "$venv/bin/activate"
python -m pip install -q --upgrade pip
# The CPU build of torch: the torch backend of the test grid.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[test,dask,bench]"
export NBGPU_TEST_BACKENDS="${NBGPU_TEST_BACKENDS:-numpy,numpy_readonly,array_api_strict,array_api_strict_device1,torch}"
python -m pytest "$@"
