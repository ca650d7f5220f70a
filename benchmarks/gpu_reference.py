"""nbgpu on the GPU beside two raw-cupy plans, on the same data in one process, split into steps.

    python benchmarks/gpu_reference.py --json FILE [--size gpu] [--repeats 5]
    python benchmarks/gpu_reference.py --dry-run --size tiny --json FILE   # numpy/scipy: the plans checked on a CPU

For MultinomialNB on Zipfian hashed text (the GPU targets' 1.2M documents × 2**20 features at
``--size gpu``) and GaussianNB on dense float32 (4M × 100), with CUDA events around each step
(medians of ``--repeats``):

1. nbgpu's ``fit`` and ``predict``, and the same work split into its steps, each timed alone:
   ``validation`` (check_X), ``labels`` (distinct labels and their codes), ``sums`` (the
   model's ``_accumulate``), ``finalize`` (``_finalize``) and ``scores`` (the joint
   log-likelihood and its argmax);
2. (a) the fewest-pass plans: the per-class sums as ONE product over X — ``Xᵀ·Y`` with Y the
   n × k one-hot class matrix (float64 sums), as cuSPARSE's transposed product and as a
   segmented reduction (X's transpose made CSR, then a row-wise product: no atomics) — and prediction as one product ``X·Wᵀ`` with the bias added and
   argmax taken over its n × k result; GaussianNB's class moments from two products
   ``Yᵀ·(X − c)`` and ``Yᵀ·(X − c)²`` around a pooled shift ``c`` (float32 keeps its digits),
   prediction as two products of the expanded quadratic form;
   (b) cuML's counting: X as COO, one float32 atomicAdd per stored value (``cupyx.scatter_add``);
   each checked against nbgpu's statistics and predictions (float64 sums exactly equal for (a)).

Launch, read and sync counts of nbgpu's steps come from the emulated device on any machine
(``python benchmarks/device_cost.py``); this script times them. Streaming from pinned host
chunks is ``python benchmarks/gpu_targets.py`` (stage ``targets`` of ``ci/gpu.sh``). Results
are JSON with the device's name; ``ci/gpu.sh`` runs this as its stage ``reference``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

import nbgpu
from nbgpu._validation import check_X, encode_labels, unique_labels  # fit's first steps, timed one by one
from nbgpu.datasets import make_bench_data

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from backends import SIZES, bytes_read, versions  # noqa: E402


class Backend:
    """The array library, its sparse module, a timer and the scatter-add: cupy on a GPU, numpy in a dry run."""

    def __init__(self, dry):
        self.dry = dry
        if dry:
            self.xp, self.sparse, self.scatter_add = np, sp, np.add.at
            self.name = f"dry run: numpy on {platform.processor() or platform.machine()}"
            return
        import cupy
        import cupyx
        import cupyx.scipy.sparse as cusparse

        self.xp, self.sparse, self.scatter_add = cupy, cusparse, cupyx.scatter_add
        self.name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()

    def upload(self, a):
        if self.dry:
            return a
        if sp.issparse(a):
            return self.sparse.csr_matrix(a)
        return self.xp.asarray(a)

    def seconds(self, fn, repeats):
        """(median seconds of ``repeats`` calls of fn, its last result), device work included."""
        times, result = [], None
        for _ in range(repeats):
            if self.dry:
                start = time.perf_counter()
                result = fn()
                times.append(time.perf_counter() - start)
                continue
            begin, end = self.xp.cuda.Event(), self.xp.cuda.Event()
            begin.record()
            result = fn()
            end.record()
            end.synchronize()
            times.append(self.xp.cuda.get_elapsed_time(begin, end) / 1e3)
        return statistics.median(times), result

    def host(self, a):
        return a if self.dry else (a.get() if hasattr(a, "get") else a)


def _steps(be, model, X, y, repeats):
    """Seconds of nbgpu's fit and predict, and of each step of them timed alone."""
    out = {}
    out["fit"], _ = be.seconds(lambda: model.fit(X, y), repeats)
    out["predict"], _ = be.seconds(lambda: model.predict(X), repeats)
    out["validation"], (Xv, kind) = be.seconds(lambda: check_X(X, estimator=model), repeats)
    xp, device = kind.xp, kind.device

    def labels():
        classes = unique_labels(y)
        return classes, encode_labels(y, classes, xp=xp, device=device)

    out["labels"], (classes, codes) = be.seconds(labels, repeats)
    k = classes.shape[0]
    weights = xp.ones(X.shape[0], dtype=xp.float64)
    Xt = model._model_input(Xv, xp)
    out["sums"], stats = be.seconds(
        lambda: model._accumulate(Xt, codes, weights, k, xp=xp, dtype=xp.float64, previous=None), repeats)
    dtype = str(Xv.dtype)
    hyper = model._hyper(k, X.shape[1])  # the hyper-parameters as a fit checks them
    out["finalize"], _ = be.seconds(lambda: model._finalize(stats, classes, hyper, xp=xp, dtype=dtype), repeats)
    score_dtype = Xv.dtype
    out["scores"], _ = be.seconds(
        lambda: xp.argmax(model._joint_log_likelihood(Xt, xp=xp, device=device, dtype=score_dtype), axis=1), repeats)
    return out


