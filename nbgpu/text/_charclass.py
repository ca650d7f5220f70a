"""Code points of text: their UTF-8 offsets, character classes and lowercase.

Only the distinct code points a batch contains and that were never seen
before are classified, one Python call each, against the real ``re``
patterns and ``str.lower``; the answers go into 0x110000-entry tables that
array code reads with one gather.  Nothing is guessed from Unicode tables.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from ._array import to_numpy

__all__ = ["EXTRA_SHIFT", "WORD", "code_point_flags", "code_points", "lower_code_points", "utf8_offsets"]

WORD = 0x01  # matches re's Unicode ``\w``
EXTRA_SHIFT = 1  # flags >> EXTRA_SHIFT: the UTF-8 bytes of the character after its first
_KNOWN = 0x80

_WORD_RE = re.compile(r"(?u)\w")
_TABLE = np.zeros(0x110000, dtype=np.uint8)
# str.lower of one code point: its lowercase | that one's flags << _LOWER_FLAGS
# | _KNOWN_LOWER; _CONTEXT where str.lower gives no single code point (U+0130)
# or looks at the neighbours (the final-sigma rule of U+03A3).
_LOWER = np.zeros(0x110000, dtype=np.uint32)
_LOWER_FLAGS = 24
_CONTEXT = 1 << 30
_KNOWN_LOWER = 1 << 31
# UTF-8 length of a code point, by ``code_point >> 7`` (the length changes at
# 0x80, 0x800 and 0x10000, all multiples of 128).
_LENGTHS = np.repeat(np.arange(1, 5, dtype=np.uint8), np.diff([0, 0x80, 0x800, 0x10000, 0x110000]) >> 7)
_LOCK = threading.Lock()
_DEVICE_TABLES = {}  # (namespace name, table name) -> (version, device copy)
_VERSION = [0]  # counts the changes of the tables


def code_points(text, *, xp):
    """The code points of ``text``: uint16 (its UTF-16, half the work to make
    and to read) when it has none past U+FFFF, else uint32."""
    units = text.encode("utf-16-le")
    if len(units) == 2 * len(text):
        return xp.asarray(np.frombuffer(units, dtype="<u2"))
    return xp.asarray(np.frombuffer(text.encode("utf-32-le"), dtype="<u4"))


def _on_device(name, table, xp):
    """The host ``table`` in namespace ``xp`` (a device copy kept until a table changes)."""
    if isinstance(xp.empty(0), np.ndarray):
        return table
    version, copy = _DEVICE_TABLES.get((xp.__name__, name), (-1, None))
    if version != _VERSION[0]:
        copy = xp.asarray(table)
        _DEVICE_TABLES[xp.__name__, name] = (_VERSION[0], copy)
    return copy


def utf8_offsets(cps, *, xp):
    """int64 byte offset in UTF-8 of each character of the code points ``cps``, and of the end."""
    lengths = xp.astype(xp.take(_on_device("lengths", _LENGTHS, xp), cps >> 7), xp.int64)
    return xp.cumulative_sum(lengths, include_initial=True)


def _flags(ch):
    extra = len(ch.encode("utf-8", "surrogatepass")) - 1
    return extra << EXTRA_SHIFT | (WORD if _WORD_RE.match(ch) else 0)


def _lower_entry(c):
    low = chr(c).lower()
    if len(low) != 1 or c == 0x3A3:
        return _KNOWN_LOWER | _CONTEXT
    return _KNOWN_LOWER | (_flags(low) << _LOWER_FLAGS) | ord(low)


def _lookup(name, table, known, entry, code_points, xp):
    """``table`` at ``code_points``, after filling in (``entry(c)``) the code points not yet ``known``."""
    values = xp.take(_on_device(name, table, xp), code_points)
    if values.shape[0] and int(xp.min(values)) < known:
        new = np.unique(to_numpy(code_points[values < known]))
        with _LOCK:
            for c in new.tolist():
                table[c] = entry(c)
            _VERSION[0] += 1
        values = xp.take(_on_device(name, table, xp), code_points)
    return values


def code_point_flags(code_points, *, xp):
    """uint8 flags of each code point: ``WORD``, and the extra UTF-8 bytes
    (``flags >> EXTRA_SHIFT``)."""
    flags = _lookup("flags", _TABLE, _KNOWN, lambda c: _KNOWN | _flags(chr(c)), code_points, xp)
    return flags & (_KNOWN - 1)


def lower_code_points(code_points, *, xp):
    """``(lowered, is_word, extra)`` of code points as ``str.lower`` of their text gives them; None
    when one lowercases to more than one (U+0130) or by its context (U+03A3, the final sigma).

    ``code_points`` are uint32, or uint16 (UTF-16 without surrogates: a character below U+10000
    lowers to one below it too).  ``lowered`` holds the lowercase code points in its low bits
    (``astype`` to the input's dtype gives them), ``is_word`` whether each is a word character,
    ``extra`` (uint32) the UTF-8 bytes of each after its first.
    """
    values = _lookup("lower", _LOWER, _KNOWN_LOWER, _lower_entry, code_points, xp)
    if values.shape[0] and int(xp.max(values)) >= _KNOWN_LOWER | _CONTEXT:
        return None
    is_word = (values & (WORD << _LOWER_FLAGS)) != 0
    extra = (values >> (_LOWER_FLAGS + EXTRA_SHIFT)) & 3
    if code_points.dtype != xp.uint16:
        values &= (1 << _LOWER_FLAGS) - 1
    return values, is_word, extra
