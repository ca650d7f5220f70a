"""Feature names of input data, without importing scikit-learn.

scikit-learn's ``_get_feature_names`` and ``_check_feature_names`` (in
``sklearn.utils.validation``) are private, so they may change or move in any
release, and importing scikit-learn is slow, which the core estimators must
not pay on every command. This module gives the same results, warnings and
errors with only the standard library and numpy.

Data frames are recognised without importing their libraries: a class is only
looked up in ``sys.modules`` when its library is already imported (an object
of that class cannot exist otherwise). Recognised, as scikit-learn does:
pandas (and fireducks.pandas), modin and cuDF data frames (``columns``),
polars data frames (``columns``), pyarrow tables (``column_names``),
``narwhals.stable.v2`` data frames (not those of ``narwhals`` itself, as in
scikit-learn) and objects implementing ``__narwhals_dataframe__``. Any other
object with ``__dataframe__`` (the data frame interchange protocol) gives the
names of its ``column_names()``, as scikit-learn did before it detected data
frames with narwhals (scikit-learn 1.9 returns None for such objects).

Duplicate column names are returned as they are, as scikit-learn did before
narwhals; scikit-learn 1.9 raises narwhals' ``DuplicateError`` for them.
"""

from __future__ import annotations

import inspect
import sys
import warnings

import numpy as np

__all__ = ["check_feature_names", "feature_names_of"]

# modules whose ``DataFrame`` class has ``columns`` (narwhals: only its stable.v2 namespace)
_DATA_FRAME_MODULES = ("pandas", "fireducks.pandas", "modin.pandas", "cudf", "polars", "narwhals.stable.v2")

_MIXED_TYPES_MESSAGE = (
    "Feature names are only supported if all input features have string names, "
    "but your input has {types} as feature name / column name types. "
    "If you want feature names to be stored and validated, you must convert "
    "them all to strings, by using X.columns = X.columns.astype(str) for "
    "example. Otherwise you can remove feature / column names from your input "
    "data, or convert them all to a non-string data type."
)

_MAX_NAMES_LISTED = 5


def _is_instance(X, module_name, class_name):
    """Whether X is a ``module_name.class_name``; False when that module is not imported."""
    cls = getattr(sys.modules.get(module_name), class_name, None)  # None too while the module's body runs
    return isinstance(cls, type) and isinstance(X, cls)


def _column_names(X):
    """The column labels of a data frame in order, or None when X is not one."""
    if any(_is_instance(X, name, "DataFrame") for name in _DATA_FRAME_MODULES):
        return list(X.columns)
    if _is_instance(X, "pyarrow", "Table"):
        return list(X.column_names)
    try:
        inspect.getattr_static(X, "__narwhals_dataframe__")
    except AttributeError:
        pass
    else:
        return list(X.__narwhals_dataframe__().columns)
    if hasattr(X, "__dataframe__"):
        return list(X.__dataframe__().column_names())
    return None


def feature_names_of(X):
    """Feature names of X, as scikit-learn's ``_get_feature_names``.

    Parameters
    ----------
    X : {ndarray, dataframe, list, sparse matrix} of shape (n_samples, n_features)
        Input data. Only data frames have feature names (see the module
        docstring for the kinds recognised); anything else has none.

    Returns
    -------
    names : ndarray of object of shape (n_features,) or None
        The column names when X is a data frame whose column names are all
        ``str``; None when X is not a data frame, has no columns, or has no
        ``str`` column name.

    Raises
    ------
    TypeError
        When X mixes ``str`` column names with names of other types
        (``numpy.str_`` included), with scikit-learn's message.
    """
    columns = _column_names(X)
    if not columns:
        return None
    types = sorted({type(name).__qualname__ for name in columns})
    if len(types) > 1 and "str" in types:
        raise TypeError(_MIXED_TYPES_MESSAGE.format(types=types))
    return np.array(columns, dtype=object) if types == ["str"] else None


def _listed(names):
    """Lines ``- name`` for at most five of the sorted ``names``, then ``- ...`` if there are more."""
    lines = [f"- {name}\n" for name in names[:_MAX_NAMES_LISTED]]
    if len(names) > _MAX_NAMES_LISTED:
        lines.append("- ...\n")
    return "".join(lines)


def check_feature_names(estimator, X, *, reset):
    """Set or check ``estimator.feature_names_in_``, as scikit-learn's ``_check_feature_names``.

    ``reset`` (``fit``, a first ``partial_fit``): set it to the feature names
    of X, or delete it when X has none. Otherwise warn (UserWarning) when only
    one of X and the estimator has feature names, and raise ValueError when
    they differ, listing (sorted, at most five each) the names unseen at fit
    time and those missing, or saying that the order differs.
    """
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
    if unseen:
        message += "Feature names unseen at fit time:\n" + _listed(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _listed(missing)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)
