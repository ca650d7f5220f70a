"""Parameters derived from the statistics are computed once, when first needed.

``partial_fit`` after the first call only accumulates; the derived
parameters come from one finalize at the first read and stay until the
statistics change.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu
from nbgpu._interop.model_files import load, save

LAZY = [nbgpu.MultinomialNB, nbgpu.ComplementNB, nbgpu.BernoulliNB, nbgpu.GaussianNB, nbgpu.PoissonNB]


def _data(seed=0, n=300, d=20, k=4):
    rng = np.random.default_rng(seed)
    return rng.poisson(2.0, (n, d)).astype(np.float64), rng.integers(0, k, n)


@pytest.fixture
def finalize_calls(monkeypatch):
    """Number of _finalize calls of every model class, counted."""
    calls = []
    for cls in {c for model in LAZY + [nbgpu.CategoricalNB] for c in model.__mro__ if "_finalize" in vars(c)}:
        original = vars(cls)["_finalize"]

        def counted(self, *args, _original=original, **kwargs):
            calls.append(type(self).__name__)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "_finalize", counted)
    return calls


@pytest.mark.fast_path("lazy_parameters")
@pytest.mark.parametrize("cls", LAZY + [nbgpu.CategoricalNB], ids=lambda c: c.__name__)
def test_a_stream_of_chunks_finalizes_once(cls, finalize_calls):
    X, y = _data()
    model = cls()
    for start in range(0, 300, 30):
        model.partial_fit(X[start : start + 30], y[start : start + 30], classes=np.arange(4))
    assert finalize_calls == []  # partial_fit only accumulates
    model.predict(X[:5])
    model.predict_proba(X[:5])
    assert len(finalize_calls) == 1  # at the first read, not per read
    model.fit(X, y)
    assert len(finalize_calls) == 2  # fit finalizes at once


@pytest.mark.parametrize("cls", LAZY + [nbgpu.CategoricalNB], ids=lambda c: c.__name__)
def test_lazy_parameters_equal_those_of_one_fit(cls):
    X, y = _data(1)
    streamed = cls()
    for start in range(0, 300, 50):
        streamed.partial_fit(X[start : start + 50], y[start : start + 50], classes=np.arange(4))
    whole = cls().fit(X, y)
    np.testing.assert_allclose(streamed.predict_joint_log_proba(X), whole.predict_joint_log_proba(X), rtol=1e-9)
    names = [n for n in ("feature_log_prob_", "theta_", "var_", "class_log_prior_", "rate_") if hasattr(whole, n)]
    assert names
    for name in names:
        got, want = getattr(streamed, name), getattr(whole, name)
        for g, w in zip(got, want) if isinstance(want, list) else [(got, want)]:  # CategoricalNB: per feature
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9)


@pytest.mark.fast_path("lazy_parameters")
def test_new_statistics_replace_derived_parameters():
    X, y = _data(2)
    model = nbgpu.MultinomialNB().partial_fit(X[:100], y[:100], classes=np.arange(4))
    first = np.array(model.feature_log_prob_)
    model.partial_fit(X[100:], y[100:])
    assert "feature_log_prob_" not in vars(model)  # the old value is gone, not served stale
    np.testing.assert_allclose(model.feature_log_prob_, nbgpu.MultinomialNB().fit(X, y).feature_log_prob_)
    assert not np.allclose(model.feature_log_prob_, first)


def test_a_bad_parameter_is_refused_by_the_partial_fit_that_sees_it():
    X, y = _data(3)
    model = nbgpu.MultinomialNB().partial_fit(X, y, classes=np.arange(4))
    model.set_params(alpha=np.ones(3))  # 20 features
    with pytest.raises(ValueError, match="alpha"):
        model.partial_fit(X, y)
    model.set_params(alpha=1.0, class_prior=[0.25] * 4, prior_smoothing=1.0)
    with pytest.raises(ValueError, match="prior_smoothing"):
        model.partial_fit(X, y)


def test_small_alpha_warns_once_per_fit():
    X, y = _data(4)
    with pytest.warns(UserWarning, match="alpha too small") as record:
        nbgpu.MultinomialNB(alpha=0.0, force_alpha=False).fit(X, y)
    assert len(record) == 1


def test_unknown_attributes_are_attribute_errors_before_and_after_fit():
    model = nbgpu.GaussianNB()
    assert not hasattr(model, "theta_")
    with pytest.raises(AttributeError, match="no_such_thing_"):
        model.no_such_thing_  # noqa: B018
    X, y = _data(5)
    model.partial_fit(X, y, classes=np.arange(4)).partial_fit(X, y)
    assert hasattr(model, "theta_")
    with pytest.raises(AttributeError, match="no_such_thing_"):
        model.no_such_thing_  # noqa: B018


@pytest.mark.fast_path("lazy_parameters")
def test_a_lazy_model_saves_loads_and_moves(tmp_path):
    X, y = _data(6)
    Xs = sp.csr_matrix(X)
    model = nbgpu.ComplementNB().partial_fit(Xs[:150], y[:150], classes=np.arange(4)).partial_fit(Xs[150:], y[150:])
    assert vars(model)["_derived_"] is None
    save(model, tmp_path / "m.nbgpu")
    assert vars(model)["_derived_"] is None  # saving stores statistics, it derives nothing
    loaded = load(tmp_path / "m.nbgpu")
    np.testing.assert_array_equal(loaded.predict(Xs), model.predict(Xs))
    merged = nbgpu.ComplementNB().fit(Xs[:150], y[:150]).merge(nbgpu.ComplementNB().fit(Xs[150:], y[150:]))
    np.testing.assert_allclose(merged.feature_log_prob_, model.feature_log_prob_)


def _wide_counts(seed, n, d=4000, nnz_per_row=12, dtype=np.int64):
    """CSR counts over many features, with unsorted indices and duplicates (as real inputs come)."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), nnz_per_row)
    cols = rng.integers(0, d, rows.shape[0])
    X = sp.csr_matrix((rng.integers(1, 4, rows.shape[0]).astype(dtype), (rows, cols)), shape=(n, d))
    perm = np.concatenate([X.indptr[i] + rng.permutation(X.indptr[i + 1] - X.indptr[i]) for i in range(n)])
    X = sp.csr_matrix((X.data[perm], X.indices[perm], X.indptr), shape=X.shape)
    X.has_sorted_indices = False
    X.data[:3], X.indices[1] = 2, X.indices[0]  # a duplicate entry
    return X


