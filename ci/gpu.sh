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
# A device call runs at most 600 seconds and each stage is made to fit one
# (NBGPU_GPU_STAGE_SECONDS): name one or two stages per call, e.g.
#   NBGPU_GPU_STAGES=checks bash ci/gpu.sh
#   NBGPU_GPU_STAGES=tests bash ci/gpu.sh
#   NBGPU_GPU_STAGES=pytest-benchmark,bench bash ci/gpu.sh
#   NBGPU_GPU_STAGES=targets bash ci/gpu.sh
#   NBGPU_GPU_STAGES=reference,targets bash ci/gpu.sh   (the first call when a GPU is lent)
# (the default runs them all, which no single call holds).
#
# Results go to $OUT when set (the device runner's output folder), else to
# benchmarks/results/:
#   gpu-checks-<stamp>.log                 tests/test_gpu.py: the cupy/cupyx calls nbgpu relies on,
#                                          every model against numpy, streaming, Dask, synchronisations
#   gpu-tests-<stamp>.log                  the test suite with cupy and torch_cuda required
#   gpu-pytest-benchmark-<stamp>.json      pytest-benchmark, every model, cupy vs sklearn
#   gpu-<device>-<stamp>.json / .png       `nbgpu bench --size gpu` raw results and chart
#   gpu-targets-<device>-<stamp>.json      nbgpu's GPU speed goals (benchmarks/gpu_targets.py)
#   gpu-reference-<device>-<stamp>.json    nbgpu's steps beside raw-cupy plans (benchmarks/gpu_reference.py)
# The run stops at the first failure, with one line on standard error that
# says what failed ("ci/gpu.sh: ..."); its exit status is that of the failed
# step (2 where nbgpu cannot be imported or the GPU cannot be used).
#
#   NBGPU_GPU_BENCH_SIZE   size preset of the bench table (default: gpu)
#   NBGPU_GPU_SKIP_STREAM  set to 1 to leave out the 2x-GPU-memory stream
#   NBGPU_GPU_STAGES       which stages to run, comma-separated, of
#                          reference,checks,tests,pytest-benchmark,bench,targets (default: all)
#   NBGPU_GPU_STAGE_SECONDS  time limit of each stage (default 540: a stage that
#                          runs past it stops, saying so, inside a 600-second call)
#   NBGPU_GPU_MAXFAIL      failed tests after which a test stage stops (default 1)
#   NBGPU_GPU_TEST_BACKENDS  backends of the tests stage (default: cupy,torch_cuda;
#                          the CPU backends, device_emulated included, are CI's)
#   NBGPU_GPU_WORKERS      pytest-xdist workers of the test stages (default on a GPU
#                          machine with pytest-xdist: cores - 2, which ran the tests
#                          stage in 250 s on 16 cores; 0: one process)
#   NBGPU_GPU_WHEELS       the folder of extra wheels (default: .whl)
#   NBGPU_GPU_DRY_RUN      set to 1 to run this script on a CPU machine: the same
#                          stages with device_emulated standing in for cupy (no
#                          GPU probe, CPU benchmark backends at small sizes, no
#                          targets), the wheels of .whl/ in a temporary folder
#   NBGPU_PYTHON           the Python to run (default: python3)
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="${OUT:-$root/benchmarks/results}"
mkdir -p "$out"
stamp="$(date -u +%Y%m%d-%H%M%S)"
py="${NBGPU_PYTHON:-python3}"
dry="${NBGPU_GPU_DRY_RUN:-0}"
limit="${NBGPU_GPU_STAGE_SECONDS:-540}"
maxfail="${NBGPU_GPU_MAXFAIL:-1}"

fail() {  # fail STATUS MESSAGE: the one line a failed run ends with
    echo "ci/gpu.sh: $2" >&2
    exit "$1"
}

site=/tmp/site
if [ "$dry" = "1" ]; then
    site="$(mktemp -d)"
    trap 'rm -rf "$site"' EXIT
    echo "ci/gpu.sh: dry run on the CPU: device_emulated stands in for cupy; no GPU probe"
