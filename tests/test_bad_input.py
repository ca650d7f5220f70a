"""Bad input: a clear ValueError/TypeError naming the argument, never an
IndexError or a silent NaN; a call that raises leaves a fitted model exactly
as it was.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError

import nbgpu

from _data import COUNT_MODELS, MODELS, assert_snapshots_equal, ours, random_data, snapshot
from conftest import to_numpy

ERRORS = (ValueError, TypeError)


def _fitted(name, **params):
    X, y = random_data(name, n=40, d=4, k=3, seed=51)
    return ours(name, **params).fit(X, y), X, y


def _with(X, i, j, value):
    X = X.copy()
    X[i, j] = value
    return X


# --------------------------------------------------------------------------- #
# X
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name", MODELS)
def test_non_finite_X_in_fit(name, bad):
    model, X, y = _fitted(name)
    with pytest.raises(ValueError, match=r"Input X contains (NaN|infinity): \w+ needs finite values in `X`"):
        ours(name).fit(_with(X, 3, 1, bad), y)


@pytest.mark.parametrize("name", MODELS)
def test_non_finite_X_in_predict(name):
    model, X, _ = _fitted(name)
    for method in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        with pytest.raises(ValueError, match=r"Input X contains NaN: .*`X`"):
            getattr(model, method)(_with(X, 0, 0, np.nan))


@pytest.mark.parametrize("name", MODELS)
def test_non_finite_sparse_X(name):
    model, X, y = _fitted(name)
    with pytest.raises(ValueError, match=r"Input X contains NaN: .*`X`"):
        ours(name).fit(sp.csr_matrix(_with(X, 2, 2, np.nan)), y)
    with pytest.raises(ValueError, match=r"Input X contains infinity: .*`X`"):
        model.predict(sp.csc_matrix(_with(X, 2, 2, np.inf)))


@pytest.mark.parametrize("name", COUNT_MODELS)
def test_negative_counts(name):
    model, X, y = _fitted(name)
    bad = _with(X, 5, 2, -1.0)
    with pytest.raises(ValueError, match=rf"Negative values in data passed to {name} \(input X\): `X`.*minimum of -1"):
        ours(name).fit(bad, y)
    with pytest.raises(ValueError, match=r"Negative values.*`X`"):
        model.predict(bad)
    with pytest.raises(ValueError, match=r"Negative values.*`X`"):
        ours(name).fit(sp.csr_matrix(bad), y)


@pytest.mark.parametrize("name", ["GaussianNB", "BernoulliNB"])
def test_negative_values_are_legal_where_not_counts(name):
    X, y = random_data(name, n=40, d=4, seed=52)
    model = ours(name).fit(X - 5.0, y)
    assert np.all(np.isfinite(to_numpy(model.predict_proba(X - 5.0))))


def test_non_integer_categories():
    model, X, y = _fitted("CategoricalNB")
    bad = _with(X, 1, 1, 1.5)
    with pytest.raises(ValueError, match=r"`X`.*whole numbers"):
        ours("CategoricalNB").fit(bad, y)
    with pytest.raises(ValueError, match=r"`X`.*whole numbers"):
        model.predict(bad)
    with pytest.raises(ValueError, match=r"`X`.*whole numbers"):
        ours("CategoricalNB").fit(sp.csr_matrix(bad), y)


def test_negative_categories():
    model, X, y = _fitted("CategoricalNB")
    with pytest.raises(ValueError, match=r"Negative values.*`X`"):
        ours("CategoricalNB").fit(_with(X, 0, 3, -2.0), y)
    with pytest.raises(ValueError, match=r"Negative values.*`X`"):
        model.predict_proba(_with(X, 0, 3, -1.0))


@pytest.mark.parametrize("shape", [(0, 4), (5, 0)], ids=["no_rows", "no_columns"])
@pytest.mark.parametrize("name", MODELS)
def test_empty_X(name, shape):
    with pytest.raises(ValueError, match=r"`X`.*(0 sample|0 feature)"):
        ours(name).fit(np.zeros(shape), np.zeros(shape[0], dtype=int))
    model, _, _ = _fitted(name)
    with pytest.raises(ValueError, match=r"`X`"):
        model.predict(np.zeros(shape))


@pytest.mark.parametrize("name", MODELS)
def test_one_dimensional_X(name):
    with pytest.raises(ValueError, match=r"Expected 2D array for `X`.*reshape"):
        ours(name).fit(np.arange(6.0), np.arange(6) % 2)
    model, X, _ = _fitted(name)
    with pytest.raises(ValueError, match=r"Expected 2D array for `X`"):
        model.predict(X[0])
    with pytest.raises(ValueError, match=r"Expected 2D array for `X`"):
        model.predict(X[None])  # 3-D


@pytest.mark.parametrize("name", MODELS)
def test_non_numeric_X(name):
    with pytest.raises(ValueError, match=r"`X`"):
        ours(name).fit(np.array([["a", "b"], ["c", "d"]]), [0, 1])
    with pytest.raises(ValueError, match=r"`X`.*[Cc]omplex"):
        ours(name).fit(np.ones((4, 2), dtype=complex), [0, 1, 0, 1])
    with pytest.raises(TypeError, match=r"`X`.*number"):
        ours(name).fit(np.array([[1, {"a": 1}], [2, 3]], dtype=object), [0, 1])


# --------------------------------------------------------------------------- #
# y and classes
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", MODELS)
def test_mismatched_lengths(name):
    X, y = random_data(name, n=40, d=4, seed=53)
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[40, 39\]; `y` has 39 labels but `X` has 40 rows"):
        ours(name).fit(X, y[:-1])
    with pytest.raises(ValueError, match=r"`sample_weight` must have shape \(40,\).*got shape \(41,\)"):
        ours(name).fit(X, y, sample_weight=np.ones(41))


@pytest.mark.parametrize("name", MODELS)
def test_bad_y(name):
    X, y = random_data(name, n=40, d=4, seed=54)
    with pytest.raises(ValueError, match=r"requires y to be passed"):
        ours(name).fit(X, None)
    with pytest.raises(ValueError, match=r"`y`.*NaN"):
        ours(name).fit(X, np.where(np.arange(40) == 3, np.nan, 1.0))
    with pytest.raises(ValueError, match=r"Unknown label type: continuous"):
        ours(name).fit(X, np.linspace(0, 1, 40))
    with pytest.raises(ValueError, match=r"`y` must be 1-D"):
        ours(name).fit(X, np.zeros((40, 2), dtype=int))


@pytest.mark.parametrize(
    ("labels", "match"),
    [
        (["a", 1, "b", 2], r"Mix of label input types \(string and number\): `{}` holds labels of the kinds number, string"),
        ([None, "a", "b", "a"], r"`{}` holds labels of the kinds (None|NaN), string; .*\(None and NaN are not labels\)"),
        ([None, 1, 2, 1], r"`{}` holds labels of the kinds (None|NaN), number"),
        ([(1, 2), "a", "b", "a"], r"`{}` holds labels of the kinds string, tuple"),
    ],
    ids=["str_int", "None_str", "None_int", "tuple_str"],
)
@pytest.mark.parametrize("name", MODELS)
def test_mixed_label_types(name, labels, match):
    """Labels of mixed types (an object array, a pandas column) cannot be
    sorted into classes: a ValueError naming `y` or `classes`, not numpy's
    TypeError from inside np.unique."""
    X, _ = random_data(name, n=4, d=3, seed=67)
    y = np.empty(4, dtype=object)
    y[:] = labels
    with pytest.raises(ValueError, match=match.format("y")):
        ours(name).fit(X, y)
    with pytest.raises(ValueError, match=match.format("y")):
        ours(name).fit(X, pd.Series(y))
    with pytest.raises(ValueError, match=match.format("y")):
        ours(name).partial_fit(X, y, classes=["a", "b"])
    with pytest.raises(ValueError, match=match.format("classes")):
        ours(name).partial_fit(X, ["a"] * 4, classes=y)
    model = ours(name).fit(X, ["a", "b", "a", "b"])
    with pytest.raises(ValueError, match=match.format("y")):
        model.partial_fit(X, y)


@pytest.mark.parametrize("name", MODELS)
def test_partial_fit_first_call_needs_classes(name):
    X, y = random_data(name, n=40, d=4, seed=55)
    model = ours(name)
    with pytest.raises(ValueError, match=r"classes must be passed on the first call"):
        model.partial_fit(X, y)
    assert not hasattr(model, "classes_")


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_classes_must_be_finite(name, bad, backend):
    """NaN and infinity were accepted as classes (a column of 0 in predict_proba)."""
    X, y = random_data(name, n=40, d=4, k=2, seed=58)
    with pytest.raises(ValueError, match=r"`classes` contains NaN or infinity"):
        ours(name).partial_fit(X, y, classes=backend.asarray([0.0, 1.0, bad]))


@pytest.mark.parametrize("name", MODELS)
def test_labels_not_in_classes(name):
    """scikit-learn's discrete models silently drop such rows; we refuse them."""
    X, y = random_data(name, n=40, d=4, k=3, seed=56)
    with pytest.raises(ValueError, match=r"in y do not exist in the initial classes: `y` contains label\(s\) \[2\] that are not in the classes"):
        ours(name).partial_fit(X, y, classes=[0, 1])
    model = ours(name).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"`y` contains label\(s\) \[7, 9\]"):
        model.partial_fit(X[:4], [0, 7, 9, 1])
    with pytest.raises(ValueError, match=r"`y`.*cannot be compared|`y` contains label"):
        model.partial_fit(X[:2], ["a", "b"])


