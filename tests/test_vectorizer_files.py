"""A model file's vectorizer: nbgpu's own HashingVectorizer is saved, and
loading gives it back (the same parameters and matrices as scikit-learn's)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashingVectorizer

import nbgpu
from nbgpu.text import HashingVectorizer

DOCS = ["the cat sat on the mat", "a dog and a cat", "stock prices fell sharply", "markets and prices"]
Y = np.array([0, 0, 1, 1])
SETTINGS = {"n_features": 2**10, "ngram_range": (1, 2), "alternate_sign": False, "norm": None, "stop_words": ["a"]}


@pytest.mark.parametrize("cls", [HashingVectorizer, SklearnHashingVectorizer], ids=["nbgpu", "sklearn"])
def test_a_saved_vectorizer_comes_back_as_nbgpus(tmp_path, cls):
    vectorizer = cls(**SETTINGS)
    model = nbgpu.MultinomialNB().fit(vectorizer.transform(DOCS), Y)
    nbgpu.save(model, tmp_path / "m.nbgpu", vectorizer=vectorizer)
    back, loaded = nbgpu.load(tmp_path / "m.nbgpu", return_vectorizer=True)
    assert type(loaded) is HashingVectorizer
    assert loaded.get_params() == HashingVectorizer(**SETTINGS).get_params()
    expected = SklearnHashingVectorizer(**SETTINGS).transform(DOCS)
    assert (loaded.transform(DOCS) != expected).nnz == 0
    np.testing.assert_array_equal(back.predict(loaded.transform(DOCS)), model.predict(expected))


def test_other_vectorizers_are_still_refused(tmp_path):
    from sklearn.feature_extraction.text import CountVectorizer

    model = nbgpu.MultinomialNB().fit(np.eye(4), Y)
    with pytest.raises(TypeError, match="`vectorizer` must be a nbgpu.text.HashingVectorizer, sklearn.* or a dict"):
        nbgpu.save(model, tmp_path / "m.nbgpu", vectorizer=CountVectorizer())


def test_a_dict_of_parameters_saves_that_vectorizer(tmp_path):
    # What the command line stores: no vectorizer object, no scikit-learn.
    from nbgpu.text import HashingVectorizer

    params = {"n_features": 4, "ngram_range": (1, 2), "alternate_sign": False}
    model = nbgpu.MultinomialNB().fit(np.eye(4), Y)
    nbgpu.save(model, tmp_path / "d.nbgpu", vectorizer=params)
    nbgpu.save(model, tmp_path / "o.nbgpu", vectorizer=HashingVectorizer(**params))
    (_, from_dict), (_, from_object) = (nbgpu.load(tmp_path / f"{n}.nbgpu", return_vectorizer=True) for n in "do")
    assert from_dict.get_params() == from_object.get_params() == HashingVectorizer(**params).get_params()
    with pytest.raises(ValueError, match="n_features"):
        nbgpu.save(model, tmp_path / "w.nbgpu", vectorizer={"n_features": 8})
