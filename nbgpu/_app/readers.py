"""Reading training and scoring data from files, in chunks, in one pass.

A reader splits its file into blocks of about ``chunk_bytes`` that end at a
line end (:meth:`blocks`, cheap: it only reads) and turns a block into a
:class:`Chunk` (:meth:`parse`: decoding, parsing, vectorising, the costly
part). :func:`parsed_chunks` runs both in a background thread, a bounded
queue ahead of the caller, so that the file is read and parsed while the
previous chunk is fitted or scored, and memory holds a few chunks, never the
file. Formats:

- svmlight / libsvm: each block parsed by scikit-learn's ``load_svmlight_file``;
- ``.npz``: a scipy sparse matrix (the arrays ``scipy.sparse.save_npz``
  writes) or a dense array ``X``, with labels ``y``; read whole (a zip
  archive cannot be streamed), chunked by rows;
- CSV: dense features and a label column (header row optional; an empty
  field is a missing value, NaN);
- CSV with a text column (``text_column``): that column's text hashed as
  JSON lines' is, a label column, the other columns left out;
- JSON lines ``{"text": ..., "label": ...}`` (other keys: ``text_key``,
  ``label_key``): vectorised chunk by chunk (``nbgpu.text.HashingVectorizer``,
  scikit-learn's matrix computed faster).

Blocks are read with plain ``read`` calls, so a FIFO or ``/dev/stdin``
works as well as a file (everything but ``.npz``). A gzip-compressed file
(named ``*.gz``, or a regular file that starts with gzip's magic bytes) is
decompressed as it is read, chunk by chunk (standard library ``gzip``).

Errors are ValueErrors whose message names the file (and the line where
there is one), for the command line to print as one line.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import stat
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

FORMATS = ("svmlight", "npz", "csv", "jsonl")
_SUFFIXES = {
    ".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight",
    ".npz": "npz", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
}
GZIP_MAGIC = b"\x1f\x8b"
# JSON lines: the keys of a record read by default.
TEXT_KEY, LABEL_KEY = "text", "label"
CHUNK_BYTES = 64 * 2**20
# Text vectorizer defaults for naive Bayes: raw counts, no sign flipping.
TEXT_DEFAULTS = {"n_features": 2**20, "alternate_sign": False, "norm": None}
# scikit-learn's svmlight parser reads feature indices as C ints.
MAX_SVMLIGHT_INDEX = 2**31 - 1


# --------------------------------------------------------------------------- #
# Labels
# --------------------------------------------------------------------------- #
def typed_labels(values):
    """Labels read as text or floats, as int64 when they are all whole numbers."""
    a = np.asarray(values)
    if a.dtype.kind == "f":
        return a.astype(np.int64) if np.all(np.isfinite(a)) and np.all(a == np.round(a)) else a
    if a.dtype.kind in "US":
        try:
            return a.astype(np.int64)
        except (ValueError, OverflowError):
            return a.astype(str)
    return a


def known_labels(y, classes):
    """``(converted, found)``: ``y`` converted to the dtype of ``classes``
    and a boolean mask of the labels that are among ``classes``. A label
    that cannot be converted (a word for integer classes, 1.5 for integer
    classes) is not found; its entry of ``converted`` is meaningless."""
    classes = np.asarray(classes)
    y = np.asarray(y)
    converted, usable = _converted(y, classes), True
    if converted is None:
        # Some labels do not convert: one by one, over the distinct labels (classes[:1] stands for those).
        values, inverse = np.unique(y, return_inverse=True)
        each = [_converted(values[i : i + 1], classes) for i in range(values.shape[0])]
        parts = [classes[:1] if c is None else c.astype(classes.dtype) for c in each]
        converted = np.concatenate(parts)[inverse]
        usable = np.array([c is not None for c in each], dtype=bool)[inverse]
    return converted, usable & np.isin(converted, classes)


def _converted(y, classes):
    """``y`` as labels of the dtype of ``classes``, or None if one is not."""
    if y.dtype.kind == classes.dtype.kind:
        return y
    if classes.dtype.kind in "US":
        if y.dtype.kind == "f":  # 3.0 is the label "3", as JSON lines labels are read
            whole = np.isfinite(y) & (y == np.round(y))
            return np.where(whole, np.where(whole, y, 0).astype(np.int64).astype(str), y.astype(str))
        # str, not classes.dtype: a fixed-width string dtype would truncate longer labels.
        return y.astype(str)
    try:
        converted = y.astype(classes.dtype.type)
    except (ValueError, TypeError, OverflowError):
        return None
    if y.dtype.kind == "f" and not np.all(converted == y):
        return None  # e.g. 1.5 would truncate to 1
    return converted


def align_labels(y, classes, *, where):
    """``y`` converted to the dtype of ``classes``; unknown labels raise."""
    classes = np.asarray(classes)
    y = np.asarray(y)
    converted, found = known_labels(y, classes)
    if not np.all(found):
        unknown = np.unique(y[~found].astype(str))
        msg = (
            f"{where} has label(s) {unknown[:10].tolist()} the model does not know "
            f"(its classes: {classes.tolist()[:20]})"
        )
        raise ValueError(msg)
    return converted


# --------------------------------------------------------------------------- #
# Blocks and chunks
# --------------------------------------------------------------------------- #
class Block(NamedTuple):
    """Whole lines of a file: ``data`` starts at line ``first`` (1-based)."""

    data: bytes
    first: int
    nbytes: int  # bytes of file this block stands for (for progress)

    @property
    def lines(self):
        """(first, last) line numbers of the block."""
        data = self.data
        return self.first, self.first + max(data.count(b"\n") - (1 if data.endswith(b"\n") else 0), 0)


class Chunk(NamedTuple):
    """A parsed block: features, labels as read (None where the file has
    none), the line range (None for .npz) and the bytes of file it came from."""

    X: object
    y: object
    lines: tuple
    nbytes: int


def lines_where(path, lines):
    """``path lines A-B`` (``path`` alone where lines mean nothing, e.g. .npz)."""
    if lines is None:
        return str(path)
    first, last = lines
    return f"{path} line {first}" if last == first else f"{path} lines {first}-{last}"


def read_blocks(path, chunk_bytes, *, min_lines=1):
    """:class:`Block` s of about ``chunk_bytes`` that end at a line end (a longer line is one block;
    the first holds at least ``min_lines``), read sequentially: files, FIFOs, /dev/stdin. A gzip
    file is decompressed as it is read; a block's ``nbytes`` is then the compressed bytes read for
    it, what progress counts against the file's size."""
    first, pending = 1, b""
    want = min_lines
    with open(path, "rb") as raw:
        compressed = is_gzip(path, raw)
        f = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
        counted = 0  # compressed bytes accounted for by the blocks so far

        def nbytes(block):
            nonlocal counted
            if not compressed:
                return len(block)
            try:
                now = raw.tell()
            except OSError:  # a pipe
                return len(block)
            part, counted = now - counted, now
            return part

        while True:
            data = _gzip_read(path, f, chunk_bytes) if compressed else f.read(chunk_bytes)
            if not data:
                break
            data = pending + data
            cut = data.rfind(b"\n") + 1
            if cut == 0 or data.count(b"\n", 0, cut) < want:
                pending = data  # no complete line yet, or the first block is too short
                continue
            block, pending = data[:cut], data[cut:]
            want = 1
            yield Block(block, first, nbytes(block))
            first += block.count(b"\n")
        if pending:
            yield Block(pending, first, nbytes(pending))


