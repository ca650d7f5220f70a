"""nbgpu: naive Bayes classifiers on CPU and GPU, written once against the Array API.

Every estimator takes numpy, cupy, torch and array-api-strict arrays, and
scipy or cupyx sparse matrices, and returns results in the namespace and on
the device of its input.
"""

from ._categorical import CategoricalNB
from ._columnwise import ColumnwiseNB
from ._discrete import BernoulliNB, ComplementNB, MultinomialNB
from ._gaussian import GaussianNB
from ._normal import NormalBayesClassifier
from ._persistence import load, save
from ._poisson import PoissonNB
from ._streaming import fit_stream, svmlight_chunks

__version__ = "0.1.0"

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ColumnwiseNB",
    "ComplementNB",
    "GaussianNB",
    "MultinomialNB",
    "NormalBayesClassifier",
    "PoissonNB",
    "__version__",
    "fit_stream",
    "load",
    "save",
    "svmlight_chunks",
]
