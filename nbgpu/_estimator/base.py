"""The estimator protocol: ``_accumulate``, ``_merge``, ``_finalize`` (ARCHITECTURE.md, design 1).

``fit`` is ``partial_fit`` from empty statistics. :meth:`_BaseNB._become_fitted` is
the one way a model becomes fitted, whatever its statistics come from (a fit, a
merge, Dask, a model file, scikit-learn, ColumnwiseNB's parts); it finalizes
before it stores anything, so a call that raises leaves a fitted model as it was.
"""

from __future__ import annotations

import abc
import math
import warnings
from numbers import Real
from types import SimpleNamespace

import numpy as np

from .._array.namespace import (
    first_array,
    get_device,
    get_namespace,
    is_array,
    is_sparse,
    result_dtype,
    to_namespace,
    to_namespace_tree,
)
from .._array.numerics import log_or_neg_inf, product_operand
from .._array.paths import fast
from .._array import sums
from .._validation import (
    check_classes,
    check_classes_unchanged,
    check_n_features,
    check_prior,
    check_sample_weight,
    check_finite,
    checks_together,
    check_statistics_finite,
    check_X,
    check_y,
    encode_labels,
    unique_labels,
)
from .._version import __version__
from . import merging, sklearn_interchange
from .adapters import adapter_for, computed
from .feature_names import check_feature_names, feature_names_of
from .model_lock import lock_of
from .params import Interval, Options, param_names, validate_params
from . import scoring
from .scoring import check_fitted, loss_matrix_of
from .statistics_checks import check_class_count, check_keys
from .traits import Traits


class fitted_parameter:
    """A fitted parameter derived from the statistics, declared in the class body of the model
    that makes it (its ``_finalize`` or a deferred parameter's method): made at a fit, or at its first
    read after ``partial_fit``, a merge or a load. The value is then an entry of the instance's
    ``__dict__``, which a read finds first; an unfitted model has no such attribute."""

    def __init__(self, doc=None):
        self.__doc__ = doc

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, model, owner=None):
        if model is None:
            return self
        return _fitted_parameter(model, self.name)


class InconsistentVersionWarning(UserWarning):
    """A pickled nbgpu model is being loaded by another nbgpu version than the one that wrote it.

    As scikit-learn's warning of the same name: pickles suit the version that
    wrote them (model files, ``nbgpu.save``/``nbgpu.load``, are the format that
    other versions read). ``original_nbgpu_version`` is None for pickles written
    before nbgpu recorded its version in them.
    """

    def __init__(self, estimator_name, current_nbgpu_version, original_nbgpu_version):
        self.estimator_name = estimator_name
        self.current_nbgpu_version = current_nbgpu_version
        self.original_nbgpu_version = original_nbgpu_version

    def __str__(self):
        written = ("an unknown nbgpu version (one that did not record it)" if self.original_nbgpu_version is None
                   else f"nbgpu version {self.original_nbgpu_version}")
        return (f"Trying to unpickle {self.estimator_name} from {written} when using version "
                f"{self.current_nbgpu_version}. This might lead to breaking code or invalid results; model "
                f"files (nbgpu.save, nbgpu.load) are the format that lasts.")


def score_space_of(stats, name):
    """``(xp, dtype)``: the namespace of ``stats`` and the dtype ``name`` ("float32" or "float64")
    stands for on their device."""
    like = first_array(stats)
    xp = get_namespace(like)
    return xp, result_dtype(name, xp, get_device(like))


