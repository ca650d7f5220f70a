"""Training a model from a data file in one pass.

The file is parsed in a background thread (``readers.parsed_chunks``) while the previous chunk is
fitted. What a first pass used to find is learned on the way:

- Classes. Every chunk is fitted with ``partial_fit``; a chunk that brings new labels is fitted as a
  model of its own and merged into the running one (their union of classes). ``--classes`` fixes them.
- Label type. Labels read as text are integers while every label seen is a whole number; a later
  non-numeric label makes them all strings.
- svmlight features. Without ``--n-features`` the model has as many features as the largest index
  seen (+1 when zero-based). Without ``--zero-based`` the file is one-based unless an index 0 appears
  (scikit-learn's rule).

Where the running model cannot absorb a chunk (``merge`` refuses models of different widths; the
label type or indexing base changes after chunks were fitted), the rest of the file is read for its
labels and indices only and a second pass fits the model with everything known. A file that cannot be
read twice (a FIFO, standard input) then needs ``--n-features`` and ``--zero-based`` (or
``--classes``). Parameters that hold one value per class (``class_prior``, ``priors``,
``loss_matrix``) are set at the end.
"""
from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np

from .readers import (
    align_labels,
    is_regular_file,
    lines_where,
    machine_memory,
    min_index,
    parsed_chunks,
    typed_labels,
)
from .._estimator.params import unfitted, validate_params

# Parameters whose length is the number of classes.
PER_CLASS_PARAMETERS = ("class_prior", "priors", "loss_matrix")


class Trained(NamedTuple):
    model: object
    rows: int
    passes: int
    zero_based: object  # svmlight: the indexing base used; else None
    search: object = None  # --model auto: the search's record (model_choice.Search)


class _SecondPassNeeded(Exception):
    """The running model cannot take this chunk; the message says why."""


class _Seen:
    """Labels and svmlight indices of every chunk read: enough for a second pass. With ``reader`` (classes
    not given), labels that are all numbers, some not whole, are refused as continuous (scikit-learn's
    ``type_of_target``) until a label that is not a number is seen (the labels are then words)."""

    def __init__(self, reader=None):
        self.labels, self.low, self.width, self.rows = None, None, 0, 0
        self.reader = reader  # None once the labels are words: then none is continuous

    def add(self, chunk):
        if self.reader is not None:
            self._check_not_continuous(chunk)
        self.rows += chunk.X.shape[0]
        # One running union: memory stays the classes' however many chunks there are.
        found = np.unique(chunk.y)
        self.labels = found if self.labels is None else np.union1d(self.labels, found)
        low = min_index(chunk.X) if hasattr(chunk.X, "indices") else None
        if low is not None:
            self.low = low if self.low is None else min(self.low, low)
        self.width = max(self.width, chunk.X.shape[1])

    def _check_not_continuous(self, chunk):
        y = np.asarray(chunk.y)
        if y.dtype.kind in "US":
            try:
                y = y.astype(np.float64)
            except ValueError:
                self.reader = None
                return
        if y.dtype.kind != "f" or not np.all(np.isfinite(y)):
            return
        fractional = y != np.round(y)
        if np.any(fractional):
            reader, example = self.reader, np.asarray(chunk.y)[np.argmax(fractional)]
            source = 'the labels ("label" field)' if reader.format == "jsonl" else "the labels"
            if reader.format == "csv" and reader.names is not None:
                with contextlib.suppress(ValueError, TypeError, IndexError):
                    source = f"the labels (column {reader.names[reader.label_index()]!r})"
            raise ValueError(
                f"{lines_where(reader.path, chunk.lines)}: {source} are continuous values (e.g. {example}), not "
                "class labels: Unknown label type: continuous (naive Bayes classifies; "
                + ("--label-column names the column of class labels)" if reader.format == "csv"
                   else "round the labels to classes first)")
            )


