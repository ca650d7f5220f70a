"""The word tokens of a chunk of documents: spans of its UTF-8 bytes, and rows.

A token is a maximal run of word characters (``re``'s ``\\w``) of at least
``plan.min_token_chars`` characters, as scikit-learn's token patterns
``\\b\\w\\w+\\b`` and ``\\b\\w+\\b`` find them.  The documents are joined by
spaces (no word character, so no token crosses one, and no context of
``str.lower``) and their tokens found, by the share of characters that are not ASCII:

- mostly ASCII: on the UTF-8 bytes, ASCII ones classified by arithmetic and each
  character that is not ASCII at its lead byte; only the documents that are not
  ASCII are lowercased by ``str.lower``, the rest by arithmetic on the bytes
  (``str.lower`` of a character that is not ASCII never gives an ASCII capital);
- mostly not ASCII: on the code points (UTF-16 code units when the text has
  nothing past U+FFFF, else UTF-32), lowercased and classified with one gather
  from a cached table; character spans become byte spans by counting the extra
  bytes of UTF-8.
"""

from __future__ import annotations

import numpy as np

from ._charclass import EXTRA_SHIFT, WORD, code_point_flags, code_points, lower_code_points
from ._ngrams import runs
from ._preprocess import decoded, prepared

__all__ = ["word_tokens"]

# A chunk whose characters outside ASCII are at least this share is tokenized
# on its code points (the share of a sample of about _SAMPLE documents).
CODE_POINT_SHARE = 0.5
_SAMPLE = 64


def word_tokens(docs, plan, *, xp):
    """``(buf, starts, lengths, rows)``: the uint8 UTF-8 text (preprocessed as scikit-learn does), the
    int64 byte offsets and counts of its word tokens, in order, and the uint32 document of each."""
    docs = decoded(docs, plan)
    fast_lower = plan.lowercase and plan.strip_accents is None
    sample = docs[:: max(len(docs) // _SAMPLE, 1)]
    wide_chars = sum(len(d) for d in sample if not d.isascii())
    on = _on_code_points if wide_chars and wide_chars >= CODE_POINT_SHARE * sum(map(len, sample)) else _on_bytes
    buf, starts, ends, rows = on(docs, plan, fast_lower, xp)
    return buf, starts, ends - starts, rows


def _rows(starts, pieces, xp):
    """uint32 document of each token starting at ``starts`` in ``pieces`` joined by single spaces."""
    sizes = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) + 1
    first_token = xp.searchsorted(starts, xp.asarray(np.cumsum(sizes) - sizes))
    counts = xp.concat([first_token[1:], xp.asarray([starts.shape[0]], dtype=first_token.dtype)]) - first_token
    return xp.repeat(xp.arange(len(pieces), dtype=xp.uint32), counts)


# UTF-8 bytes of a character by its first byte (a token never starts inside a character)
_UTF8_SIZE = np.repeat(np.arange(1, 5, dtype=np.int64), [0xC0, 0x20, 0x10, 0x10])


def _on_bytes(docs, plan, fast_lower, xp):
    """``(buf, byte_starts, byte_ends, rows)`` of the tokens, found on the UTF-8 bytes."""
    if fast_lower:  # the ASCII documents are lowered below, on their bytes
        docs = [d if d.isascii() else d.lower() for d in docs]
    else:
        docs = prepared(docs, plan)
    encoded = [d.encode("utf-8") for d in docs]
    buf = xp.asarray(np.frombuffer(b" ".join(encoded), dtype=np.uint8))
    letters = ((buf | 0x20) - 97) < 26  # a-z and A-Z: uint8 arithmetic wraps
    if fast_lower:  # a letter's bit 0x20 makes it small
        buf = buf | (xp.astype(letters, xp.uint8) << 5)
    leads = xp.nonzero(buf >= 0xC0)[0]
    starts, ends = runs(_byte_word_mask(buf, letters, leads, xp), xp=xp)
    if plan.min_token_chars > 1:  # a token of one character: as many bytes as its lead byte says
        one_char = xp.take(_UTF8_SIZE, xp.take(buf, starts))
        keep = xp.nonzero((ends - starts) > one_char)[0]
        starts, ends = xp.take(starts, keep), xp.take(ends, keep)
    return buf, starts, ends, _rows(starts, encoded, xp)


def _byte_word_mask(buf, letters, leads, xp):
    """bool: byte ``i`` belongs to a word character (``letters``: the ASCII
    letters; ``leads``: the lead bytes of characters that are not ASCII)."""
    word = letters | ((buf - 48) < 10)
    word |= buf == 95
    if leads.shape[0]:
        n = buf.shape[0]
        b0 = xp.astype(xp.take(buf, leads), xp.uint32)
        size = 2 + xp.astype(b0 >= 0xE0, xp.uint32) + xp.astype(b0 >= 0xF0, xp.uint32)
        cps = b0 & (0x7F >> size)  # the lead byte's bits, then 6 from each byte that follows
        for k in (1, 2, 3):
            more = xp.astype(xp.take(buf, xp.minimum(leads + k, n - 1)), xp.uint32) & 0x3F
            cps = xp.where(size > k, (cps << 6) | more, cps)
        flag = (code_point_flags(cps, xp=xp) & WORD) != 0
        word[leads] = flag
        word[leads + 1] = flag
        for k in (2, 3):
            longer = xp.nonzero(size > k)[0]
            word[xp.take(leads, longer) + k] = xp.take(flag, longer)
    return word


def _on_code_points(docs, plan, fast_lower, xp):
    """``(buf, byte_starts, byte_ends, rows)`` of the tokens, found on the code points."""
    lowered = None
    if fast_lower:
        text = " ".join(docs)
        cps = code_points(text, xp=xp)
        lowered = lower_code_points(cps, xp=xp)  # a character below U+10000 lowers to one
        if lowered is not None:
            low, word, extra = lowered
            raw = np.asarray(xp.astype(low, cps.dtype))
            text = str(memoryview(raw), "utf-16-le" if raw.dtype == np.uint16 else "utf-32-le")
    if lowered is None:
        docs = prepared(docs, plan)
        text = " ".join(docs)
        flags = code_point_flags(code_points(text, xp=xp), xp=xp)
        word = (flags & WORD) != 0
        extra = xp.astype(flags >> EXTRA_SHIFT, xp.uint32)
    buf = xp.asarray(np.frombuffer(text.encode("utf-8"), dtype=np.uint8))
    if plan.min_token_chars == 2:  # runs of pairs of word characters: the tokens less their last
        starts, ends = runs(word[1:] & word[:-1], xp=xp)
        ends = ends + 1
    else:
        starts, ends = runs(word, xp=xp)
    # byte offset of character i: i + the extra UTF-8 bytes of the characters before it
    before = xp.cumulative_sum(extra, dtype=xp.uint32)  # through character i
    byte_starts = starts + xp.astype(xp.take(before, starts) - xp.take(extra, starts), xp.int64)
    byte_ends = ends + xp.astype(xp.take(before, ends - 1), xp.int64)
    return buf, byte_starts, byte_ends, _rows(starts, docs, xp)
