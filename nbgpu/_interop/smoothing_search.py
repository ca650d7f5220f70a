"""Grid search over the parameters that act only when statistics become a model.

Smoothing, priors and the like act only in ``_finalize`` (DESIGN.md §1), so
every training fold's statistics are made once and every grid point is
finalized from them (see :class:`SmoothingSearchCV`).
"""

from __future__ import annotations

import functools
import inspect
import numbers
import time
import warnings
from collections import defaultdict
from types import SimpleNamespace

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import _num_samples

from .._array import sparse_counts
from .._array.namespace import (
    accumulation_dtype,
    first_array,
    get_namespace,
    is_array,
    score_dtype_name,
    to_numpy,
)
from .._array.numerics import nonzero
from .._array.rows import take_rows
from .._estimator.base import _BaseNB
from .._estimator.delegation import _PredictsWithInnerModel
from .._estimator.feature_names import feature_names_of
from .._models.estimators import (
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    GaussianNB,
    KernelDensityNB,
    MultinomialNB,
    NormalBayesClassifier,
    PoissonNB,
)
from .._validation import check_sample_weight, check_X, check_y, unique_labels

_PRIOR = ("prior_smoothing", "loss_matrix")
_COUNT_PRIOR = ("alpha", "force_alpha", "fit_prior", "class_prior", *_PRIOR)

# The parameters of each model that act only in finalize (or at predict
# time): a grid over them can reuse the statistics. A parameter missing here
# changes what is accumulated (BernoulliNB's binarize, ``missing``,
# CategoricalNB's min_categories).
FINALIZE_PARAMETERS = {
    MultinomialNB: _COUNT_PRIOR,
    ComplementNB: (*_COUNT_PRIOR, "norm"),
    BernoulliNB: _COUNT_PRIOR,
    PoissonNB: _COUNT_PRIOR,
    CategoricalNB: _COUNT_PRIOR,
    GaussianNB: ("priors", "var_smoothing", *_PRIOR),
    NormalBayesClassifier: ("priors", "reg_covar", *_PRIOR),
    KernelDensityNB: ("bandwidth", "kernel", "priors", *_PRIOR),
}


def _count_difference(total, part, *, xp):
    """Statistics of the rows of ``total`` not in ``part``: sums subtract exactly."""
    return {key: sparse_counts.subtracted(total[key], part[key]) for key in total}


def _moments_difference(total, part, *, xp):
    """(weight, mean, M2) of set A from those of A ∪ B and of B: Chan's merge
    ``n = n_a + n_b``, ``μ = μ_a + (μ_b − μ_a) n_b / n``,
    ``M2 = M2_a + M2_b + (μ_b − μ_a)² n_a n_b / n`` solved for A."""
    n, mu, m2 = total
    n_b, mu_b, m2_b = part
    n_a = n - n_b
    mu_a = xp.where(n_a > 0, (n * mu - n_b * mu_b) / nonzero(n_a, xp=xp), xp.zeros_like(mu))
    delta = mu_b - mu_a
    gain = n_a * n_b / nonzero(n, xp=xp)
    m2_a = xp.where(n_a > 0, m2 - m2_b - delta * delta * gain, xp.zeros_like(m2))
    return n_a, mu_a, xp.maximum(m2_a, xp.zeros_like(m2_a))  # not clip: a masked assignment on cupy


def _gaussian_difference(total, part, *, xp):
    return {
        "class_count": total["class_count"] - part["class_count"],
        **{key: _moments_difference(total[key], part[key], xp=xp) for key in ("per_class", "total")},
    }


# Models whose merge has an exact inverse; the others merge the other folds.
_DIFFERENCE = {
    MultinomialNB: _count_difference,
    ComplementNB: _count_difference,
    BernoulliNB: _count_difference,
    PoissonNB: _count_difference,
    GaussianNB: _gaussian_difference,
}


class _FoldFailed(Exception):
    """A fold whose Pipeline steps could not be fitted: every grid point there fails."""


def _scorers_taking_weights(scorers, search):
    """Names of the scorers that take ``sample_weight``: GridSearchCV passes
    the fit's weights to them (and warns about the others)."""
    taking = set()
    for name, scorer in scorers.items():
        if hasattr(scorer, "_accept_sample_weight"):
            accepts = scorer._accept_sample_weight()
        else:
            accepts = "sample_weight" in inspect.signature(scorer).parameters
        if accepts:
            taking.add(name)
        else:
            warnings.warn(
                f"The scoring {name}={scorer} does not support sample_weight, which may lead to "
                f"statistically incorrect results when fitting {search} with sample_weight.",
                UserWarning,
                stacklevel=3,
            )
    return taking


