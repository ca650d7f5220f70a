"""Per-class feature sums kept sparse (``nbgpu/_array/sparse_counts.py``).

Wide MultinomialNB / ComplementNB models fitted on sparse input keep their
``feature_count`` statistics as a sparse array. Everything they do must be
what the dense statistics do: scikit-learn's attributes and scores, merges,
streaming, files, moves to other namespaces. The tests lower the width at
which sums are kept sparse so small data takes that path; one test runs at
the real threshold.
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import naive_bayes as sk

import nbgpu
from nbgpu._array import sparse_counts, sums
from nbgpu._array.class_sums import class_sums, csr_class_entries, summed_entries
from nbgpu._array.sparse import compact_columns

# What the sums kept sparse and the scoring of few columns do themselves.
pytestmark = pytest.mark.fast_path("sparse_sums", "few_columns")

MODELS = [("MultinomialNB", {}), ("ComplementNB", {}), ("ComplementNB", {"norm": True}), ("MultinomialNB", {"alpha": 0.3})]


@pytest.fixture
def narrow(monkeypatch):
    """Sums of 64 entries and more are kept sparse (the real threshold is 2**22)."""
    monkeypatch.setattr(sparse_counts, "WIDE_ENTRIES", 64)


def text_like(n=300, d=4000, k=5, seed=0, per_row=6, dtype=np.float64):
    """Counts in a few columns per row, unsorted indices and repeated columns
    (as a hashing vectorizer's output before summing duplicates)."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, d, n * per_row).astype(np.int32)
    data = rng.integers(1, 4, n * per_row).astype(dtype)
    X = sp.csr_matrix((data, indices, np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    y = np.array([f"c{c}" for c in rng.integers(0, k, n)])
    return X, y


def canonical(a):
    """Whether compressed ``a`` is canonical, checked from its arrays (not the flag nbgpu sets)."""
    minor = a.shape[0] if a.format == "csc" else a.shape[1]
    keys = np.repeat(np.arange(len(a.indptr) - 1, dtype=np.int64), np.diff(a.indptr)) * minor + a.indices
    return bool(np.all(np.diff(keys) > 0))


def is_kept_sparse(model):
    return sums.is_sparse(model._stats["feature_count"])


@pytest.mark.parametrize(("name", "params"), MODELS)
def test_streamed_model_keeps_sparse_sums_and_matches_sklearn(narrow, name, params):
    X, y = text_like()
    w = np.random.default_rng(1).random(X.shape[0]) + 0.5
    ref = getattr(sk, name)(**params).fit(X, y, sample_weight=w)
    model = getattr(nbgpu, name)(**params)
    for rows in np.array_split(np.arange(X.shape[0]), 3):
        model.partial_fit(X[rows], y[rows], classes=np.unique(y), sample_weight=w[rows])
    assert is_kept_sparse(model)
    assert isinstance(model.feature_count_, np.ndarray)
    assert_allclose(model.feature_count_, ref.feature_count_, rtol=1e-13)
    assert_allclose(model.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12)
    assert_allclose(model.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-10, atol=1e-10)
    assert_array_equal(model.predict(X), ref.predict(X))
    if name == "ComplementNB":
        assert_allclose(model.feature_all_, ref.feature_all_, rtol=1e-13)


@pytest.mark.parametrize(("name", "params"), MODELS)
def test_sparse_sums_score_as_dense_sums(narrow, name, params):
    """The same statistics, sparse or dense, give the same scores (the
    columns of a batch, or the whole layout for dense input)."""
    X, y = text_like(seed=2)
    sparse_model = getattr(nbgpu, name)(**params).partial_fit(X, y, classes=np.unique(y))
    assert is_kept_sparse(sparse_model)
    dense_model = getattr(nbgpu, name)(**params)._become_fitted(
        {**sparse_model._stats, "feature_count": sums.dense(sparse_model._stats["feature_count"])},
        sparse_model.classes_, n_features=X.shape[1], feature_names=None, score_dtype="float64", lazy=True,
    )
    Xt, _ = text_like(n=50, seed=3)
    assert_allclose(sparse_model.predict_joint_log_proba(Xt), dense_model.predict_joint_log_proba(Xt), rtol=1e-12)
    assert_allclose(sparse_model.predict_proba(Xt.toarray()), dense_model.predict_proba(Xt.toarray()), rtol=1e-10)


def test_fit_gives_sklearn_attributes_with_sparse_sums(narrow):
    X, y = text_like(seed=4)
    model = nbgpu.MultinomialNB().fit(X, y)
    assert is_kept_sparse(model)
    ref = sk.MultinomialNB().fit(X, y)
    assert_array_equal(model.feature_count_, ref.feature_count_)
    assert_allclose(model.feature_log_prob_, ref.feature_log_prob_, rtol=1e-13)
    assert_allclose(model.chi2_scores()[0], nbgpu.chi2(X, y)[0], rtol=1e-12)


def test_sums_become_dense_when_no_longer_sparse(narrow):
    """Sparse while at most one entry in SPARSE_FRACTION is stored; then dense."""
    X, y = text_like(n=40, d=300, k=2, per_row=3)
    model = nbgpu.MultinomialNB().partial_fit(X[:4], y[:4], classes=np.unique(y))
    assert is_kept_sparse(model)
    model.partial_fit(X[4:], y[4:])
    assert not is_kept_sparse(model)
    assert_array_equal(model.feature_count_, sk.MultinomialNB().fit(X, y).feature_count_)


def test_models_that_keep_dense_sums(narrow):
    """Only the linear count models keep sparse sums (not BernoulliNB,
    whose weights are not made from the counts alone), of sparse input."""
    X, y = text_like()
    assert not is_kept_sparse(nbgpu.BernoulliNB().partial_fit(X, y, classes=np.unique(y)))
    assert not is_kept_sparse(nbgpu.PoissonNB().partial_fit(X, y, classes=np.unique(y)))
    assert not is_kept_sparse(nbgpu.MultinomialNB().partial_fit(X.toarray(), y, classes=np.unique(y)))


def test_real_threshold():
    """At the real width (k × d of at least 2**22) hashed-text input keeps sparse sums."""
    X, y = text_like(n=200, d=2**20, k=4, per_row=20)
    model = nbgpu.ComplementNB().partial_fit(X, y, classes=np.unique(y))
    assert is_kept_sparse(model)
    narrow_model = nbgpu.ComplementNB().partial_fit(X[:, : 2**10], y, classes=np.unique(y))
    assert not is_kept_sparse(narrow_model)
    ref = sk.ComplementNB().fit(X, y)
    assert_allclose(model.predict_log_proba(X[:20]), ref.predict_log_proba(X[:20]), rtol=1e-10, atol=1e-12)


def test_merge_with_new_classes_keeps_sparse(narrow):
    X, y = text_like(seed=5)
    first, second = np.arange(150), np.arange(150, 300)
    y = y.copy()
    y[first] = np.where(y[first] == "c4", "c0", y[first])  # c4 only in the second part
    a = nbgpu.MultinomialNB().partial_fit(X[first], y[first], classes=np.unique(y[first]))
    b = nbgpu.MultinomialNB().partial_fit(X[second], y[second], classes=np.unique(y[second]))
    merged = a.merge(b)
    assert is_kept_sparse(merged)
    ref = sk.MultinomialNB().fit(X, y)
    assert_array_equal(merged.classes_, ref.classes_)
    assert_array_equal(merged.feature_count_, ref.feature_count_)
    dense = nbgpu.MultinomialNB().fit(X[first].toarray(), y[first])
    assert not is_kept_sparse(dense)
    assert_array_equal(dense.merge(b).feature_count_, ref.feature_count_)  # dense with sparse


def test_model_file_round_trip(narrow, tmp_path):
    X, y = text_like(seed=6)
    model = nbgpu.ComplementNB().partial_fit(X, y, classes=np.unique(y))
    nbgpu.save(model, tmp_path / "sparse.nbgpu")
    loaded = nbgpu.load(tmp_path / "sparse.nbgpu")
    assert is_kept_sparse(loaded)
    assert_array_equal(loaded.feature_count_, model.feature_count_)
    assert_array_equal(loaded.predict_joint_log_proba(X), model.predict_joint_log_proba(X))
    # The file holds what a model with the same statistics dense writes.
    dense = nbgpu.ComplementNB()._become_fitted(
        {**model._stats, "feature_count": model.feature_count_}, model.classes_,
        n_features=X.shape[1], feature_names=None, score_dtype="float64", lazy=True,
    )
    nbgpu.save(dense, tmp_path / "dense.nbgpu")
    with np.load(tmp_path / "sparse.nbgpu") as a, np.load(tmp_path / "dense.nbgpu") as b:
        assert sorted(a.files) == sorted(b.files)
        for key in a.files:
            if key != "header":
                assert_array_equal(a[key], b[key])
    loaded.partial_fit(X[:10], y[:10])  # a loaded model goes on learning, as the model would
    model.partial_fit(X[:10], y[:10])
    assert_array_equal(loaded.feature_count_, model.feature_count_)


@pytest.mark.parametrize("bad", [np.nan, -1.0, np.inf])
def test_model_file_with_bad_sparse_values_is_refused(narrow, tmp_path, bad):
    from model_file_edits import header, listed, members, write

    X, y = text_like(seed=7)
    path = tmp_path / "m.nbgpu"
    nbgpu.save(nbgpu.MultinomialNB().partial_fit(X, y, classes=np.unique(y)), path)
    found = members(path)
    head = header(found)
    values = found["stats.feature_count.values"].copy()
    values[3] = bad
    found["stats.feature_count.values"] = values
    head["arrays"]["stats.feature_count.values"] = listed(values)
    write(path, found, head)
    with pytest.raises(ValueError, match="feature_count"):
        nbgpu.load(path)


@pytest.mark.parametrize("target", ["array_api_strict", "torch"])
def test_moved_models_have_dense_sums(narrow, target):
    xp = pytest.importorskip("array_api_strict" if target == "array_api_strict" else "torch")
    X, y = text_like(seed=8)
    model = nbgpu.MultinomialNB().partial_fit(X, y, classes=np.unique(y))
    expected = model.predict_proba(X[:20].toarray())
    like = xp.asarray(np.zeros(1))
    model.to_device(like)
    assert not sums.is_sparse(model._stats["feature_count"])
    got = model.predict_proba(xp.asarray(X[:20].toarray()))
    assert_allclose(np.asarray(got.cpu() if target == "torch" else got), expected, rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_class_entries_equal_dense_sums(weighted):
    X, y = text_like(n=500, d=300, k=7, seed=9, dtype=np.int64)
    codes = np.unique(y, return_inverse=True)[1]
    codes[codes == 3] = 2  # an empty class
    w = np.random.default_rng(0).random(500) if weighted else None
    keys, values = csr_class_entries(X, codes, w, 7)
    assert keys.dtype == np.int64 and values.dtype == np.float64
    assert np.all(np.diff(keys) > 0)  # ascending, unique
    got = sparse_counts.from_column_keys(keys, values, (7, 300))
    assert got.format == "csc" and got.has_canonical_format and canonical(got)
    assert_allclose(got.toarray(), class_sums(X, codes, w, 7, xp=np, dtype=np.float64), rtol=1e-14)
    assert not got.toarray()[3].any()


def test_class_entries_of_a_row_slice_and_of_no_rows():
    X, y = text_like(n=40, d=100, k=3, seed=4)
    codes = np.unique(y, return_inverse=True)[1]
    keys, values = csr_class_entries(X[5:9], codes[5:9], None, 3)
    dense = sparse_counts.from_column_keys(keys, values, (3, 100)).toarray()
    assert_allclose(dense, class_sums(X[5:9], codes[5:9], None, 3, xp=np, dtype=np.float64))
    keys, values = csr_class_entries(X[:0], codes[:0], None, 3)
    assert keys.shape == values.shape == (0,)


def test_logged_entries_fold_into_the_same_sums(monkeypatch):
    """Entries added in many small batches (kept in the log, folded when it
    grows and before any read) give the sums of one batch."""
    monkeypatch.setattr(sparse_counts, "LOG_ENTRIES", 50)
    X, y = text_like(n=400, d=500, k=4, seed=11)
    codes = np.unique(y, return_inverse=True)[1]
    counts = sparse_counts.SparseCounts.empty((4, 500))
    folds = 0
    for a in range(0, 400, 7):
        counts.add(*csr_class_entries(X[a : a + 7], codes[a : a + 7], None, 4))
        folds += counts.folded
    assert folds > 3  # the log was folded on the way, not only at the end
    assert_allclose(sums.dense(counts), class_sums(X, codes, None, 4, xp=np, dtype=np.float64), rtol=1e-14)
    assert counts.folded and counts.csc.has_canonical_format and canonical(counts.csc)


@pytest.mark.parametrize("scale", [1, 60], ids=["full buffers", "growing buffers"])
@pytest.mark.parametrize("wide", [False, True], ids=["uint32 keys", "int64 keys"])
def test_log_keeps_entries_in_order(monkeypatch, wide, scale):
    """Batches large and small (kept as they are, or copied into buffers
    that grow and fill up) come out of the log in the order they were added,
    so a fold sums each key's values in that order."""
    monkeypatch.setattr(sparse_counts, "LOG_PART", 40 * scale)
    rng = np.random.default_rng(5)
    log = sparse_counts._Log()
    batches = []
    for n in [3 * scale, 50 * scale, 1, 39 * scale, 2, 40 * scale, 0, 17 * scale, 17 * scale, 17 * scale, 100, 5] + [scale] * 60:
        batch = rng.integers(0, 30, n) * (2**33 if wide else 1), rng.random(n)
        batches.append(batch)
        log.append(*batch)
    keys, values = log.entries((2**31, 2**4) if wide else (3, 10))
    assert keys.dtype == (np.int64 if wide else np.uint32)
    assert_array_equal(keys, np.concatenate([k for k, _ in batches]))
    assert_array_equal(values, np.concatenate([v for _, v in batches]))
    big = rng.integers(0, 30, 40 * scale), rng.random(40 * scale)
    one = sparse_counts._Log()
    one.append(*big)
    assert all(a is b for a, b in zip(one.entries((3, 10)), big))  # one batch: not copied


@pytest.mark.parametrize("top", [2**20, 2**40])  # keys packed with their positions, or argsorted
def test_summed_entries_sum_equal_keys_in_their_order(top):
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 50, 5000) * (top // 50)
    values = rng.random(5000)
    got_keys, got_values = summed_entries(keys, values)
    want_keys = np.unique(keys)
    assert_array_equal(got_keys, want_keys)
    assert got_keys.dtype == keys.dtype
    want = [functools.reduce(operator.add, values[keys == k]) for k in want_keys]  # in the order given
    assert_array_equal(got_values, want)
    # sums in order: (1e16 + 1) - 1e16 is 0.0, not the 1.0 of another order
    k, v = summed_entries(np.array([7, 5, 5, 5], dtype=np.uint32), np.array([2.0, 1e16, 1.0, -1e16]))
    assert_array_equal(k, [5, 7])
    assert_array_equal(v, [0.0, 2.0])


def test_column_totals_add_the_classes_in_order(narrow, tmp_path):
    """``feature_all_`` of sparse sums adds the classes one after another."""
    X, y = text_like(n=2000, d=200, k=100, seed=5, per_row=1)  # about 10 classes per column
    w = np.random.default_rng(1).random(2000)
    model = nbgpu.ComplementNB().fit(X, y, sample_weight=w)
    assert is_kept_sparse(model)
    in_order = functools.reduce(operator.add, sums.dense(model._stats["feature_count"]))
    assert_array_equal(model.feature_all_, in_order)
    nbgpu.save(model, tmp_path / "m.nbgpu")  # loaded: made from the stored entries
    loaded = nbgpu.load(tmp_path / "m.nbgpu")
    assert is_kept_sparse(loaded)
    assert_array_equal(loaded.feature_all_, in_order)


def test_an_overflowing_add_changes_nothing():
    counts = sparse_counts.SparseCounts.empty((2, 10))
    assert counts.add(np.array([3]), np.array([1e308]))
    assert not counts.add(np.array([3]), np.array([1e308]))
    assert_allclose(sums.dense(counts)[1, 1], 1e308)
    # values that add up past float64 into different sums are no overflow
    assert counts.add(np.array([2, 5]), np.array([1e308, 1e308]))
    assert_allclose(sums.dense(counts), [[0, 1e308] + [0] * 8, [0, 1e308, 1e308] + [0] * 7])


def test_huge_values_in_different_sums_are_counted(narrow):
    """Values whose total overflows float64 but whose per-class sums do not:
    scikit-learn's counts (the sparse sums once dropped such a batch)."""
    X, y = text_like(n=200, d=4000, k=4, seed=7)
    X = X.tolil()
    X[0, 5], X[1, 5] = 1e308, 1e308
    X = X.tocsr()
    y[0], y[1] = "c0", "c1"
    expected = sk.MultinomialNB().fit(X, y)
    model = nbgpu.MultinomialNB().fit(X, y)
    assert is_kept_sparse(model)
    assert_allclose(model.feature_count_, expected.feature_count_, rtol=1e-13)
    streamed = nbgpu.MultinomialNB().partial_fit(X[:100], y[:100], classes=np.unique(y))
    streamed.partial_fit(X[100:], y[100:])
    assert_allclose(streamed.feature_count_, expected.feature_count_, rtol=1e-13)
    y[1] = "c0"  # now one sum overflows: refused, the model unchanged
    with pytest.raises(ValueError, match="overflow float64"):
        nbgpu.MultinomialNB().fit(X, y)
    before = streamed.feature_count_.copy()
    with pytest.raises(ValueError, match="overflow float64"):
        streamed.partial_fit(X, y)
    assert_array_equal(streamed.feature_count_, before)


def test_sparse_counts_pickle_with_their_log(narrow):
    import pickle

    X, y = text_like(seed=12)
    model = nbgpu.MultinomialNB().partial_fit(X[:100], y[:100], classes=np.unique(y))
    model.partial_fit(X[100:], y[100:])
    assert not model._stats["feature_count"].folded
    back = pickle.loads(pickle.dumps(model))
    assert_allclose(back.predict_proba(X), model.predict_proba(X), rtol=1e-13)


def test_stored_entries_round_trip():
    rng = np.random.default_rng(0)
    a = sp.random_array((6, 50), density=0.1, format="csc", random_state=rng)
    a.data[0] = 0.0  # an explicit zero is not an entry
    indices, values = sparse_counts.stored_entries(sparse_counts.SparseCounts(a), np.dtype("<u4"))
    assert np.all(np.diff(indices.astype(np.int64)) > 0)
    assert_array_equal(np.flatnonzero(a.toarray()), indices)
    back = sparse_counts.from_entries(indices, values, a.shape).csc
    assert back.format == "csc" and back.has_canonical_format and canonical(back)
    assert_array_equal(back.toarray(), a.toarray())


@pytest.mark.parametrize("d", [1000, 2**20], ids=["mask", "sort"])
def test_compact_columns(d):
    X, _ = text_like(n=30, d=d, seed=10)
    columns, Xc = compact_columns(X)
    assert_array_equal(columns, np.unique(X.indices))
    assert_array_equal(Xc.toarray(), X[:, columns].toarray())
    assert_array_equal(Xc.data, X.data)  # the same values in the same order: the same sums


def test_compact_columns_of_one_row_of_a_huge_width_costs_its_stored_values():
    # One document against a 2**28-wide hashed model: no pass over the width (it took 0.8 s and
    # 500 MB at 2**26, 11.6 s and 2.4 GB at 2**29).
    import tracemalloc

    X = sp.csr_matrix((np.ones(3), np.array([7, 2**27, 5]), np.array([0, 3])), shape=(1, 2**28))
    tracemalloc.start()
    try:
        columns, Xc = compact_columns(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    assert_array_equal(columns, [5, 7, 2**27])
    assert_array_equal(Xc.indices, [1, 2, 0])


def test_smoothing_search_subtracts_sparse_sums(narrow):
    """SmoothingSearchCV's training folds are merges of the other folds:
    sparse sums merge as dense ones do (the same search as GridSearchCV)."""
    from sklearn.model_selection import GridSearchCV

    X, y = text_like(n=240, seed=13)
    grid = {"alpha": [0.1, 1.0], "norm": [False, True]}
    ours = nbgpu.SmoothingSearchCV(nbgpu.ComplementNB(), grid, cv=3).fit(X, y)
    assert is_kept_sparse(ours.best_estimator_)
    ref = GridSearchCV(nbgpu.ComplementNB(), grid, cv=3).fit(X, y)
    assert ours.best_params_ == ref.best_params_
    assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], rtol=1e-12)
