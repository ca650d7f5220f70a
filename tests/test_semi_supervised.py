"""SemiSupervisedNB: EM over labeled and unlabeled rows with soft class sums."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _data import dataset, zipf_corpus
from conftest import assert_namespace, to_numpy
from sklearn.exceptions import ConvergenceWarning

import nbgpu
from nbgpu._array.class_sums import soft_class_sums
from sklearn_suite import parametrize_with_checks


def test_soft_class_sums_are_weighted_class_sums():
    rng = np.random.default_rng(0)
    X = sp.random(40, 30, density=0.2, random_state=0, format="csr") * 5
    R = rng.random((40, 4))
    expected = R.T @ X.toarray()
    for Xf in (X, X.tocsc(), X.toarray()):
        np.testing.assert_allclose(soft_class_sums(Xf, R, xp=np, dtype=np.float64), expected, rtol=1e-12)
    np.testing.assert_allclose(
        soft_class_sums(X, R, xp=np, dtype=np.float64, power=2), R.T @ X.toarray() ** 2, rtol=1e-12
    )


def one_em_step(name, X, y, R_fn):
    """The statistics of the M-step written out: labeled rows once, every
    unlabeled row repeated per class with weight R[i, c] (the definition the
    soft kernel must equal)."""
    make = name if callable(name) else getattr(nbgpu, name)
    lab = y != -1
    classes = np.unique(y[lab])
    start = make().fit(X[lab], y[lab])
    R = R_fn(start, X[~lab])
    k = classes.shape[0]
    Xu = X[~lab]
    Xrep = sp.vstack([Xu] * k) if sp.issparse(X) else np.concatenate([Xu] * k)
    Xall = sp.vstack([X[lab], Xrep]) if sp.issparse(X) else np.concatenate([X[lab], Xrep])
    yall = np.concatenate([y[lab], np.repeat(classes, Xu.shape[0])])
    wall = np.concatenate([np.ones(lab.sum()), R.T.reshape(-1)])
    return make().fit(Xall, yall, sample_weight=wall)


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "GaussianNB", "CategoricalNB"])
def test_one_iteration_is_the_weighted_fit(name):
    if name in ("GaussianNB",):
        X, y = dataset("wine", "GaussianNB")
    elif name == "CategoricalNB":
        X, y = dataset("digits", "CategoricalNB")
    else:
        X, y = zipf_corpus(n_docs=150, n_words=300)
    y = y.copy()
    y[np.arange(y.shape[0]) % 3 != 0] = -1
    model = nbgpu.SemiSupervisedNB(getattr(nbgpu, name)(), max_iter=1, tol=0.0)
    with pytest.warns(ConvergenceWarning):
        model.fit(X, y)
    ref = one_em_step(name, X, y, lambda m, Xu: m.predict_proba(Xu))
    Xtest = X[:20]
    np.testing.assert_allclose(model.predict_log_proba(Xtest), ref.predict_log_proba(Xtest), rtol=1e-8, atol=1e-8)


def test_one_iteration_of_a_columnwise_model_is_its_weighted_fit():
    """SemiSupervisedNB(ColumnwiseNB(...)) failed with "'NoneType' object is not iterable":
    the unfitted ColumnwiseNB it accumulates with had no columns."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 120)
    X = np.column_stack([rng.normal(size=120) + y, rng.poisson(1 + 2 * y)]).astype(float)
    y[np.arange(120) % 3 != 0] = -1

    def make():
        return nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0]), ("p", nbgpu.PoissonNB(), [1])])

    model = nbgpu.SemiSupervisedNB(make(), max_iter=1, tol=0.0)
    with pytest.warns(ConvergenceWarning):
        model.fit(X, y)
    ref = one_em_step(make, X, y, lambda m, Xu: m.predict_proba(Xu))
    np.testing.assert_allclose(model.predict_log_proba(X[:20]), ref.predict_log_proba(X[:20]), rtol=1e-8, atol=1e-8)


