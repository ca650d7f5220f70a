"""SemiSupervisedNB: EM on a Dask array against EM in memory, same rows.

A Zipfian synthetic corpus (CSR float32, 40,000 documents, 2**16 words, 20
classes, 2 % labeled), MultinomialNB, max_iter=10 and tol=0 (every run does
ten iterations). The Dask array is the in-memory matrix cut into 8 row
blocks, computed by Dask's local threads or synchronously: what the
per-block passes and the tree of merges cost over the in-memory loop when
reading X is free. Also counts how many times
X's blocks are computed (n_iter_ + 2 passes). Medians of interleaved
repeats, one process. Run from the repository root:

    python benchmarks/semi_supervised_dask.py [repeats]
"""

from __future__ import annotations

import sys
import warnings

import dask
import dask.array as da
import numpy as np
from interleaved import interleaved_medians, print_ratios
from sklearn.exceptions import ConvergenceWarning

import nbgpu
from nbgpu.datasets import make_zipf_text


def main(repeats=5):
    X, y = make_zipf_text(40_000, 2**16, tokens_per_doc=100, n_classes=20, random_state=0)
    partial = np.where(np.arange(X.shape[0]) % 50 == 0, y, -1)
    blocks = -(-X.shape[0] // 8)
    computed = []

    def counted(block):
        computed.append(block.shape[0])
        return block

    Xd = da.from_array(X, chunks=(blocks, -1), asarray=False).map_blocks(counted, meta=X[:0])
    yd = da.from_array(partial, chunks=blocks)

    def fit(Xf, yf, scheduler="threads"):
        with warnings.catch_warnings(), dask.config.set(scheduler=scheduler):
            warnings.simplefilter("ignore", ConvergenceWarning)
            return nbgpu.SemiSupervisedNB(max_iter=10, tol=0.0).fit(Xf, yf)

    calls = {
        "in memory": lambda: fit(X, partial),
        "dask, 8 blocks, threads": lambda: fit(Xd, yd),
        "dask, 8 blocks, synchronous": lambda: fit(Xd, yd, "synchronous"),
    }
    medians, results = interleaved_medians(calls, repeats)
    print(f"{X.shape[0]} rows, {X.shape[1]} features, {X.nnz} stored values; 10 EM iterations")
    print_ratios(medians, "in memory")
    mem, dsk = results["in memory"], results["dask, 8 blocks, threads"]
    print(f"  log-likelihoods equal to {np.max(np.abs(np.subtract(mem.log_likelihood_, dsk.log_likelihood_))):.1e}")
    passes = sum(computed) / X.shape[0] / (2 * repeats)
    print(f"  passes over X per Dask fit: {passes:g} (n_iter_ + 2 = {dsk.n_iter_ + 2})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
