"""The public estimators: each model's core class made a scikit-learn
estimator (``ClassifierMixin``, ``BaseEstimator``: parameters, cloning,
tags, metadata routing, scikit-learn's ``NotFittedError``).

``MODELS`` maps every public estimator class name to its class: model files
instantiate only these (never a class named by a file).
"""

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from .categorical import CategoricalNB as _CategoricalNB
from .columnwise import ColumnwiseNB
from .discrete import BernoulliNB as _BernoulliNB
from .discrete import ComplementNB as _ComplementNB
from .discrete import MultinomialNB as _MultinomialNB
from .gaussian import GaussianNB as _GaussianNB
from .kernel_density import KernelDensityNB as _KernelDensityNB
from .normal import NormalBayesClassifier as _NormalBayesClassifier
from .poisson import PoissonNB as _PoissonNB

MODELS = {"ColumnwiseNB": ColumnwiseNB}  # a composition of models: scikit-learn's kind throughout


def _public(cls):
    """Enter ``cls`` in MODELS with its core's documentation; scikit-learn's NotFittedError for it."""
    cls.__doc__ = cls.__mro__[1].__doc__
    cls._NotFittedError = NotFittedError
    MODELS[cls.__name__] = cls
    return cls


@_public
class BernoulliNB(_BernoulliNB, ClassifierMixin, BaseEstimator): ...


@_public
class CategoricalNB(_CategoricalNB, ClassifierMixin, BaseEstimator): ...


@_public
class ComplementNB(_ComplementNB, ClassifierMixin, BaseEstimator): ...


@_public
class GaussianNB(_GaussianNB, ClassifierMixin, BaseEstimator): ...


@_public
class KernelDensityNB(_KernelDensityNB, ClassifierMixin, BaseEstimator): ...


@_public
class MultinomialNB(_MultinomialNB, ClassifierMixin, BaseEstimator): ...


@_public
class NormalBayesClassifier(_NormalBayesClassifier, ClassifierMixin, BaseEstimator): ...


@_public
class PoissonNB(_PoissonNB, ClassifierMixin, BaseEstimator): ...
