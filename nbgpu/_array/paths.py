"""The one switch between the fast paths and their plain references.

Every specialised kernel (a fast path) sits beside a plain Array API
reference that computes the same values: one-hot products ``Yᵀ·X`` for
per-class sums, new arrays instead of in-place additions, dense statistics,
whole weights. ``NBGPU_REFERENCE`` (read once, at import) sends the named
fast paths to their references: ``1`` or ``all`` every one, or names
separated by commas (``NBGPU_REFERENCE=in_place_sums,sparse_sums``). CI runs
the suite once so, on the CPU; ``benchmarks/fast_paths.py`` measures what
each fast path buys against its reference.

A kernel asks :func:`fast` once per call, never inside its loops.
"""

from __future__ import annotations

import contextlib
import os

# name: where the fast path lives and what its reference does instead.
FAST_PATHS = {
    "class_sums": "class_sums.class_sums/class_totals on the host: a sparse one-hot Y and bincount "
    "(reference: the dense one-hot product Yᵀ·X)",
    "sparse_class_sums": "class_sums.class_sums of sparse X: class-ordered scatters on all cores, "
    "X's transpose as CSR times Y on a device (reference: the sparse product (Xᵀ·Y)ᵀ); "
    "class_sums.summed_entries of whole counts: keys and counts packed and sorted, no order kept "
    "(reference: keys and positions sorted, each key's values added in order)",
    "category_counts": "class_sums.category_counts of dense X: a histogram of keys "
    "(reference: the one-hot product Yᵀ·OneHot(X))",
    "in_place_sums": "class_sums.add_class_sums_into: a batch's sums added into the running ones "
    "(reference: a new array, the merge)",
    "sparse_sums": "sparse_counts: per-class sums of wide models kept sparse (reference: dense)",
    "few_columns": "sparse.compact_columns: a sparse X scored on the columns it uses; --model auto's "
    "held-out rows scored from the per-class sums of their columns (reference: every column)",
    "gathered_row_sums": "sparse.gathered_row_sums: a sparse product with OneHot(index) "
    "(reference: a gather and a sum)",
    "lazy_parameters": "_estimator/base.py: parameters derived at their first read after partial_fit "
    "(reference: derived when the statistics change)",
    "deferred_checks": "_validation.checks_together: a device scoring's checks of X's values as the fewest "
    "reductions (finite and >= 0: one max over the bits), read back at once (reference: each check reads back)",
    "row_views": "sparse.row_slicer: a host CSR matrix's row blocks as views of its arrays "
    "(reference: scipy's row slice, a copy)",
    "shifted_moments": "sums.shifted_class_moments: a dense device batch's class means and M2 from the sums of "
    "x − (a row of its class) and of its square (outer products: NormalBayesClassifier), X cast by the subtraction "
    "(reference: the class sums of X cast, then those of the residuals of the mean)",
    "finite_by_sum": "_validation.check_finite: one sum of X's values, finite when they all are (the exact check "
    "only when it is not) (reference: isfinite of every value, then all)",
    "parallel_deflate": "model_archive.write_archive: each member deflated in pieces on all cores, the zip records "
    "written by nbgpu (reference: zipfile's writer, one stream per member on one thread)",
}


def _parse(value):
    value = value.strip()
    if value in ("", "0"):
        return frozenset()
    if value in ("1", "all"):
        return frozenset(FAST_PATHS)
    names = frozenset(name.strip() for name in value.split(",") if name.strip())
    unknown = sorted(names - FAST_PATHS.keys())
    if unknown:
        msg = f"NBGPU_REFERENCE names unknown fast paths {unknown}; known: 1, all or some of {sorted(FAST_PATHS)}."
        raise ValueError(msg)
    return names


_REFERENCE = _parse(os.environ.get("NBGPU_REFERENCE", ""))


def fast(name) -> bool:
    """Whether fast path ``name`` (a key of :data:`FAST_PATHS`) runs, not its reference."""
    if name not in FAST_PATHS:
        msg = f"`name` must be one of {sorted(FAST_PATHS)}; got {name!r}."
        raise KeyError(msg)
    return name not in _REFERENCE


def reference_paths():
    """The fast paths that run their references now (a frozenset of names)."""
    return _REFERENCE


@contextlib.contextmanager
def reference(*names):
    """A context in which fast paths ``names`` (all without names) run their
    references: for tests and benchmarks, which compare both in one process.
    It sets a process-wide switch: not for concurrent use with other threads."""
    with _switched(_REFERENCE | (_parse(",".join(names)) if names else frozenset(FAST_PATHS))):
        yield


@contextlib.contextmanager
def all_fast():
    """A context in which every fast path runs (whatever ``NBGPU_REFERENCE`` says)."""
    with _switched(frozenset()):
        yield


@contextlib.contextmanager
def _switched(names):
    global _REFERENCE
    previous, _REFERENCE = _REFERENCE, names
    try:
        yield
    finally:
        _REFERENCE = previous
