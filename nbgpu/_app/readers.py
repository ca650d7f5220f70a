"""Reading training and scoring data from files, in chunks.

Every reader yields ``(X, y)`` chunks of about ``chunk_bytes`` of file, so a
file larger than memory streams through ``partial_fit``:

- svmlight / libsvm: scikit-learn's ``load_svmlight_file`` with ``offset``
  and ``length`` (every line belongs to exactly one byte range);
- ``.npz``: a scipy sparse matrix (the arrays ``scipy.sparse.save_npz``
  writes) or a dense array ``X``, with labels ``y``; read whole, chunked by rows;
- CSV: dense features and a label column (header row optional);
- JSON lines ``{"text": ..., "label": ...}``: vectorised chunk by chunk with
  scikit-learn's ``HashingVectorizer``.

Errors are ValueErrors whose message names the file (and the line where
there is one), for the command line to print as one line.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np

from .._array.sparse import host_sparse
from .._interop.progress import progress
from .._interop.streaming import svmlight_byte_ranges

FORMATS = ("svmlight", "npz", "csv", "jsonl")
_SUFFIXES = {
    ".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight",
    ".npz": "npz", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
}
CHUNK_BYTES = 64 * 2**20
# Text vectorizer defaults for naive Bayes: raw counts, no sign flipping.
TEXT_DEFAULTS = {"n_features": 2**20, "alternate_sign": False, "norm": None}


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
        except ValueError:
            return a.astype(str)
    return a


def align_labels(y, classes, *, where):
    """``y`` converted to the dtype of ``classes``; unknown labels raise."""
    classes = np.asarray(classes)
    y = np.asarray(y)
    converted = y
    if y.dtype.kind != classes.dtype.kind:
        try:
            converted = y.astype(classes.dtype) if classes.dtype.kind in "US" else y.astype(classes.dtype.type)
        except (ValueError, TypeError):
            converted = None
        if converted is not None and y.dtype.kind == "f" and not np.all(converted == y):
            converted = None  # e.g. 1.5 would truncate to 1
    found = np.zeros(y.shape, dtype=bool) if converted is None else np.isin(converted, classes)
    if not np.all(found):
        unknown = np.unique(y[~found].astype(str))
        msg = (
            f"{where} has label(s) {unknown[:10].tolist()} the model does not know "
            f"(its classes: {classes.tolist()[:20]})"
        )
        raise ValueError(msg)
    return converted


# --------------------------------------------------------------------------- #
# Readers
# --------------------------------------------------------------------------- #
class Scan:
    """What a first pass over a training file finds."""

    def __init__(self, classes, n_features, n_rows):
        self.classes, self.n_features, self.n_rows = classes, n_features, n_rows


def _line_chunks(path, chunk_bytes):
    """``(first line number, [lines])`` of about ``chunk_bytes`` each, blank lines dropped."""
    lines, size, first, number = [], 0, 1, 0
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if not lines:
                first = number
            if raw.strip():
                lines.append((number, raw))
            size += len(raw)
            if size >= chunk_bytes and lines:
                yield first, lines
                lines, size = [], 0
    if lines:
        yield first, lines


class SvmlightReader:
    """svmlight/libsvm files, in byte ranges."""

    format = "svmlight"

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, dtype=np.float64, zero_based=None):
        self.path, self.chunk_bytes, self.dtype = path, int(chunk_bytes), dtype
        self.zero_based = zero_based  # None: decided by scan() (scikit-learn's rule)

    @property
    def settings(self):
        return {"format": self.format, "zero_based": True if self.zero_based is None else self.zero_based}

    def _ranges(self, n_features, zero_based):
        return svmlight_byte_ranges(
            self.path, n_features=n_features, chunk_bytes=self.chunk_bytes, dtype=self.dtype, zero_based=zero_based
        )

    def scan(self, *, quiet=False):
        bar = progress(f"scanning {Path(self.path).name}", quiet=quiet)
        labels, low, high, rows = [], None, -1, 0
        for X, y in self._ranges(2**40, True):
            labels.append(np.unique(y))
            if X.nnz:
                low = int(X.indices.min()) if low is None else min(low, int(X.indices.min()))
                high = max(high, int(X.indices.max()))
            rows += X.shape[0]
            bar.update(X.shape[0])
        bar.close()
        if rows == 0:
            raise ValueError(f"{self.path} holds no data rows")
        if self.zero_based is None:
            self.zero_based = low == 0 if low is not None else True
        n_features = max(high + (1 if self.zero_based else 0), 1)
        return Scan(typed_labels(np.unique(np.concatenate(labels))), n_features, rows)

    def batches(self, *, n_features, labels=True):
        zero_based = True if self.zero_based is None else self.zero_based
        for X, y in self._ranges(n_features, zero_based):
            yield X, typed_labels(y)


class NpzReader:
    """``.npz`` archives: a scipy sparse matrix or a dense ``X``, with labels ``y``."""

    format = "npz"

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, **_):
        self.path, self.chunk_bytes = path, int(chunk_bytes)
        self._data = None

    settings = property(lambda self: {"format": self.format})

    def _load(self):
        if self._data is not None:
            return self._data
        try:
            with np.load(self.path, allow_pickle=False) as archive:
                arrays = {k: archive[k] for k in archive.files}
        except Exception as exc:  # not a zip, object arrays, truncated...
            msg = f"{self.path} is not a readable .npz archive of arrays ({exc})"
            raise ValueError(msg) from exc
        if {"data", "indices", "indptr", "shape"} <= set(arrays):
            fmt = arrays.get("format", np.array("csr"))
            fmt = fmt.item().decode() if fmt.dtype.kind == "S" else str(fmt)
            try:
                X = host_sparse(fmt, arrays["data"], arrays["indices"], arrays["indptr"], arrays["shape"]).tocsr()
            except Exception as exc:
                msg = f"{self.path}: its sparse matrix arrays are inconsistent ({exc})"
                raise ValueError(msg) from exc
        elif "X" in arrays:
            X = arrays["X"]
            if X.ndim != 2:
                msg = f"{self.path}: `X` must be 2-D; got shape {X.shape}"
                raise ValueError(msg)
        else:
            msg = (
                f"{self.path} holds arrays {sorted(arrays)}; expected a sparse matrix "
                "(data, indices, indptr, shape, format: what scipy.sparse.save_npz writes) "
                "or a dense array `X`, and labels `y`"
            )
            raise ValueError(msg)
        y = arrays.get("y")
        if y is not None and y.shape != (X.shape[0],):
            msg = f"{self.path}: `y` has shape {y.shape} but X has {X.shape[0]} rows"
            raise ValueError(msg)
        if X.shape[0] == 0:
            raise ValueError(f"{self.path} holds no data rows")
        self._data = X, y
        return self._data

    def scan(self, *, quiet=False):
        X, y = self._load()
        if y is None:
            raise ValueError(f"{self.path} holds no labels `y`; training needs them")
        return Scan(np.unique(y), X.shape[1], X.shape[0])

    def batches(self, *, n_features, labels=True):
        X, y = self._load()
        if X.shape[1] != n_features:
            msg = f"{self.path} has {X.shape[1]} features but the model expects {n_features}"
            raise ValueError(msg)
        if labels and y is None:
            raise ValueError(f"{self.path} holds no labels `y`")
        row_bytes = max(1, (X.nnz if hasattr(X, "nnz") else X.size) * 12 // max(X.shape[0], 1))
        step = max(1, self.chunk_bytes // row_bytes)
        for start in range(0, X.shape[0], step):
            yield X[start : start + step], None if y is None else y[start : start + step]


class CsvReader:
    """CSV with dense numeric features and one label column; header optional."""

    format = "csv"

    def __init__(self, path, *, chunk_bytes=CHUNK_BYTES, dtype=np.float64, label_column=None, **_):
        self.path, self.chunk_bytes, self.dtype = path, int(chunk_bytes), dtype
        self.label_column = label_column
        self._layout = None

    @property
    def settings(self):
        return {"format": self.format, "label_column": self.label_column}

    def _head(self):
        """(has_header, column names) from the first two lines."""
        if self._layout is None:
            rows = []
            with open(self.path, newline="", encoding="utf-8") as f:
                for row in csv.reader(f):
                    if row:
                        rows.append(row)
                    if len(rows) == 2:
                        break
            if not rows:
                raise ValueError(f"{self.path} holds no data rows")
            first = rows[0]
            numeric = [_is_number(v) for v in first]
            if len(rows) == 2:
                has_header = any(_is_number(b) and not a for a, b in zip(numeric, rows[1]))
            else:
                has_header = not any(numeric)
            names = [v.strip() for v in first] if has_header else [str(i) for i in range(len(first))]
            self._layout = has_header, names
        return self._layout

    def _label_index(self, n_features):
        """Index of the label column, or None when the file has only features."""
        has_header, names = self._head()
        n_columns = len(names)
        if n_features is not None and n_columns == n_features:
            return None
        if n_features is not None and n_columns != n_features + 1:
            msg = (
                f"{self.path} has {n_columns} columns; the model expects {n_features} "
                "features (plus an optional label column)"
            )
            raise ValueError(msg)
        if n_columns < 2:
            raise ValueError(f"{self.path} needs at least one feature column and a label column")
        column = self.label_column
        if column is None:
            return names.index("label") if has_header and "label" in names else n_columns - 1
        if has_header and column in names:
            return names.index(column)
        try:
            index = int(column)
        except ValueError:
            index = None
        if index is None or not -n_columns <= index < n_columns:
            msg = f"{self.path}: no label column {column!r} (columns: {names[:20]})"
            raise ValueError(msg)
        return index % n_columns

    def _chunks(self, n_features):
        has_header, names = self._head()
        label = self._label_index(n_features)
        skip = 1 if has_header else 0
        for first, lines in _line_chunks(self.path, self.chunk_bytes):
            if skip:
                lines, skip = lines[1:], 0
                if not lines:
                    continue
            text = [raw.decode("utf-8", errors="replace") for _, raw in lines]
            rows = list(csv.reader(text))
            for (number, _), row in zip(lines, rows):
                if len(row) != len(names):
                    msg = f"{self.path} line {number}: {len(row)} fields where the first row has {len(names)}"
                    raise ValueError(msg)
            table = np.array(rows, dtype=str)
            features = table if label is None else np.delete(table, label, axis=1)
            try:
                X = features.astype(self.dtype)
            except ValueError as exc:
                msg = f"{self.path} lines {lines[0][0]}-{lines[-1][0]}: feature values must be numbers ({exc})"
                raise ValueError(msg) from exc
            yield X, None if label is None else np.char.strip(table[:, label])

    def scan(self, *, quiet=False):
        bar = progress(f"scanning {Path(self.path).name}", quiet=quiet)
        labels, rows, width = [], 0, None
        for X, y in self._chunks(None):
            labels.append(np.unique(y))
            rows += X.shape[0]
            width = X.shape[1]
            bar.update(X.shape[0])
        bar.close()
        if rows == 0:
            raise ValueError(f"{self.path} holds no data rows")
        return Scan(typed_labels(np.unique(np.concatenate(labels))), width, rows)

    def batches(self, *, n_features, labels=True):
        for X, y in self._chunks(n_features):
            if labels and y is None:
                raise ValueError(f"{self.path} has no label column (it has exactly {n_features} columns)")
            yield X, y


class JsonlReader:
    """JSON lines ``{"text": ..., "label": ...}`` vectorised by a HashingVectorizer."""

    format = "jsonl"

    def __init__(self, path, *, vectorizer, chunk_bytes=CHUNK_BYTES, **_):
        self.path, self.chunk_bytes, self.vectorizer = path, int(chunk_bytes), vectorizer

    settings = property(lambda self: {"format": self.format})

    def _records(self, need_labels):
        for _, lines in _line_chunks(self.path, self.chunk_bytes):
            texts, labels = [], []
            for number, raw in lines:
                try:
                    record = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    raise ValueError(f"{self.path} line {number}: not valid JSON ({exc})") from exc
                if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                    raise ValueError(f'{self.path} line {number}: expected an object with a string "text"')
                label = record.get("label")
                if label is None and need_labels:
                    raise ValueError(f'{self.path} line {number}: no "label"')
                if label is not None and not isinstance(label, (str, int, float)):
                    raise ValueError(f'{self.path} line {number}: "label" must be a string or a number')
                texts.append(record["text"])
                labels.append(label)
            yield texts, labels

    def scan(self, *, quiet=False):
        bar = progress(f"scanning {Path(self.path).name}", quiet=quiet)
        labels, rows = set(), 0
        for texts, chunk_labels in self._records(True):
            labels.update(chunk_labels)
            rows += len(texts)
            bar.update(len(texts))
        bar.close()
        if rows == 0:
            raise ValueError(f"{self.path} holds no data rows")
        kinds = {type(v) for v in labels}
        values = sorted(labels) if len(kinds) == 1 else sorted(map(str, labels))
        return Scan(typed_labels(values), self.vectorizer.n_features, rows)

    def batches(self, *, n_features, labels=True):
        if n_features != self.vectorizer.n_features:
            msg = f"the vectorizer makes {self.vectorizer.n_features} features but the model expects {n_features}"
            raise ValueError(msg)
        for texts, chunk_labels in self._records(labels):
            y = None if any(v is None for v in chunk_labels) else np.asarray(chunk_labels)
            yield self.vectorizer.transform(texts), y


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def detect_format(path, given="auto"):
    """The format named by ``given``, or told by the file's extension."""
    if given != "auto":
        return given
    fmt = _SUFFIXES.get(Path(path).suffix.lower())
    if fmt is None:
        msg = (
            f"cannot tell the format of {path} from its extension; name it "
            f"(--format {{{','.join(FORMATS)}}}) or use one of {sorted(_SUFFIXES)}"
        )
        raise ValueError(msg)
    return fmt


def open_reader(path, fmt="auto", *, vectorizer=None, **options):
    """A reader for ``path``; ``options`` are chunk_bytes, dtype, zero_based, label_column.

    Raises ValueError if the file cannot be opened or its format is unknown.
    """
    if not os.path.isfile(path):
        msg = f"{path}: no such file" if not os.path.exists(path) else f"{path} is not a file"
        raise ValueError(msg)
    if not os.access(path, os.R_OK):
        raise ValueError(f"{path}: permission denied")
    if os.path.getsize(path) == 0:
        raise ValueError(f"{path} is empty")
    fmt = detect_format(path, fmt)
    if fmt == "jsonl":
        if vectorizer is None:
            raise ValueError(f"{path} is JSON-lines text, but the model was not trained on text")
        return JsonlReader(path, vectorizer=vectorizer, **options)
    if vectorizer is not None:
        raise ValueError(f"the model was trained on JSON-lines text; {path} is {fmt}")
    reader = {"svmlight": SvmlightReader, "npz": NpzReader, "csv": CsvReader}[fmt]
    if fmt != "svmlight":
        options.pop("zero_based", None)
    if fmt != "csv":
        options.pop("label_column", None)
    return reader(path, **options)
