"""Constructor-parameter validation without scikit-learn.

The core estimators must not import scikit-learn: loading it costs about
0.6 s per command-line call. This module replaces the private pieces of
scikit-learn they used for checking constructor parameters
(``sklearn.utils._param_validation.Interval`` / ``StrOptions`` and
``BaseEstimator._validate_params``), with the same error messages, so the
two stay interchangeable for users. It imports only the standard library
and numpy.

An estimator class declares ``_param_constraints``, a dict mapping each
parameter name to a list of constraints; a value is valid when it satisfies
at least one of them. A constraint is one of

- an :class:`Interval` (a range of ints or floats),
- an :class:`Options` (a set of allowed strings),
- the string ``"array-like"``,
- the string ``"boolean"`` (``bool`` or ``numpy.bool_``),
- ``None`` (the value ``None``),
- a Python type (an ``isinstance`` check).

Deliberate differences from scikit-learn: ``"array-like"``
means a list, tuple or array (scikit-learn also accepts anything with
``__len__``, such as a dict or a set), and :class:`Options` lists its values
sorted in messages (scikit-learn lists them in set order, which changes
between runs).
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers

import numpy as np

__all__ = [
    "Interval",
    "InvalidParameterError",
    "Options",
    "param_names",
    "validate_params",
]


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter has an invalid type or value.

    Subclasses both ``ValueError`` and ``TypeError``, like scikit-learn's
    exception of the same name, so code catching either keeps working.
    """


def _type_name(t):
    """Name a type the way scikit-learn's messages do.

    Parameters
    ----------
    t : type
        The type to name.

    Returns
    -------
    name : str
        ``'float'`` for ``numbers.Real``, ``'int'`` for ``numbers.Integral``,
        the bare name for a builtin, else ``'module.qualname'``.
    """
    if t is numbers.Real:
        return "float"
    if t is numbers.Integral:
        return "int"
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


def _is_bool(value):
    """Whether ``value`` is a Python or numpy boolean."""
    return isinstance(value, (bool, np.bool_))


class Interval:
    """A range of integers or of real numbers.

    Parameters
    ----------
    type : {numbers.Real, numbers.Integral}
        The numbers the interval is made of. ``numbers.Integral`` accepts
        Python and numpy integers; ``numbers.Real`` also accepts floats and
        numpy floating scalars. A Python ``bool`` is an int (as in scikit-learn).
    left : int, float or None
        The lower bound; None means -inf (which itself belongs to the
        interval only if the left side is closed, as in scikit-learn).
    right : int, float or None
        The upper bound; None means +inf (which itself belongs to the
        interval only if the right side is closed).
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval: ``"left"`` is ``[left, right)``,
        ``"right"`` is ``(left, right]``, ``"both"`` is ``[left, right]`` and
        ``"neither"`` is ``(left, right)``.

    Raises
    ------
    ValueError
        If ``type`` or ``closed`` is not one of the allowed values, if an
        integer interval has a non-integer bound, or if ``right <= left``.
    """

    def __init__(self, type, left, right, *, closed):
        if type not in (numbers.Real, numbers.Integral):
            raise ValueError(f"type must be either numbers.Integral or numbers.Real. Got {type} instead.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be either 'left', 'right', 'both' or 'neither'. Got {closed!r} instead.")
        for name, bound in (("left", left), ("right", right)):
            if bound is None:
                continue
            if _is_bool(bound) or not isinstance(bound, numbers.Real):
                raise ValueError(f"{name} must be a number or None. Got {bound!r} instead.")
            if type is numbers.Integral and not isinstance(bound, numbers.Integral):
                raise ValueError(f"Expecting {name} to be an int for an interval over the integers. Got {bound!r} instead.")
        if left is not None and right is not None and right <= left:
            raise ValueError(f"right can't be less than left. Got left={left} and right={right}")
        self.type = type
        self.left = left
        self.right = right
        self.closed = closed

    def __contains__(self, value):
        """Whether the number ``value`` lies within the bounds (type not checked)."""
        if not isinstance(value, numbers.Integral) and math.isnan(value):
            return False
        # A None bound is infinite; the infinity itself belongs to the interval
        # only on a closed side, as in scikit-learn.
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        if value < left or (value == left and self.closed not in ("left", "both")):
            return False
        if value > right or (value == right and self.closed not in ("right", "both")):
            return False
        return True

    def is_satisfied_by(self, value):
        """Whether ``value`` is a number of this interval's type within its bounds.

        Parameters
        ----------
        value : object
            The value to check.

        Returns
        -------
        satisfied : bool
            False for booleans, for values of another type and for NaN.
        """
        if not isinstance(value, self.type):  # a Python bool is an int, as in scikit-learn; numpy's is not
            return False
        return value in self

    def __str__(self):
        """Describe the interval, e.g. ``a float in the range [0.0, inf)``."""
        real = self.type is not numbers.Integral
        left = "-inf" if self.left is None else (float(self.left) if real else self.left)
        right = "inf" if self.right is None else (float(self.right) if real else self.right)
        opening = "[" if self.closed in ("left", "both") else "("
        closing = "]" if self.closed in ("right", "both") else ")"
        kind = "a float" if real else "an int"
        return f"{kind} in the range {opening}{left}, {right}{closing}"

    def __repr__(self):
        return f"Interval({_type_name(self.type)}, {self.left!r}, {self.right!r}, closed={self.closed!r})"


