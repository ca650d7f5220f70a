"""UTF-8 bytes to code points, as array code.

The host encodes text with Python's fast ``str.encode("utf-8")``; the code
points (needed to classify characters) and the byte offset of every code
point (needed to slice n-grams out of the bytes) are then computed here.
"""

from __future__ import annotations

__all__ = ["char_lengths", "decode_at", "decode_utf8"]


def decode_utf8(buf, *, xp):
    """``(code_points, offsets)`` of valid UTF-8 ``buf`` (uint8).

    ``code_points`` is uint32 (one per character); ``offsets`` is int64 with
    one more entry: character ``i`` is ``buf[offsets[i]:offsets[i + 1]]``.
    """
    n = buf.shape[0]
    starts = xp.nonzero((buf & 0xC0) != 0x80)[0]
    offsets = xp.concat([xp.astype(starts, xp.int64), xp.asarray([n], dtype=xp.int64)])
    return decode_at(buf, starts, xp=xp), offsets


def char_lengths(lead, *, xp):
    """Bytes of the UTF-8 characters whose first bytes are ``lead`` (uint8)."""
    return 1 + xp.astype(lead >= 0xC0, xp.int64) + xp.astype(lead >= 0xE0, xp.int64) + xp.astype(lead >= 0xF0, xp.int64)


def decode_at(buf, starts, *, xp):
    """uint32 code points of the characters starting at byte positions ``starts``."""
    cp = xp.astype(xp.take(buf, starts), xp.uint32)
    multi = xp.nonzero(cp >= 0xC0)[0]  # the leading bytes of multi-byte characters
    if multi.shape[0] == 0:
        return cp
    at = xp.take(starts, multi)
    b = xp.concat([xp.astype(buf, xp.uint32), xp.zeros(3, dtype=xp.uint32)])
    b0 = xp.take(cp, multi)
    b1 = xp.take(b, at + 1) & 0x3F
    b2 = xp.take(b, at + 2) & 0x3F
    b3 = xp.take(b, at + 3) & 0x3F
    cp[multi] = xp.where(
        b0 < 0xE0,
        ((b0 & 0x1F) << 6) | b1,
        xp.where(b0 < 0xF0, ((b0 & 0x0F) << 12) | (b1 << 6) | b2, ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3),
    )
    return cp