def test_unlabeled_weight_and_sample_weight():
    X, y = zipf_corpus(n_docs=120, n_words=300)
    y = y.copy()
    y[::2] = -1
    w = 1.0 + np.arange(120) % 3
    lam = 0.3
    model = nbgpu.SemiSupervisedNB(max_iter=1, tol=0.0, unlabeled_weight=lam)
    with pytest.warns(ConvergenceWarning):
        model.fit(X, y, sample_weight=w)
    lab = y != -1
    start = nbgpu.MultinomialNB().fit(X[lab], y[lab], sample_weight=w[lab])
    R = start.predict_proba(X[~lab]) * lam * w[~lab, None]
    expected = start.feature_count_ + R.T @ X[~lab].toarray()
    np.testing.assert_allclose(model.estimator_.feature_count_, expected, rtol=1e-12)
    np.testing.assert_allclose(model.estimator_.class_count_, start.class_count_ + R.sum(axis=0), rtol=1e-12)


def test_unlabeled_rows_help_on_a_text_task():
    """Few labels, many unlabeled documents of the same topics: EM beats the
    supervised model on the labels alone (Nigam et al.)."""
    X, y = zipf_corpus(n_docs=900, n_words=1500, k=4, seed=2)
    Xtest, ytest = X[600:], y[600:]
    X, y = X[:600], y[:600].copy()
    partial = np.full_like(y, -1)
    keep = np.flatnonzero(np.arange(600) % 60 == 0)  # 10 labeled documents
    partial[keep] = y[keep]
    supervised = nbgpu.MultinomialNB().fit(X[keep], y[keep]).score(Xtest, ytest)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # ten iterations are enough here
        em = nbgpu.SemiSupervisedNB(nbgpu.MultinomialNB()).fit(X, partial)
    assert em.score(Xtest, ytest) > supervised + 0.05, (em.score(Xtest, ytest), supervised)
    assert em.n_iter_ == len(em.log_likelihood_) - 1 >= 1


def test_converges_and_string_labels():
    X, y = zipf_corpus(n_docs=200, n_words=300, seed=1)
    labels = np.array(["ham", "eggs", "spam"])[y]
    labels[np.arange(200) % 4 != 0] = "-1"
    model = nbgpu.SemiSupervisedNB(max_iter=100, tol=1e-6).fit(X, labels)
    assert model.n_iter_ < 100
    assert abs(model.log_likelihood_[-1] - model.log_likelihood_[-2]) < 1e-6
    assert set(model.predict(X)) <= {"ham", "eggs", "spam"}
    assert list(model.classes_) == ["eggs", "ham", "spam"]


def test_every_label_given_is_the_supervised_model():
    X, y = zipf_corpus(n_docs=90, n_words=100)
    model = nbgpu.SemiSupervisedNB().fit(X, y)
    assert model.n_iter_ == 0
    np.testing.assert_allclose(model.predict_proba(X), nbgpu.MultinomialNB().fit(X, y).predict_proba(X))


def test_on_every_backend(backend):
    X, y = dataset("wine", "GaussianNB")
    y = y.copy()
    y[::2] = -1
    ref = nbgpu.SemiSupervisedNB(nbgpu.GaussianNB(), max_iter=3, tol=0.0)
    ours = nbgpu.SemiSupervisedNB(nbgpu.GaussianNB(), max_iter=3, tol=0.0)
    with pytest.warns(ConvergenceWarning):
        ref.fit(X, y)
    with pytest.warns(ConvergenceWarning):
        ours.fit(backend.asarray(X), backend.asarray(y))
    proba = ours.predict_proba(backend.asarray(X))
    assert_namespace(proba, backend)
    np.testing.assert_allclose(to_numpy(proba), ref.predict_proba(X), rtol=1e-7, atol=1e-10)


