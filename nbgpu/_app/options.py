"""Command-line options: value types, the model parameters as flags, and a parser whose errors are
one line.

A command called wrong (an unknown option, a bad value, a flag the model does not take) ends with one
line on stderr and exit status 2, before any file is read; status 1 is for what goes wrong with the
files themselves. Standard library only (the models load when :func:`checked_model` is called), so
``nbgpu --help`` starts fast.
"""
from __future__ import annotations

import argparse
import functools
import math
import os

USAGE_STATUS = 2
# Feature indices and hashed features are C ints in scikit-learn's loaders.
MAX_FEATURES = 2**31 - 1


class UsageError(ValueError):
    """The command was called wrong; ``prog`` is the (sub)command's name."""

    def __init__(self, message, prog="nbgpu"):
        super().__init__(message)
        self.prog = prog


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser that raises :class:`UsageError` instead of printing
    its usage and exiting (subcommand parsers are of this class too)."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')", self.prog)


# Value types: argparse shows an error as "argument --flag: <message>".
def _finite(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def finite_floats(text):
    try:
        return [_finite(part) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected comma-separated finite numbers, got {text!r}") from None


def float_or_none(text):
    return None if text.lower() == "none" else _finite(text)


def positive_int(text, *, most=None):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    if most is not None and value > most:
        raise argparse.ArgumentTypeError(f"expected at most {most}, got {text!r}")
    return value


feature_count = functools.partial(positive_int, most=MAX_FEATURES)


# A chunk is read into memory whole: beyond any machine's memory, within what a read can ask for.
MAX_CHUNK_MB = 2**16


def chunk_bytes(text):
    """``--chunk-mb``: MiB as bytes, at least one (a chunk is then one line)."""
    value = _finite(text)
    if not 0 < value <= MAX_CHUNK_MB:
        raise argparse.ArgumentTypeError(f"expected a positive number of MiB, at most {MAX_CHUNK_MB}, got {text!r}")
    size = int(value * 2**20)
    if size < 1:
        raise argparse.ArgumentTypeError(f"{text} MiB is less than one byte")
    return size


def ngram_range(text):
    from .._interop.vectorizer_settings import MAX_NGRAM  # (imports scipy: not for --help)

    try:
        low, high = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN,MAX (e.g. 1,2), got {text!r}") from None
    if not 1 <= low <= high <= MAX_NGRAM:  # what a model file may hold
        raise argparse.ArgumentTypeError(f"expected 1 <= MIN <= MAX <= {MAX_NGRAM}, got {text!r}")
    return [low, high]


def loss_matrix(text):
    """``--loss-matrix``: a CSV file of k rows of k costs, or the rows inline: ``0,1;5,0``."""
    if os.path.isfile(text):
        try:
            with open(text, encoding="utf-8") as f:
                rows = [line for line in f.read().splitlines() if line.strip() and not line.startswith("#")]
        except (OSError, UnicodeDecodeError) as exc:
            raise argparse.ArgumentTypeError(f"cannot read {text} ({exc})") from None
        where = text
    else:
        rows, where = text.split(";"), repr(text)
    try:
        matrix = [[_finite(v) for v in row.replace(" ", ",").split(",") if v] for row in rows]
    except argparse.ArgumentTypeError:
        matrix = None
    if not matrix or any(len(row) != len(matrix) for row in matrix):
        msg = (
            f"expected a square matrix of numbers, as a CSV file or as rows 'c11,c12;c21,c22'; "
            f"got {where}" + ("" if os.path.exists(text) or ";" in text or "," in text else " (no such file)")
        )
        raise argparse.ArgumentTypeError(msg)
    return matrix


PARAMETERS = {
    "alpha": dict(type=_finite, help="additive smoothing (discrete models)"),
    "force_alpha": dict(action=argparse.BooleanOptionalAction, help="keep alpha even if tiny"),
    "fit_prior": dict(action=argparse.BooleanOptionalAction, help="learn class priors (else uniform)"),
    "class_prior": dict(type=finite_floats, metavar="P1,P2,...",
                        help="fixed class priors, in the sorted order of the labels (discrete models)"),
    "binarize": dict(type=float_or_none, metavar="T|none", help="threshold for BernoulliNB"),
    "norm": dict(action=argparse.BooleanOptionalAction, help="second normalisation (ComplementNB)"),
    "min_categories": dict(type=positive_int, help="minimum categories per feature (CategoricalNB)"),
    "priors": dict(type=finite_floats, metavar="P1,P2,...",
                   help="fixed class priors, in the sorted order of the labels (GaussianNB, NormalBayesClassifier)"),
    "var_smoothing": dict(type=_finite, help="variance smoothing (GaussianNB)"),
    "reg_covar": dict(type=_finite, help="added to the covariance diagonals (NormalBayesClassifier)"),
    "prior_smoothing": dict(type=_finite, metavar="LAMBDA", help="class prior (N_c + LAMBDA) / (N + K LAMBDA)"),
    "missing": dict(choices=("error", "ignore"),
                    help="NaN (an empty CSV field) is an error, or a missing value left out of that row's "
                         "score (GaussianNB, CategoricalNB, PoissonNB)"),
    "loss_matrix": dict(type=loss_matrix, metavar="CSV|ROWS",
                        help="cost [i, j] of deciding class i when the truth is class j, classes in sorted "
                             "order: a CSV file or rows '0,1;5,0'; predictions minimise the expected cost"),
}


def flag(name):
    return "--" + name.replace("_", "-")


def add_parameter_flags(parser):
    group = parser.add_argument_group("model parameters (each model takes those it has; see 'nbgpu info MODEL')")
    for name, kwargs in PARAMETERS.items():
        # Not given: argparse.SUPPRESS leaves the attribute unset, so the model's default applies.
        group.add_argument(flag(name), dest=name, default=argparse.SUPPRESS, **kwargs)


def given_flags(args):
    """``{name: value}`` of the parameter flags given on the command line."""
    return {name: getattr(args, name) for name in PARAMETERS if hasattr(args, name)}


def checked_model(family, params, refusal=None):
    """The core model ``family`` (no scikit-learn) with ``params`` (``{name: value}`` of parameter flags); one
    it does not take (``refusal(flags)``: the message; default: the first, and those it takes) or a bad
    value is a :class:`UsageError`."""
    from .._estimator.params import validate_params
    from .._models import model_class

    cls = model_class(family, core=True)
    accepted = cls._get_param_names()
    wrong = [flag(name) for name in params if name not in accepted]
    if wrong:
        usable = ", ".join(flag(p) for p in PARAMETERS if p in accepted)
        msg = refusal(wrong) if refusal else f"{wrong[0]} does not apply to {family} (its parameters: {usable})"
        raise UsageError(msg, "nbgpu train")
    model = cls(**params)
    try:
        validate_params(model)
    except ValueError as exc:
        raise UsageError(" ".join(str(exc).split()), "nbgpu train") from None
    return model
