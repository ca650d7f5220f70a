"""svmlight/libsvm text parsed with numpy, as scikit-learn's ``load_svmlight_file`` reads it.

The command line's svmlight reader used ``sklearn.datasets.load_svmlight_file(zero_based=True)``,
which costs a process 1.5 s of importing scikit-learn. :func:`parse_svmlight` gives the same rows,
labels, columns (the file's own indices) and values, and refuses what it refuses, line by line:

- a line is cut at its first ``#`` (a comment) and split at ASCII whitespace; a line with no field
  is no row; the first field is the label (Python's ``float``);
- a second field that starts with ``qid`` is a query id: it needs a ``:``, and its value is not
  read (scikit-learn ignores it unless asked for query ids);
- every other field is ``index:value``: the index a non-negative integer below 2**31 (Python's
  ``int``), greater than the line's previous one; the value Python's ``float``, rounded to the
  dtype asked for.

Lines are parsed a slice of about :data:`SLICE_BYTES` at a time: the fields are found and the
numbers read as array operations (digits to integers, a decimal with at most 15 digits as
an integer divided by a power of ten, which is the correctly rounded value ``float`` gives);
numbers of another form (exponents, ``nan``, 16 digits and more) are read by ``float`` one
by one. A slice that breaks a rule, or has an index of another form, is read again by
:func:`_parse_lines`, line by line as scikit-learn does, which names the first bad line.
Memory stays a small multiple of the slice's bytes.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from .._array.host_memory import retain_freed_blocks

__all__ = ["SLICE_BYTES", "Parsed", "SvmlightLineError", "parse_svmlight"]

SLICE_BYTES = 1 << 20
MAX_INDEX = 2**31 - 1  # scikit-learn reads indices as C ints
_SIMPLE_DIGITS = 15  # a decimal of at most this many digits is an integer exact in float64, / 10**k exact
_POWERS_OF_TEN = 10.0 ** np.arange(_SIMPLE_DIGITS + 1)  # exact: 10**k < 2**53
_COMMENT = re.compile(rb"#[^\n]*")
# A query id: the second field of a line, which starts with "qid" (the first field: the label).
_QID = re.compile(rb"(?m)^([ \t\r\x0b\x0c]*[^\s]+[ \t\r\x0b\x0c]+)(qid[^\s]*)")


class SvmlightLineError(ValueError):
    """A line that is not svmlight/libsvm: ``line`` (0-based, counted in "\\n") and ``reason``."""

    def __init__(self, line, reason):
        super().__init__(f"line {line + 1}: {reason}")
        self.line, self.reason = line, reason


class Parsed(NamedTuple):
    """A block's rows: CSR arrays whose columns are the file's indices, the labels, and the line
    (0-based, in the block) each row comes from."""

    labels: np.ndarray  # float64
    data: np.ndarray  # the dtype asked for
    indices: np.ndarray  # int32
    indptr: np.ndarray  # int64
    row_lines: np.ndarray  # int64
    width: int  # the largest index + 1 (1 without any)


def parse_svmlight(data, dtype=np.float64):
    """The rows of the svmlight/libsvm bytes ``data`` as a :class:`Parsed`; a
    :class:`SvmlightLineError` naming the first line that is not valid."""
    retain_freed_blocks()  # the slices' temporaries reused, not faulted in again
    pieces, start, first_line = [], 0, 0
    while start < len(data):
        end = data.find(b"\n", start + SLICE_BYTES) + 1 or len(data)
        part = data[start:end]
        try:
            parsed = _parse_fast(part, dtype)
            if parsed is None:  # a rule broken, or a form only Python reads: line by line
                parsed = _parse_lines(part, dtype)
        except SvmlightLineError as exc:
            raise SvmlightLineError(first_line + exc.line, exc.reason) from None
        pieces.append(parsed._replace(row_lines=parsed.row_lines + first_line))
        first_line += part.count(b"\n")
        start = end
    if not pieces:
        pieces.append(_parse_lines(b"", dtype))
    offsets = np.cumsum([0] + [p.indptr[-1] for p in pieces[:-1]])
    return Parsed(
        labels=np.concatenate([p.labels for p in pieces]),
        data=np.concatenate([p.data for p in pieces]),
        indices=np.concatenate([p.indices for p in pieces]),
        indptr=np.concatenate([pieces[0].indptr[:1]] + [p.indptr[1:] + o for p, o in zip(pieces, offsets)]),
        row_lines=np.concatenate([p.row_lines for p in pieces]),
        width=max(p.width for p in pieces),
    )


def _parsed(labels, data, indices, indptr, row_lines, dtype):
    indices = np.asarray(indices, dtype=np.int32)
    with np.errstate(over="ignore"):  # beyond float32: infinite, as scikit-learn stores it (the reader refuses it)
        data = np.asarray(data, dtype=np.float64).astype(dtype)
    width = int(indices.max()) + 1 if indices.size else 1
    return Parsed(np.asarray(labels, dtype=np.float64), data, indices, np.asarray(indptr, dtype=np.int64),
                  np.asarray(row_lines, dtype=np.int64), width)


def _parse_lines(part, dtype):
    """scikit-learn's reader in Python, line by line: the reference, and the path that names errors."""
    labels, indptr, indices, values, row_lines = [], [0], [], [], []
    for number, line in enumerate(part.split(b"\n")):
        # scikit-learn looks for "#" in the line as a C string: up to a NUL byte
        nul = line.find(b"\0")
        comment = line.find(b"#", 0, len(line) if nul < 0 else nul)
        fields = (line if comment < 0 else line[:comment]).split()
        if not fields:
            continue
        try:
            labels.append(float(fields[0]))
        except ValueError as exc:
            raise SvmlightLineError(number, f"{exc}, the label") from None
        features = fields[1:]
        if features and features[0].startswith(b"qid"):
            if b":" not in features[0]:
                raise SvmlightLineError(number, f"{_shown(features[0])} is not qid:value")
            features = features[1:]
        previous = -1
        for field in features:
            index, colon, value = field.partition(b":")
            if not colon:
                raise SvmlightLineError(number, f"{_shown(field)} is not index:value")
            index = _index(index, number)
            if index <= previous:
                raise SvmlightLineError(number, f"Feature indices must be sorted and unique: {index} after {previous}")
            try:
                values.append(float(value))
            except ValueError as exc:
                raise SvmlightLineError(number, str(exc)) from None
            indices.append(index)
            previous = index
        indptr.append(len(indices))
        row_lines.append(number)
    return _parsed(labels, values, indices, indptr, row_lines, dtype)


