"""The text package's one link to the array layer (namespaces, host copies, the CPU pool)."""

from .._backend import get_namespace, parallel_map, to_numpy  # noqa: F401  (re-exported)