def is_gzip(path, f=None):
    """Whether ``path`` is read as gzip data: named ``*.gz``, or a regular
    file that starts with gzip's magic bytes (``f``: the file, opened, at its start)."""
    if Path(path).suffix.lower() == ".gz":
        return True
    if not is_regular_file(path):
        return False  # a pipe cannot be peeked at
    if f is not None:
        start = f.read(2)
        f.seek(0)
        return start == GZIP_MAGIC
    try:
        with open(path, "rb") as g:
            return g.read(2) == GZIP_MAGIC
    except OSError:
        return False


def _gzip_read(path, f, size):
    try:
        return f.read(size)
    except EOFError:
        raise ValueError(f"{path}: the gzip data end early (a truncated file?)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise ValueError(f"{path}: not valid gzip data ({exc})") from None


def _decoded(path, block):
    try:
        return block.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = block.first + block.data.count(b"\n", 0, exc.start)
        msg = f"{path} line {line}: not valid UTF-8 text (byte {block.data[exc.start]:#04x})"
        raise ValueError(msg) from None


def _is_number(text, kind=float):
    """Whether ``text`` reads as a ``kind`` (float; int: a column index)."""
    try:
        kind(text)
    except ValueError:
        return False
    return True


class _Reader:
    """What readers share: blocks of whole lines, and chunks all of the width
    of the file (or of its vectorizer), which the layout of a model's
    features only checks (svmlight lays its chunks out)."""

    min_lines = 1  # the first block holds at least this many lines

    def blocks(self):
        return read_blocks(self.path, self.chunk_bytes, min_lines=self.min_lines)

    def _hashed(self, block, texts):
        """The texts of ``block`` hashed; an error names the block's lines."""
        try:
            return self._transform(texts)
        except ValueError as exc:  # UnicodeEncodeError included
            raise ValueError(f"{lines_where(self.path, block.lines)}: {exc}") from None

    def layout(self, chunk, *, n_features, **_):
        if chunk.X.shape[1] != n_features:
            source = "the vectorizer makes" if getattr(self, "_transform", None) else f"{self.path} has"
            msg = f"{source} {chunk.X.shape[1]} features but the model expects {n_features}"
            raise ValueError(msg)
        return chunk.X


# --------------------------------------------------------------------------- #
# svmlight / libsvm
# --------------------------------------------------------------------------- #
class SvmlightReader(_Reader):
    """svmlight/libsvm text: ``label index:value ...`` per line.

    :meth:`parse` gives every chunk with the file's own indices as columns
    (``X[:, i]`` is index ``i``) and its width as the largest index + 1;
    :meth:`layout` then applies the indexing base (``zero_based``) and the
    number of features of the model.
    """

    format = "svmlight"

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, dtype=np.float64, zero_based=None, **_):
        from sklearn.datasets import load_svmlight_file  # here: see open_reader

        self.path, self.chunk_bytes, self.dtype = path, int(chunk_bytes), dtype
        self.zero_based = zero_based  # None: decided while reading (scikit-learn's rule)
        self._load_svmlight = load_svmlight_file

    @property
    def settings(self):
        return {"format": self.format, "zero_based": True if self.zero_based is None else bool(self.zero_based)}

    def parse(self, block, *, labels=True):
        try:
            X, y = self._load_svmlight(io.BytesIO(block.data), zero_based=True, dtype=self.dtype)
        except (ValueError, OverflowError) as exc:
            raise self._error(block, exc) from None
        if y.shape[0] and not np.all(np.isfinite(y)):
            raise ValueError(f"{lines_where(self.path, block.lines)}: a label is NaN or infinite")
        return Chunk(X, y, block.lines, block.nbytes)

    def _error(self, block, exc):
        """The first bad line of ``block``, and why."""
        load_svmlight_file = self._load_svmlight
        for offset, line in enumerate(block.data.splitlines(keepends=True)):
            try:
                load_svmlight_file(io.BytesIO(line), zero_based=True, n_features=1)
            except OverflowError:
                reason = f"a feature index is larger than {MAX_SVMLIGHT_INDEX}"
            except ValueError as line_exc:
                if "n_features was set" in str(line_exc):
                    continue
                reason = str(line_exc).replace(" in SVMlight/LibSVM data file", "")
            else:
                continue
            return ValueError(f"{self.path} line {block.first + offset}: not a valid svmlight/libsvm line ({reason})")
        return ValueError(f"{lines_where(self.path, block.lines)}: not a valid svmlight/libsvm file ({exc})")

    def layout(self, chunk, *, zero_based, n_features):
        """``chunk.X`` with indices shifted to ``zero_based`` and ``n_features`` columns."""
        X = chunk.X
        if not zero_based and X.nnz:
            if X.indices.min() == 0:
                where = lines_where(self.path, chunk.lines)
                msg = f"{where}: feature index 0 in a file read as one-based (--zero-based yes reads it)"
                raise ValueError(msg)
            X = _csr(X.data, X.indices - 1, X.indptr, X.shape[0], X.shape[1] - 1)
        elif not zero_based:
            X = _csr(X.data, X.indices, X.indptr, X.shape[0], max(X.shape[1] - 1, 0))
        if X.shape[1] > n_features:
            top = int(X.indices.max()) + (0 if zero_based else 1)
            where = lines_where(self.path, chunk.lines)
            msg = f"{where}: more features than the {n_features} the model has (feature index {top})"
            raise ValueError(msg)
        if X.shape[1] < n_features:
            X = _csr(X.data, X.indices, X.indptr, X.shape[0], n_features)
        return X


