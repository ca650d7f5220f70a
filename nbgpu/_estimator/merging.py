"""``merge``: two fitted models' statistics merged by their own ``_merge``, finalized once."""

from __future__ import annotations

import numpy as np

from .._array.namespace import first_array, get_device, get_namespace, is_array, to_namespace, to_namespace_tree, to_numpy
from .scoring import check_fitted
from .params import unfitted


def host_value(value):
    """Parameter values (arrays of any namespace) as numpy."""
    return to_numpy(value) if is_array(value) else value


def _same_param(a, b):
    if hasattr(a, "get_params") or hasattr(b, "get_params"):  # nested parts (estimators)
        if type(a) is not type(b):
            return False
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return all(_same_param(pa[k], pb[k]) for k in pa)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_param(u, v) for u, v in zip(a, b))
    if is_array(a) or is_array(b) or isinstance(a, (list, tuple, np.ndarray)):
        a, b = np.asarray(host_value(a)), np.asarray(host_value(b))
        return a.shape == b.shape and bool(np.all(a == b))
    return a == b


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
    check_fitted(self)
    if type(other) is not type(self):
        msg = f"`other` must be a {type(self).__name__} to merge with one; got {type(other).__name__}."
        raise TypeError(msg)
    check_fitted(other)
    pa, pb = self._params(), other._params()
    differ = [f"{k}={pa[k]!r} vs {pb[k]!r}" for k in pa if not _same_param(pa[k], pb[k])]
    if differ:
        msg = f"`other` must have the same parameters to merge; they differ in {', '.join(differ)}."
        raise ValueError(msg)
    if self.n_features_in_ != other.n_features_in_:
        msg = f"`other` was fitted on {other.n_features_in_} features, this model on {self.n_features_in_}; they must match."
        raise ValueError(msg)
    na, nb = getattr(self, "feature_names_in_", None), getattr(other, "feature_names_in_", None)
    if (na is None) != (nb is None) or (na is not None and not np.array_equal(na, nb)):
        msg = "`other` was fitted with different feature names than this model; they must match."
        raise ValueError(msg)
    like = first_array(self._stats)
    xp, device = get_namespace(like), get_device(like)
    stats_a, stats_b = to_namespace_tree(self._stats, xp, device), to_namespace_tree(other._stats, xp, device)
    classes = self.classes_
    ca, cb = to_numpy(self.classes_), to_numpy(other.classes_)
    if ca.shape != cb.shape or not np.all(ca == cb):
        if ca.dtype.kind != cb.dtype.kind and not (ca.dtype.kind in "iub" and cb.dtype.kind in "iub"):
            msg = f"`other` has labels of dtype {cb.dtype} but this model has {ca.dtype}; they cannot be merged."
            raise ValueError(msg)
        # Parameters with one entry per class are fixed for each model's own classes.
        fixed = sorted(
            name
            for name, value in (self.get_params(deep=True) if hasattr(self, "get_params") else self._params()).items()
            if name.rpartition("__")[2] in ("loss_matrix", "class_prior", "priors") and value is not None
        )
        if fixed:
            msg = (
                f"`other` has classes {cb.tolist()[:20]} but this model has {ca.tolist()[:20]}, and "
                f"{', '.join(fixed)} has one entry per class of each: merging models of different "
                "classes needs them unset (set them on the merged model)."
            )
            raise ValueError(msg)
        union = np.union1d(ca, cb)
        stats_a = self._statistics_for_classes(stats_a, np.searchsorted(union, ca), union.shape[0], xp=xp)
        stats_b = self._statistics_for_classes(stats_b, np.searchsorted(union, cb), union.shape[0], xp=xp)
        classes = union if isinstance(classes, np.ndarray) else to_namespace(union, get_namespace(classes), get_device(classes))
    stats = self._merge(stats_a, stats_b, xp=xp)
    return unfitted(self)._become_fitted(
        stats, classes, n_features=self.n_features_in_, feature_names=na, score_dtype=self._fit_dtype_, lazy=True
    )