def _check_size(estimator, n_classes, n_features, where, *, hashed=False):
    """Refuse a model larger than this machine's memory (statistics, parameters, weights: about 32 bytes
    per class and feature, or per class and pair of features for a full covariance)."""
    memory = machine_memory()
    if memory is None:
        return
    per_class = n_features * n_features if type(estimator).__name__ == "NormalBayesClassifier" else n_features
    need = 8 * 4 * n_classes * per_class
    if need > memory:
        msg = (
            f"a {type(estimator).__name__} of {n_classes} classes and {n_features} features needs about "
            f"{need / 2**30:.0f} GiB, more than this machine's {memory / 2**30:.0f} GiB "
            + ("(--hash-features sets the number of hashed text features)" if hashed
               else f"(is a feature index in {where} wrong? --n-features bounds it)")
        )
        raise ValueError(msg)


class _OnePass:
    """The running model and what it takes to add a chunk to it."""

    def __init__(self, estimator, reader, *, classes, n_features, zero_based, to_device):
        self.reader, self.to_device = reader, to_device
        self.classes, self.n_features = classes, n_features
        self.svmlight = reader.format == "svmlight"
        self.zero_based = zero_based  # svmlight: None until a chunk with features decides
        self.base_decided = zero_based is not None
        self.estimator = estimator
        # Classes not given: per-class parameters are set at the end.
        unset = {p: None for p in PER_CLASS_PARAMETERS if classes is None and p in estimator._params()}
        self.base = unfitted(estimator, **unset)
        self.kind = None if classes is None else classes.dtype.kind
        self.model, self.rows, self.seen = None, 0, _Seen(reader if classes is None else None)
        self.search = None  # what result() chose, where it searches

    def _labels(self, raw):
        typed = typed_labels(raw)
        if self.classes is not None:
            # Text as written ("01" stays "01" for string classes), numbers typed (2.0 is 2).
            given = raw if raw.dtype.kind in "US" else typed
            return align_labels(given, self.classes, where=lines_where(self.reader.path, self._chunk.lines))
        kind = typed.dtype.kind
        if self.kind is None or kind == self.kind:
            self.kind = self.kind or kind
            return typed
        if self.kind == "U" and raw.dtype.kind == "U":
            return raw
        if self.kind == "f" and kind == "i":
            return typed.astype(np.float64)
        what = "not whole numbers" if kind == "f" else "not numbers"
        raise _SecondPassNeeded(f"labels that are {what} appear after the first chunk")

    def _svmlight_features(self, chunk):
        low = min_index(chunk.X)
        if not self.base_decided and low is not None:
            if self.zero_based is None:
                self.zero_based = low == 0
            elif low == 0 and not self.zero_based:
                raise _SecondPassNeeded("a feature index 0 appears after chunks read as one-based")
        zero_based = True if self.zero_based is None else self.zero_based
        width = self.n_features or max(chunk.X.shape[1] - (0 if zero_based else 1), self._width() or 1)
        return self.reader.layout(chunk, zero_based=zero_based, n_features=width)

    def _width(self):
        """The width of the running model(s): None before the first."""
        return None if self.model is None else self.model.n_features_in_

    def add(self, chunk):
        self._chunk = chunk
        self.seen.add(chunk)  # first: a chunk that needs a second pass is counted there
        y = self._labels(chunk.y)
        if self.svmlight:
            X = self._svmlight_features(chunk)
        else:
            X = self.reader.layout(chunk, n_features=self.n_features or self._width() or chunk.X.shape[1])
        self._absorb(X, y, lines_where(self.reader.path, chunk.lines))
        self.rows += X.shape[0]

    def _absorb(self, X, y, where):
        """Add the rows ``X`` (laid out, on the host), labels ``y`` (typed)."""
        self.model = self._grown(self.model, self.to_device(X), y, where)

    def _grown(self, model, X, y, where, *, base=None):
        """``model`` (None: no rows yet) with the rows ``X``, ``y`` added (a new model: one like ``base``,
        default the estimator's); a refusal (bad values for this model, e.g. negative counts) names the lines
        it comes from."""
        base = self.base if base is None else base
        chunk_classes = self.classes if self.classes is not None else np.unique(y)
        fits = model is not None and X.shape[1] == model.n_features_in_
        fits = fits and np.all(np.isin(chunk_classes, model.classes_))
        if not fits:  # a model of its own, merged
            n_classes = len(chunk_classes) if model is None else len(np.union1d(chunk_classes, model.classes_))
            _check_size(self.estimator, n_classes, X.shape[1], self.reader.path, hashed=self.reader._transform is not None)
        try:
            part = model.partial_fit(X, y) if fits else unfitted(base).partial_fit(X, y, classes=chunk_classes)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if fits or model is None:
            return part
        try:
            return model.merge(part)
        except ValueError:
            new = np.setdiff1d(chunk_classes, model.classes_)
            why = (f"labels {new[:5].tolist()} appear" if new.size else
                   f"feature indices beyond {model.n_features_in_} appear")
            raise _SecondPassNeeded(f"{why} after the first chunk") from None

    def result(self):
        if self.model is None:
            raise ValueError(f"{self.reader.path} holds no data rows")
        # Per-class parameters need the classes to be checked: without --classes, set here, once.
        per_class = any(getattr(self.estimator, p, None) is not None for p in PER_CLASS_PARAMETERS)
        if self.classes is None and per_class:
            return made_from(self.estimator, self.model)
        return self.model


