"""The fast CPU kernels give the reference results on every code path.

The thread split and the nonzero blocks only switch on for large inputs, so
these tests lower the thresholds to run them on small random matrices.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import naive_bayes as sk

import nbgpu
from nbgpu._array import blocks, class_sums, numerics, sparse
from nbgpu._array.namespace import get_namespace


@pytest.fixture(params=["serial", "threaded", "blocked"])
def kernel_mode(request, monkeypatch):
    """Run the kernels serially, on 2 threads, or on 2 threads with tiny blocks."""
    if request.param == "serial":
        monkeypatch.setenv("NBGPU_NUM_THREADS", "1")
    else:
        monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
        monkeypatch.setattr(blocks, "PARALLEL_NNZ", 1)
    if request.param == "blocked":
        monkeypatch.setattr(blocks, "BLOCK_BYTES", 256)
    return request.param


def _random_csr(n, d, density, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng, dtype=np.float64)
    X.data = np.ceil(X.data * 5)
    return X.astype(dtype)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_class_sums_matches_onehot_product(kernel_mode, fmt, power, weighted):
    X = _random_csr(300, 40, 0.2, 0).asformat(fmt)
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 4, 300)
    weights = rng.random(300) if weighted else None
    got = class_sums.class_sums(X, codes, weights, 4, xp=np, dtype=np.float64, power=power)
    Y = np.eye(4)[codes] * (1.0 if weights is None else weights[:, None])
    values = X.toarray().astype(np.float64) ** power
    np.testing.assert_allclose(got, Y.T @ values, rtol=1e-12)
    assert got.dtype == np.float64 and got.shape == (4, 40)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_classes", [1, 3, 40])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_class_sums_with_empty_rows_and_classes(kernel_mode, fmt, dtype, n_classes, weighted):
    # One class runs across both thread shares; 40 classes give many small
    # pieces; class 1 has no rows and every 7th row no nonzeros.
    rng = np.random.default_rng(12)
    X = _random_csr(500, 30, 0.1, 12, dtype)
    X = (sp.diags((np.arange(500) % 7 != 0).astype(dtype)) @ X).tocsr()
    X.eliminate_zeros()
    codes = rng.integers(0, n_classes, 500)
    codes[codes == 1] = 0
    weights = rng.random(500) if weighted else None
    got = class_sums.class_sums(X.asformat(fmt), codes, weights, n_classes, xp=np, dtype=np.float64)
    Y = np.eye(n_classes)[codes] * (1.0 if weights is None else weights[:, None])
    np.testing.assert_allclose(got, Y.T @ X.toarray().astype(np.float64), rtol=1e-12)
    assert got.dtype == np.float64 and got.shape == (n_classes, 30)
    if n_classes > 1:
        assert not got[1].any()


@pytest.mark.fast_path("sparse_class_sums")
@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("layout", ["canonical", "duplicates-unsorted", "empty-rows-and-class"])
def test_small_csr_class_sums_are_the_class_wise_sums_bit_for_bit(monkeypatch, power, weighted, layout):
    # One scatter over every (class, feature) bin adds each bin's values in the order the class-wise
    # scatters do: the same float64 sums, not merely close ones (values that round differently in
    # another order: a spread of magnitudes, weights, squares).
    monkeypatch.setenv("NBGPU_NUM_THREADS", "1")
    rng = np.random.default_rng(7)
    X = sp.random(60, 12, density=0.4, format="csr", random_state=rng, dtype=np.float64)
    X.data = (X.data * 10.0 ** rng.integers(-8, 8, X.nnz)).astype(np.float32)
    codes = rng.integers(0, 3, 60)
    if layout == "duplicates-unsorted":  # every row's entries reversed, and each stored twice
        X = _doubled_reversed_rows(X)
        assert not X.has_sorted_indices
    if layout == "empty-rows-and-class":
        X = (sp.diags((np.arange(60) % 5 != 0).astype(np.float32)) @ X).tocsr()
        X.eliminate_zeros()
        codes = np.where(codes == 1, 3, codes)  # class 1 of 4 has no rows
    k = int(codes.max()) + 1
    weights = rng.uniform(0.1, 3.0, 60) if weighted else None
    one = class_sums.class_sums(X, codes, weights, k, xp=np, dtype=np.float64, power=power)
    monkeypatch.setattr(class_sums, "_ONE_SCATTER_BINS", 0)  # the class-wise pieces
    class_wise = class_sums.class_sums(X, codes, weights, k, xp=np, dtype=np.float64, power=power)
    np.testing.assert_array_equal(one, class_wise)
    assert one.dtype == np.float64 and one.shape == (k, 12) and one.flags.c_contiguous


def _doubled_reversed_rows(X):
    """``X`` with each row's entries stored twice, in reverse order (unsorted, duplicated indices)."""
    indptr, indices, data = [0], [], []
    for i in range(X.shape[0]):
        row = slice(X.indptr[i], X.indptr[i + 1])
        indices += [X.indices[row][::-1], X.indices[row][::-1]]
        data += [X.data[row][::-1], X.data[row][::-1] * np.float32(1.5)]
        indptr.append(indptr[-1] + 2 * (X.indptr[i + 1] - X.indptr[i]))
    return sp.csr_matrix((np.concatenate(data), np.concatenate(indices), np.asarray(indptr)), shape=X.shape)


