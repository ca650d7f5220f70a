"""Constructor-parameter validation without scikit-learn.

The core estimators must not import scikit-learn (slow to load on every
command-line call). This module stands in for scikit-learn's private
``Interval``, ``StrOptions`` and ``BaseEstimator._validate_params``, with the
same error messages, using only the standard library and numpy.

An estimator class declares ``_param_constraints``, a dict mapping each
parameter name to a list of constraints; a value is valid when it satisfies
at least one: an :class:`Interval`, an :class:`Options`, ``"array-like"``,
``"boolean"`` (``bool`` or ``numpy.bool_``), ``None`` (the value ``None``)
or a Python type (an ``isinstance`` check).

Deliberate differences from scikit-learn: ``"array-like"`` means a list,
tuple or array (scikit-learn also accepts anything with ``__len__``, such as
a dict or a set), and :class:`Options` lists its values sorted in messages
(scikit-learn lists them in set order, which changes between runs).
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import numbers

import numpy as np

__all__ = ["Interval", "InvalidParameterError", "Options", "param_names", "validate_params"]


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter has an invalid type or value (a ValueError and a
    TypeError, like scikit-learn's exception of the same name)."""


def _type_name(t):
    """Name a type the way scikit-learn's messages do (``float``, ``numpy.bool``)."""
    if t is numbers.Real:
        return "float"
    if t is numbers.Integral:
        return "int"
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


class Interval:
    """A range of integers (``numbers.Integral``) or real numbers (``numbers.Real``).

    A None bound is infinite; ``closed`` ("left", "right", "both" or
    "neither") says which bounds belong to the interval, the infinities
    included, as in scikit-learn.
    """

    def __init__(self, type, left, right, *, closed):
        if type not in (numbers.Real, numbers.Integral):
            raise ValueError(f"type must be either numbers.Integral or numbers.Real. Got {type} instead.")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be either 'left', 'right', 'both' or 'neither'. Got {closed!r} instead.")
        for name, bound in (("left", left), ("right", right)):
            if bound is not None and (_is_bool(bound) or not isinstance(bound, numbers.Real)):
                raise ValueError(f"{name} must be a number or None. Got {bound!r} instead.")
            if bound is not None and type is numbers.Integral and not isinstance(bound, numbers.Integral):
                raise ValueError(f"Expecting {name} to be an int for an interval over the integers. Got {bound!r} instead.")
        if left is not None and right is not None and right <= left:
            raise ValueError(f"right can't be less than left. Got left={left} and right={right}")
        self.type = type
        self.left = left
        self.right = right
        self.closed = closed

    def is_satisfied_by(self, value):
        """Whether ``value`` is a number of the interval's type (a Python bool
        is an int, as in scikit-learn; numpy's is not) within its bounds."""
        if not isinstance(value, self.type) or (not isinstance(value, numbers.Integral) and math.isnan(value)):
            return False
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        above = left < value or (value == left and self.closed in ("left", "both"))
        return above and (value < right or (value == right and self.closed in ("right", "both")))

    def __str__(self):
        """Describe the interval, e.g. ``a float in the range [0.0, inf)``."""
        real = self.type is not numbers.Integral
        left = "-inf" if self.left is None else (float(self.left) if real else self.left)
        right = "inf" if self.right is None else (float(self.right) if real else self.right)
        opening = "[" if self.closed in ("left", "both") else "("
        closing = "]" if self.closed in ("right", "both") else ")"
        return f"{'a float' if real else 'an int'} in the range {opening}{left}, {right}{closing}"

    def __repr__(self):
        return f"Interval({_type_name(self.type)}, {self.left!r}, {self.right!r}, closed={self.closed!r})"


class Options:
    """A finite set of allowed strings."""

    def __init__(self, values):
        self.values = frozenset(values)
        if not all(isinstance(v, str) for v in self.values):
            raise ValueError(f"Options takes strings only. Got {sorted(map(repr, self.values))}.")

    def is_satisfied_by(self, value):
        return isinstance(value, str) and value in self.values

    def __str__(self):
        """Describe the options, e.g. ``a str among {'error', 'ignore'}`` (sorted)."""
        return f"a str among {{{', '.join(repr(v) for v in sorted(self.values))}}}"

    def __repr__(self):
        return f"Options({sorted(self.values)!r})"


def _is_array_like(value):
    """Lists, tuples and arrays, not scalars or strings."""
    if isinstance(value, (str, bytes)) or np.isscalar(value):
        return False
    if isinstance(value, (list, tuple, np.ndarray)) or hasattr(value, "__array__"):
        return True
    return hasattr(value, "__array_namespace__") or (hasattr(value, "shape") and hasattr(value, "dtype"))


def _instance_of(t):
    return f"an instance of {_type_name(t)!r}"


def _join(descriptions):
    """Join descriptions as scikit-learn does: ``a``, ``a or b``, ``a, b or c``."""
    if len(descriptions) == 1:
        return descriptions[0]
    return f"{', '.join(descriptions[:-1])} or {descriptions[-1]}"


def _check_and_description(constraint):
    """``(predicate, description)`` of one entry of a constraint list."""
    if isinstance(constraint, (Interval, Options)):
        return constraint.is_satisfied_by, str(constraint)
    if constraint is None:
        return (lambda value: value is None), "None"
    if isinstance(constraint, type):
        return (lambda value: isinstance(value, constraint)), _instance_of(constraint)
    if isinstance(constraint, str) and constraint == "array-like":
        return _is_array_like, "an array-like"
    if isinstance(constraint, str) and constraint == "boolean":
        return _is_bool, _join([_instance_of(bool), _instance_of(np.bool_)])
    raise ValueError(f"Unknown constraint type: {constraint!r}")


@functools.cache
def param_names(cls):
    """The sorted constructor parameter names of an estimator class (cached), as
    scikit-learn's ``BaseEstimator._get_param_names``: without ``self`` and
    ``**kwargs``; a RuntimeError for ``*args``."""
    if cls.__init__ is object.__init__:
        return ()
    signature = inspect.signature(cls.__init__)
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


@functools.cache
def _compiled_constraints(cls):
    """``((name, predicates, allowed), ...)`` of the parameters ``cls`` takes, sorted by name
    (scikit-learn's order); built once per class, so a fit runs only the predicates."""
    own = param_names(cls)
    compiled = []
    for name, constraints in sorted(cls._param_constraints.items()):
        if name in own:
            checks = [_check_and_description(c) for c in constraints]
            compiled.append((name, tuple(check for check, _ in checks), _join([d for _, d in checks])))
    return tuple(compiled)


def validate_params(estimator):
    """Raise InvalidParameterError, with scikit-learn's message, for the first
    parameter of the estimator's ``__init__`` (alphabetically, as scikit-learn)
    that satisfies none of its class's ``_param_constraints``; constraints a
    subclass inherits for parameters it does not take are skipped."""
    cls = type(estimator)
    for name, predicates, allowed in _compiled_constraints(cls):
        value = getattr(estimator, name)
        if not any(check(value) for check in predicates):
            raise InvalidParameterError(f"The {name!r} parameter of {cls.__name__} must be {allowed}. Got {value!r} instead.")


def unfitted(model, **params):
    """A new unfitted model with a copy of ``model``'s parameters, changed by ``params``:
    a public estimator's ``clone`` (metadata requests kept, parts unfitted)."""
    if hasattr(model, "get_params"):  # only the shells have it: the core imports no scikit-learn
        from sklearn.base import clone

        return clone(model).set_params(**params)
    return type(model)(**{**copy.deepcopy(model._params()), **params})
