"""Naive Bayes over groups of columns of different types (the model: ColumnwiseNB's Notes).

The statistics are the class weights plus every part's own statistics, merged
part by part; ``_finalize`` makes new fitted parts (each through its own
``_become_fitted``), so fitting stays transactional. A fit's parts (fresh clones
of the parameters) and their columns are one ``_Plan``, held in ``_fit_plan``
for the length of the fit; a fitted model's plan is its fitted parts.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from typing import NamedTuple

import numpy as np
from sklearn.base import ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import Bunch, get_tags
from sklearn.utils.metaestimators import _BaseComposition
from sklearn.utils.validation import _num_features

from .._array.class_sums import class_totals
from .._array.namespace import (
    get_namespace,
    is_array,
    to_namespace,
    to_namespace_tree,
    to_numpy,
)
from .._array.numerics import log_or_neg_inf
from .._array.columns import select_columns
from .._estimator.base import _BaseNB, class_prior, fitted_parameter
from .._estimator.traits import ByParameters, replace
from .._estimator.base_measure import least_excluded
from .._estimator.docs import shared_parameters_doc
from .._estimator.feature_names import feature_names_of
from .._estimator.model_lock import lock_of
from .._estimator.statistics_checks import check_keys, check_part_of, check_prior_smoothing
from .._validation import check_finite
from .._estimator.params import validate_params
from .._estimator.scoring import check_fitted


def resolve_columns(spec, n_features, feature_names, *, part):
    """The column indices (host int64, in the given order) a part's ``columns`` selects."""
    where = f"The columns of part {part!r} in `estimators`"
    kinds = "must be int indices, a slice, a boolean mask or column names"
    if isinstance(spec, slice):
        spec = np.arange(n_features, dtype=np.int64)[spec]
    if isinstance(spec, (str, numbers.Integral)):
        spec = [spec]
    if callable(spec) or isinstance(spec, dict):
        msg = f"{where} {kinds}; got {type(spec).__name__}."
        raise TypeError(msg)
    try:
        values = np.asarray(to_numpy(spec) if is_array(spec) else list(spec))
    except (TypeError, ValueError):  # not a sequence (a float, None, an object), or ragged
        msg = f"{where} {kinds}; got {spec!r:.200}."
        raise TypeError(msg) from None
    if values.ndim != 1:
        msg = f"{where} {kinds}, a one-dimensional list; got an array of shape {values.shape}."
        raise ValueError(msg)
    if values.dtype.kind == "b" and values.size:
        if values.shape != (n_features,):
            msg = f"{where} are a boolean mask of shape {values.shape}; X has {n_features} features."
            raise ValueError(msg)
        values = np.flatnonzero(values)
    if values.size == 0:
        msg = f"{where} select no column; every part needs at least one."
        raise ValueError(msg)
    if values.dtype.kind in "UO" and all(isinstance(v, str) for v in values.tolist()):
        if feature_names is None:
            msg = (
                f"{where} are given by name ({values.tolist()[:5]}), which needs a "
                "pandas DataFrame with string column names as X."
            )
            raise ValueError(msg)
        lookup = {name: i for i, name in enumerate(feature_names.tolist())}
        missing = [v for v in values.tolist() if v not in lookup]
        if missing:
            msg = f"{where} name {missing[:5]}, which are not columns of X."
            raise ValueError(msg)
        index = np.asarray([lookup[v] for v in values.tolist()])
    elif values.dtype.kind in "iu":
        if np.any(values >= n_features) or np.any(values < -n_features):
            msg = f"{where} hold indices {values.tolist()[:10]}, out of range for X with {n_features} features."
            raise ValueError(msg)
        index = np.where(values < 0, values + n_features, values)
    else:
        msg = f"{where} {kinds}; got values {values.tolist()[:5]}."
        raise TypeError(msg)
    return index.astype(np.int64)


def column_names(feature_names, index):
    """The names of columns ``index`` of a model with ``feature_names`` (None without names)."""
    return None if feature_names is None else feature_names[to_numpy(index)]


def _empirical_prior(part):
    """Whether ``part`` estimates its prior from its class counts (no fixed prior)."""
    params = part.get_params(deep=False)
    return params.get("priors") is None and params.get("class_prior") is None and params.get("fit_prior", True)


