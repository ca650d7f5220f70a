"""``nbgpu train --model auto``: the features, the model family and alpha chosen by
cross-validation from the statistics, in the pass that trains.

The rows of the file are dealt to ``FOLDS`` folds (row number mod ``FOLDS``). Every fold keeps,
for every :class:`~nbgpu._app.feature_choice.FeatureSet` (on text: unigrams or 1-2grams, counts
or sublinear tf; else the columns as read), a running model of its statistics
(``training._OnePass``): MultinomialNB's (class counts and per-class feature sums, which
ComplementNB shares) and, on count data that are not hashed text, BernoulliNB's. Every candidate,
a feature set, a family and an alpha, is made from the statistics of "every fold but f" without
touching data and scored (accuracy) on a uniform sample of at most ``SAMPLE_ROWS`` rows of fold f
(bottom-k of random keys, a fixed seed), seen through its feature set. Where the best alpha is at
an edge of the grid, the grid of its feature set and family is extended that way (1, 3, 10, ...)
until it is not: scoring is cheap, the statistics are there. The model saved is the best candidate
made from the statistics of all the folds: no refit, no second pass.

Data that are not counts are for GaussianNB: a negative value, or dense data holding a value that
is not a whole number (measurements, such as iris's). :class:`NotCounts` says so and the command
trains that instead.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from .feature_choice import FeatureSet, feature_sets
from .options import PARAMETERS, UsageError, checked_model, flag
from .training import PER_CLASS_PARAMETERS, _OnePass, _SecondPassNeeded, made_from

FOLDS = 5
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
ALPHA_LIMITS = (1e-6, 1e6)  # the grid is extended no further than this
SAMPLE_ROWS = 2000  # per fold: 5 x 2000 rows scored at most
# Successive halving (:func:`search`): beyond this many rows x candidates, all candidates are scored on one
# fold and the best SURVIVORS on every fold.
SCREEN_ABOVE = 200_000
SCREEN_ROWS = 500
SURVIVORS = 4
FAMILIES = ("MultinomialNB", "ComplementNB")  # those whose parameters --model auto takes
SEED = 0
# The statistics each family is made from: ComplementNB's are MultinomialNB's.
STATISTICS = {"MultinomialNB": "MultinomialNB", "ComplementNB": "MultinomialNB", "BernoulliNB": "BernoulliNB"}


class NotCounts(Exception):
    """A negative feature value: the data are not counts. ``chunk``: the chunk, when nothing was
    fitted before it (the caller can start again from it without reading the file again)."""

    def __init__(self, message, chunk=None):
        super().__init__(message)
        self.chunk = chunk


class Candidate(NamedTuple):
    family: str  # "MultinomialNB", "ComplementNB" or "BernoulliNB"
    params: dict  # alpha (and norm), as searched
    features: FeatureSet = FeatureSet(None, "counts")

    @property
    def name(self):
        params = ", ".join(f"{k}={v:g}" if k == "alpha" else f"{k}={v}" for k, v in self.params.items())
        shown = "" if self.features == FeatureSet(None, "counts") else f" on {self.features.name}"
        return f"{self.family}({params}){shown}"

    @property
    def group(self):
        """What the candidates of one alpha grid share: all but alpha."""
        return self.family, tuple(sorted((k, v) for k, v in self.params.items() if k != "alpha")), self.features

    @property
    def statistics(self):
        """The key of the fold models it is made from."""
        return STATISTICS[self.family], self.features

    def with_alpha(self, alpha):
        return self._replace(params={**self.params, "alpha": alpha})


def search_setup(given, *, text=False, ngram_fixed=False):
    """The estimator and the ``state`` arguments of ``training.train`` for --model auto with the
    parameter flags ``given`` (``{name: value}``); ``text``: the data are hashed text, whose
    n-grams (unless ``ngram_fixed``) and term weighting are chosen too. A flag that neither
    MultinomialNB nor ComplementNB takes is a :class:`UsageError`; ``--norm`` keeps ComplementNB
    only, with that norm; ``--alpha`` fixes alpha (no grid, so no extension)."""
    from .._models import model_class

    takes = {family: model_class(family, core=True)._get_param_names() for family in (*FAMILIES, "BernoulliNB")}
    shared = [p for p in PARAMETERS if all(p in takes[f] for f in FAMILIES)]
    for name in given:
        if not any(name in takes[f] for f in FAMILIES):
            usable = ", ".join(flag(p) for p in PARAMETERS if p in shared or p == "norm")
            raise UsageError(f"{flag(name)} does not apply to --model auto, which chooses among MultinomialNB and "
                             f"ComplementNB (their parameters: {usable}); name the model with --model",
                             "nbgpu train")
    alphas = (given["alpha"],) if "alpha" in given else ALPHAS
    fixed = {k: v for k, v in given.items() if k in shared and k != "alpha"}
    families = ([("ComplementNB", {"norm": True})] if given.get("norm")
                else [("MultinomialNB", {}), ("ComplementNB", {})])
    if not text and "norm" not in given:
        # Presence statistics of their own: worth it on count columns, not on 2 x 2**20 hashed ones.
        families.append(("BernoulliNB", {}))
    candidates = [Candidate(family, {"alpha": a, **extra}, features)
                  for features in feature_sets(text=text, ngram_fixed=ngram_fixed)
                  for family, extra in families for a in alphas]
    for candidate in candidates:  # a bad value is a usage error now, before any reading
        estimator(candidate, fixed)
    # The fold models only gather statistics, the same for every candidate of a key.
    return model_class("MultinomialNB", core=True)(), functools.partial(
        FoldedPass, candidates=candidates, fixed=fixed, extend="alpha" not in given)


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
    extended: list = []  # lines saying where the alpha grid was extended, and why

    @property
    def scored(self):
        """Whether any fold could be scored (else the choice is the default)."""
        return not np.isnan(self.mean[self.best])

    def record(self):
        best = self.candidates[self.best]
        return {
            "method": f"{len(self.rows_scored)}-fold cross-validation (rows mod {len(self.rows_scored)}), accuracy",
            "chosen": {"estimator": best.family, **best.params},
            "features": best.features.record(),
            "rows_scored": int(sum(self.rows_scored)),
            "alpha_grid_extended": self.extended,
            "candidates": [
                {"estimator": c.family, **c.params, "features": c.features.record(), "mean": _number(m),
                 "std": _number(s), "folds": [_number(v) for v in row]}
                for c, m, s, row in zip(self.candidates, self.mean, self.std, self.scores)
            ],
        }

    def summary(self):
        """One line: what was chosen and how."""
        best, mean, std = self.candidates[self.best], self.mean[self.best], self.std[self.best]
        if not self.scored:
            return (f"{best.name}, the default: {sum(self.rows_scored)} row(s) are too few to cross-validate "
                    f"(each of {len(self.rows_scored)} folds needs rows to score and others to learn from)")
        return (f"{best.name}, accuracy {mean:.4f} ± {std:.4f} by {len(self.rows_scored)}-fold "
                f"cross-validation on {sum(self.rows_scored):,} held-out rows, among {len(self.candidates)} candidates")

    def table(self):
        """The best alpha of each feature set and family, a line each, the chosen marked, under a line that says
        what they are; then where the alpha grid was extended. Empty if nothing could be scored."""
        if not self.scored:
            return ""
        best_of = {}
        for i, c in enumerate(self.candidates):
            j = best_of.get(c.group)
            if j is None or self.mean[i] > self.mean[j]:
                best_of[c.group] = i
        chosen = self.candidates[self.best].group
        names = {g: self.candidates[i].name for g, i in best_of.items()}
        width = max(map(len, names.values()))
        complete = np.sum(~np.isnan(self.scores), axis=1).max()
        lines = [f" {'*' if g == chosen else ' '} {names[g]:<{width}}  {self.mean[i]:.4f} "
                 + (f"± {self.std[i]:.4f}" if np.sum(~np.isnan(self.scores[i])) == complete
                    else "(screened out on part of one fold)") for g, i in best_of.items()]
        return (f"--model auto: accuracy by {len(self.rows_scored)}-fold cross-validation on "
                f"{sum(self.rows_scored):,} held-out rows, the best alpha of each feature set and family "
                "(mean ± std over the folds; * chosen):\n" + "\n".join(lines + self.extended))


def _number(value):
    return None if np.isnan(value) else round(float(value), 6)


def fold_means(scores):
    """Mean and std of each candidate's accuracy over the folds it was scored on (NaN if none)."""
    scored = ~np.isnan(scores)
    count = np.sum(scored, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(scored, scores, 0.0).sum(axis=1) / count
        std = np.sqrt(np.where(scored, (scores - mean[:, None]) ** 2, 0.0).sum(axis=1) / count)
    return mean, std


def rests(folds):
    """For every fold f, the model of the data of every other fold (None if
    there is none): merges of prefixes and suffixes, 3k merges, not k²."""
    k = len(folds)
    before, after = [None] * (k + 1), [None] * (k + 1)
    for f in range(k):
        before[f + 1] = merged([before[f], folds[f]])
        after[k - f - 1] = merged([folds[k - f - 1], after[k - f]])
    return [merged([before[f], after[f + 1]]) for f in range(k)]


def next_alpha(alpha, up):
    """The grid's next alpha beyond ``alpha``: 1, 3, 10, 30, ... upwards (``up``), the same downwards."""
    decade = 10.0 ** math.floor(math.log10(alpha) + 1e-9)
    ones = alpha / decade < 2  # a 1 x 10^e point, else a 3 x 10^e one
    return float(f"{(alpha * (3 if ones else 10 / 3)) if up else (alpha * (0.3 if ones else 1 / 3)):.3g}")


class FoldScorer:
    """Scores candidates fold by fold: the models of "every fold but f" of each statistics key, and each
    fold's sample seen through each feature set, made once (when first needed) and shared by the candidates."""

    def __init__(self, fixed, folds, samples):
        self.fixed, self.folds, self.samples = fixed, folds, samples
        self.rests, self.views = {}, {}

    def _rest(self, key, f):
        if (key, None) not in self.rests and (key, f) not in self.rests:
            models = [None if fold is None else fold.get(key) for fold in self.folds]
            if f is None:  # every fold's: prefix and suffix merges
                self.rests.update({(key, g): rest for g, rest in enumerate(rests(models))})
                self.rests[key, None] = True
            else:
                self.rests[key, f] = merged(models[:f] + models[f + 1:])
        return self.rests[key, f] if f is not None else None

    def _view(self, features, f, rows):
        if (features, f, rows) not in self.views:
            self.views[features, f, rows] = features.view(self.samples[f].X[:rows])
        return self.views[features, f, rows]

    def scorable(self):
        """The folds that can be scored: rows of their own, and rows in the others."""
        rows = [s.rows for s in self.samples]
        return [f for f, n in enumerate(rows) if n and sum(rows) > n]

    def scores(self, candidates, folds=None, out=None, rows=None):
        """``candidates x folds`` accuracies (written into ``out`` if given): each candidate made from the
        statistics of every fold but f, scored on fold f's :class:`_Sample` (its first ``rows`` if given),
        for f in ``folds`` (default: every fold that can be scored; NaN elsewhere)."""
        out = np.full((len(candidates), len(self.samples)), np.nan) if out is None else out
        folds = self.scorable() if folds is None else folds
        for i, candidate in enumerate(candidates):
            model = estimator(candidate, self.fixed, per_class=False)
            for f in folds:
                if not np.isnan(out[i, f]):
                    continue
                if len(folds) > 1:
                    self._rest(candidate.statistics, None)
                rest = self._rest(candidate.statistics, f)
                if rest is None:
                    continue
                predicted = made_from(model, rest, lazy=True).predict(self._view(candidate.features, f, rows))
                out[i, f] = float(np.mean(np.asarray(predicted) == np.asarray(self.samples[f].y[:rows])))
        return out


def search(candidates, scorer, *, extend):
    """The :class:`Search` of ``candidates`` by ``scorer`` (a :class:`FoldScorer`); ``extend``: while the best
    alpha is the largest (smallest) of its feature set and family, score the next one beyond it.

    Where scoring every candidate on every fold would score more than ``SCREEN_ABOVE`` rows, every candidate is
    first scored on ``SCREEN_ROWS`` rows of one fold and only the best ``SURVIVORS`` on all the rows of every fold
    (successive halving): candidates far behind on a thousand rows do not come back. Only the finalists' scores
    (and those of the alphas the grid is extended to) are over every fold; the others' are the screening's."""
    candidates = list(candidates)
    folds = scorer.scorable()
    rows = [s.rows for s in scorer.samples]
    if not folds:  # too few rows for any fold to be scored: the alpha nearest the default, 1
        best = min(range(len(candidates)), key=lambda i: abs(candidates[i].params["alpha"] - 1.0))
        nan = np.full(len(candidates), np.nan)
        return Search(candidates, np.full((len(candidates), len(rows)), np.nan), nan, nan, rows, best)
    scores = np.full((len(candidates), len(rows)), np.nan)
    finalists = range(len(candidates))
    if len(folds) > 1 and len(candidates) > SURVIVORS and sum(rows) * len(candidates) > SCREEN_ABOVE:
        scorer.scores(candidates, folds[:1], out=scores, rows=SCREEN_ROWS)
        finalists = np.argsort(-scores[:, folds[0]], kind="stable")[:SURVIVORS]
        scores[finalists] = np.nan  # scored again on every row
    for i in finalists:
        scorer.scores([candidates[i]], folds, out=scores[i:i + 1])
    extended = []
    while True:
        mean, std = fold_means(scores)
        complete = ~np.isnan(scores[:, folds]).any(axis=1)  # the finalists: scored on every fold
        best = int(np.argmax(np.where(complete, mean, -1.0)))  # the first on a tie: the grid's before its extension
        group = [c.params["alpha"] for c in candidates if c.group == candidates[best].group]
        alpha = candidates[best].params["alpha"]
        up = alpha == max(group)
        beyond = next_alpha(alpha, up) if extend and len(group) > 1 and alpha in (max(group), min(group)) else None
        if beyond is None or not ALPHA_LIMITS[0] <= beyond <= ALPHA_LIMITS[1]:
            break
        new = candidates[best].with_alpha(beyond)
        extended.append(f"   alpha grid extended {'up' if up else 'down'} to {beyond:g} for "
                        f"{new._replace(params={k: v for k, v in new.params.items() if k != 'alpha'}).name}: "
                        f"its best alpha, {alpha:g}, was at the edge")
        candidates.append(new)
        scores = np.vstack([scores, scorer.scores([new], folds)])
    return Search(candidates, scores, mean, std, rows, best, extended)


class FoldedPass(_OnePass):
    """The running state of ``training.train`` with models per fold and statistics key; its
    result is the best of ``candidates`` on the statistics of all the folds."""

    def __init__(self, estimator, reader, *, candidates, fixed, extend=True, **kwargs):
        super().__init__(estimator, reader, **kwargs)
        self.candidates, self.fixed, self.extend = candidates, fixed, extend
        self.keys = list(dict.fromkeys(c.statistics for c in candidates))
        self.bases = {stats: checked_model(stats, {k: v for k, v in fixed.items() if k not in PER_CLASS_PARAMETERS})
                      for stats, _ in self.keys}
        rng = np.random.default_rng(SEED)
        self.folds = [None] * FOLDS  # per fold: {statistics key: running model}
        self.samples = [_Sample(SAMPLE_ROWS, rng) for _ in range(FOLDS)]
        self.data_width = None

    def _width(self):
        return self.data_width  # of the data as read (hashed text: twice the models')

    def _absorb(self, X, y, where):
        values = X.data if hasattr(X, "indices") else X
        low = np.nanmin(values) if values.size else 0.0
        chunk = self._chunk if self.rows == 0 else None
        if low < 0:
            raise NotCounts(f"{where} holds a negative feature value ({low:g})", chunk)
        if not hasattr(X, "indices"):
            fractional = values[np.isfinite(values) & (values != np.round(values))]
            if fractional.size:  # dense values that are not whole numbers: measurements
                raise NotCounts(f"{where} holds values that are not whole numbers (e.g. {fractional[0]:g}), "
                                "measurements rather than counts", chunk)
        if self.data_width is not None and X.shape[1] != self.data_width:
            # The fold models must stay of one width to merge (training's rule for one model).
            raise _SecondPassNeeded(f"feature indices beyond {self.data_width} appear after the first chunk")
        self.data_width = X.shape[1]
        y = np.asarray(y)
        views = {features: features.view(X) for _, features in self.keys}  # once a chunk, not once a fold
        for f in range(FOLDS):
            rows = np.arange((f - self.rows) % FOLDS, X.shape[0], FOLDS)  # row number mod FOLDS is f
            if rows.size == 0:
                continue
            labels = y[rows]
            models = self.folds[f] if self.folds[f] is not None else {}
            for key in self.keys:
                stats, features = key
                seen = self.to_device(views[features][rows])
                models[key] = self._grown(models.get(key), seen, labels, where, base=self.bases[stats])
            self.folds[f] = models
            self.samples[f].add(X[rows], labels)

    def result(self):
        if all(fold is None for fold in self.folds):
            raise ValueError(f"{self.reader.path} holds no data rows")
        scorer = FoldScorer(self.fixed, self.folds, self.samples)
        self.search = search(self.candidates, scorer, extend=self.extend)
        best = self.search.candidates[self.search.best]
        total = merged([fold.get(best.statistics) for fold in self.folds if fold is not None])
        return made_from(estimator(best, self.fixed), total, lazy=True)

    @property
    def features(self):
        """The chosen feature set (after :meth:`result`)."""
        return self.search.candidates[self.search.best].features


def record_text(record):
    """``nbgpu info``'s line of a model file's search record (free-form JSON
    from a file: shown as it is unless it has the expected shape)."""
    try:
        chosen = dict(record["chosen"])
        family = chosen.pop("estimator")
        features = record.get("features", {"tf": "counts"})
        best = next(c for c in record["candidates"] if c.get("estimator") == family
                    and c.get("features", features) == features and all(c.get(k) == v for k, v in chosen.items()))
        ngram = features.get("ngram_range")
        name = Candidate(family, chosen, FeatureSet(None if ngram is None else ngram[1], features["tf"])).name
        return (f"{name} chosen by {record['method']} on {record['rows_scored']:,} held-out rows among "
                f"{len(record['candidates'])} candidates (mean {best['mean']:.4f} ± {best['std']:.4f})")
    except (KeyError, TypeError, ValueError, AttributeError, StopIteration):
        return str(record)
