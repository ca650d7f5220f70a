"""``nbgpu train --model auto``: the count model and its alpha chosen by
cross-validation from the statistics, in the pass that trains.

The rows of the file are dealt to ``FOLDS`` folds (row number mod
``FOLDS``), each with a running model of its own (``training._OnePass``).
MultinomialNB and ComplementNB have the same statistics (class counts and
per-class feature sums), so every candidate, a family and an alpha, is made
from the statistics of "every fold but f" without touching data and scored
(accuracy) on a uniform sample of at most ``SAMPLE_ROWS`` rows of fold f
(bottom-k of random keys, a fixed seed). The model saved is the best
candidate made from the statistics of all the folds: no refit, no second pass.

Data that are not counts (a negative feature value) are for GaussianNB:
:class:`NotCounts` says so and the command trains that instead.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .options import PARAMETERS, UsageError, checked_model, flag
from .training import PER_CLASS_PARAMETERS, _OnePass, _SecondPassNeeded, made_from

FOLDS = 5
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0)
SAMPLE_ROWS = 4000  # per fold: 5 x 4000 rows scored at most
FAMILIES = ("MultinomialNB", "ComplementNB")
SEED = 0


class NotCounts(Exception):
    """A negative feature value: the data are not counts. ``chunk``: the chunk, when nothing was
    fitted before it (the caller can start again from it without reading the file again)."""

    def __init__(self, message, chunk=None):
        super().__init__(message)
        self.chunk = chunk


class Candidate(NamedTuple):
    family: str  # "MultinomialNB" or "ComplementNB"
    params: dict  # alpha (and norm), as searched

    @property
    def name(self):
        params = ", ".join(f"{k}={v:g}" if k == "alpha" else f"{k}={v}" for k, v in self.params.items())
        return f"{self.family}({params})"


def search_setup(given):
    """The estimator and the ``state`` arguments of ``training.train`` for --model auto with the
    parameter flags ``given`` (``{name: value}``). A flag that neither count model takes is a
    :class:`UsageError`; ``--norm`` keeps ComplementNB only, with that norm; ``--alpha`` fixes
    alpha (the family is searched)."""
    from .._models import model_class

    takes = {family: model_class(family, core=True)._get_param_names() for family in FAMILIES}
    shared = [p for p in PARAMETERS if all(p in params for params in takes.values())]
    for name in given:
        if not any(name in params for params in takes.values()):
            usable = ", ".join(flag(p) for p in PARAMETERS if p in shared or p == "norm")
            raise UsageError(f"{flag(name)} does not apply to --model auto, which chooses among MultinomialNB and "
                             f"ComplementNB (their parameters: {usable}); name the model with --model",
                             "nbgpu train")
    alphas = (given["alpha"],) if "alpha" in given else ALPHAS
    fixed = {k: v for k, v in given.items() if k in shared and k != "alpha"}
    candidates = []
    if "norm" not in given:
        candidates += [Candidate("MultinomialNB", {"alpha": a}) for a in alphas]
    norms = (given["norm"],) if "norm" in given else (False, True)
    for norm in norms:
        candidates += [Candidate("ComplementNB", {"alpha": a, **({"norm": True} if norm else {})}) for a in alphas]
    for candidate in candidates:  # a bad value is a usage error now, before any reading
        estimator(candidate, fixed)
    # The fold models only gather statistics, the same for every candidate.
    return model_class("MultinomialNB", core=True)(), functools.partial(FoldedPass, candidates=candidates, fixed=fixed)


def estimator(candidate, fixed, *, per_class=True):
    """The unfitted estimator of ``candidate`` with the ``fixed`` parameters
    (without those of one value per class unless ``per_class``)."""
    params = {**fixed, **candidate.params}
    if not per_class:
        params = {k: v for k, v in params.items() if k not in PER_CLASS_PARAMETERS}
    return checked_model(candidate.family, params)


def merged(models):
    """The model fitted on the data of every model in ``models`` (Nones skipped); None if there is none."""
    present = [m for m in models if m is not None]
    return functools.reduce(lambda total, other: total.merge(other), present) if present else None


def _stacked(top, bottom):
    """The rows of ``top`` then ``bottom`` (of one width: the fold models keep one)."""
    if hasattr(top, "indices"):
        import scipy.sparse as sp

        return sp.vstack([top, bottom], format="csr")
    return np.concatenate([top, bottom])


class _Sample:
    """A uniform sample of at most ``size`` rows of a stream (the rows of
    least random key): what a fold is scored on."""

    def __init__(self, size, rng):
        self.size, self.rng = size, rng
        self.X, self.y, self.keys = None, None, np.empty(0)

    def add(self, X, y):
        keys = self.rng.random(X.shape[0])
        if self.keys.size == self.size:  # full: only rows of smaller keys than the largest kept enter
            enter = keys < self.keys.max()
            if not np.any(enter):
                return
            X, y, keys = X[enter], y[enter], keys[enter]
        if self.X is not None:
            X, y, keys = _stacked(self.X, X), np.concatenate([self.y, y]), np.concatenate([self.keys, keys])
        if keys.size > self.size:
            keep = np.sort(np.argpartition(keys, self.size - 1)[: self.size])
            X, y, keys = X[keep], y[keep], keys[keep]
        self.X, self.y, self.keys = X, y, keys

    @property
    def rows(self):
        return self.keys.size


class Search(NamedTuple):
    """What the search scored and chose (``record()``: the model file's metadata)."""

    candidates: list
    scores: np.ndarray  # candidates x folds, NaN where a fold could not be scored
    mean: np.ndarray  # per candidate, over the folds scored (:func:`fold_means`)
    std: np.ndarray
    rows_scored: list  # per fold
    best: int

    def record(self):
        return {
            "method": f"{len(self.rows_scored)}-fold cross-validation (rows mod {len(self.rows_scored)}), accuracy",
            "chosen": {"estimator": self.candidates[self.best].family, **self.candidates[self.best].params},
            "rows_scored": int(sum(self.rows_scored)),
            "candidates": [
                {"estimator": c.family, **c.params, "mean": _number(m), "std": _number(s),
                 "folds": [_number(v) for v in row]}
                for c, m, s, row in zip(self.candidates, self.mean, self.std, self.scores)
            ],
        }

    def summary(self):
        """One line: what was chosen and how."""
        best, mean, std = self.candidates[self.best], self.mean[self.best], self.std[self.best]
        if np.isnan(mean):
            return f"{best.name} (too few rows to cross-validate: the default)"
        return (f"{best.name}, accuracy {mean:.4f} ± {std:.4f} by {len(self.rows_scored)}-fold "
                f"cross-validation on {sum(self.rows_scored):,} held-out rows, among {len(self.candidates)} candidates")

    def table(self):
        """The fold scores, a line per candidate, the best marked, under a line that says what they are."""
        width = max(len(c.name) for c in self.candidates)
        lines = (f" {'*' if i == self.best else ' '} {c.name:<{width}}  {m:.4f} ± {s:.4f}"
                 for i, (c, m, s) in enumerate(zip(self.candidates, self.mean, self.std)))
        return (f"--model auto: accuracy by {len(self.rows_scored)}-fold cross-validation on "
                f"{sum(self.rows_scored):,} held-out rows (mean ± std over the folds; * chosen):\n" + "\n".join(lines))


def _number(value):
    return None if np.isnan(value) else round(float(value), 6)


def fold_means(scores):
    """Mean and std of each candidate's accuracy over the folds scored (NaN if none was)."""
    scored = ~np.isnan(scores[0])
    if not np.any(scored):
        return np.full(len(scores), np.nan), np.full(len(scores), np.nan)
    return np.mean(scores[:, scored], axis=1), np.std(scores[:, scored], axis=1)


def rests(folds):
    """For every fold f, the model of the data of every other fold (None if
    there is none): merges of prefixes and suffixes, 3k merges, not k²."""
    k = len(folds)
    before, after = [None] * (k + 1), [None] * (k + 1)
    for f in range(k):
        before[f + 1] = merged([before[f], folds[f]])
        after[k - f - 1] = merged([folds[k - f - 1], after[k - f]])
    return [merged([before[f], after[f + 1]]) for f in range(k)]


def score_folds(candidates, fixed, folds, samples):
    """``candidates x folds`` accuracies: each candidate made from the
    statistics of every fold but f, scored on fold f's :class:`_Sample`
    (NaN where fold f has no rows or the others none)."""
    scores = np.full((len(candidates), len(folds)), np.nan)
    unfitted = [estimator(c, fixed, per_class=False) for c in candidates]
    for f, (sample, rest) in enumerate(zip(samples, rests(folds))):
        if rest is None or sample.rows == 0:
            continue
        # Candidates share the fold's statistics, and what they derive from
        # them alone (sparse sums keep their totals).
        for i, model in enumerate(unfitted):
            predicted = made_from(model, rest, lazy=True).predict(sample.X)
            scores[i, f] = float(np.mean(np.asarray(predicted) == np.asarray(sample.y)))
    return scores


class FoldedPass(_OnePass):
    """The running state of ``training.train`` with a model per fold; its
    result is the best of ``candidates`` on the statistics of all the folds."""

    def __init__(self, estimator, reader, *, candidates, fixed, **kwargs):
        super().__init__(estimator, reader, **kwargs)
        self.candidates, self.fixed = candidates, fixed
        rng = np.random.default_rng(SEED)
        self.folds = [None] * FOLDS
        self.samples = [_Sample(SAMPLE_ROWS, rng) for _ in range(FOLDS)]

    def _width(self):
        return next((m.n_features_in_ for m in self.folds if m is not None), None)  # the folds' one width

    def _absorb(self, X, y, where):
        values = X.data if hasattr(X, "indices") else X
        low = np.nanmin(values) if values.size else 0.0
        if low < 0:
            chunk = self._chunk if self.rows == 0 else None
            raise NotCounts(f"{where} holds a negative feature value ({low:g})", chunk)
        if any(m is not None and m.n_features_in_ != X.shape[1] for m in self.folds):
            # The fold models must stay of one width to merge (training's rule for one model).
            raise _SecondPassNeeded(f"feature indices beyond {self._width()} appear after the first chunk")
        y = np.asarray(y)
        for f in range(FOLDS):
            rows = np.arange((f - self.rows) % FOLDS, X.shape[0], FOLDS)  # row number mod FOLDS is f
            if rows.size == 0:
                continue
            part, labels = X[rows], y[rows]
            self.folds[f] = self._grown(self.folds[f], self.to_device(part), labels, where)
            self.samples[f].add(part, labels)

    def result(self):
        total = merged(self.folds)
        if total is None:
            raise ValueError(f"{self.reader.path} holds no data rows")
        scores = score_folds(self.candidates, self.fixed, self.folds, self.samples)
        mean, std = fold_means(scores)
        if np.isnan(mean[0]):  # too few rows for any fold to be scored: the alpha nearest the default, 1
            best = min(range(len(self.candidates)), key=lambda i: abs(self.candidates[i].params["alpha"] - 1.0))
        else:  # the best mean accuracy, the first of the list on a tie
            best = int(np.argmax(mean))
        self.search = Search(self.candidates, scores, mean, std, [s.rows for s in self.samples], best)
        return made_from(estimator(self.candidates[best], self.fixed), total, lazy=True)


def record_text(record):
    """``nbgpu info``'s line of a model file's search record (free-form JSON
    from a file: shown as it is unless it has the expected shape)."""
    try:
        chosen = dict(record["chosen"])
        family = chosen.pop("estimator")
        best = next(c for c in record["candidates"]
                    if c.get("estimator") == family and all(c.get(k) == v for k, v in chosen.items()))
        name = Candidate(family, chosen).name
        return (f"{name} chosen by {record['method']} on {record['rows_scored']:,} held-out rows among "
                f"{len(record['candidates'])} candidates (mean {best['mean']:.4f} ± {best['std']:.4f})")
    except (KeyError, TypeError, ValueError, AttributeError, StopIteration):
        return str(record)
