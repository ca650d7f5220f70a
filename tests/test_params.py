"""nbgpu._estimator.params against scikit-learn's own parameter validation.

For each constraint list, a tiny estimator validated by nbgpu and an
equivalent scikit-learn ``BaseEstimator`` validated by scikit-learn must
accept and reject the same values with the same message.
"""

from __future__ import annotations

import subprocess
import sys
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval as SkInterval
from sklearn.utils._param_validation import InvalidParameterError as SkInvalidParameterError
from sklearn.utils._param_validation import StrOptions as SkStrOptions

from conftest import subprocess_env
from nbgpu._estimator.params import Interval, InvalidParameterError, Options, param_names, validate_params


class _SortedSet(set):
    """A set that iterates in sorted order.

    scikit-learn's ``StrOptions`` lists its options in set iteration order,
    which depends on the string hash seed; ours lists them sorted. Giving
    scikit-learn a set that iterates sorted makes its message deterministic
    and comparable.
    """

    def __iter__(self):
        return iter(sorted(set.__iter__(self)))


def _sk_options(values):
    return SkStrOptions(_SortedSet(values))


# name -> (our constraints, scikit-learn's constraints)
CASES = {
    "real_left_or_array": (
        [Interval(Real, 0, None, closed="left"), "array-like"],
        [SkInterval(Real, 0, None, closed="left"), "array-like"],
    ),
    "boolean": (["boolean"], ["boolean"]),
    "options": ([Options({"error", "ignore"})], [_sk_options({"error", "ignore"})]),
    "int_none_or_array": (
        [Interval(Integral, 1, None, closed="left"), None, "array-like"],
        [SkInterval(Integral, 1, None, closed="left"), None, "array-like"],
    ),
    "real_open_or_options": (
        [Interval(Real, 0, None, closed="neither"), Options({"scott", "silverman"})],
        [SkInterval(Real, 0, None, closed="neither"), _sk_options({"scott", "silverman"})],
    ),
    "real_closed_unit": ([Interval(Real, 0, 1, closed="both")], [SkInterval(Real, 0, 1, closed="both")]),
    "real_right_closed": ([Interval(Real, -1, 1, closed="right")], [SkInterval(Real, -1, 1, closed="right")]),
    "int_upper_or_list": (
        [Interval(Integral, None, 5, closed="right"), list],
        [SkInterval(Integral, None, 5, closed="right"), list],
    ),
    "boolean_or_none": (["boolean", None], ["boolean", None]),
    "none_only": ([None], [None]),
}


class _HasArray:
    def __array__(self, dtype=None, copy=None):
        return np.zeros(2)

    def __len__(self):
        return 2


def _values():
    import array_api_strict

    return [
        -1.0, -1, -0.5, 0, 0.0, 0.5, 1, 1.0, 2, 2.5, 5, 6, 1e300,
        float("nan"), float("inf"), float("-inf"),
        np.float32(0.5), np.float64(-2.0), np.float64("nan"), np.int64(3), np.int32(-3), np.uint8(1),
        complex(1, 0),
        "scott", "silverman", "error", "ignore", "x", "", "1",
        False, True, np.bool_(True), np.bool_(False),
        [1.0, 2.0], [], (1, 2), np.array([1.0, 2.0]), np.array(1.0), np.zeros((2, 2)),
        array_api_strict.asarray([1.0, 2.0]), _HasArray(),
        None, object, b"bytes",
    ]  # fmt: skip


def _make_pair(ours, theirs, name="Est"):
    """A class validated by nbgpu and one by scikit-learn, same name and parameter."""

    def __init__(self, p=None):
        self.p = p

    mine = type(name, (), {"__init__": __init__, "_param_constraints": {"p": ours}})
    sk = type(name, (BaseEstimator,), {"__init__": __init__, "_parameter_constraints": {"p": theirs}})
    return mine, sk


def _outcome(validate, instance, error):
    try:
        validate(instance)
    except error as e:
        return str(e)
    return None


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_verdict_and_message_as_sklearn(case):
    ours, theirs = CASES[case]
    mine, sk = _make_pair(ours, theirs, name="MultinomialNB")
    for value in _values():
        got = _outcome(validate_params, mine(value), InvalidParameterError)
        want = _outcome(lambda e: e._validate_params(), sk(value), SkInvalidParameterError)
        assert got == want, (case, value)


