"""SmoothingSearchCV over a Pipeline: the earlier steps fitted once per fold,
GridSearchCV's results over the same Pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.feature_selection import SelectKBest, chi2
from sklearn.metrics import accuracy_score, make_scorer
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline

import nbgpu

TOPICS = (
    "goal match team player score league coach season cup referee",
    "court judge law trial lawyer verdict appeal jury witness sentence",
    "gene cell protein dna enzyme membrane tissue mutation virus molecule",
)
COMMON = "the a of and to in is it that with for on as was this by".split()


def corpus(n_docs=300, seed=0):
    """Short documents of 3 topics: words of their topic, of the others and common ones."""
    rng = np.random.default_rng(seed)
    topics = [t.split() for t in TOPICS]
    y = np.arange(n_docs) % 3
    docs = []
    for label in y:
        n = rng.integers(4, 12)
        words = [
            rng.choice(topics[label]) if u < 0.45 else rng.choice(topics[rng.integers(3)]) if u < 0.65
            else rng.choice(COMMON)
            for u in rng.random(n)
        ]
        docs.append(" ".join(words))
    return docs, np.array(["sport", "law", "biology"])[y]


CASES = {
    "tfidf_multinomial": (
        Pipeline([("tfidf", TfidfVectorizer()), ("nb", nbgpu.MultinomialNB())]),
        {"nb__alpha": [0.01, 0.1, 0.3, 1.0, 3.0], "nb__fit_prior": [True, False]},
    ),
    "counts_complement": (
        Pipeline([("counts", CountVectorizer()), ("nb", nbgpu.ComplementNB())]),
        {"nb__alpha": [0.01, 0.3, 1.0, 3.0], "nb__norm": [False, True]},
    ),
}


def assert_same_search(ours, ref, *, rtol=1e-10):
    assert ours.best_params_ == ref.best_params_
    assert ours.best_index_ == ref.best_index_
    assert ours.best_score_ == pytest.approx(ref.best_score_, rel=rtol)
    assert ours.cv_results_["params"] == ref.cv_results_["params"]
    for key, value in ref.cv_results_.items():
        if "time" in key or key == "params":
            continue
        if key.startswith("param_"):
            assert list(ours.cv_results_[key]) == list(value), key
        else:
            np.testing.assert_allclose(ours.cv_results_[key], value, rtol=rtol, atol=1e-15, err_msg=key)


@pytest.mark.parametrize("scoring", [None, "accuracy"], ids=["default", "accuracy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_results_as_grid_search_over_the_pipeline(case, scoring):
    docs, y = corpus()
    pipeline, grid = CASES[case]
    ours = nbgpu.SmoothingSearchCV(pipeline, grid, scoring=scoring, cv=5).fit(docs, y)
    ref = GridSearchCV(pipeline, grid, scoring=scoring, cv=5).fit(docs, y)
    assert_same_search(ours, ref)
    assert isinstance(ours.best_estimator_, Pipeline)
    assert ours.best_estimator_.get_params()["nb"].get_params() == ref.best_estimator_.get_params()["nb"].get_params()
    np.testing.assert_array_equal(ours.predict(docs), ref.predict(docs))
    if case == "tfidf_multinomial":
        np.testing.assert_allclose(ours.predict_proba(docs), ref.predict_proba(docs), rtol=1e-10)
    assert ours.score(docs, y) == ref.score(docs, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)


def test_the_earlier_steps_are_fitted_once_per_fold(monkeypatch):
    docs, y = corpus()
    pipeline, grid = CASES["tfidf_multinomial"]
    calls = []
    fit_transform = TfidfVectorizer.fit_transform

    def counted(self, X, y=None):
        calls.append(len(X))
        return fit_transform(self, X, y)

    monkeypatch.setattr(TfidfVectorizer, "fit_transform", counted)
    nbgpu.SmoothingSearchCV(pipeline, grid, cv=5).fit(docs, y)
    assert calls == [240] * 5 + [300]  # five training folds, then the refit on all rows


def test_several_metrics_a_callable_and_train_scores():
    """A callable of the user's gets the whole fitted Pipeline and the documents."""
    docs, y = corpus(seed=1)
    pipeline, grid = CASES["tfidf_multinomial"]

    def raw_accuracy(estimator, X, y_true):
        assert isinstance(estimator, Pipeline) and isinstance(X[0], str)
        return accuracy_score(y_true, estimator.predict(X))

    scoring = {"acc": "accuracy", "f1": "f1_macro", "mine": raw_accuracy, "made": make_scorer(accuracy_score)}
    kw = dict(scoring=scoring, refit="f1", return_train_score=True, cv=KFold(4, shuffle=True, random_state=0))
    ours = nbgpu.SmoothingSearchCV(pipeline, grid, **kw).fit(docs, y)
    ref = GridSearchCV(pipeline, grid, **kw).fit(docs, y)
    assert_same_search(ours, ref)
    assert ours.score(docs, y) == ref.score(docs, y)


