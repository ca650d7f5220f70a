"""nbgpu: naive Bayes classifiers on CPU and GPU, written once against the Array API.

Every estimator takes numpy, cupy, torch and array-api-strict arrays, and
scipy or cupyx sparse matrices, and returns results in the namespace and on
the device of its input.
"""

from ._categorical import CategoricalNB
from ._discrete import BernoulliNB, ComplementNB, MultinomialNB
from ._gaussian import GaussianNB
from ._persistence import load, save

__version__ = "0.1.0"

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ComplementNB",
    "GaussianNB",
    "MultinomialNB",
    "__version__",
    "load",
    "save",
]
