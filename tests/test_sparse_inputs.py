"""Sparse inputs as they come: unsorted indices, duplicate entries, integer
values, int32/int64 index arrays, ``*_matrix`` and ``*_array`` classes.

Every model gives the result of the canonical float64 CSR matrix on each of
them, never changes its input (values, index arrays, format flags), and
refuses a matrix whose index structure scipy's kernels would read out of
bounds with a ValueError that names ``X``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from _data import ATTRIBUTES, MODELS, PREDICT_METHODS, assert_models_equal, ours, random_data

ALL_MODELS = (*MODELS, "PoissonNB")
LINEAR_MODELS = ("MultinomialNB", "ComplementNB")


def _data(name, n=60, d=9, seed=3):
    """Whole-numbered data for ``name`` (so integer dtypes hold it exactly)."""
    X, y = random_data(name, n=n, d=d, k=3, seed=seed)
    if name == "GaussianNB":
        X = np.round(X * 3)
        X[np.random.default_rng(seed).uniform(size=X.shape) < 0.5] = 0.0
    return X, y


def _assert_same_model(a, b, name, *, rtol):
    if name in ATTRIBUTES:
        assert_models_equal(a, b, name, rtol=rtol)
        return
    for attr in ("class_count_", "feature_count_"):
        np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), rtol=rtol, err_msg=attr)
    X, _ = random_data(name, n=30, d=a.n_features_in_, k=3, seed=99)
    for method in PREDICT_METHODS:
        np.testing.assert_allclose(getattr(a, method)(X), getattr(b, method)(X), rtol=1e-10, atol=1e-12, err_msg=method)


def _shuffled_rows(X, rng):
    """CSR ``X`` with the stored values of every row in a random order."""
    X = sp.csr_matrix(X)
    order = np.concatenate([lo + rng.permutation(hi - lo) for lo, hi in zip(X.indptr[:-1], X.indptr[1:])])
    return sp.csr_matrix((X.data[order], X.indices[order], X.indptr.copy()), shape=X.shape)


def _split_duplicates(X, rng):
    """CSR ``X`` with every value stored as two entries (in random order
    within each row) whose sum is the value: parts of different signs, so
    binarizing or squaring a part gives the wrong answer."""
    X = sp.csr_matrix(X)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    part = X.data + rng.integers(1, 3, size=X.nnz)  # whole numbers: int dtypes hold them
    rows = np.concatenate([rows, rows])
    cols = np.concatenate([X.indices, X.indices])
    data = np.concatenate([part, X.data - part])
    order = np.lexsort((rng.uniform(size=rows.shape[0]), rows))
    indptr = np.searchsorted(rows[order], np.arange(X.shape[0] + 1))
    return sp.csr_matrix((data[order], cols[order], indptr), shape=X.shape)


def _variant(X, kind, rng):
    """``X`` (dense float64) as the sparse input ``kind``."""
    if kind == "unsorted":
        out = _shuffled_rows(X, rng)
        assert not out.has_sorted_indices
        return out
    if kind == "duplicates":
        out = _split_duplicates(X, rng)
        assert not out.has_canonical_format
        return out
    if kind in ("int64", "int32"):
        return _shuffled_rows(X, rng).astype(kind)
    if kind == "int64_indices":
        out = _shuffled_rows(X, rng)
        out.indices = out.indices.astype(np.int64)
        out.indptr = out.indptr.astype(np.int64)
        return out
    if kind == "csr_array":
        return sp.csr_array(_shuffled_rows(X, rng))
    if kind == "csc_unsorted":
        out = sp.csc_matrix(X)
        order = np.concatenate([lo + rng.permutation(hi - lo) for lo, hi in zip(out.indptr[:-1], out.indptr[1:])])
        return sp.csc_matrix((out.data[order], out.indices[order], out.indptr.copy()), shape=X.shape)
    if kind == "csc_array_int32":
        return sp.csc_array(X).astype(np.int32)
    if kind == "coo_duplicates":
        csr = _split_duplicates(X, rng)
        coo = csr.tocoo()
        return sp.coo_matrix((coo.data, (coo.row, coo.col)), shape=X.shape)
    raise AssertionError(kind)


KINDS = (
    "unsorted",
    "duplicates",
    "int64",
    "int32",
    "int64_indices",
    "csr_array",
    "csc_unsorted",
    "csc_array_int32",
    "coo_duplicates",
)


def _snapshot(X):
    """Everything of ``X`` that a fit or a prediction must leave alone."""
    arrays = (X.data, X.row, X.col) if X.format == "coo" else (X.data, X.indices, X.indptr)
    flags = () if X.format == "coo" else (X.has_sorted_indices, X.has_canonical_format)
    return type(X), X.shape, [(a.dtype, a.copy()) for a in arrays], flags


def _assert_unchanged(X, before):
    after = _snapshot(X)
    assert after[:2] == before[:2]
    for (dt_a, a), (dt_b, b) in zip(after[2], before[2]):
        assert dt_a == dt_b
        np.testing.assert_array_equal(a, b)
    assert after[3] == before[3]


def _read_only(X):
    """Freeze the arrays of ``X``: a write into them raises."""
    arrays = (X.data, X.row, X.col) if X.format == "coo" else (X.data, X.indices, X.indptr)
    for a in arrays:
        a.flags.writeable = False
    return X


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ALL_MODELS)
def test_input_as_it_comes_equals_canonical_float64(name, kind):
    X, y = _data(name)
    rng = np.random.default_rng(0)
    Xv = _read_only(_variant(X, kind, rng))
    np.testing.assert_array_equal(Xv.toarray(), X)
    before = _snapshot(Xv)

    ref = ours(name).fit(sp.csr_matrix(X), y)
    model = ours(name).fit(Xv, y)
    _assert_unchanged(Xv, before)
    _assert_same_model(model, ref, name, rtol=1e-10)
    for method in PREDICT_METHODS:
        got = getattr(model, method)(Xv)
        assert got.dtype == np.float64, method
        np.testing.assert_allclose(got, getattr(ref, method)(sp.csr_matrix(X)), rtol=1e-10, atol=1e-10, err_msg=method)
    np.testing.assert_array_equal(model.predict(Xv), ref.predict(sp.csr_matrix(X)))
    # Streaming sees the same rows: two halves give the same model.
    half = X.shape[0] // 2
    rows = sp.csr_matrix(Xv) if Xv.format == "coo" else Xv
    streamed = ours(name).partial_fit(rows[:half], y[:half], classes=np.unique(y)).partial_fit(rows[half:], y[half:])
    _assert_same_model(streamed, ref, name, rtol=1e-10)
    _assert_unchanged(Xv, before)


@pytest.mark.parametrize("kind", ["unsorted", "duplicates", "int64", "csc_unsorted"])
@pytest.mark.parametrize("name", ALL_MODELS)
def test_float32_input_as_it_comes(name, kind):
    X, y = _data(name)
    Xv = _variant(X, kind, np.random.default_rng(1))
    X32 = Xv.astype(np.float32) if not kind.startswith("int") else Xv
    model = ours(name).fit(X32, y)
    ref = ours(name).fit(sp.csr_matrix(X.astype(X32.dtype)), y)
    _assert_same_model(model, ref, name, rtol=1e-5)
    np.testing.assert_array_equal(model.predict(X32), ref.predict(sp.csr_matrix(X.astype(X32.dtype))))


@pytest.mark.parametrize("name", LINEAR_MODELS)
def test_linear_models_take_sparse_input_without_a_copy(name, monkeypatch):
    """Unsorted int64 counts: the matrix reaches the kernels as it is (no
    sorted, summed or float64 copy of it is made)."""
    X, y = _data(name)
    Xv = _read_only(_variant(X, "int64", np.random.default_rng(2)))
    seen = []
    model = ours(name)
    original = type(model)._accumulate

    def spy(self, Xt, *args, **kwargs):
        seen.append(Xt)
        return original(self, Xt, *args, **kwargs)

    monkeypatch.setattr(type(model), "_accumulate", spy)
    model.fit(Xv, y)
    assert seen[0] is Xv


@pytest.mark.parametrize(
    ("fmt", "break_it", "message"),
    [
        ("csr", lambda X: X.indices.__setitem__(0, 10**9), r"column indices must lie in \[0, 9\)"),
        ("csr", lambda X: X.indices.__setitem__(3, -1), r"column indices must lie in \[0, 9\)"),
        ("csc", lambda X: X.indices.__setitem__(0, 10**9), r"row indices must lie in \[0, 60\)"),
        ("csr", lambda X: X.indptr.__setitem__(5, X.indptr[7]), "indptr must be non-decreasing"),
    ],
)
@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB", "GaussianNB"])
def test_broken_index_structure_is_refused(name, fmt, break_it, message):
    X, y = _data(name)
    good = sp.csr_matrix(X).asformat(fmt)
    model = ours(name).fit(good, y)
    bad = good.copy()
    break_it(bad)
    with pytest.raises(ValueError, match=rf"`X` is not a valid {fmt.upper()} matrix: {message}"):
        ours(name).fit(bad, y)
    with pytest.raises(ValueError, match=message):
        model.predict(bad)
    # The failed calls changed nothing.
    np.testing.assert_array_equal(model.predict(good), ours(name).fit(good, y).predict(good))


def test_broken_coo_coordinates_are_refused():
    X, y = _data("MultinomialNB")
    coo = sp.coo_matrix(X)
    coo.col[2] = 10**9
    with pytest.raises(ValueError, match=r"`X` is not a valid COO matrix: its column indices must lie in \[0, 9\)"):
        ours("MultinomialNB").fit(coo, y)


def test_negative_and_non_finite_counts_are_found_in_one_pass_or_reported():
    """The one-pass check of counts lets -0.0 through and leaves every real
    problem to the usual messages."""
    X, y = _data("MultinomialNB")
    model = ours("MultinomialNB").fit(sp.csr_matrix(X), y)
    Xz = sp.csr_matrix(X)
    Xz.data[0] = -0.0
    np.testing.assert_array_equal(model.predict(Xz), model.predict(sp.csr_matrix(X)))
    for value, message in ((-1.0, "Negative values"), (np.nan, "contains NaN"), (np.inf, "contains infinity")):
        for dtype in (np.float32, np.float64):
            bad = sp.csr_matrix(X).astype(dtype)
            bad.data[5] = value
            with pytest.raises(ValueError, match=message):
                model.predict(bad)
            with pytest.raises(ValueError, match=message):
                ours("MultinomialNB").fit(bad, y)
    bad = sp.csr_matrix(X).astype(np.int64)
    bad.data[1] = -3
    with pytest.raises(ValueError, match="Negative values"):
        model.predict(bad)


@pytest.mark.parametrize("kind", ["unsorted", "duplicates", "int64", "int32", "int64_indices", "csr_array"])
@pytest.mark.parametrize("name", ["MultinomialNB", "BernoulliNB", "PoissonNB"])
def test_products_in_parallel_parts(name, kind, monkeypatch):
    """The threaded CSR product (row ranges written into one output) on
    inputs as they come: every part's share, integer parts converted."""
    from nbgpu._array import blocks

    X, y = _data(name, n=120)
    ref = ours(name).fit(sp.csr_matrix(X), y)
    refs = [ref.predict_joint_log_proba(sp.csr_matrix(X.astype(dt))) for dt in (np.float64, np.float32)]
    # Now every product takes the threaded path.
    monkeypatch.setattr(blocks, "PARALLEL_NNZ", 1)
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    Xv = _read_only(_variant(X, kind, np.random.default_rng(5)))
    model = ours(name).fit(Xv, y)
    for Xin, want, rtol in ((Xv, refs[0], 1e-12), (Xv.astype(np.float32), refs[1], 1e-5)):
        np.testing.assert_allclose(model.predict_joint_log_proba(Xin), want, rtol=rtol)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("name", MODELS)
def test_a_matrix_with_no_stored_values_fits_as_zeros_do(name, fmt):
    # A CSC matrix without stored values crashed the host scatter of the class sums.
    y = np.array([0, 1, 0, 1, 1])
    X = sp.csr_matrix((5, 3)).asformat(fmt)
    assert_models_equal(ours(name).fit(X, y), ours(name).fit(np.zeros((5, 3)), y), name)
