"""Exact stop-word removal on hashed tokens.

A token is a candidate when its 32-bit MurmurHash equals a stop word's; a
candidate is dropped only when its bytes also equal that stop word's bytes
(compared four bytes at a time), so a hash collision never drops a token.
"""

from __future__ import annotations

import numpy as np

from ._murmurhash import _TAIL_MASKS, ByteWords, murmurhash3_32

__all__ = ["StopWords"]


class StopWords:
    """The UTF-8 bytes and hashes of a stop-word collection, on the host.

    Items that are not strings (or cannot be encoded) can never equal a
    token and are left out.
    """

    def __init__(self, words):
        encoded = set()
        for w in words:
            if isinstance(w, str):
                try:
                    encoded.add(w.encode("utf-8"))
                except UnicodeEncodeError:
                    pass
        encoded = sorted(encoded)
        buf = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        lengths = np.array([len(w) for w in encoded], dtype=np.int64)
        starts = np.cumsum(lengths) - lengths
        hashes = murmurhash3_32(ByteWords(buf, xp=np), starts, lengths, xp=np)
        order = np.argsort(hashes, kind="stable")
        self.hashes = hashes[order]
        self.lengths = lengths[order]
        width = 4 * int((lengths.max() + 3) // 4) if len(encoded) else 0  # bytes of the longest, in blocks
        padded = b"".join(encoded[j].ljust(width, b"\0") for j in order)
        self.blocks = np.frombuffer(padded, dtype="<u4").astype(np.uint32).reshape(len(encoded), width // 4)
        _, counts = np.unique(self.hashes, return_counts=True)
        self.max_collisions = int(counts.max()) if len(counts) else 0

    def member(self, words, starts, lengths, hashes, *, xp):
        """True where the token ``(start, length)`` with ``hashes`` is a stop word."""
        found = xp.zeros(starts.shape[0], dtype=xp.bool)
        table_h = xp.asarray(self.hashes)
        table_len = xp.asarray(self.lengths)
        blocks = xp.asarray(self.blocks)
        masks = xp.asarray([*_TAIL_MASKS, 0xFFFFFFFF], dtype=xp.uint32)  # of the first 0 to 4 bytes
        lo = xp.searchsorted(table_h, hashes, side="left")
        hi = xp.searchsorted(table_h, hashes, side="right")
        cand = xp.nonzero(hi > lo)[0]
        c_start, c_len, c_lo, c_hi = (xp.take(a, cand) for a in (starts, lengths, lo, hi))
        for r in range(self.max_collisions):
            s = xp.minimum(c_lo + r, self.hashes.shape[0] - 1)
            eq = ((c_lo + r) < c_hi) & (xp.take(table_len, s) == c_len)
            for j in range(blocks.shape[1]):
                left = c_len - 4 * j  # bytes of the token from block j on, at most 4 (no clip: syncs on cupy)
                left = xp.minimum(xp.maximum(left, xp.zeros_like(left)), xp.full_like(left, 4))
                full = words.at(xp.minimum(c_start + 4 * j, words.buf.shape[0]), xp=xp)
                eq = eq & ((full & xp.take(masks, left)) == xp.take(blocks[:, j], s))
            found[cand[eq]] = True
        return found