def _csr(data, indices, indptr, n_rows, n_columns):
    import scipy.sparse as sp

    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_columns))


def min_index(X):
    """Smallest stored column index of a CSR chunk (None if it stores nothing)."""
    return int(X.indices.min()) if X.nnz else None


# --------------------------------------------------------------------------- #
# .npz
# --------------------------------------------------------------------------- #
class NpzReader(_Reader):
    """``.npz`` archives: a scipy sparse matrix or a dense ``X``, with labels ``y``."""

    format = "npz"

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, dtype=np.float64, **_):
        from .._array.sparse import host_sparse  # here: see open_reader

        self.path, self.chunk_bytes, self.dtype = path, int(chunk_bytes), dtype
        self._host_sparse = host_sparse

    settings = property(lambda self: {"format": self.format})

    def _load(self):
        host_sparse = self._host_sparse
        try:
            with np.load(self.path, allow_pickle=False) as archive:
                arrays = {k: archive[k] for k in archive.files}
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
                X = host_sparse(fmt, arrays["data"], arrays["indices"], arrays["indptr"], arrays["shape"]).tocsr()
            except Exception as exc:
                msg = f"{self.path}: its sparse matrix arrays are inconsistent ({exc})"
                raise ValueError(msg) from None
        elif "X" in arrays:
            X = arrays["X"]
            if X.ndim != 2:
                msg = f"{self.path}: `X` must be 2-D; got shape {X.shape}"
                raise ValueError(msg)
        else:
            msg = (
                f"{self.path} holds arrays {sorted(arrays)[:10]}; expected a sparse matrix "
                "(data, indices, indptr, shape, format: what scipy.sparse.save_npz writes) "
                "or a dense array `X`, and labels `y`"
            )
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
            y = y.astype(str)
        return X, y

    def blocks(self):
        X, y = self._load()
        if X.shape[0] == 0:
            return
        row_bytes = max(1, (X.nnz if hasattr(X, "nnz") else X.size) * 12 // X.shape[0])
        step = max(1, self.chunk_bytes // row_bytes)
        size = os.path.getsize(self.path)
        for start in range(0, X.shape[0], step):
            stop = min(start + step, X.shape[0])
            part = size * stop // X.shape[0] - size * start // X.shape[0]
            yield Chunk(X[start:stop], None if y is None else y[start:stop], None, part)

    def parse(self, block, *, labels=True):
        if labels and block.y is None:
            raise ValueError(f"{self.path} holds no labels `y`")
        return block._replace(X=block.X.astype(self.dtype, copy=False))


# --------------------------------------------------------------------------- #
# CSV
# --------------------------------------------------------------------------- #
class CsvReader(_Reader):
    """CSV with dense numeric features and one label column; header optional.

    The label column is ``--label-column`` (a name or an index), else the
    column named ``label``, else the last one (:attr:`label_note` says so).

    With ``text_column`` (a name or an index) the features are that column's
    text hashed by the HashingVectorizer of ``vectorizer`` (a dict of its
    parameters), as JSON lines' are; the other columns but the label are
    left out, and the label column is optional (a file of the text column
    alone has no labels). The first row is then a header if it holds the
    name of the text or label column (or by the numbers, as without).
    """

    format = "csv"
    min_lines = 2  # a header needs the row after it

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, dtype=np.float64, label_column=None, n_features=None,
                 text_column=None, vectorizer=None, **_):
        self.path, self.chunk_bytes, self.dtype = path, int(chunk_bytes), dtype
        self.label_column = label_column
        self.n_features = n_features  # a model's: the label column is then optional
        self.names = None  # column names (from the header or 0, 1, ...) once the first block is read
        self.has_header = None
        self.label_note = None
        self.text_column = text_column
        self._transform = None if text_column is None else _text_transform(vectorizer)

    @property
    def settings(self):
        settings = {"format": self.format, "label_column": self.label_column}
        if self.text_column is not None:
            settings["text_column"] = self.text_column
        return settings

    def _rows(self, text, first):
        rows, numbers = [], []
        for offset, row in enumerate(csv.reader(io.StringIO(text))):
            if row and any(v.strip() for v in row):
                rows.append([v.strip() for v in row])
                numbers.append(first + offset)
        return rows, numbers

    def _learn_header(self, rows):
        first = rows[0]
        numeric = [_is_number(v) or not v for v in first]
        if len(rows) >= 2:
            has_header = any(_is_number(b) and not a for a, b in zip(numeric, rows[1]))
        else:
            has_header = not any(numeric)
        if self.text_column is not None:  # text fields are not numbers: the column names tell (not indices)
            columns = (self.text_column, self.label_column)
            named = [c for c in columns if c is not None and not _is_number(c, int)]
            has_header = has_header or any(c in first for c in named)
        self.has_header = has_header
        self.names = list(first) if has_header else [str(i) for i in range(len(first))]

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

    def _text_label_index(self, text):
        """The label column of a file read with a text column (None: none)."""
        names, n_columns = self.names, len(self.names)
        if self.label_column is not None:
            index = self._column_index(self.label_column, "label")
            if index == text:
                raise ValueError(f"{self.path}: the label column is the text column ({self.label_column!r})")
            return index
        if n_columns == 1:
            return None
        if self.has_header and "label" in names and names.index("label") != text:
            return names.index("label")
        return self._guessed_label(n_columns - 1 if text != n_columns - 1 else n_columns - 2, last=False)

    def _guessed_label(self, index, *, last):
        """``index``, the label column taken for want of one named 'label' (:attr:`label_note` says so)."""
        shown = f"'{self.names[index]}'" if self.has_header else str(index)
        column = f"the last column ({shown})" if last else f"column {shown}"
        self.label_note = (f"{self.path}: no column named 'label'; {column} is taken as the label "
                           "(--label-column chooses another)")
        return index

    def label_index(self):
        """Index of the label column, or None when the file has only features."""
        names, n_features = self.names, self.n_features
        n_columns = len(names)
        if self.text_column is not None:
            return self._text_label_index(self._column_index(self.text_column, "text"))
        if n_features is not None and n_columns == n_features:
            return None
        if n_features is not None and n_columns != n_features + 1:
            msg = (f"{self.path} has {n_columns} columns; the model expects {n_features} features "
                   "(plus an optional label column)")
            raise ValueError(msg)
        if n_columns < 2:
            raise ValueError(f"{self.path} needs at least one feature column and a label column")
        if self.label_column is not None:
            return self._column_index(self.label_column, "label")
        if self.has_header and "label" in names:
            return names.index("label")
        return self._guessed_label(n_columns - 1, last=True)

    def parse(self, block, *, labels=True):
        rows, numbers = self._rows(_decoded(self.path, block), block.first)
        if self.names is None:
            if not rows:
                return Chunk(np.empty((0, 0), dtype=self.dtype), None, block.lines, block.nbytes)
            self._learn_header(rows)
            if self.has_header:
                rows, numbers = rows[1:], numbers[1:]
        width = len(self.names)
        for number, row in zip(numbers, rows):
            if len(row) != width:
                msg = f"{self.path} line {number}: {len(row)} fields where the first row has {width}"
                raise ValueError(msg)
        label = self.label_index()
        if labels and label is None:
            if self.text_column is not None:
                raise ValueError(f"{self.path} has no label column (only the text column)")
            raise ValueError(f"{self.path} has no label column (it has exactly {self.n_features} columns)")
        table = np.array(rows, dtype=str).reshape(len(rows), width)
        if self.text_column is not None:
            return self._text_chunk(block, table, label, numbers, labels)
        features = table if label is None else np.delete(table, label, axis=1)
        features = np.where(features == "", "nan", features)  # an empty field is a missing value
        try:
            X = features.astype(self.dtype)
        except ValueError:
            bad = next(i for i, row in enumerate(features) if not all(map(_is_number, row)))
            value = next(v for v in features[bad] if not _is_number(v))
            msg = (f"{self.path} line {numbers[bad]}: feature values must be numbers; got {str(value)[:80]!r} "
                   "(a column of text? --text-column NAME|INDEX hashes it as text)")
            raise ValueError(msg) from None
        return Chunk(X, self._labels(table, label, numbers, labels), block.lines, block.nbytes)

    def _labels(self, table, label, numbers, labels):
        """The label column of ``table`` (None: none); an empty label is an error where labels are read."""
        y = None if label is None else table[:, label]
        if y is not None and labels and np.any(y == ""):
            msg = f"{self.path} line {numbers[int(np.argmax(y == ''))]}: the label is empty"
            raise ValueError(msg)
        return y

    def _text_chunk(self, block, table, label, numbers, labels):
        text = self._column_index(self.text_column, "text")
        y = self._labels(table, label, numbers, labels)
        return Chunk(self._hashed(block, table[:, text].tolist()), y, block.lines, block.nbytes)


# --------------------------------------------------------------------------- #
# JSON lines
# --------------------------------------------------------------------------- #
class JsonlReader(_Reader):
    """JSON lines ``{"text": ..., "label": ...}`` vectorised by a HashingVectorizer
    (``vectorizer``: a dict of its parameters); ``text_key`` and ``label_key``
    name other keys (None: "text" and "label").

    Labels are read as text (a number ``3`` and a string ``"3"`` are the same
    label), then typed as every label of the command line is.
    """

    format = "jsonl"

    def __init__(self, path, *, vectorizer, chunk_bytes=CHUNK_BYTES, text_key=None, label_key=None, **_):
        self.path, self.chunk_bytes = path, int(chunk_bytes)
        self.text_key = TEXT_KEY if text_key is None else text_key
        self.label_key = LABEL_KEY if label_key is None else label_key
        self._transform = _text_transform(vectorizer)

    settings = property(lambda self: {"format": self.format, "text_key": self.text_key, "label_key": self.label_key})

    def parse(self, block, *, labels=True):
        texts, found = [], []
        text = _decoded(self.path, block)
        for offset, line in enumerate(text.split("\n")):
            if not line.strip():
                continue
            number = block.first + offset
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                if line.lstrip().startswith("["):
                    raise ValueError(self._array_error(number)) from None
                raise ValueError(f"{self.path} line {number}: not valid JSON ({exc})") from None
            except ValueError:  # Python's bound on the digits of an int it converts
                msg = f"{self.path} line {number}: a number with more digits than Python converts (sys.get_int_max_str_digits)"
                raise ValueError(msg) from None
            text_key, label_key = self.text_key, self.label_key
            if isinstance(record, list):
                raise ValueError(self._array_error(number))
            if not isinstance(record, dict):
                msg = f"{self.path} line {number}: expected a JSON object with a string {_shown(text_key)}; got {_json_kind(record)}"
                raise ValueError(msg)
            if not isinstance(record.get(text_key), str):
                if text_key in record:
                    msg = (f"{self.path} line {number}: {_shown(text_key)} must be a string; "
                           f"got {_json_kind(record[text_key])}")
                else:
                    msg = (f"{self.path} line {number}: expected an object with a string {_shown(text_key)}; "
                           f"its keys are {_keys_text(record)} (--text-key and --label-key name the keys to read)")
                raise ValueError(msg)
            label = record.get(label_key)
            if label is None and labels:
                msg = (f"{self.path} line {number}: no {_shown(label_key)}; the object's keys are "
                       f"{_keys_text(record)} (--label-key names the key of the label)")
                raise ValueError(msg)
            if label is not None and (not isinstance(label, (str, int, float)) or label == ""):
                raise ValueError(f"{self.path} line {number}: {_shown(label_key)} must be a non-empty string or a number")
            if isinstance(label, float) and not np.isfinite(label):
                raise ValueError(f"{self.path} line {number}: {_shown(label_key)} is NaN or infinite")
            texts.append(record[text_key])
            found.append(label)
        y = None if not found or any(v is None for v in found) else np.array([_label_text(v) for v in found])
        return Chunk(self._hashed(block, texts), y, block.lines, block.nbytes)

    def _array_error(self, number):
        return (f"{self.path} line {number}: a JSON array, where JSON lines are expected (one object per line: "
                "jq -c '.[]' converts an array)")


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


def _text_transform(params):
    """``transform(texts)`` of the HashingVectorizer of ``params`` (a dict of its parameters).
    Without stop words, nbgpu's fast path (the same matrix), which needs no scikit-learn."""
    from ..text._transform import DEFAULTS, fast_plan, hashed_matrix

    plan = fast_plan(params)
    if plan is None or plan.stop_words is not None:  # the estimator (its stop-word warning)
        from ..text import HashingVectorizer

        hashed = HashingVectorizer(**params).transform
    else:

        def hashed(texts):
            X = hashed_matrix(texts, plan)
            if X is None:  # texts (JSON strings) that UTF-8 cannot encode
                raise ValueError("a text holds a lone surrogate (U+D800 to U+DFFF), which is not Unicode text")
            return X

    settings = {**DEFAULTS, **params}

    def transform(texts):
        # Neither the fast path nor scikit-learn's transform takes an empty list.
        if not texts:
            dtype = np.dtype(settings["dtype"])
            return _csr(np.empty(0, dtype), np.empty(0, np.int32), np.zeros(1, np.int32), 0, settings["n_features"])
        return hashed(texts)

    return transform


def _label_text(value):
    if isinstance(value, bool):
        return str(value).lower()  # JSON's spelling
    if isinstance(value, float) and value == int(value):
        return str(int(value))  # 3.0 is the label 3
    return str(value)


# --------------------------------------------------------------------------- #
# Opening a file, and reading it ahead of the caller
# --------------------------------------------------------------------------- #
def detect_format(path, given="auto"):
    """The format named by ``given``, or told by the file's extension."""
    if given != "auto":
        return given
    name = Path(path)
    if name.suffix.lower() == ".gz":  # data.csv.gz: the format of data.csv
        name = Path(name.stem)
    fmt = _SUFFIXES.get(name.suffix.lower())
    if fmt is None:
        msg = (
            f"cannot tell the format of {path} from its extension; name it "
            f"(--format {{{','.join(FORMATS)}}}) or use one of {sorted(_SUFFIXES)} (each also gzip-compressed, + .gz)"
        )
        raise ValueError(msg)
    return fmt


def is_regular_file(path):
    """True for a regular file (it can be read twice); False for FIFOs, devices."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def open_reader(path, fmt="auto", *, vectorizer=None, **options):
    """A reader for ``path`` (``vectorizer``: the HashingVectorizer's parameters, for text); a
    ValueError if the file cannot be opened or its format is unknown. A reader imports what it
    needs here, in the calling thread: two threads importing the same packages can deadlock."""
    import scipy.sparse  # noqa: F401  (what every reader builds its chunks with)

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
    if fmt == "npz" and not stat.S_ISREG(mode):
        raise ValueError(f"{path}: an .npz archive must be a regular file (a zip archive cannot be streamed)")
    if fmt == "npz" and is_gzip(path):
        raise ValueError(f"{path}: an .npz archive cannot be read gzip-compressed (it is a zip archive, compressed already)")
    if fmt == "jsonl" and vectorizer is None:
        raise ValueError(f"{path} is JSON-lines text, but the model was not trained on text")
    if fmt == "csv" and (vectorizer is not None or options.get("text_column") is not None):
        if vectorizer is None:
            raise ValueError(f"{path}: a text column (--text-column), but the model was not trained on text")
        if options.get("text_column") is None:
            msg = (f"the model was trained on JSON-lines text or a CSV column of text; {path} is CSV: "
                   "--text-column names its column of text")
            raise ValueError(msg)
    elif fmt != "jsonl" and vectorizer is not None:
        raise ValueError(f"the model was trained on JSON-lines text or a CSV column of text; {path} is {fmt}")
    reader = {"svmlight": SvmlightReader, "npz": NpzReader, "csv": CsvReader, "jsonl": JsonlReader}[fmt]
    return reader(path, vectorizer=vectorizer, **options)


def parsed_chunks(reader, *, labels, finish=None, depth=1):
    """The chunks of ``reader``, read and parsed (then ``finish(chunk) -> chunk``) in a thread from
    now on, at most ``depth`` waiting: memory holds ``depth + 2`` chunks. An empty chunk has
    ``X=None`` (its bytes still count for progress)."""
    from .._interop.streaming import _Prefetcher as Prefetcher

    def produce(_, block):
        chunk = reader.parse(block, labels=labels)
        if chunk.X.shape[0] == 0:
            return chunk._replace(X=None)
        return chunk if finish is None else finish(chunk)

    return _blas_on_one_thread(Prefetcher(reader.blocks(), produce, depth))


def _blas_on_one_thread(chunks):
    """``chunks``, consumed with BLAS on one thread: the reader thread keeps a
    core busy, and BLAS threads that spin on every core (OpenBLAS waits busily
    between calls) would slow training on small chunks."""
    from .._array.threads import blas_single_thread

    with blas_single_thread():
        yield from chunks