def made_from(estimator, fitted, *, lazy=False):
    """``estimator`` (unfitted) made fitted with the statistics of ``fitted``, its
    parameters checked for them (``lazy``: nothing derived until it scores)."""
    from .._estimator.scoring import loss_matrix_of  # (imports scipy: not for --help)

    final = unfitted(estimator)
    validate_params(final)
    n_classes = len(fitted.classes_)
    final._check_params_for_fit(n_classes, fitted.n_features_in_)
    loss_matrix_of(final, n_classes)
    return final._become_fitted(
        fitted._stats, fitted.classes_, n_features=fitted.n_features_in_,
        feature_names=getattr(fitted, "feature_names_in_", None), score_dtype=fitted._fit_dtype_, lazy=lazy,
    )


def train(estimator, reader, *, progress, open_again, to_device, chunks=None, classes=None, n_features=None,
          state=None):
    """Fit ``estimator`` on the file of ``reader``; return a :class:`Trained`. ``progress(nbytes, rows, note)``
    is called after every chunk; ``open_again()`` gives a fresh reader of the file for a second pass;
    ``chunks``: ``parsed_chunks(reader, labels=True)`` if already started; ``state``: what makes the running
    state (default :class:`_OnePass`; ``model_choice`` gives one that keeps a model per cross-validation fold).
    """
    zero_based = getattr(reader, "zero_based", None)
    make_state = state or _OnePass
    for passes in (1, 2):
        state = make_state(estimator, reader, classes=classes, n_features=n_features, zero_based=zero_based,
                           to_device=to_device)
        why = None
        own = chunks is None  # closed here; the caller closes the chunks it gives
        with parsed_chunks(reader, labels=True, hash_here=True) if own else contextlib.nullcontext(chunks) as source:
            for chunk in source:
                if chunk.X is not None and why is not None:
                    state.seen.add(chunk)
                elif chunk.X is not None:
                    try:
                        state.add(chunk)
                    except _SecondPassNeeded as exc:
                        if passes == 2:
                            raise
                        why = str(exc)
                        if not is_regular_file(reader.source):
                            msg = (f"{reader.path}: {why}, and it cannot be read twice (not a regular file): "
                                   "give --classes (and, for svmlight, --n-features and --zero-based)")
                            raise ValueError(msg) from None
                progress(chunk.nbytes, state.seen.rows, None)
        if why is None:
            return Trained(state.result(), state.rows, passes, state.zero_based, state.search)
        # Second pass: classes, indexing base and width are known now (a chunk was seen: why is set).
        seen = state.seen
        if state.svmlight and zero_based is None:
            zero_based = seen.low == 0 if seen.low is not None else True
        if state.svmlight and n_features is None:
            n_features = max(seen.width - (0 if zero_based else 1), 1)
        classes = classes if classes is not None else typed_labels(seen.labels)
        progress(None, 0, f"a second pass is needed: {why}")
        reader, chunks = open_again(), None
