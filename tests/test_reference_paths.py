"""The switch between fast paths and their plain references (``nbgpu/_array/paths.py``).

Each test runs both sides in one process (``paths.all_fast()`` and
``paths.reference(...)``), so it checks the same whatever ``NBGPU_REFERENCE``
the suite runs under: the switch sends each fast path to its reference, the
fast kernel is then not called, and both give scikit-learn's results.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn import naive_bayes as sk

import nbgpu
from nbgpu._array import class_sums as cs
from nbgpu._array import paths, sparse, sparse_counts, sums

from conftest import subprocess_env


def counted(monkeypatch, module, name):
    """Count the calls of ``module.name`` (a list that grows by one per call)."""
    calls, original = [], getattr(module, name)

    def wrapper(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def wide_counts(n=300, d=4000, per_row=6, seed=0):
    """Text-like counts: a few stored values per row (a wide model's input)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=per_row / d, format="csr", random_state=seed,
                  data_rvs=lambda size: rng.integers(1, 4, size).astype(np.float64))
    return X, rng.integers(0, 5, n)


@pytest.fixture
def narrow(monkeypatch):
    """Sums of 64 entries and more are kept sparse (the real width is 2**22)."""
    monkeypatch.setattr(sparse_counts, "WIDE_ENTRIES", 64)


def test_environment_variable_is_read_at_import():
    code = "from nbgpu._array import paths; print(sorted(paths.reference_paths()))"
    for value, expected in (("1", sorted(paths.FAST_PATHS)), ("in_place_sums, few_columns", ["few_columns", "in_place_sums"]),
                            ("0", [])):
        env = subprocess_env(NBGPU_REFERENCE=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        assert out.strip() == str(expected)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="NBGPU_REFERENCE names unknown fast paths \\['no_such_path'\\]"):
        paths._parse("class_sums,no_such_path")
    with pytest.raises(KeyError, match="no_such_path"):
        paths.fast("no_such_path")


def test_reference_and_all_fast_nest_and_restore():
    before = paths.reference_paths()
    with paths.all_fast():
        assert all(paths.fast(name) for name in paths.FAST_PATHS)
        with paths.reference("few_columns"):
            assert not paths.fast("few_columns") and paths.fast("sparse_sums")
            with paths.reference():
                assert not any(paths.fast(name) for name in paths.FAST_PATHS)
            assert paths.fast("sparse_sums")
        assert paths.fast("few_columns")
    assert paths.reference_paths() == before


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_class_sums_switch(monkeypatch, fmt, power, weighted):
    X, codes = wide_counts(n=200, d=300, per_row=20)
    X = X.asformat(fmt)
    w = np.random.default_rng(1).uniform(0, 2, 200) if weighted else None
    product = counted(monkeypatch, cs, "_product_class_sums")
    by_class = counted(monkeypatch, cs, "_csr_class_sums")
    with paths.all_fast():
        fast = cs.class_sums(X, codes, w, 5, xp=np, dtype=np.float64, power=power)
    assert product == [] and len(by_class) == (fmt == "csr")
    with paths.reference("sparse_class_sums"):
        ref = cs.class_sums(X, codes, w, 5, xp=np, dtype=np.float64, power=power)
    assert product == ["_product_class_sums"] and len(by_class) == (fmt == "csr")
    dense = X.toarray() ** power * (1.0 if w is None else w[:, None])
    expected = np.stack([dense[codes == c].sum(axis=0) for c in range(5)])
    assert_allclose(fast, expected, rtol=1e-12)
    assert_allclose(ref, expected, rtol=1e-12)


def test_dense_class_sums_and_totals_switch(monkeypatch):
    rng = np.random.default_rng(2)
    X, codes, w = rng.random((500, 7)), rng.integers(0, 3, 500), rng.uniform(0, 2, 500)
    onehot = counted(monkeypatch, cs, "onehot")
    with paths.all_fast():
        fast = cs.class_sums(X, codes, w, 3, xp=np, dtype=np.float64), cs.class_totals(codes, w, 3, dtype=np.float64, xp=np)
    assert onehot == []
    with paths.reference("class_sums"):
        ref = cs.class_sums(X, codes, w, 3, xp=np, dtype=np.float64), cs.class_totals(codes, w, 3, dtype=np.float64, xp=np)
    assert len(onehot) == 2
    for got in (fast, ref):
        assert_allclose(got[0], np.stack([(X * w[:, None])[codes == c].sum(axis=0) for c in range(3)]), rtol=1e-12)
        assert_allclose(got[1], np.bincount(codes, weights=w), rtol=1e-12)


