"""Character classes of code points, asked of Python's own ``re`` module and cached.

Only the distinct code points a batch contains and that were never seen
before are classified, one Python call each, against the real ``re``
patterns; the answers go into a 0x110000-entry table that array code reads
with one gather.  Nothing is guessed from Unicode tables.
"""

from __future__ import annotations

import re
import threading

import numpy as np

from ._array import to_numpy

__all__ = ["SPACE", "WORD", "code_point_flags"]

WORD = 0x01  # matches re's Unicode ``\w``
SPACE = 0x02  # matches re's Unicode ``\s`` (the same set as ``str.isspace``)
_KNOWN = 0x80

_WORD_RE = re.compile(r"(?u)\w")
_SPACE_RE = re.compile(r"(?u)\s")
_TABLE = np.zeros(0x110000, dtype=np.uint8)
_LOCK = threading.Lock()
_DEVICE_TABLES = {}  # namespace name -> (version, device copy)
_VERSION = [0]


def _classify(code_points):
    with _LOCK:
        for c in code_points.tolist():
            ch = chr(c)
            flags = _KNOWN
            if _WORD_RE.match(ch):
                flags |= WORD
            if _SPACE_RE.match(ch):
                flags |= SPACE
            _TABLE[c] = flags
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
    """uint8 flags (``WORD``, ``SPACE`` bits) of each code point."""
    flags = xp.take(_table(xp), code_points)
    unknown = flags < _KNOWN
    if bool(xp.any(unknown)):
        new = np.unique(to_numpy(code_points[unknown]))
        _classify(new)
        flags = xp.take(_table(xp), code_points)
    return flags & (_KNOWN - 1)
