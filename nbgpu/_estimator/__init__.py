"""The estimator protocol: the abstract base every model implements.

``base`` (fitting and the one way to become fitted), ``scoring`` (the
``predict*`` family from one joint log-likelihood), ``merging``,
``sklearn_interchange``, ``missing`` (NaN as missing values),
``base_measure``, ``adapters`` (where Dask hooks in) and ``docs``.
Imports only the array layer and validation.
"""
