"""The estimator protocol every naive Bayes model implements.

A model is three pure pieces (DESIGN.md §1), abstract methods here:
``_accumulate`` turns one batch into per-class statistics, ``_merge`` adds
two sets of statistics, and ``_finalize`` turns statistics into the fitted
attributes; ``_joint_log_likelihood`` scores a block of rows (see
``scoring.py``). ``fit`` is ``partial_fit`` from empty statistics.

:meth:`_BaseNB._become_fitted` is the one way a model becomes fitted: from
statistics, whether they come from ``fit``/``partial_fit``, ``merge``, a
Dask tree of merges, a model file, scikit-learn's attributes or a
ColumnwiseNB's parts. It finalizes before it stores anything, so a call
that raises leaves a fitted model exactly as it was.
"""

from __future__ import annotations

import abc
import contextlib
import copy
import math
import threading
from numbers import Real

import numpy as np

from .._array.namespace import (
    accumulation_dtype,
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
from .._array.sparse_counts import is_sparse_counts, with_rows
from .._validation import (
    check_classes,
    check_classes_unchanged,
    check_loss_matrix,
    check_n_features,
    check_prior,
    check_sample_weight,
    check_statistics_finite,
    check_X,
    check_y,
    encode_labels,
    unique_labels,
)
from .adapters import adapter_for, computed
from .feature_names import check_feature_names, feature_names_of
from .merging import merge_models
from .params import Interval, Options, param_names, validate_params
from .scoring import _ScoringMixin
from .sklearn_interchange import from_sklearn, to_sklearn
from .statistics_checks import check_class_count, check_keys

# What _become_fitted sets itself; everything else a fitted model has is derived.
# Held while a model derives parameters from its statistics (see __getattr__).
_DERIVING = threading.RLock()

_FIT_STATE = frozenset(
    {"classes_", "n_features_in_", "feature_names_in_", "_stats", "_fit_dtype_", "_fit_params_", "_derived_"}
)


def score_dtype_of(stats, name):
    """The float dtype, in the namespace of ``stats``, that ``name``
    ("float32" or "float64") stands for (float64 only where the device has it)."""
    like = first_array(stats)
    xp = get_namespace(like)
    if name == "float32":
        return xp.float32
    return result_dtype(xp.float64, xp, get_device(like))


class _BaseNB(_ScoringMixin, abc.ABC):
    """Base class: fitting protocol, scoring and the ``predict*`` family.

    The core of every model, free of scikit-learn (the command line and
    model files work on it without importing scikit-learn, 0.6 s a
    command); the public estimators (``nbgpu/_models/estimators.py``) are
    scikit-learn estimators made of a core class, ``ClassifierMixin`` and
    ``BaseEstimator``.

    It also owns what every model shares whatever its likelihood:
    minimum-risk decisions (``loss_matrix``, read at predict time), the
    smoothed class prior (``prior_smoothing``, :meth:`_class_prior`), the
    switch that lets NaN through validation (``missing``; the model then
    handles NaN, see ``nbgpu/_missing.py``), merging of fitted models and
    conversion to and from scikit-learn. A subclass opts in to a parameter
    by naming it in its ``__init__``; the base reads it with a default so a
    model without it keeps the plain behaviour.
    """

    # Subclasses merge these into their own constraints ({**_BaseNB._param_constraints, ...}).
    _param_constraints: dict = {
        "loss_matrix": ["array-like", None],
        "prior_smoothing": [Interval(Real, 0, None, closed="left")],
        "missing": [Options({"error", "ignore"})],
    }

    # False for a model whose scores are not joint log-likelihoods
    # (ComplementNB): it cannot be a part of a ColumnwiseNB.
    _scores_are_log_likelihoods = True

    # False for a model whose finalize can fail on the data (a singular
    # covariance, a part's zero prior): it finalizes at every fit, so the
    # failure belongs to the call that caused it.
    _lazy_parameters = True

    # Fitted arrays that scoring multiplies sparse X with: to_device lays
    # them out as the target's sparse product wants (numerics.product_operand).
    _product_operands: tuple = ()

    # Parameters too large to derive before they are needed, {name: method}:
    # ``getattr(self, method)(stats, attrs, dtype)`` makes ``name`` from the
    # statistics and the parameters derived so far (``attrs``). A fit makes
    # them at once; a model that was loaded, streamed or merged when first
    # read (see __getattr__), so one that only scores a few rows can take
    # what it needs of them without making them whole.
    _deferred_parameters: dict = {}

    # Statistics entries the model may keep as sparse arrays (see
    # ``sparse_counts.py``); a model file gives them back sparse.
    _sparse_statistics: tuple = ()

    # How check_X takes X. A model whose statistics and scores are sums and
    # products over the stored values of a sparse X (Yᵀ·X, X·W) sets
    # _acts_on_elements False: X is then used with unsorted indices and
    # duplicate entries as they come. Binarizing, squaring and one-hot
    # encoding act on elements, so by default duplicates are summed first.
    # _integer_input True keeps integer values on the host (the model's
    # kernels convert a block at a time: no float64 copy of X).
    _acts_on_elements = True
    _integer_input = False

    # ---- hooks a model implements ------------------------------------- #
    def _check_values(self, X):
        """Model-specific checks of the values of ``X`` (fit and predict)."""

    def _model_input(self, X, xp):
        """What the model's statistics and scores are computed on: ``X``
        itself by default, ``X > binarize`` for BernoulliNB, the parts'
        columns for ColumnwiseNB."""
        return X

    def _check_params_for_fit(self, n_classes, n_features):
        """Validate data-dependent parameters before any statistic is computed.

        Every parameter ``_finalize`` reads is checked here, so a call that
        defers finalizing (a ``partial_fit`` that continues) still refuses a
        bad parameter when it is made.
        """

    def _check_fixed_prior(self, fixed, n_classes, *, name):
        """Validate a fixed class prior (``priors`` / ``class_prior``) and its
        combination with ``prior_smoothing``."""
        check_prior(fixed, n_classes, name=name)
        smoothing = float(getattr(self, "prior_smoothing", 0.0))
        if not math.isfinite(smoothing):
            msg = f"`prior_smoothing` must be a finite number >= 0; got {smoothing}."
            raise ValueError(msg)
        if fixed is not None and smoothing != 0.0:
            msg = (
                f"`prior_smoothing={smoothing:g}` cannot be combined with a fixed "
                f"`{name}`: a fixed prior is not estimated from counts, so there "
                f"is nothing to smooth. Set prior_smoothing=0 or {name}=None."
            )
            raise ValueError(msg)

    def _check_statistics(self, stats, n_classes, n_features, *, feature_names=None, values=True):
        """Raise ValueError, naming the entry, unless ``stats`` can be the
        statistics of this model, with its parameters, fitted on
        ``n_classes`` classes and ``n_features`` features.

        For statistics that come from outside a fit (a model file, checked
        when it is loaded and before it is saved): nested dicts and tuples
        of host numpy arrays. ``values=False`` checks the layout only
        (entries, shapes, dtypes), so the arrays may be stand-ins whose data
        has not been read yet; ``values=True`` checks the values too (finite,
        weights >= 0). ``feature_names`` are those of ``n_features`` (for
        ColumnwiseNB parts chosen by name).

        The default checks the data-dependent parameters
        (``_check_params_for_fit``, ``loss_matrix``) and the ``class_count``
        entry every model has; a model extends it with its own entries
        (helpers in ``statistics_checks.py``).
        """
        self._check_params_for_fit(n_classes, n_features)
        self._loss_matrix(n_classes)
        check_keys(stats, ["class_count"], optional=None)
        check_class_count(stats["class_count"], n_classes, values=values)

    @property
    def _ignore_missing(self):
        """True when NaN means "missing" (``missing="ignore"``) instead of an error."""
        return getattr(self, "missing", "error") == "ignore"

    def _loss_matrix(self, n_classes):
        """The validated ``loss_matrix`` (float64 numpy, k × k) or None."""
        return check_loss_matrix(getattr(self, "loss_matrix", None), n_classes)

    def _class_prior(self, class_count, *, xp, fixed=None, name="priors", fit_prior=True):
        """``(prior, log_prior)`` of the classes, from counts or parameters.

        A fixed prior (``fixed``, the model's ``priors``/``class_prior``) is
        used as given; ``fit_prior=False`` gives the uniform prior; otherwise
        the counts are smoothed by ``prior_smoothing`` (λ):
        ``P(c) = (N_c + λ) / (N + Kλ)``, λ = 0 being the maximum-likelihood
        estimate scikit-learn uses and λ = 1 Laplace's rule of succession.
        """
        k = class_count.shape[0]
        self._check_fixed_prior(fixed, k, name=name)
        smoothing = float(getattr(self, "prior_smoothing", 0.0))
        if fixed is not None:
            prior = to_namespace(check_prior(fixed, k, name=name), xp, class_count.device)
            return prior, log_or_neg_inf(prior, xp=xp)
        if not fit_prior:
            return xp.full_like(class_count, 1.0 / k), xp.full_like(class_count, -math.log(k))
        smoothed = class_count + smoothing
        total = xp.sum(class_count) + k * smoothing
        return smoothed / total, log_or_neg_inf(smoothed, xp=xp) - xp.log(total)

    @abc.abstractmethod
    def _accumulate(self, X, codes, weights, n_classes, *, xp, dtype, previous):
        """Statistics (a dict of arrays, nested for composite models) of one
        validated batch: ``codes`` are class indices, ``weights`` sample
        weights or None, sums in ``dtype``. ``previous`` (the statistics so
        far, or None) is only for models whose layout depends on the data
        seen (CategoricalNB's number of categories)."""

    @abc.abstractmethod
    def _merge(self, a, b, *, xp):
        """The statistics of the union of two disjoint sets of rows."""

    # The keys of the statistics whose arrays (or tuples of arrays) have the
    # class axis first; the others are shared by all classes.
    _class_axis_statistics: tuple = ("class_count",)

    def _statistics_for_classes(self, stats, index, n_classes, *, xp):
        """``stats`` laid out for ``n_classes`` classes, class ``i`` of the old
        layout at ``index[i]`` (host ints) and zeros for the new classes (a
        class never seen has zero weight and zero sums)."""
        k = int(index.shape[0])
        # Row k of the padded arrays is zero: every new class takes it.
        source = np.full(n_classes, k, dtype=np.int64)
        source[index] = np.arange(k)

        def relaid(a):
            if is_sparse_counts(a):
                return with_rows(a, source)
            zero = xp.zeros((1, *a.shape[1:]), dtype=a.dtype, device=a.device)
            return xp.take(xp.concat([a, zero], axis=0), xp.asarray(source, device=a.device), axis=0)

        out = dict(stats)
        for key in self._class_axis_statistics:
            if key in out:
                value = out[key]
                out[key] = tuple(map(relaid, value)) if isinstance(value, tuple) else relaid(value)
        return out

    def _accumulate_onto(self, previous, X, codes, weights, n_classes, *, xp, dtype):
        """``previous`` statistics with a validated batch added: what a
        ``partial_fit`` that continues stores.

        ``_merge`` of a fresh ``_accumulate`` by default. A model may add into
        ``previous`` in place (its own statistics: no k × d temporary and no
        k × d copy per chunk); it is called only once every check of the
        call has passed, and refuses statistics that overflow
        (``check_statistics_finite``) before it changes anything.
        """
        batch = self._accumulate(X, codes, weights, n_classes, xp=xp, dtype=dtype, previous=previous)
        merged = self._merge(previous, batch, xp=xp)
        check_statistics_finite(merged, estimator=self, X=X, sample_weight=weights)
        return merged

    @abc.abstractmethod
    def _finalize(self, stats, classes, *, xp, dtype):
        """The fitted attributes (a dict) that ``stats`` define; parameters
        and scores in ``dtype``. May raise (e.g. a singular covariance)."""

    @abc.abstractmethod
    def _joint_log_likelihood(self, X, *, xp, device, dtype):
        """``log P(x, c)`` (n × k) of a block of validated rows (up to a
        class-independent term, see ``base_measure.py``)."""

    def _score_row_bytes(self, n_features, n_classes, *, xp, stored=None):
        """Bytes of temporaries per row while scoring (sizes the row blocks).

        ``stored``: for sparse ``X``, its mean stored values per row (None for
        dense), what the temporaries of a sparse path scale with, not the width.
        """
        return 8 * n_classes

    # ---- fitting ------------------------------------------------------ #
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
        adapter = adapter_for(X)
        if adapter is not None:
            return adapter.fit(self, X, y, sample_weight, None, reset=True)
        y, sample_weight = computed(y, sample_weight)
        return self._fit_batch(X, y, None, sample_weight, reset=True)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Update the model with one batch of samples (out-of-core learning).

        Calling it on consecutive chunks of a data set gives the same model
        as one ``fit`` on their concatenation. A batch costs what its rows
        cost (its stored values for sparse input), not the size of the
        model. A model is updated in place: as with scikit-learn, one model
        must not be updated from several threads at once (fit a model per
        thread and combine them with :meth:`merge`).

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
        adapter = adapter_for(X)
        if adapter is not None:
            return adapter.fit(self, X, y, sample_weight, classes, reset=first)
        y, sample_weight = computed(y, sample_weight)
        return self._fit_batch(X, y, classes, sample_weight, reset=first, partial=True)

    def _fit_batch(self, X, y, classes, sample_weight, *, reset, commit=True, partial=False):
        """Fit one batch; with ``commit=False`` only return its statistics.

        ``commit=False`` (a row block fitted on a Dask worker) validates and
        accumulates exactly as a fit does, then returns the statistics
        without finalizing them or changing the estimator.
        """
        if reset or not self._params_unchanged():  # a continuing partial_fit: checked by the first call
            self._check_hyper_parameters()
        # Column names are read before check_X turns a DataFrame into an array.
        feature_names = None  # a continuing partial_fit keeps those of its first call (below)
        if reset:
            feature_names = feature_names_of(X)
        elif "feature_names_in_" in self.__dict__ or not (is_array(X) or is_sparse(X)):
            check_feature_names(self, X, reset=False)  # an array has no names: nothing to check
        X, xp, device = check_X(X, estimator=self, allow_nan=self._ignore_missing)
        n_samples, n_features = X.shape
        if not reset:
            check_n_features(self, n_features, reset=False)
        self._check_values(X)
        y = check_y(y, n_samples)
        if reset:
            classes = check_classes(classes) if classes is not None else unique_labels(y)
        else:
            if classes is not None:
                check_classes_unchanged(classes, self.classes_)
            classes = self.classes_
        n_classes = classes.shape[0]
        self._check_params_for_fit(n_classes, n_features)
        self._loss_matrix(n_classes)
        codes = encode_labels(y, classes, xp=xp, device=device)
        acc = accumulation_dtype(xp, device)
        weights = check_sample_weight(sample_weight, n_samples, xp=xp, device=device, dtype=acc)
        dtype = result_dtype(X.dtype, xp, device)

        previous = None
        if not reset:
            previous = to_namespace_tree(self._stats, xp, device)
        Xt = self._model_input(X, xp)
        if previous is None or not commit:
            batch = self._accumulate(Xt, codes, weights, n_classes, xp=xp, dtype=acc, previous=previous)
            stats = batch if previous is None else self._merge(previous, batch, xp=xp)
            check_statistics_finite(stats, estimator=self, X=X, sample_weight=weights)
        else:  # checks what it adds, so the running sums are not read whole per chunk
            stats = self._accumulate_onto(previous, Xt, codes, weights, n_classes, xp=xp, dtype=acc)
        if not commit:
            return stats
        if not reset:
            feature_names = getattr(self, "feature_names_in_", None)
        score_dtype = "float32" if dtype == xp.float32 else "float64"
        # fit finalizes at once (scikit-learn's contract: predict does not
        # change a fitted model's __dict__); partial_fit only stores its
        # statistics: N chunks cost N accumulations and one finalize, at the
        # first read. Parameters were checked above either way.
        return self._become_fitted(
            stats, classes, n_features=n_features, feature_names=feature_names, score_dtype=score_dtype, lazy=partial
        )

    def _become_fitted(self, stats, classes, *, n_features, feature_names, score_dtype, lazy=False):
        """Become the fitted model that ``stats`` define; returns ``self``.

        The one way to become fitted (see the module docstring). The fitted
        arrays are in the namespace and on the device of ``stats``;
        ``score_dtype`` ("float32" or "float64") is the dtype of parameters
        and scores. Everything is computed before anything is stored.

        With ``lazy=True`` the parameters derived from the statistics
        (``feature_log_prob_``, scoring weights, ...) are computed when first
        read (:meth:`__getattr__`), once, and kept until the statistics
        change. Models whose finalize can fail on the data finalize at once
        whatever ``lazy`` says (``_lazy_parameters = False``).
        """
        attrs = None
        if not (lazy and self._lazy_parameters):
            attrs = self._derived_from(stats, classes, score_dtype, model=self)  # this fit's parameters
            # Statistics kept sparse are those of a wide model: its k × d
            # parameters are made when first needed, as a streamed model's
            # (a fit that is saved, or scores a few rows, never makes them whole).
            if not any(map(is_sparse_counts, stats.values())):
                for name, method in self._deferred_parameters.items():
                    attrs[name] = getattr(self, method)(stats, attrs, score_dtype_of(stats, score_dtype))
        state = self.__dict__
        for name in state.pop("_derived_", None) or ():  # parameters of earlier statistics
            state.pop(name, None)
        state.pop("feature_names_in_", None)
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        self.n_features_in_ = n_features
        self.classes_ = classes
        self._stats = stats
        self._fit_dtype_ = score_dtype
        # Parameters derive from the statistics and the hyper-parameters of
        # this call, whenever they are derived (scikit-learn's models fix
        # them at fit: a later set_params changes nothing until a refit).
        self._fit_params_ = self._params()
        # None marks parameters not derived yet; else the names of those derived.
        self._derived_ = None
        if attrs is not None:
            self._store_derived(attrs)
        return self

    def _derived_from(self, stats, classes, score_dtype, *, model=None):
        """The fitted parameters ``_finalize`` derives from ``stats``, in
        their namespace, with the hyper-parameters of ``model`` (by default
        those of the last fit)."""
        model = self._as_fitted() if model is None else model
        return model._finalize(stats, classes, xp=get_namespace(first_array(stats)), dtype=score_dtype_of(stats, score_dtype))

    def _as_fitted(self):
        """This model with the hyper-parameters of its last fit: ``self``
        unless ``set_params`` changed one since, else a copy that has them
        (what derives parameters reads them from it)."""
        if "_fit_params_" not in self.__dict__ or self._params_unchanged():
            return self
        model = object.__new__(type(self))
        model.__dict__.update(self.__dict__)
        model.__dict__.update(self._fit_params_)
        return model

    @classmethod
    def _get_param_names(cls):
        """The names of the parameters (of ``__init__``), sorted."""
        return param_names(cls)

    def _params(self):
        """``get_params(deep=False)``, without inspecting ``__init__`` per call."""
        return {name: getattr(self, name) for name in param_names(type(self))}

    def _unfitted(self, **params):
        """A new unfitted model of this class with these parameters, changed
        by ``params`` (scikit-learn's ``clone`` for the core: values copied)."""
        return type(self)(**{**copy.deepcopy(self._params()), **params})

    def _check_hyper_parameters(self):
        """Raise InvalidParameterError (a ValueError and a TypeError) naming
        the first parameter outside ``_param_constraints``."""
        validate_params(self)

    def _params_unchanged(self):
        """Whether the parameters are those of the last fit (the same objects)."""
        fitted = self.__dict__.get("_fit_params_")
        if fitted is None:
            return False
        return all(getattr(self, name) is value for name, value in fitted.items())

    def __getstate__(self):
        # Derived parameters are not pickled: they are made again from the
        # statistics when first read (by models that can derive them lazily).
        inherited = getattr(super(), "__getstate__", None)  # BaseEstimator's adds the version
        state = inherited() if inherited is not None else dict(self.__dict__)
        derived = state.get("_derived_")
        if derived and self._lazy_parameters:
            state = {name: value for name, value in state.items() if name not in derived}
            state["_derived_"] = None
        return state

    def _store_derived(self, attrs):
        self.__dict__.update(attrs)
        self._derived_ = (self.__dict__.get("_derived_") or ()) + tuple(attrs)

    def _derive_if_lazy(self):
        """Derive the parameters of lazily fitted statistics now, if not yet;
        whether it did."""
        state = self.__dict__
        with _DERIVING:
            if state.get("_derived_", False) is not None:
                return False
            self._store_derived(self._derived_from(state["_stats"], state["classes_"], state["_fit_dtype_"]))
            return True

    def __getattr__(self, name):
        # Only reached for a name not set on the instance: a fitted parameter
        # (scikit-learn's trailing underscore) of a model whose statistics
        # have not been finalized yet is derived now. The state a fit sets
        # itself is never derived (scikit-learn probes feature_names_in_).
        state = self.__dict__
        derivable = name.endswith("_") and not name.startswith("__") and name not in _FIT_STATE and "_stats" in state
        # Row blocks scored on several threads ask at the same moment: one
        # derives, the others wait for it and find the result (a model's
        # parameters derived twice at once cost twice the time and memory).
        with _DERIVING if derivable else contextlib.nullcontext():
            if derivable and name in state:
                return state[name]
            if derivable and self._derive_if_lazy() and name in state:
                return state[name]
            if derivable and name in self._deferred_parameters and state.get("_derived_") is not None:
                stats = state["_stats"]
                make = getattr(self._as_fitted(), self._deferred_parameters[name])
                made = make(stats, state, score_dtype_of(stats, state["_fit_dtype_"]))
                self._store_derived({name: made})
                return made
        msg = f"{type(self).__name__!r} object has no attribute {name!r}"
        raise AttributeError(msg)

    # ---- moving a fitted model ------------------------------------------ #
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
        self._check_is_fitted()
        if like is not None:
            xp = get_namespace(like)
            device = like.device if device is None else device
        if xp is None:
            msg = "to_device needs `like` (an array) or `xp` (a namespace)."
            raise ValueError(msg)

        params = self._params()
        for name, value in list(vars(self).items()):
            if name not in params and name != "_fit_params_":
                self.__dict__[name] = to_namespace_tree(value, xp, device)
        for name in self._product_operands:
            if name in self.__dict__:
                self.__dict__[name] = product_operand(self.__dict__[name], xp=xp)
        return self

    # ---- merging and exchange ------------------------------------------ #

    def merge(self, other):
        """The model fitted on the union of the data of ``self`` and ``other``.

        Both models must be of the same class, with the same parameters and
        features, fitted on disjoint data (a row seen by both would count
        twice). Their statistics are merged exactly as ``partial_fit`` merges
        batches, so ``a.merge(b)`` equals one fit on the concatenated data
        (up to floating-point rounding of the Gaussian moments). Models that
        saw different classes (data split by time or by site) merge into the
        union of their classes, a class absent from one side having zero
        statistics there; parameters with one entry per class
        (``loss_matrix``, ``class_prior``, ``priors``) must then be unset.

        Parameters
        ----------
        other : estimator
            A fitted estimator of the same class and parameters; it may live
            in another namespace or on another device.

        Returns
        -------
        merged : estimator
            A new fitted estimator in the namespace, on the device and with
            the score dtype of ``self``; neither ``self`` nor ``other`` is
            changed.

        Examples
        --------
        >>> import numpy as np
        >>> from nbgpu import MultinomialNB
        >>> X = np.array([[2, 0], [3, 1], [0, 4], [1, 3]])
        >>> y = np.array([0, 0, 1, 1])
        >>> a = MultinomialNB().fit(X[::2], y[::2])
        >>> b = MultinomialNB().fit(X[1::2], y[1::2])
        >>> a.merge(b).feature_count_
        array([[5., 1.],
               [1., 7.]])
        """
        return merge_models(self, other)

    def to_sklearn(self):
        """An equivalent fitted scikit-learn estimator (numpy, float64).

        For serving a model trained on a GPU where only scikit-learn is
        installed: its ``predict`` and ``predict_proba`` give this model's
        results on complete data. A ``prior_smoothing`` model passes its
        smoothed prior as the fitted prior. Not possible with a
        ``loss_matrix`` (scikit-learn predicts the most probable class).

        Returns
        -------
        estimator : sklearn.naive_bayes estimator
            GaussianNB, MultinomialNB, ComplementNB, BernoulliNB or
            CategoricalNB, fitted.

        Examples
        --------
        >>> import numpy as np
        >>> from nbgpu import GaussianNB
        >>> X = np.array([[0.0, 1.0], [0.5, 1.2], [3.0, 0.1], [3.3, 0.0]])
        >>> y = np.array([0, 0, 1, 1])
        >>> sk = GaussianNB().fit(X, y).to_sklearn()
        >>> type(sk).__module__, sk.predict([[3.1, 0.0]])
        ('sklearn.naive_bayes', array([1]))
        """
        return to_sklearn(self)

    @classmethod
    def from_sklearn(cls, estimator, **params):
        """An nbgpu estimator equivalent to a fitted scikit-learn one.

        The statistics are rebuilt from scikit-learn's fitted attributes, so
        the result predicts the same and can continue with ``partial_fit``.

        Parameters
        ----------
        estimator : sklearn.naive_bayes estimator
            Fitted, of the class this nbgpu class mirrors.
        **params
            nbgpu-only parameters (``loss_matrix``, ``prior_smoothing``,
            ``missing``) for the new estimator.

        Returns
        -------
        estimator : nbgpu estimator
            Fitted, with numpy float64 attributes (move it with
            :meth:`to_device`).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB
        >>> from nbgpu import BernoulliNB
        >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 1]])
        >>> sk = SkBernoulliNB().fit(X, [0, 0, 1, 1])
        >>> BernoulliNB.from_sklearn(sk).predict([[1, 0]])
        array([0])
        """
        return from_sklearn(cls, estimator, **params)

    # ---- scikit-learn integration -------------------------------------- #
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self._ignore_missing
        tags.array_api_support = True
        return tags
