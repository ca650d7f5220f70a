"""The text package's one link to the array layer (namespaces, host copies, the CPU pool, host memory)."""

from .._array.host_memory import retain_freed_blocks  # noqa: F401  (re-exported)
from .._array.namespace import get_namespace, to_numpy  # noqa: F401  (re-exported)
from .._array.threads import n_threads, parallel_map  # noqa: F401  (re-exported)