class Options:
    """A finite set of allowed strings.

    Parameters
    ----------
    values : iterable of str
        The allowed strings.
    """

    def __init__(self, values):
        self.values = frozenset(values)
        if not all(isinstance(v, str) for v in self.values):
            raise ValueError(f"Options takes strings only. Got {sorted(map(repr, self.values))}.")

    def is_satisfied_by(self, value):
        """Whether ``value`` is a ``str`` in the set."""
        return isinstance(value, str) and value in self.values

    def __str__(self):
        """Describe the options, e.g. ``a str among {'error', 'ignore'}`` (sorted)."""
        return f"a str among {{{', '.join(repr(v) for v in sorted(self.values))}}}"

    def __repr__(self):
        return f"Options({sorted(self.values)!r})"


class _ArrayLike:
    """The ``"array-like"`` marker: lists, tuples and arrays, not scalars or strings."""

    def is_satisfied_by(self, value):
        if isinstance(value, (str, bytes)) or np.isscalar(value):
            return False
        if isinstance(value, (list, tuple, np.ndarray)):
            return True
        return (
            hasattr(value, "__array__")
            or hasattr(value, "__array_namespace__")
            or (hasattr(value, "shape") and hasattr(value, "dtype"))
        )

    def __str__(self):
        return "an array-like"


class _InstanceOf:
    """A Python type used as a constraint: an ``isinstance`` check."""

    def __init__(self, type):
        self.type = type

    def is_satisfied_by(self, value):
        return isinstance(value, self.type)

    def __str__(self):
        return f"an instance of {_type_name(self.type)!r}"


class _Boolean:
    """The ``"boolean"`` marker: ``bool`` or ``numpy.bool_``."""

    _parts = (_InstanceOf(bool), _InstanceOf(np.bool_))

    def is_satisfied_by(self, value):
        return _is_bool(value)

    def __str__(self):
        return _join([str(p) for p in self._parts])


class _IsNone:
    """The ``None`` marker: the value None."""

    def is_satisfied_by(self, value):
        return value is None

    def __str__(self):
        return "None"


def _join(descriptions):
    """Join descriptions as scikit-learn does: ``a``, ``a or b``, ``a, b or c``."""
    if len(descriptions) == 1:
        return descriptions[0]
    return f"{', '.join(descriptions[:-1])} or {descriptions[-1]}"


def _as_constraint(constraint):
    """Turn one entry of a constraint list into an object with ``is_satisfied_by``."""
    if isinstance(constraint, (Interval, Options)):
        return constraint
    if isinstance(constraint, str):
        if constraint == "array-like":
            return _ArrayLike()
        if constraint == "boolean":
            return _Boolean()
    elif constraint is None:
        return _IsNone()
    elif isinstance(constraint, type):
        return _InstanceOf(constraint)
    raise ValueError(f"Unknown constraint type: {constraint!r}")


@functools.cache
def param_names(cls):
    """The constructor parameter names of an estimator class, sorted.

    Same result as scikit-learn's ``BaseEstimator._get_param_names``, cached
    per class.

    Parameters
    ----------
    cls : type
        The estimator class.

    Returns
    -------
    names : tuple of str
        The names of the parameters of ``cls.__init__``, without ``self`` and
        ``**kwargs``, in alphabetical order; empty if the class does not
        define ``__init__``.

    Raises
    ------
    RuntimeError
        If ``cls.__init__`` takes ``*args``.
    """
    init = cls.__init__
    if init is object.__init__:
        return ()
    signature = inspect.signature(init)
    names = []
    for p in signature.parameters.values():
        if p.name == "self" or p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            raise RuntimeError(
                "scikit-learn estimators should always specify their parameters in the signature"
                f" of their __init__ (no varargs). {cls} with constructor {signature} doesn't "
                " follow this convention."
            )
        names.append(p.name)
    return tuple(sorted(names))


def validate_params(estimator):
    """Check an estimator's parameters against its class's ``_param_constraints``.

    Parameters
    ----------
    estimator : object
        The estimator. ``type(estimator)._param_constraints`` maps parameter
        names to lists of constraints (see the module docstring); each value
        ``getattr(estimator, name)`` must satisfy at least one constraint of
        its list. Only the estimator's own parameters (those of its
        ``__init__``) are checked: a subclass may inherit constraints of
        parameters it does not take. They are checked in alphabetical order,
        as scikit-learn does, so the first error reported is the same.

    Raises
    ------
    InvalidParameterError
        For the first parameter that satisfies none of its constraints, with
        scikit-learn's message, e.g. ``The 'alpha' parameter of MultinomialNB
        must be a float in the range [0.0, inf) or an array-like. Got -1
        instead.``
    ValueError
        If a constraint list holds something that is not a known constraint.
    """
    cls = type(estimator)
    own = param_names(cls)
    for name, constraints in sorted(cls._param_constraints.items()):
        if name not in own:
            continue
        value = getattr(estimator, name)
        checks = [_as_constraint(c) for c in constraints]
        if any(check.is_satisfied_by(value) for check in checks):
            continue
        raise InvalidParameterError(
            f"The {name!r} parameter of {cls.__name__} must be {_join([str(c) for c in checks])}. Got {value!r} instead."
        )