@pytest.mark.fast_path("category_counts")
def test_small_category_histograms_counted_in_the_caller_are_the_threads_sums(monkeypatch):
    # A few keys are counted in the calling thread, group after group as the threads would be:
    # the same float64 sums bit for bit (weights that round differently in another order).
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, (40, 5)).astype(np.float64)
    codes = rng.integers(0, 3, 40)
    weights = 10.0 ** rng.uniform(-8, 8, 40)
    offsets = np.arange(6, dtype=np.int64) * 4
    here = class_sums.category_counts(X, codes, weights, offsets, 3, xp=np, dtype=np.float64)
    monkeypatch.setattr(class_sums, "_SERIAL_KEYS", 0)  # on the pool's threads
    threads = class_sums.category_counts(X, codes, weights, offsets, 3, xp=np, dtype=np.float64)
    np.testing.assert_array_equal(here, threads)
    one_block = np.zeros((3, 20))
    np.add.at(one_block, (codes[:, None], (offsets[:-1] + X).astype(np.int64)), weights[:, None])
    assert not np.array_equal(here, one_block)  # the split is kept: summed in one go it rounds otherwise


def test_sparse_class_sums_of_empty_matrix(kernel_mode):
    X = sp.csr_matrix((5, 3), dtype=np.float32)
    got = class_sums.class_sums(X, np.zeros(5, dtype=np.int64), None, 2, xp=np, dtype=np.float64)
    np.testing.assert_array_equal(got, np.zeros((2, 3)))
    assert got.dtype == np.float64


def test_sparse_class_sums_counts_are_exact_past_float32(kernel_mode):
    # 2**24 + 1 is not a float32: the sums must be accumulated in float64.
    X = sp.csr_matrix(np.array([[2.0**24], [1.0]], dtype=np.float32))
    got = class_sums.class_sums(X, np.array([0, 0]), None, 1, xp=np, dtype=np.float64)
    assert got[0, 0] == 2.0**24 + 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sparse_matmul_matches_scipy(kernel_mode, dtype):
    X = _random_csr(500, 60, 0.1, 2, dtype)
    W = np.random.default_rng(3).standard_normal((60, 7)).astype(dtype)
    got = sparse.sparse_matmul(X, W)
    np.testing.assert_allclose(got, X @ W, rtol=1e-6)
    assert got.dtype == dtype and got.flags.c_contiguous