def _index(text, number):
    """The feature index ``text`` as scikit-learn reads it (Python's ``int`` into a C int)."""
    if text.isdigit() and len(text.lstrip(b"0")) > 10:  # refused before ``int`` reads thousands of digits
        raise SvmlightLineError(number, f"a feature index is larger than {MAX_INDEX}")
    try:
        index = int(text)
    except ValueError as exc:
        raise SvmlightLineError(number, f"{exc}, a feature index") from None
    if index > MAX_INDEX:
        raise SvmlightLineError(number, f"a feature index is larger than {MAX_INDEX}")
    if index < 0:
        raise SvmlightLineError(number, f"Invalid index {index}: indices are 0 or more")
    return index


def _shown(field, limit=40):
    """A field as messages show it: its bytes' repr, cut beyond ``limit`` bytes."""
    return repr(field[:limit]) + ("..." if len(field) > limit else "")


def _parse_fast(part, dtype):
    """:func:`_parse_lines`'s result by array operations; None where a line needs that function
    (a rule broken, which it names, or an index not of plain digits)."""
    if b"#" in part:
        part = _COMMENT.sub(b"", part)
    if b"qid" in part:
        kept = []
        part = _QID.sub(lambda m: kept.append(b":" in m[2]) or m[1], part)
        if not all(kept):
            return None
    a = np.frombuffer(part, dtype=np.uint8)
    n = a.size
    low = a[a < ord(" ")]
    if np.any((low < ord("\t")) | (low > ord("\r"))):  # control bytes, no whitespace to bytes.split: line by line
        return None
    # fields: runs of bytes that are neither whitespace (no byte below 32 is left but \t to \r) nor ":"
    colon = np.zeros(n + 2, dtype=bool)
    colon[1:-1] = a == ord(":")
    field = np.zeros(n + 2, dtype=bool)
    field[1:-1] = (a > ord(" ")) & ~colon[1:-1]
    edges = np.flatnonzero(field[1:] != field[:-1])
    starts, ends = edges[0::2], edges[1::2]  # in a; in the padded arrays, each + 1
    # every ":" between two field bytes, and a field is an index (before a ":"), a value (after one) or a label
    at = np.flatnonzero(colon)
    if at.size and not (field[at - 1].all() and field[at + 1].all()):
        return None
    before, after = colon[ends + 1], colon[starts]
    # a line's first field: the first field after a line end (and the very first)
    newlines = np.flatnonzero(a == ord("\n"))
    first = np.zeros(starts.size, dtype=bool)
    first[:1] = True
    after_newline = np.searchsorted(starts, newlines)
    first[after_newline[after_newline < starts.size]] = True
    if np.any(before & after) or np.any(first & (before | after)) or np.any(~first & ~before & ~after):
        return None
    numbers = _numbers(part, a, starts, ends, before)
    if numbers is None:
        return None
    indices = numbers[1][before]
    row = np.cumsum(first) - 1
    row_of_index = row[before]
    if np.any((row_of_index[1:] == row_of_index[:-1]) & (indices[1:] <= indices[:-1])):
        return None
    n_rows = int(first.sum())
    indptr = np.concatenate(([0], np.cumsum(np.bincount(row_of_index, minlength=n_rows))))
    row_lines = np.searchsorted(newlines, starts[first])
    return _parsed(numbers[0][first], numbers[0][after], indices, indptr, row_lines, dtype)


