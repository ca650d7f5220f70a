"""MurmurHash3_x86_32 (seed 0) of many byte strings at once, as array code.

The strings are slices ``buf[start:start + length]`` of one byte buffer, read
through its :class:`ByteWords`: the little-endian uint32 made of
``buf[i:i + 4]`` (zero padded past the end), so the 4-byte block ``j`` of
every string is one read at ``start + 4*j``.

All arithmetic is on uint32 arrays and wraps modulo 2**32, which numpy and
cupy both do for unsigned integers; every function takes the array namespace
``xp`` as a keyword-only argument.
"""

from __future__ import annotations

from ._array import to_numpy

__all__ = ["ByteWords", "byte_words", "hash_to_index", "murmurhash3_32"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_TAIL_MASKS = (0x00000000, 0x000000FF, 0x0000FFFF, 0x00FFFFFF)


def _rotl(x, r):
    return (x << r) | (x >> (32 - r))


def _scramble(k):
    k = k * _C1
    k = _rotl(k, 15)
    return k * _C2


class ByteWords:
    """``buf[i] | buf[i+1] << 8 | buf[i+2] << 16 | buf[i+3] << 24`` at any ``i``.

    ``buf`` is a uint8 array of ``n`` bytes, read as zero padded; positions
    run from 0 to ``last = n`` (a string may end at ``n``: its empty tail
    reads position ``n``).  The word at every position is computed once, so
    each 4-byte block of a string is one gather.
    """

    def __init__(self, buf, *, xp):
        n = buf.shape[0]
        b = xp.concat([xp.astype(buf, xp.uint32), xp.zeros(4, dtype=xp.uint32)])
        self.last = n
        self._all = b[0 : n + 1] | (b[1 : n + 2] << 8) | (b[2 : n + 3] << 16) | (b[3 : n + 4] << 24)

    def at(self, positions, *, xp):
        """uint32 words at int64 ``positions`` (each in ``[0, last]``)."""
        return xp.take(self._all, positions)


def byte_words(buf, *, xp):
    """The :class:`ByteWords` of uint8 ``buf``."""
    return ByteWords(buf, xp=xp)


def murmurhash3_32(words, starts, lengths, *, xp):
    """uint32 MurmurHash3_x86_32 (seed 0) of each ``(start, length)`` string.

    ``words`` is the buffer's :class:`ByteWords`; ``starts`` and ``lengths`` are
    int64 arrays of byte offsets and byte counts (``lengths`` may be one
    Python int, the length of every string).  The body loop runs once per
    4-byte block position over the strings that still have a block there,
    so a few long strings cost little.
    """
    if isinstance(lengths, int):
        return _equal_lengths(words, starts, lengths, xp=xp)
    n = starts.shape[0]
    h = xp.zeros(n, dtype=xp.uint32)
    if n == 0:
        return h
    nblocks = lengths // 4
    max_blocks = int(xp.max(nblocks))
    if max_blocks:
        # In order of block count the strings still running at block j are
        # a suffix: each step works on a slice, with no masks.
        sort_key = xp.astype(nblocks, xp.uint16) if max_blocks < 2**16 else nblocks  # uint16: a radix sort
        order = xp.argsort(sort_key, stable=True)
        sorted_nb = xp.take(nblocks, order)
        firsts = to_numpy(xp.searchsorted(sorted_nb, xp.arange(max_blocks, dtype=sorted_nb.dtype), side="right"))
        sorted_start = xp.take(starts, order)
        body = xp.zeros(n, dtype=xp.uint32)
        for j, first in enumerate(firsts.tolist()):
            k = _scramble(words.at(sorted_start[first:] + 4 * j, xp=xp))
            body[first:] = _rotl(body[first:] ^ k, 13) * 5 + 0xE6546B64
        h[order] = body
    # tail (0 to 3 bytes), length, finalisation
    rem = lengths - 4 * nblocks
    tail = words.at(starts + 4 * nblocks, xp=xp) & xp.take(xp.asarray(_TAIL_MASKS, dtype=xp.uint32), rem)
    h = h ^ _scramble(tail)
    return _finish(h ^ xp.astype(lengths, xp.uint32))


def _equal_lengths(words, starts, length, *, xp):
    # Every string has ``length`` bytes: no per-string block counts, masks
    # or working sets (character n-grams of ASCII text).
    nblocks, rem = divmod(length, 4)
    h = None
    for j in range(nblocks):
        k = _scramble(words.at(starts + 4 * j, xp=xp))
        h = k if h is None else h ^ k  # the first block mixes into h = 0
        h = _rotl(h, 13) * 5 + 0xE6546B64
    if rem:
        tail = _scramble(words.at(starts + 4 * nblocks, xp=xp) & _TAIL_MASKS[rem])
        h = tail if h is None else h ^ tail
    if h is None:
        h = xp.zeros(starts.shape[0], dtype=xp.uint32)
    return _finish(h ^ length)


def _finish(h):
    h = h ^ (h >> 16)
    h = h * 0x85EBCA6B
    h = h ^ (h >> 13)
    h = h * 0xC2B2AE35
    return h ^ (h >> 16)


def hash_to_index(h, n_features, *, xp):
    """Column index and sign of each uint32 hash, as scikit-learn's FeatureHasher.

    scikit-learn reads the hash as a signed int32 ``s`` and takes
    ``abs(s) % n_features``; for ``s == -2**31`` it takes a value equal to
    ``2**31 % n_features``, which is what ``abs`` gives in uint32 here.
    Returns ``(index, negative)``: uint32 indices and uint32 ``negative``,
    1 where ``s < 0`` and 0 elsewhere.
    """
    negative = h >> 31
    magnitude = (h ^ (0 - negative)) + negative  # two's complement negation where negative
    if n_features & (n_features - 1) == 0:  # a power of two: the same, without a division
        return magnitude & (n_features - 1), negative
    return magnitude % n_features, negative
