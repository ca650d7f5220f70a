"""Scoring: a model's ``_joint_log_likelihood`` mapped over row blocks, every ``predict*`` from it.

The public functions here, and those a model overrides, are the methods of every model
(``_BaseNB`` names them); the others are steps of them, called with the model."""

from __future__ import annotations

import contextlib
import functools
import warnings

import numpy as np

from .._array import blocks
from .._array.blocks import map_row_blocks
from .._array.namespace import get_namespace, is_array, to_namespace, to_numpy
from .._array.numerics import best_scores_finite, float_warnings_off, log_posterior
from .._array.sparse import row_slicer
from .._array.threads import n_threads
from .._validation import check_finite, check_loss_matrix, check_n_features, check_X, checks_together
from .adapters import adapter_for, computed
from .base_measure import log_base_measure
from .feature_names import check_feature_names
from .model_lock import lock_of


def blockwise_collections(method):
    """Let ``method(X)`` map lazily over the blocks of a collection ``X`` (a Dask array)."""

    @functools.wraps(method)
    def wrapper(self, X):
        if (adapter := adapter_for(X)) is not None:
            return adapter.map(self, X, method.__name__)
        return method(self, X)

    return wrapper


class NotFittedError(ValueError, AttributeError):
    """A model used before it was fitted (the public estimators raise scikit-learn's)."""


def check_fitted(model):
    """Raise the model's NotFittedError unless it is fitted."""
    if not hasattr(model, "_stats"):
        msg = (
            f"This {type(model).__name__} instance is not fitted yet. Call 'fit' "
            "with appropriate arguments before using this estimator."
        )
        raise model._NotFittedError(msg)


def loss_matrix_of(model, n_classes):
    """The validated ``loss_matrix`` of ``model`` (float64 numpy, k × k) or None."""
    return check_loss_matrix(getattr(model, "loss_matrix", None), n_classes)

def _validated_for_scoring(self, X):
    """``(X, kind)`` checked for scoring, but for the passes over its values."""
    check_fitted(self)
    check_feature_names(self, X, reset=False)  # before X becomes an array
    X, kind = check_X(X, estimator=self, allow_nan=self._ignore_missing, finite=False)
    check_n_features(self, X.shape[1])
    return X, kind

def _check_block_values(self, X, *, finite=True):
    if finite:
        check_finite(X, estimator=self, allow_nan=self._ignore_missing)
    self._check_values(X)