def part_log_prior(est, *, xp, device, dtype):
    """The log class prior a fitted part adds to its joint log-likelihood."""
    if hasattr(est, "class_log_prior_"):
        lp = to_namespace(est.class_log_prior_, xp, device)
    else:
        lp = log_or_neg_inf(to_namespace(est.class_prior_, xp, device), xp=xp)
    return xp.astype(lp, dtype)


class _Plan(NamedTuple):
    """What a ColumnwiseNB fits or scores with."""

    names: list  # of the parts
    parts: list  # fresh clones of the parameters during a fit; the fitted parts after
    columns: list  # host int64 column indices of every part (None until X's width is known)
    feature_names: object  # of the whole (an array), or None


@shared_parameters_doc("prior_smoothing", "loss_matrix")
def _with_parts_traits(model, traits):
    """``traits`` with what the sums show, the raw data kept and the densities that may be 0
    taken from ``model``'s parts."""
    try:
        parts = [part._traits for part in model._plan().parts]
    except (TypeError, ValueError):  # malformed `estimators`: fit says so
        return traits
    return replace(traits, sums_show_nonfinite=all(t.sums_show_nonfinite for t in parts),
                   raw_statistics=tuple({key for t in parts for key in t.raw_statistics}),
                   excludes=any(t.excludes for t in parts))


