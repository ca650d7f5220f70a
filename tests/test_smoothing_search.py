"""SmoothingSearchCV: GridSearchCV's results from the statistics of each fold, accumulated once."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from _data import dataset, quantize, random_data, zipf_corpus
from conftest import to_numpy
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import make_scorer, recall_score
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, ShuffleSplit

import nbgpu
from sklearn_suite import parametrize_with_checks

GRIDS = {
    "MultinomialNB": {"alpha": [0.01, 0.1, 0.5, 1.0, 2.0], "fit_prior": [True, False]},
    "ComplementNB": {"alpha": [0.01, 0.3, 1.0], "norm": [False, True]},
    "BernoulliNB": {"alpha": [0.01, 0.3, 1.0], "prior_smoothing": [0.0, 1.0]},
    "PoissonNB": {"alpha": [0.01, 0.3, 1.0]},
    "CategoricalNB": {"alpha": [0.01, 0.3, 1.0], "fit_prior": [True, False]},
    "GaussianNB": {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-1, 0.3]},
    "NormalBayesClassifier": {"reg_covar": [1e-6, 1e-3, 1e-1, 1.0]},
}


def data_for(name):
    if name in ("GaussianNB", "NormalBayesClassifier"):
        return dataset("wine", "GaussianNB")
    if name == "CategoricalNB":
        X, y = dataset("wine", "GaussianNB")
        return quantize(X), y
    return zipf_corpus(n_docs=150, n_words=400)


def assert_same_search(ours, ref, *, rtol=1e-12):
    assert ours.best_params_ == ref.best_params_
    assert ours.best_index_ == ref.best_index_
    assert ours.best_score_ == pytest.approx(ref.best_score_, rel=rtol, abs=1e-15)
    assert ours.cv_results_["params"] == ref.cv_results_["params"]
    assert ours.n_splits_ == ref.n_splits_
    for key, value in ref.cv_results_.items():
        if "time" in key:
            continue
        assert key in ours.cv_results_, key
        mine = ours.cv_results_[key]
        if key.startswith("param_"):
            assert list(mine) == list(value), key
        elif key != "params":
            np.testing.assert_allclose(mine, value, rtol=rtol, atol=1e-15, err_msg=key)
    for key in ("mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time"):
        assert ours.cv_results_[key].shape == ref.cv_results_[key].shape


@pytest.mark.parametrize("name", sorted(GRIDS))
def test_same_results_as_grid_search(name):
    X, y = data_for(name)
    est, grid = getattr(nbgpu, name)(), GRIDS[name]
    ours = nbgpu.SmoothingSearchCV(est, grid).fit(X, y)
    ref = GridSearchCV(est, grid).fit(X, y)
    assert_same_search(ours, ref)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.score(X, y) == ref.score(X, y)


@pytest.mark.parametrize("k", [2, 3, 4, 7])
def test_training_folds_merge_the_other_folds_in_order(k):
    """Each training fold is the merge of the other parts in their order (a KernelDensityNB's
    points are concatenated), the last output their total; 3k − 5 merges, not k(k − 2)."""
    from nbgpu._interop.smoothing_search import _merges_leaving_one_out

    merges = []

    def merge(a, b):
        merges.append((a, b))
        return a + b

    parts = [(i,) for i in range(k)]
    training, total = _merges_leaving_one_out(parts, merge)
    assert training == [tuple(j for j in range(k) if j != i) for i in range(k)]
    assert total == tuple(range(k))
    assert len(merges) == 3 * k - 5


def outlier_data(magnitude, *, n=1000, seed=0):
    """Values of spread 0.01 whose two classes differ by 0.01, and one value of ``magnitude``
    in the first test fold of KFold(5)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = 0.01 * y[:, None] + rng.normal(0.0, 0.01, (n, 3))
    X[7, 0] = magnitude
    return X, y


@pytest.mark.parametrize("magnitude", [1e7, 1e9, 1e10, 1e12])
def test_gaussian_outlier_gives_grid_search_results(magnitude):
    """The training folds without the outlier: the total's moments minus its fold's kept no digit
    of theirs (at 1e9: split 0's accuracy 0.555 against 0.8, the best var_smoothing 1e-3 against 1e-12)."""
    from sklearn.naive_bayes import GaussianNB

    X, y = outlier_data(magnitude)
    grid, cv = {"var_smoothing": [1e-12, 1e-9, 1e-6, 1e-3]}, KFold(5)
    ours = nbgpu.SmoothingSearchCV(nbgpu.GaussianNB(), grid, cv=cv).fit(X, y)
    assert_same_search(ours, GridSearchCV(nbgpu.GaussianNB(), grid, cv=cv).fit(X, y), rtol=1e-9)
    assert ours.best_params_ == GridSearchCV(GaussianNB(), grid, cv=cv).fit(X, y).best_params_


