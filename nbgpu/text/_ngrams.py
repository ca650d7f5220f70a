"""Token boundaries and n-gram spans, as array code on code-point arrays.

Every function returns the strings to hash as spans of one byte buffer,
``(byte_start, byte_length, doc)`` int64 arrays, where ``doc`` is the row of
the string in the output.  ``offsets`` maps code-point positions to byte
positions (``None`` when every character is one byte).
"""

from __future__ import annotations

__all__ = [
    "char_spans",
    "char_to_byte_spans",
    "join_spans",
    "runs",
    "word_ngram_spans",
]


def runs(mask, *, xp):
    """``(starts, ends)`` of the maximal runs of True in a bool array."""
    false = xp.zeros(1, dtype=xp.bool)
    padded = xp.concat([false, mask, false])
    change = xp.nonzero(padded[1:] != padded[:-1])[0]
    return change[0::2], change[1::2]


def char_to_byte_spans(starts, ends, offsets, *, xp):
    """``(byte_start, byte_length)`` of the character ranges ``[starts, ends)``.

    ``ends`` may be ``starts + k`` given as the Python int ``k``; with
    ``offsets`` None the length is then the int ``k`` too.
    """
    if isinstance(ends, int):
        if offsets is None:
            return starts, ends
        ends = starts + ends
    if offsets is None:
        return starts, ends - starts
    b0 = xp.take(offsets, starts)
    return b0, xp.take(offsets, ends) - b0


def _segment_ids(seg_starts, n, *, xp):
    """Segment number of each of ``n`` positions covered by back-to-back segments."""
    marks = xp.zeros(n, dtype=xp.int64)
    marks[seg_starts] = 1
    return xp.cumulative_sum(marks) - 1


def char_spans(seg_starts, seg_ends, seg_rows, n, ngram_range, offsets, *, xp, whole=None):
    """Character n-grams inside back-to-back segments covering ``n`` positions.

    Each non-empty segment ``[seg_starts[i], seg_ends[i])`` belongs to row
    ``seg_rows[i]``.  With ``whole=None`` (analyzer ``"char"``) every window
    of ``n`` characters, ``n`` in ``ngram_range``, that fits in its segment is
    returned.  With ``whole=True`` (``"char_wb"``, segments are padded words)
    a window of ``n`` is taken only when ``n`` is smaller than the segment,
    and a segment no longer than the largest ``n`` is also returned once, whole.
    """
    min_n, max_n = ngram_range
    seg = _segment_ids(seg_starts, n, xp=xp)
    pos = xp.arange(n, dtype=xp.int64)
    room = xp.take(seg_ends, seg) - pos
    rows = xp.take(seg_rows, seg)
    if whole:
        size = xp.take(seg_ends - seg_starts, seg)
    out = []
    for k in range(min_n, max_n + 1):
        ok = room >= k
        if whole:
            ok = ok & (size > k)
        p = xp.nonzero(ok)[0]
        if p.shape[0] == 0:
            continue
        start, length = char_to_byte_spans(p, k, offsets, xp=xp)
        out.append((start, length, xp.take(rows, p)))
    if whole:
        size = seg_ends - seg_starts
        small = xp.nonzero((size <= max_n) & (size > 0))[0]  # an empty segment holds nothing
        if small.shape[0]:
            s, e = xp.take(seg_starts, small), xp.take(seg_ends, small)
            start, length = char_to_byte_spans(s, e, offsets, xp=xp)
            out.append((start, length, xp.take(seg_rows, small)))
    return out


def join_spans(buf, starts, lengths, *, xp):
    """A new byte buffer holding the spans in order, each followed by one space.

    Returns ``(new_buf, new_starts)``: span ``i`` is now at ``new_starts[i]``.
    """
    m = starts.shape[0]
    new_starts = xp.cumulative_sum(lengths + 1) - (lengths + 1)
    total = int(xp.sum(lengths))
    out = xp.full(total + m, 32, dtype=xp.uint8)
    if total == 0:
        return out, new_starts
    packed = xp.cumulative_sum(lengths) - lengths  # start of span i without the spaces
    nonempty = xp.nonzero(lengths > 0)[0]
    span = _segment_ids(xp.take(packed, nonempty), total, xp=xp)
    span = xp.take(nonempty, span)
    within = xp.arange(total, dtype=xp.int64) - xp.take(packed, span)
    out[xp.take(new_starts, span) + within] = xp.take(buf, xp.take(starts, span) + within)
    return out, new_starts


def word_ngram_spans(starts, lengths, rows, ngram_range, *, xp):
    """Word n-grams (``n >= 2`` in ``ngram_range``) of tokens laid out by :func:`join_spans`.

    Tokens are in document order; an n-gram is ``n`` consecutive tokens of
    one row, joined by single spaces.
    """
    min_n, max_n = ngram_range
    m = starts.shape[0]
    out = []
    for k in range(max(min_n, 2), max_n + 1):
        if k > m:
            break
        first, last = rows[: m - k + 1], rows[k - 1 :]
        i = xp.nonzero(first == last)[0]
        if i.shape[0] == 0:
            continue
        j = i + (k - 1)
        s = xp.take(starts, i)
        out.append((s, xp.take(starts, j) + xp.take(lengths, j) - s, xp.take(rows, i)))
    return out
