"""CategoricalNB's category counts are sums: a true zero count is exactly 0.0,
and sparse input counts and scores as dense input does, with fractional
sample weights too (issue 34, item 5).

Category 0 of a sparse feature was taken as differences of one running sum
over all features' columns: with balanced weights, counts that are 0 came out
as ±1e-16…1e-14, and with ``alpha=0`` their logs (-36.8 instead of the floor
of a zero count, -708) moved the joint log-likelihood by thousands.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import naive_bayes as sk
from sklearn.utils.class_weight import compute_sample_weight

import emulated_device as emu
import nbgpu
from nbgpu._array.class_sums import category_counts, feature_block_sums
from conftest import to_numpy


def _balanced(seed=0, n=17, d=300):
    """Codes 0-2, about 70% zeros, and balanced (fractional) sample weights."""
    rng = np.random.default_rng(seed)
    X = (rng.integers(0, 3, (n, d)) * (rng.random((n, d)) < 0.4)).astype(np.float64)
    y = rng.integers(0, 3, n)
    y[:3] = [0, 1, 2]
    return X, y, compute_sample_weight("balanced", y)


@pytest.mark.parametrize("params", [{"alpha": 0.0, "force_alpha": True}, {}], ids=["alpha0", "default"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_counts_and_scores_equal_dense_and_scikit_learn(params, fmt):
    X, y, w = _balanced()
    dense = nbgpu.CategoricalNB(**params).fit(X, y, sample_weight=w)
    sparse = nbgpu.CategoricalNB(**params).fit(sp.csr_matrix(X).asformat(fmt), y, sample_weight=w)
    with np.errstate(divide="ignore"):  # scikit-learn's log of a zero count
        ref = sk.CategoricalNB(**params).fit(X, y, sample_weight=w)
    expected = np.concatenate(ref.category_count_, axis=1)
    zero = expected == 0
    assert zero[:, ::3].sum() > 0, "the data must hold category-0 counts that are truly 0"
    for model in (dense, sparse):
        got = to_numpy(model._category_count_)
        assert np.all(got[zero] == 0.0), f"true zero counts must be 0.0; saw {got[zero][got[zero] != 0][:5]}"
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(to_numpy(sparse._category_count_), to_numpy(dense._category_count_), rtol=1e-12)
    jll = dense.predict_joint_log_proba(X)
    np.testing.assert_allclose(sparse.predict_joint_log_proba(sp.csr_matrix(X).asformat(fmt)), jll, rtol=1e-9)
    if params:  # log 0 is -inf in scikit-learn, the log of the smallest normal number here
        flp = np.concatenate(ref.feature_log_prob_, axis=1)
        finite = np.isfinite(flp)
        np.testing.assert_allclose(to_numpy(sparse._feature_log_prob_)[finite], flp[finite], rtol=1e-12)
    else:
        np.testing.assert_allclose(jll, ref.predict_joint_log_proba(X), rtol=1e-9)


def test_unweighted_and_zero_weight_rows_keep_exact_counts():
    """Zero-weight rows are not seen: a category 0 only they hold counts exactly 0."""
    X, y, w = _balanced(seed=3)
    X[:, 5] = 1.0
    X[4] = X[6]  # no category seen only in the dropped row (scikit-learn would keep it)
    X[4, 5], w[4] = 0.0, 0.0  # feature 5's only zero, in a row of weight 0
    for weights in (None, w):
        dense = nbgpu.CategoricalNB(alpha=0.0).fit(X, y, sample_weight=weights)
        sparse = nbgpu.CategoricalNB(alpha=0.0).fit(sp.csr_matrix(X), y, sample_weight=weights)
        with np.errstate(divide="ignore"):  # scikit-learn's log of a zero count
            ref = sk.CategoricalNB(alpha=0.0).fit(X, y, sample_weight=weights).category_count_
        ref = np.concatenate(ref, axis=1)
        np.testing.assert_array_equal(to_numpy(sparse._category_count_) == 0, ref == 0)
        np.testing.assert_allclose(to_numpy(sparse._category_count_), to_numpy(dense._category_count_), rtol=1e-12)
    assert np.all(sparse.category_count_[5][:, 0] == 0.0)


def test_feature_block_sums_are_each_blocks_own_sum(backend):
    """Blocks of widths 0 to 9 (several powers of two) after large values:
    each block's sum is its own, a block of zeros exactly 0."""
    rng = np.random.default_rng(5)
    widths = np.array([3, 1, 0, 9, 2, 4, 5, 1, 3, 8])
    offsets = np.concatenate([[0], np.cumsum(widths)])
    flat = rng.random((3, int(offsets[-1]))) * 1e3
    flat[:, offsets[4] : offsets[5]] = 0.0
    flat[:, offsets[6] : offsets[7]] = [0.1, 0.2, -0.3, 0.0, 0.0]  # a running sum leaves ~1e-13 here
    got = to_numpy(feature_block_sums(backend.asarray(flat), offsets, xp=backend.xp))
    expected = np.stack([flat[:, a:b].sum(axis=1) for a, b in zip(offsets[:-1], offsets[1:])], axis=1)
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-16)
    assert np.all(got[:, [2, 4]] == 0.0)


def test_device_sparse_category_counts_keep_exact_zeros():
    """The device path (emulated): the same exact zeros, no synchronisation."""
    X, y, w = _balanced()
    offsets = np.arange(301, dtype=np.int64) * 3
    host = category_counts(sp.csr_matrix(X), y, w, offsets, 3, xp=np, dtype=np.float64)
    X_dev = emu.cupyx.scipy.sparse.csr_matrix(sp.csr_matrix(X))
    assert X_dev.has_canonical_format  # read once here: the constructor leaves it unknown
    with emu.count_syncs() as log:
        dev = category_counts(
            X_dev, emu.cupy.asarray(y), emu.cupy.asarray(w), offsets, 3, xp=emu.xp, dtype=np.float64
        )
    assert log.total == 0
    dense = category_counts(X, y, w, offsets, 3, xp=np, dtype=np.float64)
    np.testing.assert_array_equal(to_numpy(dev) == 0, dense == 0)
    np.testing.assert_array_equal(host == 0, dense == 0)
    np.testing.assert_allclose(to_numpy(dev), dense, rtol=1e-12)
