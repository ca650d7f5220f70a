"""Fit on Dask: a corpus larger than a worker's memory, 1 worker against 2.

The corpus is a set of uncompressed ``.npz`` CSR blocks on disk (a few
distinct Zipfian blocks, each read several times), loaded by the workers
block by block; no worker could hold it whole (``--worker-memory`` is well
below its size). Each worker has one thread and nbgpu runs one thread in it
(``NBGPU_NUM_THREADS=1``), so 2 workers use the 2 cores this machine has.
The fit is ``partial_fit(..., classes=...)``: one pass over the blocks.

    python benchmarks/dask_scaling.py --json benchmarks/results/dask-scaling-cpu.json

``benchmarks/test_bench_dask.py`` times the same fit under pytest-benchmark.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from nbgpu.datasets import make_zipf_text

DEFAULTS = {"blocks": 64, "docs": 50_000, "features": 2**16, "tokens": 100, "classes": 20, "distinct": 4}


def write_corpus(folder, *, blocks, docs, features, tokens, classes, distinct):
    """``distinct`` Zipfian CSR blocks as .npz files; returns the file of every block."""
    paths = []
    for i in range(distinct):
        X, y = make_zipf_text(docs, features, tokens_per_doc=tokens, n_classes=classes, random_state=i)
        path = os.path.join(folder, f"block{i}.npz")
        sp.save_npz(path, X, compressed=False)
        np.save(path + ".y.npy", y)
        paths.append(path)
    return [paths[b % distinct] for b in range(blocks)]


def _load_X(path):
    return sp.load_npz(path).tocsr()


def _load_y(path):
    return np.load(path + ".y.npy")


def corpus_bytes(paths):
    """Bytes of the corpus in memory (stored values and index arrays of every block)."""
    sizes = {p: sum(a.nbytes for a in (_load_X(p).data, _load_X(p).indices, _load_X(p).indptr)) for p in set(paths)}
    return sum(sizes[p] for p in paths)


def dask_corpus(paths, *, docs, features):
    """(X, y) as Dask arrays whose blocks the workers read from disk."""
    import dask
    import dask.array as da

    meta = sp.csr_matrix((0, features), dtype=np.float32)
    X = da.concatenate(
        [da.from_delayed(dask.delayed(_load_X)(p), shape=(docs, features), meta=meta) for p in paths]
    )
    y = da.concatenate([da.from_delayed(dask.delayed(_load_y)(p), shape=(docs,), dtype=np.int64) for p in paths])
    return X, y


@contextlib.contextmanager
def cluster(n_workers, memory_limit):
    """A LocalCluster of single-threaded worker processes on loopback, and its client."""
    import distributed

    os.environ["NBGPU_NUM_THREADS"] = "1"  # inherited by the worker processes
    with distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=memory_limit,
        host="127.0.0.1",
        dashboard_address=":0",  # any free port (None means 8787)
    ) as lc, distributed.Client(lc) as client:
        yield client


def fit_once(X, y, classes):
    from nbgpu import MultinomialNB

    return MultinomialNB().partial_fit(X, y, classes=classes)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, value in DEFAULTS.items():
        parser.add_argument(f"--{name}", type=int, default=value)
    parser.add_argument("--worker-memory", default="1GB", help="memory limit of each worker")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="where to write the raw results")
    args = parser.parse_args(argv)
    sizes = {k: getattr(args, k) for k in DEFAULTS}

    with tempfile.TemporaryDirectory() as folder:
        print(f"writing the corpus {sizes} ...", flush=True)
        paths = write_corpus(folder, **sizes)
        total = corpus_bytes(paths)
        X, y = dask_corpus(paths, docs=args.docs, features=args.features)
        classes = np.arange(args.classes)
        # The reference: each distinct block fitted in memory, counted as often as it is read.
        ref = sum(fit_once(_load_X(p), _load_y(p), classes).feature_count_ for p in paths)
        times = {}
        for n_workers in (1, 2):
            with cluster(n_workers, args.worker_memory):
                fit_once(X[: args.docs], y[: args.docs], classes)  # warm the workers up
                runs = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    model = fit_once(X, y, classes)
                    runs.append(time.perf_counter() - start)
                if not np.array_equal(model.feature_count_, ref):
                    raise SystemExit(f"{n_workers} worker(s): the Dask fit differs from the in-memory fits")
            times[n_workers] = runs
            print(f"{n_workers} worker(s): median {np.median(runs):.2f} s, min {min(runs):.2f} s", flush=True)

    speedup = float(np.median(times[1]) / np.median(times[2]))
    result = {
        "benchmark": "dask fit scaling (MultinomialNB.partial_fit, one pass)",
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "python": platform.python_version()},
        "sizes": sizes,
        "corpus_bytes": total,
        "worker_memory_limit": args.worker_memory,
        "seconds": {f"{k}_workers": v for k, v in times.items()},
        "speedup_2_over_1_median": speedup,
        "speedup_2_over_1_min": float(min(times[1]) / min(times[2])),
        "target_speedup": 1.6,
    }
    print(f"corpus {total / 2**20:.0f} MiB, worker memory limit {args.worker_memory}: "
          f"2 workers are {speedup:.2f}x faster than 1 (median; target >= 1.6x)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return result


if __name__ == "__main__":
    main()
