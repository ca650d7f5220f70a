"""Reading training and scoring data from files, in chunks, in one pass.

A reader splits its file into blocks of about ``chunk_bytes`` that end at a
line end (:meth:`blocks`, cheap: it only reads) and turns a block into a
:class:`Chunk` (:meth:`parse`: decoding, parsing, vectorising, the costly
part). :func:`parsed_chunks` runs both in a background thread ahead of the
caller (or leaves text's hashing to the caller: ``hash_here``), so memory holds
a few chunks, never the file. Formats: svmlight /
libsvm, ``.npz``, CSV, JSON lines: one reader class each, which says more.

Blocks are read with plain ``read`` calls, so standard input (``-``), a FIFO or
``/dev/stdin`` streams as a file does (not an ``.npz`` archive: a zip is read
by seeking); gzip data (named ``*.gz``, or starting with gzip's
magic bytes, on a pipe too) are decompressed as they are read. A name that
tells no format is told by the first bytes (:func:`sniff_format`); a stream's
first bytes are peeked at and kept (:class:`_Peekable`), never lost.
Errors are ValueErrors whose message names the file (and the line where there
is one), for the command line to print as one line.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import itertools
import json
import os
import re
import stat
import sys
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .svmlight import SvmlightLineError, parse_svmlight

FORMATS = ("svmlight", "npz", "csv", "jsonl")
_SUFFIXES = {
    ".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight",
    ".npz": "npz", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
}
CHUNK_BYTES = 64 * 2**20
# Text to train on: smaller, so that one chunk is hashed and fitted while the next one's JSON is parsed.
TEXT_TRAIN_CHUNK_BYTES = 4 * 2**20
STDIN = "-"  # the data path that means standard input
STDIN_NAME = "standard input"  # how messages name it
SNIFF_BYTES = 64 * 2**10  # the first bytes a format is told by
# A line (a CSV record) longer than this many blocks, and than MIN_RECORD_LIMIT, is refused rather than
# read whole into memory: a file with no line ends, or a CSV quote never closed, on a pipe too.
RECORD_BLOCKS, MIN_RECORD_LIMIT = 8, 256 * 2**20
# Text vectorizer defaults for naive Bayes: raw counts, no sign flipping.
TEXT_DEFAULTS = {"n_features": 2**20, "alternate_sign": False, "norm": None}


def typed_labels(values):
    """Labels read as text or floats, as int64 when they are all whole numbers."""
    a = np.asarray(values)
    if a.dtype.kind == "f":
        return a.astype(np.int64) if np.all(np.isfinite(a)) and np.all(a == np.round(a)) else a
    if a.dtype.kind in "US":
        ints = _whole_numbers(a)
        return a.astype(str) if ints is None else ints
    return a


def text_labels(labels):
    """Labels that are bytes (numpy "S": an .npz archive's, or the classes of a model fitted in Python on
    bytes) as the text they are, decoded as UTF-8 (their order kept: UTF-8's bytes sort as its characters
    do); other labels, and bytes that are not all UTF-8, as they are."""
    a = np.asarray(labels)
    if a.dtype.kind != "S":
        return a
    try:
        return np.strings.decode(a, "utf-8")
    except UnicodeDecodeError:
        return a


def _numbers_named(classes):
    """``(numbers, names)``: the numbers string ``classes`` name, sorted, and the classes in their
    order, if each names a distinct number; else None."""
    try:
        numbers = classes.astype(np.float64)
    except ValueError:
        return None
    order = np.argsort(numbers)
    numbers = numbers[order]
    return (numbers, classes[order]) if np.all(np.isfinite(numbers)) and np.all(numbers[1:] > numbers[:-1]) else None


def _whole_numbers(a):
    """Text labels ``a`` as int64 if each is an integer as Python writes one: "10", never "010",
    "+10", "1_0" or "١٠" (labels that would all become the class 10); else None."""
    try:
        ints = a.astype(np.int64)
    except (ValueError, OverflowError):
        return None
    return ints if np.array_equal(ints.astype(str), a.astype(str)) else None


def known_labels(y, classes):
    """``(converted, found)``: ``y`` in the dtype of ``classes``, and a mask of the labels among ``classes``
    (one that does not convert, a word or 1.5 for integer classes, is not found; its entry is meaningless)."""
    classes, y = np.asarray(classes), np.asarray(y)
    converted, usable = _converted(y, classes), True
    if converted is None:
        # Some labels do not convert: one by one, over the distinct labels (classes[:1] stands for those).
        values, inverse = np.unique(y, return_inverse=True)
        each = [_converted(values[i : i + 1], classes) for i in range(values.shape[0])]
        converted = np.concatenate([classes[:1] if c is None else c.astype(classes.dtype) for c in each])[inverse]
        usable = np.array([c is not None for c in each], dtype=bool)[inverse]
    return converted, usable & np.isin(converted, classes)


def _converted(y, classes):
    """``y`` as labels of the dtype of ``classes``, or None if one is not."""
    if y.dtype.kind == classes.dtype.kind:
        return y
    if classes.dtype.kind in "US":
        named = _numbers_named(classes) if y.dtype.kind in "iuf" else None
        if named is not None:  # --classes 1.0,2.0 with svmlight's labels 1 and 2: the class "1.0"
            numbers, names = named
            index = np.minimum(np.searchsorted(numbers, y), len(numbers) - 1)
            return np.where(numbers[index] == y, names[index], y.astype(str))
        if y.dtype.kind == "f":  # 3.0 is the label "3", as JSON lines labels are read
            whole = np.isfinite(y) & (y == np.round(y))
            return np.where(whole, np.where(whole, y, 0).astype(np.int64).astype(str), y.astype(str))
        # str, not classes.dtype: a fixed-width string dtype would truncate longer labels.
        return y.astype(str)
    if y.dtype.kind in "US" and classes.dtype.kind in "iu":
        return _whole_numbers(y)
    if y.dtype.kind in "US" and classes.dtype.kind == "b":  # astype(bool) is True for any text but ""
        text = np.char.lower(y.astype(str))
        truth, falsity = np.isin(text, ("true", "1")), np.isin(text, ("false", "0"))
        return truth if np.all(truth | falsity) else None
    try:
        converted = y.astype(classes.dtype.type)
    except (ValueError, TypeError, OverflowError):
        return None
    if y.dtype.kind == "f" and not np.all(converted == y):
        return None  # e.g. 1.5 would truncate to 1
    return converted


def align_labels(y, classes, *, where):
    """``y`` converted to the dtype of ``classes``; unknown labels raise."""
    classes, y = np.asarray(classes), np.asarray(y)
    converted, found = known_labels(y, classes)
    if not np.all(found):
        unknown = np.unique(y[~found].astype(str))
        msg = (f"{where} has label(s) {unknown[:10].tolist()} the model does not know "
               f"(its classes: {classes.tolist()[:20]})")
        raise ValueError(msg)
    return converted


class Block(NamedTuple):
    """Whole lines of a file: ``data`` starts at line ``first`` (1-based)."""

    data: bytes
    first: int
    nbytes: int  # bytes of file this block stands for (for progress)

    @property
    def lines(self):
        """(first, last) line numbers of the block (a last line end starts no line)."""
        return self.first, self.first + self.data.count(b"\n", 0, len(self.data) - 1)


class Chunk(NamedTuple):
    """A parsed block: features, labels as read (None where the file has
    none), the line range (None for .npz) and the bytes of file it came from."""

    X: object
    y: object
    lines: tuple
    nbytes: int


def label_array(path, labels, lines, nbytes):
    """``labels`` (str, the one of row i read from line ``lines[i]``) as a numpy string array. A
    fixed-width array is as wide as its longest label: one so long that the array would take far more
    than the ``nbytes`` read is refused (None: the caller checks, see :func:`check_label_width`), as is
    a lone surrogate (JSON's "\\ud800": not Unicode text)."""
    if not labels:
        return np.array(labels, dtype=str)
    if nbytes is not None:
        lengths = list(map(len, labels))
        longest = lengths.index(max(lengths))
        check_label_width(path, len(labels), lengths[longest], lines[longest], nbytes)
    try:
        "".join(labels).encode("utf-8")
    except UnicodeEncodeError:
        bad = next(i for i, label in enumerate(labels) if not label.isascii() and _has_surrogate(label))
        raise ValueError(f"{path} line {lines[bad]}: the label holds a lone surrogate (U+D800 to U+DFFF), "
                         "which is not Unicode text") from None
    return np.array(labels, dtype=str)


def check_label_width(path, n_labels, characters, line, nbytes):
    """Refuse ``n_labels`` fixed-width labels as wide as the longest (``characters`` long, read from
    ``line``) where they would take far more memory than the ``nbytes`` they were read from."""
    need = 4 * n_labels * characters
    if need > 4 * nbytes + 2**24:
        msg = (f"{path} line {line}: a label of {characters:,} characters; as one of "
               f"{n_labels:,} fixed-width labels it would take {need / 2**20:,.0f} MiB (labels are class "
               "names: shorten it)")
        raise ValueError(msg)


def _has_surrogate(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def machine_memory():
    """Bytes of physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def lines_where(path, lines):
    """``path lines A-B`` (``path`` alone where lines mean nothing, e.g. .npz)."""
    if lines is None:
        return str(path)
    first, last = lines
    return f"{path} line {first}" if last == first else f"{path} lines {first}-{last}"


def _line_end(data):
    """Index just past the last line end of ``data`` (0: none)."""
    return data.rfind(b"\n") + 1


def csv_record_end(data):
    """Index just past the last line end of ``data`` outside a quoted field (0: none), ``data`` starting
    at a record, as Python's csv reader reads it: a quote opens a field only at the field's start (after
    a comma or a line end); inside, a doubled quote is a quote and a single one closes the field."""
    end = _line_end(data)
    if data.find(b'"', 0, end) < 0:
        return end
    opens, closes = _quoted_fields(data, end)
    while end:  # the line end just before `end`: inside the last field opened before it?
        i = int(np.searchsorted(opens, end - 1)) - 1
        if i < 0 or (i < len(closes) and closes[i] < end - 1):
            return end
        end = data.rfind(b"\n", 0, opens[i]) + 1
    return 0


def _quoted_fields(data, end):
    """Positions of the quotes opening and closing the quoted fields of ``data[:end]`` (one close fewer
    where the last is open at ``end``)."""
    b = np.frombuffer(data, dtype=np.uint8, count=end)
    quotes = np.flatnonzero(b == ord('"'))
    opens, closes = quotes[0::2], quotes[1::2]
    # Pairs of quotes are the fields (a doubled quote is a close and an open) where every open is at a
    # field's start (or right after a close) and every close before a delimiter, a line end or a quote.
    before = b[np.maximum(opens - 1, 0)]
    after = np.frombuffer(data, dtype=np.uint8)[np.minimum(closes + 1, len(data) - 1)]
    comma, newline, quote, cr = b',\n"\r'
    opened = (opens == 0) | (before == comma) | (before == newline) | (before == quote)
    closed = (closes + 1 == len(data)) | (after == comma) | (after == newline) | (after == quote) | (after == cr)
    if np.all(opened) and np.all(closed):
        return opens, closes
    # Else some quote is literal (one in an unquoted field, as 5" in 'a 5" screen'): quote by quote.
    opens, closes, inside, skip = [], [], False, False
    for position in quotes.tolist():
        if skip:
            skip = False
        elif inside and position + 1 < end and data[position + 1] == ord('"'):
            skip = True  # a doubled quote
        elif inside:
            closes.append(position)
            inside = False
        elif position == 0 or data[position - 1] in b",\n":
            opens.append(position)
            inside = True
    return np.array(opens, dtype=np.int64), np.array(closes, dtype=np.int64)


def is_stdin(path):
    return isinstance(path, str) and path == STDIN


def shown(path):
    """How messages name ``path``: standard input by name."""
    return STDIN_NAME if is_stdin(path) else path


class _Peekable:
    """A binary stream whose first bytes can be looked at (:meth:`peek`) and are still read after."""

    def __init__(self, raw, *, owned):
        self._raw, self._head, self.owned = raw, b"", owned

    def peek(self, n, enough=None):
        """Up to ``n`` first bytes, never consumed: fewer at the end of the data, or once
        ``enough(bytes)`` (a pipe's writer may be slow: what is there is read, not waited for)."""
        read1 = getattr(self._raw, "read1", self._raw.read)
        while len(self._head) < n and not (enough is not None and enough(self._head)):
            more = read1(n - len(self._head))
            if not more:
                break
            self._head += more
        return self._head[:n]

    def read(self, n=-1):
        if not self._head:
            return self._raw.read(n)
        if n is None or n < 0:
            data, self._head = self._head + self._raw.read(), b""
            return data
        data, self._head = self._head[:n], self._head[n:]
        if len(data) < n:
            data += self._raw.read(n - len(data))
        return data

    def readable(self):
        return True

    def seekable(self):
        return False

    def close(self):
        if self.owned:
            self._raw.close()


# Streams (standard input, FIFOs) opened to peek at their first bytes, kept for the read that follows.
_STREAMS = {}


def _stream(path):
    """The peekable stream of ``path`` (not a regular file), opened once and kept until it is read."""
    key = str(path)
    stream = _STREAMS.get(key)
    if stream is None:
        if is_stdin(key):
            if sys.stdin is None or getattr(sys.stdin, "buffer", None) is None:
                raise ValueError("standard input (-) is closed (the command was started with <&-); name a file")
            if sys.stdin.isatty():
                raise ValueError("standard input (-) is a terminal; pipe the data in (... | nbgpu COMMAND ... -) "
                                 "or name a file")
            stream = _Peekable(sys.stdin.buffer, owned=False)
        else:
            stream = _Peekable(open(path, "rb"), owned=True)
        _STREAMS[key] = stream
    return stream


def _opened(path):
    """A binary stream of ``path`` to read once: a regular file opened, a stream's kept one taken."""
    if is_regular_file(path):
        return open(path, "rb")
    stream = _stream(path)
    _STREAMS.pop(str(path), None)
    return contextlib.closing(stream) if stream.owned else contextlib.nullcontext(stream)


def read_blocks(path, chunk_bytes, *, min_lines=1, record_end=_line_end):
    """:class:`Block` s of about ``chunk_bytes`` that end at a line end (``record_end`` finds the last
    one a block may end at; a longer line is in a longer block, up to a limit; the first holds at least
    ``min_lines``), read
    sequentially: files, standard input (``-``), FIFOs, /dev/stdin. Gzip is decompressed as it is read;
    ``nbytes`` is then the compressed bytes read, what progress counts against the file."""
    first, pending, want, counted, end = 1, b"", min_lines, 0, False
    limit = max(RECORD_BLOCKS * chunk_bytes, MIN_RECORD_LIMIT)
    compressed, name = is_gzip(path), shown(path)
    with _opened(path) as raw:
        f = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        told = compressed and raw.seekable()  # not a pipe: the compressed bytes read so far are known
        while not end:
            try:
                # Doubling (a long line is scanned a few times), never past the limit.
                data = f.read(min(max(chunk_bytes, len(pending)), limit - len(pending)))
            except EOFError:
                raise ValueError(f"{name}: the gzip data end early (truncated?)") from None
            except (gzip.BadGzipFile, zlib.error) as exc:
                raise ValueError(f"{name}: not valid gzip data ({exc})") from None
            end, data = not data, pending + data
            cut = len(data) if end else record_end(data)
            if not end and (cut == 0 or data.count(b"\n", 0, cut) < want):
                if len(data) >= limit:
                    msg = (f"{name} line {first}: no line ends within {limit / 2**20:g} MiB (not a file of lines, or "
                           f"a CSV quote never closed?); --chunk-mb raises this limit to {RECORD_BLOCKS} blocks")
                    raise ValueError(msg)
                pending = data  # no complete line yet, or the first block is too short
                continue
            block, pending, want = data[:cut], data[cut:], 1
            data, lines = None, block.count(b"\n")
            if block:
                nbytes = raw.tell() - counted if told else len(block)
                counted += nbytes
                # From a list emptied as it is yielded: no local of this generator holds the block
                # while it is parsed and the next one read (it would be one more chunk of memory).
                ready, block = [Block(block, first, nbytes)], None
                yield ready.pop()
            first += lines


def _first_bytes(path, n, enough=None):
    """The first ``n`` bytes of ``path`` (a stream's peeked at and kept, up to ``enough(bytes)``);
    b"" if it cannot be read."""
    if is_regular_file(path):
        try:
            with open(path, "rb") as f:
                return f.read(n)
        except OSError:
            return b""
    if not is_stdin(path) and not os.path.exists(path):
        return b""
    try:
        return _stream(path).peek(n, enough)
    except OSError:
        return b""


def is_gzip(path):
    """Whether ``path`` is read as gzip data: named ``*.gz``, or its data (a file's or a stream's)
    start with gzip's magic bytes."""
    if not is_stdin(path) and Path(path).suffix.lower() == ".gz":
        return True
    return _first_bytes(path, 2) == b"\x1f\x8b"


def _decoded(path, block):
    try:
        # A byte order mark at the start of the file (Windows tools write one) is not text.
        return block.data.decode("utf-8-sig" if block.first == 1 else "utf-8")
    except UnicodeDecodeError as exc:  # exc.object: the bytes decoded (after a mark)
        line = block.first + exc.object.count(b"\n", 0, exc.start)
        msg = f"{path} line {line}: not valid UTF-8 text (byte {exc.object[exc.start]:#04x})"
        raise ValueError(msg) from None


def _text_lines(path, block, size):
    """The lines of ``block`` (split at "\\n" only, as ``io.StringIO`` splits them), decoded about
    ``size`` bytes at a time: the block is never in memory twice (``io.StringIO`` holds 4 bytes a
    character)."""
    data, start, first = block.data, 0, block.first
    while start < len(data):
        end = data.find(b"\n", start + max(size, 1)) + 1 or len(data)  # a line end cuts no UTF-8 character
        part = Block(data[start:end], first, 0)
        first += part.data.count(b"\n")
        start = end
        yield from io.StringIO(_decoded(path, part))


def _is_number(text, kind=float):
    """Whether ``text`` reads as a ``kind`` (float; int: a column index)."""
    try:
        kind(text)
    except ValueError:
        return False
    return True


class _Reader:
    """What readers share: blocks of whole lines, and chunks all as wide as the file (or its vectorizer),
    which :meth:`layout` only checks against a model (svmlight lays its chunks out)."""

    min_lines = 1  # the first block holds at least this many lines
    _record_end = staticmethod(_line_end)  # where a block may end
    _transform = None  # text: the vectorizer's transform

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, dtype=np.float64, **_):
        # source: what is read ("-": standard input); path: how messages name it
        self.source, self.path = path, shown(path)
        self.chunk_bytes, self.dtype = int(chunk_bytes), dtype

    def blocks(self):
        return read_blocks(self.source, self.chunk_bytes, min_lines=self.min_lines, record_end=self._record_end)

    def _hashed(self, lines, texts):
        """``texts`` hashed, read from the ``(first, last)`` ``lines``; an error names them."""
        try:
            return self._transform(texts)
        except ValueError as exc:  # UnicodeEncodeError included
            raise ValueError(f"{lines_where(self.path, lines)}: {exc}") from None

    def hashed(self, chunk):
        """A chunk parsed with ``hashed=False`` (its texts as ``X``) with its texts hashed."""
        return chunk._replace(X=self._hashed(chunk.lines, chunk.X))

    def layout(self, chunk, *, n_features, **_):
        if chunk.X.shape[1] != n_features:
            source = "the vectorizer makes" if self._transform else f"{self.path} has"
            msg = f"{source} {chunk.X.shape[1]} features but the model expects {n_features}"
            raise ValueError(msg)
        return chunk.X


class SvmlightReader(_Reader):
    """svmlight/libsvm text, ``label index:value ...`` per line. :meth:`parse` gives chunks with the
    file's own indices as columns (``X[:, i]`` is index ``i``), as wide as the largest index + 1;
    :meth:`layout` then applies the indexing base (``zero_based``) and the model's number of features."""

    format = "svmlight"

    def __init__(self, path, *, zero_based=None, **options):
        super().__init__(path, **options)
        self.zero_based = zero_based  # None: decided while reading (scikit-learn's rule)

    settings = property(lambda self: {"format": self.format, "zero_based": self.zero_based is None or bool(self.zero_based)})

    def parse(self, block, *, labels=True):
        # nbgpu's reader (svmlight.py): scikit-learn's load_svmlight_file(zero_based=True), without importing it
        try:
            rows = parse_svmlight(block.data, self.dtype)
        except SvmlightLineError as exc:
            msg = f"{self.path} line {block.first + exc.line}: not a valid svmlight/libsvm line ({exc.reason})"
            raise ValueError(msg) from None
        if not np.all(np.isfinite(rows.labels)):
            raise ValueError(f"{lines_where(self.path, block.lines)}: a label is NaN or infinite")
        infinite = np.flatnonzero(np.isinf(rows.data))
        if infinite.size:  # every model refuses it: said here, where its line is known
            row = int(np.searchsorted(rows.indptr, infinite[0], side="right")) - 1
            msg = (f"{self.path} line {block.first + int(rows.row_lines[row])}: a feature value is infinite as a "
                   f"{np.dtype(self.dtype).name} ({rows.data[infinite[0]]}); features must be finite numbers")
            raise ValueError(msg)
        X = _csr(rows.data, rows.indices, rows.indptr, rows.labels.shape[0], rows.width)
        return Chunk(X, rows.labels, block.lines, block.nbytes)

    def layout(self, chunk, *, zero_based, n_features):
        """``chunk.X`` with indices shifted to ``zero_based`` and ``n_features`` columns."""
        X, shift = chunk.X, 0 if zero_based else 1
        where = lines_where(self.path, chunk.lines)
        if shift and min_index(X) == 0:
            raise ValueError(f"{where}: feature index 0 in a file read as one-based (--zero-based yes reads it)")
        if X.shape[1] - shift > n_features:
            top = int(X.indices.max())  # as the file writes it
            raise ValueError(f"{where}: more features than the {n_features} the model has (feature index {top})")
        if shift or X.shape[1] < n_features:
            X = _csr(X.data, X.indices - shift if shift else X.indices, X.indptr, X.shape[0], n_features)
        return X


def _csr(data, indices, indptr, n_rows, n_columns):
    import scipy.sparse as sp

    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_columns))