def test_category_counts_switch(monkeypatch):
    rng = np.random.default_rng(3)
    n_cat = np.array([3, 1, 4])
    X = np.stack([rng.integers(0, m, 400) for m in n_cat], axis=1).astype(np.float64)
    codes = rng.integers(0, 2, 400)
    offsets = np.concatenate([[0], np.cumsum(n_cat)])
    histogram = counted(monkeypatch, cs, "_histogram_category_counts")
    with paths.all_fast():
        fast = cs.category_counts(X, codes, None, offsets, 2, xp=np, dtype=np.float64)
    with paths.reference("category_counts"):
        ref = cs.category_counts(X, codes, None, offsets, 2, xp=np, dtype=np.float64)
    assert len(histogram) == 1
    onehot = np.concatenate([X[:, [j]] == np.arange(m) for j, m in enumerate(n_cat)], axis=1)
    expected = np.stack([onehot[codes == c].sum(axis=0) for c in range(2)])
    assert_allclose(fast, expected)
    assert_allclose(ref, expected)


def test_gathered_row_sums_switch(monkeypatch):
    rng = np.random.default_rng(4)
    table, index = rng.random((12, 3)), rng.integers(0, 12, (50, 4))
    product = counted(monkeypatch, sparse, "_onehot_product")
    with paths.all_fast():
        fast = sparse.gathered_row_sums(table, index, xp=np)
    with paths.reference("gathered_row_sums"):
        ref = sparse.gathered_row_sums(table, index, xp=np)
    assert len(product) == 1
    assert_allclose(fast, table[index].sum(axis=1), rtol=1e-12)
    assert_allclose(ref, table[index].sum(axis=1), rtol=1e-12)


def test_compact_columns_switch():
    X, _ = wide_counts(n=5, d=4000)
    with paths.all_fast():
        columns, Xc = sparse.compact_columns(X)
    assert columns.shape[0] < 40 and Xc.shape == (5, columns.shape[0])
    with paths.reference("few_columns"):
        all_columns, same = sparse.compact_columns(X)
    assert same is X and np.array_equal(all_columns, np.arange(4000))
    W = np.random.default_rng(5).random((4000, 3))
    assert_allclose(Xc @ W[columns], X @ W, rtol=1e-12)


@pytest.mark.parametrize("layout", ["unsorted", "duplicates", "empty rows"])
def test_row_views_switch(layout):
    """Fast: host CSR row blocks are views of X's arrays, equal to scipy's slices (unsorted
    indices and duplicate entries kept as they are); reference: scipy's slice, a copy."""
    X, y = wide_counts(n=40, d=30, per_row=5)
    if layout == "unsorted":
        X.indices = X.indices.copy()
        for i in range(X.shape[0]):
            X.indices[X.indptr[i] : X.indptr[i + 1]] = X.indices[X.indptr[i] : X.indptr[i + 1]][::-1]
        X.has_sorted_indices = False
    elif layout == "duplicates":  # each row's entries twice, kept as separate entries
        twice = [np.r_[a, a] for a in np.split(X.indices, X.indptr[1:-1])]
        X = sp.csr_matrix((np.concatenate([np.r_[a, a] for a in np.split(X.data, X.indptr[1:-1])]),
                           np.concatenate(twice), np.r_[0, np.cumsum([t.shape[0] for t in twice])]), shape=X.shape)
    else:
        X = sp.csr_matrix((sp.diags((np.arange(40) % 4 != 0).astype(float)) @ X))
    for start, stop in ((0, 40), (3, 17), (17, 17), (39, 40)):
        with paths.all_fast():
            view = sparse.row_slicer(X, host=True)(start, stop)
        with paths.reference("row_views"):
            copy = sparse.row_slicer(X, host=True)(start, stop)
        assert np.shares_memory(view.data, X.data) or view.nnz == 0
        assert not np.shares_memory(copy.data, X.data)
        for got in (view, copy):
            assert got.shape == (stop - start, 30) and got.format == "csr"
            np.testing.assert_array_equal(got.toarray(), X.toarray()[start:stop])
    model = nbgpu.MultinomialNB().fit(X, y)
    assert_allclose(model.predict_log_proba(X), sk.MultinomialNB().fit(X, y).predict_log_proba(X), rtol=1e-10, atol=1e-12)


