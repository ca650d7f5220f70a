"""nbgpu.text.HashingVectorizer is a scikit-learn estimator by protocol, and imports no scikit-learn to hash.

The class implements scikit-learn's estimator protocol itself (_hashing_vectorizer.py): no base class of
scikit-learn's, none added at run time, so ``isinstance`` never depends on the order of imports. Scenarios
that need a process without scikit-learn run in a fresh one.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from conftest import subprocess_env
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import HashingVectorizer as Reference
from sklearn.model_selection import GridSearchCV
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.utils import estimator_checks, get_tags
from sklearn.utils.sparsefuncs_fast import inplace_csr_row_normalize_l1, inplace_csr_row_normalize_l2

from nbgpu.text import HashingVectorizer, _transform

DOCS = ["The quick brown fox.", "jumps over the lazy dog", b"bytes too", "", "fox fox fox FOX", "dog and fox"] * 3


def _run(code):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env=subprocess_env(), timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _same(got, want):
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


def test_hashing_without_sklearn_then_the_same_as_sklearn():
    _run(f"""
        import pickle, sys
        from nbgpu.text import HashingVectorizer
        docs = {DOCS!r}
        params = [{{}}, {{'n_features': 64, 'ngram_range': (1, 2)}}, {{'norm': 'l1', 'dtype': 'float32'}},
                  {{'analyzer': 'char_wb', 'ngram_range': (2, 3), 'binary': True}}, {{'norm': None, 'alternate_sign': False}}]
        ours = [HashingVectorizer(**p).fit_transform(docs) for p in params]
        vec = HashingVectorizer(n_features=32)
        assert vec.set_params(norm='l1') is vec and vec.get_params()['norm'] == 'l1'
        assert repr(vec) == "HashingVectorizer(n_features=32, norm='l1')", repr(vec)
        again = pickle.loads(pickle.dumps(vec))
        assert again.get_params() == vec.get_params()
        try:
            HashingVectorizer().fit('one string')
        except ValueError as exc:
            assert 'string object received' in str(exc)
        loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn')
        assert loaded == [], loaded

        import sklearn.base
        from sklearn.feature_extraction.text import HashingVectorizer as Reference
        for p, X in zip(params, ours):
            want = Reference(**p).fit_transform(docs)
            assert type(X) is type(want) and X.dtype == want.dtype and X.shape == want.shape
            assert (X.indptr == want.indptr).all() and (X.indices == want.indices).all()
            assert (X.data == want.data).all(), p
        assert vec.get_params() == Reference(n_features=32, norm='l1').get_params()
        assert type(sklearn.base.clone(again)) is HashingVectorizer
        assert HashingVectorizer.__bases__ == (object,) and not isinstance(vec, sklearn.base.BaseEstimator)
    """)


def test_no_base_class_of_sklearns_whatever_the_order_of_imports():
    assert HashingVectorizer.__bases__ == (object,)
    vec = HashingVectorizer()
    vec.fit_transform(DOCS)
    repr(vec), get_tags(vec), clone(vec)
    assert not isinstance(vec, BaseEstimator) and HashingVectorizer.__bases__ == (object,)


def test_pipeline_clone_and_grid_search():
    y = np.arange(len(DOCS)) % 2
    ours = make_pipeline(HashingVectorizer(n_features=2**8, alternate_sign=False), MultinomialNB())
    ref = make_pipeline(Reference(n_features=2**8, alternate_sign=False), MultinomialNB())
    ours.set_params(hashingvectorizer__norm="l1")
    ref.set_params(hashingvectorizer__norm="l1")
    np.testing.assert_array_equal(clone(ours).fit(DOCS, y).predict_proba(DOCS), ref.fit(DOCS, y).predict_proba(DOCS))
    grid = {"hashingvectorizer__n_features": [16, 64], "hashingvectorizer__ngram_range": [(1, 1), (1, 2)]}
    found = GridSearchCV(ours, grid, cv=3).fit(DOCS, y)
    want = GridSearchCV(ref, grid, cv=3).fit(DOCS, y)
    assert found.best_params_ == want.best_params_
    np.testing.assert_array_equal(found.cv_results_["mean_test_score"], want.cv_results_["mean_test_score"])
    # scikit-learn's printer lays out its own estimators nested (it knows their class); ours keeps its own lines
    assert repr(ours.steps[0][1]) in repr(ours)


def test_pipeline_with_metadata_routing():
    y = np.arange(len(DOCS)) % 2
    weights = np.linspace(1, 2, len(DOCS))
    with sklearn.config_context(enable_metadata_routing=True):
        nb = MultinomialNB().set_fit_request(sample_weight=True)
        ours = make_pipeline(HashingVectorizer(n_features=64, alternate_sign=False), nb)
        ref = make_pipeline(Reference(n_features=64, alternate_sign=False), clone(nb))
        kept = ours.fit(DOCS, y, sample_weight=weights).predict_log_proba(DOCS)
        np.testing.assert_array_equal(kept, ref.fit(DOCS, y, sample_weight=weights).predict_log_proba(DOCS))


def test_tags_are_sklearns():
    assert get_tags(HashingVectorizer()) == get_tags(Reference())


LONG = [f"word{i}" for i in range(40)]
REPR_PARAMS = [{}, {"n_features": 32, "norm": "l1"}, {"stop_words": LONG, "analyzer": "char_wb", "binary": True},
               {"stop_words": LONG[:12], "token_pattern": "x" * 70, "strip_accents": "unicode"},
               {"ngram_range": tuple(range(35)), "dtype": np.float32, "preprocessor": str.lower, "input": "file"},
               {"stop_words": ["y" * 75], "alternate_sign": False}, {"n_features": float("nan")}]


@pytest.mark.parametrize("params", REPR_PARAMS)
@pytest.mark.parametrize("changed_only", [True, False])
@pytest.mark.parametrize("n_char_max", [700, 150, 10_000])
def test_repr_is_sklearns(params, changed_only, n_char_max):
    with sklearn.config_context(print_changed_only=changed_only):
        assert HashingVectorizer(**params).__repr__(n_char_max) == Reference(**params).__repr__(n_char_max)


def test_set_params_errors_and_nested_parameters_as_sklearn():
    with pytest.raises(ValueError) as ours:
        HashingVectorizer().set_params(no_such=1)
    with pytest.raises(ValueError) as theirs:
        Reference().set_params(no_such=1)
    assert str(ours.value) == str(theirs.value).replace("sklearn", "nbgpu")
    assert HashingVectorizer().set_params() is not None

    class Tokenizer:  # a parameter with parameters of its own
        def __init__(self, lower=False):
            self.lower = lower

        def get_params(self, deep=True):
            return {"lower": self.lower}

        def set_params(self, **params):
            self.__dict__.update(params)
            return self

        def __call__(self, doc):
            return (doc.lower() if self.lower else doc).split()

    vec = HashingVectorizer(tokenizer=Tokenizer(), token_pattern=None, n_features=16)
    assert vec.get_params()["tokenizer__lower"] is False and "tokenizer__lower" not in vec.get_params(deep=False)
    vec.set_params(tokenizer__lower=True)
    assert vec.tokenizer.lower is True
    _same(vec.transform(["A a"]), Reference(tokenizer=str.split, token_pattern=None, n_features=16).transform(["a a"]))


def test_pickles_hold_no_sklearn_object():
    vec = HashingVectorizer(preprocessor=str.lower, n_features=16)  # not accelerated: scikit-learn's twin does the work
    vec.transform(["a b"])
    assert b"sklearn" not in pickle.dumps(vec)
    assert pickle.loads(pickle.dumps(vec)).get_params() == vec.get_params()


# scikit-learn's estimator checks that passed when the class inherited from scikit-learn's
# (check_estimator itself skips an estimator of string input).
API_CHECKS = [
    "check_do_not_raise_errors_in_init_or_set_params", "check_dont_overwrite_parameters", "check_estimator_cloneable",
    "check_estimator_repr", "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_estimator_tags_renamed",
    "check_estimators_fit_returns_self", "check_estimators_overwrite_params", "check_estimators_unfitted",
    "check_fit2d_1feature", "check_fit2d_1sample", "check_fit_check_is_fitted", "check_get_params_invariance",
    "check_mixin_order", "check_n_features_in_after_fitting", "check_no_attributes_set_in_init",
    "check_parameters_default_constructible", "check_readonly_memmap_input", "check_requires_y_none",
    "check_set_params", "check_transformer_n_iter", "check_valid_tag_types",
]


@pytest.mark.parametrize("name", API_CHECKS)
def test_sklearn_estimator_checks(name):
    check = getattr(estimator_checks, name, None)
    if check is None:
        pytest.skip(f"this scikit-learn has no {name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SkipTestWarning: the checks for 2-d input skip string input
        check("HashingVectorizer", HashingVectorizer())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_row_normalisation_is_sklearns(dtype, norm):
    rng = np.random.default_rng(0)
    n, d = 300, 50
    counts = rng.integers(-3, 4, (n, d)) * (rng.random((n, d)) < 0.2)
    counts[5] = 0  # an empty row
    counts[7, :3] = [9000, -70000, 5]  # squares that round in float32
    counts[8, :2] = [1, 2**20 + 1]
    X = sp.csr_matrix(counts.astype(dtype))
    X.data[X.indptr[9]:X.indptr[10]] = 0  # stored zeros only (signs that cancel)
    ours, want = X.copy(), X.copy()
    assert _transform._normalize_counts(ours, norm)
    (inplace_csr_row_normalize_l2 if norm == "l2" else inplace_csr_row_normalize_l1)(want)
    assert ours.data.dtype == want.data.dtype
    np.testing.assert_array_equal(ours.data, want.data)
    assert np.array_equal(np.signbit(ours.data), np.signbit(want.data))


def test_row_normalisation_leaves_inexact_sums_to_sklearn():
    X = sp.csr_matrix(np.array([[2.0**27, 1.0]]))  # a square of 2**54: sums no longer exact
    data = X.data.copy()
    assert not _transform._normalize_counts(X, "l2")
    np.testing.assert_array_equal(X.data, data)  # untouched
    assert _transform._normalize_counts(X, "l1")


VALID = [{}, {"n_features": 2**31 - 2, "norm": None}, {"analyzer": "char", "ngram_range": (2, 4)},
         {"stop_words": "english", "strip_accents": "unicode"}, {"stop_words": ["a", "b"], "token_pattern": r"\b\w+\b"},
         {"lowercase": np.True_, "binary": True, "dtype": np.float32, "decode_error": "replace", "encoding": "latin-1"},
         {"strip_accents": str.lower, "analyzer": "char_wb", "token_pattern": None}]
INVALID_OR_WARNED = [{"n_features": 2**31 - 1}, {"n_features": 0}, {"ngram_range": (2, 1)}, {"ngram_range": [1, 2]},
                     {"stop_words": ("a",)}, {"stop_words": "french"}, {"lowercase": 1}, {"alternate_sign": None},
                     {"decode_error": "bad"}, {"strip_accents": ""}, {"encoding": b"utf-8"}, {"norm": "max"},
                     {"analyzer": "char", "stop_words": "english"}, {"analyzer": "char_wb", "token_pattern": r"\b\w+\b"},
                     {"analyzer": "char", "tokenizer": str.split}, {"input": "file"}, {"preprocessor": str.lower}]


@pytest.mark.parametrize("params", VALID)
def test_fit_without_sklearn_where_sklearn_accepts_silently(params):
    assert HashingVectorizer(**params)._valid_without_sklearn()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Reference(**params).fit(["a b"])


@pytest.mark.parametrize("params", INVALID_OR_WARNED)
def test_fit_asks_sklearn_where_it_raises_or_warns(params):
    assert not HashingVectorizer(**params)._valid_without_sklearn()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            Reference(**params).fit(["a b"])
        except (ValueError, TypeError):
            return
    assert caught or params in ({"input": "file"}, {"preprocessor": str.lower}), params  # only not accelerated
