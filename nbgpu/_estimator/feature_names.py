"""Feature names of input data, without importing scikit-learn.

Gives the results, warnings and errors of scikit-learn's private
``_get_feature_names`` and ``_check_feature_names`` with only the standard
library and numpy (importing scikit-learn is slow; the core must not pay it).

Data frames are recognised without importing their libraries: a class is
looked up in ``sys.modules`` (an object of it cannot exist before its library
is imported). Recognised, as scikit-learn does: pandas (and fireducks.pandas),
modin, cuDF and polars data frames (``columns``), pyarrow tables
(``column_names``), ``narwhals.stable.v2`` data frames (not those of
``narwhals`` itself, as in scikit-learn) and objects implementing
``__narwhals_dataframe__``. Any other object with ``__dataframe__`` (the
interchange protocol) gives its ``column_names()``, and duplicate column
names are returned as they are, as scikit-learn did before narwhals (1.9
returns None for the former and raises narwhals' ``DuplicateError`` for the
latter).
"""

from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np
import scipy.sparse as sp

__all__ = ["check_feature_names", "feature_names_of"]

# modules whose ``DataFrame`` class has ``columns`` (narwhals: only its stable.v2 namespace)
_DATA_FRAME_MODULES = ("pandas", "fireducks.pandas", "modin.pandas", "cudf", "polars", "narwhals.stable.v2")


def _is_instance(X, module_name, class_name):
    """Whether X is a ``module_name.class_name``; False when that module is not imported."""
    cls = getattr(sys.modules.get(module_name), class_name, None)  # None too while the module's body runs
    return isinstance(cls, type) and isinstance(X, cls)


def feature_names_of(X):
    """Feature names of X, as scikit-learn's ``_get_feature_names``: an object array
    of the column names when X is a data frame whose column names are all ``str``,
    else None; a TypeError (scikit-learn's message) when X mixes ``str`` column names
    with names of other types (``numpy.str_`` included)."""
    if isinstance(X, (np.ndarray, list, tuple)) or sp.issparse(X):  # (asked at every call: a short way out)
        return None
    if any(_is_instance(X, name, "DataFrame") for name in _DATA_FRAME_MODULES):
        columns = list(X.columns)
    elif _is_instance(X, "pyarrow", "Table"):
        columns = list(X.column_names)
    elif inspect.getattr_static(X, "__narwhals_dataframe__", None) is not None:
        columns = list(X.__narwhals_dataframe__().columns)
    elif hasattr(X, "__dataframe__"):
        columns = list(X.__dataframe__().column_names())
    else:
        return None
    if not columns:
        return None
    types = sorted({type(name).__qualname__ for name in columns})
    if len(types) > 1 and "str" in types:
        msg = (
            "Feature names are only supported if all input features have string names, "
            f"but your input has {types} as feature name / column name types. "
            "If you want feature names to be stored and validated, you must convert "
            "them all to strings, by using X.columns = X.columns.astype(str) for "
            "example. Otherwise you can remove feature / column names from your input "
            "data, or convert them all to a non-string data type."
        )
        raise TypeError(msg)
    return np.array(columns, dtype=object) if types == ["str"] else None


def check_feature_names(estimator, X, *, reset):
    """Set or check ``estimator.feature_names_in_``, as scikit-learn's ``_check_feature_names``.

    ``reset`` (``fit``, a first ``partial_fit``): set it to X's feature names,
    or delete it when X has none. Otherwise warn (UserWarning) when only one of
    X and the estimator has names, and raise ValueError when they differ,
    listing (sorted, at most five each) the names unseen at fit time and those
    missing, or saying that the order differs."""
    names = feature_names_of(X)
    if reset:
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_  # fitted again, on data without names
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    estimator_name = type(estimator).__name__
    if fitted is None and names is not None:
        msg = f"X has feature names, but {estimator_name} was fitted without feature names"
        warnings.warn(msg, UserWarning)
    elif fitted is not None and names is None:
        msg = f"X does not have valid feature names, but {estimator_name} was fitted with feature names"
        warnings.warn(msg, UserWarning)
    if fitted is None or names is None or (len(fitted) == len(names) and not np.any(fitted != names)):
        return
    unseen = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))
    message = "The feature names should match those that were passed during fit.\n"
    for title, group in (("unseen at fit time", unseen), ("seen at fit time, yet now missing", missing)):
        if group:
            listed = [f"- {name}\n" for name in group[:5]] + (["- ...\n"] if len(group) > 5 else [])
            message += f"Feature names {title}:\n" + "".join(listed)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)