def test_several_earlier_steps_and_unshuffled_folds_lacking_a_class():
    docs, y = corpus()
    order = np.argsort(y, kind="stable")
    docs, y = [docs[i] for i in order], y[order]
    pipeline = Pipeline([("counts", CountVectorizer()), ("k", SelectKBest(chi2, k=20)), ("nb", nbgpu.MultinomialNB())])
    grid = {"nb__alpha": [0.1, 1.0]}
    ours = nbgpu.SmoothingSearchCV(pipeline, grid, cv=KFold(3)).fit(docs, y)
    ref = GridSearchCV(pipeline, grid, cv=KFold(3)).fit(docs, y)
    assert_same_search(ours, ref)


def test_a_pipeline_of_the_model_alone():
    docs, y = corpus()
    X = CountVectorizer().fit_transform(docs)
    pipeline, grid = Pipeline([("nb", nbgpu.MultinomialNB())]), {"nb__alpha": [0.1, 1.0]}
    ours = nbgpu.SmoothingSearchCV(pipeline, grid).fit(X, y)
    assert_same_search(ours, GridSearchCV(pipeline, grid).fit(X, y))
    assert ours.n_features_in_ == X.shape[1]


def test_bad_pipelines_and_grids():
    docs, y = corpus(n_docs=60)
    pipeline = Pipeline([("tfidf", TfidfVectorizer()), ("nb", nbgpu.MultinomialNB())])
    with pytest.raises(ValueError, match=r"\['tfidf__min_df'\], which are not parameters of the Pipeline's last step 'nb'"):
        nbgpu.SmoothingSearchCV(pipeline, {"tfidf__min_df": [1, 2], "nb__alpha": [1.0]}).fit(docs, y)
    with pytest.raises(ValueError, match=r"\['alpha'\], which are not parameters of the Pipeline's last step"):
        nbgpu.SmoothingSearchCV(pipeline, {"alpha": [1.0]}).fit(docs, y)
    bernoulli = Pipeline([("counts", CountVectorizer()), ("nb", nbgpu.BernoulliNB())])
    with pytest.raises(ValueError, match=r"\['nb__binarize'\], which change what BernoulliNB accumulates.*nb__alpha"):
        nbgpu.SmoothingSearchCV(bernoulli, {"nb__binarize": [0.0, 1.0]}).fit(docs, y)
    with pytest.raises(ValueError, match=r"\['nb__beta'\], which are not parameters of MultinomialNB"):
        nbgpu.SmoothingSearchCV(pipeline, {"nb__beta": [1.0]}).fit(docs, y)
    with pytest.raises(TypeError, match="the Pipeline's last step 'lr' must be one of nbgpu's models"):
        from sklearn.linear_model import LogisticRegression

        other = Pipeline([("tfidf", TfidfVectorizer()), ("lr", LogisticRegression())])
        nbgpu.SmoothingSearchCV(other, {"lr__C": [1.0]}).fit(docs, y)
    with pytest.raises(ValueError, match="`sample_weight` cannot be given with a Pipeline"):
        nbgpu.SmoothingSearchCV(pipeline, {"nb__alpha": [1.0]}).fit(docs, y, sample_weight=np.ones(60))


def test_a_fold_whose_steps_fail_gets_error_score():
    docs, y = corpus(n_docs=60)
    # A vectorizer that keeps no word of the training documents (min_df above their number) fails on every fold.
    pipeline = Pipeline([("tfidf", TfidfVectorizer(min_df=1000)), ("nb", nbgpu.MultinomialNB())])
    with pytest.raises(ValueError, match="All the 10 fits failed"):
        nbgpu.SmoothingSearchCV(pipeline, {"nb__alpha": [0.1, 1.0]}).fit(docs, y)
    with pytest.raises(ValueError, match="min_df"):
        nbgpu.SmoothingSearchCV(pipeline, {"nb__alpha": [0.1, 1.0]}, error_score="raise").fit(docs, y)


def test_clone_and_params():
    pipeline, grid = CASES["tfidf_multinomial"]
    search = nbgpu.SmoothingSearchCV(pipeline, grid)
    assert clone(search).get_params()["estimator__nb__alpha"] == 1.0
