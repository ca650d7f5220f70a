"""MurmurHash3_x86_32 (seed 0) of many byte strings at once, as array code.

The strings are slices ``buf[start:start + length]`` of one byte buffer, read
four bytes at a time through its :class:`ByteWords`.

The hash of a string is its *state* after its full blocks (``h``, and the
``tail``: its last ``length % 4`` bytes) finished with its length.  The state
of ``a + " " + b`` follows from the state of ``a`` and the bytes of ``b``
alone (:func:`extend`), so word n-grams are hashed without building their
strings.

All arithmetic is on uint32 arrays and wraps modulo 2**32.  The body of a
string is a chain, one array step per block: the blocks past the first
``ARRAY_BLOCKS`` of the few strings that long are mixed one string at a time
by scikit-learn's compiled MurmurHash3.
"""

from __future__ import annotations

import numpy as np

from ._array import to_numpy

__all__ = ["ByteWords", "extend", "finish", "hash_to_index", "murmurhash3_32", "state"]

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_TAIL_MASKS = (0x00000000, 0x000000FF, 0x0000FFFF, 0x00FFFFFF)
_SPACE = 0x20  # the byte between the words of an n-gram
# Block positions state() always runs as array steps (strings up to 1 KiB)...
ARRAY_BLOCKS = 256
# ... and past them only while this many strings still have a block there:
# a step costs microseconds however few strings it mixes, a string left to
# the compiled hash about one.
_FEW_STRINGS = 1024
# Inverses of the final mix's multipliers modulo 2**32 (see _unfinish).
_M1_INVERSE = pow(0x85EBCA6B, -1, 2**32)
_M2_INVERSE = pow(0xC2B2AE35, -1, 2**32)


def _scramble(k):
    """MurmurHash3's block scramble of uint32 ``k``, in place (``k`` is a scratch array)."""
    k *= _C1
    top = k >> 17
    k <<= 15
    k |= top
    k *= _C2
    return k


def _mix(h, k):
    """Mix the scrambled block ``k`` into ``h``, in place (``h`` may be a slice)."""
    h ^= k
    return _round(h)


def _round(h):
    top = h >> 19
    h <<= 13
    h |= top
    h *= 5
    h += 0xE6546B64
    return h


class ByteWords:
    """``buf[i] | buf[i+1] << 8 | buf[i+2] << 16 | buf[i+3] << 24`` at any ``i`` of the uint8 ``buf``.

    ``buf`` is read as zero padded, at positions 0 to ``len(buf) + 3``.  The
    words are four aligned uint32 copies of the buffer shifted by 0 to 3
    bytes, so the word at position ``p`` is element ``index(p)`` of one array
    and the next block of a string is the next element.
    """

    def __init__(self, buf, *, xp):
        n = buf.shape[0]
        self.buf = buf
        self._row = n // 4 + 2  # words per copy: every position up to n + 4 has its word
        host = np.zeros((4, self._row * 4), dtype=np.uint8)
        raw = to_numpy(buf)
        for shift in range(4):
            host[shift, : max(n - shift, 0)] = raw[shift:]
        self._all = xp.asarray(host.view("<u4").reshape(-1))

    def index(self, positions):
        """int64 index of the word at each byte position (``take`` reads it)."""
        return (positions & 3) * self._row + (positions >> 2)

    def take(self, index, *, xp, blocks=0):
        """uint32 words at ``index`` (from :meth:`index`), or ``blocks`` 4-byte blocks on."""
        return xp.take(self._all[blocks:] if blocks else self._all, index)

    def at(self, positions, *, xp):
        """uint32 words at int64 ``positions`` (each in ``[0, len(buf)]``)."""
        return self.take(self.index(positions), xp=xp)


def _tail_masks(lengths, *, xp):
    return xp.take(xp.asarray(_TAIL_MASKS, dtype=xp.uint32), lengths & 3)


def state(words, starts, lengths, *, xp, h=None):
    """``(h, tail)`` of each string ``(start, length)`` after its full blocks.

    ``h`` (uint32, updated in place when given) is the state before the
    strings' bytes (zero for a whole string); ``tail`` is the uint32 of the
    ``length % 4`` bytes past the last full block.  One array step per block
    position mixes the strings that still have a block there (sorted by block
    count, a slice); the few with blocks past the steps are finished by
    :func:`_long_bodies`.
    """
    n = starts.shape[0]
    index = words.index(starts)
    nblocks = lengths >> 2
    max_blocks = int(xp.max(nblocks)) if n else 0
    if max_blocks:
        # a stable sort of small keys is a radix sort
        key_dtype = xp.uint8 if max_blocks < 2**8 else xp.uint16 if max_blocks < 2**16 else nblocks.dtype
        order = xp.argsort(xp.astype(nblocks, key_dtype), stable=True)
        sorted_nb = xp.take(nblocks, order)
        # every block position up to ARRAY_BLOCKS; past it, those _FEW_STRINGS strings still reach
        few = int(sorted_nb[n - _FEW_STRINGS]) if n >= _FEW_STRINGS else 0
        steps = min(max_blocks, max(ARRAY_BLOCKS, few))
        firsts = to_numpy(xp.searchsorted(sorted_nb, xp.arange(steps + 1, dtype=sorted_nb.dtype), side="right"))
        at = xp.take(index, order)
        body = xp.zeros(n, dtype=xp.uint32) if h is None else xp.take(h, order)
        for j, first in enumerate(firsts[:-1].tolist()):
            _mix(body[first:], _scramble(words.take(at[first:], xp=xp, blocks=j)))
        longer = int(firsts[-1])  # strings from here on have blocks past the steps
        if longer < n:
            rest = order[longer:]
            body[longer:] = _long_bodies(
                words, xp.take(starts, rest) + 4 * steps, sorted_nb[longer:] - steps, body[longer:], xp=xp
            )
        if h is None:
            h = xp.empty(n, dtype=xp.uint32)
        h[order] = body
    elif h is None:
        h = xp.zeros(n, dtype=xp.uint32)
    tail = words.take(index + nblocks, xp=xp)
    tail &= _tail_masks(lengths, xp=xp)
    return h, tail


