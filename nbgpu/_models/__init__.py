"""The models, one small file per family.

Each file holds its family's core class: statistics, parameters and joint
log-likelihood, free of scikit-learn (the command line and model files use
them without importing it). The public estimators, scikit-learn estimators
made of those classes, are in ``estimators.py``; nothing is imported here,
so that importing a core class loads no scikit-learn.
"""

import importlib

# The core class of every model a model file can hold, by name: the module
# that defines it (ColumnwiseNB, a composition of models, is scikit-learn's
# kind throughout: its public class is its core).
_CORE = {
    "BernoulliNB": "discrete",
    "CategoricalNB": "categorical",
    "ColumnwiseNB": "columnwise",
    "ComplementNB": "discrete",
    "GaussianNB": "gaussian",
    "KernelDensityNB": "kernel_density",
    "MultinomialNB": "discrete",
    "NormalBayesClassifier": "normal",
    "PoissonNB": "poisson",
}


def model_class(name, *, core=False):
    """The public estimator class called ``name`` (``core=True``: its core
    class), or None when no model file holds such a model."""
    module = _CORE.get(name) if isinstance(name, str) else None
    if module is None:
        return None
    if core:
        return getattr(importlib.import_module(f".{module}", __name__), name)
    from .estimators import MODELS

    return MODELS[name]