class ColumnwiseNB(_BaseNB, ClassifierMixin, _BaseComposition):
    """Naive Bayes on mixed feature types: one nbgpu estimator per group of columns.

    Gaussian columns, count columns, binary and categorical columns in one
    model: each part models its columns given the class, the parts are
    independent given the class (the naive Bayes assumption between groups),
    and the class prior is counted once.

    Parameters
    ----------
    estimators : list of (str, estimator, columns) tuples
        The parts: a unique name, an unfitted nbgpu naive Bayes estimator
        (:class:`GaussianNB`, :class:`MultinomialNB`, :class:`BernoulliNB`,
        :class:`CategoricalNB`, :class:`PoissonNB`, :class:`NormalBayesClassifier`
        or a nested :class:`ColumnwiseNB`; not :class:`ComplementNB`, whose
        scores are not log-likelihoods) and its columns: an int index or list
        of indices, a slice, a boolean mask, or column name(s) of a pandas
        DataFrame ``X`` (a nested ColumnwiseNB names them among its parent's
        columns). A column may belong to several parts (its evidence then
        counts once per part).
    priors : array-like of shape (n_classes,), default=None
        Prior probabilities of the classes. If None, the (weighted) class
        frequencies of the training data.
    {shared_parameters}

    Attributes
    ----------
    class_count_ : array of shape (n_classes,)
        Weighted number of training samples per class (float64).
    class_prior_ : array of shape (n_classes,)
        Probability of each class, the one prior of the combined model.
    class_log_prior_ : array of shape (n_classes,)
        Its logarithm.
    classes_ : array of shape (n_classes,)
        Class labels (the same in every part).
    estimators_ : list of estimators
        The fitted parts, each a usable estimator on its own columns.
    named_estimators_ : :class:`~sklearn.utils.Bunch`
        The fitted parts by name.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit (DataFrame input only).

    See Also
    --------
    sklearn.compose.ColumnTransformer : the same ``(name, estimator, columns)``
        convention, for transformers.

    Notes
    -----
    ``log P(x, c) = Σₚ (log Pₚ(xₚ, c) − log Pₚ(c)) + log P(c)``: each part's
    own prior (its ``class_prior_`` or ``class_log_prior_``) is subtracted
    from its joint log-likelihood and the combined model's added once. A part
    must not give zero prior probability to a class the combined model gives
    a positive one (its likelihood could not be separated from the prior);
    leave the parts' priors at their defaults.

    ``prior_smoothing`` and ``loss_matrix`` of the combined model are set on
    the ColumnwiseNB: a part contributes only its likelihood, so on a part
    they apply only when that fitted part is used on its own.

    Missing values: NaN passes through to the parts that take
    ``missing="ignore"`` (each leaves a missing feature out); a NaN in the
    columns of any other part is an error.

    ``fit`` and ``partial_fit`` feed every part's own statistics, so chunked
    ``partial_fit`` equals ``fit`` whenever it does for the parts. Parameters
    of the parts are ``<name>__<param>`` (``get_params``, ``set_params``,
    grid search).

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import CategoricalNB, ColumnwiseNB, GaussianNB, PoissonNB
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = np.column_stack([
    ...     rng.normal(y, 1.0),            # a measurement
    ...     rng.poisson(1 + 3 * y),        # a count
    ...     rng.integers(0, 3, size=100),  # a category code
    ... ])
    >>> clf = ColumnwiseNB([
    ...     ("gauss", GaussianNB(), [0]),
    ...     ("counts", PoissonNB(), [1]),
    ...     ("kind", CategoricalNB(), [2]),
    ... ]).fit(X, y)
    >>> clf.predict([[1.5, 6, 0], [-1.0, 0, 0]])
    array([1, 0])
    """

    # Finalize may refuse the data; what the sums show, the raw data kept and the densities
    # that may be 0 are the parts'.
    _traits = ByParameters(replace(_BaseNB._traits, lazy_parameters=False, has_base_measure=True), _with_parts_traits)
    # Fitted parameters (``_finalize``), made at a fit.
    class_count_ = fitted_parameter()
    class_prior_ = fitted_parameter()
    class_log_prior_ = fitted_parameter()
    estimators_ = fitted_parameter()
    _part_names_ = fitted_parameter()
    _columns_ = fitted_parameter()

    _NotFittedError = NotFittedError
    _param_constraints: dict = {
        **_BaseNB._param_constraints,
        "estimators": [list],
        "priors": ["array-like", None],
    }

    def __init__(self, estimators, *, priors=None, prior_smoothing=0.0, loss_matrix=None):
        self.estimators = estimators
        self.priors = priors
        self.prior_smoothing = prior_smoothing
        self.loss_matrix = loss_matrix

    # ---- nested parameters (scikit-learn's composition conventions) ------ #
    @property
    def _estimators(self):
        try:
            return [(name, est) for name, est, _ in self.estimators]
        except (TypeError, ValueError):  # malformed: fit says what is wrong
            return self.estimators

    @_estimators.setter
    def _estimators(self, value):
        self.estimators = [(name, est, cols) for (name, est), (_, _, cols) in zip(value, self.estimators)]

    def get_params(self, deep=True):
        """Parameters of this estimator, and of its parts as ``<name>__<param>``.

        Parameters
        ----------
        deep : bool, default=True
            Also return the parts and their parameters.

        Returns
        -------
        params : dict
        """
        return self._get_params("_estimators", deep=deep)

    def set_params(self, **params):
        """Set parameters of this estimator or of its parts (``<name>__<param>``).

        Parameters
        ----------
        **params : dict

        Returns
        -------
        self : object
        """
        self._set_params("_estimators", **params)
        return self

    @property
    def named_estimators_(self):
        """The fitted parts by name."""
        check_fitted(self)
        return Bunch(**dict(zip(self._part_names_, self.estimators_)))

    # ---- the parts of the fit in progress, or of the fitted model ------- #
    def _fit_batch(self, X, y, classes, sample_weight, *, reset, commit=True, partial=False):
        # The plan is made before the base class validates X (its NaN policy depends on
        # the parts), with the columns resolved against X's own shape and column names.
        try:
            n_features = _num_features(X) or None  # of any array-like; check_X reports a bad one
        except TypeError:
            n_features = None
        names = feature_names_of(X) if reset else getattr(self, "feature_names_in_", None)
        # The plan lives in the model while it fits: one update at a time holds it (model_lock.py).
        with lock_of(self).update() if commit else contextlib.nullcontext(), self._fitting(n_features, names, reset=reset):
            return super()._fit_batch(X, y, classes, sample_weight, reset=reset, commit=commit, partial=partial)

    def _become_fitted(self, stats, classes, *, n_features, feature_names, score_dtype, lazy=False, hyper=None):
        with self._fitting(n_features, feature_names, reset=True):
            return super()._become_fitted(stats, classes, n_features=n_features, feature_names=feature_names,
                                          score_dtype=score_dtype, lazy=lazy, hyper=hyper)

    @contextlib.contextmanager
    def _fitting(self, n_features, feature_names, *, reset):
        """Hold the plan of a fit (``_fit_plan``) for the length of the block; re-entrant,
        so a fit that becomes fitted keeps the plan it accumulated with."""
        if "_fit_plan" in self.__dict__:
            yield
            return
        self._fit_plan = self._make_plan(n_features, feature_names, reset=reset)
        try:
            yield
        finally:
            del self._fit_plan

    def _make_plan(self, n_features, feature_names, *, reset):
        """The parts (fresh clones of the parameters) and their columns; ``reset=False`` keeps the
        fitted columns. A nested ColumnwiseNB gets its own plan, among its parent's columns."""
        specs = self.estimators
        if not isinstance(specs, (list, tuple)) or not specs or not all(isinstance(s, tuple) and len(s) == 3 for s in specs):
            msg = (
                "`estimators` must be a non-empty list of (name, estimator, columns) "
                f"tuples; got {specs!r:.200}."
            )
            raise ValueError(msg)
        names = [name for name, _, _ in specs]
        if not all(isinstance(name, str) for name in names):
            msg = f"The names in `estimators` must be strings; got {names}."
            raise TypeError(msg)
        try:
            self._validate_names(names)
        except ValueError as exc:
            msg = f"The part names in `estimators` are not usable: {exc}"
            raise ValueError(msg) from exc
        for name, est, _ in specs:
            if not isinstance(est, _BaseNB) or not est._traits.scores_are_log_likelihoods:
                msg = (
                    f"Part {name!r} of `estimators` must be an nbgpu naive Bayes estimator "
                    "whose scores are joint log-likelihoods (GaussianNB, MultinomialNB, "
                    "BernoulliNB, CategoricalNB, PoissonNB, NormalBayesClassifier, "
                    f"ColumnwiseNB); got {type(est).__name__}."
                )
                raise TypeError(msg)
        columns = None
        if not reset:
            if names != self._part_names_:
                msg = (
                    f"`estimators` names {names} differ from those of the fitted model "
                    f"{self._part_names_}; call fit to start over."
                )
                raise ValueError(msg)
            columns = self._columns_
            n, fitted_names = self.n_features_in_, getattr(self, "feature_names_in_", None)
            for (name, est, cols), fitted_cols, part in zip(specs, columns, self.estimators_):
                if type(est) is not type(part):
                    msg = (f"Part {name!r} is a {type(est).__name__} in `estimators` but was fitted as a "
                           f"{type(part).__name__}; call fit to start over.")
                    raise ValueError(msg)
                if not np.array_equal(resolve_columns(cols, n, fitted_names, part=name), fitted_cols):
                    msg = f"The columns of part {name!r} in `estimators` differ from those it was fitted on; call fit to start over."
                    raise ValueError(msg)
        elif n_features is not None:
            columns = [resolve_columns(cols, n_features, feature_names, part=name) for name, _, cols in specs]
        parts = []
        for (_, est, _), cols in zip(specs, columns or [None] * len(specs)):
            part = clone(est)
            validate_params(part)
            if isinstance(part, ColumnwiseNB) and cols is not None:
                part._fit_plan = part._make_plan(cols.shape[0], column_names(feature_names, cols), reset=True)
            parts.append(part)
        return _Plan(names, parts, columns, feature_names)

    def _plan(self):
        """The plan of the fit in progress, else that of the fitted model."""
        if "_fit_plan" in self.__dict__:
            return self._fit_plan
        if "estimators_" in self.__dict__:
            return _Plan(self._part_names_, self.estimators_, self._columns_, getattr(self, "feature_names_in_", None))
        # An unfitted template (a Dask merge task) merges with the parts of its parameters.
        return self._make_plan(None, None, reset=True)

    def _fitted_params(self):
        # A part's parameters are its fitted copy's: set_params(p__alpha=...) changes the
        # template in `estimators`, not the part the statistics were gathered with.
        changed = super()._fitted_params()
        if "estimators_" not in self.__dict__:
            return changed
        specs = changed.get("estimators", self.estimators)
        return {**changed, "estimators": [(name, part, cols) for (name, _, cols), part in zip(specs, self.estimators_)]}

    def _plan_for(self, X):
        """The plan, its columns resolved against ``X`` where it has none (an unfitted template
        given rows: SemiSupervisedNB's EM accumulates with its estimator's)."""
        plan = self._plan()
        return plan if plan.columns is not None else self._make_plan(X.shape[1], None, reset=True)

    def _part_inputs(self, X, xp):
        """(part, its columns' view of X as the part sees it) for every part."""
        plan = self._plan_for(X)
        for part, cols in zip(plan.parts, plan.columns):
            yield part, part._model_input(select_columns(X, cols, xp=xp), xp)

    # ---- statistics ---------------------------------------------------- #
    @property
    def _ignore_missing(self):
        """True when some part (of the plan, else of the parameters) takes NaN as missing: NaN
        then passes ``check_X`` and ``_check_values`` refuses it in the other parts' columns."""
        if "_fit_plan" in self.__dict__ or "estimators_" in self.__dict__:
            parts = self._plan().parts
        else:
            try:
                parts = [est for _, est, _ in self.estimators]
            except (TypeError, ValueError):  # malformed `estimators`: fit says what is wrong
                return False
        return any(isinstance(part, _BaseNB) and part._ignore_missing for part in parts)

    def _check_values(self, X):
        ignore = self._ignore_missing
        plan = self._plan_for(X)
        for name, part, cols in zip(plan.names, plan.parts, plan.columns):
            Xp = select_columns(X, cols, xp=get_namespace(X))
            if ignore and not part._ignore_missing:
                check_finite(Xp, estimator=part, name=f"X[:, <columns of part {name!r}>]")
            part._check_values(Xp)

    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        with self._fitting(n_features, feature_names, reset=True):
            super()._check_statistics(stats, n_classes, n_features, feature_names=feature_names, values=values)
            check_keys(stats, ["class_count", "parts"])
            if values:
                check_prior_smoothing(self, stats["class_count"])
            plan = self._plan()
            check_keys(stats["parts"], plan.names, name="statistics entry 'parts'")
            for name, part, cols in zip(plan.names, plan.parts, plan.columns):
                names = column_names(feature_names, cols)
                try:
                    part._check_statistics(stats["parts"][name], n_classes, int(cols.shape[0]), feature_names=names, values=values)
                    if values:  # every part is fitted on the same rows
                        check_part_of(stats["parts"][name]["class_count"], "class_count", stats["class_count"],
                                      "the whole model's class_count", equal=True, what="the weights of the same rows")
                except ValueError as exc:
                    raise ValueError(f"part {name!r}: {exc}") from exc

    def _check_params_for_fit(self, n_classes, n_features):
        checked = super()._check_params_for_fit(n_classes, n_features)
        plan = self._plan()
        for part, cols in zip(plan.parts, plan.columns):
            part._check_params_for_fit(n_classes, cols.shape[0])
        return checked

    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        if previous is not None:
            previous = to_namespace_tree(previous, xp, codes.device)
        parts = {}
        for name, (part, Xp) in zip(self._plan().names, self._part_inputs(X, xp)):
            prev = None if previous is None else previous["parts"][name]
            parts[name] = part._accumulate(Xp, codes, weights, n_classes, xp=xp, dtype=dtype, previous=prev)
        return {"class_count": class_totals(codes, weights, n_classes, dtype=dtype, xp=xp), "parts": parts}

    def _merge(self, a, b, *, xp):
        # Nested statistics of an earlier fit may still be on another device.
        a = to_namespace_tree(a, xp, b["class_count"].device)
        plan = self._plan()
        parts = {name: part._merge(a["parts"][name], b["parts"][name], xp=xp) for name, part in zip(plan.names, plan.parts)}
        return {"class_count": a["class_count"] + b["class_count"], "parts": parts}

    def _statistics_for_classes(self, stats, index, n_classes, *, xp):
        plan = self._plan()
        parts = {
            name: part._statistics_for_classes(stats["parts"][name], index, n_classes, xp=xp)
            for name, part in zip(plan.names, plan.parts)
        }
        return {**super()._statistics_for_classes(stats, index, n_classes, xp=xp), "parts": parts}

    def _finalize(self, stats, classes, params, *, xp, dtype):
        count = stats["class_count"]
        prior, log_prior = class_prior(self, count, params, xp=xp)
        plan = self._plan()
        score_dtype = "float32" if dtype == xp.float32 else "float64"
        fitted = []
        for name, part, cols in zip(plan.names, plan.parts, plan.columns):
            names = column_names(plan.feature_names, cols)
            est = clone(part)._become_fitted(
                stats["parts"][name], classes, n_features=int(cols.shape[0]), feature_names=names, score_dtype=score_dtype
            )
            own = to_numpy(part_log_prior(est, xp=xp, device=count.device, dtype=count.dtype))
            lost = np.isneginf(own) & ~np.isneginf(to_numpy(log_prior))
            if np.any(lost) and _empirical_prior(part):  # (a smoothed empirical prior loses no class)
                # A class without rows, which this model's prior keeps: the part's own prior is
                # only divided out, so a smoothed one separates its likelihood as well.
                est = clone(part).set_params(prior_smoothing=1.0)._become_fitted(
                    stats["parts"][name], classes, n_features=int(cols.shape[0]), feature_names=names, score_dtype=score_dtype
                )
                own = to_numpy(part_log_prior(est, xp=xp, device=count.device, dtype=count.dtype))
                lost = np.isneginf(own) & ~np.isneginf(to_numpy(log_prior))
            if np.any(lost):
                msg = (
                    f"Part {name!r} of `estimators` gives class index(es) "
                    f"{np.flatnonzero(lost).tolist()[:10]} a prior probability of 0, so its "
                    "likelihood cannot be separated from its prior; leave the parts' "
                    "priors at their defaults and set `priors` on the ColumnwiseNB."
                )
                raise ValueError(msg)
            fitted.append(est)
        return {
            "class_count_": count,
            "class_prior_": xp.astype(prior, dtype),
            "class_log_prior_": log_prior,
            "estimators_": fitted,
            "_part_names_": plan.names,
            "_columns_": plan.columns,
        }

    # ---- scoring ------------------------------------------------------- #
    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        plan = self._plan()
        return 8 * n_classes * 3 + sum(
            part._score_row_bytes(cols.shape[0], n_classes, xp=xp,
                                  stored=None if stored is None else min(stored, cols.shape[0]))
            for part, cols in zip(plan.parts, plan.columns)
        )

    def _excluded_and_joint(self, X, *, xp, device, dtype, scores=True):
        """``(z, total)``: the parts' counts of features of density 0 (None where no part has
        such), and the sum of their joint log-likelihoods with this model's prior for theirs
        (where ``scores``)."""
        (prior,) = self._fitted_arrays(("class_log_prior_",), xp=xp, device=device, dtype=dtype)
        total, z = prior, None
        for part, Xp in self._part_inputs(X, xp):
            excludes = part._traits.excludes
            if not (scores or excludes):
                continue
            own = part_log_prior(part, xp=xp, device=device, dtype=dtype)
            # A class both priors exclude gets -inf from ``total``; skip it here.
            finite = xp.isfinite(own)
            own = xp.where(finite, own, xp.zeros_like(own))
            if excludes:
                zp, jll = part._excluded_and_joint(Xp, xp=xp, device=device, dtype=dtype, scores=scores)
                zp = xp.where(finite, zp, xp.zeros_like(zp))
                z = zp if z is None else z + zp
            else:
                jll = part._joint_log_likelihood(Xp, xp=xp, device=device, dtype=dtype)
            if scores:
                total = total + xp.where(finite, jll - own, xp.zeros_like(jll))
        if z is not None:  # a class this model's prior excludes is never among the fewest
            z = z + xp.where(xp.isinf(prior), xp.full_like(prior, math.inf), xp.zeros_like(prior))
        return z, total

    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        z, total = self._excluded_and_joint(X, xp=xp, device=device, dtype=dtype)
        return total if z is None else least_excluded(z, total, xp=xp)

    def _class_free_log(self, X, *, xp, device, dtype):
        """The parts' class-independent terms (e.g. PoissonNB's ``−Σ log x!``)."""
        total = xp.zeros((X.shape[0], 1), dtype=dtype, device=device)
        for part, Xp in self._part_inputs(X, xp):
            if part._traits.has_base_measure:
                total = total + part._class_free_log(Xp, xp=xp, device=device, dtype=dtype)
        return total

    # ---- moving and tags --------------------------------------------- #
    def to_device(self, like=None, *, xp=None, device=None):
        """Move every fitted array, the parts' included, to another namespace/device.

        Parameters
        ----------
        like : array, optional
            Take namespace and device from this array.
        xp : Array API namespace, optional
        device : device, optional

        Returns
        -------
        self : object
        """
        super().to_device(like, xp=xp, device=device)
        for part in self.estimators_:
            part.to_device(like, xp=xp, device=device)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            parts = [get_tags(est) for _, est, _ in self.estimators]
        except (TypeError, ValueError):  # malformed `estimators`: fit will say so
            return tags
        if parts:
            tags.input_tags.sparse = all(t.input_tags.sparse for t in parts)
            # NaN anywhere only if every part takes it (it passes to those that do).
            tags.input_tags.allow_nan = all(t.input_tags.allow_nan for t in parts)
            tags.input_tags.positive_only = any(t.input_tags.positive_only for t in parts)
            tags.input_tags.categorical = any(t.input_tags.categorical for t in parts)
            # A part that is no classifier has no classifier tags (fit refuses it).
            tags.classifier_tags.poor_score = any(t.classifier_tags and t.classifier_tags.poor_score for t in parts)
        return tags
