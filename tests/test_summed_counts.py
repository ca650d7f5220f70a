"""class_sums.summed_entries of whole-number values (counts): the fast path that sorts keys packed
with their counts, no order kept, against its reference (keys and positions sorted, each key's values
added in order), and the values it leaves to the reference."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from nbgpu._array import blocks
from nbgpu._array.class_sums import _whole_counts, summed_entries
from nbgpu._array.paths import reference


def _both(keys, values):
    got = summed_entries(keys, values)
    with reference("sparse_class_sums"):
        want = summed_entries(keys, values)
    return got, want


def _assert_same(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        assert_array_equal(g, w)
        assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("threads", ["1", "3"])
@pytest.mark.parametrize("top", [1, 2**10, 2**26, 2**29, 2**32 - 1])  # 32 bits shared down to 3 for the counts
@pytest.mark.parametrize("key_dtype", [np.uint32, np.int64])
def test_counts_sum_as_the_reference_does(top, key_dtype, threads, monkeypatch):
    monkeypatch.setenv("NBGPU_NUM_THREADS", threads)
    monkeypatch.setattr(blocks, "PARALLEL_NNZ", 100)
    rng = np.random.default_rng(top)
    keys = rng.integers(0, top, 20_000, endpoint=True).astype(key_dtype)
    keys[:3] = top  # the widest key present
    counts = rng.choice([0, 1, 1, 1, 2, 3, 7, 200, 70_000, 2**32 - 1], size=keys.shape[0]).astype(np.float64)
    assert _whole_counts(counts) is not None  # the fast path runs
    got, want = _both(keys, counts)
    _assert_same(got, want)
    assert_array_equal(got[0], np.unique(keys))


def test_counts_of_distinct_keys_and_of_one_key():
    _assert_same(*_both(np.array([9, 2, 5], dtype=np.int64), np.array([1.0, 0.0, 4.0])))
    _assert_same(*_both(np.zeros(1000, dtype=np.uint32), np.full(1000, 3.0)))
    _assert_same(*_both(np.array([4], dtype=np.uint32), np.array([2.0])))


@pytest.mark.parametrize(
    "values",
    [
        [1.0, 0.5, 2.0],  # not whole
        [1.0, -1.0, 2.0],  # negative
        [1.0, np.nan, 2.0],
        [1.0, np.inf, 2.0],
        [1.0, 2.0**32, 2.0],  # past 32 bits
        [-0.0, 1.0, 2.0],  # a negative zero keeps its sign (a key of its own)
    ],
)
def test_values_that_are_not_counts_take_the_reference(values):
    values = np.array(values)
    assert _whole_counts(values) is None
    _assert_same(*_both(np.array([3, 1, 3], dtype=np.int64)[: values.shape[0]], values))


def test_counts_whose_sums_may_not_be_exact_take_the_reference():
    # 2**31 - 1 five million times: sums past 2**53, where the order of the additions counts
    n = 5_000_000
    values = np.full(n, 2.0**31 - 1)
    assert float(values.max()) * n >= 2**53
    assert _whole_counts(values) is None
    small = np.full(n, 7.0)
    assert _whole_counts(small) is not None