def _numbers(part, a, starts, ends, is_index):
    """``(values, integers)`` of the fields: float64, each Python's ``float`` of its bytes, and int64,
    the integer of the index fields (``is_index``); None where an index is not 1 to 10 ASCII digits of at
    most :data:`MAX_INDEX`, or another field not a number."""
    lengths = ends - starts
    # [+-]digits[.digits] with at most 15 digits: the integer of its digits / 10**(digits after the
    # point), both exact in float64, so the one rounding is the division's: float's correctly rounded value
    simple = lengths <= _SIMPLE_DIGITS + 2
    n = starts.size
    mantissa, negative = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    n_digits, read, points, before_point = (np.zeros(n, dtype=np.int8) for _ in range(4))
    padded = np.concatenate([a, np.zeros(_SIMPLE_DIGITS + 3, dtype=np.uint8)])  # reads past the last field stay inside
    at = starts.copy()
    # the k-th byte of every field at once; a field's bytes end where it does (``inside``)
    for k in range(int(lengths[simple].max()) if simple.any() else 0):
        byte = padded[at]
        at += 1
        inside = lengths > k
        is_digit = inside & (byte - np.uint8(ord("0")) <= 9)  # the difference wraps above 9 for other bytes
        is_point = inside & (byte == ord("."))
        if k == 0:
            negative = inside & (byte == ord("-"))
            read += negative | (inside & (byte == ord("+")))
        np.multiply(mantissa, 10, out=mantissa, where=is_digit)
        np.add(mantissa, byte - np.uint8(ord("0")), out=mantissa, where=is_digit)
        np.copyto(before_point, n_digits, where=is_point)
        n_digits += is_digit
        points += is_point
        read += is_digit | is_point
    if np.any(is_index & ((n_digits != lengths) | (lengths > 10))) or np.any(mantissa[is_index] > MAX_INDEX):
        return None
    simple &= (read == lengths) & (n_digits >= 1) & (n_digits <= _SIMPLE_DIGITS) & (points <= 1)
    n_after_point = np.where(points > 0, n_digits - before_point, 0)
    value = mantissa / _POWERS_OF_TEN[np.minimum(n_after_point, _SIMPLE_DIGITS)]
    value = np.where(negative, -value, value)
    other = np.flatnonzero(~simple & ~is_index)
    if other.size:
        try:
            value[other] = [float(part[s:e]) for s, e in zip(starts[other].tolist(), ends[other].tolist())]
        except ValueError:
            return None
    return value, mantissa