WIDE = [nbgpu.MultinomialNB, nbgpu.ComplementNB, partial(nbgpu.ComplementNB, norm=True), nbgpu.BernoulliNB]


@pytest.mark.parametrize("cls", WIDE, ids=["MultinomialNB", "ComplementNB", "ComplementNB-norm", "BernoulliNB"])
@pytest.mark.fast_path("few_columns")
def test_few_rows_of_a_lazy_model_are_scored_from_the_weights_they_use(cls, tmp_path):
    # A loaded (or streamed) wide model scoring a few rows takes the weight
    # rows of the features those use instead of laying out all d x k weights
    # (kept for larger inputs); the scores are the same, bit for bit.
    X, y = _wide_counts(0, 600), np.random.default_rng(0).integers(0, 5, 600)
    loaded = load(save(cls().fit(X, y), tmp_path / "m.nbgpu"))
    few = _wide_counts(1, 20)
    assert 8 * few.nnz <= few.shape[1]
    gathered = loaded.predict_joint_log_proba(few)
    assert "_weight_" not in vars(loaded)  # the d x k layout was not made
    laid_out = cls().fit(X, y)  # a fit lays its weights out at once
    assert "_weight_" in vars(laid_out)
    np.testing.assert_array_equal(gathered, laid_out.predict_joint_log_proba(few))
    np.testing.assert_array_equal(loaded.predict(few), laid_out.predict(few))
    many = _wide_counts(2, 600)
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(many), laid_out.predict_joint_log_proba(many))
    assert "_weight_" in vars(loaded)  # made once, for the larger input
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(few), gathered)


