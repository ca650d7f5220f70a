"""Documents to a hashed CSR matrix, chunk by chunk on the CPU threads.

The host turns each chunk of documents into one string (Python's C string
methods: decode, ``lower``, accent stripping, whitespace normalisation) and
its UTF-8 bytes; all the rest is array code in the namespace ``xp``, so the
numpy work of one chunk overlaps the string work of another.  Word n-grams
are hashed from the hash states of their words, never built as strings.
"""

from __future__ import annotations

import re

import numpy as np

from ._array import n_threads, parallel_map, retain_freed_blocks
from ._charclass import code_points, utf8_offsets
from ._murmurhash import ByteWords, finish, state
from ._ngrams import char_ngrams, word_ngrams
from ._preprocess import decoded, prepared
from ._rows import sum_cells
from ._words import word_tokens

__all__ = ["hash_documents"]

# The whitespace runs scikit-learn's char analyzers collapse to one space.
_WHITE_SPACES = re.compile(r"\s\s+")
# Characters per chunk for one n-gram size (char analyzers) or for word analyzers.
CHUNK_CHARS_CHAR = 1 << 18
CHUNK_CHARS_WORD = 1 << 19


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

    Preprocessing the joined text equals preprocessing each document: ``lower`` and accent
    stripping act on each character alone, except the final-sigma rule of ``lower``, which looks
    across case-ignorable characters only (a control character is neither cased nor
    case-ignorable), and NFKD, which reorders combining marks only (a control character is a starter).
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
    unigrams = plan.ngram_range[0] == 1
    hashes = finish(h, tail, lengths, xp=xp) if unigrams or plan.stop_words is not None else None
    if plan.stop_words is not None:
        keep = xp.nonzero(~plan.stop_words.member(words, starts, lengths, hashes, xp=xp))[0]
        starts, lengths, rows, hashes, h, tail = (xp.take(a, keep) for a in (starts, lengths, rows, hashes, h, tail))
    out = [(hashes, rows)] if unigrams else []
    return out + word_ngrams(words, h, tail, starts, lengths, rows, plan.ngram_range, xp=xp)


def _spans_char(docs, plan, xp):
    docs = decoded(docs, plan)
    # Each document followed by a separator (no whitespace, so collapsed runs never cross it):
    # segment i runs from after separator i - 1 through separator i, its n-grams end before it.
    joined = _joined_text([*docs, ""], plan)
    if joined is None:  # each document prepared alone; its separator found by the lengths
        docs = [_WHITE_SPACES.sub(" ", d) for d in prepared(docs, plan)]
        encoded = _encoded("\0".join([*docs, ""]), xp)
        seg_ends = xp.asarray(np.cumsum(np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)) + 1) - 1)
    else:
        encoded = _encoded(_WHITE_SPACES.sub(" ", joined[0]), xp)
        seg_ends = xp.astype(xp.nonzero(encoded[1] == ord(joined[1]))[0], xp.int64, copy=False)
    seg_starts = xp.concat([xp.zeros(1, dtype=xp.int64), seg_ends[:-1] + 1])
    return char_ngrams(encoded, seg_starts, seg_ends, np.arange(len(docs)), plan.ngram_range, xp=xp, whole=False)


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
    else:
        words = joined[0].split()
    if not words:
        return []
    # the words laid end to end, each between two spaces
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words)) + 2
    seg_starts = np.cumsum(lens) - lens
    seg_starts, seg_ends = xp.asarray(seg_starts), xp.asarray(seg_starts + lens)
    encoded = _encoded(" " + "  ".join(words) + " ", xp)
    if joined is None:
        counts = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        rows = np.repeat(np.arange(len(docs), dtype=np.int64), counts)
    else:  # a separator's segment holds nothing; the next segments are the next row's
        marker = (seg_ends - seg_starts == 3) & (xp.take(encoded[1], seg_starts + 1) == ord(joined[1]))
        seg_ends = xp.where(marker, seg_starts, seg_ends)
        rows = xp.cumulative_sum(xp.astype(marker, xp.uint32))
    return char_ngrams(encoded, seg_starts, seg_ends, rows, plan.ngram_range, xp=xp, whole=True)


_SPANS = {"word": _spans_word, "char": _spans_char, "char_wb": _spans_char_wb}


def _hash_chunk(docs, plan, xp):
    pieces = _SPANS[plan.analyzer](docs, plan, xp)
    return sum_cells(pieces, len(docs), plan.n_features, signed=plan.alternate_sign, xp=xp)


def _chunk_bounds(docs, plan):
    """Document ranges of about the planned number of characters each, and of at most as many
    documents as keep the (row, column, sign) sort keys in 32 bits when that is not too few;
    a multiple of the CPU threads in number, so the threads end together."""
    if plan.analyzer == "word":
        budget = CHUNK_CHARS_WORD
    else:
        budget = max(CHUNK_CHARS_CHAR // (plan.ngram_range[1] - plan.ngram_range[0] + 1), 1 << 14)
    sizes = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs)) + 16
    ends = np.cumsum(sizes)
    n_chunks = int(ends[-1] // budget) + 1
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
    """int64 ``indptr``, int32 ``indices`` and int64 ``values`` (sums of the signed occurrences)
    of the hashed counts of a list of documents."""
    retain_freed_blocks()  # the chunks' temporaries are reused, not faulted in again
    pieces = parallel_map(lambda b: _hash_chunk(docs[b[0] : b[1]], plan, xp), _chunk_bounds(docs, plan), blas=False)
    indptrs, indices, values = zip(*pieces)
    offsets = np.cumsum([0] + [int(p[-1]) for p in indptrs]).tolist()
    indptr = xp.concat([xp.zeros(1, dtype=xp.int64)] + [p[1:] + o for p, o in zip(indptrs, offsets)])
    return indptr, xp.concat(indices), xp.concat(values)
