"""``nbgpu train --model auto``: the features, the model family and alpha chosen by
cross-validation from the statistics, in the pass that trains.

The rows of the file are dealt to ``FOLDS`` folds (row number mod ``FOLDS``). The pass keeps sums of
the stored values per code, a class and a fold (:class:`FoldSums`: one sort of the entries of a chunk,
however many feature sets and families are compared), those of the values a weighting changes, and a
uniform sample of at most ``SAMPLE_ROWS`` rows of each fold (bottom-k of random keys, a fixed seed).
Every :class:`~nbgpu._app.feature_choice.FeatureSet` (on text: unigrams or 1-2grams, counts or
sublinear tf; else the columns as read) reads its per-class sums from them (:class:`FoldStatistics`):
MultinomialNB's (class counts and per-class feature sums, which ComplementNB shares) and, on count
data that are not hashed text, BernoulliNB's. Every candidate, a feature set, a family and an alpha, is
made from the statistics of "every fold but f" (the sums of all the folds less fold f's) without
touching data, and scored (accuracy) on fold f's sample seen through its feature set, from the sums of
the columns those rows use only (:class:`FoldScorer`). Where the best alpha is at an edge of the
grid, the grid of its feature set and family is extended that way (1, 3, 10, ...) until it is not, and
the output says so. The model saved is the best candidate made from the statistics of all the folds
(each class's entries of a column, one run of its folds' codes, summed in order: no refit, no second
pass, no sort).

Data that are not counts are for GaussianNB: a negative value, or dense data holding a value that
is not a whole number (measurements, such as iris's). :class:`NotCounts` says so and the command
trains that instead.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._array import sums as class_sums
from .._array.class_sums import summed_entries
from .._array.paths import fast
from .._array.threads import parallel_map
from .feature_choice import FeatureSet, correction_views, corrections, feature_sets
from .options import PARAMETERS, UsageError, checked_model, flag
from .training import PER_CLASS_PARAMETERS, _OnePass, _SecondPassNeeded, made_from
from .._estimator.params import unfitted

FOLDS = 5
ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
ALPHA_LIMITS = (1e-6, 1e6)  # the grid is extended no further than this
SAMPLE_ROWS = 1000  # per fold: 5 x 1000 rows scored at most
# Successive halving (:func:`search`): beyond this many rows x candidates, all candidates are scored on one
# fold and the best SURVIVORS on every fold.
SCREEN_ABOVE = 200_000
SCREEN_ROWS = 300
SURVIVORS = 4
FAMILIES = ("MultinomialNB", "ComplementNB")  # those whose parameters --model auto takes
SEED = 0
LOG_ENTRIES = 2**22  # entries logged by a FoldSums before they are summed (64 MiB), or a quarter of the summed
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


def _stacked(top, bottom):
    """The rows of ``top`` then ``bottom`` (of one width)."""
    if hasattr(top, "indices"):
        return sp.vstack([top, bottom], format="csr")
    return np.concatenate([top, bottom])


def row_keys(first, n):
    """Sort keys of the stream's rows ``first`` to ``first + n - 1``: SplitMix64's bijective mix of the row
    number (uint64, all distinct), so a fold's sample is the same rows however the stream is cut into chunks."""
    z = (np.arange(first, first + n, dtype=np.uint64) + np.uint64(SEED + 1)) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class _Sample:
    """A uniform sample of at most ``size`` rows of a stream (the rows of
    least key, :func:`row_keys`): what a fold is scored on, in stream order."""

    def __init__(self, size):
        self.size = size
        self.X, self.y, self.keys = None, None, np.empty(0, np.uint64)

    def add(self, X, y, rows, keys):
        """Offer the rows ``rows`` of ``X``, of keys ``keys``, labels ``y`` (of every row of ``X``): only
        those that stay are copied."""
        if self.keys.size + keys.size > self.size:  # only rows of keys among the smallest kept enter
            cut = np.partition(np.concatenate([self.keys, keys]), self.size - 1)[self.size - 1]
            enter = keys <= cut
            if not np.any(enter):
                return
            rows, keys = rows[enter], keys[enter]
        X, y = X[rows], np.asarray(y)[rows]
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
        best_of[chosen] = self.best  # (not an alpha scored on part of one fold only)
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