@pytest.mark.parametrize("name", MODELS)
def test_classes_change_between_partial_fit_calls(name):
    X, y = random_data(name, n=40, d=4, k=3, seed=57)
    model = ours(name).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"`classes=\[0, 1, 2, 3\]` is not the same as on last call to partial_fit, was: \[0, 1, 2\]"):
        model.partial_fit(X, y, classes=[0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"`classes=\[0, 1, 1, 2\]` is not the same as on last call.*must not repeat"):
        model.partial_fit(X, y, classes=[0, 1, 1, 2])
    with pytest.raises(ValueError, match=r"`classes`.*must not repeat"):
        ours(name).partial_fit(X, y, classes=[0, 1, 1, 2])


@pytest.mark.parametrize("name", MODELS)
def test_feature_count_changes(name):
    X, y = random_data(name, n=40, d=4, seed=58)
    model = ours(name).partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match=r"X has 3 features, but \w+ is expecting 4 features"):
        model.partial_fit(X[:, :3], y)
    with pytest.raises(ValueError, match=r"X has 5 features, but \w+ is expecting 4 features"):
        model.predict(np.c_[X, X[:, :1]])
    with pytest.raises(ValueError, match=r"X has 3 features"):
        model.predict_proba(sp.csr_matrix(X[:, :3]))


