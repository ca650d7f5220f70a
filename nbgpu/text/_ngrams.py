"""Token boundaries, character n-gram spans and word n-gram hashes, as array code.

The character functions return the strings to hash as spans of one byte
buffer, ``(byte_start, byte_length, doc)`` int64 arrays, where ``doc`` is the
row of the string in the output.  ``offsets`` maps code-point positions to
byte positions (``None`` when every character is one byte).  Word n-grams
are hashed from the states of their first words (:func:`word_ngrams`).
"""

from __future__ import annotations

from ._murmurhash import extend, finish

__all__ = [
    "char_spans",
    "char_to_byte_spans",
    "runs",
    "word_ngrams",
]


def runs(mask, *, xp):
    """int64 ``(starts, ends)`` of the maximal runs of True in a bool array."""
    n = mask.shape[0]
    change = xp.astype(xp.nonzero(mask[1:] != mask[:-1])[0], xp.int64) + 1
    if n and bool(mask[0]):  # a run from the start
        change = xp.concat([xp.zeros(1, dtype=xp.int64), change])
    if n and bool(mask[n - 1]):  # a run to the end
        change = xp.concat([change, xp.full(1, n, dtype=xp.int64)])
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


def word_ngrams(words, state, starts, lengths, rows, ngram_range, *, xp):
    """``[(hashes, rows)]`` of the word n-grams, ``n >= 2`` in ``ngram_range``.

    The tokens ``(starts, lengths)`` of ``words``' buffer are in document
    order with their ``rows`` and ``state`` (``(h, tail)`` from
    :func:`~._murmurhash.state`); an n-gram is ``n`` consecutive tokens of
    one row joined by single spaces, and its state the state of its first
    ``n - 1`` tokens extended by its last.
    """
    min_n, max_n = ngram_range
    m = starts.shape[0]
    h, tail = state
    length = lengths
    first = None  # first token of each (n-1)-gram; None: every token
    out = []
    for n in range(2, max_n + 1):
        if n > m:
            break
        if first is None:
            keep = xp.nonzero(rows[1:] == rows[:-1])[0]
            first = keep
        else:
            first = first[: int(xp.searchsorted(first, m - n + 1))]  # the last token fits
            keep = xp.nonzero(xp.take(rows, first + (n - 1)) == xp.take(rows, first))[0]
            first = xp.take(first, keep)
        last = first + (n - 1)
        h, tail, length = (xp.take(a, keep) for a in (h, tail, length))
        h, tail, length = extend(words, h, tail, length, xp.take(starts, last), xp.take(lengths, last), xp=xp)
        if n >= min_n:
            out.append((finish(h, tail, length, xp=xp), xp.take(rows, first)))
    return out