def next_alpha(alpha, up):
    """The grid's next alpha beyond ``alpha``: 1, 3, 10, 30, ... upwards (``up``), the same downwards."""
    decade = 10.0 ** math.floor(math.log10(alpha) + 1e-9)
    ones = alpha / decade < 2  # a 1 x 10^e point, else a 3 x 10^e one
    return float(f"{(alpha * (3 if ones else 10 / 3)) if up else (alpha * (0.3 if ones else 1 / 3)):.3g}")


class FoldSums:
    """Sums of values per code (a class and a fold: ``class * FOLDS + fold``) and column over a stream
    of chunks: each stored value an entry keyed ``code * width + column``, logged and summed by one
    sort (``class_sums.summed_entries``) when the log is large and at the end. Classes may come late:
    a new class takes new codes, and the keys of the old ones stay."""

    def __init__(self, width):
        self.width = width
        self.keys, self.values = np.empty(0, np.int64), np.empty(0)  # summed
        self.log, self.logged = [], 0

    def add(self, codes, columns, values):
        """Add ``values`` at ``(codes, columns)`` (arrays of one length)."""
        self.log.append((codes.astype(np.int64) * self.width + columns, values.astype(np.float64, copy=False)))
        self.logged += values.shape[0]
        if self.logged >= max(LOG_ENTRIES, self.keys.shape[0] // 4):
            self._fold()

    def _fold(self):
        if self.log:
            keys = np.concatenate([self.keys, *(k for k, _ in self.log)])
            values = np.concatenate([self.values, *(v for _, v in self.log)])
            self.keys, self.values = summed_entries(keys, values)
            self.log, self.logged = [], 0

    def matrix(self, n_codes):
        """The sums as a canonical CSR array of ``n_codes`` rows (codes) by the columns."""
        self._fold()
        # Code c's keys start at the first key >= c * width: a search per code, then one subtraction (no division).
        starts = np.arange(n_codes + 1, dtype=np.int64) * self.width
        indptr = np.searchsorted(self.keys, starts)
        columns = self.keys - np.repeat(starts[:-1], np.diff(indptr))
        index = np.int32 if max(self.width, self.keys.size) < 2**31 else np.int64
        out = sp.csr_array((self.values, columns.astype(index), indptr.astype(index)), shape=(n_codes, self.width))
        out.has_canonical_format = True  # keys ascending and unique
        return out


def _code_rows(codes, X):
    """The code of every stored value of the CSR ``X`` whose rows have ``codes``."""
    return np.repeat(codes, np.diff(X.indptr))


class _Statistics:
    """What ``training.made_from`` makes a model of: statistics, classes and width, named as a fitted model's."""

    def __init__(self, stats, classes, width):
        self._stats, self.classes_, self.n_features_in_, self._fit_dtype_ = stats, classes, width, "float64"


def _narrow(csc):
    """``csc`` with int32 indices where they fit (half the bytes that gathering its columns reads)."""
    if max(csc.shape[0], csc.nnz) < 2**31 and csc.indices.dtype != np.int32:
        csc = sp.csc_array((csc.data, csc.indices.astype(np.int32), csc.indptr.astype(np.int32)), shape=csc.shape)
        csc.has_canonical_format = True
    return csc


class FoldStatistics:
    """Per class and fold, the statistics of every key (a statistics family and a feature set) that candidates
    are made from, read from the :class:`FoldSums` of the stored values (``sources``: "counts" and the
    corrections of each weighting, CSC, codes x columns of the data) as the feature set's signed column
    blocks (:meth:`~nbgpu._app.feature_choice.FeatureSet.terms`): the sums of a few columns cost what those
    columns store; only the chosen key's are ever made whole."""

    def __init__(self, classes, row_counts, sources, keys):
        self.classes, self.k = classes, len(classes)
        self.row_counts = row_counts  # per code
        self.sources = {name: _narrow(csc) for name, csc in sources.items()}
        data_width = sources["counts"].shape[1]
        self.terms, self.code_totals, self.negated = {}, {}, {}
        for stats, features in keys:
            width = features.width(data_width)
            terms = self.terms[stats, features] = (width, features.terms(presence=stats == "BernoulliNB"))
            total = 0.0
            for name, block, sign in terms[1]:
                csc = sources[name]
                lo, hi = csc.indptr[block * width], csc.indptr[(block + 1) * width]
                total = total + sign * np.bincount(csc.indices[lo:hi], weights=csc.data[lo:hi], minlength=csc.shape[0])
            self.code_totals[stats, features] = total.reshape(self.k, FOLDS)

    def class_counts(self, f=None):
        """Rows per class: of every fold but ``f`` (every fold if None)."""
        per = self.row_counts.reshape(self.k, FOLDS)
        return per.sum(axis=1) - (0 if f is None else per[:, f])

    def width(self, key):
        return self.terms[key][0]

    def model(self, key, f=None):
        """The statistics (:class:`_Statistics`) of the rows of every fold but ``f`` (all if None) for key ``key``,
        over every column; classes without rows there are left out (given classes are kept in the model of all)."""
        stats, _ = key
        count = self.class_counts(f)
        present = count > 0 if f is not None else np.ones(self.k, dtype=bool)
        total = self._class_sums(key, f, present)
        if stats == "BernoulliNB" or not class_sums.stays_sparse(total.shape, total.nnz):
            feature_count = total.toarray()
        else:  # sparse, as a fit of these rows keeps them
            feature_count = class_sums.from_csc(total)
        stats = {"class_count": count[present].astype(np.float64), "feature_count": feature_count}
        return _Statistics(stats, self.classes[present], total.shape[1])

    def _class_sums(self, key, f, present):
        """The sums of key ``key`` of every fold but ``f`` (all if None) per ``present`` class: a canonical CSC array
        (classes x columns), the sum of its terms' (:meth:`_term_sums`)."""
        width, terms = self.terms[key]

        def term_sums(term):
            name, block, sign = term
            return sign * self._term_sums(name, block * width, width, f, present)

        return functools.reduce(operator.add, parallel_map(term_sums, terms))  # the terms on all cores

    def _term_sums(self, name, start, width, f, present):
        """The columns ``start`` to ``start + width`` of source ``name`` summed over the folds but ``f`` per ``present``
        class (CSC): the codes of a class are next to each other in a column (``class * FOLDS + fold``), so each
        class's entries in a column are one run, summed in order (no product, no sort)."""
        source = self.sources[name]
        lo, hi = source.indptr[start], source.indptr[start + width]
        indptr = source.indptr[start:start + width + 1] - lo
        codes, values = source.indices[lo:hi], source.data[lo:hi]
        klass = np.repeat(np.maximum(np.cumsum(present) - 1, 0), FOLDS)[codes]  # (absent: entries of fold f only)
        if f is not None:
            values = values * np.tile(np.arange(FOLDS) != f, self.k)[codes]
        first = np.ones(values.shape[0], dtype=bool)  # where a run starts: a new class, or a new column
        np.not_equal(klass[1:], klass[:-1], out=first[1:])
        first[indptr[:-1][np.diff(indptr) > 0]] = True
        starts = np.flatnonzero(first)
        data = np.add.reduceat(values, starts) if starts.size else values[:0]
        runs = np.concatenate([[0], np.cumsum(first)])[indptr]  # where each column's runs start
        rows = klass[starts]
        if f is not None and not np.all(data != 0):  # classes whose entries in a column are all of fold f
            kept = data != 0
            runs = np.concatenate([[0], np.cumsum(kept)])[runs]
            data, rows = data[kept], rows[kept]
        out = sp.csc_array((data, rows.astype(np.int32), runs), shape=(int(present.sum()), width))
        out.has_canonical_format = True
        return out

    def held_out(self, key, f, columns, parts=None):
        """The statistics of :meth:`model` (``f`` not None) over ``columns`` (sorted) as a :class:`_HeldOutSums`:
        the classes with rows in the other folds, their row counts and whole sums, and the nonzero sums of those
        columns as entries by column (what the scores of fold ``f``'s rows are made from; see :class:`FoldScorer`).
        ``parts``: a dict that keeps the entries gathered of each term, for the keys of other terms on the same
        ``f`` and ``columns`` (the 1-2gram counts and sublinear tf share two of their three)."""
        count = self.class_counts(f)
        present = count > 0
        k = int(present.sum())
        # Per code (class * FOLDS + fold): its slot, its class among the present ones or (fold f) one more, summed
        # apart. (An absent class has entries of fold f only.)
        klass = np.repeat(np.maximum(np.cumsum(present) - 1, 0), FOLDS)
        slot = np.where(np.tile(np.arange(FOLDS) == f, self.k), k, klass)
        width, terms = self.terms[key]
        keys, values = [], []
        parts = {} if parts is None else parts
        for term in terms:  # the columns' entries of each term (not the key's whole sums)
            if term not in parts:
                name, block, sign = term
                part = self._signed(name, sign)[:, block * width + columns]
                at = np.repeat(np.arange(columns.size, dtype=np.int64) * (k + 1), np.diff(part.indptr))
                parts[term] = at + slot[part.indices], part.data
            keys.append(parts[term][0])
            values.append(parts[term][1])
        # column-major (column, slot) sums; float64 also without entries (numpy's bincount of nothing is int64)
        summed = np.bincount(np.concatenate(keys), weights=np.concatenate(values), minlength=columns.size * (k + 1))
        summed.reshape(columns.size, k + 1)[:, k] = 0.0  # fold f's
        flat = np.flatnonzero(summed != 0)  # (of a bool array: several times faster than of the values)
        column, klass = np.divmod(flat, k + 1)
        totals = self.code_totals[key]
        class_total = (totals.sum(axis=1) - totals[:, f])[present]
        return _HeldOutSums(self.classes[present], count[present].astype(np.float64), class_total, width, column,
                            klass, summed[flat].astype(np.float64, copy=False))

    def _signed(self, name, sign):
        """Source ``name`` times ``sign`` (the negative made once)."""
        if sign > 0:
            return self.sources[name]
        if name not in self.negated:
            source = self.sources[name]
            self.negated[name] = sp.csc_array((-source.data, source.indices, source.indptr), shape=source.shape)
        return self.negated[name]


class _HeldOutSums(NamedTuple):
    """Per-class sums of every fold but one over the columns its held-out rows use (:meth:`FoldStatistics.held_out`)."""

    classes: np.ndarray  # those with rows in the other folds
    class_count: np.ndarray  # their rows
    class_total: np.ndarray  # the sum of each class's values over every column (N_c)
    width: int  # the feature set's columns (d)
    column: np.ndarray  # per entry, ascending: its column among those of the held-out rows
    klass: np.ndarray  # per entry: its class among ``classes`` (ascending within a column)
    value: np.ndarray  # per entry: N_cj > 0


def _multinomial_excess(value, column, column_total, alpha):
    """MultinomialNB: per entry, its column's weight in its class less that of a column without sums,
    ``log θ_cj - log θ_c0 = log(N_cj + α) - log α`` (``MultinomialNB._weight_columns``); nothing per column."""
    return np.log(value + alpha) - math.log(alpha), None


def _complement_excess(value, column, column_total, alpha):
    """ComplementNB without norm: ``-log θ~_cj + log θ~_c0 = -log(E_j + α - N_cj) + log α``
    (``ComplementNB._weight_columns``; E_j the column's sum over the classes) as a part per column, alike
    for every class, ``log α - log(E_j + α)``, and one per entry, ``log(E_j + α) - log(E_j + α - N_cj)``
    (``column``: the entry's)."""
    logged = np.log(column_total + alpha)
    return logged[column] - np.log(column_total[column] + alpha - value), math.log(alpha) - logged


EXCESS = {"MultinomialNB": _multinomial_excess, "ComplementNB": _complement_excess}


class _HeldOut:
    """Fold ``f``'s sample scored by the candidates of one key from the sums of the other folds, on the columns the
    rows use (:class:`FoldScorer`): the rows ``X`` (CSR over those columns) and the sums ``sums``
    (:class:`_HeldOutSums`), with what every candidate shares (row sums, column totals)."""

    def __init__(self, X, sums):
        # By columns: the product then reads the weights in order, each row's scores in cache.
        self.X, self.sums = X.tocsc(), sums
        self.row_sums = np.asarray(X.sum(axis=1), dtype=np.float64).reshape(-1)
        self.column_total = np.bincount(sums.column, weights=sums.value, minlength=X.shape[1])
        self.flat = sums.column * sums.classes.size + sums.klass  # each entry in the weights (columns x classes)
        self.weight = np.zeros((X.shape[1], sums.classes.size))  # 0 but at the entries, which each candidate sets

    def scores(self, model):
        """The joint log-likelihoods (``rows x classes``) of the rows under ``model`` (unfitted, MultinomialNB or
        ComplementNB without norm, a scalar alpha) made from the sums. Its own ``_finalize`` and ``_weight_columns``
        make the class totals, the bias and the weight ``w_0`` of a column without sums, on two columns: one
        without sums (alpha α), one holding each class's whole sum (alpha α (d - 1)); a column's weights are
        ``w_0`` plus their excess (``EXCESS``), nonzero at its entries only (and, alike for every class, a part per
        column): ``X · W + b = rowsum ⊗ w_0 + X · excess + b``."""
        sums, X = self.sums, self.X
        k, alpha = sums.classes.size, float(model.alpha)
        stats = {"class_count": sums.class_count,
                 "feature_count": np.stack([np.zeros(k), sums.class_total], axis=1)}
        model = unfitted(model, alpha=np.array([alpha, alpha * (sums.width - 1)]))
        context = model._finalize(stats, sums.classes, model._hyper(k, 2), xp=np, dtype=np.float64)
        empty = model._weight_columns(stats, context["_context_"], np.arange(1), xp=np)[:, 0]
        alpha = float(context["_context_"]["alpha"][0])  # as the model takes it
        excess, per_column = EXCESS[type(model).__name__](sums.value, sums.column, self.column_total, alpha)
        self.weight.reshape(-1)[self.flat] = excess
        out = X @ self.weight
        out += self.row_sums[:, None] * empty if per_column is None else (
            self.row_sums[:, None] * empty + (X @ per_column)[:, None])
        out += context["_bias_"]
        return out


class FoldScorer:
    """Scores candidates fold by fold: each fold's sample seen through each feature set, and the statistics
    of "every fold but f" of each key, made once (when first needed) and shared by the candidates.

    A candidate of MultinomialNB or ComplementNB (without ``norm``) is scored on the columns the held-out rows
    use (fast path ``few_columns``), from their nonzero sums and each class's total (:class:`_HeldOut`): a
    column's weights are those of a column without sums (the model's own ``_finalize`` and ``_weight_columns``
    make them, the bias and the class totals, on two columns) plus their excess (``EXCESS``), nonzero at its
    entries only, so a candidate costs a log per entry and a product with the rows, and the sums gathered for
    a fold's rows serve every candidate of the key. Its reference, and every other candidate: the whole-width
    model of those statistics, made and asked to predict."""

    def __init__(self, fixed, statistics, samples):
        self.fixed, self.statistics, self.samples = fixed, statistics, samples
        self.views = {}

    def scorable(self):
        """The folds that can be scored: rows of their own, and rows in the others."""
        rows = [s.rows for s in self.samples]
        return [f for f, n in enumerate(rows) if n and sum(rows) > n]

    def restricted(self, candidate):
        """Whether ``candidate`` is scored on the held-out rows' columns only."""
        model = candidate.family in ("MultinomialNB", "ComplementNB") and fast("few_columns")
        return model and not {**self.fixed, **candidate.params}.get("norm", False)

    def _view(self, features, f, rows, restricted):
        """Fold ``f``'s sample (its first ``rows``) through ``features``: ``(X, columns)``, the columns it uses
        made ``0 .. c - 1`` if ``restricted`` (``columns`` then those columns, else None); the counts and columns
        shared by the feature sets of one n-gram range."""
        if (features, f, rows, restricted) not in self.views:
            counts = FeatureSet(features.ngram, "counts")
            if counts not in (features, None):
                X, columns = self._view(counts, f, rows, restricted)
            else:
                X, columns = sp.csr_matrix(features.counts(self.samples[f].X[:rows])), None
                if restricted:
                    columns, inverse = np.unique(X.indices, return_inverse=True)
                    X = sp.csr_matrix((X.data, inverse.reshape(-1), X.indptr), shape=(X.shape[0], columns.size))
            self.views[features, f, rows, restricted] = features.weighted(X), columns
        return self.views[features, f, rows, restricted]

    def _rest(self, candidate, f, rows, shared):
        """What ``candidate`` is scored from on fold ``f``'s sample (its first ``rows``), kept in ``shared`` (a dict
        of that fold's) for the candidates of its key: a :class:`_HeldOut` where it is scored on the columns the rows
        use (:meth:`restricted`), else ``(statistics, X)``, the whole-width statistics of every fold but ``f`` and
        the rows."""
        restricted = self.restricted(candidate)
        name = (candidate.statistics, restricted)
        if name not in shared:
            X, columns = self._view(candidate.features, f, rows, restricted)
            if restricted:
                parts = shared.setdefault((candidate.features.ngram, "parts"), {})
                shared[name] = _HeldOut(X, self.statistics.held_out(candidate.statistics, f, columns, parts))
            else:
                shared[name] = self.statistics.model(candidate.statistics, f), X
        return shared[name]

    def _predicted(self, candidate, f, rows, shared):
        """The labels that ``candidate``, made from every fold but ``f``, predicts for fold ``f``'s sample."""
        rest = self._rest(candidate, f, rows, shared)
        model = estimator(candidate, self.fixed, per_class=False)
        if isinstance(rest, _HeldOut):
            classes = rest.sums.classes
            return None if classes.size == 0 else classes[np.argmax(rest.scores(model), axis=1)]
        statistics, X = rest
        return None if statistics.classes_.size == 0 else made_from(model, statistics, lazy=True).predict(X)

    def scores(self, candidates, folds=None, out=None, rows=None):
        """``candidates x folds`` accuracies (written into ``out`` if given): each candidate made from the
        statistics of every fold but f, scored on fold f's :class:`_Sample` (its first ``rows`` if given),
        for f in ``folds`` (default: every fold that can be scored; NaN elsewhere)."""
        out = np.full((len(candidates), len(self.samples)), np.nan) if out is None else out
        folds = self.scorable() if folds is None else folds

        # On all cores, a fold and an n-gram range at a time: what their candidates share is made once
        # (the sums gathered for the rows' columns, term by term), and one item's is held a core.
        groups = {}
        for i, candidate in enumerate(candidates):
            groups.setdefault(candidate.features.ngram, []).append(i)

        def score(item):
            f, members = item
            shared = {}
            for i in members:
                if np.isnan(out[i, f]):
                    predicted = self._predicted(candidates[i], f, rows, shared)
                    if predicted is not None:
                        out[i, f] = float(np.mean(np.asarray(predicted) == np.asarray(self.samples[f].y[:rows])))

        parallel_map(score, [(f, members) for f in folds for members in groups.values()])
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
    finalists = list(finalists)
    scores[finalists] = scorer.scores([candidates[i] for i in finalists], folds)
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
    """The running state of ``training.train`` for --model auto: per class and fold, sums of the stored values
    (:class:`FoldSums`) and a sample of rows; its result is the best of ``candidates`` on the statistics of
    all the folds."""

    def __init__(self, estimator, reader, *, candidates, fixed, extend=True, **kwargs):
        super().__init__(estimator, reader, **kwargs)
        self.candidates, self.fixed, self.extend = candidates, fixed, extend
        self.keys = list(dict.fromkeys(c.statistics for c in candidates))
        self.text = any(features.ngram is not None for _, features in self.keys)
        self.kinds = sorted({"presence" if stats == "BernoulliNB" else features.tf
                             for stats, features in self.keys} - {"counts"})  # weightings of the values
        self.samples = [_Sample(SAMPLE_ROWS) for _ in range(FOLDS)]
        self.data_width = None
        self.sums = self.corrections = None
        # Classes in the order they came (given: all of them, first); a row's code is class * FOLDS + fold.
        self.labels = [] if self.classes is None else list(self.classes)
        self.index = {label: i for i, label in enumerate(self.labels)}
        self.row_counts = np.zeros(FOLDS * len(self.labels))

    def _width(self):
        return self.data_width  # of the data as read (hashed text: twice the models')

    def _codes(self, y):
        """The code of every row of labels ``y`` (after the rows seen so far)."""
        found, inverse = np.unique(y, return_inverse=True)
        for label in found.tolist():
            if label not in self.index:
                self.index[label] = len(self.labels)
                self.labels.append(label)
        classes = np.array([self.index[label] for label in found.tolist()], dtype=np.int64)[inverse.reshape(-1)]
        codes = classes * FOLDS + (self.rows + np.arange(y.shape[0])) % FOLDS
        self.row_counts = np.concatenate([self.row_counts, np.zeros(FOLDS * len(self.labels) - self.row_counts.size)])
        self.row_counts += np.bincount(codes, minlength=self.row_counts.size)
        return codes

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
        if not np.all(np.isfinite(values)):  # the model's own refusal, naming the lines
            self._grown(None, X, y, where)
            raise ValueError(f"{where}: --model auto takes no missing values; name the model with --model")
        if self.data_width is not None and X.shape[1] != self.data_width:
            # The sums are keyed by a width of one (training's rule for one model).
            raise _SecondPassNeeded(f"feature indices beyond {self.data_width} appear after the first chunk")
        if self.data_width is None:
            self.data_width = X.shape[1]
            self.sums = FoldSums(X.shape[1])
            self.corrections = {kind: FoldSums(X.shape[1]) for kind in self.kinds}
        X = X.tocsr() if hasattr(X, "indices") else sp.csr_matrix(X)
        y = np.asarray(y)
        codes = self._codes(y)
        self.sums.add(_code_rows(codes, X), X.indices, X.data)
        for offset, view in correction_views(X, text=self.text) if self.kinds else ():
            for kind in self.kinds:
                rows, columns, values = corrections(view, kind)
                self.corrections[kind].add(codes[rows], columns + offset, values)
        keys = row_keys(self.rows, X.shape[0])
        for f in range(FOLDS):
            rows = np.arange((f - self.rows) % FOLDS, X.shape[0], FOLDS)  # row number mod FOLDS is f
            if rows.size:
                self.samples[f].add(X, y, rows, keys[rows])

    def _statistics(self):
        """The :class:`FoldStatistics` of the pass, classes in sorted order."""
        labels = np.asarray(self.labels) if self.classes is None else self.classes
        order = np.argsort(labels, kind="stable") if self.classes is None else np.arange(len(labels))
        n_codes = FOLDS * len(labels)
        rows = (order[:, None] * FOLDS + np.arange(FOLDS)).reshape(-1)  # sorted class c, fold g: its code
        sources = {"counts": self.sums, **self.corrections}
        # (Each a sort of its log: on all cores.)
        made = parallel_map(lambda sums: sums.matrix(n_codes)[rows].tocsc(), sources.values())
        sources = dict(zip(sources, made))
        return FoldStatistics(labels[order], self.row_counts[rows], sources, self.keys)

    def result(self):
        if self.data_width is None:
            raise ValueError(f"{self.reader.path} holds no data rows")
        statistics = self._statistics()
        scorer = FoldScorer(self.fixed, statistics, self.samples)
        self.search = search(self.candidates, scorer, extend=self.extend)
        best = self.search.candidates[self.search.best]
        model = made_from(estimator(best, self.fixed), statistics.model(best.statistics), lazy=True)
        like = self.to_device(np.zeros(1))
        return model if isinstance(like, np.ndarray) else model.to_device(like)

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
