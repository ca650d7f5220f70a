"""Character classes and lowercase of code points, asked of Python and cached.

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

__all__ = ["EXTRA_SHIFT", "WORD", "code_point_flags", "lower_code_points"]

WORD = 0x01  # matches re's Unicode ``\w``
EXTRA_SHIFT = 1  # flags >> EXTRA_SHIFT: the UTF-8 bytes of the character after its first
_KNOWN = 0x80

_WORD_RE = re.compile(r"(?u)\w")
_TABLE = np.zeros(0x110000, dtype=np.uint8)
_LOCK = threading.Lock()
_DEVICE_TABLES = {}  # namespace name -> (version, device copy)
_VERSION = [0]
# str.lower of one code point: its lowercase | that one's flags << _LOWER_FLAGS
# | _KNOWN_LOWER; _CONTEXT where str.lower gives no single code point (U+0130)
# or looks at the neighbours (the final-sigma rule of U+03A3).
_LOWER = []  # the table, allocated on first use
_LOWER_FLAGS = 24
_CONTEXT = 1 << 30
_KNOWN_LOWER = 1 << 31


def _flags(ch):
    flags = (len(ch.encode("utf-8", "surrogatepass")) - 1) << EXTRA_SHIFT
    if _WORD_RE.match(ch):
        flags |= WORD
    return flags


def _classify(code_points):
    with _LOCK:
        for c in code_points.tolist():
            _TABLE[c] = _KNOWN | _flags(chr(c))
        _VERSION[0] += 1


def _table(xp):
    if isinstance(xp.empty(0), np.ndarray):
        return _TABLE
    key = xp.__name__
    version, table = _DEVICE_TABLES.get(key, (-1, None))
    if version != _VERSION[0]:
        table = xp.asarray(_TABLE)
        _DEVICE_TABLES[key] = (_VERSION[0], table)
    return table


def code_point_flags(code_points, *, xp):
    """uint8 flags of each code point: ``WORD``, and the extra UTF-8 bytes
    (``flags >> EXTRA_SHIFT``)."""
    flags = xp.take(_table(xp), code_points)
    if flags.shape[0] and int(xp.min(flags)) < _KNOWN:
        new = np.unique(to_numpy(code_points[flags < _KNOWN]))
        _classify(new)
        flags = xp.take(_table(xp), code_points)
    return flags & (_KNOWN - 1)


def _lower_table():
    if not _LOWER:
        with _LOCK:
            if not _LOWER:
                _LOWER.append(np.zeros(0x110000, dtype=np.uint32))
    return _LOWER[0]


def _classify_lower(code_points):
    table = _lower_table()
    with _LOCK:
        for c in code_points.tolist():
            low = chr(c).lower()
            if len(low) != 1 or c == 0x3A3:
                table[c] = _KNOWN_LOWER | _CONTEXT
            else:
                table[c] = _KNOWN_LOWER | (_flags(low) << _LOWER_FLAGS) | ord(low)


def lower_code_points(code_points, *, xp):
    """``(lowered, is_word, extra)`` of code points as ``str.lower`` of their text gives them.

    ``code_points`` are uint32 code points, or uint16 (UTF-16 without
    surrogates: a character below U+10000 lowers to one below it too).
    ``lowered`` holds the code points of the lowercase text (one per input
    code point) in its low bits: ``astype`` to the input's dtype gives them;
    ``is_word`` whether each is a word character and ``extra`` (uint32) the
    UTF-8 bytes of each after its first.  None when a code point lowercases
    to more than one (U+0130) or by its context (U+03A3, the final sigma):
    then the text must be lowered by ``str.lower``.  Host (numpy) arrays.
    """
    table = _lower_table()
    values = xp.take(table, code_points)
    if values.shape[0] and int(xp.min(values)) < _KNOWN_LOWER:
        new = np.unique(to_numpy(code_points[values < _KNOWN_LOWER]))
        _classify_lower(new)
        values = xp.take(table, code_points)
    if values.shape[0] and int(xp.max(values)) >= _KNOWN_LOWER | _CONTEXT:
        return None
    is_word = (values & (WORD << _LOWER_FLAGS)) != 0
    extra = (values >> (_LOWER_FLAGS + EXTRA_SHIFT)) & 3
    if code_points.dtype != xp.uint16:
        values &= (1 << _LOWER_FLAGS) - 1
    return values, is_word, extra
