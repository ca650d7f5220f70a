"""Documents to a hashed CSR matrix: host preparation, chunks, threads.

The host turns each chunk of documents into one string (Python's C string
methods: decode, ``lower``, accent stripping, whitespace normalisation) and
its UTF-8 bytes; everything after that (character classes, token and n-gram
spans, MurmurHash3, columns, signs, summing duplicates) is array code in the
namespace ``xp``.  Chunks run on the CPU pool, so the numpy work of one
chunk overlaps the string work of another.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np
from sklearn.feature_extraction.text import strip_accents_ascii

from ._array import parallel_map
from ._charclass import WORD, code_point_flags
from ._murmurhash import byte_words, hash_to_index, murmurhash3_32
from ._ngrams import char_spans, char_to_byte_spans, join_spans, runs, word_ngram_spans
from ._rows import cell_keys, sum_cells
from ._utf8 import code_points, utf8_offsets

__all__ = ["Plan", "hash_documents"]

# The whitespace runs scikit-learn's char analyzers collapse to one space.
_WHITE_SPACES = re.compile(r"\s\s+")
# Characters per chunk for one n-gram size (char analyzers) or for word analyzers.
CHUNK_CHARS_CHAR = 1 << 18
CHUNK_CHARS_WORD = 1 << 16


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
    encoding: str
    decode_error: str
    has_bytes: bool = False  # some documents are bytes, to decode


class _CombiningDropper(dict):
    """``str.translate`` table deleting combining characters, filled on first sight."""

    def __missing__(self, key):
        value = None if unicodedata.combining(chr(key)) else key
        self[key] = value
        return value


_DROP_COMBINING = _CombiningDropper()


def _strip_accents_unicode(doc):
    # Exactly scikit-learn's strip_accents_unicode, with the per-character
    # Python loop replaced by str.translate.
    if doc.isascii():
        return doc
    return unicodedata.normalize("NFKD", doc).translate(_DROP_COMBINING)


def _decoded(docs, plan):
    """The documents as ``str`` (``bytes`` decoded as scikit-learn does)."""
    if not plan.has_bytes:
        return docs
    return [d.decode(plan.encoding, plan.decode_error) if isinstance(d, bytes) else d for d in docs]


def _prepare(docs, plan):
    """The preprocessed strings of a chunk (scikit-learn's decode and preprocessor)."""
    docs = _decoded(docs, plan)
    if plan.lowercase:
        docs = [d.lower() for d in docs]
    strip = plan.strip_accents
    if strip == "ascii":
        docs = [strip_accents_ascii(d) for d in docs]
    elif strip == "unicode":
        docs = [_strip_accents_unicode(d) for d in docs]
    elif strip is not None:
        docs = [strip(d) for d in docs]
    return docs


def _encoded(text, xp):
    """``(buf, code_points, offsets)`` of a string; offsets None when ASCII.

    ``buf`` is the UTF-8 bytes (uint8), ``code_points`` uint32 (the bytes
    themselves when ASCII) and ``offsets`` the byte offset of every character
    and of the end.
    """
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
    """``(text, separator)``: the preprocessed documents in one string, or None.

    One ``lower`` (and accent stripping) of the joined text equals the
    per-document ones: they act on each character alone, except the final
    sigma rule of ``lower``, which looks across case-ignorable characters
    only, and a control character is neither cased nor case-ignorable; NFKD
    reorders combining marks only, and a control character is a starter.
    The separator is the first of ``_SEPARATORS`` that no document contains,
    with ``pad`` on both sides.  None when every one occurs, or accents are
    stripped by a callable.
    """
    if callable(plan.strip_accents):
        return None
    for separator in _SEPARATORS:
        text = (pad + separator + pad).join(docs)
        if text.count(separator) == len(docs) - 1:
            break
    else:
        return None
    if plan.lowercase:
        text = text.lower()
    if plan.strip_accents == "ascii":
        text = strip_accents_ascii(text)
    elif plan.strip_accents == "unicode":
        text = _strip_accents_unicode(text)
    return text, separator


def _spans_word(docs, plan, xp):
    docs = _decoded(docs, plan)
    joined = _joined_text(docs, plan)
    if joined is None:
        docs = _prepare(docs, plan)
        text = "\n".join(docs)  # "\n" is no word character: tokens never cross it
        lens = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)) + 1
        doc_starts = xp.asarray(np.cumsum(lens) - lens)
    else:
        text, separator = joined
    # Tokens are found on code points (one per character) and then
    # turned into spans of the UTF-8 bytes, which are hashed.
    buf, cps, offsets = _encoded(text, xp)
    if joined is not None:
        doc_starts = xp.nonzero(cps == ord(separator))[0]
        doc_starts = xp.concat([xp.zeros(1, dtype=xp.int64), xp.astype(doc_starts, xp.int64) + 1])
    words = byte_words(buf, xp=xp)
    is_word = (code_point_flags(cps, xp=xp) & WORD) != 0
    starts, ends = runs(is_word, xp=xp)
    starts = xp.astype(starts, xp.int64)
    ends = xp.astype(ends, xp.int64)
    if plan.min_token_chars > 1:  # a run of one character is no token
        keep = xp.nonzero((ends - starts) >= plan.min_token_chars)[0]
        starts, ends = xp.take(starts, keep), xp.take(ends, keep)
    rows = xp.searchsorted(doc_starts, starts, side="right") - 1
    starts, lengths = char_to_byte_spans(starts, ends, offsets, xp=xp)
    min_n, max_n = plan.ngram_range
    hashes = None
    if plan.stop_words is not None or min_n == 1:
        hashes = murmurhash3_32(words, starts, lengths, xp=xp)
    if plan.stop_words is not None:
        keep = xp.nonzero(~plan.stop_words.member(words, starts, lengths, hashes, xp=xp))[0]
        starts, lengths, rows, hashes = (xp.take(a, keep) for a in (starts, lengths, rows, hashes))
    out = []
    if min_n == 1:
        out.append((hashes, rows))
    if max_n >= 2 and starts.shape[0]:
        joined, new_starts = join_spans(buf, starts, lengths, xp=xp)
        jwords = byte_words(joined, xp=xp)
        for s_, l_, r_ in word_ngram_spans(new_starts, lengths, rows, plan.ngram_range, xp=xp):
            out.append((murmurhash3_32(jwords, s_, l_, xp=xp), r_))
    return out


