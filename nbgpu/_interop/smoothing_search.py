"""Grid search over the parameters that act only when statistics become a model.

Smoothing, priors and the like act only in ``_finalize`` (ARCHITECTURE.md, design 1), so
every training fold's statistics are made once and every grid point is
finalized from them (see :class:`SmoothingSearchCV`).
"""

from __future__ import annotations

import inspect
import numbers
import time
import warnings
from types import SimpleNamespace

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import FitFailedWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import _num_samples

from .._array.namespace import first_array, get_namespace, is_array, to_numpy
from .._array.rows import take_rows
from .._estimator.adapters import refuse_collections
from .._estimator.delegation import _PredictsWithInnerModel
from .._estimator.feature_names import feature_names_of
from .._models import estimators as nb
from .._validation import check_sample_weight, check_X, check_y, unique_labels

_PRIOR = ("prior_smoothing", "loss_matrix")
_COUNT_PRIOR = ("alpha", "force_alpha", "fit_prior", "class_prior", *_PRIOR)

# The parameters of each model that act only in finalize (or at predict time): a grid over them
# can reuse the statistics. One missing here changes what is accumulated (BernoulliNB's binarize,
# ``missing``, CategoricalNB's min_categories).
FINALIZE_PARAMETERS = {
    **dict.fromkeys((nb.MultinomialNB, nb.BernoulliNB, nb.PoissonNB, nb.CategoricalNB), _COUNT_PRIOR),
    nb.ComplementNB: (*_COUNT_PRIOR, "norm"),
    nb.GaussianNB: ("priors", "var_smoothing", *_PRIOR),
    nb.NormalBayesClassifier: ("priors", "reg_covar", *_PRIOR),
    nb.KernelDensityNB: ("bandwidth", "kernel", "priors", *_PRIOR),
}


def _merges_leaving_one_out(parts, merge):
    """``(training, total)``: for each i, the merge of every part but ``parts[i]`` (in their
    order), and the merge of all of them. From the merges of every prefix and suffix: 3k − 5
    merges of k parts, where merging the others anew for each part (and all for the total)
    takes k² − k − 1."""
    k = len(parts)  # >= 2: a fold holding every row leaves an empty training fold
    suffixes = [None] * (k + 1)  # suffixes[i]: the merge of parts[i:]; each dropped once used
    suffixes[k - 1] = parts[k - 1]
    for i in range(k - 2, 0, -1):
        suffixes[i] = merge(parts[i], suffixes[i + 1])
    training, prefix = [], None  # prefix: the merge of parts[:i]
    for i in range(k):
        rest, suffixes[i + 1] = suffixes[i + 1], None
        training.append(prefix if rest is None else rest if prefix is None else merge(prefix, rest))
        prefix = parts[i] if prefix is None else merge(prefix, parts[i])
    return training, prefix


def _scorers_taking_weights(scorers, search):
    """Names of the scorers that take ``sample_weight``: GridSearchCV passes
    the fit's weights to them (and warns about the others)."""
    taking = set()
    for name, scorer in scorers.items():
        accepts = getattr(scorer, "_accept_sample_weight", None)
        if accepts() if accepts is not None else "sample_weight" in inspect.signature(scorer).parameters:
            taking.add(name)
        else:
            msg = (
                f"The scoring {name}={scorer} does not support sample_weight, which may lead to "
                f"statistically incorrect results when fitting {search} with sample_weight."
            )
            warnings.warn(msg, UserWarning, stacklevel=3)
    return taking