class _BaseNB(abc.ABC):
    """The core of every model (no scikit-learn). ``loss_matrix``, ``prior_smoothing`` and
    ``missing`` are read with a default: a subclass opts in by naming them in ``__init__``."""

    # Subclasses merge these into their own constraints ({**_BaseNB._param_constraints, ...}).
    _param_constraints: dict = {
        "loss_matrix": ["array-like", None],
        "prior_smoothing": [Interval(Real, 0, None, closed="left")],
        "missing": [Options({"error", "ignore"})],
    }

    # Scoring (scoring.py): the predict* family and score, the same for every model.
    _NotFittedError = scoring.NotFittedError
    _check_block_values = scoring._check_block_values
    _ready_to_score = scoring._ready_to_score
    _fitted_arrays = scoring._fitted_arrays
    predict_joint_log_proba = scoring.predict_joint_log_proba
    predict_log_proba = scoring.predict_log_proba
    predict_proba = scoring.predict_proba
    predict = scoring.predict
    predict_risk = scoring.predict_risk
    score = scoring.score

    # What the shared machinery reads of a model family (traits.py); a model replaces what differs.
    _traits = Traits()

    def _check_values(self, X):
        """Model-specific checks of the values of ``X`` (fit and predict)."""
        if self._traits.dense_only_message is not None and is_sparse(X):
            raise TypeError(self._traits.dense_only_message.format(name=type(self).__name__))

    def _model_input(self, X, xp):
        """What statistics and scores are computed on (``X``; ``X > binarize`` for BernoulliNB)."""
        return X

    def _check_params_for_fit(self, n_classes, n_features):
        """Check every data-dependent parameter ``_finalize`` reads, before any statistic
        is computed (a call that defers finalizing still refuses a bad one); the checked
        values by name, which ``_finalize`` reads instead of checking them again."""
        # The fixed prior and prior_smoothing, checked together.
        name = self._traits.prior_parameter
        prior = check_prior(getattr(self, name), n_classes, name=name)
        smoothing = float(getattr(self, "prior_smoothing", 0.0))
        if not math.isfinite(smoothing):
            msg = f"`prior_smoothing` must be a finite number >= 0; got {smoothing}."
            raise ValueError(msg)
        if prior is not None and smoothing != 0.0:
            msg = (
                f"`prior_smoothing={smoothing:g}` cannot be combined with a fixed "
                f"`{name}`: a fixed prior is not estimated from counts, so there "
                f"is nothing to smooth. Set prior_smoothing=0 or {name}=None."
            )
            raise ValueError(msg)
        return {name: prior, "prior_smoothing": smoothing}

    def _hyper(self, n_classes, n_features, checked=None):
        """``_finalize``'s ``params``: this model's hyper-parameters, those that depend on the
        data as ``_check_params_for_fit`` gave them (``checked``; else checked now)."""
        if checked is None:
            checked = self._check_params_for_fit(n_classes, n_features)
        return SimpleNamespace(**{**self._params(), **checked})

    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        """Raise ValueError naming the entry unless ``stats`` (host numpy, from a model file) fit
        ``n_classes`` × ``n_features``; ``values=False`` checks the layout only. A model adds its
        own entries (``statistics_checks.py``); ``feature_names``: ColumnwiseNB parts chosen by name."""
        self._check_params_for_fit(n_classes, n_features)
        loss_matrix_of(self, n_classes)
        check_keys(stats, ["class_count"], optional=None)
        check_class_count(stats["class_count"], n_classes, values=values)

    @property
    def _ignore_missing(self):
        """True when NaN means "missing" (``missing="ignore"``) instead of an error."""
        return getattr(self, "missing", "error") == "ignore"

    @abc.abstractmethod
    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        """Statistics (a dict of arrays) of one validated batch, sums in ``dtype``; ``previous``
        (or None) for a layout that depends on the data seen (CategoricalNB's categories)."""

    @abc.abstractmethod
    def _merge(self, a, b, *, xp):
        """The statistics of the union of two disjoint sets of rows."""

    def _statistics_for_classes(self, stats, index, n_classes, *, xp):
        """``stats`` for ``n_classes`` classes: old class ``i`` at ``index[i]`` (host ints), new ones zero."""
        k = int(index.shape[0])
        # Row k of the padded arrays is zero: every new class takes it.
        source = np.full(n_classes, k, dtype=np.int64)
        source[index] = np.arange(k)

        def relaid(a):
            return tuple(map(relaid, a)) if isinstance(a, tuple) else sums.with_rows(a, source, xp=xp)

        axis = self._traits.class_axis_statistics
        return {key: relaid(value) if key in axis else value for key, value in stats.items()}

    def _accumulate_onto(self, previous, X, codes, weights, n_classes, *, xp, dtype):
        """``previous`` plus a batch that passed every check (a continuing ``partial_fit``); a model
        may add in place, but must refuse overflowing statistics before it changes any."""
        batch = self._accumulate(X, codes, weights, n_classes, xp=xp, dtype=dtype, previous=previous)
        merged = self._merge(previous, batch, xp=xp)
        check_statistics_finite(merged, estimator=self, X=X, sample_weight=weights)
        return merged

    @abc.abstractmethod
    def _finalize(self, stats, classes, params, *, xp, dtype):
        """The fitted parameters (a dict) that ``stats`` define under the hyper-parameters
        ``params`` (read as attributes: the model itself at a fit, a snapshot of the last fit's
        later), in ``dtype``; reads nothing else of the model, and may raise."""

    @abc.abstractmethod
    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        """``log P(x, c)`` (n × k) of validated rows, up to a class-independent term."""

    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        """Bytes of temporaries per row while scoring; ``stored``: a sparse X's mean stored values per row."""
        return 8 * n_classes

    def fit(self, X, y, sample_weight=None):
        """Fit the model on ``X``, ``y``, discarding what an earlier fit learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors: any Array API array (numpy, cupy, torch,
            array-api-strict), a scipy or cupyx sparse CSR/CSC matrix, a list
            or a pandas DataFrame.
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row (1 for unweighted).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if (adapter := adapter_for(X)) is not None:
            return adapter.fit(self, X, y, sample_weight, None, reset=True)
        y, sample_weight = computed(y, sample_weight)
        return self._fit_batch(X, y, None, sample_weight, reset=True)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with one batch of samples (out-of-core learning).

        Calling it on consecutive chunks of a data set gives the same model
        as one ``fit`` on their concatenation. A batch costs what its rows
        cost (its stored values for sparse input), not the size of the
        model. Threads may feed batches to one model at once: they are
        validated and summed in parallel and added one at a time, and a
        prediction made meanwhile sees the model before or after a batch,
        never a mixture.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training vectors of this batch.
        y : array-like of shape (n_samples,)
            Class labels of this batch; each must be one of ``classes``.
        classes : array-like of shape (n_classes,), default=None
            Every class that can appear in ``y``. Required on the first call;
            if given later it must equal ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of every row.

        Returns
        -------
        self : object
            The updated estimator.
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            msg = "classes must be passed on the first call to partial_fit."
            raise ValueError(msg)
        (classes,) = computed(classes)  # a handful of labels: in memory even from a Dask array
        if (adapter := adapter_for(X)) is not None:
            return adapter.fit(self, X, y, sample_weight, classes, reset=first)
        y, sample_weight = computed(y, sample_weight)
        return self._fit_batch(X, y, classes, sample_weight, reset=first, partial=True)

    def _fit_batch(self, X, y, classes, sample_weight, *, reset, commit=True, partial=False):
        """Fit one batch; ``commit=False`` (a Dask worker's row block) validates and
        accumulates as a fit does and returns the statistics, changing nothing.

        The batch is validated without the model's lock; reading the running statistics,
        adding the batch and becoming fitted hold it (``model_lock.py``). A partial_fit
        that finds another thread updating sums its batch meanwhile and merges it after."""
        if not commit:
            return _batch_statistics(self, X, y, classes, sample_weight, reset=reset, mode="merged")[0]
        lock = lock_of(self)
        alone = fitted = None
        if not lock.acquire(blocking=False):
            fitted = self.__dict__.get("classes_")
            if partial and not reset and fitted is not None:
                alone = _batch_statistics(self, X, y, classes, sample_weight, reset=False, mode="alone")
            lock.acquire()
        try:
            if alone is not None and self.__dict__.get("classes_") is fitted:  # else refit meanwhile: redone
                batch, summed = alone
                xp = summed["xp"]
                stats = self._merge(to_namespace_tree(self._stats, xp, summed["device"]), batch, xp=xp)
                check_statistics_finite(stats, estimator=self, X=summed["X"], sample_weight=summed["weights"])
            else:
                if partial and reset and "classes_" in self.__dict__:
                    reset = False  # another thread's first partial_fit came first: this batch continues it
                stats, summed = _batch_statistics(self, X, y, classes, sample_weight, reset=reset, mode="onto")
            # fit finalizes at once (scikit-learn's predict does not change a fitted model's
            # __dict__); partial_fit only stores its statistics, finalized at the first read.
            return _become_fitted_held(
                self, stats, summed["classes"], n_features=summed["n_features"], feature_names=summed["feature_names"],
                score_dtype=summed["score_dtype"], lazy=partial, hyper=summed["hyper"], space=summed["space"],
            )
        finally:
            lock.release()

    def _become_fitted(self, stats, classes, *, n_features, feature_names, score_dtype, lazy=False, hyper=None):
        """Become the model ``stats`` define (fitted arrays where ``stats`` are, scores in ``score_dtype``);
        ``lazy`` derives parameters at their first read unless the trait ``lazy_parameters`` is False; ``hyper``:
        the hyper-parameters as a fit checked them (:meth:`_hyper`; else checked here)."""
        with lock_of(self).update():
            return _become_fitted_held(self, stats, classes, n_features=n_features, feature_names=feature_names,
                                       score_dtype=score_dtype, lazy=lazy, hyper=hyper)

    def _fitted_params(self):
        """The hyper-parameters of the last fit that ``set_params`` has changed since (name -> value)."""
        if "_fit_params_" not in self.__dict__ or _params_unchanged(self):
            return {}
        return self._fit_params_

    _get_param_names = classmethod(param_names)

    def _params(self):
        """``get_params(deep=False)``, without inspecting ``__init__`` per call."""
        return {name: getattr(self, name) for name in param_names(type(self))}

    def __getstate__(self):
        # Derived parameters are not pickled: they are derived again when first read.
        inherited = getattr(super(), "__getstate__", None)  # BaseEstimator's (its version is scikit-learn's)
        state = inherited() if inherited is not None else self.__dict__
        derived = state.get("_derived_")
        if derived and self._traits.lazy_parameters:
            state = {name: value for name, value in state.items() if name not in derived}
            state["_derived_"] = None
        # A copy (object.__getstate__ gives the __dict__ itself), with the version that wrote it.
        return {**state, "_nbgpu_version": __version__}

    def __setstate__(self, state):
        # A pickle suits the nbgpu version that wrote it: another one loads it, warning.
        state = dict(state)
        written_by = state.pop("_nbgpu_version", None)
        if written_by != __version__:
            warnings.warn(InconsistentVersionWarning(type(self).__name__, __version__, written_by), stacklevel=2)
        inherited = getattr(super(), "__setstate__", None)
        if inherited is not None:
            inherited(state)
        else:
            self.__dict__.update(state)

    def _derive_if_lazy(self):
        """Derive the parameters of lazily fitted statistics now, if not yet."""
        state, lock = self.__dict__, lock_of(self)
        with lock.reading(), lock.deriving:
            if state.get("_derived_", False) is None:
                stats = state["_stats"]
                xp, dtype = score_space_of(stats, state["_fit_dtype_"])
                _store_derived(self, self._finalize(stats, state["classes_"], state["_hyper_"], xp=xp, dtype=dtype))

    def to_device(self, like=None, *, xp=None, device=None):
        """Move every fitted array to another namespace and/or device, in place.

        Parameters
        ----------
        like : array, optional
            Take namespace and device from this array (e.g. ``cupy.empty(0)``
            to move to the GPU, ``numpy.empty(0)`` to move back).
        xp : Array API namespace, optional
        device : device, optional

        Returns
        -------
        self : object
        """
        check_fitted(self)
        if like is not None:
            xp = get_namespace(like)
            device = like.device if device is None else device
        if xp is None:
            msg = "to_device needs `like` (an array) or `xp` (a namespace)."
            raise ValueError(msg)

        params = self._params()
        with lock_of(self).update():
            for name, value in list(vars(self).items()):
                if name not in params and name != "_fit_params_":
                    self.__dict__[name] = to_namespace_tree(value, xp, device)
            for name in self._traits.product_operands:
                if name in self.__dict__:
                    self.__dict__[name] = product_operand(self.__dict__[name], xp=xp)
        return self

    # Public methods defined, with their docstrings, in merging.py and sklearn_interchange.py.
    merge = merging.merge
    to_sklearn = sklearn_interchange.to_sklearn
    from_sklearn = classmethod(sklearn_interchange.from_sklearn)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._traits.dense_only_message is None
        tags.input_tags.allow_nan = self._ignore_missing
        tags.array_api_support = True
        return tags


# The steps of a fit and of a first read that no model overrides: functions of the model,
# not part of the protocol (the names a model defines or overrides).


def class_prior(model, class_count, params, *, xp):
    """``(prior, log_prior)`` of ``model`` under ``params`` (its ``_hyper``): the fixed prior as
    given, uniform without ``fit_prior``, else the counts smoothed by ``prior_smoothing`` λ,
    ``P(c) = (N_c + λ) / (N + Kλ)``."""
    k = class_count.shape[0]
    fixed, smoothing = getattr(params, model._traits.prior_parameter), params.prior_smoothing
    if fixed is not None:
        prior = to_namespace(fixed, xp, class_count.device)
        return prior, log_or_neg_inf(prior, xp=xp)
    if not getattr(params, "fit_prior", True):
        return xp.full_like(class_count, 1.0 / k), xp.full_like(class_count, -math.log(k))
    smoothed = class_count + smoothing
    total = xp.sum(class_count) + k * smoothing
    return smoothed / total, log_or_neg_inf(smoothed, xp=xp) - xp.log(total)



def _batch_statistics(model, X, y, classes, sample_weight, *, reset, mode):
    """``(statistics, what was validated)`` of one batch, unless ``reset`` added to the running
    statistics: ``mode`` "onto" (in place where the model can), "merged" (a new sum) or "alone"
    (the batch's own, laid out to be merged with them)."""
    if reset or not _params_unchanged(model):  # a continuing partial_fit: checked by the first call
        validate_params(model)
    # Column names are read before check_X turns a DataFrame into an array; a
    # continuing partial_fit keeps those of its first call.
    if reset:
        feature_names = feature_names_of(X)
    else:
        feature_names = model.__dict__.get("feature_names_in_")
        if "feature_names_in_" in model.__dict__ or not (is_array(X) or is_sparse(X)):
            check_feature_names(model, X, reset=False)  # an array has no names: nothing to check
    X, kind = check_X(X, estimator=model, allow_nan=model._ignore_missing, finite=False, fit=True)
    xp, device, acc = kind.xp, kind.device, kind.sums_dtype
    # On a device a NaN or infinity in X reaches the sums, whose finiteness is read back anyway:
    # X itself is looked at only when they are not finite (a pass over X and a sync fewer).
    from_sums = model._traits.sums_show_nonfinite and not model._ignore_missing and not kind.host
    n_samples, n_features = X.shape
    if not reset:
        check_n_features(model, n_features)
    # (On a device the value checks read back together: one synchronisation.)
    checks_together(_check_fit_values, model, X, finite=not from_sums)
    y = check_y(y, n_samples)
    if reset:
        classes = check_classes(classes) if classes is not None else unique_labels(y)
    else:
        if classes is not None:
            check_classes_unchanged(classes, model.classes_)
        classes = model.classes_
    n_classes = classes.shape[0]
    hyper = model._hyper(n_classes, n_features, model._check_params_for_fit(n_classes, n_features))
    loss_matrix_of(model, n_classes)
    codes = encode_labels(y, classes, xp=xp, device=device)
    weights = check_sample_weight(sample_weight, n_samples, xp=xp, device=device, dtype=acc)

    previous = None if reset else to_namespace_tree(model._stats, xp, device)
    Xt = model._model_input(X, xp)
    try:
        if previous is None or mode != "onto":
            batch = model._accumulate(Xt, codes, weights, n_classes, xp=xp, dtype=acc, previous=previous)
            stats = batch if previous is None or mode == "alone" else model._merge(previous, batch, xp=xp)
            check_statistics_finite(stats, estimator=model, X=X, sample_weight=weights)
        else:  # checks what it adds, so the running sums are not read whole per chunk
            stats = model._accumulate_onto(previous, Xt, codes, weights, n_classes, xp=xp, dtype=acc)
    except ValueError:
        if from_sums:
            check_finite(X, estimator=model)  # a NaN or infinity in X, rather than an overflow
        raise
    summed = {"classes": classes, "n_features": n_features, "feature_names": feature_names, "xp": xp, "device": device,
              "X": X, "weights": weights, "score_dtype": kind.dtype_name, "hyper": hyper, "space": (xp, kind.dtype)}
    return stats, summed


def _become_fitted_held(model, stats, classes, *, n_features, feature_names, score_dtype, lazy, hyper=None,
                        space=None):
    """:meth:`_BaseNB._become_fitted` with the model's lock held; ``space``: ``(xp, dtype)`` of the
    scores where the caller knows it (a fit: its X's kind), else found from ``stats``."""
    if hyper is None:
        hyper = model._hyper(classes.shape[0], n_features)
    attrs = None
    # (Reference path of lazy derivation, paths.py: a partial_fit derives at once, as a fit does.)
    if not (lazy and model._traits.lazy_parameters and fast("lazy_parameters")):
        xp, dtype = space or score_space_of(stats, score_dtype)
        attrs = model._finalize(stats, classes, hyper, xp=xp, dtype=dtype)
        # Sparse statistics are a wide model's: its deferred parameters wait for a read.
        if not any(map(sums.is_sparse, stats.values())):
            for name, method in model._traits.deferred_parameters.items():
                attrs[name] = getattr(model, method)(stats, attrs, dtype)
    state = model.__dict__
    for name in state.pop("_derived_", None) or ():  # parameters of earlier statistics
        state.pop(name, None)
    state.pop("feature_names_in_", None)
    if feature_names is not None:
        model.feature_names_in_ = feature_names
    model.n_features_in_ = n_features
    model.classes_ = classes
    model._stats = stats
    model._fit_dtype_ = score_dtype
    # Parameters derive from this fit's hyper-parameters (set_params changes nothing until a refit).
    model._fit_params_ = model._params()
    model._hyper_ = hyper
    model._derived_ = None  # None: nothing derived yet; else the names of what was
    if attrs is not None:
        _store_derived(model, attrs)
    return model


def _params_unchanged(model):
    """Whether the parameters are those of the last fit (the same objects)."""
    fitted = model.__dict__.get("_fit_params_")
    return fitted is not None and all(getattr(model, name) is value for name, value in fitted.items())


def _store_derived(model, attrs):
    model.__dict__.update(attrs)
    model._derived_ = (model.__dict__.get("_derived_") or ()) + tuple(attrs)


def _fitted_parameter(model, name):
    """The fitted parameter ``name`` (:class:`fitted_parameter`), derived now if it is not yet."""
    state = model.__dict__
    if "_stats" in state:
        # Row blocks scored on several threads ask at once: one derives, the others wait.
        lock = lock_of(model)
        with lock.reading(), lock.deriving:
            model._derive_if_lazy()  # a no-op if another thread derived while this one waited
            deferred = model._traits.deferred_parameters.get(name)
            if name not in state and deferred is not None and state.get("_derived_") is not None:
                dtype = score_space_of(state["_stats"], state["_fit_dtype_"])[1]
                _store_derived(model, {name: getattr(model, deferred)(state["_stats"], state, dtype)})
            if name in state:
                return state[name]
    msg = f"{type(model).__name__!r} object has no attribute {name!r}"
    raise AttributeError(msg)


def _check_fit_values(model, X, *, finite):
    """The checks of a fit batch's values: finite (where ``finite``) and the model's own."""
    if finite:
        check_finite(X, estimator=model, allow_nan=model._ignore_missing)
    model._check_values(X)
