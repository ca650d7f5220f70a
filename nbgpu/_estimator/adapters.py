"""Inputs that are collections of arrays (Dask arrays) and who handles them.

A Dask array is not an array the models compute on: it is fitted and scored
by an adapter (``nbgpu/_interop/dask.py``) that maps the model's own
protocol over its blocks. The adapter belongs to a higher layer, so it
registers itself here when imported (``nbgpu/__init__.py`` imports it) and
the estimator base asks :func:`adapter_for` instead of importing it.

An adapter has ``accepts(X) -> bool``, ``compute(values)`` (labels or
weights of in-memory ``X`` given as a collection),
``fit(estimator, X, y, sample_weight, classes, *, reset)``,
``map(estimator, X, method_name)``,
``score(estimator, X, y, sample_weight)`` and
``em_data(estimator, X, y, sample_weight)`` (the data of a SemiSupervisedNB
fit, read as ``_InMemoryData`` in ``_models/semi_supervised.py`` says).
"""

from __future__ import annotations

_ADAPTERS: list = []


def register(adapter):
    """Make ``adapter`` handle the inputs it accepts (once per adapter)."""
    if adapter not in _ADAPTERS:
        _ADAPTERS.append(adapter)
    return adapter


def adapter_for(X):
    """The adapter that handles ``X``, or None for an ordinary array."""
    for adapter in _ADAPTERS:
        if adapter.accepts(X):
            return adapter
    return None


def computed(*values):
    """``values`` with collections among them computed (e.g. the labels of
    in-memory ``X`` given as a Dask array)."""
    out = []
    for value in values:
        adapter = adapter_for(value)
        out.append(value if adapter is None else adapter.compute(value))
    return tuple(out)