@pytest.mark.parametrize("name", MODELS)
def test_not_fitted(name):
    X, _ = random_data(name, n=5, d=4, seed=59)
    for method in ("predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(ours(name), method)(X)


# --------------------------------------------------------------------------- #
# sample_weight
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("weight", "match"),
    [
        ("negative", r"`sample_weight` must be non-negative; saw a minimum of -1"),
        ("nan", r"`sample_weight` contains NaN"),
        ("inf", r"`sample_weight` contains NaN or infinity"),
        ("short", r"`sample_weight` must have shape \(40,\)"),
        ("2d", r"`sample_weight` must have shape \(40,\)"),
        ("zeros", r"`sample_weight` must contain at least one non-zero weight"),
    ],
)
@pytest.mark.parametrize("name", MODELS)
def test_bad_sample_weight(name, weight, match):
    X, y = random_data(name, n=40, d=4, seed=60)
    w = {
        "negative": np.where(np.arange(40) == 7, -1.0, 1.0),
        "nan": np.where(np.arange(40) == 7, np.nan, 1.0),
        "inf": np.where(np.arange(40) == 7, np.inf, 1.0),
        "short": np.ones(39),
        "2d": np.ones((40, 1)),
        "zeros": np.zeros(40),
    }[weight]
    with pytest.raises(ValueError, match=match):
        ours(name).fit(X, y, sample_weight=w)


