"""nbgpu's GPU speed goals, measured in one run (cupy and a CUDA GPU).

``python benchmarks/gpu_targets.py --json gpu-targets.json`` measures, on the current device:

1. the device copy bandwidth (a 2 GiB device-to-device copy) and the host-to-device bandwidth from
   pinned memory;
2. MultinomialNB fit and predict on a Zipfian corpus of at least 1e8 stored values: achieved bandwidth
   (bytes of X read once / time) as a fraction of the copy bandwidth (target >= 40%), and the speed-up
   over scikit-learn on this machine's CPU, same data, same run (target >= 50x);
3. streaming a corpus of twice the GPU memory through ``fit_stream`` with ``device="gpu"``: bytes
   streamed / time as a fraction of the host-to-device bandwidth (target >= 50%);
4. GaussianNB fit and predict on dense float32 data against the roofline of their matrix products
   (memory bound for these shapes: bytes of X / copy bandwidth), target >= 50%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import nbgpu
from nbgpu.datasets import make_bench_data, make_zipf_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import SIZES, bytes_read, cupy, device_name, estimator, timed, to_backend, versions  # noqa: E402


def pinned_copy(a):
    """A copy of host array ``a`` in pinned (page-locked) host memory."""
    import cupyx

    out = cupyx.empty_pinned(a.shape, dtype=a.dtype)
    out[...] = a
    return out


def copy_bandwidths(nbytes=2 * 2**30, repeats=5):
    """(device copy, host-to-device) bandwidth in bytes/s on the current GPU; the copy counts bytes read and
    written (2 × size / time: the traffic a kernel reading X once competes with)."""
    cp = cupy()
    a = cp.empty(nbytes, dtype=cp.uint8)
    b = cp.empty_like(a)
    a.fill(1)
    t_copy = min(timed(lambda: b.__setitem__(Ellipsis, a), repeats, "nbgpu-gpu")[0])
    host = pinned_copy(np.ones(nbytes, dtype=np.uint8))
    t_h2d = min(timed(lambda: b.set(host), repeats, "nbgpu-gpu")[0])
    return 2 * nbytes / t_copy, nbytes / t_h2d


def multinomial_targets(copy_bw, *, size="gpu", repeats=3, sklearn_repeats=1):
    """Fit/predict bandwidth fractions and speed-ups over scikit-learn, on ``nbgpu bench --size size``'s text."""
    X, y = make_bench_data("text", size)
    nbytes = bytes_read(X)
    out = {"nnz": int(X.nnz), "bytes_of_X": nbytes}

    def medians(backend, n):
        Xb, yb = to_backend(backend, X), to_backend(backend, y)
        model = estimator(backend, "MultinomialNB").fit(Xb, yb)
        model.predict(Xb)  # first calls pay imports, allocations, kernel compiles: untimed
        return {"fit": statistics.median(timed(lambda: model.fit(Xb, yb), n, backend)[0]),
                "predict": statistics.median(timed(lambda: model.predict(Xb), n, backend)[0])}

    sk, gpu = medians("sklearn", sklearn_repeats), medians("nbgpu-gpu", repeats)
    for op in ("fit", "predict"):
        bw = nbytes / gpu[op]
        out[op] = {
            "gpu_median_s": gpu[op],
            "sklearn_cpu_median_s": sk[op],
            "speedup_vs_sklearn": sk[op] / gpu[op],
            "bandwidth_GBps": bw / 1e9,
            "fraction_of_copy_bandwidth": bw / copy_bw,
            "targets": {"fraction_of_copy_bandwidth": 0.4, "speedup_vs_sklearn": 50.0},
        }
    return out


