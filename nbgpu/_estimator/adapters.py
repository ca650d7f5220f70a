"""Inputs that are collections of arrays (Dask arrays) and who handles them.

An adapter (``nbgpu/_interop/dask.py``) maps a model's own protocol over the blocks of a
collection; a higher layer, it registers itself here when imported. Its methods:
``accepts(X)``, ``compute(values)``, ``fit(estimator, X, y, sample_weight, classes, *, reset)``,
``map(estimator, X, method_name)``, ``score(estimator, X, y, sample_weight)`` and
``em_data(estimator, X, y, sample_weight)`` (as ``_InMemoryData`` in semi_supervised.py).
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
    """``values`` with collections among them computed (e.g. Dask labels of in-memory ``X``)."""
    return tuple(value if (adapter := adapter_for(value)) is None else adapter.compute(value) for value in values)


def refuse_collections(where, **values):
    """Raise TypeError if one of ``values`` (argument name -> value) is a Dask array: ``where``
    reads its data in memory."""
    from .._array.namespace import is_dask_array

    for name, value in values.items():
        if is_dask_array(value):
            msg = (f"{where} does not take Dask arrays (`{name}` is one): compute them first "
                   f"({name}.compute()), or fit a model on them, which takes Dask arrays.")
            raise TypeError(msg)
