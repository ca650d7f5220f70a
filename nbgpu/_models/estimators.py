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


MODELS = {}


def _estimator(core):
    """``core`` as a scikit-learn estimator of the same name and documentation (entered in MODELS)."""
    namespace = {"__doc__": core.__doc__, "__module__": __name__, "__qualname__": core.__name__,
                 "_NotFittedError": NotFittedError}
    MODELS[core.__name__] = cls = type(core)(core.__name__, (core, ClassifierMixin, BaseEstimator), namespace)
    return cls


BernoulliNB = _estimator(_BernoulliNB)
CategoricalNB = _estimator(_CategoricalNB)
ComplementNB = _estimator(_ComplementNB)
GaussianNB = _estimator(_GaussianNB)
KernelDensityNB = _estimator(_KernelDensityNB)
MultinomialNB = _estimator(_MultinomialNB)
NormalBayesClassifier = _estimator(_NormalBayesClassifier)
PoissonNB = _estimator(_PoissonNB)

MODELS["ColumnwiseNB"] = ColumnwiseNB  # a composition of models: scikit-learn's kind throughout