def _spans_char(docs, plan, xp):
    docs = _decoded(docs, plan)
    # Each document followed by the separator: one string prepared at once
    # (a separator is no whitespace, so collapsed runs never cross it).
    joined = _joined_text([*docs, ""], plan)
    if joined is None:
        docs = [_WHITE_SPACES.sub(" ", d) for d in _prepare(docs, plan)]
        text = "".join(docs)
        lens = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        nonempty = np.flatnonzero(lens)
        seg_starts = (np.cumsum(lens) - lens)[nonempty]
        seg_ends = seg_starts + lens[nonempty]
        return _hash_segments(text, xp.asarray(seg_starts), xp.asarray(seg_ends), nonempty, plan, xp, whole=None)
    text, separator = joined
    text = _WHITE_SPACES.sub(" ", text)
    buf, cps, offsets = _encoded(text, xp)
    # Segment i runs from after separator i - 1 through separator i (so the
    # segments cover the text back to back); its n-grams end before it.
    seg_ends = xp.astype(xp.nonzero(cps == ord(separator))[0], xp.int64)
    seg_starts = xp.concat([xp.zeros(1, dtype=xp.int64), seg_ends[:-1] + 1])
    rows = np.arange(len(docs))
    return _hash_segments(text, seg_starts, seg_ends, rows, plan, xp, whole=None, encoded=(buf, offsets))


def _spans_char_wb(docs, plan, xp):
    docs = _decoded(docs, plan)
    # scikit-learn collapses r"\s\s+" to " " and then splits on whitespace;
    # re's \s and str.isspace are the same set, so splitting alone is equal.
    # Documents joined by " separator " split into their words with the
    # separator as a word of its own between documents.
    joined = _joined_text(docs, plan, pad=" ")
    if joined is None:
        split = [d.split() for d in _prepare(docs, plan)]
        words = [w for ws in split for w in ws]
        separator = None
    else:
        text, separator = joined
        words = text.split()
    if not words:
        return []
    text = " " + "  ".join(words) + " "  # every word padded by its own spaces
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words)) + 2
    seg_starts = xp.asarray(np.cumsum(lens) - lens)
    seg_ends = seg_starts + xp.asarray(lens)
    buf, cps, offsets = _encoded(text, xp)
    if separator is None:
        counts = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
    else:  # a separator's segment holds nothing; the next segments are the next row's
        marker = (xp.asarray(lens) == 3) & (xp.take(cps, seg_starts + 1) == ord(separator))
        seg_ends = xp.where(marker, seg_starts, seg_ends)
        rows = xp.cumulative_sum(xp.astype(marker, xp.uint32))
    return _hash_segments(text, seg_starts, seg_ends, rows, plan, xp, whole=True, encoded=(buf, offsets))


def _hash_segments(text, seg_starts, seg_ends, seg_rows, plan, xp, whole, encoded=None):
    if not text:
        return []
    buf, offsets = encoded if encoded is not None else _encoded(text, xp)[::2]
    words = byte_words(buf, xp=xp)
    n = len(text)
    spans = char_spans(
        seg_starts,
        seg_ends,
        xp.astype(xp.asarray(seg_rows), xp.uint32),  # rows of a chunk fit; keys need no cast
        n,
        plan.ngram_range,
        offsets,
        xp=xp,
        whole=whole,
    )
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
    sign) sort keys in 32 bits, when that is not too few.
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
    cuts = np.searchsorted(ends, np.arange(1, n_chunks) * (ends[-1] / n_chunks))
    bounds = np.unique(np.concatenate([[0], cuts, [len(docs)]]))
    if max_docs >= 512 and np.diff(bounds).max() > max_docs:  # skewed lengths: split further
        bounds = np.unique(np.concatenate([bounds, np.arange(0, len(docs), max_docs)]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def hash_documents(docs, plan, *, xp):
    """``(indptr, indices, values)`` of the hashed counts of a list of documents.

    ``values`` are int64 sums of the signed occurrences; ``indptr`` is int64.
    """
    pieces = parallel_map(lambda b: _hash_chunk(docs[b[0] : b[1]], plan, xp), _chunk_bounds(docs, plan))
    indptr = [xp.zeros(1, dtype=xp.int64)]
    offset = 0
    for p, _, _ in pieces:
        indptr.append(p[1:] + offset)
        offset += int(p[-1])
    indices = xp.concat([i for _, i, _ in pieces])
    values = xp.concat([v for _, _, v in pieces])
    return xp.concat(indptr), indices, values