@pytest.mark.fast_path("lazy_parameters")
def test_a_laid_out_weight_is_dropped_with_the_statistics_it_came_from():
    X, y = _wide_counts(0, 600), np.random.default_rng(0).integers(0, 3, 600)
    model = nbgpu.MultinomialNB().partial_fit(X, y, classes=np.arange(3))
    model.predict(_wide_counts(2, 600))
    assert "_weight_" in vars(model)
    model.partial_fit(X[:50], y[:50])
    assert "_weight_" not in vars(model) and "feature_log_prob_" not in vars(model)
    np.testing.assert_allclose(model.feature_log_prob_, nbgpu.MultinomialNB().fit(sp.vstack([X, X[:50]]), np.r_[y, y[:50]]).feature_log_prob_)


@pytest.mark.fast_path("lazy_parameters")
@pytest.mark.parametrize("cls", LAZY, ids=lambda c: c.__name__)
def test_row_blocks_scored_on_several_threads_derive_once(cls, finalize_calls, monkeypatch):
    # The first read of a streamed model is often a predict whose row blocks
    # run on all cores at once: one of them derives, the others wait.
    from nbgpu._array import blocks

    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    monkeypatch.setattr(blocks, "HOST_BLOCK_BYTES", 512)
    original = cls._finalize

    def slow(self, *args, **kwargs):  # long enough for the other thread to ask too
        time.sleep(0.05)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "_finalize", slow)
    X, y = _data(3)
    model = cls().partial_fit(X, y, classes=np.arange(4))
    assert finalize_calls == []
    predicted = model.predict(X)
    assert len(finalize_calls) == 1
    np.testing.assert_array_equal(predicted, cls().fit(X, y).predict(X))


SET_AFTER_FIT = [
    (nbgpu.MultinomialNB, {"alpha": 100.0}),
    (nbgpu.ComplementNB, {"alpha": 100.0}),
    (nbgpu.ComplementNB, {"norm": True}),
    (nbgpu.BernoulliNB, {"alpha": 100.0}),
    (nbgpu.CategoricalNB, {"alpha": 100.0}),
    (nbgpu.GaussianNB, {"var_smoothing": 0.5}),
]


@pytest.mark.parametrize(("cls", "change"), SET_AFTER_FIT)
@pytest.mark.parametrize("read_first", [False, True])
@pytest.mark.parametrize("fit", ["fit", "partial_fit"])
def test_set_params_after_fit_changes_nothing_until_a_refit(cls, change, read_first, fit):
    """Parameters are those of the last fit, whether or not anything was
    read before set_params (as in scikit-learn, the reference here)."""
    from sklearn import naive_bayes as sk

    X = np.random.default_rng(0).integers(0, 5, (60, 10))
    y = np.arange(60) % 3
    ours, ref = cls(), getattr(sk, cls.__name__)()
    for model in (ours, ref):
        if fit == "fit":
            model.fit(X, y)
        else:
            model.partial_fit(X, y, classes=[0, 1, 2])
    if read_first:
        ours.predict_proba(X[:1])
    ours.set_params(**change)
    ref.set_params(**change)
    np.testing.assert_allclose(ours.predict_proba(X[:5]), ref.predict_proba(X[:5]), rtol=1e-10)
    # A refit takes the new parameters.
    np.testing.assert_allclose(ours.fit(X, y).predict_proba(X[:5]), ref.fit(X, y).predict_proba(X[:5]), rtol=1e-10)


