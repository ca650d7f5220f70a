"""nbgpu: naive Bayes classifiers on CPU and GPU, written once against the Array API.

Every estimator takes numpy, cupy, torch and array-api-strict arrays, and
scipy or cupyx sparse matrices, and returns results in the namespace and on
the device of its input. ARCHITECTURE.md (top of the repository) maps the
package's layers and the one module that owns each concept.
"""

# numpy is imported by the array layer (nbgpu/_array/__init__.py checks its
# version), not here: the command line installs its signal handlers first.
from typing import TYPE_CHECKING  # (typing: ~5 ms of importing nbgpu; IDEs read no other spelling)

from ._version import __version__

# Public names and the modules that define them. They are imported on first
# use (PEP 562), so that starting the command line (``nbgpu --help``) or
# reading ``nbgpu.__version__`` does not load scikit-learn and scipy.
_PUBLIC = {
    "BernoulliNB": "._models.estimators",
    "CategoricalNB": "._models.estimators",
    "ColumnwiseNB": "._models.columnwise",
    "ComplementNB": "._models.estimators",
    "GaussianNB": "._models.estimators",
    "InconsistentVersionWarning": "._estimator.base",
    "KernelDensityNB": "._models.estimators",
    "MultinomialNB": "._models.estimators",
    "NormalBayesClassifier": "._models.estimators",
    "PoissonNB": "._models.estimators",
    "SemiSupervisedNB": "._models.semi_supervised",
    "SmoothingSearchCV": "._interop.smoothing_search",
    "chi2": "._estimator.feature_selection",
    "fit_stream": "._interop.streaming",
    "load": "._interop.model_files",
    "save": "._interop.model_files",
    "svmlight_chunks": "._interop.streaming",
}
# Public modules reachable as attributes (``nbgpu.text``, ``nbgpu.datasets``), imported on first use too.
_SUBPACKAGES = ("datasets", "text")

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ColumnwiseNB",
    "ComplementNB",
    "GaussianNB",
    "InconsistentVersionWarning",
    "KernelDensityNB",
    "MultinomialNB",
    "NormalBayesClassifier",
    "PoissonNB",
    "SemiSupervisedNB",
    "SmoothingSearchCV",
    "__version__",
    "chi2",
    "fit_stream",
    "load",
    "save",
    "svmlight_chunks",
]


if TYPE_CHECKING:  # what IDEs and type checkers read; at run time each name loads on first use
    from . import datasets, text
    from ._estimator.base import InconsistentVersionWarning
    from ._estimator.feature_selection import chi2
    from ._interop.model_files import load, save
    from ._interop.smoothing_search import SmoothingSearchCV
    from ._interop.streaming import fit_stream, svmlight_chunks
    from ._models.columnwise import ColumnwiseNB
    from ._models.estimators import (
        BernoulliNB,
        CategoricalNB,
        ComplementNB,
        GaussianNB,
        KernelDensityNB,
        MultinomialNB,
        NormalBayesClassifier,
        PoissonNB,
    )
    from ._models.semi_supervised import SemiSupervisedNB


def __getattr__(name):
    import importlib

    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)  # which sets the attribute
    module = _PUBLIC.get(name)
    if module is None:
        msg = f"module 'nbgpu' has no attribute {name!r}"
        raise AttributeError(msg)

    importlib.import_module("._interop.dask", __name__)  # registers the Dask adapter with the models
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_SUBPACKAGES))
