"""nbgpu.chi2 and the count models' chi2_scores(): scikit-learn's chi2, from class sums."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _data import dataset, zipf_corpus
from conftest import assert_namespace, to_numpy
from sklearn.feature_selection import SelectKBest
from sklearn.feature_selection import chi2 as sk_chi2

import nbgpu


def assert_same_chi2(ours, ref, rtol=1e-9):
    for a, b in zip(ours, ref):
        a, b = to_numpy(a), np.asarray(b)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0)


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc", "coo"])
@pytest.mark.parametrize("which", ["zipf", "digits", "iris"])
def test_equals_sklearn(which, fmt):
    X, y = dataset(which, "MultinomialNB")
    X = X.toarray() if sp.issparse(X) else X
    Xf = X if fmt == "dense" else sp.csr_matrix(X).asformat(fmt)
    assert_same_chi2(nbgpu.chi2(Xf, y), sk_chi2(Xf, y))


def test_integer_counts_string_labels_and_a_zero_column():
    X, y = zipf_corpus(n_docs=90, n_words=300)
    X = X.astype(np.int64).tolil()
    X[:, 7] = 0  # NaN statistic, as in scikit-learn
    X = X.tocsr()
    labels = np.array(["ham", "eggs", "spam"])[y]
    ours, ref = nbgpu.chi2(X, labels), sk_chi2(X, labels)
    assert np.isnan(to_numpy(ours[0])[7])
    assert_same_chi2(ours, ref)


def test_duplicate_entries_count_as_their_sum():
    """A CSR matrix with repeated (row, column) entries and unsorted indices is
    read as the matrix it stands for, without being copied to sum them."""
    cols = np.array([2, 0, 2, 1, 0, 0, 1])
    vals = np.array([1.0, 2.0, 3.0, 1.0, 1.0, 4.0, 2.0])
    X = sp.csr_matrix((vals, cols, np.array([0, 3, 4, 6, 7])), shape=(4, 3))
    assert not X.has_canonical_format
    y = np.array([0, 0, 1, 1])
    assert_same_chi2(nbgpu.chi2(X, y), sk_chi2(X.toarray(), y))


def test_one_class_is_nan_like_sklearn():
    X = np.array([[1.0, 2.0], [3.0, 0.0]])
    assert_same_chi2(nbgpu.chi2(X, [5, 5]), sk_chi2(X, [5, 5]))


def test_on_every_backend(backend, dtype):
    X, y = dataset("digits", "MultinomialNB")
    y = np.ascontiguousarray(y)  # torch warns on a strided y
    scores, pvalues = nbgpu.chi2(backend.asarray(X, dtype), backend.asarray(y))
    assert_namespace(scores, backend)
    assert_namespace(pvalues, backend)
    # float32 counts are exact here (whole numbers), and the sums are float64.
    assert_same_chi2((scores, pvalues), sk_chi2(X, y), rtol=1e-9)


def test_sample_weight_is_repeated_rows():
    X, y = dataset("wine", "MultinomialNB")
    w = np.arange(X.shape[0]) % 3
    assert_same_chi2(nbgpu.chi2(X, y, sample_weight=w), sk_chi2(np.repeat(X, w, axis=0), np.repeat(y, w)))


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "PoissonNB"])
def test_chi2_scores_of_a_fitted_model(name):
    X, y = zipf_corpus(n_docs=120, n_words=400)
    w = 1.0 + np.arange(120) % 2
    model = getattr(nbgpu, name)().fit(X, y, sample_weight=w)
    assert_same_chi2(model.chi2_scores(), nbgpu.chi2(X, y, sample_weight=w), rtol=1e-12)
    assert_same_chi2(model.chi2_scores(), sk_chi2(sp.vstack([X, X[w == 2]]), np.concatenate([y, y[w == 2]])))


def test_chi2_scores_of_bernoulli_is_on_the_binarized_features():
    X, y = zipf_corpus(n_docs=120, n_words=400)
    model = nbgpu.BernoulliNB(binarize=1.0).fit(X, y)
    assert_same_chi2(model.chi2_scores(), sk_chi2((X > 1.0).astype(np.float64), y))


def test_chi2_scores_after_partial_fit_on_the_backend(backend):
    X, y = dataset("digits", "MultinomialNB")
    y = np.ascontiguousarray(y)
    model = nbgpu.MultinomialNB()
    for part in np.array_split(np.arange(X.shape[0]), 3):
        model.partial_fit(backend.asarray(X[part]), backend.asarray(y[part]), classes=np.unique(y))
    scores, pvalues = model.chi2_scores()
    assert_namespace(scores, backend)
    assert_same_chi2((scores, pvalues), sk_chi2(X, y))


def test_in_select_k_best():
    X, y = zipf_corpus(n_docs=150, n_words=500)
    ours = SelectKBest(nbgpu.chi2, k=40).fit(X, y)
    ref = SelectKBest(sk_chi2, k=40).fit(X, y)
    np.testing.assert_array_equal(ours.get_support(), ref.get_support())


def test_bad_input():
    X = np.array([[1.0, -2.0], [3.0, 0.0]])
    with pytest.raises(ValueError, match=r"Negative values in data passed to chi2.*`X` must hold counts.*minimum of -2"):
        nbgpu.chi2(X, [0, 1])
    with pytest.raises(ValueError, match="`y` has 3 labels but `X` has 2 rows"):
        nbgpu.chi2(np.abs(X), [0, 1, 1])
    with pytest.raises(ValueError, match="sample_weight"):
        nbgpu.chi2(np.abs(X), [0, 1], sample_weight=[1.0, -1.0])
    with pytest.raises(ValueError, match="missing='ignore'"):
        nbgpu.PoissonNB(missing="ignore").fit(np.abs(X), [0, 1]).chi2_scores()
    with pytest.raises(Exception, match="not fitted"):
        nbgpu.MultinomialNB().chi2_scores()
