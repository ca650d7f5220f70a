"""nbgpu: naive Bayes classifiers on CPU and GPU, written once against the Array API.

Every estimator takes numpy, cupy, torch and array-api-strict arrays, and
scipy or cupyx sparse matrices, and returns results in the namespace and on
the device of its input. ARCHITECTURE.md (top of the repository) maps the
package's layers and the one module that owns each concept.
"""

import numpy as _numpy

if int(_numpy.__version__.split(".")[0]) < 2:
    # numpy 2 is where ndarray implements the Array API standard (.device,
    # to_device, astype) that every model here is written against.
    raise ImportError(f"nbgpu needs numpy >= 2.0; numpy {_numpy.__version__} is installed.")

from ._estimator.feature_selection import chi2
from ._interop import dask as _dask  # noqa: F401  (registers the Dask adapter)
from ._interop.model_files import load, save
from ._interop.smoothing_search import SmoothingSearchCV
from ._interop.streaming import fit_stream, svmlight_chunks
from ._models import (
    BernoulliNB,
    CategoricalNB,
    ColumnwiseNB,
    ComplementNB,
    GaussianNB,
    KernelDensityNB,
    MultinomialNB,
    NormalBayesClassifier,
    PoissonNB,
    SemiSupervisedNB,
)
from ._version import __version__

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "ColumnwiseNB",
    "ComplementNB",
    "GaussianNB",
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
