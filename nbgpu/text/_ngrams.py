"""Token boundaries and the hashes of character and word n-grams, as array code."""

from __future__ import annotations

from ._murmurhash import ByteWords, extend, finish, murmurhash3_32

__all__ = ["char_ngrams", "runs", "word_ngrams"]


def runs(mask, *, xp):
    """int64 ``(starts, ends)`` of the maximal runs of True in a bool array."""
    edge = xp.zeros(1, dtype=xp.bool)
    padded = xp.concat([edge, mask, edge])
    change = xp.astype(xp.nonzero(padded[1:] != padded[:-1])[0], xp.int64, copy=False)
    return change[0::2], change[1::2]


def _byte_spans(starts, lengths, offsets, *, xp):
    """``(byte_start, byte_length)`` of the characters ``[starts, starts + lengths)``
    (``lengths`` may be one int, and stays one when ``offsets`` is None)."""
    if offsets is None:
        return starts, lengths
    first = xp.take(offsets, starts)
    return first, xp.take(offsets, starts + lengths) - first


def char_ngrams(encoded, seg_starts, seg_ends, seg_rows, ngram_range, *, xp, whole):
    """``[(hashes, rows)]`` of the character n-grams inside back-to-back segments covering a text
    ``encoded`` as ``(utf8, code_points, offsets)`` (offsets: None when ASCII; see ``_encoded``).

    Each non-empty segment ``[seg_starts[i], seg_ends[i])`` belongs to row
    ``seg_rows[i]``.  With ``whole=False`` (analyzer ``"char"``) every window
    of ``n`` characters, ``n`` in ``ngram_range``, that fits in its segment is
    hashed.  With ``whole=True`` (``"char_wb"``, segments are padded words)
    a window of ``n`` is taken only when ``n`` is smaller than the segment,
    and a segment no longer than the largest ``n`` is also hashed once, whole.
    """
    buf, cps, offsets = encoded
    words = ByteWords(buf, xp=xp)
    seg_rows = xp.astype(xp.asarray(seg_rows), xp.uint32)  # rows of a chunk fit; keys need no cast
    n = cps.shape[0]
    min_n, max_n = ngram_range
    marks = xp.zeros(n, dtype=xp.int64)
    marks[seg_starts] = 1
    seg = xp.cumulative_sum(marks) - 1  # the segment of each position
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
        start, length = _byte_spans(p, k, offsets, xp=xp)
        out.append((murmurhash3_32(words, start, length, xp=xp), xp.take(rows, p)))
    if whole:
        size = seg_ends - seg_starts
        small = xp.nonzero((size <= max_n) & (size > 0))[0]  # an empty segment holds nothing
        start, length = _byte_spans(xp.take(seg_starts, small), xp.take(size, small), offsets, xp=xp)
        out.append((murmurhash3_32(words, start, length, xp=xp), xp.take(seg_rows, small)))
    return out


def word_ngrams(words, h, tail, starts, lengths, rows, ngram_range, *, xp):
    """``[(hashes, rows)]`` of the word n-grams, ``n >= 2`` in ``ngram_range``.

    The tokens ``(starts, lengths)`` of ``words``' buffer are in document
    order with their ``rows`` and state ``(h, tail)`` (from
    :func:`~._murmurhash.state`); an n-gram is ``n`` consecutive tokens of
    one row joined by single spaces, and its state the state of its first
    ``n - 1`` tokens extended by its last.
    """
    min_n, max_n = ngram_range
    m = starts.shape[0]
    length = lengths
    first = None  # first token of each (n-1)-gram; None: every token
    out = []
    for n in range(2, min(max_n, m) + 1):
        if first is None:
            first = keep = xp.nonzero(rows[1:] == rows[:-1])[0]
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