def _score_blocks(self, X, *, per_block=None):
    """``(jll, xp, device)``; ``per_block(jll, xp)`` maps each row block's scores on the worker
    that made them (``predict``'s argmax then runs on all cores and concatenates less)."""
    X, kind = _validated_for_scoring(self, X)
    xp, device, dtype = kind.xp, kind.device, kind.dtype
    # Values are checked where it is cheapest: on the host per row block, on the core that
    # scores it; on a device all at once (one synchronisation).
    in_blocks = kind.host
    from_scores = self._traits.nonfinite_reaches_scores and not self._ignore_missing
    if not in_blocks:  # the checks' reductions read back together: one synchronisation
        checks_together(self._check_block_values, X, finite=not from_scores)

    def block(start, stop):
        # All rows: X itself (slicing a sparse matrix copies it).
        Xb = scored if stop - start == scored.shape[0] else rows(start, stop)
        if in_blocks:
            self._check_block_values(Xb, finite=not from_scores)
        # With from_scores, a NaN in X is reported below, as an error.
        with float_warnings_off() if from_scores else contextlib.nullcontext():
            jll = self._joint_log_likelihood(self._model_input(Xb, xp), xp=xp, device=device, dtype=dtype, **shared)
        if not from_scores:
            finite = True
        elif in_blocks:
            finite = best_scores_finite(jll, xp=xp, cheap_sync=True)
        else:  # each row's best score, all checked at once below (one launch a block)
            finite = xp.max(jll, axis=1)
        return (jll if per_block is None else per_block(jll, xp)), finite

    # One model throughout, however many threads update it (model_lock.py).
    with lock_of(self).reading():
        # Lazy parameters are derived here, on all cores, not on one row block's worker thread.
        scored, shared = self._ready_to_score(X, xp=xp, dtype=dtype)
        rows = row_slicer(scored, host=kind.host)
        stored = -(-X.nnz // max(X.shape[0], 1)) if kind.sparse else None
        row_bytes = self._score_row_bytes(X.shape[1], self.classes_.shape[0], xp=xp, stored=stored)
        budget = _even_budget(X.shape[0], row_bytes, X.nnz if kind.sparse else None)
        results = map_row_blocks(block, X.shape[0], row_bytes, xp=xp, host_budget=budget)
    flags = [finite for _, finite in results if finite is not True]
    if flags and not bool(xp.all(xp.stack(flags)) if in_blocks else xp.all(xp.isfinite(xp.concat(flags)))):  # one sync
        check_finite(X, estimator=self)  # raises on a NaN or infinity in X
        msg = (
            f"{type(self).__name__}: the joint log-likelihood is not finite for some "
            f"samples (values of X too large for {X.dtype})."
        )
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    parts = [part for part, _ in results]
    jll = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
    return jll, xp, device

def _even_budget(n_rows, row_bytes, nnz=None):
    """A host row-block budget that cuts ``n_rows`` into blocks of one size, as many as
    ``HOST_BLOCK_BYTES`` asks for (at least two for a sparse X of ``nnz`` >= ``PARALLEL_NNZ``
    stored values: its product runs on one thread) rounded up to a multiple of the threads, so
    the threads end together; None: one block.

    ComplementNB's scoring of Debian's 12,688 test rows (1-2grams, 58 classes) was cut into
    9,039 and 3,649 rows, one core idle for most of it: in two blocks of 6,344, 2.5 s against
    3.9 s by the clock (0.64 against 0.82 s CPU); pydoc-en's 7,072 rows (32 classes) were one
    block: in two, 1.8 s against 2.1 s (0.45 against 0.44 s CPU) (medians of 6, paired, load 7)."""
    needed = -(-n_rows * row_bytes // blocks.HOST_BLOCK_BYTES)
    if nnz is not None and nnz >= blocks.PARALLEL_NNZ:
        needed = max(needed, 2)
    if needed <= 1 or n_rows < 2:
        return None
    count = -(-needed // n_threads()) * n_threads()
    return -(-n_rows // count) * row_bytes

def _ready_to_score(self, X, *, xp, dtype):
    """Derive what scoring validated ``X`` needs, if the model is lazy and has not yet; ``(X, shared)``:
    ``X`` as its row blocks are cut from it, and what every block's ``_joint_log_likelihood`` is given
    besides (keyword arguments), made once for all of them."""
    self._derive_if_lazy()
    return X, {}

def _fitted_arrays(self, names, *, xp, device, dtype):
    """Fitted arrays as ``dtype`` on the scoring namespace and device."""
    arrays = (to_namespace(getattr(self, name), xp, device) for name in names)
    return [a if a.dtype == dtype else xp.astype(a, dtype) for a in arrays]

def scores_and_joint(self, X):
    """``(scores posteriors come from, joint log-likelihood)`` of ``X``: one array, unless the model's
    density has a class-independent factor ``h(x)`` (trait ``has_base_measure``, ``base_measure.py``)."""
    jll = _score_blocks(self, X)[0]
    if not self._traits.has_base_measure:
        return jll, jll
    # Posteriors come from the scores without log h(x): a large class-independent
    # term added first would cost float32 precision.
    X, kind = _validated_for_scoring(self, X)  # _score_blocks checked the values
    return jll, jll + log_base_measure(self, self._model_input(X, kind.xp), xp=kind.xp, device=kind.device,
                                       dtype=jll.dtype)

@blockwise_collections
def predict_joint_log_proba(self, X):
    """Joint log-probability ``log P(x, c)`` of every sample and class.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    jll : array of shape (n_samples, n_classes)
        In the namespace and on the device of ``X``; columns follow
        ``classes_``.
    """
    return scores_and_joint(self, X)[1]

@blockwise_collections
def predict_log_proba(self, X):
    """Log of the posterior probability of every class.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    log_proba : array of shape (n_samples, n_classes)
    """
    jll, xp, _ = _score_blocks(self, X)
    return log_posterior(jll, xp=xp)

@blockwise_collections
def predict_proba(self, X):
    """Posterior probability of every class.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    proba : array of shape (n_samples, n_classes)
        Rows sum to one; columns follow ``classes_``.
    """
    jll, xp, _ = _score_blocks(self, X)
    return xp.exp(log_posterior(jll, xp=xp))

@blockwise_collections
def predict(self, X):
    """The class of least expected loss of every sample.

    With ``loss_matrix=None`` (the 0-1 loss) that is the most probable
    class; otherwise the class ``c_i`` minimising the conditional risk
    ``R(c_i|x) = Σ_j loss_matrix[i, j] P(c_j|x)`` (see :meth:`predict_risk`).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    y : array of shape (n_samples,)
        Labels from ``classes_``: in the namespace and on the device of
        ``X`` when labels are numbers, a numpy array otherwise (strings).
    """
    if getattr(self, "loss_matrix", None) is None:
        best, xp, device = _score_blocks(self, X, per_block=lambda jll, xp: xp.argmax(jll, axis=1))
        return _labels_of(self, best, xp=xp, device=device)
    return decide(self, self.predict_proba(X))

@blockwise_collections
def predict_risk(self, X):
    """Conditional risk (expected loss) of deciding each class.

    ``risk[n, i] = Σ_j loss_matrix[i, j] P(classes_[j] | X[n])``, i.e.
    ``predict_proba(X) @ loss_matrix.T``; ``predict`` returns the class
    of least risk. With ``loss_matrix=None`` the 0-1 loss is used, so the
    risk is ``1 - predict_proba(X)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    risk : array of shape (n_samples, n_classes)
        In the namespace, device and float dtype of the scores; columns
        follow ``classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import GaussianNB
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> # Missing class 1 costs ten times more than a false alarm.
    >>> nb = GaussianNB(loss_matrix=[[0, 10], [1, 0]]).fit(X, y)
    >>> nb.predict_proba([[1.3]]).round(3)
    array([[0.832, 0.168]])
    >>> nb.predict_risk([[1.3]]).round(3)
    array([[1.68 , 0.832]])
    >>> nb.predict([[1.3]])
    array([1])
    """
    return _risk_of(self, self.predict_proba(X))

def _risk_of(self, proba):
    """``proba @ loss_matrix.T`` (the 0-1 loss when there is none) of a fitted model."""
    k = self.classes_.shape[0]
    loss = loss_matrix_of(self, k)
    if loss is None:
        loss = 1.0 - np.eye(k)
    loss = get_namespace(proba).asarray(loss, dtype=proba.dtype, device=proba.device)
    return proba @ loss.T

def decide(model, proba):
    """The labels ``predict`` gives for posteriors ``proba`` (n × k): the one decision rule."""
    xp = get_namespace(proba)
    if getattr(model, "loss_matrix", None) is None:
        index = xp.argmax(proba, axis=1)
    else:
        index = xp.argmin(_risk_of(model, proba), axis=1)
    return _labels_of(model, index, xp=xp, device=proba.device)

def _labels_of(self, index, *, xp, device):
    """``classes_[index]``, in ``xp`` when the labels are numeric."""
    classes = self.classes_
    if isinstance(classes, np.ndarray) and classes.dtype.kind not in "biuf":
        return classes[to_numpy(index)]
    return xp.take(to_namespace(classes, xp, device), index)

def score(self, X, y, sample_weight=None):
    """Mean accuracy of ``predict(X)`` against ``y``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    score : float
    """
    if (adapter := adapter_for(X)) is not None:
        return adapter.score(self, X, y, sample_weight)
    y, sample_weight = computed(y, sample_weight)
    pred = to_numpy(self.predict(X))
    y = to_numpy(y) if is_array(y) else np.asarray(y)
    # scikit-learn's accuracy_score, less its label analysis (np.unique of
    # every string label, most of a cross-validated search's scoring).
    if y.ndim != 1 or y.shape[0] != pred.shape[0]:
        msg = f"`y` must hold one label per row of X ({pred.shape[0]}); got an array of shape {y.shape}."
        raise ValueError(msg)
    if (y.dtype.kind in "biuf") != (pred.dtype.kind in "biuf"):
        msg = f"Mix of label input types (string and number): `y` holds {y.dtype} labels, the classes are {pred.dtype}."
        raise ValueError(msg)
    if is_array(sample_weight):
        sample_weight = to_numpy(sample_weight)
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return float(np.average(y == pred, weights=weights))
