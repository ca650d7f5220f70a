"""fit_stream and svmlight_chunks: the streamed model is the one fit gives."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_digits
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

import nbgpu
from nbgpu import fit_stream, svmlight_chunks


def _chunks(X, y, size, weight=None):
    for start in range(0, X.shape[0], size):
        stop = start + size
        if weight is None:
            yield X[start:stop], y[start:stop]
        else:
            yield X[start:stop], y[start:stop], weight[start:stop]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X.astype(np.float32), y


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "GaussianNB", "CategoricalNB"])
@pytest.mark.parametrize("sparse", [False, True])
def test_stream_gives_the_fitted_model(digits, name, sparse):
    X, y = digits
    if sparse and name == "CategoricalNB":
        X = X.astype(np.int64).astype(np.float32)
    if sparse:
        X = sp.csr_matrix(X)
    full = getattr(nbgpu, name)().fit(X, y)
    streamed = fit_stream(getattr(nbgpu, name)(), _chunks(X, y, 300), classes=np.unique(y), prefetch=2)
    np.testing.assert_array_equal(streamed.predict(X), full.predict(X))
    np.testing.assert_allclose(
        streamed.predict_joint_log_proba(X), full.predict_joint_log_proba(X), rtol=1e-5, atol=1e-3
    )
    np.testing.assert_allclose(streamed.class_count_, full.class_count_)


def test_stream_with_sample_weights_and_scikit_learn(digits):
    X, y = digits
    w = np.random.default_rng(0).random(X.shape[0])
    ours = fit_stream(nbgpu.MultinomialNB(), _chunks(X, y, 256, w), classes=np.arange(10))
    ref = SkMultinomialNB().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.feature_count_, ref.feature_count_, rtol=1e-10)
    # scikit-learn's own partial_fit works through the helper too.
    sk = fit_stream(SkMultinomialNB(), _chunks(X, y, 256, w), classes=np.arange(10))
    np.testing.assert_allclose(sk.feature_count_, ref.feature_count_, rtol=1e-10)


def test_stream_holds_at_most_prefetch_plus_one_chunks(digits):
    X, y = digits
    produced, fitted = [], []

    class Recorder(nbgpu.MultinomialNB):
        def partial_fit(self, X, y, classes=None, sample_weight=None):
            fitted.append(len(produced))
            return super().partial_fit(X, y, classes=classes, sample_weight=sample_weight)

    def chunks():
        for chunk in _chunks(X, y, 100):
            produced.append(1)
            yield chunk

    fit_stream(Recorder(), chunks(), classes=np.arange(10), prefetch=2)
    assert len(fitted) == len(produced) == 18
    # While chunk i is fitted, at most prefetch chunks after it (plus the one
    # the producer holds waiting for room) have been made.
    assert all(made - i <= 2 + 2 for i, made in enumerate(fitted, start=1))


def test_stream_errors(digits):
    X, y = digits
    with pytest.raises(ValueError, match="classes"):
        fit_stream(nbgpu.MultinomialNB(), _chunks(X, y, 500), classes=None)
    with pytest.raises(ValueError, match="prefetch"):
        fit_stream(nbgpu.MultinomialNB(), _chunks(X, y, 500), classes=np.arange(10), prefetch=0)
    with pytest.raises(ValueError, match="device"):
        fit_stream(nbgpu.MultinomialNB(), _chunks(X, y, 500), classes=np.arange(10), device="tpu")
    with pytest.raises(TypeError, match="partial_fit"):
        fit_stream(object(), _chunks(X, y, 500), classes=np.arange(10))
    with pytest.raises(TypeError, match="chunk 0 must be a tuple"):
        fit_stream(nbgpu.MultinomialNB(), iter([X]), classes=np.arange(10))
    with pytest.raises(ValueError, match="empty"):
        fit_stream(nbgpu.MultinomialNB(), iter([]), classes=np.arange(10))


def test_stream_reraises_errors_of_the_producer(digits):
    X, y = digits

    def broken():
        yield X[:100], y[:100]
        raise OSError("disk went away")

    with pytest.raises(OSError, match="disk went away"):
        fit_stream(nbgpu.MultinomialNB(), broken(), classes=np.arange(10))


def test_stream_reraises_errors_of_a_bad_chunk(digits):
    X, y = digits
    bad = [(X[:100], y[:100]), (X[100:200, :5], y[100:200])]
    model = nbgpu.MultinomialNB()
    with pytest.raises(ValueError, match="features"):
        fit_stream(model, iter(bad), classes=np.arange(10))


@pytest.mark.parametrize("chunk_bytes", [700, 5000, 10**7])
def test_svmlight_chunks_cover_every_line_once(tmp_path, digits, chunk_bytes):
    X, y = digits
    X = sp.csr_matrix(X[:400])
    y = y[:400]
    path = tmp_path / "digits.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    parts = list(svmlight_chunks(str(path), n_features=64, chunk_bytes=chunk_bytes))
    if chunk_bytes < 10**7:
        assert len(parts) > 1
    np.testing.assert_array_equal(sp.vstack([p[0] for p in parts]).toarray(), X.toarray())
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), y)
    assert all(p[0].dtype == np.float32 for p in parts)
    streamed = fit_stream(nbgpu.MultinomialNB(), svmlight_chunks(str(path), n_features=64, chunk_bytes=chunk_bytes),
                          classes=np.arange(10))
    np.testing.assert_allclose(streamed.feature_count_, nbgpu.MultinomialNB().fit(X, y).feature_count_)


def test_svmlight_chunks_rejects_bad_chunk_size(tmp_path):
    with pytest.raises(ValueError, match="chunk_bytes"):
        next(svmlight_chunks(str(tmp_path / "x.svm"), n_features=3, chunk_bytes=0))
