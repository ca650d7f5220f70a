"""nbgpu._estimator.feature_names against scikit-learn's private helpers.

``feature_names_of`` / ``check_feature_names`` must give what
``sklearn.utils.validation._get_feature_names`` / ``_check_feature_names``
give on the same inputs: return value, warnings (category and message),
errors (type and message), and the estimator's ``feature_names_in_``.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import subprocess_env

from nbgpu._estimator.feature_names import check_feature_names, feature_names_of

validation = pytest.importorskip("sklearn.utils.validation")


class Dummy:
    """A stand-in estimator: only its class name and attributes matter."""


class OtherName:
    """A second stand-in, so the class name in the warnings is checked."""


def outcome(function, *args, **kwargs):
    """``(kind, value, warnings)`` of one call, comparable between implementations.

    kind is "returned" (value: the return value as a list, or None) or
    "raised" (value: exception type and message); warnings: (category,
    message) of each warning issued.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = function(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 -- compared, not swallowed
            kind, value = "raised", (type(error), str(error))
        else:
            kind = "returned"
            value = None if result is None else (type(result), result.dtype, result.tolist())
    return kind, value, [(w.category, str(w.message)) for w in caught]


def fitted_state(estimator):
    """The estimator's ``feature_names_in_`` as (type, dtype, list), or "absent"."""
    if not hasattr(estimator, "feature_names_in_"):
        return "absent"
    names = estimator.feature_names_in_
    return type(names), names.dtype, names.tolist()


def assert_same_names(X):
    ours = outcome(feature_names_of, X)
    theirs = outcome(validation._get_feature_names, X)
    assert ours == theirs
    return ours


def assert_same_check(fit_X, X, cls=Dummy, *, fit_names=None):
    """Fit (reset=True) on fit_X, then check (reset=False) X, with both implementations."""
    results = []
    for get, check in ((feature_names_of, check_feature_names),
                       (validation._get_feature_names, validation._check_feature_names)):
        estimator = cls()
        fitted = outcome(check, estimator, fit_X, reset=True)
        if fit_names is not None:
            estimator.feature_names_in_ = fit_names
        after_fit = fitted_state(estimator)
        checked = outcome(check, estimator, X, reset=False)
        results.append((fitted, after_fit, checked, fitted_state(estimator)))
    assert results[0] == results[1]
    return results[0]


# --- without pandas ---------------------------------------------------------

@pytest.mark.parametrize("X", [
    np.zeros((3, 2)),
    np.zeros((3, 0)),
    [[1, 2], [3, 4]],
    [["a", "b"]],
    np.array([[1, 2]], dtype=object),
    None,
], ids=["ndarray", "ndarray-no-columns", "list", "list-of-str", "object-ndarray", "None"])
def test_no_names_for_non_dataframes(X):
    assert assert_same_names(X) == ("returned", None, [])


def test_arrays_fit_and_check():
    a = np.zeros((2, 3))
    assert assert_same_check(a, a) == (("returned", None, []), "absent", ("returned", None, []), "absent")
    assert assert_same_check(a, [[1, 2, 3]])[2] == ("returned", None, [])


def test_sparse_has_no_names():
    sp = pytest.importorskip("scipy.sparse")
    assert assert_same_names(sp.csr_matrix(np.eye(2))) == ("returned", None, [])


class Interchange:
    """An object speaking only the data frame interchange protocol."""

    def __init__(self, names):
        self.names = names

    def __dataframe__(self, nan_as_null=False, allow_copy=True):
        return self

    def column_names(self):
        return iter(self.names)


def test_interchange_protocol_object():
    # scikit-learn before its narwhals-based detection read these names;
    # 1.9 does not recognise such objects (None), so this is not compared.
    names = feature_names_of(Interchange(["a", "b"]))
    assert names.dtype == object and names.tolist() == ["a", "b"]
    assert feature_names_of(Interchange([0, 1])) is None
    assert feature_names_of(Interchange([])) is None
    with pytest.raises(TypeError, match=r"\['int', 'str'\] as feature name"):
        feature_names_of(Interchange(["a", 1]))


def test_imports_neither_sklearn_nor_pandas():
    code = ("import sys, nbgpu._estimator.feature_names; "
            "print(sorted(m for m in ('sklearn', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


# --- pandas -----------------------------------------------------------------

@pytest.fixture
def pd():
    return pytest.importorskip("pandas")


def frame(pd, columns):
    return pd.DataFrame(np.arange(len(columns) * 2).reshape(2, len(columns)), columns=columns)


@pytest.mark.parametrize("columns, expected", [
    (["a", "b", "c"], ["a", "b", "c"]),
    ([0, 1, 2], None),
    ([0.5, 1.5], None),
    ([np.int64(1), 2.0], None),
    ([("a", "b"), ("c", "d")], None),
    ([], None),
    ("range", None),
    ("string-dtype", ["x", "y"]),
    ("category", ["x", "y"]),
    ("multiindex", None),
], ids=str)
def test_dataframe_names(pd, columns, expected):
    if columns == "range":
        columns = pd.RangeIndex(3)
    elif columns == "string-dtype":
        columns = pd.Index(["x", "y"], dtype="string")
    elif columns == "category":
        columns = pd.CategoricalIndex(["x", "y"])
    elif columns == "multiindex":
        columns = pd.MultiIndex.from_tuples([("a", "b"), ("c", "d")])
    kind, value, caught = assert_same_names(frame(pd, columns))
    assert kind == "returned" and caught == []
    if expected is None:
        assert value is None
    else:
        assert value == (np.ndarray, np.dtype(object), expected)


@pytest.mark.parametrize("columns, types", [
    (["a", 1], "['int', 'str']"),
    (["a", 1, 2.0], "['float', 'int', 'str']"),
    ([np.str_("a"), "b"], "['str', 'str_']"),
], ids=str)
def test_mixed_names_raise(pd, columns, types):
    X = frame(pd, columns)
    if len({type(c) for c in X.columns}) == 1:  # pandas < 3 turns np.str_ column names into str
        assert assert_same_names(X)[0] == "returned"
        return
    kind, (error, message), caught = assert_same_names(X)
    assert kind == "raised" and error is TypeError and caught == []
    assert f"your input has {types} as feature name / column name types" in message


def test_series_has_no_names(pd):
    assert assert_same_names(pd.Series([1, 2], name="a")) == ("returned", None, [])


def test_duplicate_names_kept(pd):
    # scikit-learn 1.9 (narwhals) raises DuplicateError here; earlier releases,
    # and this module, return the names as they are.
    assert feature_names_of(frame(pd, ["a", "a"])).tolist() == ["a", "a"]


def test_fit_with_names_check_same(pd):
    X = frame(pd, ["a", "b"])
    fitted, state, checked, _ = assert_same_check(X, X)
    assert fitted == ("returned", None, []) and state[2] == ["a", "b"]
    assert checked == ("returned", None, [])


@pytest.mark.parametrize("cls", [Dummy, OtherName])
def test_fit_with_names_check_array_warns(pd, cls):
    _, _, checked, _ = assert_same_check(frame(pd, ["a", "b"]), np.zeros((2, 2)), cls)
    assert checked == ("returned", None, [
        (UserWarning, f"X does not have valid feature names, but {cls.__name__} was fitted with feature names")])


@pytest.mark.parametrize("cls", [Dummy, OtherName])
def test_fit_without_names_check_names_warns(pd, cls):
    _, state, checked, _ = assert_same_check(np.zeros((2, 2)), frame(pd, ["a", "b"]), cls)
    assert state == "absent"
    assert checked == ("returned", None, [
        (UserWarning, f"X has feature names, but {cls.__name__} was fitted without feature names")])


def test_fit_int_columns_check_str_columns_warns(pd):
    _, state, checked, _ = assert_same_check(frame(pd, [0, 1]), frame(pd, ["a", "b"]))
    assert state == "absent" and checked[2][0][0] is UserWarning


def test_fit_names_check_int_columns_warns(pd):
    _, _, checked, _ = assert_same_check(frame(pd, ["a", "b"]), frame(pd, [0, 1]))
    assert checked[2][0][0] is UserWarning and "does not have valid feature names" in checked[2][0][1]


@pytest.mark.parametrize("fit_columns, columns, parts", [
    (["a", "b", "c"], ["c", "a", "b"], ["Feature names must be in the same order as they were in fit.\n"]),
    (["a", "b"], ["a", "z"], ["Feature names unseen at fit time:\n- z\n",
                              "Feature names seen at fit time, yet now missing:\n- b\n"]),
    (["a", "b"], ["a", "b", "c"], ["Feature names unseen at fit time:\n- c\n"]),
    (["a", "b", "c"], ["a", "b"], ["Feature names seen at fit time, yet now missing:\n- c\n"]),
    (["a"], ["b", "c", "d", "e", "f", "g", "h"], ["- b\n- c\n- d\n- e\n- f\n- ...\n"]),
    (list("abcdefg"), ["z"], ["- a\n- b\n- c\n- d\n- e\n- ...\n"]),
    (list("abcde"), ["z"], ["- a\n- b\n- c\n- d\n- e\n"]),
    (["a", "a"], ["a"], ["Feature names must be in the same order as they were in fit.\n"]),
], ids=["reordered", "renamed", "extra", "missing", "many-unseen", "many-missing", "five-missing", "duplicates"])
def test_mismatch_raises(pd, fit_columns, columns, parts):
    if len(set(fit_columns)) < len(fit_columns):  # narwhals (scikit-learn 1.9) rejects duplicates in fit
        fit_names = np.asarray(fit_columns, dtype=object)
        _, _, checked, _ = assert_same_check(np.zeros((2, 1)), frame(pd, columns), fit_names=fit_names)
    else:
        _, _, checked, _ = assert_same_check(frame(pd, fit_columns), frame(pd, columns))
    kind, (error, message), caught = checked
    assert kind == "raised" and error is ValueError and caught == []
    assert message.startswith("The feature names should match those that were passed during fit.\n")
    for part in parts:
        assert part in message
    if "...\n" not in "".join(parts):
        assert "- ...\n" not in message


def test_check_mixed_columns_raises(pd):
    _, _, checked, _ = assert_same_check(frame(pd, ["a", "b"]), frame(pd, ["a", 1]))
    assert checked[0] == "raised" and checked[1][0] is TypeError


def test_fit_mixed_columns_raises(pd):
    fitted, state, _, _ = assert_same_check(frame(pd, ["a", 1]), frame(pd, ["a", "b"]))
    assert fitted[0] == "raised" and fitted[1][0] is TypeError and state == "absent"


@pytest.mark.parametrize("refit", ["ndarray", "int-columns"])
def test_refit_without_names_deletes(pd, refit):
    refit_X = np.zeros((2, 2)) if refit == "ndarray" else frame(pd, [0, 1])
    states = []
    for check in (check_feature_names, validation._check_feature_names):
        estimator = Dummy()
        check(estimator, frame(pd, ["a", "b"]), reset=True)
        assert estimator.feature_names_in_.tolist() == ["a", "b"]
        check(estimator, refit_X, reset=True)
        states.append(fitted_state(estimator))
    assert states == ["absent", "absent"]


def test_refit_with_other_names_replaces(pd):
    states = []
    for check in (check_feature_names, validation._check_feature_names):
        estimator = Dummy()
        check(estimator, frame(pd, ["a", "b"]), reset=True)
        check(estimator, frame(pd, ["c", "d", "e"]), reset=True)
        states.append(fitted_state(estimator))
    assert states[0] == states[1] == (np.ndarray, np.dtype(object), ["c", "d", "e"])


def test_reset_true_never_warns(pd):
    # fitting again on data without names after fitting with names: no warning
    assert assert_same_check(frame(pd, ["a"]), frame(pd, ["a"]))[0] == ("returned", None, [])
    for check in (check_feature_names, validation._check_feature_names):
        estimator = Dummy()
        check(estimator, frame(pd, ["a"]), reset=True)
        assert outcome(check, estimator, np.zeros((1, 1)), reset=True) == ("returned", None, [])


def test_narwhals_dataframe(pd):
    v2 = pytest.importorskip("narwhals.stable.v2")
    X = v2.from_native(frame(pd, ["a", "b"]), eager_only=True)
    assert assert_same_names(X)[1] == (np.ndarray, np.dtype(object), ["a", "b"])
    assert assert_same_names(v2.from_native(frame(pd, [0, 1]), eager_only=True)) == ("returned", None, [])
    # scikit-learn recognises only narwhals.stable.v2 frames, not the main namespace's
    main = pytest.importorskip("narwhals")
    assert assert_same_names(main.from_native(frame(pd, ["a", "b"]), eager_only=True)) == ("returned", None, [])


def test_polars_dataframe():
    pl = pytest.importorskip("polars")
    assert assert_same_names(pl.DataFrame({"a": [1], "b": [2]}))[1] == (np.ndarray, np.dtype(object), ["a", "b"])
    assert_same_check(pl.DataFrame({"a": [1], "b": [2]}), pl.DataFrame({"b": [1], "a": [2]}))


def test_pyarrow_table():
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"a": [1], "b": [2]})
    assert assert_same_names(table)[1] == (np.ndarray, np.dtype(object), ["a", "b"])