fi
wheels="${NBGPU_GPU_WHEELS:-.whl}"
if compgen -G "$wheels/*.whl" > /dev/null; then
    "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" "$wheels"/*.whl \
        || fail 2 "the wheels of $wheels/ did not install into $site (see pip's message above); remake them with \`bash ci/gpu_wheels.sh\`"
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"

# nbgpu and its dependencies from this checkout and the image: a missing one
# stops here in one line, not as a ModuleNotFoundError in every test.
carried="no .whl/ folder was carried"
compgen -G "$wheels/*.whl" > /dev/null && carried="the wheels of $wheels/ do not hold it"
NBGPU_CARRIED="$carried" "$py" - <<'PY' || exit 2
import os, sys
try:
    import array_api_compat, numpy, scipy, sklearn  # noqa: E401, F401  (nbgpu loads its parts lazily)
    import nbgpu
    nbgpu.MultinomialNB  # noqa: B018  (the models and the array layer)
except ImportError as exc:
    print(f"ci/gpu.sh: `import nbgpu` failed: {exc} ({os.environ['NBGPU_CARRIED']}); run `bash ci/gpu_wheels.sh` "
          f"on a machine with network and carry \".whl\" in the device call", file=sys.stderr)
    sys.exit(2)
except Exception as exc:
    print(f"ci/gpu.sh: `import nbgpu` failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(2)
PY

if [ "$dry" = "1" ]; then
    device="cpu-dry-run"
    gpu_backends="device_emulated"
    bench_backends="sklearn,nbgpu-cpu"
    bench_sizes=tiny
else
    "$py" - <<'PY' || fail 2 "cupy cannot use a GPU here (its error is above)"
import cupy
n = cupy.cuda.runtime.getDeviceCount()
props = cupy.cuda.runtime.getDeviceProperties(0)
print(f"{n} GPU(s); using {props['name'].decode() if isinstance(props['name'], bytes) else props['name']}")
PY
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
    device="$("$py" -c 'from nbgpu._app import bench; print(bench.device_name("nbgpu-gpu"))' | tr -c 'A-Za-z0-9_.-' '-' | sed 's/-*$//')"
    gpu_backends="${NBGPU_GPU_TEST_BACKENDS:-cupy,torch_cuda}"
    bench_backends="sklearn,nbgpu-cpu,nbgpu-gpu"
    bench_sizes=small
fi

stages=",${NBGPU_GPU_STAGES:-reference,checks,tests,pytest-benchmark,bench,targets},"
stage() { [[ "$stages" == *",$1,"* ]]; }
[ -z "${NBGPU_GPU_STAGES:-}" ] && echo "ci/gpu.sh: every stage in one run: more than one 600-second device call holds; name one or two in NBGPU_GPU_STAGES"

# run NAME LOG COMMAND...: one stage, within its time limit, its output also
# in LOG (when not empty); a failure ends the run in one line.
run() {
    local name="$1" log="$2" rc
    shift 2
    echo "ci/gpu.sh: stage $name"
    if [ -n "$log" ]; then
        timeout -s INT -k 30 "$limit" "$@" 2>&1 | tee "$log"
        rc=${PIPESTATUS[0]}
    else
        timeout -s INT -k 30 "$limit" "$@"
        rc=$?
    fi
    [ "$rc" -eq 124 ] && fail "$rc" "stage $name ran past its ${limit} s (NBGPU_GPU_STAGE_SECONDS)${log:+; its log: $log}"
    [ "$rc" -ne 0 ] && fail "$rc" "stage $name failed with status $rc${log:+; its log: $log}"
    return 0
}

# cupy's import-time notes about the CUDA installation are shown, not made errors
# (tests/conftest.py records them for the report header; this covers benchmarks).
export PYTHONWARNINGS="${PYTHONWARNINGS:-default::UserWarning:cupy._environment}"
pytest=("$py" -m pytest -q -p no:cacheprovider --maxfail="$maxfail")
# (pytest-benchmark warns that xdist disables it, an error under the suite's filter: off in workers.)
workers="${NBGPU_GPU_WORKERS:-}"
if [ -z "$workers" ] && [ "$dry" != "1" ] && "$py" -c "import xdist" 2>/dev/null; then
    workers=$(( $(nproc) > 3 ? $(nproc) - 2 : 1 ))
fi
tests_pytest=("${pytest[@]}")
[ -n "$workers" ] && [ "$workers" != "0" ] && tests_pytest+=(-n "$workers" -p no:benchmark)
# 0. The GPU checks: the calls the CPU stand-in claims cupy makes, every model
#    on cupy against numpy, streaming, Dask, synchronisations per call. (A dry
#    run collects them and skips them, saying so, and runs the stand-in's
#    own checks of the same paths instead.)
if stage checks; then
    if [ "$dry" = "1" ]; then
        checks=(tests/test_gpu.py tests/test_device_paths.py)
    else
        checks=(-m gpu tests/test_gpu.py)
    fi
    NBGPU_TEST_BACKENDS="${gpu_backends%%,*}" run checks "$out/gpu-checks-$stamp.log" "${tests_pytest[@]}" "${checks[@]}"
fi
# 1. The unit tests on the GPU backends (a requested backend that cannot run fails the run).
if stage tests; then
    NBGPU_TEST_BACKENDS="$gpu_backends" run tests "$out/gpu-tests-$stamp.log" "${tests_pytest[@]}" tests/
fi

# 2. pytest-benchmark: every model x op x size, cupy against scikit-learn and numpy.
if stage pytest-benchmark; then
    run pytest-benchmark "" "${pytest[@]}" benchmarks/ --ignore=benchmarks/test_bench_dask.py --bench-sizes "$bench_sizes" \
        --bench-backends "$bench_backends" --benchmark-json="$out/gpu-pytest-benchmark-$stamp.json" \
        --benchmark-columns=median,min --benchmark-group-by=group
fi

# 3. The bench table at the GPU size (>= 1e8 stored values), with scikit-learn on this CPU.
if stage bench; then
    size="${NBGPU_GPU_BENCH_SIZE:-gpu}"
    backends="sklearn,nbgpu-gpu"
    [ "$dry" = "1" ] && { size=tiny; backends="$bench_backends"; }
    run bench "" "$py" -m nbgpu bench --size "$size" --backends "$backends" --repeats 3 --details \
        --json "$out/gpu-$device-$stamp.json"
fi

# 4. nbgpu's GPU speed goals: copy and host-to-device bandwidth, multinomial
#    fit/predict bandwidth and speed-up, Gaussian vs the matmul roofline,
#    streaming twice the GPU memory through fit_stream.
if stage targets; then
    if [ "$dry" = "1" ]; then
        echo "ci/gpu.sh: stage targets needs a GPU: left out of a dry run"
    else
        skip=()
        [ "${NBGPU_GPU_SKIP_STREAM:-0}" = "1" ] && skip=(--skip-streaming)
        run targets "" "$py" benchmarks/gpu_targets.py --json "$out/gpu-targets-$device-$stamp.json" "${skip[@]}"
    fi
fi

# 5. nbgpu's steps beside the raw-cupy fewest-pass plan and cuML's counting, same data,
#    same process (benchmarks/gpu_reference.py; a dry run checks the plans on numpy).
if stage reference; then
    if [ "$dry" = "1" ]; then
        run reference "" "$py" benchmarks/gpu_reference.py --dry-run --size tiny --repeats 1 \
            --json "$out/gpu-reference-$device-$stamp.json"
    else
        run reference "" "$py" benchmarks/gpu_reference.py --size gpu --json "$out/gpu-reference-$device-$stamp.json"
    fi
fi

echo "results in $out"
