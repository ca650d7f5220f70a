"""Issue 35's device budgets, counted on the emulated device (counts, never times).

``emulated_device.count_costs`` counts what a call would cost on a GPU: kernel
launches, device→host synchronisations, passes over X-sized arrays, atomics
(``benchmarks/device_cost.py`` reports them at the GPU target sizes). Per
fit: at most 60 + 40 launches per row block, 3 synchronisations and 3 passes
over X-sized arrays; per predict 20 + 10 per row block, 2 and 2. The labels'
synchronisations (checking and encoding y, decoding predictions) are left
out, as the issue leaves them out; the result stays on the device and is not
read inside the counted call. Where today's kernels exceed a budget the case
is a strict xfail whose reason is the measured figure, so it flips when the
fewest-pass kernels (issue 35, item 2) meet it.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import random_data

import emulated_device as emu

import nbgpu
from nbgpu._array import blocks, paths

MODELS = ("GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB", "CategoricalNB",
          "NormalBayesClassifier", "KernelDensityNB")
TEXT = ("MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB")
DATA = {"PoissonNB": "MultinomialNB", "NormalBayesClassifier": "GaussianNB", "KernelDensityNB": "GaussianNB"}
ROWS = {"KernelDensityNB": 120}  # its predict is rows × training rows
# Small blocks, so that every call works in several row blocks (n = 400, d = 7, k = 3).
BLOCK_BYTES = 4096
BUDGETS = {"fit": {"launches": (60, 40), "syncs": 3, "x_reads": 3},
           "predict": {"launches": (20, 10), "syncs": 2, "x_reads": 2}}

# (model, format, call, budget) over budget today: the figure measured at the sizes above.
OVER = {
    ("GaussianNB", "dense", "fit", "x_reads"):
        "X-sized arrays read 4.01 times (budget 3; fast path shifted_moments, 6.00 on its reference): X less a row "
        "of its class (which casts it), the sums of that and of its square",
    ("GaussianNB", "dense", "predict", "x_reads"):
        "X-sized arrays read 4.00 times (budget 2): X - shift, its square, the two products",
    **{(name, "csr", "predict", budget): f"{figure} (budget 2): the canonical flag of X, which cupyx's product "
       "asks (PoissonNB: its log x! acts on elements; a pass over its indices, read back), and which the fit of the "
       "same X, that no longer needs it, used to leave known; the largest value, the product"
       for name in ("MultinomialNB", "ComplementNB", "PoissonNB")
       for budget, figure in (("x_reads", "X-sized arrays read 3.00 times"), ("syncs", "3 synchronisations"))},
    ("BernoulliNB", "dense", "fit", "x_reads"):
        "X-sized arrays read 4.00 times (budget 3)",
    ("BernoulliNB", "dense", "predict", "x_reads"):
        "X-sized arrays read 4.00 times (budget 2): the finiteness sum, X > binarize, its cast, the product",
    ("BernoulliNB", "csr", "fit", "x_reads"):
        "X-sized arrays read 6.00 times (budget 3): the canonical flag (binarizing acts on elements), the "
        "finiteness sum, X > binarize, its cast, the transposition, the product",
    ("BernoulliNB", "csr", "predict", "x_reads"):
        "X-sized arrays read 4.00 times (budget 2): the finiteness sum, X > binarize, its cast, the product",
    ("CategoricalNB", "dense", "fit", "x_reads"):
        "X-sized arrays read 8.00 times (budget 3): codes checked (min, v % 1 and its max), the column maxima, "
        "the keys (a cast, two offsets added), their scatter",
    ("CategoricalNB", "dense", "predict", "x_reads"):
        "X-sized arrays read 5.86 times (budget 2): codes checked (min, v % 1 and its max), clipped, paired, cast",
    ("NormalBayesClassifier", "dense", "fit", "x_reads"):
        "X-sized arrays read 4.01 times (budget 3; fast path shifted_moments, 5.00 on its reference): X less a row "
        "of its class (which casts it), the sums of that, its spread over the classes, their product with it",
    ("KernelDensityNB", "dense", "predict", "launches"):
        "26764 launches in 120 row blocks (budget 1220): a log-sum-exp over the training points per feature, ~31 "
        "launches a feature a block; over all features at once ~25 a block, but its temporaries d times larger make d "
        "times the blocks: no formulation of Array API operations reaches 10 a block",
}


# Cases within budget by a fast path only (under NBGPU_REFERENCE its reference runs: skipped).
WITHIN_BY_FAST_PATH = {
    **{(name, fmt, "predict", budget): "deferred_checks" for name in ("MultinomialNB", "ComplementNB", "PoissonNB")
       for fmt in ("dense", "csr") for budget in ("syncs", "x_reads") if (name, fmt, "predict", budget) not in OVER},
    ("KernelDensityNB", "dense", "predict", "x_reads"): "deferred_checks",
    ("KernelDensityNB", "dense", "fit", "x_reads"): "finite_by_sum",
    ("CategoricalNB", "dense", "fit", "syncs"): "deferred_checks",
    **{(name, "csr", "fit", "x_reads"): "sparse_class_sums" for name in ("MultinomialNB", "ComplementNB", "PoissonNB")},
}


def _cases():
    for name in MODELS:
        for fmt in ("dense", "csr") if name in TEXT else ("dense",):
            for call in ("fit", "predict"):
                for budget in ("launches", "syncs", "x_reads"):
                    marks = ()
                    if (name, fmt, call, budget) in OVER:
                        marks = pytest.mark.xfail(strict=True, reason=OVER[(name, fmt, call, budget)])
                    elif (name, fmt, call, budget) in WITHIN_BY_FAST_PATH:
                        marks = pytest.mark.fast_path(WITHIN_BY_FAST_PATH[(name, fmt, call, budget)])
                    yield pytest.param(name, fmt, call, budget, marks=marks, id=f"{name}-{fmt}-{call}-{budget}")


_MEASURED = {}


def measured(name, fmt):
    """``{"fit": CostLog, "predict": CostLog}`` of ``name`` on small device data (measured once)."""
    if (name, fmt) not in _MEASURED:
        X, y = random_data(DATA.get(name, name), n=ROWS.get(name, 400), d=7, seed=1)
        Xd = emu.cupy.asarray(X) if fmt == "dense" else emu.cupyx.scipy.sparse.csr_matrix(sp.csr_matrix(X))
        yd = emu.cupy.asarray(y)
        saved = blocks.BLOCK_BYTES, blocks.DEVICE_BLOCK_FACTOR
        blocks.BLOCK_BYTES, blocks.DEVICE_BLOCK_FACTOR = BLOCK_BYTES, 1
        try:
            model = getattr(nbgpu, name)()
            with emu.count_costs(Xd) as fit:
                model.fit(Xd, yd)
            with emu.count_costs(Xd) as predict:
                model.predict(Xd)
        finally:
            blocks.BLOCK_BYTES, blocks.DEVICE_BLOCK_FACTOR = saved
        _MEASURED[(name, fmt)] = {"fit": fit, "predict": predict}
    return _MEASURED[(name, fmt)]


def figure(log, call, budget):
    """``(counted, allowed)`` of one budget."""
    b = BUDGETS[call]
    if budget == "launches":
        fixed, per_block = b["launches"]
        return log.launches, fixed + per_block * log.row_blocks
    if budget == "syncs":  # the labels' synchronisations are not the kernels'
        return log.syncs - log.by_phase["labels"]["syncs"], b["syncs"]
    return round(log.x_reads, 6), b["x_reads"]


@pytest.mark.parametrize(("name", "fmt", "call", "budget"), list(_cases()))
def test_device_budget(name, fmt, call, budget):
    log = measured(name, fmt)[call]
    counted, allowed = figure(log, call, budget)
    detail = {"log": log, "syncs": dict(log.sync_sites), "top": log.sites.most_common(5), "x": dict(log.x_sites)}
    assert counted <= allowed, (f"{name} {fmt} {call}: {counted} {budget} > {allowed}", detail)


def test_calls_are_cut_in_several_row_blocks():
    """The budgets above are checked where they depend on the row blocks."""
    for name in ("GaussianNB", "MultinomialNB"):
        assert measured(name, "dense")["fit"].row_blocks > 1
        assert measured(name, "dense")["predict"].row_blocks > 1
    assert measured("MultinomialNB", "csr")["fit"].row_blocks > 1


@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB", "CategoricalNB", "KernelDensityNB", "PoissonNB"])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, -1.0, 1.5, -0.0])
def test_checks_made_together_raise_what_each_check_raises(name, fmt, bad):
    """Fast path deferred_checks: the checks of device values made as few reductions, read back once,
    refuse what the checks made one by one refuse, with the same error (or let it through alike)."""
    if fmt == "csr" and name not in TEXT:
        pytest.skip("dense-only model")
    X, y = random_data(DATA.get(name, name), n=40, d=5, seed=3)
    bad_X = X.astype(np.float32)
    bad_X[2, 1] = bad

    def device(a):
        return emu.cupy.asarray(a) if fmt == "dense" else emu.cupyx.scipy.sparse.csr_matrix(sp.csr_matrix(a))

    model = getattr(nbgpu, name)().fit(device(X.astype(np.float32)), emu.cupy.asarray(y))

    def outcome():
        with emu.count_costs() as log:
            try:
                labels = model.predict(device(bad_X)).get()
            except ValueError as exc:
                return str(exc), log
        return labels.tolist(), log

    with paths.all_fast():
        together, log = outcome()
        with paths.reference("deferred_checks"):
            one_by_one, _ = outcome()
    assert together == one_by_one
    if not isinstance(together, str) and bad != 0.0:  # a -0.0 is looked at closer: the checks run as they are
        # (+1 for a CSR matrix new to nbgpu: cupyx's has_canonical_format reads back.)
        assert log.by_phase["validation"]["syncs"] <= 1 + (fmt == "csr")


# --------------------------------------------------------------------------- #
# The counter itself, on operations counted by hand
# --------------------------------------------------------------------------- #
def _arrays(n=10):
    a = emu.cupy.asarray(np.arange(n, dtype=np.float64))
    b = emu.cupy.asarray(np.ones(n, dtype=np.float64))
    return a, b


def test_an_elementwise_operation_is_one_launch():
    a, b = _arrays()
    with emu.count_costs() as log:
        c = a + b
    assert (log.launches, log.syncs, log.atomics) == (1, 0, 0)
    assert log.bytes_read == 2 * a.nbytes
    assert log.bytes_written == log.bytes_allocated == c.nbytes


def test_views_launch_nothing_and_in_place_allocates_nothing():
    a, b = _arrays(12)
    with emu.count_costs() as log:
        a[2:5], a.reshape(3, 4), a.reshape(3, 4).T, a.astype(np.float64, copy=False), emu.xp.asarray(a)
    assert (log.launches, log.bytes_read, log.bytes_allocated) == (0, 0, 0)
    with emu.count_costs() as log:
        a += b
    assert (log.launches, log.bytes_read, log.bytes_written, log.bytes_allocated) == (1, 2 * a.nbytes, a.nbytes, 0)


def test_a_reduction_read_back_is_one_launch_and_one_sync():
    a, _ = _arrays()
    with emu.count_costs() as log:
        total = float(emu.xp.sum(a))
    assert total == 45.0
    assert (log.launches, log.syncs, log.bytes_read, log.bytes_written) == (1, 1, a.nbytes, 8)


def test_scatters_count_one_atomic_per_element():
    out = emu.cupy.zeros(4)
    keys = emu.cupy.asarray(np.array([0, 1, 1, 3, 3, 3]))
    values = emu.cupy.asarray(np.ones(6))
    with emu.count_costs() as log:
        emu.cupy.add.at(out, keys, values)
    assert (log.launches, log.atomics, log.bytes_read) == (1, 6, keys.nbytes + values.nbytes)
    np.testing.assert_array_equal(out.get(), [1, 2, 0, 3])


def test_sparse_products_scatter_only_from_csc():
    host = sp.random(20, 6, density=0.4, format="csr", random_state=0, dtype=np.float64)
    W = emu.cupy.asfortranarray(emu.cupy.asarray(np.ones((6, 3))))
    for fmt, atomics in (("csr", 0), ("csc", host.nnz * 3)):
        X = getattr(emu.cupyx.scipy.sparse, f"{fmt}_matrix")(host.asformat(fmt))
        X.has_canonical_format  # noqa: B018  (the flag computed outside the count)
        with emu.count_costs() as log:
            X @ W
        assert (log.launches, log.atomics) == (1, atomics), fmt


def test_passes_over_x_and_what_is_derived_from_it():
    X = emu.cupy.asarray(np.ones((8, 5)))
    mu = emu.cupy.asarray(np.ones(5))
    with emu.count_costs(X) as log:
        centred = X - mu  # reads X: one pass; its result is X-sized
        emu.xp.sum(centred, axis=0)  # a second pass (over an X-sized array)
        emu.xp.sum(X[:4], axis=0)  # half a pass
        emu.xp.sum(mu)  # not X-sized
    assert log.x_reads == pytest.approx(2.5)
    assert log.x_writes == pytest.approx(1.0)
    assert log.bytes_of_X == X.nbytes and log.row_blocks == 1


def test_launches_are_attributed_to_phases():
    X, y = random_data("MultinomialNB", n=60, d=5, seed=2)
    Xd, yd = emu.cupy.asarray(X), emu.cupy.asarray(y)
    with emu.count_costs(Xd) as fit:
        model = nbgpu.MultinomialNB().fit(Xd, yd)
    with emu.count_costs(Xd) as predict:
        model.predict(Xd)
    for phase in ("validation", "labels", "sums", "finalize"):
        assert fit.by_phase[phase]["launches"] > 0, (phase, fit.as_dict())
    assert fit.by_phase["scores"]["launches"] == 0
    assert predict.by_phase["scores"]["launches"] > 0
    assert predict.by_phase["sums"]["launches"] == predict.by_phase["finalize"]["launches"] == 0
    assert sum(row["launches"] for row in fit.by_phase.values()) == fit.launches
    assert fit.by_phase["other"]["launches"] == 0 and predict.by_phase["other"]["launches"] == 0


def test_the_counter_leaves_nothing_behind():
    original = blocks.row_blocks
    with emu.count_costs():
        assert blocks.row_blocks is not original
    assert blocks.row_blocks is original
    assert emu._COSTS == []