def test_sparse_binarize_shares_structure_only_when_nothing_drops():
    X = _random_csr(50, 20, 0.3, 4)
    kept = sparse.sparse_binarize(X, 0.0)
    assert np.shares_memory(kept.indices, X.indices)
    np.testing.assert_array_equal(kept.toarray(), (X.toarray() > 0).astype(np.float32))
    dropped = sparse.sparse_binarize(X, 2.5)
    np.testing.assert_array_equal(dropped.toarray(), (X.toarray() > 2.5).astype(np.float32))
    assert dropped.nnz == int((X.data > 2.5).sum())
    assert X.data.min() > 0  # the input was not written into


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB"])
def test_fast_paths_match_scikit_learn(kernel_mode, name):
    X = _random_csr(400, 80, 0.15, 5)
    y = np.random.default_rng(6).integers(0, 5, 400)
    ours = getattr(nbgpu, name)().fit(X, y)
    ref = getattr(sk, name)().fit(X, y)
    np.testing.assert_allclose(ours.feature_count_, ref.feature_count_, rtol=1e-12)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=2e-6)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=2e-5, atol=1e-4
    )
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_log_ratio_keeps_zero_counts_finite():
    from nbgpu._array.numerics import log_ratio, safe_log

    xp = get_namespace(np.empty(0))
    num = np.array([[0.0, 1.0, 3.0], [0.0, 0.0, 0.0]])
    den = np.sum(num, axis=1, keepdims=True)
    expected = safe_log(num, xp=xp) - safe_log(den, xp=xp)
    np.testing.assert_allclose(log_ratio(num, den, xp=xp), expected, rtol=1e-15)