# --------------------------------------------------------------------------- #
# Hyper-parameters
# --------------------------------------------------------------------------- #
PRIOR = {name: ("priors" if name == "GaussianNB" else "class_prior") for name in MODELS}


@pytest.mark.parametrize(
    ("prior", "match"),
    [
        ([0.5, 0.5], r"Number of priors must match number of classes: `{}` .*per class \(3\); got shape \(2,\)"),
        ([0.2, 0.2, 0.2, 0.4], r"Number of priors must match number of classes: `{}` .*per class \(3\); got shape \(4,\)"),
        ([-0.1, 0.6, 0.5], r"Priors must be non-negative: `{}` must hold non-negative finite"),
        ([0.2, 0.2, 0.2], r"The sum of the priors should be 1: `{}` must sum to 1; .* sum to 0.6"),
        ([np.nan, 0.5, 0.5], r"^`{}` must hold non-negative finite"),
    ],
)
@pytest.mark.parametrize("name", MODELS)
def test_bad_priors(name, prior, match):
    """Every model checks its prior (scikit-learn's discrete models do not)."""
    X, y = random_data(name, n=40, d=4, k=3, seed=61)
    arg = PRIOR[name]
    with pytest.raises(ValueError, match=match.format(arg)):
        ours(name, **{arg: prior}).fit(X, y)
    with pytest.raises(ValueError, match=rf"`{arg}`"):
        ours(name, **{arg: prior}).partial_fit(X, y, classes=[0, 1, 2])


@pytest.mark.parametrize("name", MODELS[1:])
def test_negative_alpha(name):
    X, y = random_data(name, n=40, d=4, seed=62)
    with pytest.raises(ValueError, match=r"'alpha' parameter"):
        ours(name, alpha=-0.5).fit(X, y)
    with pytest.raises(ValueError, match=r"All values in alpha must be greater than 0.*`alpha` must be finite and >= 0; saw a minimum of -1"):
        ours(name, alpha=np.array([1.0, -1.0, 1.0, 1.0])).fit(X, y)


@pytest.mark.parametrize("name", MODELS[1:])
def test_alpha_array_of_wrong_length(name):
    X, y = random_data(name, n=40, d=4, seed=63)
    with pytest.raises(ValueError, match=r"`alpha` must be a scalar or have one value per feature \(4\); got shape \(3,\)"):
        ours(name, alpha=np.ones(3)).fit(X, y)
    with pytest.raises(ValueError, match=r"`alpha`.*got shape \(2, 4\)"):
        ours(name, alpha=np.ones((2, 4))).fit(X, y)


def test_bad_min_categories():
    X, y = random_data("CategoricalNB", n=40, d=4, seed=64)
    with pytest.raises(ValueError, match=r"'min_categories' should have shape \(4,\).*`min_categories` must be an int or have shape \(4,\)"):
        ours("CategoricalNB", min_categories=np.array([2, 2])).fit(X, y)
    with pytest.raises(ValueError, match=r"`min_categories` must hold integers"):
        ours("CategoricalNB", min_categories=np.array([2.5, 2, 2, 2])).fit(X, y)
    with pytest.raises(ValueError, match=r"`min_categories` must be >= 1"):
        ours("CategoricalNB", min_categories=np.array([0, 2, 2, 2])).fit(X, y)