def multinomial(be, size, repeats):
    X_host, y_host = make_bench_data("text", size)
    X, y = be.upload(X_host), be.upload(y_host)
    xp, n, d = be.xp, X.shape[0], X.shape[1]
    model = nbgpu.MultinomialNB()
    result = {"nnz": int(X_host.nnz), "bytes_of_X": bytes_read(X_host), "nbgpu": _steps(be, model, X, y, repeats)}
    model.fit(X, y)
    classes = be.host(model.classes_)
    k = classes.shape[0]
    codes = xp.searchsorted(xp.asarray(model.classes_), y)

    onehot = xp.zeros((n, k), dtype=xp.float64)
    onehot[xp.arange(n), codes] = 1.0

    def fewest_fit():  # one product with X's transpose (cuSPARSE's transposed SpMM may scatter)
        return (X.T @ onehot).T

    def segmented_fit():  # X's transpose made CSR (a sort by column), then a row-wise product: no atomics
        return (X.T.tocsr() @ onehot).T

    def cuml_fit():  # COO, one float32 atomicAdd per stored value
        coo = X.tocoo()
        counts = xp.zeros((k, d), dtype=xp.float32)
        be.scatter_add(counts, (codes[coo.row], coo.col), coo.data.astype(xp.float32))
        return counts

    W = xp.asarray(model.feature_log_prob_, dtype=xp.float32)
    b = xp.asarray(model.class_log_prior_, dtype=xp.float32)

    def fewest_predict():  # one product, then the bias and argmax over its n × k result
        return xp.argmax(X @ W.T + b, axis=1)

    seconds = {}
    seconds["fewest_fit"], counts = be.seconds(fewest_fit, repeats)
    seconds["segmented_fit"], segmented = be.seconds(segmented_fit, repeats)
    seconds["cuml_fit"], counts32 = be.seconds(cuml_fit, repeats)
    seconds["fewest_predict"], decided = be.seconds(fewest_predict, repeats)
    expected = be.host(model.feature_count_)
    result["reference"] = seconds
    result["checks"] = {
        "fewest_sums_equal": bool(np.array_equal(be.host(counts), expected)),
        "segmented_sums_equal": bool(np.array_equal(be.host(segmented), expected)),
        "cuml_sums_close": bool(np.allclose(be.host(counts32), expected, rtol=1e-5)),
        "fewest_predict_equal": float(np.mean(classes[be.host(decided)] == be.host(model.predict(X)))),
    }
    return result


def gaussian(be, size, repeats):
    X_host, y_host = make_bench_data("gaussian", size)
    X_host = X_host.astype(np.float32)
    X, y = be.upload(X_host), be.upload(y_host)
    xp, n = be.xp, X.shape[0]
    model = nbgpu.GaussianNB()
    result = {"shape": list(X_host.shape), "bytes_of_X": int(X_host.nbytes), "nbgpu": _steps(be, model, X, y, repeats)}
    model.fit(X, y)
    classes = be.host(model.classes_)
    k = classes.shape[0]
    codes = xp.searchsorted(xp.asarray(model.classes_), y)

    def fewest_fit():  # class moments from two products around a pooled shift
        onehot = xp.zeros((n, k), dtype=xp.float32)
        onehot[xp.arange(n), codes] = 1.0
        count = xp.sum(onehot, axis=0, dtype=xp.float64)[:, None]
        shift = X[0]
        Xc = X - shift
        first = (onehot.T @ Xc).astype(xp.float64) / count
        second = (onehot.T @ (Xc * Xc)).astype(xp.float64) / count
        return first + shift, second - first * first

    theta, var = xp.asarray(model.theta_, dtype=xp.float32), xp.asarray(model.var_, dtype=xp.float32)
    precision = 1 / var
    bias = xp.log(xp.asarray(model.class_prior_, dtype=xp.float32)) - 0.5 * (
        xp.sum(xp.log(2 * np.pi * var), axis=1) + xp.sum(theta * theta * precision, axis=1))

    def fewest_predict():  # the expanded quadratic form: two products, then argmax
        return xp.argmax((X * X) @ (-0.5 * precision).T + X @ (theta * precision).T + bias, axis=1)

    seconds = {}
    seconds["fewest_fit"], (mean, variance) = be.seconds(fewest_fit, repeats)
    seconds["fewest_predict"], decided = be.seconds(fewest_predict, repeats)
    epsilon = float(be.host(model.epsilon_))
    result["reference"] = seconds
    result["checks"] = {
        "fewest_means_close": bool(np.allclose(be.host(mean), be.host(model.theta_), rtol=1e-4, atol=1e-5)),
        "fewest_variances_close": bool(np.allclose(be.host(variance) + epsilon, be.host(model.var_), rtol=1e-3, atol=1e-5)),
        "fewest_predict_equal": float(np.mean(classes[be.host(decided)] == be.host(model.predict(X)))),
    }
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--size", default="gpu", choices=SIZES, help="data size preset (default gpu)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dry-run", action="store_true", help="numpy and scipy instead of cupy: the plans checked")
    args = parser.parse_args(argv)
    be = Backend(args.dry_run)
    results = {"device": be.name, "size": args.size, "versions": versions()}
    for name, run in (("MultinomialNB", multinomial), ("GaussianNB", gaussian)):
        results[name] = run(be, args.size, args.repeats)
        print(name, json.dumps(results[name], indent=1), flush=True)
    with open(args.json, "w") as f:
        json.dump(results, f, indent=1)
    failed = [f"{m}.{c}" for m in ("MultinomialNB", "GaussianNB") for c, ok in results[m]["checks"].items() if ok is not True and ok != 1.0]
    if failed:
        print(f"gpu_reference: results differ from nbgpu's: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