@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_fast_paths_match_scikit_learn(kernel_mode, weighted, monkeypatch):
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 4096)  # many scoring blocks
    rng = np.random.default_rng(7)
    y = rng.integers(0, 4, 3000)
    X = (rng.standard_normal((3000, 12)) + 3.0 * y[:, None] + 100.0).astype(np.float32)
    w = rng.random(3000) if weighted else None
    ours = nbgpu.GaussianNB().fit(X, y, sample_weight=w)
    ref = sk.GaussianNB().fit(X.astype(np.float64), y, sample_weight=w)
    np.testing.assert_allclose(ours.theta_, ref.theta_, rtol=1e-6)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-5)
    # epsilon_ uses the weighted variance (integer weights act as repeated
    # rows); scikit-learn ignores the weights there, so compare by hand.
    Xd = X.astype(np.float64)
    ww = np.ones(len(y)) if w is None else w
    mu = np.average(Xd, axis=0, weights=ww)
    var = np.average((Xd - mu) ** 2, axis=0, weights=ww)
    np.testing.assert_allclose(ours.epsilon_, 1e-9 * var.max(), rtol=1e-6)
    if w is None:
        np.testing.assert_allclose(ours.epsilon_, ref.epsilon_, rtol=1e-6)
        np.testing.assert_allclose(ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_dense_class_sums_match_onehot_product(kernel_mode):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 6))
    codes = rng.integers(0, 3, 50)
    w = rng.random(50)
    xp = get_namespace(X)
    np.testing.assert_allclose(
        class_sums.class_sums(X, codes, w, 3, xp=xp, dtype=np.float64), (np.eye(3)[codes] * w[:, None]).T @ X, rtol=1e-12
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("namespace", ["numpy", "array_api_strict"])
def test_gathered_row_sums_matches_loop(namespace, dtype):
    rng = np.random.default_rng(9)
    table = rng.standard_normal((12, 3)).astype(dtype)
    index = rng.integers(0, 12, (40, 5)).astype(np.int32)
    expected = sum(table[index[:, j]] for j in range(index.shape[1]))
    if namespace == "numpy":
        xp = get_namespace(table)
        got = sparse.gathered_row_sums(table, index, xp=xp)
    else:
        xp = pytest.importorskip("array_api_strict")
        got = np.asarray(sparse.gathered_row_sums(xp.asarray(table), xp.asarray(index), xp=xp))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert got.dtype == dtype and got.shape == (40, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("missing", ["error", "ignore"])
def test_categorical_scoring_blocks_match_scikit_learn(kernel_mode, dtype, missing, monkeypatch):
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 4096)  # many scoring blocks
    rng = np.random.default_rng(10)
    y = rng.integers(0, 4, 2000)
    X = ((rng.integers(0, 6, (2000, 7)) + y[:, None]) % 6).astype(dtype)
    w = rng.random(2000)
    ours = nbgpu.CategoricalNB(missing=missing).fit(X, y, sample_weight=w)
    ref = sk.CategoricalNB().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    # An unseen category (and, with missing="ignore", a NaN) adds nothing:
    # it scores as the feature being left out.
    Xu = X.copy()
    Xu[:, 2] = 1e12 if missing == "error" else np.nan
    dropped = nbgpu.CategoricalNB().fit(np.delete(X, 2, axis=1), y, sample_weight=w)
    np.testing.assert_allclose(
        ours.predict_joint_log_proba(Xu), dropped.predict_joint_log_proba(np.delete(X, 2, axis=1)), rtol=1e-5
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gaussian_fit_blocks_match_one_block(kernel_mode, dtype, monkeypatch):
    rng = np.random.default_rng(11)
    y = rng.integers(0, 3, 1500)
    X = (rng.standard_normal((1500, 6)) + y[:, None] + 50.0).astype(dtype)
    X[rng.random(X.shape) < 0.05] = np.nan
    w = rng.random(1500)
    ours = nbgpu.GaussianNB(missing="ignore").fit(X, y, sample_weight=w)
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 2**30)
    monkeypatch.setenv("NBGPU_NUM_THREADS", "1")
    one = nbgpu.GaussianNB(missing="ignore").fit(X, y, sample_weight=w)
    for name in ("theta_", "var_", "class_count_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(one, name), rtol=1e-10)
    np.testing.assert_allclose(ours.epsilon_, one.epsilon_, rtol=1e-10)


def test_log_ratio_without_zero_counts_skips_nothing():
    from nbgpu._array.numerics import log_ratio

    xp = get_namespace(np.empty(0))
    num = np.array([[0.5, 1.0, 3.0], [2.0, 7.0, 1e-3]])
    den = np.sum(num, axis=1, keepdims=True)
    np.testing.assert_allclose(log_ratio(num, den, xp=xp), np.log(num) - np.log(den), rtol=1e-15)


@pytest.mark.parametrize("columns", [7, 5000], ids=["one_chunk", "column_chunks"])
@pytest.mark.parametrize("namespace", ["numpy", "array_api_strict"])
def test_scoring_weights_cast_and_transpose(kernel_mode, namespace, columns, monkeypatch):
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 512)  # chunks of 1024 columns
    a = np.random.default_rng(13).standard_normal((3, columns))
    xp = pytest.importorskip(namespace) if namespace != "numpy" else get_namespace(a)
    got = numerics.scoring_weights(xp.asarray(a), xp.float32, xp=xp)
    assert got.dtype == xp.float32 and got.shape == (columns, 3)
    np.testing.assert_array_equal(np.asarray(got), a.T.astype(np.float32))
    if namespace == "numpy":
        assert got.flags.c_contiguous


@pytest.mark.parametrize("columns", [9, 5000], ids=["one_chunk", "column_chunks"])
@pytest.mark.parametrize("zeros", [False, True])
def test_overwriting_logs_give_the_same_values(kernel_mode, zeros, columns, monkeypatch):
    from nbgpu._array.numerics import log_ratio, safe_log

    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 512)  # chunks of 1024 columns
    xp = get_namespace(np.empty(0))
    num = np.random.default_rng(14).random((4, columns)) + 0.5
    if zeros:
        num[1, 2] = 0.0
    den = np.sum(num, axis=1, keepdims=True)
    expected_ratio, expected_log = log_ratio(num, den, xp=xp), safe_log(num, xp=xp)
    np.testing.assert_array_equal(log_ratio(num.copy(), den, xp=xp, overwrite_num=True), expected_ratio)
    np.testing.assert_array_equal(safe_log(num.copy(), xp=xp, overwrite=True), expected_log)
    readonly = num + 1.0
    readonly.flags.writeable = False
    np.testing.assert_array_equal(numerics.log_in_place(readonly, xp=xp), np.log(num + 1.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_category_counts_match_onehot_product(kernel_mode, dtype, weighted, monkeypatch):
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 512)  # many blocks per thread
    rng = np.random.default_rng(13)
    X = rng.integers(0, 4, (300, 5)).astype(dtype)
    codes = rng.integers(0, 3, 300)
    weights = rng.random(300) if weighted else None
    offsets = np.arange(6) * 4
    if weighted:  # a row of zero weight may hold an unseen category
        weights[7] = 0.0
        X[7] = 1e12
    got = class_sums.category_counts(X, codes, weights, offsets, 3, xp=get_namespace(X), dtype=np.float64)
    X[7] = np.minimum(X[7], 3)  # where it counts (with weight 0)
    onehot = np.zeros((300, 20))
    np.put_along_axis(onehot, X.astype(np.int64) + offsets[:-1], 1.0, axis=1)
    Y = np.eye(3)[codes] * (1.0 if weights is None else weights[:, None])
    np.testing.assert_allclose(got, Y.T @ onehot, rtol=1e-12)
    assert got.dtype == np.float64 and got.shape == (3, 20)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_categorical_fit_counts_match_scikit_learn(kernel_mode, dtype, weighted, monkeypatch):
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 4096)
    rng = np.random.default_rng(14)
    y = rng.integers(0, 4, 1500)
    X = ((rng.integers(0, 5, (1500, 6)) + y[:, None]) % 5).astype(dtype)
    w = rng.random(1500) if weighted else None
    ours = nbgpu.CategoricalNB(min_categories=7).fit(X, y, sample_weight=w)
    ref = sk.CategoricalNB(min_categories=7).fit(X, y, sample_weight=w)
    for got, want in zip(ours.category_count_, ref.category_count_):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_joint_log_proba(X), ref.predict_joint_log_proba(X), rtol=1e-5)