@pytest.mark.parametrize(
    ("name", "params"),
    [("GaussianNB", {"var_smoothing": -1.0}), ("BernoulliNB", {"binarize": "x"}), ("ComplementNB", {"norm": 3})],
)
def test_bad_scalar_parameters(name, params):
    X, y = random_data(name, n=20, d=3, seed=65)
    with pytest.raises(ValueError, match=rf"'{next(iter(params))}' parameter"):
        ours(name, **params).fit(X, y)


# --------------------------------------------------------------------------- #
# A call that raises changes nothing
# --------------------------------------------------------------------------- #
def _failing_calls(name, X, y):
    """(description, call(model)) pairs that must each raise."""
    d = X.shape[1]
    neg = _with(X, 0, 0, -3.0)
    calls = [
        ("fit NaN", lambda m: m.fit(_with(X, 0, 0, np.nan), y)),
        ("partial_fit NaN", lambda m: m.partial_fit(_with(X, 0, 0, np.nan), y)),
        ("partial_fit unknown label", lambda m: m.partial_fit(X[:3], [0, 1, 99])),
        ("partial_fit other classes", lambda m: m.partial_fit(X, y, classes=[0, 1, 2, 3])),
        ("partial_fit feature count", lambda m: m.partial_fit(X[:, : d - 1], y)),
        ("partial_fit bad weights", lambda m: m.partial_fit(X, y, sample_weight=-np.ones(X.shape[0]))),
        ("fit bad weights", lambda m: m.fit(X, y, sample_weight=np.ones(3))),
        ("fit length mismatch", lambda m: m.fit(X, y[:-1])),
        ("fit 1-D", lambda m: m.fit(X[:, 0], y)),
        ("fit empty", lambda m: m.fit(X[:0], y[:0])),
        ("predict NaN", lambda m: m.predict(_with(X, 0, 0, np.nan))),
        ("fit bad prior", lambda m: m.set_params(**{PRIOR[name]: [0.5, 0.6, -0.1]}).fit(X, y)),
        ("partial_fit bad prior", lambda m: m.set_params(**{PRIOR[name]: [1.0]}).partial_fit(X, y)),
    ]
    if name in COUNT_MODELS:
        calls.append(("partial_fit negative", lambda m: m.partial_fit(neg, y)))
    if name == "CategoricalNB":
        calls.append(("partial_fit non-integer", lambda m: m.partial_fit(_with(X, 0, 0, 0.5), y)))
    if name != "GaussianNB":
        calls.append(("partial_fit bad alpha", lambda m: m.set_params(alpha=np.ones(d + 1)).partial_fit(X, y)))
    return calls


@pytest.mark.parametrize("name", MODELS)
def test_failed_call_leaves_model_unchanged(name):
    X, y = random_data(name, n=40, d=4, k=3, seed=66)
    params = ours(name).get_params()
    for what, call in _failing_calls(name, X, y):
        model = ours(name).partial_fit(X[:25], y[:25], classes=[0, 1, 2])
        proba = to_numpy(model.predict_proba(X))  # derives the parameters partial_fit deferred
        before = snapshot(model)
        with pytest.raises(ERRORS):
            call(model)
        model.set_params(**params)  # undo what a call set on purpose
        assert_snapshots_equal(snapshot(model), before)
        np.testing.assert_array_equal(to_numpy(model.predict_proba(X)), proba, err_msg=what)
        # ... and it still learns: the next good batch gives the model of one fit.
        model.partial_fit(X[25:], y[25:])
        np.testing.assert_allclose(
            to_numpy(model.predict_proba(X)), to_numpy(ours(name).fit(X, y).predict_proba(X)), rtol=1e-10, err_msg=what
        )


# --------------------------------------------------------------------------- #
# Finite but extreme values: refused at fit, never a model that predicts NaN
# (numpy warns of the overflow in the sums before the fit refuses them)
# --------------------------------------------------------------------------- #
_OVERFLOW_WARNINGS = [
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]
def _columnwise(**params):
    parts = [("g", nbgpu.GaussianNB(), [0, 1]), ("m", nbgpu.MultinomialNB(), [2, 3])]
    return nbgpu.ColumnwiseNB(estimators=parts, **params)


