"""Host memory: have the C allocator keep freed blocks for reuse.

Host kernels that make and drop many temporary arrays of a few MiB (the text
pipeline, chunk after chunk) are slowed by the C allocator giving that memory
back to the system: glibc serves a block above its mmap threshold (128 KiB
at start) with ``mmap`` and unmaps it when freed, and returns the free memory
at the top of its heap above its trim threshold; every new array then
page-faults its memory in again (measured: 17,000 faults, half the time of a
2.8-million-character transform).  glibc raises both thresholds when a mapped
block is freed, to its size and twice its size, so freeing one large block
makes it keep the memory of smaller ones.  A threshold set in the environment
(``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``; Dask sets the first
for its workers) turns that adjustment off, and this then changes nothing.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["retain_freed_blocks"]

_BLOCK_BYTES = 16 << 20  # within glibc's cap on the threshold (32 MiB on 64-bit)


@functools.cache
def retain_freed_blocks():
    """Allocate and free one 16 MiB block, once per process.

    Under glibc, freed blocks of up to 16 MiB are then kept for reuse (and up
    to 32 MiB at the top of the heap); with another allocator it only costs
    that allocation.
    """
    np.empty(_BLOCK_BYTES, dtype=np.uint8)  # freed at once: nothing keeps it