def _complements(train, test, n):
    """Whether the index arrays ``train`` and ``test`` split ``range(n)`` in two."""
    if train.shape[0] + test.shape[0] != n:
        return False
    seen = np.zeros(n, dtype=bool)
    seen[train] = True
    return np.count_nonzero(seen) == train.shape[0] and not seen[test].any()


def _host_labels(y):
    return to_numpy(y) if is_array(y) else np.asarray(y)


def _is_metric_scorer(scorer):
    """Whether ``scorer`` is scikit-learn's response-and-metric scorer ("accuracy",
    ``make_scorer``), whose metric calls ``np.asarray`` on labels and predictions."""
    return hasattr(scorer, "_score_func") and hasattr(scorer, "_response_method")


class _HostResponses:
    """A fitted model as scikit-learn's metrics read it: each response on one set
    of rows computed where ``X`` is, brought to the host once and cached for the
    other metrics (``np.asarray`` fails on device arrays)."""

    _RESPONSES = ("predict", "predict_proba", "predict_log_proba", "decision_function")

    def __init__(self, model):
        self._model = model
        self._cache = {}
        self.classes_ = _host_labels(model.classes_)  # scikit-learn reads the target type from them

    def __sklearn_tags__(self):
        return self._model.__sklearn_tags__()

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_model", "_cache"):
            raise AttributeError(name)  # (copy and pickle look before __init__ ran)
        if name not in self._RESPONSES:
            return getattr(self._model, name)
        method = getattr(self._model, name)  # AttributeError where the model has no such response

        def response(X):
            if name not in self._cache:
                self._cache[name] = _host_labels(method(X))
            return self._cache[name]

        response.__name__ = name  # scikit-learn post-processes by the method's name
        return response


