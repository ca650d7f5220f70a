#!/usr/bin/env bash
# Download, on a machine with network, the wheels a GPU device machine lacks
# into .whl/ (git-ignored), for `ci/gpu.sh` there. The device image already
# has numpy, scipy, scikit-learn, cupy, torch, pandas, pytest,
# pytest-benchmark, matplotlib and dask's smaller dependencies (cloudpickle,
# fsspec, toolz, msgpack, psutil, pyyaml, sortedcontainers, jinja2, click);
# these are the rest, for its Python 3.12 on x86-64.
#   bash ci/gpu_wheels.sh            then carry ".whl" in the device call
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl array-api-compat array-api-strict "dask[array]" distributed partd locket tblib zict tornado
du -sh .whl && ls .whl