@pytest.mark.parametrize("seed", [0, 1])
def test_fractional_counts_with_an_outlier_give_grid_search_results(seed):
    """Sums of fractional counts are not exact: the total minus the fold holding 1e12 kept about
    1e-4 of the other folds' sum (log loss off by 2e-8 relative)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 1000)
    X = rng.random((1000, 4)) * (1.0 + 0.3 * y[:, None] * (np.arange(4) == 2))
    X[:, 0] *= 1e-3
    X[7, 0] = 1e12
    grid, cv = {"alpha": [1e-3, 0.1, 1.0]}, KFold(5)
    ours = nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), grid, cv=cv, scoring="neg_log_loss").fit(X, y)
    ref = GridSearchCV(nbgpu.MultinomialNB(), grid, cv=cv, scoring="neg_log_loss").fit(X, y)
    assert_same_search(ours, ref, rtol=1e-9)


@pytest.mark.parametrize(
    "cv",
    [ShuffleSplit(4, test_size=0.3, random_state=0), KFold(3), KFold(4, shuffle=True, random_state=1)],
    ids=["shuffle_split", "kfold_unshuffled", "kfold"],
)
@pytest.mark.parametrize("name", ["MultinomialNB", "GaussianNB", "CategoricalNB"])
def test_any_splitter(name, cv):
    """Folds that do not partition the rows, and (unshuffled KFold on sorted
    labels) training folds that lack a class: GridSearchCV's model there
    knows only the classes it saw."""
    X, y = data_for(name)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    est, grid = getattr(nbgpu, name)(), GRIDS[name]
    assert_same_search(nbgpu.SmoothingSearchCV(est, grid, cv=cv).fit(X, y), GridSearchCV(est, grid, cv=cv).fit(X, y))


def test_custom_folds_are_checked_and_may_be_lists_or_masks():
    """A `cv` of the user's folds: an empty or non-index fold is a ValueError
    naming `cv` (an empty one raised IndexError); lists and boolean masks are
    the folds GridSearchCV takes."""
    X, y = data_for("MultinomialNB")
    n, est, grid = len(y), nbgpu.MultinomialNB(), GRIDS["MultinomialNB"]
    half = n // 2
    for cv, match in [
        ([(np.arange(n), [])], "`cv` split 0 has an empty test fold"),
        ([(np.arange(half), np.arange(half, n)), (np.arange(half, n), [])], "`cv` split 1 has an empty test fold"),
        ([([], np.arange(half))], "`cv` split 0 has an empty train fold"),
        ([(np.arange(half), [0.5])], r"split 0: the test fold must be row indices \(or a boolean mask\)"),
        ([(np.arange(half), [n])], "must be row indices"),
    ]:
        with pytest.raises(ValueError, match=match):
            nbgpu.SmoothingSearchCV(est, grid, cv=cv).fit(X, y)
    lists = [(list(range(half)), list(range(half, n))), (list(range(half, n)), list(range(half)))]
    masks = [(np.arange(n) < half, np.arange(n) >= half), (np.arange(n) >= half, np.arange(n) < half)]
    for cv in (lists, masks):
        assert_same_search(nbgpu.SmoothingSearchCV(est, grid, cv=cv).fit(X, y), GridSearchCV(est, grid, cv=lists).fit(X, y))


def test_groups_and_sample_weight():
    X, y = zipf_corpus(n_docs=150, n_words=400)
    groups = np.arange(150) % 7
    w = 1.0 + np.arange(150) % 3
    est, grid = nbgpu.MultinomialNB(), GRIDS["MultinomialNB"]
    ours = nbgpu.SmoothingSearchCV(est, grid, cv=GroupKFold(4)).fit(X, y, groups=groups, sample_weight=w)
    ref = GridSearchCV(est, grid, cv=GroupKFold(4)).fit(X, y, groups=groups, sample_weight=w)
    assert_same_search(ours, ref)
    np.testing.assert_allclose(to_numpy(ours.best_estimator_.feature_count_), to_numpy(ref.best_estimator_.feature_count_))


@pytest.mark.parametrize(
    "scoring",
    ["neg_log_loss", "balanced_accuracy", make_scorer(recall_score, average="macro")],
    ids=["log_loss", "balanced_accuracy", "callable"],
)
def test_scoring(scoring):
    X, y = zipf_corpus(n_docs=150, n_words=400)
    est, grid = nbgpu.ComplementNB(), GRIDS["ComplementNB"]
    grid = {"alpha": grid["alpha"]} if scoring == "neg_log_loss" else grid  # (complement weights are no probabilities)
    est = nbgpu.MultinomialNB() if scoring == "neg_log_loss" else est
    ours = nbgpu.SmoothingSearchCV(est, grid, scoring=scoring, return_train_score=True).fit(X, y)
    ref = GridSearchCV(est, grid, scoring=scoring, return_train_score=True).fit(X, y)
    assert_same_search(ours, ref)


def test_several_metrics_and_refit_choices():
    X, y = zipf_corpus(n_docs=150, n_words=400)
    est, grid = nbgpu.MultinomialNB(), GRIDS["MultinomialNB"]
    scoring = {"acc": "accuracy", "f1": "f1_macro"}
    ours = nbgpu.SmoothingSearchCV(est, grid, scoring=scoring, refit="f1").fit(X, y)
    ref = GridSearchCV(est, grid, scoring=scoring, refit="f1").fit(X, y)
    assert_same_search(ours, ref)
    assert ours.score(X, y) == ref.score(X, y)

    no_refit = nbgpu.SmoothingSearchCV(est, grid, scoring=["accuracy", "f1_macro"], refit=False).fit(X, y)
    assert not hasattr(no_refit, "best_estimator_") and not hasattr(no_refit, "best_params_")
    with pytest.raises(AttributeError, match="refit=False"):
        no_refit.predict(X)
    # One metric, refit=False: the best is known but not refitted (best_params_ and best_score_ were missing).
    ours = nbgpu.SmoothingSearchCV(est, grid, refit=False).fit(X, y)
    ref = GridSearchCV(est, grid, refit=False).fit(X, y)
    assert (ours.best_index_, ours.best_params_, ours.best_score_) == (ref.best_index_, ref.best_params_, ref.best_score_)
    assert not hasattr(ours, "best_estimator_") and not hasattr(ref, "best_estimator_")

    pick = lambda results: int(np.argmax(results["mean_test_score"] * 0 + np.arange(len(results["params"]))))
    chosen = nbgpu.SmoothingSearchCV(est, grid, refit=pick).fit(X, y)
    assert chosen.best_index_ == len(chosen.cv_results_["params"]) - 1
    assert chosen.best_params_ == chosen.cv_results_["params"][-1]


def test_a_grid_point_that_fails_gets_error_score():
    X, y = zipf_corpus(n_docs=90, n_words=200)
    grid = {"class_prior": [None, [0.5, 0.5]]}  # three classes: the second is invalid
    est = nbgpu.MultinomialNB()
    with pytest.warns(FitFailedWarning, match="class_prior"):
        ours = nbgpu.SmoothingSearchCV(est, grid).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = GridSearchCV(est, grid).fit(X, y)
    assert np.isnan(ours.cv_results_["mean_test_score"][1])
    assert_same_search(ours, ref)
    with pytest.raises(ValueError, match="class_prior"):
        nbgpu.SmoothingSearchCV(est, grid, error_score="raise").fit(X, y)


# What the backend tests compare with: GridSearchCV of nbgpu.GaussianNB on wine (numpy), the
# same for every backend, so fitted once per scoring and test process (the tests only read it).
SCORINGS = {"accuracy": "accuracy", "log_loss": "neg_log_loss", "two": {"acc": "accuracy", "f1": "f1_macro"}}


@functools.cache
def _wine_grid_search(scoring=None):
    X, y = dataset("wine", "GaussianNB")
    if scoring is None:
        return GridSearchCV(nbgpu.GaussianNB(), GRIDS["GaussianNB"]).fit(X, y)
    scoring = SCORINGS[scoring]
    refit = "f1" if isinstance(scoring, dict) else True
    return GridSearchCV(nbgpu.GaussianNB(), GRIDS["GaussianNB"], scoring=scoring, refit=refit,
                        return_train_score=True).fit(X, y)


def test_on_every_backend(backend):
    X, y = dataset("wine", "GaussianNB")
    grid = GRIDS["GaussianNB"]
    ours = nbgpu.SmoothingSearchCV(nbgpu.GaussianNB(), grid).fit(backend.asarray(X), y)
    ref = _wine_grid_search()
    assert ours.best_params_ == ref.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"], rtol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.predict_proba(backend.asarray(X))), ref.predict_proba(X), rtol=1e-6, atol=1e-9)


def test_bad_input():
    X, y = zipf_corpus(n_docs=60, n_words=50)
    with pytest.raises(ValueError, match=r"\['binarize'\].*GridSearchCV"):
        nbgpu.SmoothingSearchCV(nbgpu.BernoulliNB(), {"binarize": [0.0, 1.0]}).fit(X, y)
    with pytest.raises(ValueError, match=r"\['beta'\], which are not parameters of MultinomialNB"):
        nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"beta": [1]}).fit(X, y)
    with pytest.raises(TypeError, match="`estimator` must be one of nbgpu's models"):
        nbgpu.SmoothingSearchCV(GridSearchCV(nbgpu.MultinomialNB(), {}), {"alpha": [1]}).fit(X, y)
    with pytest.raises(ValueError, match="`refit` must be the name of a metric"):
        nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [1]}, scoring=["accuracy"], refit="f1").fit(X, y)
    with pytest.raises(ValueError, match="`error_score`"):
        nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [1]}, error_score="nan").fit(X, y)
    with pytest.raises(Exception, match="not fitted"):
        nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [1]}).predict(X)
    search = nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [1.0]})
    with pytest.raises(ValueError, match="Negative values"):
        search.fit(-X, y)
    assert not hasattr(search, "cv_results_")


@parametrize_with_checks(
    [
        nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [0.1, 1.0]}, cv=3),
        nbgpu.SmoothingSearchCV(nbgpu.GaussianNB(), {"var_smoothing": [1e-9, 1e-3]}, cv=3),
    ],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_estimator_checks(estimator, check):
    check(clone(estimator))


def test_data_frame_columns():
    pd = pytest.importorskip("pandas")
    X, y = zipf_corpus(n_docs=90, n_words=30)
    df = pd.DataFrame(X.toarray(), columns=[f"w{i}" for i in range(30)])
    ours = nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), GRIDS["MultinomialNB"]).fit(df, y)
    ref = GridSearchCV(nbgpu.MultinomialNB(), GRIDS["MultinomialNB"]).fit(df, y)
    assert_same_search(ours, ref)
    assert list(ours.feature_names_in_) == list(df.columns)
    np.testing.assert_array_equal(ours.predict(df), ref.predict(df))


@pytest.fixture
def sklearn_refuses_device_arrays(monkeypatch):
    """scikit-learn meets the emulated device's arrays as it meets cupy's:
    ``np.asarray`` (and ``np.array``) refuse them. They subclass np.ndarray,
    which numpy converts without asking ``__array__``, so the refusal sits in
    numpy's functions, for callers in scikit-learn."""
    import sys

    import emulated_device

    def refusing(convert):
        def call(a, *args, **kwargs):
            if emulated_device.owns(a) and sys._getframe(1).f_globals.get("__name__", "").startswith("sklearn"):
                msg = "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."
                raise TypeError(msg)
            return convert(a, *args, **kwargs)

        return call

    for name in ("asarray", "array", "asanyarray"):
        monkeypatch.setattr(np, name, refusing(getattr(np, name)))