def test_an_array_alpha_set_after_partial_fit_waits_for_the_next_fit():
    X, y = _data()
    model = nbgpu.MultinomialNB().partial_fit(X, y, classes=np.unique(y))
    expected = nbgpu.MultinomialNB().fit(X, y).predict_proba(X[:10])
    model.set_params(alpha=np.ones(3))  # the wrong length for 20 features: refused only by a fit
    np.testing.assert_allclose(model.predict_proba(X[:10]), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        model.partial_fit(X, y)


def test_a_model_saved_after_set_params_keeps_the_parameters_of_its_fit(tmp_path):
    X, y = _data()
    model = nbgpu.MultinomialNB().partial_fit(X, y, classes=np.unique(y))
    expected = model.predict_proba(X[:10])
    model.set_params(alpha=50.0)
    save(model, tmp_path / "m.nbgpu")
    back = load(tmp_path / "m.nbgpu")
    assert back.alpha == 1.0
    np.testing.assert_allclose(back.predict_proba(X[:10]), expected, rtol=1e-12)


@pytest.mark.parametrize("cls", LAZY)
def test_derived_parameters_are_not_pickled(cls):
    import pickle

    X, y = _data()
    model = cls().fit(X, y)
    expected = model.predict_proba(X[:10])
    state = model.__getstate__()
    assert not any(name in state for name in ("feature_log_prob_", "_weight_", "theta_", "var_", "_bias_"))
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(back.predict_proba(X[:10]), expected, rtol=1e-14)
    for name in ("feature_log_prob_", "theta_"):
        if hasattr(model, name):
            np.testing.assert_array_equal(getattr(back, name), getattr(model, name))


@pytest.mark.parametrize(("param", "value"), [("alpha", -1.0), ("fit_prior", "yes"), ("norm", 2)])
def test_a_continuing_partial_fit_validates_parameters_set_since(param, value):
    """A continuing partial_fit skips scikit-learn's parameter validation
    only while the parameters are those the first call validated."""
    X, y = _data()
    model = nbgpu.ComplementNB().partial_fit(X, y, classes=np.unique(y))
    model.partial_fit(X, y)
    before = model._stats["class_count"].copy()
    model.set_params(**{param: value})
    with pytest.raises(ValueError, match=param):
        model.partial_fit(X, y)
    np.testing.assert_array_equal(model._stats["class_count"], before)


MODELS = LAZY + [nbgpu.CategoricalNB, nbgpu.KernelDensityNB, nbgpu.NormalBayesClassifier]


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_every_derived_parameter_is_declared_on_the_class(cls):
    # What an IDE, a type checker and help() see is what a fit makes: no attribute comes from __getattr__.
    from nbgpu._estimator.base import fitted_parameter

    assert all("__getattr__" not in vars(c) for c in cls.__mro__ if c.__module__.startswith("nbgpu"))
    X, y = _data()
    model = cls().fit(X, y)
    for name in model._traits.deferred_parameters:
        getattr(model, name)
    declared = {name for c in cls.__mro__ for name, value in vars(c).items() if isinstance(value, fitted_parameter)}
    assert set(vars(model)["_derived_"]) <= declared
    assert not hasattr(cls(), "class_count_")


@pytest.mark.fast_path("lazy_parameters")
@pytest.mark.parametrize("error", [AttributeError("a bug in finalize"), KeyError("a bug in finalize")])
def test_an_error_while_deriving_is_raised_as_itself(monkeypatch, error):
    X, y = _data()
    model = nbgpu.GaussianNB().partial_fit(X, y, classes=np.unique(y))

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(nbgpu.GaussianNB, "_finalize", broken)
    with pytest.raises(type(error), match="a bug in finalize"):
        model.theta_  # noqa: B018
    monkeypatch.undo()
    np.testing.assert_allclose(model.theta_, nbgpu.GaussianNB().fit(X, y).theta_)  # nothing half-derived was kept


@pytest.mark.fast_path("lazy_parameters")
def test_lazy_parameters_are_derived_without_copying_the_model(monkeypatch):
    # Finalize reads the hyper-parameters of the fit from its `params` argument, never from a copy of the model.
    X, y = _data()
    model = nbgpu.MultinomialNB(alpha=0.5).partial_fit(X, y, classes=np.unique(y))
    model.set_params(alpha=3.0)
    seen = []
    finalize = nbgpu.MultinomialNB._finalize

    def recording(self, stats, classes, params, **kwargs):
        seen.append((self, params.alpha))
        return finalize(self, stats, classes, params, **kwargs)

    monkeypatch.setattr(nbgpu.MultinomialNB, "_finalize", recording)
    flp = model.feature_log_prob_
    assert seen == [(model, 0.5)]
    np.testing.assert_allclose(flp, nbgpu.MultinomialNB(alpha=0.5).fit(X, y).feature_log_prob_)
