"""Documents to a hashed CSR matrix: host preparation, chunks, threads.

The host turns each chunk of documents into one string (Python's C string
methods: decode, ``lower``, accent stripping, whitespace normalisation) and
its UTF-8 bytes; everything after that (character classes, token and n-gram
spans, MurmurHash3, columns, signs, summing duplicates) is array code in the
namespace ``xp``.  Word tokens come from :mod:`._words`; word n-grams are
hashed from the hash states of their words, never built as strings.  Chunks
run on the CPU pool, so the numpy work of one chunk overlaps the string work
of another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ._array import n_threads, parallel_map, retain_freed_blocks
from ._charclass import code_points, utf8_offsets
from ._murmurhash import ByteWords, finish, hash_to_index, murmurhash3_32, state
from ._ngrams import char_spans, word_ngrams
from ._preprocess import decoded, prepared
from ._rows import cell_keys, sum_cells
from ._words import word_tokens

__all__ = ["Plan", "hash_documents"]

# The whitespace runs scikit-learn's char analyzers collapse to one space.
_WHITE_SPACES = re.compile(r"\s\s+")
# Characters per chunk for one n-gram size (char analyzers) or for word analyzers.
CHUNK_CHARS_CHAR = 1 << 18
CHUNK_CHARS_WORD = 1 << 19


@dataclass(frozen=True)
class Plan:
    """What the fast path computes (all scikit-learn parameters resolved)."""

    analyzer: str  # "word", "char" or "char_wb"
    ngram_range: tuple
    lowercase: bool
    strip_accents: object  # None, "ascii", "unicode" or a callable
    stop_words: object  # a StopWords or None
    min_token_chars: int  # 2 for r"\b\w\w+\b", 1 for r"\b\w+\b"
    n_features: int
    alternate_sign: bool
    binary: bool  # every stored value set to 1
    norm: object  # None, "l1" or "l2"
    dtype: np.dtype  # of the output values
    encoding: str
    decode_error: str
    has_bytes: bool = False  # some documents are bytes, to decode


def _encoded(text, xp):
    """``(utf8, code_points, offsets)`` of a string: its UTF-8 bytes (uint8), its code points (the
    bytes when ASCII) and the byte offset of every character and of the end (None when ASCII)."""
    raw = text.encode("utf-8")
    buf = xp.asarray(np.frombuffer(raw, dtype=np.uint8))
    if len(raw) == len(text):
        return buf, buf, None
    cps = code_points(text, xp=xp)
    return buf, cps, utf8_offsets(cps, xp=xp)


# Separators of the documents of a chunk joined in one string: control characters
# (neither word characters nor whitespace, nor cased, nor case-ignorable; NFKD starters).
_SEPARATORS = "\x00\x01\x02\x03\x04\x05\x06\x07\x08"


def _joined_text(docs, plan, pad=""):
    """``(text, separator)``: the documents joined by ``pad + separator + pad`` and preprocessed,
    separator the first of ``_SEPARATORS`` no document contains; None if all occur or accents
    are stripped by a callable.

    Preprocessing the joined text equals preprocessing each document: ``lower``
    and accent stripping act on each character alone, except the final-sigma
    rule of ``lower``, which looks across case-ignorable characters only (a
    control character is neither cased nor case-ignorable), and NFKD, which
    reorders combining marks only (a control character is a starter).
    """
    if callable(plan.strip_accents):
        return None
    for separator in _SEPARATORS:
        text = (pad + separator + pad).join(docs)
        if text.count(separator) == len(docs) - 1:
            break
    else:
        return None
    return prepared([text], plan)[0], separator


def _spans_word(docs, plan, xp):
    buf, starts, lengths, rows = word_tokens(docs, plan, xp=xp)
    words = ByteWords(buf, xp=xp)
    h, tail = state(words, starts, lengths, xp=xp)
    min_n, max_n = plan.ngram_range
    hashes = None
    if plan.stop_words is not None or min_n == 1:
        hashes = finish(h, tail, lengths, xp=xp)
    if plan.stop_words is not None:
        keep = xp.nonzero(~plan.stop_words.member(words, starts, lengths, hashes, xp=xp))[0]
        starts, lengths, rows, hashes, h, tail = (xp.take(a, keep) for a in (starts, lengths, rows, hashes, h, tail))
    out = [(hashes, rows)] if min_n == 1 else []
    if max_n >= 2:
        out += word_ngrams(words, (h, tail), starts, lengths, rows, plan.ngram_range, xp=xp)
    return out


def _spans_char(docs, plan, xp):
    docs = decoded(docs, plan)
    # Each document followed by the separator: one string prepared at once
    # (a separator is no whitespace, so collapsed runs never cross it).
    joined = _joined_text([*docs, ""], plan)
    if joined is None:
        docs = [_WHITE_SPACES.sub(" ", d) for d in prepared(docs, plan)]
        rows = [i for i, d in enumerate(docs) if d]  # segments of char_spans are not empty
        text, seg_starts, seg_ends = _end_to_end([docs[i] for i in rows], "", xp)
        buf, _, offsets = _encoded(text, xp)
        return _hash_segments(text, buf, offsets, seg_starts, seg_ends, rows, plan, xp, whole=False)
    text, separator = joined
    text = _WHITE_SPACES.sub(" ", text)
    buf, cps, offsets = _encoded(text, xp)
    # Segment i runs from after separator i - 1 through separator i (so the
    # segments cover the text back to back); its n-grams end before it.
    seg_ends = xp.astype(xp.nonzero(cps == ord(separator))[0], xp.int64)
    seg_starts = xp.concat([xp.zeros(1, dtype=xp.int64), seg_ends[:-1] + 1])
    rows = np.arange(len(docs))
    return _hash_segments(text, buf, offsets, seg_starts, seg_ends, rows, plan, xp, whole=False)


def _spans_char_wb(docs, plan, xp):
    docs = decoded(docs, plan)
    # scikit-learn collapses r"\s\s+" to " " and then splits on whitespace;
    # re's \s and str.isspace are the same set, so splitting alone is equal.
    # Documents joined by " separator " split into their words with the
    # separator as a word of its own between documents.
    joined = _joined_text(docs, plan, pad=" ")
    if joined is None:
        split = [d.split() for d in prepared(docs, plan)]
        words = [w for ws in split for w in ws]
        separator = None
    else:
        text, separator = joined
        words = text.split()
    if not words:
        return []
    text, seg_starts, seg_ends = _end_to_end(words, " ", xp)
    buf, cps, offsets = _encoded(text, xp)
    if separator is None:
        counts = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
    else:  # a separator's segment holds nothing; the next segments are the next row's
        marker = (seg_ends - seg_starts == 3) & (xp.take(cps, seg_starts + 1) == ord(separator))
        seg_ends = xp.where(marker, seg_starts, seg_ends)
        rows = xp.cumulative_sum(xp.astype(marker, xp.uint32))
    return _hash_segments(text, buf, offsets, seg_starts, seg_ends, rows, plan, xp, whole=True)


def _end_to_end(pieces, pad, xp):
    """``(text, starts, ends)`` of the strings ``pieces``, each between two ``pad``, laid end to end."""
    lens = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) + 2 * len(pad)
    starts = np.cumsum(lens) - lens
    return pad + (2 * pad).join(pieces) + pad, xp.asarray(starts), xp.asarray(starts + lens)


def _hash_segments(text, buf, offsets, seg_starts, seg_ends, seg_rows, plan, xp, *, whole):
    """``[(hashes, rows)]`` of the character n-grams of the segments of ``text`` (see ``char_spans``),
    from its UTF-8 ``buf`` and ``offsets`` (from ``_encoded``)."""
    seg_rows = xp.astype(xp.asarray(seg_rows), xp.uint32)  # rows of a chunk fit; keys need no cast
    spans = char_spans(
        seg_starts, seg_ends, seg_rows, len(text), plan.ngram_range, offsets, xp=xp, whole=whole
    )
    words = ByteWords(buf, xp=xp)
    return [(murmurhash3_32(words, s, l, xp=xp), r) for s, l, r in spans]


_SPANS = {"word": _spans_word, "char": _spans_char, "char_wb": _spans_char_wb}


def _hash_chunk(docs, plan, xp):
    keys = []
    for hashes, rows in _SPANS[plan.analyzer](docs, plan, xp):
        columns, negative = hash_to_index(hashes, plan.n_features, xp=xp)
        negative = negative if plan.alternate_sign else None
        keys.append(cell_keys(rows, columns, negative, len(docs), plan.n_features, xp=xp))
    return sum_cells(keys, len(docs), plan.n_features, signed=plan.alternate_sign, xp=xp)


def _chunk_bounds(docs, plan):
    """Document ranges of about the planned number of characters each.

    A chunk also holds at most as many documents as keep its (row, column,
    sign) sort keys in 32 bits, when that is not too few; the chunks are a
    multiple of the CPU threads in number, so the threads end together.
    """
    if plan.analyzer == "word":
        budget = CHUNK_CHARS_WORD
    else:
        budget = max(CHUNK_CHARS_CHAR // (plan.ngram_range[1] - plan.ngram_range[0] + 1), 1 << 14)
    sizes = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)) + 16
    ends = np.cumsum(sizes)
    n_chunks = max(int(ends[-1] // budget) + 1, 1)
    col_bits = max(int(plan.n_features - 1).bit_length(), 1) + int(plan.alternate_sign)
    max_docs = 2**32 >> col_bits
    if max_docs >= 512:
        n_chunks = max(n_chunks, -(-len(docs) // max_docs))
    threads = n_threads()
    n_chunks = -(-n_chunks // threads) * threads
    cuts = np.searchsorted(ends, np.arange(1, n_chunks) * (ends[-1] / n_chunks))
    bounds = np.unique(np.concatenate([[0], cuts, [len(docs)]]))
    if max_docs >= 512 and np.diff(bounds).max() > max_docs:  # skewed lengths: split further
        bounds = np.unique(np.concatenate([bounds, np.arange(0, len(docs), max_docs)]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def hash_documents(docs, plan, *, xp):
    """``(indptr, indices, values)`` of the hashed counts of a list of documents.

    ``values`` are int64 sums of the signed occurrences; ``indptr`` is int64.
    """
    retain_freed_blocks()  # the chunks' temporaries are reused, not faulted in again
    pieces = parallel_map(lambda b: _hash_chunk(docs[b[0] : b[1]], plan, xp), _chunk_bounds(docs, plan))
    indptr = [xp.zeros(1, dtype=xp.int64)]
    offset = 0
    for p, _, _ in pieces:
        indptr.append(p[1:] + offset)
        offset += int(p[-1])
    indices = xp.concat([i for _, i, _ in pieces])
    values = xp.concat([v for _, _, v in pieces])
    return xp.concat(indptr), indices, values