def streaming_target(h2d_bw, *, chunk_docs=1_000_000, n_distinct=2, factor=2.0):
    """Stream ``factor`` × GPU memory of CSR chunks through ``fit_stream`` on the current GPU: a few
    distinct chunks of ``--size gpu``'s text (documents of 100 tokens over 2**20 features, 20 classes) built
    in pinned host memory (as a loader reading into pinned buffers would), cycled, so host memory stays
    bounded."""
    total = int(cupy().cuda.runtime.memGetInfo()[1])
    chunks = []
    for seed in range(n_distinct):
        X, y = make_zipf_text(chunk_docs, 2**20, tokens_per_doc=100, n_classes=20, random_state=seed)
        parts = [pinned_copy(a) for a in (X.data, X.indices, X.indptr)]
        chunks.append((sp.csr_matrix(tuple(parts), shape=X.shape, copy=False), y))
    chunk_bytes = [bytes_read(X) for X, _ in chunks]
    n_chunks = int(np.ceil(factor * total / chunk_bytes[0]))
    stream = (chunks[i % n_distinct] for i in range(n_chunks))
    model = nbgpu.MultinomialNB()
    (elapsed,), _ = timed(
        lambda: nbgpu.fit_stream(model, stream, classes=np.arange(20), device="gpu", prefetch=2), 1, "nbgpu-gpu"
    )
    streamed = sum(chunk_bytes[i % n_distinct] for i in range(n_chunks))
    return {
        "device_memory_bytes": int(total),
        "bytes_streamed": int(streamed),
        "chunks": n_chunks,
        "seconds": elapsed,
        "bandwidth_GBps": streamed / elapsed / 1e9,
        "fraction_of_h2d_bandwidth": streamed / elapsed / h2d_bw,
        "target": 0.5,
    }


def gaussian_targets(copy_bw, *, size="gpu", repeats=3):
    """GaussianNB fit/predict on the current GPU against the memory roofline of its products."""
    X, y = make_bench_data("gaussian", size)
    Xd, yd = to_backend("nbgpu-gpu", X), to_backend("nbgpu-gpu", y)
    model = nbgpu.GaussianNB().fit(Xd, yd)
    roofline = X.nbytes / copy_bw
    out = {"shape": list(X.shape), "roofline_s": roofline}
    W = to_backend("nbgpu-gpu", np.random.default_rng(0).standard_normal((X.shape[1], 10)).astype(np.float32))
    out["plain_matmul_s"] = float(np.median(timed(lambda: Xd @ W, repeats, "nbgpu-gpu")[0]))
    for op, fn in (("fit", lambda: model.fit(Xd, yd)), ("predict", lambda: model.predict(Xd))):
        median = float(np.median(timed(fn, repeats, "nbgpu-gpu")[0]))
        out[op] = {"median_s": median, "fraction_of_roofline": roofline / median, "target": 0.5}
    return out


def main(argv=None) -> int:
    """Measure every GPU target and write them as JSON."""
    parser = argparse.ArgumentParser(prog="python benchmarks/gpu_targets.py", description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--size", default="gpu", choices=SIZES, help="data size preset")
    parser.add_argument("--skip-streaming", action="store_true", help="leave out the 2x-memory stream")
    args = parser.parse_args(argv)
    if cupy() is None:
        print("no usable cupy/GPU: the GPU targets cannot be measured here", file=sys.stderr)
        return 2
    copy_bw, h2d_bw = copy_bandwidths()
    results = {
        "device": device_name("nbgpu-gpu"),
        "cpu": device_name("nbgpu-cpu"),
        "versions": versions(),
        "device_copy_GBps": copy_bw / 1e9,
        "host_to_device_GBps": h2d_bw / 1e9,
    }
    print(f"copy {copy_bw / 1e9:.0f} GB/s, host-to-device {h2d_bw / 1e9:.1f} GB/s", flush=True)
    results["multinomial"] = multinomial_targets(copy_bw, size=args.size)
    print(json.dumps(results["multinomial"], indent=1), flush=True)
    results["gaussian"] = gaussian_targets(copy_bw, size=args.size)
    print(json.dumps(results["gaussian"], indent=1), flush=True)
    if not args.skip_streaming:
        results["streaming"] = streaming_target(h2d_bw)
        print(json.dumps(results["streaming"], indent=1), flush=True)
    with open(args.json, "w", encoding="utf-8") as f:  # written once, at the end
        json.dump(results, f, indent=1)
    print(f"GPU target results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
