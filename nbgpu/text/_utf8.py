"""Code points and UTF-8 byte offsets of a string, as array code.

The host turns text into arrays with Python's C codecs: ``str.encode("utf-8")``
gives the bytes that are hashed, ``str.encode("utf-32-le")`` the code points
(one uint32 per character) that are classified and cut into tokens and
n-grams.  Character positions become byte positions through the offsets
computed here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["code_points", "utf8_offsets"]

# UTF-8 length of a code point, by ``code_point >> 7`` (the length changes at
# 0x80, 0x800 and 0x10000, all multiples of 128).
_LENGTHS = np.ones(0x110000 >> 7, dtype=np.uint8)
_LENGTHS[0x80 >> 7 :] = 2
_LENGTHS[0x800 >> 7 :] = 3
_LENGTHS[0x10000 >> 7 :] = 4
_DEVICE_LENGTHS = {}  # namespace name -> device copy


def code_points(text, *, xp):
    """uint32 code points of the characters of ``text``."""
    return xp.asarray(np.frombuffer(text.encode("utf-32-le"), dtype="<u4"))


def utf8_offsets(cps, *, xp):
    """int64 byte offset of every character in the UTF-8 encoding, plus the total.

    Character ``i`` of the string with code points ``cps`` is
    ``utf8[offsets[i]:offsets[i + 1]]``.
    """
    table = _LENGTHS if isinstance(cps, np.ndarray) else _DEVICE_LENGTHS.get(xp.__name__)
    if table is None:
        table = _DEVICE_LENGTHS[xp.__name__] = xp.asarray(_LENGTHS)
    lengths = xp.astype(xp.take(table, cps >> 7), xp.int64)
    return xp.cumulative_sum(lengths, include_initial=True)
