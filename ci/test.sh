#!/usr/bin/env bash
# Create a fresh virtual environment, install nbgpu with its test extras the
# way the README says, and run the CPU test suite.
#   NBGPU_VENV            where to put the environment (default: .venv-test, made
#                         afresh on every run; the quick start's .venv is left alone)
#   NBGPU_TORCH_INDEX     a package index that holds torch's CPU build (e.g.
#                         https://download.pytorch.org/whl/cpu), where it is reachable
#   NBGPU_TORCH           set to 0 to leave torch out without trying to install it
#                         (where its CPU build cannot be installed, the suite runs
#                         without the torch backend, saying so in one line)
#   NBGPU_TEST_WORKERS    pytest-xdist workers (default: auto, one per core; 0: one process)
#   NBGPU_TEST_BACKENDS   backends that must run (default: every CPU backend, the
#                         device_emulated stand-in for cupy included)
#   NBGPU_CUPY_PATH       a folder holding cupy for tests/test_cupy_api.py (default: one
#                         made here; cupy imports without a GPU. Set it empty to skip that test)
#   NBGPU_TEST_REFERENCE  set to 1 to run the suite a second time, on the plain
#                         reference paths (NBGPU_REFERENCE=1: nbgpu/_array/paths.py);
#                         default 0: one run. CI (.ci/run) sets it to 1
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
# configuration (the team's machines have torch-2.13.0+cpu there). Where it
# cannot be installed the suite runs without the torch backend, saying so.
backends="numpy,numpy_readonly,array_api_strict,array_api_strict_device1,torch,device_emulated"
torch_log="$venv/torch-install.log"
if [ "${NBGPU_TORCH:-1}" = "0" ]; then
    echo "ci/test.sh: NBGPU_TORCH=0: the suite runs without the torch backend"
    backends="${backends/torch,/}"
elif ! python -m pip install -q "torch==2.13.0+cpu" ${NBGPU_TORCH_INDEX:+--extra-index-url "$NBGPU_TORCH_INDEX"} >"$torch_log" 2>&1; then
    # (A torch named in NBGPU_TEST_BACKENDS stays requested: tests/conftest.py fails the run.)
    echo "ci/test.sh: torch's CPU build (torch==2.13.0+cpu) cannot be installed here (pip: $torch_log; set NBGPU_TORCH_INDEX=https://download.pytorch.org/whl/cpu where it is reachable): the suite runs without the torch backend${NBGPU_TEST_BACKENDS:+ unless NBGPU_TEST_BACKENDS requests it}"
    backends="${backends/torch,/}"
fi
python -m pip install -q -e ".[test,dask,bench]"
# nbgpu's bytecode, as an installed package has it: an editable install writes none, and where
# PYTHONDONTWRITEBYTECODE is set every process the suite starts (CLI commands, Dask workers)
# would compile each module it imports (44-70 CPU s of a run: benchmarks/results/test-suite-time-*).
python -m compileall -q nbgpu
# cupy beside, not inside, the environment: only the API check's own interpreter
# imports it (an installed cupy without a GPU would change what the libraries
# under test try). About 20 s and 300 MB.
if [ -z "${NBGPU_CUPY_PATH+set}" ]; then
    export NBGPU_CUPY_PATH="$venv-cupy-site"
    [ -d "$NBGPU_CUPY_PATH/cupy" ] || python -m pip install -q --target "$NBGPU_CUPY_PATH" --no-deps \
        "cupy-cuda12x==14.2.*" fastrlock cuda-pathfinder
fi
[ -n "${NBGPU_CUPY_PATH}" ] || unset NBGPU_CUPY_PATH
export NBGPU_TEST_BACKENDS="${NBGPU_TEST_BACKENDS:-$backends}"
# Every core (pytest-xdist). pytest-benchmark (the bench extra, for benchmarks/)
# is off: it warns under xdist, an error under the suite's filter.
workers="${NBGPU_TEST_WORKERS:-auto}"
xdist=()
[ "$workers" != "0" ] && xdist=(-n "$workers" -p no:benchmark)
# Every fast path has a plain reference computing the same values: CI runs the
# suite again on those (NBGPU_TEST_REFERENCE=1, set by .ci/run), so neither side
# drifts; both runs report, either fails CI.
set +e
python -m pytest "${xdist[@]}" "$@"
status=$?
if [ "${NBGPU_TEST_REFERENCE:-0}" = "1" ]; then
    echo "ci/test.sh: the suite again on the reference paths (NBGPU_REFERENCE=1)"
    NBGPU_REFERENCE=1 python -m pytest "${xdist[@]}" "$@" || status=$?
fi
exit "$status"