# (model, X of model's data -> X with overflowing values)
EXTREME_X = {
    "GaussianNB": (nbgpu.GaussianNB, lambda X: X * 1e300),
    "GaussianNB_missing": (lambda: nbgpu.GaussianNB(missing="ignore"), lambda X: _with(X * 1e300, 0, 0, np.nan)),
    "GaussianNB_constant": (nbgpu.GaussianNB, lambda X: np.c_[X, np.full(X.shape[0], 1e300)]),
    "ColumnwiseNB": (_columnwise, lambda X: np.c_[X[:, :2] * 1e300, np.abs(np.round(X[:, 2:]))]),
    "NormalBayesClassifier": (nbgpu.NormalBayesClassifier, lambda X: X * 1e160),
    "MultinomialNB": (nbgpu.MultinomialNB, lambda X: np.abs(np.round(X)) * 1e307),
    "PoissonNB": (nbgpu.PoissonNB, lambda X: np.abs(np.round(X)) * 1e307),
}


@pytest.mark.parametrize("case", EXTREME_X)
@_OVERFLOW_WARNINGS[0]
@_OVERFLOW_WARNINGS[1]
def test_extreme_X_refused_at_fit(case):
    make, extreme = EXTREME_X[case]
    X, y = random_data("GaussianNB", n=40, d=4, k=3, seed=68)
    bad = extreme(X)
    assert np.all(np.isfinite(bad[~np.isnan(bad)]))
    with pytest.raises(ValueError, match=r"cannot be fitted on this data: .*overflow float64.*`X` holds values up to \d(\.\d+)?e\+(160|300|307)"):
        make().fit(bad, y)
    # A later batch that overflows the statistics: refused, the model unchanged.
    good = extreme(X / 1e300) if case != "GaussianNB_constant" else np.c_[X, X[:, :1]]
    model = make().fit(np.abs(good) if case in ("MultinomialNB", "PoissonNB") else good, y)
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"overflow float64"):
        model.partial_fit(bad, y)
    assert_snapshots_equal(snapshot(model), before)


@_OVERFLOW_WARNINGS[0]
@_OVERFLOW_WARNINGS[1]
def test_sparse_batch_overflowing_one_class_writes_nothing(monkeypatch):
    # A continuing partial_fit adds a sparse batch's per-class sums into the
    # running sums in place, class ranges on all cores: one range that
    # overflows leaves every range unwritten.
    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    rng = np.random.default_rng(70)
    n, d, k = 60, 400, 6
    y = np.arange(n) % k
    X = sp.random(n, d, density=0.02, format="lil", random_state=71) * 10
    X[0, 0] = 1.5e308  # class 0's sum of feature 0 near the largest float64
    X = X.tocsr()
    model = nbgpu.MultinomialNB().fit(X, y)
    before = snapshot(model)
    batch = sp.random(n, d, density=0.02, format="lil", random_state=rng) * 10
    batch[k, 0] = 1e308  # class 0 again: the sum overflows
    batch = batch.tocsr()
    with pytest.raises(ValueError, match=r"overflow float64"):
        model.partial_fit(batch, y)
    assert_snapshots_equal(snapshot(model), before)


@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB", "PoissonNB"])
@pytest.mark.parametrize("weight", [1e307, 1e308])
@_OVERFLOW_WARNINGS[0]
@_OVERFLOW_WARNINGS[1]
def test_extreme_sample_weight_refused_at_fit(name, weight):
    X, y = random_data("CategoricalNB", n=40, d=4, k=3, seed=69)
    make = getattr(nbgpu, name)
    with pytest.raises(ValueError, match=rf"`sample_weight` weights up to {re.escape(f'{weight:.3g}')}.*scale `sample_weight` down"):
        make().fit(X, y, sample_weight=np.full(40, weight))
    with pytest.raises(ValueError, match=r"`sample_weight` weights up to"):
        make().fit(sp.csr_matrix(X), y, sample_weight=np.full(40, weight))


