"""The models, one small file per family, and the table of them by name.

``MODELS`` maps every public estimator class name to its class: model files
instantiate only these (never a class named by a file).
"""

from .categorical import CategoricalNB
from .columnwise import ColumnwiseNB
from .discrete import BernoulliNB, ComplementNB, MultinomialNB
from .gaussian import GaussianNB
from .kernel_density import KernelDensityNB
from .normal import NormalBayesClassifier
from .poisson import PoissonNB
from .semi_supervised import SemiSupervisedNB

MODELS = {
    cls.__name__: cls
    for cls in (
        BernoulliNB,
        CategoricalNB,
        ColumnwiseNB,
        ComplementNB,
        GaussianNB,
        KernelDensityNB,
        MultinomialNB,
        NormalBayesClassifier,
        PoissonNB,
    )
}

__all__ = [
    "MODELS",
    "BernoulliNB",
    "CategoricalNB",
    "ColumnwiseNB",
    "ComplementNB",
    "GaussianNB",
    "KernelDensityNB",
    "MultinomialNB",
    "NormalBayesClassifier",
    "PoissonNB",
    "SemiSupervisedNB",  # a meta-estimator over the models: not in MODELS (no model file of its own)
]
