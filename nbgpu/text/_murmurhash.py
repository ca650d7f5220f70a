"""MurmurHash3_x86_32 (seed 0) of many byte strings at once, as array code.

The strings are slices ``buf[start:start + length]`` of one byte buffer.  The
buffer is first turned into ``words``: ``words[i]`` is the little-endian
uint32 made of ``buf[i:i + 4]`` (zero padded past the end), so the 4-byte
block ``j`` of every string is one gather, ``words[start + 4*j]``.

All arithmetic is on uint32 arrays and wraps modulo 2**32, which numpy and
cupy both do for unsigned integers; every function takes the array namespace
``xp`` as a keyword-only argument.
"""

from __future__ import annotations

__all__ = ["byte_words", "hash_to_index", "murmurhash3_32"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_TAIL_MASKS = (0x00000000, 0x000000FF, 0x0000FFFF, 0x00FFFFFF)


def _rotl(x, r):
    return (x << r) | (x >> (32 - r))


def _scramble(k):
    k = k * _C1
    k = _rotl(k, 15)
    return k * _C2


def byte_words(buf, *, xp):
    """``words[i]`` = ``buf[i] | buf[i+1] << 8 | buf[i+2] << 16 | buf[i+3] << 24``.

    ``buf`` is a uint8 array of ``n`` bytes; the result has ``n + 1`` entries
    (a string may end at ``n``: its empty tail reads ``words[n]``).
    """
    n = buf.shape[0]
    b = xp.concat([xp.astype(buf, xp.uint32), xp.zeros(4, dtype=xp.uint32)])
    return b[0 : n + 1] | (b[1 : n + 2] << 8) | (b[2 : n + 3] << 16) | (b[3 : n + 4] << 24)


def murmurhash3_32(words, starts, lengths, *, xp):
    """uint32 MurmurHash3_x86_32 (seed 0) of each ``(start, length)`` string.

    ``words`` comes from :func:`byte_words`; ``starts`` and ``lengths`` are
    int64 arrays of byte offsets and byte counts.  The body loop runs once per
    4-byte block position; strings that have run out of blocks are dropped
    from the working set whenever fewer than half are still active, so a few
    long strings cost little.
    """
    n = starts.shape[0]
    h = xp.zeros(n, dtype=xp.uint32)
    if n == 0:
        return h
    nblocks = lengths // 4
    max_blocks = int(xp.max(nblocks))
    last = words.shape[0] - 1
    order = None  # indices (into the full arrays) of the working set; None: all
    w_start, w_nb, w_h = starts, nblocks, h
    for j in range(max_blocks):
        active = w_nb > j
        n_active = int(xp.sum(xp.astype(active, xp.int64)))
        if 2 * n_active < w_nb.shape[0]:  # compact the working set
            keep = xp.nonzero(active)[0]
            if order is None:
                h = w_h
                order = keep
            else:
                h[order] = w_h
                order = xp.take(order, keep)
            w_start = xp.take(w_start, keep)
            w_nb = xp.take(w_nb, keep)
            w_h = xp.take(w_h, keep)
            active = None
        at = w_start + 4 * j
        if active is not None:  # finished strings may point past the buffer
            at = xp.minimum(at, last)
        k = _scramble(xp.take(words, at))
        hn = _rotl(w_h ^ k, 13)
        hn = hn * 5 + 0xE6546B64
        w_h = hn if active is None else xp.where(active, hn, w_h)
    if order is None:
        h = w_h
    else:
        h[order] = w_h
    # tail (0 to 3 bytes), length, finalisation
    rem = lengths - 4 * nblocks
    tail = xp.take(words, starts + 4 * nblocks) & xp.take(xp.asarray(_TAIL_MASKS, dtype=xp.uint32), rem)
    h = h ^ _scramble(tail)
    h = h ^ xp.astype(lengths, xp.uint32)
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
    Returns ``(index, negative)``: uint32 indices and a bool array, True where
    ``s < 0``.
    """
    negative = h >= 0x80000000
    magnitude = xp.where(negative, (~h) + 1, h)
    if n_features & (n_features - 1) == 0:  # a power of two: the same, without a division
        return magnitude & (n_features - 1), negative
    return magnitude % n_features, negative