@pytest.mark.parametrize(
    ("make", "scale", "weight"),
    [
        (nbgpu.GaussianNB, 1e150, None),
        (lambda: nbgpu.GaussianNB(missing="ignore"), 1e150, None),
        (nbgpu.MultinomialNB, 1.0, 1e300),
        (nbgpu.BernoulliNB, 1e307, 1e300),
        (nbgpu.CategoricalNB, 1.0, 1e300),
    ],
    ids=["gaussian", "gaussian_missing", "multinomial", "bernoulli", "categorical"],
)
def test_large_values_within_range_fit_and_round_trip(tmp_path, make, scale, weight):
    """Large values that do not overflow still fit: the refusal is no wider
    than it must be, and what fits predicts numbers and saves and loads."""
    X, y = random_data("CategoricalNB", n=40, d=4, k=3, seed=70)
    w = None if weight is None else np.full(40, weight)
    model = make().fit(X * scale, y, sample_weight=w)
    proba = to_numpy(model.predict_proba(X * scale))
    assert np.all(np.isfinite(proba))
    nbgpu.save(model, tmp_path / "m.nbgpu")
    np.testing.assert_array_equal(to_numpy(nbgpu.load(tmp_path / "m.nbgpu").predict_proba(X * scale)), proba)


# --------------------------------------------------------------------------- #
# CategoricalNB: the table of counts follows the largest code; bounded
# --------------------------------------------------------------------------- #
def _one_large_code(code):
    X = np.zeros((10, 3))
    X[3, 1] = code
    return X, np.arange(10) % 2


def test_categorical_large_code_refused_before_allocating():
    """One cell of 3·10^7 would make a 2 × 3·10^7 table (a fit needs ~7 GB):
    refused at once, naming the code, its feature and the remedy."""
    X, y = _one_large_code(3e7)
    match = (
        r"table of 2 classes × 30000003 categories \(458 MiB.*limit of 256 MiB "
        r"\(CategoricalNB.max_category_table_bytes\): `X` holds the category code 30000000 in feature 1.*OrdinalEncoder"
    )
    with pytest.raises(ValueError, match=match):
        nbgpu.CategoricalNB().fit(X, y)
    with pytest.raises(ValueError, match=match):
        nbgpu.CategoricalNB().fit(sp.csr_matrix(X), y)
    model = nbgpu.CategoricalNB().fit(np.zeros((10, 3)), y)
    before = snapshot(model)
    with pytest.raises(ValueError, match=match):
        model.partial_fit(X, y)
    assert_snapshots_equal(snapshot(model), before)
    # Scoring such a code needs no table: an unseen category is left out.
    assert np.all(np.isfinite(to_numpy(model.predict_proba(X))))


def test_categorical_min_categories_beyond_the_bound():
    X, y = _one_large_code(1)
    with pytest.raises(ValueError, match=r"`min_categories` asks for 100000000 categories in feature 2"):
        nbgpu.CategoricalNB(min_categories=[2, 2, 10**8]).fit(X, y)


def test_categorical_bound_is_the_class_attribute(monkeypatch):
    """The bound is 8 bytes × classes × categories in all, read at every fit."""
    X, y = random_data("CategoricalNB", n=40, d=4, k=3, seed=71)
    size = 8 * 3 * int(nbgpu.CategoricalNB().fit(X, y).n_categories_.sum())
    monkeypatch.setattr(nbgpu.CategoricalNB, "max_category_table_bytes", size)
    nbgpu.CategoricalNB().fit(X, y)
    monkeypatch.setattr(nbgpu.CategoricalNB, "max_category_table_bytes", size - 1)
    with pytest.raises(ValueError, match=r"`X` holds the category code \d+ in feature \d"):
        nbgpu.CategoricalNB().fit(X, y)
