"""A model family's declarations (nbgpu/_estimator/traits.py): one Traits per class, read the
same from the class (model files, before a model exists) and from a model."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu
from nbgpu._estimator.traits import Traits

MODELS = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB", "CategoricalNB",
          "NormalBayesClassifier", "KernelDensityNB", "ColumnwiseNB"]


@pytest.mark.parametrize("name", MODELS)
def test_every_model_declares_its_traits_on_the_class_and_the_model(name):
    cls = getattr(nbgpu, name)
    assert isinstance(cls._traits, Traits)
    model = cls([("g", nbgpu.GaussianNB(), [0])]) if name == "ColumnwiseNB" else cls()
    assert isinstance(model._traits, Traits)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model._traits.lazy_parameters = False
    with pytest.raises(TypeError):  # the deferred parameters are read-only too
        model._traits.deferred_parameters["x"] = "y"


def test_a_model_changes_only_what_it_declares():
    count, complement = nbgpu.MultinomialNB._traits, nbgpu.ComplementNB._traits
    assert dataclasses.replace(count, scores_are_log_likelihoods=False) == complement
    assert count.sparse_statistics == ("feature_count",) and not count.acts_on_elements
    assert nbgpu.PoissonNB._traits.has_base_measure and nbgpu.PoissonNB._traits.acts_on_elements


def test_traits_that_depend_on_parameters_follow_them():
    assert nbgpu.BernoulliNB()._traits.acts_on_elements  # binarize=0.0
    assert not nbgpu.BernoulliNB()._traits.sums_show_nonfinite  # NaN > 0 is False
    plain = nbgpu.BernoulliNB(binarize=None)._traits
    assert not plain.acts_on_elements and plain.sums_show_nonfinite
    assert nbgpu.KernelDensityNB(kernel="tophat")._traits.excludes
    assert not nbgpu.KernelDensityNB(kernel="gaussian")._traits.excludes
    parts = nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0]), ("k", nbgpu.KernelDensityNB(kernel="tophat"), [1])])
    assert parts._traits.excludes and parts._traits.raw_statistics == ("points",)
    assert not parts._traits.sums_show_nonfinite  # a KernelDensityNB part keeps its points


def test_malformed_parts_leave_the_refusal_to_fit():
    from sklearn.preprocessing import StandardScaler

    model = nbgpu.ColumnwiseNB([("s", StandardScaler(), [0])])
    assert model._traits == nbgpu.ColumnwiseNB._traits
    with pytest.raises(TypeError, match="Part 's' of `estimators`"):
        model.fit(np.ones((4, 1)), [0, 1, 0, 1])


def test_binarizing_sums_a_sparse_xs_duplicate_entries_first():
    # Two entries of 0.3 at one place are the value 0.6 (> binarize), not twice 0.3: a model
    # whose traits say it acts on elements sums them before binarizing.
    X = sp.csr_matrix((np.array([0.3, 0.3, 0.9]), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))
    y = [0, 1]
    sparse = nbgpu.BernoulliNB(binarize=0.5).fit(X, y)
    dense = nbgpu.BernoulliNB(binarize=0.5).fit(X.toarray(), y)
    np.testing.assert_array_equal(sparse.feature_count_, dense.feature_count_)
    assert sparse.feature_count_[0, 0] == 1
