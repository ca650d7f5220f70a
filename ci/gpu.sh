#!/usr/bin/env bash
# One call on a GPU machine: the GPU test suite and the GPU benchmarks.
#
# The machine has no network and its image already holds numpy, scipy,
# scikit-learn, cupy, torch, pytest, pytest-benchmark and matplotlib. The
# rest (array-api-compat, array-api-strict, dask, distributed, ...) travels
# as wheels in .whl/: run `bash ci/gpu_wheels.sh` on a machine with network
# and carry ".whl" in the device call. They are installed with --target into
# /tmp/site beside the image's packages (a fresh venv would lose its cupy).
# nbgpu itself runs from this checkout (PYTHONPATH), nothing is built.
#
# Results go to $OUT when set (the device runner's output folder), else to
# benchmarks/results/:
#   gpu-checks-<stamp>.log                 tests/test_gpu.py: the cupy/cupyx calls nbgpu relies on,
#                                          every model against numpy, streaming, Dask, synchronisations
#   gpu-tests-<stamp>.log                  the test suite with cupy and torch_cuda required
#   gpu-pytest-benchmark-<stamp>.json      pytest-benchmark, every model, cupy vs sklearn
#   gpu-<device>-<stamp>.json / .png       `nbgpu bench --size gpu` table data and chart
#   gpu-targets-<device>-<stamp>.json      the issue's GPU targets (nbgpu._app.bench_gpu)
# The exit status is that of the test suite, or of the first benchmark that failed.
#
#   NBGPU_GPU_BENCH_SIZE   size preset of the bench table (default: gpu)
#   NBGPU_GPU_SKIP_STREAM  set to 1 to leave out the 2x-GPU-memory stream
#   NBGPU_GPU_STAGES       which stages to run, comma-separated, of
#                          checks,tests,pytest-benchmark,bench,targets (default: all;
#                          each fits a 10-minute call: split them over such calls)
#   NBGPU_GPU_TEST_BACKENDS  backends of the tests stage (default: cupy,torch_cuda;
#                          the CPU backends, device_emulated included, are CI's)
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="${OUT:-$root/benchmarks/results}"
mkdir -p "$out"
stamp="$(date -u +%Y%m%d-%H%M%S)"

if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
python3 - <<'PY' || { echo "cupy cannot use a GPU here" >&2; exit 2; }
import cupy
n = cupy.cuda.runtime.getDeviceCount()
props = cupy.cuda.runtime.getDeviceProperties(0)
print(f"{n} GPU(s); using {props['name'].decode() if isinstance(props['name'], bytes) else props['name']}")
PY
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
device="$(python3 -c 'from nbgpu._app import bench; print(bench.device_name("nbgpu-gpu"))' | tr -c 'A-Za-z0-9_.-' '-' | sed 's/-*$//')"

stages=",${NBGPU_GPU_STAGES:-checks,tests,pytest-benchmark,bench,targets},"
stage() { [[ "$stages" == *",$1,"* ]]; }

status=0
# cupy's import-time notes about the CUDA installation are shown, not made errors
# (tests/conftest.py records them for the report header; this covers benchmarks).
export PYTHONWARNINGS="${PYTHONWARNINGS:-default::UserWarning:cupy._environment}"
# 0. The GPU checks: the calls the CPU stand-in claims cupy makes, every model
#    on cupy against numpy, streaming, Dask, synchronisations per call.
if stage checks; then
    NBGPU_TEST_BACKENDS=cupy python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py 2>&1 | tee "$out/gpu-checks-$stamp.log"
    status=${PIPESTATUS[0]}
fi
# 1. The unit tests on the GPU backends (a requested backend that cannot run fails the run).
if stage tests; then
    NBGPU_TEST_BACKENDS="${NBGPU_GPU_TEST_BACKENDS:-cupy,torch_cuda}" python3 -m pytest -q -p no:cacheprovider tests/ 2>&1 \
        | tee "$out/gpu-tests-$stamp.log"
    rc=${PIPESTATUS[0]}; [ "$status" -eq 0 ] && status=$rc
fi

# 2. pytest-benchmark: every model x op x size, cupy against scikit-learn and numpy.
stage pytest-benchmark && { python3 -m pytest -q benchmarks/ --ignore=benchmarks/test_bench_dask.py --bench-sizes small \
    --bench-backends sklearn,nbgpu-cpu,nbgpu-gpu --benchmark-json="$out/gpu-pytest-benchmark-$stamp.json" \
    --benchmark-columns=median,min --benchmark-group-by=group || { rc=$?; [ "$status" -eq 0 ] && status=$rc; }; }

# 3. The bench table at the GPU size (>= 1e8 stored values), with scikit-learn on this CPU.
stage bench && { python3 -m nbgpu._app.bench --size "${NBGPU_GPU_BENCH_SIZE:-gpu}" --backends sklearn,nbgpu-gpu --repeats 3 \
    --json "$out/gpu-$device-$stamp.json" || { rc=$?; [ "$status" -eq 0 ] && status=$rc; }; }

# 4. The issue's GPU targets: copy and host-to-device bandwidth, multinomial
#    fit/predict bandwidth and speed-up, Gaussian vs the matmul roofline,
#    streaming twice the GPU memory through fit_stream.
skip=()
[ "${NBGPU_GPU_SKIP_STREAM:-0}" = "1" ] && skip=(--skip-streaming)
stage targets && { python3 -m nbgpu._app.bench_gpu --json "$out/gpu-targets-$device-$stamp.json" "${skip[@]}" \
    || { rc=$?; [ "$status" -eq 0 ] && status=$rc; }; }

echo "results in $out"
exit "$status"