@pytest.mark.parametrize("name", list(SCORINGS))
def test_named_scorers_on_every_backend(backend, sklearn_refuses_device_arrays, name):
    # scikit-learn's metrics get host predictions and labels (device arrays refuse np.asarray).
    X, y = dataset("wine", "GaussianNB")
    grid = GRIDS["GaussianNB"]
    scoring = SCORINGS[name]
    refit = "f1" if isinstance(scoring, dict) else True
    search = nbgpu.SmoothingSearchCV(nbgpu.GaussianNB(), grid, scoring=scoring, refit=refit, return_train_score=True)
    ours = search.fit(backend.asarray(X), backend.asarray(y))
    ref = _wine_grid_search(name)
    assert_same_search(ours, ref, rtol=1e-9)
    assert ours.score(backend.asarray(X), backend.asarray(y)) == pytest.approx(ref.score(X, y), rel=1e-9)


def test_several_metrics_predict_once_per_fold_and_grid_point(monkeypatch):
    X, y = dataset("wine", "GaussianNB")
    grid = GRIDS["GaussianNB"]
    calls = []
    counted = nbgpu.GaussianNB.predict

    def predict(self, X):
        calls.append(X.shape[0])
        return counted(self, X)

    monkeypatch.setattr(nbgpu.GaussianNB, "predict", predict)
    scoring = ["accuracy", "f1_macro", "balanced_accuracy"]
    nbgpu.SmoothingSearchCV(nbgpu.GaussianNB(), grid, scoring=scoring, refit=False, cv=4).fit(X, y)
    assert len(calls) == 4 * len(grid["var_smoothing"]), calls


def test_feature_names_are_taken_as_the_models_take_them():
    # Duplicate column names: the models keep them as they are; the search raised instead.
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).integers(0, 4, (40, 2)), columns=["a", "a"])
    y = np.arange(40) % 2
    search = nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [0.1, 1.0]}).fit(X, y)
    assert search.feature_names_in_.tolist() == nbgpu.MultinomialNB().fit(X, y).feature_names_in_.tolist() == ["a", "a"]