def test_in_place_sums_switch():
    """Fast: a batch's sums are added into the running ones (the same array);
    reference: a new array each batch."""
    X, y = wide_counts(n=200, d=50, per_row=10)
    for reference, same in ((paths.all_fast(), True), (paths.reference("in_place_sums"), False)):
        with reference:
            model = nbgpu.MultinomialNB().partial_fit(X[:100], y[:100], classes=np.arange(5))
            before = model._stats["feature_count"]
            model.partial_fit(X[100:], y[100:])
            assert (model._stats["feature_count"] is before) is same
            expected = sk.MultinomialNB().fit(X, y)
            assert_allclose(model.predict_log_proba(X), expected.predict_log_proba(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB"])
def test_sparse_sums_switch(narrow, name):
    X, y = wide_counts()
    expected = getattr(sk, name)().fit(X, y)
    for reference, kept_sparse in ((paths.all_fast(), True), (paths.reference("sparse_sums"), False)):
        with reference:
            fitted = getattr(nbgpu, name)().fit(X, y)
            streamed = getattr(nbgpu, name)()
            for rows in np.array_split(np.arange(X.shape[0]), 3):
                streamed.partial_fit(X[rows], y[rows], classes=np.arange(5))
            for model in (fitted, streamed):
                assert sums.is_sparse(model._stats["feature_count"]) is kept_sparse
                assert_allclose(model.predict_log_proba(X[:7]), expected.predict_log_proba(X[:7]), rtol=1e-10, atol=1e-12)
                assert_allclose(model.feature_count_, expected.feature_count_, rtol=1e-12)


def _fitted_pairs(X, y):
    """Every count, categorical and Gaussian model with its scikit-learn counterpart."""
    counts = np.floor(X * 4)
    return [
        (nbgpu.MultinomialNB(), sk.MultinomialNB(), counts),
        (nbgpu.ComplementNB(), sk.ComplementNB(), counts),
        (nbgpu.BernoulliNB(binarize=1.0), sk.BernoulliNB(binarize=1.0), counts),
        (nbgpu.CategoricalNB(min_categories=4), sk.CategoricalNB(min_categories=4), counts),
        (nbgpu.GaussianNB(), sk.GaussianNB(), X),
    ]


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_every_model_agrees_with_sklearn_on_both_paths(monkeypatch, fmt):
    """Random data, weights, a fit then a partial_fit: fast and reference results equal scikit-learn's."""
    rng = np.random.default_rng(6)
    X = rng.random((240, 9)) * (rng.random((240, 9)) < 0.4)
    y, w = rng.integers(0, 3, 240), rng.uniform(0.5, 2, 240)
    kernels = {name: counted(monkeypatch, cs, name) for name in ("_csr_class_sums", "_histogram_category_counts")}
    results = {}
    for side, switch in (("fast", paths.all_fast()), ("reference", paths.reference())):
        with switch:
            for ours, theirs, data in _fitted_pairs(X, y):
                if fmt == "csr" and isinstance(ours, nbgpu.GaussianNB):
                    continue  # scikit-learn's GaussianNB takes no sparse input
                Z = sp.csr_matrix(data) if fmt == "csr" else data
                ours.fit(Z[:120], y[:120], sample_weight=w[:120]).partial_fit(Z[120:], y[120:], sample_weight=w[120:])
                theirs.fit(data, y, sample_weight=w)
                got = ours.predict_log_proba(Z)
                assert_allclose(got, theirs.predict_log_proba(data), rtol=1e-7, atol=1e-8, err_msg=f"{side} {ours!r}")
                results[side, type(ours).__name__] = got
        if side == "fast":
            assert any(kernels.values())  # the fast kernels ran...
            for calls in kernels.values():
                calls.clear()
    assert not any(kernels.values())  # ...and not on the reference paths
    for (side, name), got in results.items():
        if side == "reference":
            assert_allclose(got, results["fast", name], rtol=1e-9, atol=1e-9)


def test_ci_runs_the_suite_again_on_the_reference_paths():
    script = (Path(__file__).resolve().parent.parent / "ci" / "test.sh").read_text(encoding="utf-8")
    runs = [line.strip() for line in script.splitlines() if "python -m pytest" in line]
    assert runs == ['python -m pytest "${xdist[@]}" "$@"',
                    'NBGPU_REFERENCE=1 python -m pytest "${xdist[@]}" "$@" || status=$?']
    assert "set +e\npython -m pytest \"${xdist[@]}\" \"$@\"\nstatus=$?\n" in script
    assert script.rstrip().endswith('exit "$status"')  # a failure of either run fails CI