def min_index(X):
    """Smallest stored column index of a CSR chunk (None if it stores nothing)."""
    return int(X.indices.min()) if X.nnz else None


class NpzReader(_Reader):
    """``.npz`` archives: a scipy sparse matrix or a dense ``X``, with labels ``y``."""

    format = "npz"
    settings = property(lambda self: {"format": self.format})

    def __init__(self, path, **options):
        from .._array.sparse import host_sparse  # here: see open_reader

        super().__init__(path, **options)
        self._host_sparse = host_sparse

    def blocks(self):
        """The archive read whole, in :class:`Chunk` s of about ``chunk_bytes`` of rows."""
        try:
            with np.load(self.source, allow_pickle=False) as archive:
                # Only the arrays read, each checked against this machine's memory before it is
                # read (the zip's size of it: a small file of zeros may expand to gigabytes).
                names = [k for k in ("data", "indices", "indptr", "shape", "format", "X", "y") if k in archive.files]
                memory = machine_memory()
                for k in names:
                    size = archive.zip.getinfo(f"{k}.npy").file_size
                    if memory is not None and size > memory:
                        msg = (f"{self.path}: array {k!r} holds {size / 2**30:,.1f} GiB, more than this "
                               f"machine's {memory / 2**30:,.0f} GiB of memory")
                        raise MemoryError(msg)
                arrays = {k: archive[k] for k in names}
        except MemoryError as exc:
            raise ValueError(str(exc) if str(exc).startswith(str(self.path)) else
                             f"{self.path}: its arrays do not fit in this process's memory") from None
        except ValueError as exc:
            # numpy's messages suggest allow_pickle=True: never the advice for a file of unknown origin.
            if "object arrays" in str(exc).lower():
                msg = f"{self.path} holds object arrays; only numeric and string arrays are read"
            elif "pickle" in str(exc).lower():
                msg = f"{self.path} is not a readable .npz archive (not a zip archive of .npy arrays)"
            else:
                msg = f"{self.path} is not a readable .npz archive of arrays ({exc})"
            raise ValueError(msg) from None
        except Exception as exc:  # not a zip, truncated...
            msg = f"{self.path} is not a readable .npz archive of arrays ({type(exc).__name__}: {exc})"
            raise ValueError(msg) from None
        if {"data", "indices", "indptr", "shape"} <= set(arrays):
            fmt = arrays.get("format", np.array("csr"))
            fmt = fmt.item().decode(errors="replace") if fmt.dtype.kind == "S" else str(fmt)
            if fmt not in ("csr", "csc"):
                raise ValueError(f"{self.path}: sparse format {fmt!r}; csr or csc expected")
            try:
                X = self._host_sparse(fmt, arrays["data"], arrays["indices"], arrays["indptr"], arrays["shape"]).tocsr()
            except Exception as exc:
                msg = f"{self.path}: its sparse matrix arrays are inconsistent ({exc})"
                raise ValueError(msg) from None
        elif "X" in arrays:
            X = arrays["X"]
            if X.ndim != 2:
                msg = f"{self.path}: `X` must be 2-D; got shape {X.shape}"
                raise ValueError(msg)
        else:
            msg = (f"{self.path} holds arrays {sorted(arrays)[:10]}; expected a sparse matrix (data, indices, "
                   "indptr, shape, format: what scipy.sparse.save_npz writes) or a dense array `X`, and labels `y`")
            raise ValueError(msg)
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{self.path}: features of dtype {X.dtype}; numbers expected")
        y = arrays.get("y")
        if y is not None and (y.shape != (X.shape[0],) or y.dtype.kind not in "biufUS"):
            msg = f"{self.path}: `y` must be {X.shape[0]} numbers or strings (one per row); got {y.dtype} of shape {y.shape}"
            raise ValueError(msg)
        if y is not None and y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError(f"{self.path}: a label in `y` is NaN or infinite")
        if y is not None and y.dtype.kind == "S":
            y = text_labels(y)
            if y.dtype.kind == "S":
                raise ValueError(f"{self.path}: the labels `y` are bytes that are not UTF-8 text")
        n, size = X.shape[0], os.path.getsize(self.source)
        row_bytes = max(1, (X.nnz if hasattr(X, "nnz") else X.size) * 12 // max(n, 1))
        step = max(1, self.chunk_bytes // row_bytes)
        for start in range(0, n, step):
            stop = min(start + step, n)
            yield Chunk(X[start:stop], None if y is None else y[start:stop], None, size * stop // n - size * start // n)

    def parse(self, block, *, labels=True):
        if labels and block.y is None:
            raise ValueError(f"{self.path} holds no labels `y`")
        return block._replace(X=block.X.astype(self.dtype, copy=False))


class CsvReader(_Reader):
    """CSV of dense numeric features (an empty field is NaN) and one label column; header optional.

    The label column is ``--label-column`` (a name or an index), else the column named ``label``, else
    the last one (:attr:`label_note` says so). With ``text_column`` (a name or an index) the features
    are that column's text hashed by the HashingVectorizer of ``vectorizer`` (a dict of its parameters),
    the other columns but the label are left out and the label column is optional. The first row is a
    header where its fields are not numbers and the next row's are, or where it names the text or label
    column ('label' by default)."""

    format = "csv"
    min_lines = 2  # a header needs the row after it
    _record_end = staticmethod(csv_record_end)

    def __init__(self, path, *, label_column=None, n_features=None, text_column=None, vectorizer=None, **options):
        super().__init__(path, **options)
        self.label_column, self.text_column = label_column, text_column
        self.n_features = n_features  # a model's: the label column is then optional
        # names: the header's, or 0, 1, ..., once the first block is read
        self.names = self.has_header = self.label_note = None
        if text_column is not None:
            self._transform = _text_transform(vectorizer)

    @property
    def settings(self):
        text = {} if self.text_column is None else {"text_column": self.text_column}
        return {"format": self.format, "label_column": self.label_column, **text}

    def _learn_header(self, rows):
        first = rows[0]
        numeric = [_is_number(v) or not v for v in first]
        if len(rows) >= 2:
            self.has_header = any(_is_number(b) and not a for a, b in zip(numeric, rows[1]))
        else:
            self.has_header = not any(numeric)
        # Names tell where numbers cannot (text fields, or columns named 0, 1, ... as pandas writes
        # them): the first row is a header if it holds the text or label column's name (not an index).
        label = "label" if self.label_column is None else self.label_column
        named = [c for c in (self.text_column, label) if c is not None and not _is_number(c, int)]
        self.has_header = self.has_header or any(c in first for c in named)
        self.names = list(first) if self.has_header else [str(i) for i in range(len(first))]

    def _column_index(self, column, what):
        """Index of ``column`` (a name of the header, or an index)."""
        names, n_columns = self.names, len(self.names)
        if self.has_header and column in names:
            return names.index(column)
        index = int(column) if _is_number(column, int) else None
        if index is None or not -n_columns <= index < n_columns:
            shown = [str(n)[:40] for n in names[:20]]
            msg = f"{self.path}: no {what} column {str(column)[:80]!r} (columns: {shown})"
            raise ValueError(msg)
        return index % n_columns

    def label_index(self):
        """Index of the label column, or None when the file has only features (or only text)."""
        names, n_features, n_columns = self.names, self.n_features, len(self.names)
        text = None if self.text_column is None else self._column_index(self.text_column, "text")
        if text is None and n_features is not None and n_columns == n_features and self.label_column is None:
            return None
        if text is None and n_features is not None and n_columns != n_features + 1:
            msg = (f"{self.path} has {n_columns} columns; the model expects {n_features} features "
                   + ("and the label column" if self.label_column is not None else "(plus an optional label column)"))
            raise ValueError(msg)
        if text is None and n_columns < 2:
            raise ValueError(f"{self.path} needs at least one feature column and a label column")
        if self.label_column is not None:
            index = self._column_index(self.label_column, "label")
            if index == text:
                raise ValueError(f"{self.path}: the label column is the text column ({self.label_column!r})")
            return index
        if n_columns == 1:
            return None  # the text column alone
        if self.has_header and "label" in names and names.index("label") != text:
            return names.index("label")
        # For want of a column named 'label': the last one (but the text column).
        index = n_columns - 1 if text != n_columns - 1 else n_columns - 2
        shown = f"'{names[index]}'" if self.has_header else str(index)
        column = f"column {shown}" if text is not None else f"the last column ({shown})"
        self.label_note = (f"{self.path}: no column named 'label'; {column} is taken as the label "
                           "(--label-column chooses another)")
        return index

    # Rows are parsed a batch at a time, about 1/BATCHES of a block's lines: the csv module's strings
    # (some 50 bytes each, a field of "1.25" included) exist for one batch only, so memory holds the
    # block, its numbers and a batch, a few times the block's bytes (all its rows at once were 20-30).
    BATCHES = 64

    def _records(self, block):
        """(line number, fields) of each record of ``block`` with a field that is not blank (fields
        stripped unless they are text), read lazily."""
        reader = csv.reader(_text_lines(self.path, block, len(block.data) // self.BATCHES))
        text_mode, before = self.text_column is not None, 0  # a text is hashed as written, spaces and all
        try:
            for row in reader:
                if any(stripped := [v.strip() for v in row]):
                    yield block.first + before, row if text_mode else stripped
                before = reader.line_num  # lines read: a quoted field may span several
        except csv.Error as exc:  # e.g. a NUL byte (Python 3.10)
            raise ValueError(f"{self.path} line {block.first + reader.line_num - 1}: not readable as CSV ({exc})") from None

    def parse(self, block, *, labels=True, hashed=True):
        # A field is at most the block, already in memory: csv's own limit (128 KiB) would refuse a long document.
        csv.field_size_limit(max(csv.field_size_limit(), len(block.data)))
        records = self._records(block)
        n_lines = block.data.count(b"\n") + 1  # at least the rows
        size = max(16, n_lines // self.BATCHES)
        batch = list(itertools.islice(records, size))
        if self.names is None:
            if not batch:
                return Chunk(np.empty((0, 0), dtype=self.dtype), None, block.lines, block.nbytes)
            self._learn_header([[v.strip() for v in row] for _, row in batch[:2]])
            if self.has_header:
                batch = batch[1:]
        width = len(self.names)
        label = self.label_index()
        if labels and label is None:
            why = "only the text column" if self.text_column is not None else f"it has exactly {self.n_features} columns"
            raise ValueError(f"{self.path} has no label column ({why})")
        text = None if self.text_column is None else self._column_index(self.text_column, "text")
        # Numbers go straight into one array of at most a row per line (cut to the rows at the end).
        X = None if text is not None else np.empty((n_lines, width - (label is not None)), dtype=self.dtype)
        texts, y, rows, widest = [], [], 0, (0, None)  # widest: the longest label's characters and line
        while batch:
            numbers = [number for number, _ in batch]
            for number, (_, row) in zip(numbers, batch):
                if len(row) != width:
                    msg = f"{self.path} line {number}: {len(row)} fields where the first row has {width}"
                    raise ValueError(msg)
            # Object, not fixed-width, strings: a long field (a document, a label) widens no other cell,
            # and numbers convert from it several times faster.
            table = np.empty((len(batch), width), dtype=object)
            table[...] = [row for _, row in batch]
            del batch
            if text is None:
                X[rows : rows + len(table)] = self._numbers(table, label, numbers)
            else:
                texts += table[:, text].tolist()
            if label is not None:
                part, widest = self._labels(table[:, label], numbers, labels, widest, rows, len(block.data))
                y.append(part)
            rows += len(table)
            batch = list(itertools.islice(records, size))
        if text is not None:
            X = self._hashed(block.lines, texts) if hashed else texts
        else:
            X.resize((rows, X.shape[1]), refcheck=False)  # in place: the rows past the last are never written
        if label is not None:  # as wide as the widest part, checked above
            y = np.concatenate(y) if y else np.array([], dtype=str)
        return Chunk(X, None if label is None else y, block.lines, block.nbytes)

    def _numbers(self, table, label, numbers):
        """The features of ``table`` (fields of the rows read from lines ``numbers``) as numbers."""
        features = table if label is None else np.delete(table, label, axis=1)
        features[features == ""] = "nan"  # an empty field is a missing value
        try:
            with np.errstate(over="ignore"):  # 1e39 as float32: infinite, said below
                X = features.astype(self.dtype)
        except ValueError:
            bad = next(i for i, row in enumerate(features) if not all(map(_is_number, row)))
            value = next(v for v in features[bad] if not _is_number(v))
            msg = (f"{self.path} line {numbers[bad]}: feature values must be numbers; got {str(value)[:80]!r} "
                   "(a column of text? --text-column NAME|INDEX hashes it as text)")
            raise ValueError(msg) from None
        infinite = np.isinf(X)
        if infinite.any():  # every model refuses it: said here, where its line is known
            row, column = np.argwhere(infinite)[0]
            msg = (f"{self.path} line {numbers[row]}: the feature value {str(features[row, column])[:80]!r} is "
                   f"infinite as a {np.dtype(self.dtype).name}; features must be finite numbers (an empty field "
                   "or NaN is a missing value)")
            raise ValueError(msg)
        return X

    def _labels(self, column, numbers, labels, widest, before, nbytes):
        """``(labels, widest)``: the labels of the rows read from lines ``numbers`` (``column``: their
        fields) as a string array, and the longest label's (characters, line) so far; ``before`` labels
        were read before, all joined at the end into one array of the block's ``nbytes``."""
        y = [v.strip() for v in column.tolist()]
        if labels and "" in y:
            raise ValueError(f"{self.path} line {numbers[y.index('')]}: the label is empty")
        longest = max(range(len(y)), key=lambda i: len(y[i]))
        widest = max(widest, (len(y[longest]), numbers[longest]), key=lambda w: w[0])
        check_label_width(self.path, before + len(y), *widest, nbytes)
        return label_array(self.path, y, numbers, None), widest


class JsonlReader(_Reader):
    """JSON lines ``{"text": ..., "label": ...}`` vectorised by a HashingVectorizer (``vectorizer``: a
    dict of its parameters); ``text_key`` and ``label_key`` name other keys (None: "text", "label").
    Labels are read as text (``3`` and ``"3"`` are the same label), then typed as every label is."""

    format = "jsonl"

    def __init__(self, path, *, vectorizer, text_key=None, label_key=None, **options):
        super().__init__(path, **options)
        self.text_key = "text" if text_key is None else text_key
        self.label_key = "label" if label_key is None else label_key
        self._transform = _text_transform(vectorizer)

    settings = property(lambda self: {"format": self.format, "text_key": self.text_key, "label_key": self.label_key})

    def parse(self, block, *, labels=True, hashed=True):
        """The chunk of ``block``; ``hashed=False``: its texts (a list) as ``X``, for :meth:`hashed`.

        A line that is one object with a string text and a label that is a non-empty string or an int
        (or none, where labels are not asked for) is read by one call of the decoder; every other line
        (blank, spaced, another label, not valid) by :meth:`_record`, which names what is wrong."""
        texts, found, numbers = [], [], []
        text_key, label_key, first = self.text_key, self.label_key, block.first
        decode = _JSON.raw_decode
        for offset, line in enumerate(_decoded(self.path, block).split("\n")):
            try:
                record, end = decode(line)
                text, label = record[text_key], record.get(label_key)
            except (ValueError, RecursionError, TypeError, KeyError, AttributeError):
                end = None  # not that simple: read as the reference reads it
            if not (end == len(line) and type(text) is str
                    and ((type(label) is str and label) or type(label) is int or (label is None and not labels))):
                read = self._record(line, first + offset, labels)
                if read is None:
                    continue
                text, label = read
            texts.append(text)
            found.append(label)
            numbers.append(first + offset)
        y = None
        if found and None not in found:
            y = found if set(map(type, found)) == {str} else [_label_text(v) for v in found]
            y = label_array(self.path, y, numbers, len(block.data))
        return Chunk(self._hashed(block.lines, texts) if hashed else texts, y, block.lines, block.nbytes)

    def _record(self, line, number, labels):
        """``(text, label)`` of line ``number``, None for a blank line; a ValueError naming the line where
        it is not a JSON object with a string text and (``labels``) a label."""
        if not line.strip():
            return None
        text_key, label_key = self.text_key, self.label_key
        at = f"{self.path} line {number}"
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            if not line.lstrip().startswith("["):
                raise ValueError(f"{at}: not valid JSON ({exc})") from None
            record = []  # the start of an array: said below
        except ValueError:  # Python's bound on the digits of an int it converts
            msg = f"{at}: a number with more digits than Python converts (sys.get_int_max_str_digits)"
            raise ValueError(msg) from None
        if isinstance(record, list):
            msg = (f"{at}: a JSON array, where JSON lines are expected (one object per line: "
                   "jq -c '.[]' converts an array)")
            raise ValueError(msg)
        if not isinstance(record, dict):
            msg = f"{at}: expected a JSON object with a string {_shown(text_key)}; got {_json_kind(record)}"
            raise ValueError(msg)
        if not isinstance(record.get(text_key), str):
            if text_key in record:
                msg = f"{at}: {_shown(text_key)} must be a string; got {_json_kind(record[text_key])}"
            else:
                msg = (f"{at}: expected an object with a string {_shown(text_key)}; its keys are "
                       f"{_keys_text(record)} (--text-key and --label-key name the keys to read)")
            raise ValueError(msg)
        label = record.get(label_key)
        if label is None and labels and label_key in record:
            raise ValueError(f"{at}: {_shown(label_key)} is null; expected a non-empty string or a number")
        if label is None and labels:
            msg = (f"{at}: no {_shown(label_key)}; the object's keys are {_keys_text(record)} "
                   "(--label-key names the key of the label)")
            raise ValueError(msg)
        if label is not None and (not isinstance(label, (str, int, float)) or label == ""):
            raise ValueError(f"{at}: {_shown(label_key)} must be a non-empty string or a number")
        if isinstance(label, float) and not np.isfinite(label):
            raise ValueError(f"{at}: {_shown(label_key)} is NaN or infinite")
        return record[text_key], label


# One JSON document at the start of a string (no whitespace skipped): a line's object in one call.
_JSON = json.JSONDecoder()


def _shown(key, most=40):
    """A JSON key as an error message shows it: quoted, at most ``most`` characters."""
    text = json.dumps(key, ensure_ascii=True)
    return text if len(text) <= most else text[: most - 4] + '..."'


def _keys_text(record, most=10):
    keys = [_shown(k) for k in list(record)[:most]]
    more = f", ... ({len(record)} keys)" if len(record) > most else ""
    return "[" + ", ".join(keys) + more + "]" if keys else "none (an empty object)"


def _json_kind(value):
    names = {dict: "an object", list: "an array", str: "a string", bool: "true or false", type(None): "null"}
    return names.get(type(value), "a number")


def _label_text(value):
    if isinstance(value, bool):
        return str(value).lower()  # JSON's spelling
    if isinstance(value, float) and value == int(value):
        return str(int(value))  # 3.0 is the label 3
    return str(value)


def _text_transform(params):
    """``transform(texts)`` of the HashingVectorizer of ``params`` (a dict of its parameters).
    Without stop words, nbgpu's fast path (the same matrix), which needs no scikit-learn."""
    from ..text._transform import DEFAULTS, fast_plan, hashed_matrix

    plan = fast_plan(params)
    estimator = None
    if plan is None or plan.stop_words is not None:  # the estimator (its stop-word warning)
        from ..text import HashingVectorizer

        estimator = HashingVectorizer(**params)
    settings = {**DEFAULTS, **params}

    def transform(texts):
        # Neither the fast path nor scikit-learn's transform takes an empty list.
        if not texts:
            data = np.empty(0, settings["dtype"])
            return _csr(data, np.empty(0, np.int32), np.zeros(1, np.int32), 0, settings["n_features"])
        if estimator is not None:
            return estimator.transform(texts)
        X = hashed_matrix(texts, plan)
        if X is None:  # texts (JSON strings) that UTF-8 cannot encode
            raise ValueError("a text holds a lone surrogate (U+D800 to U+DFFF), which is not Unicode text")
        return X

    return transform


_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip archive (.npz): its first entry, or empty
# An svmlight/libsvm line: a label, an optional qid, index:value pairs, an optional # comment.
_SVMLIGHT_LINE = re.compile(rb"[^\s,:#]+(?:[ \t]+qid:\S+)?(?:[ \t]+\d+:[^\s,]+)*[ \t]*(?:#.*)?")
_SNIFF_LINES = 20


def _head_lines(raw):
    """The first non-blank lines of the data that start with ``raw`` (gzip decompressed as far as it goes,
    a byte order mark dropped); the last line (maybe cut short) only where it is the only one."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, SNIFF_BYTES)
        except zlib.error:
            return []
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    lines = [line.strip() for line in raw.split(b"\n")[:_SNIFF_LINES + 1]]
    whole = lines[:-1] if len(lines) > 1 else lines  # the last may be cut short (or empty: the data end)
    return [line for line in (whole if any(whole) else lines) if line]


def sniff_format(path):
    """The format told by the first bytes of ``path`` (gzip decompressed), or None: a zip archive is
    ``npz``; a first line that opens a JSON object (or array) is JSON lines; lines of ``label
    index:value ...`` are svmlight; a first line with a comma is CSV."""
    raw = _first_bytes(path, SNIFF_BYTES, enough=lambda head: len(_head_lines(head)) > _SNIFF_LINES)
    if raw[:4] in _ZIP_MAGIC:
        return "npz"
    lines = _head_lines(raw)
    if not lines:
        return None
    if lines[0][:1] in (b"{", b"["):
        return "jsonl"
    rows = [line for line in lines if not line.startswith(b"#")]
    if rows and all(_SVMLIGHT_LINE.fullmatch(line) for line in rows) and any(
            b":" in line.split(b"#", 1)[0] for line in rows):
        return "svmlight"
    if b"," in lines[0]:
        return "csv"
    return None


def named_format(path, given="auto"):
    """The format named by ``given``, else by the extension of ``path``; None if neither tells."""
    if given != "auto":
        return given
    if is_stdin(path):
        return None
    name = Path(path)
    if name.suffix.lower() == ".gz":  # data.csv.gz: the format of data.csv
        name = Path(name.stem)
    return _SUFFIXES.get(name.suffix.lower())


def detect_format(path, given="auto"):
    """The format named by ``given``, or told by the file's extension, else by its first bytes
    (:func:`sniff_format`; standard input, ``-``, by its first bytes)."""
    fmt = named_format(path, given)
    if fmt is not None:
        return fmt
    there = is_stdin(path) or os.path.exists(path)
    fmt = sniff_format(path) if there else None
    if fmt is not None:
        return fmt
    if there and _first_bytes(path, 1) == b"" and not os.path.isdir(path):
        raise ValueError(f"{shown(path)} is empty")
    told = ("from its first bytes, which are not JSON lines ({...} objects), svmlight (label index:value ...), "
            "CSV (comma-separated) nor an .npz (zip) archive" if is_stdin(path) else
            "from its extension or its first bytes" if there else "from its extension")
    msg = (f"cannot tell the format of {shown(path)} {told}; name it (--format {{{','.join(FORMATS)}}})"
           + ("" if is_stdin(path) else f" or use one of {sorted(_SUFFIXES)} (each also gzip-compressed, + .gz)"))
    raise ValueError(msg)


def is_regular_file(path):
    """True for a regular file (it can be read twice); False for standard input, FIFOs, devices."""
    if is_stdin(path):
        return False
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def open_reader(path, fmt="auto", *, vectorizer=None, **options):
    """A reader for ``path`` (``vectorizer``: the HashingVectorizer's parameters, for text); a
    ValueError if the file cannot be opened or its format is unknown. A reader imports what it
    needs here, in the calling thread: two threads importing the same packages can deadlock."""
    import scipy.sparse  # noqa: F401  (what every reader builds its chunks with)

    if is_stdin(path):
        _stream(path)  # closed, or a terminal: said now
    else:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise ValueError(f"{path}: no such file") from None
        except OSError as exc:
            raise ValueError(f"{path} cannot be read ({exc.strerror})") from None
        if stat.S_ISDIR(mode):
            raise ValueError(f"{path} is a directory, not a file")
        if not os.access(path, os.R_OK):
            raise ValueError(f"{path}: permission denied")
        if stat.S_ISREG(mode) and os.path.getsize(path) == 0:
            raise ValueError(f"{path} is empty")
    fmt = detect_format(path, fmt)
    path_name = shown(path)
    if fmt == "npz" and not is_regular_file(path):
        # A zip archive is read by seeking in it; copied to memory or disk, it would cost more than a file.
        raise ValueError(f"{path_name}: an .npz archive must be a regular file (a zip archive is read by seeking, "
                         "it cannot be streamed); save it to a file and name that")
    if not is_regular_file(path) and _first_bytes(path, 1) == b"":
        raise ValueError(f"{path_name} is empty")
    text_column = options.get("text_column")
    if fmt == "npz" and is_gzip(path):
        raise ValueError(f"{path_name}: an .npz archive cannot be read gzip-compressed (it is a zip archive, compressed already)")
    if fmt == "jsonl" and vectorizer is None:
        raise ValueError(f"{path_name} is JSON-lines text, but the model was not trained on text")
    if fmt == "csv" and text_column is not None and vectorizer is None:
        raise ValueError(f"{path_name}: a text column (--text-column), but the model was not trained on text")
    if vectorizer is not None and fmt != "jsonl" and (fmt != "csv" or text_column is None):
        tail = "CSV: --text-column names its column of text" if fmt == "csv" else fmt
        raise ValueError(f"the model was trained on JSON-lines text or a CSV column of text; {path_name} is {tail}")
    reader = {"svmlight": SvmlightReader, "npz": NpzReader, "csv": CsvReader, "jsonl": JsonlReader}[fmt]
    return reader(path, vectorizer=vectorizer, **options)


def parsed_chunks(reader, *, labels, finish=None, depth=1, hash_here=False):
    """The chunks of ``reader``, read and parsed (then ``finish(chunk) -> chunk``) in a thread from
    now on, at most ``depth`` waiting: memory holds ``depth + 2`` chunks. An empty chunk has
    ``X=None`` (its bytes still count for progress).

    ``hash_here``: text is hashed (and finished) by the thread that takes the chunks, the reader's
    thread only parses. Parsing (JSON, CSV) holds Python's lock on one core; hashing runs on all
    cores, mostly without it: where the taker has little else to do (training), the next chunk's
    parsing then overlaps this one's hashing instead of waiting for it."""
    from .._array.threads import blas_single_thread
    from .._interop.streaming import _Prefetcher

    later = hash_here and reader._transform is not None  # hashed (and finished) by the taker

    def produce(_, box):
        chunk = reader.parse(box.pop(), labels=labels, **({"hashed": False} if later else {}))
        if len(chunk.X) == 0 if later else chunk.X.shape[0] == 0:
            return chunk._replace(X=None)
        return chunk if finish is None or later else finish(chunk)

    def taken(chunk):
        if not later or chunk.X is None:
            return chunk
        chunk = reader.hashed(chunk)
        return chunk if finish is None else finish(chunk)

    def consumed(chunks):
        # BLAS on one thread: the reader thread keeps a core busy, and BLAS threads that spin on
        # every core (OpenBLAS waits busily between calls) would slow training on small chunks.
        # Hashed text is sparse, which no BLAS call touches: nothing to limit (nor threadpoolctl's
        # scan of the loaded libraries to pay).
        with contextlib.nullcontext() if reader._transform is not None else blas_single_thread():
            yield from map(taken, chunks)

    # Each block in a list that produce empties: the thread's loop variable holds the list, not the
    # block's bytes, while the next block is read. A generator: the thread closes it, and so the file.
    return ParsedChunks(_Prefetcher(([block] for block in reader.blocks()), produce, depth), consumed)


class ParsedChunks:
    """The chunks :func:`parsed_chunks` gives, an iterator; :meth:`close` stops its thread, whether
    the chunks were iterated or not (a generator never started ignores ``close``)."""

    def __init__(self, prefetcher, consumed):
        self._prefetcher, self._chunks = prefetcher, consumed(prefetcher)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._chunks)

    def close(self):
        self._chunks.close()
        self._prefetcher.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        # Also on the taker's own errors: a traceback the caller keeps would keep the thread, and the file.
        self.close()