def test_reference_messages():
    """A few messages written out, so a change in both libraries still shows."""
    alpha, _ = CASES["real_left_or_array"]
    mine, _ = _make_pair(alpha, [], name="MultinomialNB")
    with pytest.raises(InvalidParameterError) as info:
        validate_params(mine(-1))
    assert str(info.value) == (
        "The 'p' parameter of MultinomialNB must be a float in the range [0.0, inf) or an array-like. Got -1 instead."
    )
    n, _ = CASES["int_none_or_array"]
    mine, _ = _make_pair(n, [])
    with pytest.raises(InvalidParameterError, match=r"must be an int in the range \[1, inf\), None or an array-like\. Got 0 instead\.$"):
        validate_params(mine(0))
    bw, _ = CASES["real_open_or_options"]
    mine, _ = _make_pair(bw, [])
    with pytest.raises(InvalidParameterError) as info:
        validate_params(mine("x"))
    assert str(info.value).endswith("must be a float in the range (0.0, inf) or a str among {'scott', 'silverman'}. Got 'x' instead.")
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    mine, _ = _make_pair(["boolean"], [])
    with pytest.raises(InvalidParameterError, match="must be an instance of 'bool' or an instance of 'numpy.bool"):
        validate_params(mine(1))


def test_interval_takes_python_bools_as_ints_and_rejects_nan():
    for kind in (Real, Integral):
        interval = Interval(kind, None, None, closed="neither")
        assert interval.is_satisfied_by(True)  # as scikit-learn's
        assert not interval.is_satisfied_by(np.bool_(False))
        assert interval.is_satisfied_by(np.int64(3))
    assert not Interval(Real, None, None, closed="both").is_satisfied_by(float("nan"))
    assert Interval(Real, None, None, closed="both").is_satisfied_by(float("inf"))
    assert not Interval(Real, 0, None, closed="left").is_satisfied_by(float("inf"))
    assert Interval(Real, 0, None, closed="left").is_satisfied_by(1e300)
    assert not Interval(Integral, 0, None, closed="left").is_satisfied_by(1.0)


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (Interval(Real, 0, None, closed="left"), SkInterval(Real, 0, None, closed="left")),
        (Interval(Real, 0, None, closed="neither"), SkInterval(Real, 0, None, closed="neither")),
        (Interval(Real, None, 1.5, closed="right"), SkInterval(Real, None, 1.5, closed="right")),
        (Interval(Real, -1, 1, closed="both"), SkInterval(Real, -1, 1, closed="both")),
        (Interval(Integral, 1, None, closed="left"), SkInterval(Integral, 1, None, closed="left")),
        (Interval(Integral, None, None, closed="neither"), SkInterval(Integral, None, None, closed="neither")),
        (Options({"error", "ignore"}), _sk_options({"error", "ignore"})),
    ],
)
def test_str_matches_sklearn(ours, theirs):
    assert str(ours) == str(theirs)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError):
        Interval(float, 0, None, closed="left")
    with pytest.raises(ValueError):
        Interval(Real, 0, None, closed="open")
    with pytest.raises(ValueError):
        Interval(Integral, 0.5, None, closed="left")
    with pytest.raises(ValueError):
        Interval(Real, 1, 0, closed="both")
    with pytest.raises(ValueError):
        Options({"a", 1})
    mine, _ = _make_pair(["not a constraint"], [])
    with pytest.raises(ValueError, match="Unknown constraint"):
        validate_params(mine(1))


def test_first_error_in_sklearn_order():
    """With two bad parameters, both libraries report the same (alphabetically first) one."""

    def __init__(self, zeta=-1.0, alpha=-1.0):
        self.zeta = zeta
        self.alpha = alpha

    real = [Interval(Real, 0, None, closed="left")]
    sk_real = [SkInterval(Real, 0, None, closed="left")]
    mine = type("Two", (), {"__init__": __init__, "_param_constraints": {"zeta": real, "alpha": real}})
    sk = type("Two", (BaseEstimator,), {"__init__": __init__, "_parameter_constraints": {"zeta": sk_real, "alpha": sk_real}})
    got = _outcome(validate_params, mine(), InvalidParameterError)
    want = _outcome(lambda e: e._validate_params(), sk(), SkInvalidParameterError)
    assert got == want and "'alpha'" in got


def test_param_names_matches_sklearn():
    class Sample(BaseEstimator):
        def __init__(self, zeta=1, alpha=1.0, *, fit_prior=True, class_prior=None, **kwargs):
            pass

    class NoInit:
        pass

    class Varargs:
        def __init__(self, a, *args):
            pass

    assert list(param_names(Sample)) == Sample._get_param_names() == ["alpha", "class_prior", "fit_prior", "zeta"]
    assert param_names(Sample) is param_names(Sample)  # cached
    assert list(param_names(NoInit)) == []
    with pytest.raises(RuntimeError, match="no varargs"):
        param_names(Varargs)
    with pytest.raises(RuntimeError, match="no varargs"):
        BaseEstimator._get_param_names.__func__(Varargs)


def test_import_loads_neither_sklearn_nor_scipy():
    code = (
        "import sys, nbgpu._estimator.params\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