def _long_bodies(words, starts, nblocks, h, *, xp):
    """uint32 ``h`` of each string after mixing in ``nblocks`` blocks from ``starts``.

    scikit-learn's compiled hash of those bytes, seeded with ``h``, is that
    body ended with no tail (whose scramble is zero) and its byte count, which
    :func:`_unfinish` undoes.  Imported here: no scikit-learn until a string
    longer than 1 KiB needs it.
    """
    from sklearn.utils.murmurhash import murmurhash3_32 as hash_bytes

    buf = to_numpy(words.buf)
    out = np.empty(starts.shape[0], dtype=np.uint32)
    for i, (start, count, seed) in enumerate(zip(*(to_numpy(a).tolist() for a in (starts, nblocks, h)))):
        size = 4 * count
        hashed = hash_bytes(buf[start : start + size].tobytes(), seed=seed, positive=True)
        out[i] = _unfinish(hashed) ^ (size & 0xFFFFFFFF)
    return xp.asarray(out)


def _unfinish(value):
    """The int ``h`` whose :func:`_final_mix` is the uint32 ``value`` (each step is invertible)."""
    value ^= value >> 16
    value = (value * _M2_INVERSE) & 0xFFFFFFFF
    value ^= (value >> 13) ^ (value >> 26)
    value = (value * _M1_INVERSE) & 0xFFFFFFFF
    value ^= value >> 16
    return value


def finish(h, tail, lengths, *, xp):
    """The uint32 hashes of the strings of length ``lengths`` with state ``(h, tail)``."""
    h = h ^ _scramble(xp.asarray(tail, copy=True))
    h ^= xp.astype(lengths, xp.uint32)
    return _final_mix(h)


def _final_mix(h):
    h ^= h >> 16
    h *= 0x85EBCA6B
    h ^= h >> 13
    h *= 0xC2B2AE35
    h ^= h >> 16
    return h


def extend(words, h, tail, lengths, starts, more, *, xp):
    """``(h, tail, lengths)`` of each string followed by a space and ``buf[start:start + more]``.

    ``(h, tail)`` is the state of strings of ``lengths`` bytes (``h`` is
    updated in place).  The block after the old full blocks is the old tail,
    the space and the first bytes of the new part; the rest is read in place.
    """
    pending = lengths & 3  # bytes in the old tail
    shift = xp.astype(pending, xp.uint32) << 3  # 0 to 24: every shift below the width
    # the space, then the new part's bytes, after the pending ones (bytes shifted past 32 bits are dropped)
    joint = tail | (((words.at(starts, xp=xp) << 8) | _SPACE) << shift)
    joint_len = pending + 1 + more
    full = xp.nonzero(joint_len >= 4)[0]
    h[full] = _mix(xp.take(h, full), _scramble(xp.take(joint, full)))
    rest = more - 3 + pending
    h, tail = state(words, starts + 3 - pending, xp.maximum(rest, 0), xp=xp, h=h)
    short = xp.nonzero(joint_len < 4)[0]  # all of it is the new tail
    tail[short] = xp.take(joint, short) & _tail_masks(xp.take(joint_len, short), xp=xp)
    return h, tail, lengths + 1 + more


def murmurhash3_32(words, starts, lengths, *, xp):
    """uint32 MurmurHash3_x86_32 (seed 0) of the strings of ``words``' buffer at int64 byte offsets
    ``starts`` and byte counts ``lengths`` (or one Python int, the length of every string)."""
    if isinstance(lengths, int):
        return _equal_lengths(words, starts, lengths, xp=xp)
    h, tail = state(words, starts, lengths, xp=xp)
    return finish(h, tail, lengths, xp=xp)


def _equal_lengths(words, starts, length, *, xp):
    # no per-string block counts, masks or working sets (character n-grams of ASCII text)
    nblocks, rem = divmod(length, 4)
    index = words.index(starts)
    h = None
    for j in range(nblocks):
        k = _scramble(words.take(index, xp=xp, blocks=j))
        h = _round(k) if h is None else _mix(h, k)  # the first block mixes into h = 0
    if rem:
        tail = _scramble(words.take(index, xp=xp, blocks=nblocks) & _TAIL_MASKS[rem])
        if h is not None:
            tail ^= h
        h = tail
    if h is None:
        h = xp.zeros(starts.shape[0], dtype=xp.uint32)
    h ^= length
    return _final_mix(h)


def hash_to_index(h, n_features, *, xp):
    """uint32 ``(index, negative)`` of each uint32 hash, as scikit-learn's FeatureHasher.

    scikit-learn reads the hash as an int32 ``s`` (``negative``: 1 where ``s < 0``) and takes
    ``abs(s) % n_features``; for ``s == -2**31`` a value equal to ``2**31 % n_features``, which
    is what ``abs`` gives in uint32 here.
    """
    negative = h >> 31
    magnitude = (h ^ (0 - negative)) + negative  # two's complement negation where negative
    if n_features & (n_features - 1) == 0:  # a power of two: the same, without a division
        magnitude &= n_features - 1
        return magnitude, negative
    return magnitude % n_features, negative