def _fold_rows(rows, n, i, what):
    """Rows of the ``what`` fold of split ``i`` as int indices, checked: a custom `cv` is any iterable."""
    rows = np.asarray(rows)
    if rows.dtype == bool and rows.shape == (n,):
        rows = np.flatnonzero(rows)
    if rows.size == 0:
        raise ValueError(f"`cv` split {i} has an empty {what} fold; every fold needs rows.")
    if rows.ndim != 1 or rows.dtype.kind not in "iu" or rows.min() < -n or rows.max() >= n:
        msg = f"`cv` split {i}: the {what} fold must be row indices (or a boolean mask) of the {n} rows; got {rows!r:.120}."
        raise ValueError(msg)
    return rows


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
    """A fitted model as scikit-learn's metrics read it on one set of rows: each response
    computed where ``X`` is, brought to the host once and cached (``np.asarray`` fails on device arrays)."""

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
        method = getattr(self._model, name)  # AttributeError where the model has none
        if name not in self._RESPONSES:
            return method

        def response(X):
            if name not in self._cache:
                self._cache[name] = _host_labels(method(X))
            return self._cache[name]

        response.__name__ = name  # scikit-learn post-processes by the method's name
        return response


class SmoothingSearchCV(_PredictsWithInnerModel, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Exhaustive search over finalize-only parameters, one pass over the data per fold.

    The same search, results and attributes as :class:`sklearn.model_selection.GridSearchCV`
    with the same ``cv``, for the parameters of an nbgpu model that act only when its statistics
    become parameters (smoothing, priors, ComplementNB's ``norm``, GaussianNB's
    ``var_smoothing``, a KernelDensityNB's bandwidth, ...). Instead of one fit per grid point and
    fold, the statistics of every test fold are accumulated once, and a training fold's
    statistics are the merge of the other folds' (not the total minus the fold's, which cancels
    where one fold holds most of a sum: an outlier). Every grid point is then finalized from
    them (k × d work, no pass over ``X``) and scored on the test fold. A splitter whose test
    folds do not partition the rows (ShuffleSplit, repeated folds) gets each training fold's
    statistics from one pass over its rows.

    A :class:`sklearn.pipeline.Pipeline` ending in such a model (a text vectorizer, then
    MultinomialNB) is searched over that last step's parameters (``"nb__alpha"``): on each fold
    its earlier steps (a clone) are fitted once on the training rows (``fit_transform``) and
    transform the test rows, the model's statistics are accumulated once from the transformed
    training rows, and every grid point is finalized from them; ``best_estimator_`` is the whole
    Pipeline refitted on all rows, as GridSearchCV refits it.

    Parameters
    ----------
    estimator : nbgpu estimator or Pipeline
        The model whose parameters are searched (a MultinomialNB, ComplementNB, BernoulliNB,
        CategoricalNB, PoissonNB, GaussianNB, NormalBayesClassifier or KernelDensityNB), or a
        Pipeline whose last step is one.
    param_grid : dict or list of dicts
        As for GridSearchCV; only parameters that act in finalization may be searched (others,
        such as ``binarize``, raise a ValueError that points to GridSearchCV). For a Pipeline, only
        its last step's, by their Pipeline names (``"<step>__alpha"``): a parameter of an earlier
        step (``"tfidf__min_df"``) is a ValueError, not one fit per grid point, since the earlier
        steps are fitted once per fold.
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
        As GridSearchCV's: ``params``, ``param_<name>``, ``split<i>_test_<metric>``,
        ``mean_test_<metric>``, ``std_test_<metric>``, ``rank_test_<metric>`` (``score`` for a
        single metric), train scores when asked, and ``mean_fit_time``, ``std_fit_time``,
        ``mean_score_time``, ``std_score_time``. A fit time is the grid point's finalization plus
        its share of the fold's accumulation (and, for a Pipeline, of fitting its earlier steps).
    best_estimator_ : estimator
        The refitted best model (with ``refit``); the whole refitted Pipeline for a Pipeline.
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
        For a Pipeline, those of ``best_estimator_`` where it has them (as GridSearchCV's).

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
    def _candidates(self):
        """``(the nbgpu model, grid points as given, grid points as the model's own parameters)``;
        the model is the estimator itself or a Pipeline's last step (grid names ``"<step>__..."``)."""
        est = self.estimator
        if isinstance(est, Pipeline):
            if not est.steps:
                msg = "`estimator` is a Pipeline with no step."
                raise ValueError(msg)
            name, model = est.steps[-1]
            prefix, what = f"{name}__", f"the Pipeline's last step {name!r}"
        else:
            model, prefix, what = est, "", "`estimator`"
        if type(model) not in FINALIZE_PARAMETERS:  # (nbgpu models only)
            known = sorted(c.__name__ for c in FINALIZE_PARAMETERS)
            ending = "" if prefix else " or a Pipeline ending in one"
            msg = f"{what} must be one of nbgpu's models {known}{ending}; got {type(model).__name__}."
            raise TypeError(msg)
        searchable = [prefix + n for n in sorted(FINALIZE_PARAMETERS[type(model)])]
        try:
            candidates = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            msg = f"`param_grid` is not a valid grid: {exc}"
            raise type(exc)(msg) from exc
        names = sorted({name for params in candidates for name in params})
        # The earlier steps of a Pipeline are fitted once per fold, with their
        # own parameters: a grid over them would need one fit per point.
        outside = [n for n in names if not n.startswith(prefix)]
        if outside:
            msg = (
                f"`param_grid` names {outside}, which are not parameters of the Pipeline's last step "
                f"{prefix[:-2]!r}; SmoothingSearchCV fits the earlier steps once per fold and searches only "
                f"{searchable}. Use sklearn.model_selection.GridSearchCV to search the other steps."
            )
            raise ValueError(msg)
        unknown = [n for n in names if n[len(prefix):] not in model.get_params(deep=False)]
        if unknown:
            msg = f"`param_grid` names {unknown}, which are not parameters of {type(model).__name__}."
            raise ValueError(msg)
        changing = [n for n in names if n not in searchable]
        if changing:
            msg = (
                f"`param_grid` names {changing}, which change what {type(model).__name__} accumulates "
                f"from the data, so the statistics cannot be shared between grid points; "
                f"SmoothingSearchCV searches {searchable}. Use sklearn.model_selection.GridSearchCV for the others."
            )
            raise ValueError(msg)
        if not candidates:
            msg = "`param_grid` defines no grid point."
            raise ValueError(msg)
        return model, candidates, [{n[len(prefix):]: v for n, v in params.items()} for params in candidates]

    def _scorers(self):
        """``(dict name -> scorer, multimetric)``."""
        scoring = self.scoring
        if not isinstance(scoring, (list, tuple, set, dict)):
            return {"score": check_scoring(self.estimator, scoring=scoring)}, False
        named = scoring.items() if isinstance(scoring, dict) else ((name, name) for name in scoring)
        scorers = {name: check_scoring(self.estimator, scoring=sc) for name, sc in named}
        if not scorers:
            msg = "`scoring` names no metric."
            raise ValueError(msg)
        if self.refit is not False and not callable(self.refit) and self.refit not in scorers:
            msg = (
                f"For multi-metric scoring, `refit` must be the name of a metric {sorted(scorers)}, "
                f"False or a callable; got {self.refit!r}."
            )
            raise ValueError(msg)
        return scorers, True

    # ---- search -------------------------------------------------------- #
    def _model_folds(self, model, X, y, sample_weight, splits):
        """The folds of an nbgpu model's search: the training statistics and the rows to score on.
        Test folds that partition the rows, training folds their complements: one pass over X."""
        feature_names = feature_names_of(X)
        checked, kind = check_X(X, estimator=model, allow_nan=model._ignore_missing)
        xp, device = kind.xp, kind.device
        # Scored on the validated array (canonical sparse, no second check), but
        # on the DataFrame itself where the model checks its column names.
        X_score = X if feature_names is not None else checked
        n_samples, n_features = checked.shape
        y = check_y(y, n_samples)
        if sample_weight is not None:
            sample_weight = check_sample_weight(
                sample_weight, n_samples, xp=xp, device=device, dtype=kind.sums_dtype
            )
        y_host = _host_labels(y)
        classes = unique_labels(y)
        splits = splits(checked, y_host)
        # A training fold without some class: GridSearchCV's model there knows
        # only the classes it saw, so this fold is accumulated with those alone.
        codes = np.unique(y_host, return_inverse=True)[1]
        n_classes = classes.shape[0]
        fold_classes = [
            classes if np.bincount(codes[train], minlength=n_classes).all() else unique_labels(take_rows(y, train))
            for train, _ in splits
        ]
        base = clone(model)

        def stats_of(index, labels):
            w = None if sample_weight is None else take_rows(sample_weight, index)
            return base._fit_batch(take_rows(checked, index), take_rows(y, index), labels, w, reset=True, commit=False)

        tests = np.concatenate([test for _, test in splits])  # sorted only when their count can partition
        partition = tests.shape[0] == n_samples and np.array_equal(np.sort(tests), np.arange(n_samples))
        partition = partition and all(_complements(train, test, n_samples) for train, test in splits)  # O(n) each
        t0 = time.perf_counter()
        total = None
        if partition:
            parts = [stats_of(test, classes) for _, test in splits]
            stats_xp = get_namespace(first_array(parts[0]))
            # A training fold's statistics are the merge of the other folds', never the total
            # minus its test fold's: subtraction cancels wherever that fold holds most of a sum (a
            # Gaussian outlier's moments; a count sum of fractional values, tf-idf or fractional
            # weights, whose mass lies in one fold). It is exact only for integer sums below 2^53,
            # and checking that costs about what merging does (3k − 5 merges against k − 1 and k
            # subtractions), so every model merges.
            trained, total = _merges_leaving_one_out(parts, lambda a, b: base._merge(a, b, xp=stats_xp))
        fold_stats = [
            trained[i] if partition and labels.shape[0] == n_classes
            else stats_of(train, labels)  # from its own rows (also a fold lacking a class)
            for i, ((train, _), labels) in enumerate(zip(splits, fold_classes))
        ]
        seconds = (time.perf_counter() - t0) / len(splits)
        attributes = {"n_features": n_features, "feature_names": feature_names,
                      "score_dtype": kind.dtype_name}

        def rows(index):
            part = take_rows(X_score, index)
            weights = {} if sample_weight is None else {"sample_weight": to_numpy(take_rows(sample_weight, index))}
            return part, part, take_rows(y, index), y_host[index], weights

        folds = (
            SimpleNamespace(
                stats=stats, classes=labels, attributes=attributes, seconds=seconds, error=None, pipeline=None,
                parts=[rows(test), rows(train)] if self.return_train_score else [rows(test)],
            )
            for (train, test), stats, labels in zip(splits, fold_stats, fold_classes)
        )

        def refit(params):
            stats = total
            if stats is None:
                stats = base._fit_batch(checked, y, classes, sample_weight, reset=True, commit=False)
            return clone(model).set_params(**params)._become_fitted(stats, classes, **attributes)

        inputs = {"n_features_in_": n_features, "feature_names_in_": feature_names}
        return folds, len(splits), refit, classes, inputs

    def _pipeline_folds(self, model, X, y, sample_weight, splits):
        """The folds of a Pipeline's search, made one at a time: its earlier steps (a clone) fitted
        on the training rows, the model's statistics accumulated once from their output."""
        pipeline = self.estimator
        y = check_y(y, _num_samples(X))
        y_host = _host_labels(y)
        classes = unique_labels(y)
        splits = splits(X, y_host)

        def folds():
            for train, test in splits:
                t0 = time.perf_counter()
                try:
                    head = clone(pipeline)[:-1] if len(pipeline.steps) > 1 else None
                    X_train, y_train = take_rows(X, train), take_rows(y, train)
                    Xt_train = X_train if head is None else head.fit_transform(X_train, y_train)
                    feature_names = feature_names_of(Xt_train)
                    checked, kind = check_X(Xt_train, estimator=model, allow_nan=model._ignore_missing)
                    fold_classes = unique_labels(y_train)
                    stats = clone(model)._fit_batch(checked, y_train, fold_classes, None, reset=True, commit=False)
                    seconds = time.perf_counter() - t0
                    X_test = take_rows(X, test)
                    Xt_test = X_test if head is None else head.transform(X_test)
                    parts = [(Xt_test, X_test, take_rows(y, test), y_host[test], {})]
                    if self.return_train_score:
                        parts.append((Xt_train, X_train, y_train, y_host[train], {}))
                    attributes = {"n_features": checked.shape[1], "feature_names": feature_names,
                                  "score_dtype": kind.dtype_name}
                    fold = SimpleNamespace(stats=stats, classes=fold_classes, attributes=attributes, seconds=seconds,
                                           error=None, pipeline=head, parts=parts)
                except Exception as exc:
                    if self.error_score == "raise":
                        raise
                    fold = SimpleNamespace(error=exc, seconds=0.0)  # every grid point of the fold fails
                yield fold

        def refit(params):  # as GridSearchCV refits: the whole Pipeline on all rows
            return clone(pipeline).set_params(**params).fit(X, y)

        return folds(), len(splits), refit, classes, {}

    def fit(self, X, y, *, groups=None, sample_weight=None):
        """Search the grid on ``X``, ``y`` and refit the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Or, for a Pipeline, whatever its first step takes (documents for a text vectorizer).
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter (GroupKFold, ...).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows in fitting (not in scoring), as ``GridSearchCV.fit(X, y,
            sample_weight=...)`` passes them to the estimator's ``fit``. Not with a Pipeline
            (whose ``fit`` takes ``<step>__sample_weight``).

        Returns
        -------
        self : object
        """
        refuse_collections("SmoothingSearchCV", X=X, y=y, sample_weight=sample_weight)
        model, candidates, model_candidates = self._candidates()
        scorers, multimetric = self._scorers()
        if self.error_score != "raise" and not isinstance(self.error_score, numbers.Real):
            msg = f"`error_score` must be 'raise' or a number; got {self.error_score!r}."
            raise ValueError(msg)
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
            n = len(y_host)
            out = [tuple(_fold_rows(rows, n, i, what) for rows, what in zip(split, ("train", "test")))
                   for i, split in enumerate(cv.split(X_checked, y_host, groups))]
            if not out:
                msg = "`cv` produced no split."
                raise ValueError(msg)
            return out

        make_folds = self._pipeline_folds if is_pipeline else self._model_folds
        folds, n_splits, refit, classes, inputs = make_folds(model, X, y, sample_weight, splits)

        n_cand = len(candidates)
        fit_time, score_time = np.zeros((2, n_cand, n_splits))
        kinds = ("test", "train") if self.return_train_score else ("test",)
        scores = {(kind, name): np.zeros((n_cand, n_splits)) for kind in kinds for name in scorers}
        failures = []
        metric_scorers = {name for name, sc in scorers.items() if _is_metric_scorer(sc)}
        # The model scored on the transformed rows gives what the fitted Pipeline gives on the raw
        # ones, for the metrics and for its own ``score`` (scoring=None); another callable gets the Pipeline.
        on_model = metric_scorers | ({"score"} if self.scoring is None else set())

        def score_all(model, fold):
            """The scores of ``model`` on the fold's test (and train) rows, in the order of ``scores``."""
            out = []
            for X_model, X_raw, y_part, y_host, weights in fold.parts:
                # scikit-learn's metrics get host labels and the model's host
                # predictions, each computed once for all the metrics of these rows.
                host = _HostResponses(model) if metric_scorers else None
                for name, sc in scorers.items():
                    if name in metric_scorers:
                        args = host, X_model, y_host
                    elif name in on_model or fold.pipeline is None:
                        args = model, X_model, y_part
                    else:
                        args = Pipeline([*fold.pipeline.steps, (self.estimator.steps[-1][0], model)]), X_raw, y_part
                    out.append(float(sc(*args, **(weights if name in weighted_scorers else {}))))
            return out

        for s, fold in enumerate(folds):
            for c, params in enumerate(model_candidates):
                t0 = time.perf_counter()
                try:
                    if fold.error is not None:
                        raise fold.error
                    fitted = clone(model).set_params(**params)._become_fitted(
                        fold.stats, fold.classes, **fold.attributes
                    )
                    t1 = time.perf_counter()
                    point = score_all(fitted, fold)
                except Exception as exc:
                    if self.error_score == "raise":
                        raise
                    failures.append(f"{candidates[c]}: {type(exc).__name__}: {exc}")
                    t1 = time.perf_counter()
                    point = [float(self.error_score)] * len(scores)
                fit_time[c, s] = t1 - t0 + fold.seconds / n_cand
                score_time[c, s] = time.perf_counter() - t1
                for table, value in zip(scores.values(), point):
                    table[c, s] = value
        if failures:
            if len(failures) == n_cand * n_splits:
                msg = f"All the {len(failures)} fits failed. The first: {failures[0]}"
                raise ValueError(msg)
            msg = (
                f"{len(failures)} fits failed out of a total of {n_cand * n_splits}; their score is "
                f"error_score={self.error_score!r}. The first: {failures[0]}"
            )
            warnings.warn(msg, FitFailedWarning, stacklevel=2)

        self.cv_results_ = _results(candidates, fit_time, score_time, scores)
        self.multimetric_ = multimetric
        self.scorer_ = scorers if multimetric else scorers["score"]
        self.n_splits_ = n_splits
        self.classes_ = classes
        for name in ("n_features_in_", "feature_names_in_", "best_index_", "best_params_", "best_score_",
                     "best_estimator_", "refit_time_"):
            self.__dict__.pop(name, None)
        for name, value in inputs.items():  # a Pipeline's are its best_estimator_'s (below)
            if value is not None:
                setattr(self, name, value)
        if self.refit is False and multimetric:
            return self
        if callable(self.refit):
            self.best_index_ = int(self.refit(self.cv_results_))
        else:  # refit=False with one metric: the best is known, not refitted (as GridSearchCV)
            metric = self.refit if multimetric else "score"
            self.best_index_ = int(np.argmin(self.cv_results_[f"rank_test_{metric}"]))
            self.best_score_ = float(self.cv_results_[f"mean_test_{metric}"][self.best_index_])
        self.best_params_ = candidates[self.best_index_]
        if self.refit is False:
            return self
        t0 = time.perf_counter()
        self.best_estimator_ = refit(self.best_params_)  # (a model's grid points are its own parameters)
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


def _results(candidates, fit_time, score_time, scores):
    """``cv_results_`` in GridSearchCV's layout, from ``scores[kind, metric]`` (kind "test" or "train")."""
    out = {}
    for what, times in (("fit", fit_time), ("score", score_time)):
        out[f"mean_{what}_time"] = times.mean(axis=1)
        out[f"std_{what}_time"] = times.std(axis=1)
    for name in sorted({name for params in candidates for name in params}):
        column = np.ma.masked_all(len(candidates), dtype=object)
        for c, params in enumerate(candidates):
            if name in params:
                column[c] = params[name]
        out[f"param_{name}"] = column
    out["params"] = candidates
    for (kind, metric), table in scores.items():
        for s in range(table.shape[1]):
            out[f"split{s}_{kind}_{metric}"] = table[:, s]
        mean = table.mean(axis=1)
        out[f"mean_{kind}_{metric}"] = mean
        out[f"std_{kind}_{metric}"] = table.std(axis=1)
        if kind == "test":
            # GridSearchCV's ranking: NaN scores last, ties share the best rank.
            filled = np.where(np.isnan(mean), np.nanmin(mean) - 1 if np.any(~np.isnan(mean)) else 0, mean)
            out[f"rank_test_{metric}"] = rankdata(-filled, method="min").astype(np.int32)
    return out