def test_bad_input():
    X, y = zipf_corpus(n_docs=30, n_words=20)
    with pytest.raises(ValueError, match="no labeled row"):
        nbgpu.SemiSupervisedNB().fit(X, np.full(30, -1))
    with pytest.raises(TypeError, match="`estimator` must be an nbgpu naive Bayes model"):
        nbgpu.SemiSupervisedNB(estimator="MultinomialNB").fit(X, y)
    with pytest.raises(ValueError, match="`max_iter` must be an integer >= 0"):
        nbgpu.SemiSupervisedNB(max_iter=-1).fit(X, y)
    with pytest.raises(ValueError, match="`unlabeled_weight` must be a finite number >= 0"):
        nbgpu.SemiSupervisedNB(unlabeled_weight=-0.5).fit(X, y)
    with pytest.raises(ValueError, match="Negative values"):
        nbgpu.SemiSupervisedNB().fit(-X, y)
    with pytest.raises(Exception, match="not fitted"):
        nbgpu.SemiSupervisedNB().predict(X)


@parametrize_with_checks(
    [nbgpu.SemiSupervisedNB(), nbgpu.SemiSupervisedNB(nbgpu.GaussianNB())],
    expected_failed_checks=lambda est: {
        "check_classifiers_classes": "-1 marks an unlabeled row (scikit-learn's semi-supervised convention), "
        "so it cannot be a class; this check uses -1 as one",
        "check_non_transformer_estimators_n_iter": "n_iter_ counts EM iterations: a fit on labeled rows only runs none",
    },
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_data_frame_columns():
    pd = pytest.importorskip("pandas")
    X, y = zipf_corpus(n_docs=90, n_words=30)
    df = pd.DataFrame(X.toarray(), columns=[f"w{i}" for i in range(30)])
    partial = np.where(np.arange(90) % 3 == 0, y, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = nbgpu.SemiSupervisedNB().fit(df, partial)
    assert list(model.feature_names_in_) == list(df.columns)
    assert list(model.estimator_.feature_names_in_) == list(df.columns)
    model.predict(df)  # no warning about feature names (warnings are errors here)


def test_unlabeled_rows_no_class_explains_are_refused():
    """A row outside every class's support (a compact kernel) has class weights 0 / 0:
    refused with a clear error, not a model of NaN; with weight 0 it is left out."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 1, (40, 2)), rng.normal(5, 1, (40, 2)), [[100.0, 100.0]]])
    y = np.array([0] * 20 + [-1] * 20 + [1] * 20 + [-1] * 20 + [-1])
    model = nbgpu.SemiSupervisedNB(nbgpu.KernelDensityNB(kernel="epanechnikov", bandwidth=1.0))
    with pytest.raises(ValueError, match="1 unlabeled row.* zero likelihood under every class"):
        model.fit(X, y)
    assert not hasattr(model, "estimator_")
    w = np.ones(X.shape[0])
    w[-1] = 0.0
    model.fit(X, y, sample_weight=w)
    assert np.all(np.isfinite(model.log_likelihood_))
    assert np.all(np.isfinite(model.predict_proba(X[:-1])))


def test_saving_points_to_the_fitted_model(tmp_path):
    """nbgpu.save(SemiSupervisedNB) said only "must be an nbgpu estimator": its model file is
    its fitted model's, which the message now names."""
    X, y = np.array([[1, 0], [0, 1], [1, 1], [0, 2]]), np.array([0, 1, -1, -1])
    model = nbgpu.SemiSupervisedNB().fit(X, y)
    with pytest.raises(TypeError, match=r"got SemiSupervisedNB \(save its fitted model: nbgpu.save\(model.estimator_, path\)\)"):
        nbgpu.save(model, tmp_path / "m.nbgpu")
    nbgpu.save(model.estimator_, tmp_path / "m.nbgpu")
    np.testing.assert_array_equal(nbgpu.load(tmp_path / "m.nbgpu").predict_proba(X), model.predict_proba(X))