def test_categorical_missing_counts_match_generic_path(kernel_mode):
    xps = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(15)
    y = rng.integers(0, 3, 800)
    X = rng.integers(0, 4, (800, 5)).astype(np.float64)
    X[rng.random(X.shape) < 0.1] = np.nan
    w = rng.random(800)
    ours = nbgpu.CategoricalNB(missing="ignore").fit(X, y, sample_weight=w)
    generic = nbgpu.CategoricalNB(missing="ignore").fit(xps.asarray(X), xps.asarray(y), sample_weight=xps.asarray(w))
    for got, want in zip(ours.category_count_, generic.category_count_):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)


@pytest.mark.parametrize(
    "y",
    [
        np.array([3, 0, 3, 7, 0], dtype=np.int64),
        np.array([2, 1, 2], dtype=np.uint8),
        np.array([5, -1, 5, 2], dtype=np.int32),  # negative: the generic path
        np.array([0, 10**9, 4]),  # a large label: the generic path
        np.array([1.0, 3.0, 1.0]),  # floats: the generic path
    ],
)
def test_integer_label_paths_match_unique_and_searchsorted(y):
    from nbgpu import _validation

    classes = _validation.unique_labels(y)
    np.testing.assert_array_equal(classes, np.unique(y))
    assert classes.dtype == y.dtype
    codes = _validation.encode_labels(y, classes, xp=np, device="cpu")
    np.testing.assert_array_equal(codes, np.searchsorted(np.unique(y), y))
    assert codes.dtype == np.int64
    # Fixed classes that include labels y does not use, in a wider dtype.
    wider = np.union1d(classes, np.array([6, 9], dtype=classes.dtype)).astype(np.int64)
    np.testing.assert_array_equal(
        _validation.encode_labels(y, wider, xp=np, device="cpu"), np.searchsorted(wider, y)
    )


def test_integer_labels_not_in_classes_are_named():
    from nbgpu import _validation

    with pytest.raises(ValueError, match=r"label\(s\) \[4, 8\] that are not in the classes \[0, 1, 3\]"):
        _validation.encode_labels(np.array([0, 8, 4, 1, 4]), np.array([0, 1, 3]), xp=np, device="cpu")