class SmoothingSearchCV(_PredictsWithInnerModel, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Exhaustive search over finalize-only parameters, one pass over the data per fold.

    The same search, results and attributes as
    :class:`sklearn.model_selection.GridSearchCV` with the same ``cv``, for
    the parameters of an nbgpu model that act only when its statistics
    become parameters (smoothing, priors, ComplementNB's ``norm``,
    GaussianNB's ``var_smoothing``, a KernelDensityNB's bandwidth, ...).
    Instead of one fit per grid point and fold, the statistics ``S_f`` of
    every test fold ``f`` are accumulated once; a training fold's statistics
    are ``S − S_f`` with ``S = Σ_f S_f`` (sums subtract exactly; Gaussian
    moments by the inverse of Chan's merge) or, for models without an exact
    inverse, the merge of the other folds' statistics. Every grid point is
    then finalized from them (k × d work, no pass over ``X``) and scored on
    the test fold. A splitter whose test folds do not partition the rows
    (ShuffleSplit, repeated folds) gets each training fold's statistics
    from one pass over its rows.

    A :class:`sklearn.pipeline.Pipeline` ending in such a model (a text
    vectorizer, then MultinomialNB) is searched over that last step's
    parameters (``"nb__alpha"``): on each fold the earlier steps (a clone)
    are fitted once on the training rows (``fit_transform``) and transform
    the test rows, the model's statistics are accumulated once from the
    transformed training rows, and every grid point is finalized from them;
    ``best_estimator_`` is the whole Pipeline refitted on all rows, as
    GridSearchCV refits it.

    Parameters
    ----------
    estimator : nbgpu estimator or Pipeline
        The model whose parameters are searched (a MultinomialNB,
        ComplementNB, BernoulliNB, CategoricalNB, PoissonNB, GaussianNB,
        NormalBayesClassifier or KernelDensityNB), or a Pipeline whose last
        step is one.
    param_grid : dict or list of dicts
        As for GridSearchCV; only parameters that act in finalization may be
        searched (others, such as ``binarize``, raise a ValueError that
        points to GridSearchCV). For a Pipeline, only its last step's, by
        their Pipeline names (``"<step>__alpha"``): a parameter of an
        earlier step (``"tfidf__min_df"``) is a ValueError, not one fit per
        grid point, since the earlier steps are fitted once per fold.
    scoring : str, callable, list, tuple or dict, default=None
        As for GridSearchCV: None is the estimator's ``score`` (accuracy);
        several metrics need ``refit`` to name one (or be False).
    refit : bool, str or callable, default=True
        Refit the best model on all of ``X`` (from the total statistics: no
        further pass over the data). As for GridSearchCV.
    cv : int, cross-validation generator or iterable, default=None
        As for GridSearchCV (None: 5-fold stratified).
    error_score : "raise" or float, default=np.nan
        Score given to a grid point whose model cannot be finalized or
        scored (with a FitFailedWarning), or "raise".
    return_train_score : bool, default=False
        Also score every grid point on its training fold.

    Attributes
    ----------
    cv_results_ : dict of arrays
        As GridSearchCV's: ``params``, ``param_<name>``,
        ``split<i>_test_<metric>``, ``mean_test_<metric>``,
        ``std_test_<metric>``, ``rank_test_<metric>`` (``score`` for a single
        metric), train scores when asked, and ``mean_fit_time``,
        ``std_fit_time``, ``mean_score_time``, ``std_score_time``. A fit time
        is the grid point's finalization plus its share of the fold's
        accumulation (and, for a Pipeline, of fitting its earlier steps).
    best_estimator_ : estimator
        The refitted best model (with ``refit``); the whole refitted
        Pipeline for a Pipeline.
    best_score_ : float
    best_params_ : dict
    best_index_ : int
    scorer_ : callable or dict
    multimetric_ : bool
    n_splits_ : int
    refit_time_ : float
    classes_ : array of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        For a Pipeline, those of ``best_estimator_`` where it has them (as
        GridSearchCV's).

    See Also
    --------
    sklearn.model_selection.GridSearchCV : any parameter, one fit per grid point and fold.

    Examples
    --------
    >>> import numpy as np
    >>> import nbgpu
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 30)
    >>> X = rng.poisson(np.where(y[:, None] == 0, [3, 1, 1], [1, 1, 3]))
    >>> search = nbgpu.SmoothingSearchCV(nbgpu.MultinomialNB(), {"alpha": [0.01, 0.1, 1.0]}).fit(X, y)
    >>> search.best_params_
    {'alpha': 0.01}
    """

    def __init__(self, estimator, param_grid, *, scoring=None, refit=True, cv=None, error_score=np.nan,
                 return_train_score=False):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.refit = refit
        self.cv = cv
        self.error_score = error_score
        self.return_train_score = return_train_score

    # ---- checks -------------------------------------------------------- #
    def _model(self):
        """``(the nbgpu model, the prefix of its parameters in the grid)``: the
        estimator itself, or a Pipeline's last step (``"<step>__"``)."""
        est = self.estimator
        if isinstance(est, Pipeline):
            if not est.steps:
                msg = "`estimator` is a Pipeline with no step."
                raise ValueError(msg)
            name, model = est.steps[-1]
            prefix, what = f"{name}__", f"the Pipeline's last step {name!r}"
        else:
            model, prefix, what = est, "", "`estimator`"
        if not isinstance(model, _BaseNB) or type(model) not in FINALIZE_PARAMETERS:
            known = sorted(c.__name__ for c in FINALIZE_PARAMETERS)
            ending = "" if prefix else " or a Pipeline ending in one"
            msg = f"{what} must be one of nbgpu's models {known}{ending}; got {type(model).__name__}."
            raise TypeError(msg)
        return model, prefix

    def _candidates(self):
        """``(grid points as given, grid points as the model's own parameters)``."""
        model, prefix = self._model()
        allowed = FINALIZE_PARAMETERS[type(model)]
        try:
            candidates = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            msg = f"`param_grid` is not a valid grid: {exc}"
            raise type(exc)(msg) from exc
        names = sorted({name for params in candidates for name in params})
        if prefix:
            # The earlier steps are fitted once per fold, with their own
            # parameters: a grid over them would need one fit per point.
            outside = [n for n in names if not n.startswith(prefix)]
            if outside:
                msg = (
                    f"`param_grid` names {outside}, which are not parameters of the Pipeline's last step "
                    f"{prefix[:-2]!r}; SmoothingSearchCV fits the earlier steps once per fold and searches only "
                    f"{[prefix + n for n in sorted(allowed)]}. Use sklearn.model_selection.GridSearchCV to "
                    "search the other steps."
                )
                raise ValueError(msg)
        unknown = [n for n in names if n[len(prefix):] not in model.get_params(deep=False)]
        if unknown:
            msg = f"`param_grid` names {unknown}, which are not parameters of {type(model).__name__}."
            raise ValueError(msg)
        changing = [n for n in names if n[len(prefix):] not in allowed]
        if changing:
            msg = (
                f"`param_grid` names {changing}, which change what {type(model).__name__} accumulates "
                f"from the data, so the statistics cannot be shared between grid points; "
                f"SmoothingSearchCV searches {[prefix + n for n in sorted(allowed)]}. Use "
                "sklearn.model_selection.GridSearchCV for the others."
            )
            raise ValueError(msg)
        if not candidates:
            msg = "`param_grid` defines no grid point."
            raise ValueError(msg)
        return candidates, [{n[len(prefix):]: v for n, v in params.items()} for params in candidates]

    def _scorers(self):
        """(dict name -> scorer, multimetric, refit metric name or None)."""
        scoring = self.scoring
        if not isinstance(scoring, (list, tuple, set, dict)):
            return {"score": check_scoring(self.estimator, scoring=scoring)}, False, "score"
        named = scoring.items() if isinstance(scoring, dict) else ((name, name) for name in scoring)
        scorers = {name: check_scoring(self.estimator, scoring=sc) for name, sc in named}
        if not scorers:
            msg = "`scoring` names no metric."
            raise ValueError(msg)
        refit = self.refit
        if refit is not False and not callable(refit) and refit not in scorers:
            msg = (
                f"For multi-metric scoring, `refit` must be the name of a metric {sorted(scorers)}, "
                f"False or a callable; got {refit!r}."
            )
            raise ValueError(msg)
        return scorers, True, (refit if isinstance(refit, str) else None)

    # ---- search -------------------------------------------------------- #
    def _fold_statistics(self, X, y, sample_weight, splits, classes, fold_classes):
        """``(training statistics of every split, statistics of all rows or None,
        mean seconds of accumulation per split)``. The fast path needs test folds that
        partition the rows, each training fold its complement."""
        base = clone(self.estimator)

        def stats_of(index, labels):
            w = None if sample_weight is None else take_rows(sample_weight, index)
            X_rows, y_rows = take_rows(X, index), take_rows(y, index)
            return base._fit_batch(X_rows, y_rows, labels, w, reset=True, commit=False)

        n = X.shape[0]
        tests = np.concatenate([test for _, test in splits])
        partition = (
            tests.shape[0] == n
            and np.array_equal(np.sort(tests), np.arange(n))
            and all(_complements(train, test, n) for train, test in splits)  # O(n) each, no sort
        )
        t0 = time.perf_counter()
        if not partition:  # each training fold once, from its own rows
            train_stats = [stats_of(train, labels) for (train, _), labels in zip(splits, fold_classes)]
            return train_stats, None, (time.perf_counter() - t0) / len(splits)
        parts = [stats_of(test, classes) for _, test in splits]
        xp = get_namespace(first_array(parts[0]))

        def merged(stats):
            return functools.reduce(lambda a, b: base._merge(a, b, xp=xp), stats)

        total = merged(parts)
        difference = _DIFFERENCE.get(type(base))
        train_stats = []
        for i, labels in enumerate(fold_classes):
            if labels.shape[0] < classes.shape[0]:  # a training fold without some class
                train_stats.append(stats_of(splits[i][0], labels))
            elif difference is not None:
                train_stats.append(difference(total, parts[i], xp=xp))
            else:
                train_stats.append(merged(parts[:i] + parts[i + 1 :]))
        return train_stats, total, (time.perf_counter() - t0) / len(splits)

    def _model_folds(self, X, y, sample_weight, splits):
        """One namespace per split of an nbgpu model's search: the training
        statistics (from ``_fold_statistics``), and the rows to score on."""
        model, _ = self._model()
        feature_names = feature_names_of(X)
        given = X
        X, xp, device = check_X(X, estimator=model, allow_nan=model._ignore_missing)
        # Scored on the validated array (canonical sparse, no second check), but
        # on the DataFrame itself where the model checks its column names.
        X_given = given if feature_names is not None else X
        n_samples, n_features = X.shape
        y = check_y(y, n_samples)
        if sample_weight is not None:
            sample_weight = check_sample_weight(
                sample_weight, n_samples, xp=xp, device=device, dtype=accumulation_dtype(xp, device)
            )
        y_host = _host_labels(y)
        classes = unique_labels(y)
        splits = splits(X, y_host)
        # A training fold without some class: GridSearchCV's model there knows
        # only the classes it saw, so this fold is accumulated with those alone.
        _, codes = np.unique(y_host, return_inverse=True)
        n_classes = classes.shape[0]
        fold_classes = [
            classes if np.unique(codes[train]).shape[0] == n_classes else unique_labels(take_rows(y, train))
            for train, _ in splits
        ]
        train_stats, total, seconds = self._fold_statistics(
            X, y, sample_weight, splits, classes, fold_classes
        )
        score_dtype = score_dtype_name(X.dtype, xp=xp)

        def rows(index):
            part = take_rows(X_given, index)
            weights = {}
            if sample_weight is not None:
                weights = {"sample_weight": to_numpy(take_rows(sample_weight, index))}
            return part, part, take_rows(y, index), y_host[index], weights

        def folds():
            for s, (train, test) in enumerate(splits):
                yield SimpleNamespace(
                    stats=train_stats[s], classes=fold_classes[s], n_features=n_features,
                    feature_names=feature_names, score_dtype=score_dtype, seconds=seconds, error=None,
                    pipeline=None, test=rows(test), train=rows(train) if self.return_train_score else None,
                )

        def refit(params):
            stats = total
            if stats is None:
                stats = clone(model)._fit_batch(X, y, classes, sample_weight, reset=True, commit=False)
            return clone(model).set_params(**params)._become_fitted(
                stats, classes, n_features=n_features, feature_names=feature_names, score_dtype=score_dtype
            )

        return folds(), len(splits), refit, classes, n_features, feature_names

    def _pipeline_folds(self, X, y, sample_weight, splits):
        """One namespace per split of a Pipeline's search: its earlier steps
        fitted once on the training rows (a clone, as GridSearchCV's fit of
        the whole Pipeline fits them), the model's statistics accumulated
        once from the transformed training rows, and the transformed rows to
        score on. Folds are made one at a time: one fold's matrices at once."""
        pipeline = self.estimator
        model, _ = self._model()
        n_samples = _num_samples(X)
        y = check_y(y, n_samples)
        y_host = _host_labels(y)
        classes = unique_labels(y)
        splits = splits(X, y_host)

        def fold(train, test):
            t0 = time.perf_counter()
            head = clone(pipeline)[:-1] if len(pipeline.steps) > 1 else None
            X_train, y_train = take_rows(X, train), take_rows(y, train)
            Xt_train = X_train if head is None else head.fit_transform(X_train, y_train)
            feature_names = feature_names_of(Xt_train)
            checked, xp, _ = check_X(Xt_train, estimator=model, allow_nan=model._ignore_missing)
            fold_classes = unique_labels(y_train)
            stats = clone(model)._fit_batch(checked, y_train, fold_classes, None, reset=True, commit=False)
            seconds = time.perf_counter() - t0
            X_test = take_rows(X, test)
            Xt_test = X_test if head is None else head.transform(X_test)
            return SimpleNamespace(
                stats=stats, classes=fold_classes, n_features=checked.shape[1], feature_names=feature_names,
                score_dtype=score_dtype_name(checked.dtype, xp=xp), seconds=seconds, error=None, pipeline=head,
                test=(Xt_test, X_test, take_rows(y, test), y_host[test], {}),
                train=(Xt_train, X_train, y_train, y_host[train], {}) if self.return_train_score else None,
            )

        def folds():
            for train, test in splits:
                try:
                    yield fold(train, test)
                except Exception as exc:
                    if self.error_score == "raise":
                        raise
                    yield SimpleNamespace(error=f"{type(exc).__name__}: {exc}", seconds=0.0)

        def refit(params):  # as GridSearchCV refits: the whole Pipeline on all rows
            return clone(pipeline).set_params(**params).fit(X, y)

        return folds(), len(splits), refit, classes, None, None

    def fit(self, X, y, *, groups=None, sample_weight=None):
        """Search the grid on ``X``, ``y`` and refit the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or, for a Pipeline, whatever its first step takes (documents for
            a text vectorizer).
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter (GroupKFold, ...).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in fitting (not in scoring), as
            ``GridSearchCV.fit(X, y, sample_weight=...)`` passes them to the
            estimator's ``fit``. Not with a Pipeline (whose ``fit`` takes
            ``<step>__sample_weight``).

        Returns
        -------
        self : object
        """
        candidates, model_candidates = self._candidates()
        scorers, multimetric, refit_metric = self._scorers()
        if self.error_score != "raise" and not isinstance(self.error_score, numbers.Real):
            msg = f"`error_score` must be 'raise' or a number; got {self.error_score!r}."
            raise ValueError(msg)
        model, _ = self._model()
        is_pipeline = isinstance(self.estimator, Pipeline)
        if is_pipeline and sample_weight is not None:
            msg = (
                "`sample_weight` cannot be given with a Pipeline `estimator` (Pipeline.fit, as GridSearchCV "
                "calls it, does not take it either); fit the model on weighted rows without a Pipeline."
            )
            raise ValueError(msg)
        weighted_scorers = _scorers_taking_weights(scorers, self) if sample_weight is not None else set()

        def splits(X_checked, y_host):
            cv = check_cv(self.cv, y_host, classifier=True)
            out = [(np.asarray(tr), np.asarray(te)) for tr, te in cv.split(X_checked, y_host, groups)]
            if not out:
                msg = "`cv` produced no split."
                raise ValueError(msg)
            return out

        make_folds = self._pipeline_folds if is_pipeline else self._model_folds
        folds, n_splits, refit, classes, n_features, feature_names = make_folds(X, y, sample_weight, splits)

        n_cand = len(candidates)
        fit_time = np.zeros((n_cand, n_splits))
        score_time = np.zeros((n_cand, n_splits))
        test_scores = defaultdict(lambda: np.zeros((n_cand, n_splits)))
        train_scores = defaultdict(lambda: np.zeros((n_cand, n_splits)))
        failures = []
        metric_scorers = {name for name, sc in scorers.items() if _is_metric_scorer(sc)}
        # The model scored on the transformed rows gives what the fitted
        # Pipeline gives on the raw ones, for the metrics and for its own
        # ``score`` (the last step's); another callable gets the Pipeline.
        on_model = metric_scorers | ({"score"} if self.scoring is None else set())  # None: the estimator's own score

        def score_all(model, fold, part):
            X_model, X_raw, y_part, y_host, weights = part
            # scikit-learn's metrics get host labels and the model's host
            # predictions, each computed once for all the metrics of these rows.
            host = _HostResponses(model) if metric_scorers else None
            whole = model
            if fold.pipeline is not None and set(scorers) - on_model:
                whole = Pipeline([*fold.pipeline.steps, (self.estimator.steps[-1][0], model)])
            out = {}
            for name, sc in scorers.items():
                kw = weights if name in weighted_scorers else {}
                if name in metric_scorers:
                    out[name] = float(sc(host, X_model, y_host, **kw))
                elif name in on_model:
                    out[name] = float(sc(model, X_model, y_part, **kw))
                else:
                    out[name] = float(sc(whole, X_raw if fold.pipeline is not None else X_model, y_part, **kw))
            return out

        for s, fold in enumerate(folds):
            for c, params in enumerate(model_candidates):
                t0 = time.perf_counter()
                try:
                    if fold.error is not None:
                        raise _FoldFailed(fold.error)
                    fitted = clone(model).set_params(**params)._become_fitted(
                        fold.stats, fold.classes, n_features=fold.n_features, feature_names=fold.feature_names,
                        score_dtype=fold.score_dtype,
                    )
                    t1 = time.perf_counter()
                    scores = score_all(fitted, fold, fold.test)
                    if self.return_train_score:
                        train_part = score_all(fitted, fold, fold.train)
                except Exception as exc:
                    if self.error_score == "raise":
                        raise
                    what = str(exc) if isinstance(exc, _FoldFailed) else f"{type(exc).__name__}: {exc}"
                    failures.append(f"{candidates[c]}: {what}")
                    t1 = time.perf_counter()
                    scores = dict.fromkeys(scorers, float(self.error_score))
                    train_part = scores
                fit_time[c, s] = t1 - t0 + fold.seconds / n_cand
                score_time[c, s] = time.perf_counter() - t1
                for name, value in scores.items():
                    test_scores[name][c, s] = value
                    if self.return_train_score:
                        train_scores[name][c, s] = train_part[name]
        if failures:
            if len(failures) == n_cand * n_splits:
                msg = f"All the {len(failures)} fits failed. The first: {failures[0]}"
                raise ValueError(msg)
            msg = (
                f"{len(failures)} fits failed out of a total of {n_cand * n_splits}; their score is "
                f"error_score={self.error_score!r}. The first: {failures[0]}"
            )
            warnings.warn(msg, FitFailedWarning, stacklevel=2)

        self.cv_results_ = _results(candidates, fit_time, score_time, test_scores,
                                    train_scores if self.return_train_score else None)
        self.multimetric_ = multimetric
        self.scorer_ = scorers if multimetric else scorers["score"]
        self.n_splits_ = n_splits
        self.classes_ = classes
        for name in ("n_features_in_", "feature_names_in_", "best_index_", "best_params_", "best_score_",
                     "best_estimator_", "refit_time_"):
            self.__dict__.pop(name, None)
        if n_features is not None:
            self.n_features_in_ = n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        if self.refit is False:
            return self
        if callable(self.refit):
            self.best_index_ = int(self.refit(self.cv_results_))
        else:
            metric = refit_metric or "score"
            self.best_index_ = int(np.argmin(self.cv_results_[f"rank_test_{metric}"]))
            self.best_score_ = float(self.cv_results_[f"mean_test_{metric}"][self.best_index_])
        self.best_params_ = candidates[self.best_index_]
        t0 = time.perf_counter()
        self.best_estimator_ = refit(model_candidates[self.best_index_] if not is_pipeline else self.best_params_)
        self.refit_time_ = time.perf_counter() - t0
        if is_pipeline:  # as GridSearchCV reads them from its best_estimator_
            for name in ("n_features_in_", "feature_names_in_"):
                if hasattr(self.best_estimator_, name):
                    setattr(self, name, getattr(self.best_estimator_, name))
        return self

    # ---- the best model ------------------------------------------------ #
    _fitted_attribute = "best_estimator_"

    def _fitted_model(self):
        if hasattr(self, "cv_results_") and not hasattr(self, "best_estimator_"):
            msg = "This SmoothingSearchCV was fitted with refit=False: it has no best_estimator_ to predict with."
            raise AttributeError(msg)
        return super()._fitted_model()

    def _inner_estimator(self):
        return self.estimator

    def score(self, X, y):
        """The refit metric of ``best_estimator_`` on ``X``, ``y`` (as GridSearchCV.score)."""
        best = self._fitted_model()
        scorer = self.scorer_
        if self.multimetric_:
            if not isinstance(self.refit, str):
                msg = "score needs `refit` to name the metric when several are searched."
                raise ValueError(msg)
            scorer = scorer[self.refit]
        if _is_metric_scorer(scorer):  # scikit-learn's metrics read host arrays
            return scorer(_HostResponses(best), X, _host_labels(y))
        return scorer(best, X, y)


def _results(candidates, fit_time, score_time, test_scores, train_scores):
    """``cv_results_`` in GridSearchCV's layout."""
    n_cand, n_splits = fit_time.shape
    out = {
        "mean_fit_time": fit_time.mean(axis=1),
        "std_fit_time": fit_time.std(axis=1),
        "mean_score_time": score_time.mean(axis=1),
        "std_score_time": score_time.std(axis=1),
    }
    names = sorted({name for params in candidates for name in params})
    for name in names:
        column = np.ma.MaskedArray(np.empty(n_cand, dtype=object), mask=True)
        for c, params in enumerate(candidates):
            if name in params:
                column[c] = params[name]
        out[f"param_{name}"] = column
    out["params"] = candidates
    for kind, table in (("test", test_scores), ("train", train_scores)):
        if table is None:
            continue
        for metric, scores in table.items():
            for s in range(n_splits):
                out[f"split{s}_{kind}_{metric}"] = scores[:, s]
            mean = scores.mean(axis=1)
            out[f"mean_{kind}_{metric}"] = mean
            out[f"std_{kind}_{metric}"] = scores.std(axis=1)
            if kind == "test":
                # GridSearchCV's ranking: NaN scores last, ties share the best rank.
                filled = np.where(np.isnan(mean), np.nanmin(mean) - 1 if np.any(~np.isnan(mean)) else 0, mean)
                out[f"rank_test_{metric}"] = rankdata(-filled, method="min").astype(np.int32)
    return out
