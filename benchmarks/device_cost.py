"""What each model's fit and predict cost on a GPU, counted on the CPU (issue 35, item 1).

    python benchmarks/device_cost.py [--json FILE] [--scale S] [--block-bytes B] [--models A,B]

Runs every model's fit and predict on the emulated device
(``tests/emulated_device.py``, numpy standing in for cupy) on the GPU target
workloads scaled down, and counts, with ``emulated_device.count_costs``:
kernel launches, device→host synchronisations, passes over X (``x_reads``:
reads of arrays with one entry per element or stored value of X), bytes
read, written and allocated, atomics, the row blocks nbgpu cut X into, and
each per phase (validation, labels, sums, finalize, scores; the table of
phases is ``emulated_device.PHASE_OF_FUNCTION``). Counts, never times: they
hold on any CPU. The data is built on the host and moved to the device
outside the counter, as a GPU benchmark would; the counter wraps only the
fit or the predict.

Workloads at ``--scale 1`` (a tenth of ``nbgpu bench --size gpu``'s):
GaussianNB 400,000 × 100 float32; MultinomialNB, ComplementNB, BernoulliNB
and PoissonNB a Zipfian hashed-text CSR of about 3·10⁶ stored values
(30,000 documents × 2²⁰ features, 20 classes); CategoricalNB 200,000 × 50;
NormalBayesClassifier 100,000 × 20; KernelDensityNB 4,000 × 8 (its predict
is rows × training rows). ``--scale`` multiplies the rows. ``--block-bytes``
sets ``nbgpu._array.blocks.BLOCK_BYTES`` (default nbgpu's own) and
``--block-factor`` ``DEVICE_BLOCK_FACTOR`` (a device block is that many times
larger; 16: every workload here is one row block, 1: tens of them). The budgets of the issue,
checked by ``tests/test_device_cost.py``, are printed beside the counts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import emulated_device as emu  # noqa: E402  (the tests' stand-in device)

import nbgpu  # noqa: E402
from nbgpu._array import blocks  # noqa: E402  (the block sizes measured, on purpose)
from nbgpu.datasets import make_categorical, make_gaussian, make_zipf_text  # noqa: E402

TEXT_MODELS = ("MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB")
MODELS = ("GaussianNB", *TEXT_MODELS, "CategoricalNB", "NormalBayesClassifier", "KernelDensityNB")

#: Issue 35's budgets: launches per call (fixed + per row block), device→host
#: reads (labels excluded), passes over X-sized arrays.
BUDGETS = {
    "fit": {"launches": (60, 40), "syncs": 3, "x_reads": 3},
    "predict": {"launches": (20, 10), "syncs": 2, "x_reads": 2},
}


def workload(name, scale):
    """``(X, y, description)`` on the host for ``name`` at ``scale``."""
    rows = lambda n: max(int(n * scale), 50)  # noqa: E731
    if name == "GaussianNB":
        X, y = make_gaussian(rows(400_000), 100, n_classes=10, random_state=0)
        return X, y, f"{X.shape[0]:,} × {X.shape[1]} float32 dense, 10 classes"
    if name in TEXT_MODELS:
        X, y = make_zipf_text(rows(30_000), 2**20, tokens_per_doc=100, n_classes=20, random_state=0)
        return X, y, f"Zipfian hashed text CSR {X.shape[0]:,} × 2^20, {X.nnz:,} stored float32, 20 classes"
    if name == "CategoricalNB":
        X, y = make_categorical(rows(200_000), 50, n_categories=10, n_classes=10, random_state=0)
        return X, y, f"{X.shape[0]:,} × {X.shape[1]} categories (10 each) float32 dense, 10 classes"
    if name == "NormalBayesClassifier":
        X, y = make_gaussian(rows(100_000), 20, n_classes=10, random_state=0)
        return X, y, f"{X.shape[0]:,} × {X.shape[1]} float32 dense (full covariances), 10 classes"
    if name == "KernelDensityNB":
        X, y = make_gaussian(rows(4_000), 8, n_classes=5, random_state=0)
        return X, y, f"{X.shape[0]:,} × {X.shape[1]} float32 dense, 5 classes"
    raise ValueError(name)


def to_device(X):
    """``X`` on the emulated device (an upload, outside any counter)."""
    if sp.issparse(X):
        return getattr(emu.cupyx.scipy.sparse, f"{X.format}_matrix")(X)
    return emu.cupy.asarray(X)


def excluded_syncs(log):
    """Synchronisations the budgets leave out: those of the labels (reading,
    checking and encoding y; decoding predictions)."""
    return log.by_phase["labels"]["syncs"]


def budget_of(op, row_blocks):
    """``{"launches": n, "syncs": n, "x_reads": n}`` allowed for ``op`` at ``row_blocks``."""
    b = BUDGETS[op]
    fixed, per_block = b["launches"]
    return {"launches": fixed + per_block * row_blocks, "syncs": b["syncs"], "x_reads": b["x_reads"]}


def measure(name, X, y):
    """``{"Model.fit": counts, "Model.predict": counts}`` of one model on host data."""
    Xd, yd = to_device(X), emu.cupy.asarray(y)
    model = getattr(nbgpu, name)()
    out = {}
    for op in ("fit", "predict"):
        start = time.perf_counter()
        with emu.count_costs(Xd) as log:
            result = model.fit(Xd, yd) if op == "fit" else model.predict(Xd)
        seconds = time.perf_counter() - start
        row = log.as_dict()
        row["syncs_excluding_labels"] = log.syncs - excluded_syncs(log)
        row["budget"] = budget_of(op, log.row_blocks)
        row["within_budget"] = {
            "launches": log.launches <= row["budget"]["launches"],
            "syncs": row["syncs_excluding_labels"] <= row["budget"]["syncs"],
            "x_reads": log.x_reads <= row["budget"]["x_reads"],
        }
        row["top_sites"] = [
            {"phase": phase, "site": site, "operation": what, "launches": n}
            for (phase, site, what), n in log.sites.most_common(12)
        ]
        row["sync_sites"] = {f"{phase} {site}": n for (phase, site), n in log.sync_sites.most_common()}
        row["emulated_seconds"] = round(seconds, 3)
        out[f"{name}.{op}"] = row
        del result
    return out


def table(results):
    """The counts as a readable table."""
    head = (f"{'model.op':32} {'launches':>9} {'budget':>7} {'syncs':>5} {'(-lbl)':>6} {'x_reads':>8} "
            f"{'read/X':>7} {'wrote/X':>7} {'atomics':>10} {'blocks':>6}")
    lines = [head, "-" * len(head)]
    for key, r in results.items():
        ok = r["within_budget"]
        flag = lambda what: " " if ok[what] else "!"  # noqa: E731
        lines.append(
            f"{key:32} {r['launches']:>8,}{flag('launches')} {r['budget']['launches']:>7} {r['syncs']:>5} "
            f"{r['syncs_excluding_labels']:>5}{flag('syncs')} {r['x_reads']:>7.2f}{flag('x_reads')} "
            f"{r['bytes_read'] / r['bytes_of_X']:>7.1f} {r['bytes_written'] / r['bytes_of_X']:>7.1f} "
            f"{r['atomics']:>10,} {r['row_blocks']:>6}"
        )
    lines.append("! over issue 35's budget (launches 60 + 40/block fit, 20 + 10/block predict; "
                 "syncs without labels 3 fit, 2 predict; X passes 3 fit, 2 predict)")
    return "\n".join(lines)


def phase_table(results):
    lines = [f"{'model.op':32} " + " ".join(f"{p:>16}" for p in emu.PHASES[:-1]) + f" {'other':>16}",
             "(launches / syncs / x_reads per phase)"]
    for key, r in results.items():
        cells = []
        for p in emu.PHASES:
            row = r["phases"].get(p)
            cells.append(f"{row['launches']}/{row['syncs']}/{row['x_reads']:.1f}" if row else "-")
        lines.append(f"{key:32} " + " ".join(f"{c:>16}" for c in cells))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the counts here")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the rows of every workload (default 1)")
    parser.add_argument("--block-bytes", type=int, default=None, help="nbgpu._array.blocks.BLOCK_BYTES for the run")
    parser.add_argument("--block-factor", type=int, default=None,
                        help="nbgpu._array.blocks.DEVICE_BLOCK_FACTOR for the run "
                        "(1: device blocks as small as the host's)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated models")
    args = parser.parse_args(argv)
    if args.block_bytes is not None:
        blocks.BLOCK_BYTES = args.block_bytes
    if args.block_factor is not None:
        blocks.DEVICE_BLOCK_FACTOR = args.block_factor
    results, workloads = {}, {}
    corpus = None
    for name in args.models.split(","):
        if name in TEXT_MODELS and corpus is not None:
            X, y, what = corpus
        else:
            X, y, what = workload(name, args.scale)
            if name in TEXT_MODELS:
                corpus = X, y, what
        workloads[name] = what
        print(f"{name}: {what}", file=sys.stderr, flush=True)
        results.update(measure(name, X, y))
    print(table(results))
    print()
    print(phase_table(results))
    if args.json:
        doc = {
            "what": "device costs per call on the emulated device (tests/emulated_device.py count_costs)",
            "date": datetime.date.today().isoformat(),
            "scale": args.scale,
            "block_bytes": blocks.BLOCK_BYTES,
            "device_block_factor": blocks.DEVICE_BLOCK_FACTOR,
            "budgets": BUDGETS,
            "versions": {"python": platform.python_version(), "nbgpu": nbgpu.__version__, "numpy": np.__version__},
            "workloads": workloads,
            "results": results,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
