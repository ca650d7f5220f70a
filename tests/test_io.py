"""File readers: blocks that end at line ends, formats, labels, and their error messages."""

import io
import json
import os
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.feature_extraction.text import HashingVectorizer

from nbgpu._app.readers import (
    align_labels,
    detect_format,
    open_reader,
    parsed_chunks,
    read_blocks,
    typed_labels,
)


def _read(reader, *, labels=True, finish=None):
    """Every non-empty chunk of ``reader``, read and parsed in the background thread."""
    return [c for c in parsed_chunks(reader, labels=labels, finish=finish) if c.X is not None]


def _concat(chunks):
    Xs = [c.X for c in chunks]
    X = sp.vstack(Xs).toarray() if sp.issparse(Xs[0]) else np.vstack(Xs)
    ys = [c.y for c in chunks]
    return X, (None if ys[0] is None else np.concatenate(ys))


def _layout(reader, **kwargs):
    return lambda chunk: chunk._replace(X=reader.layout(chunk, **kwargs))


@pytest.fixture
def svm_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.poisson(0.7, size=(200, 30)).astype(float)
    X[:, 0] = 0  # column 0 never stored: the file alone looks one-based
    X[0, 29] = 3  # so the last column is seen
    y = rng.integers(0, 4, size=200)
    path = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(path), zero_based=True)
    return path, X, y


def test_blocks_end_at_line_ends_and_number_their_lines(tmp_path):
    lines = [f"line {i} " + "x" * (i % 13) + "\n" for i in range(100)] + ["a line longer than a block " * 20 + "\n", "last, no newline"]
    path = tmp_path / "t.txt"
    path.write_text("".join(lines))
    blocks = list(read_blocks(path, 50))
    assert b"".join(b.data for b in blocks) == path.read_bytes()
    assert len(blocks) > 20
    for block in blocks[:-1]:
        assert block.data.endswith(b"\n")
        assert block.data.split(b"\n")[0].decode() + "\n" == lines[block.first - 1]
    assert blocks[-1].data == b"last, no newline" and blocks[-1].first == len(lines)
    assert sum(b.nbytes for b in blocks) == path.stat().st_size
    # The first block of a CSV holds the header and the row after it.
    assert next(iter(read_blocks(path, 5, min_lines=2))).data.count(b"\n") == 2


def test_svmlight_in_small_blocks_equals_one_read(svm_file):
    path, X, y = svm_file
    reader = open_reader(path, chunk_bytes=97, zero_based=True)
    chunks = _read(reader, finish=_layout(reader, zero_based=True, n_features=30))
    assert len(chunks) > 20  # really chunked
    Xr, yr = _concat(chunks)
    np.testing.assert_array_equal(Xr, X)
    np.testing.assert_array_equal(yr, y)
    # Without a layout, a chunk's columns are the file's indices as written.
    raw = _read(open_reader(path, chunk_bytes=97))
    assert max(c.X.shape[1] for c in raw) == 30 and min(c.X.shape[1] for c in raw) < 30


def test_svmlight_one_based_layout_and_errors(svm_file, tmp_path):
    path, _X, _ = svm_file
    reader = open_reader(path, chunk_bytes=97)
    Xs, _ = load_svmlight_file(str(path))  # scikit-learn's own guess: one-based (no index 0)
    Xr, _ = _concat(_read(reader, finish=_layout(reader, zero_based=False, n_features=Xs.shape[1])))
    np.testing.assert_array_equal(Xr, Xs.toarray())
    with pytest.raises(ValueError, match=r"d.svm line 1: more features than the 10 the model has \(feature index 29\)"):
        _read(reader, finish=_layout(reader, zero_based=True, n_features=10))
    zero = tmp_path / "z.svm"
    zero.write_text("1 0:1 3:2\n")
    reader = open_reader(zero)
    with pytest.raises(ValueError, match="z.svm line 1: feature index 0 in a file read as one-based"):
        _read(reader, finish=_layout(reader, zero_based=False, n_features=5))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 0:1 2:3\nthis is not svmlight\n", r"bad.svm line 2: not a valid svmlight/libsvm line \(could not convert"),
        ("1 0:1\n1 3:1 2:1\n", r"bad.svm line 2: not a valid svmlight/libsvm line \(Feature indices .* sorted"),
        ("1 0:1\n0 4000000000:1\n", r"bad.svm line 2: not a valid svmlight/libsvm line \(a feature index is larger than 2147483647\)"),
        ("1 0:1\n0 -3:1\n", r"bad.svm line 2: not a valid svmlight/libsvm line \(Invalid index -3"),
        ("1 0:1\nnan 1:1\n", r"bad.svm lines 1-2: a label is NaN or infinite"),
        # a lone \r (in a comment) ends no line: the bad line is still line 5 (was "line 3", a piece of the comment)
        ("1 1:1\n0 1:1 #a\rb\n1 1:3\n0 1:2\nbad line\n", r"bad.svm line 5: .*could not convert string to float: b'bad'"),
    ],
)
def test_svmlight_errors_name_the_line(tmp_path, text, message):
    bad = tmp_path / "bad.svm"
    bad.write_text(text)
    with pytest.raises(ValueError, match=message):
        _read(open_reader(bad))


def test_npz_sparse_and_dense(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(50, 8, density=0.3, format="csc", random_state=1)
    y = rng.choice(["a", "b"], size=50)
    path = tmp_path / "s.npz"
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, format=X.format, y=y)
    reader = open_reader(path, chunk_bytes=100)
    chunks = _read(reader, finish=_layout(reader, n_features=8))
    assert len(chunks) > 1
    Xr, yr = _concat(chunks)
    np.testing.assert_allclose(Xr, X.toarray())
    np.testing.assert_array_equal(yr, y)
    # scipy's own writer (format stored as bytes), labels added beside it.
    sp.save_npz(tmp_path / "t.npz", X.tocsr(), compressed=False)
    with np.load(tmp_path / "t.npz") as f:
        np.savez(tmp_path / "u.npz", **{k: f[k] for k in f.files}, y=y)
    np.testing.assert_allclose(_concat(_read(open_reader(tmp_path / "u.npz")))[0], X.toarray())
    dense = tmp_path / "d.npz"
    np.savez(dense, X=X.toarray(), y=y)
    reader = open_reader(dense)
    np.testing.assert_allclose(_concat(_read(reader, finish=_layout(reader, n_features=8)))[0], X.toarray())
    with pytest.raises(ValueError, match="has 8 features but the model expects 9"):
        _read(reader, finish=_layout(reader, n_features=9))
    np.savez(tmp_path / "w.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="expected a sparse matrix"):
        _read(open_reader(tmp_path / "w.npz"))
    np.savez(tmp_path / "nolabels.npz", X=X.toarray())
    with pytest.raises(ValueError, match="holds no labels"):
        _read(open_reader(tmp_path / "nolabels.npz"))
    assert _read(open_reader(tmp_path / "nolabels.npz"), labels=False)[0].y is None


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"indices": np.array([0, 10**9]), "indptr": np.array([0, 1, 2])}, "inconsistent"),
        ({"indices": np.array([0, 1]), "indptr": np.array([0, 2, 1])}, "inconsistent"),
        ({"indices": np.array([0, 1]), "indptr": np.array([0, 1])}, "inconsistent"),
        ({"indices": np.array([0, 1]), "indptr": np.array([0, 1, 5])}, "inconsistent"),
    ],
)
def test_npz_refuses_corrupt_sparse_index_arrays(tmp_path, arrays, message):
    path = tmp_path / "bad.npz"
    np.savez(path, data=np.ones(2), shape=np.array([2, 64]), format=np.array("csr"), y=np.array([0, 1]), **arrays)
    with pytest.raises(ValueError, match=message):
        _read(open_reader(path))


def test_npz_object_arrays_are_refused_without_pickle_advice(tmp_path):
    path = tmp_path / "obj.npz"
    np.savez(path, X=np.ones((2, 2)), y=np.array([None, "a"], dtype=object))
    with pytest.raises(ValueError, match="holds object arrays") as info:
        _read(open_reader(path))
    assert "allow_pickle" not in str(info.value)
    text = tmp_path / "text.npz"
    text.write_text("1 0:1\n")
    with pytest.raises(ValueError, match="not a readable .npz archive") as info:
        _read(open_reader(text))
    assert "pickle" not in str(info.value)


def test_csv_header_label_column_and_predict_layout(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("f1,label,f2\n1,spam,2\n3,ham,4\n\n5,spam,6\n")
    reader = open_reader(path, chunk_bytes=8)
    X, y = _concat(_read(reader))
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(y, ["spam", "ham", "spam"])
    assert reader.label_note is None
    nohead = tmp_path / "n.csv"
    nohead.write_text("1,2,0\n3,4,1\n")
    reader = open_reader(nohead)
    X, y = _concat(_read(reader))
    assert X.shape == (2, 2) and typed_labels(y).dtype == np.int64
    assert "the last column (2) is taken as the label" in reader.label_note
    first = open_reader(nohead, label_column="0")
    np.testing.assert_array_equal(_concat(_read(first))[1], ["1", "3"])
    named = tmp_path / "named.csv"
    named.write_text("a,b,kind\n1,2,x\n")
    reader = open_reader(named)
    _read(reader)
    assert "no column named 'label'; the last column ('kind') is taken as the label" in reader.label_note
    features_only = tmp_path / "f.csv"
    features_only.write_text("1,2\n3,4\n")
    assert _read(open_reader(features_only, n_features=2), labels=False)[0].y is None
    with pytest.raises(ValueError, match="has 2 columns; the model expects 5"):
        _read(open_reader(features_only, n_features=5), labels=False)


def test_csv_empty_field_is_a_missing_value(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("a,b,label\n1,,x\n,2,y\n")
    X, _ = _concat(_read(open_reader(path)))
    np.testing.assert_array_equal(np.isnan(X), [[False, True], [True, False]])


def test_jsonl_vectorised_per_chunk_like_one_call(tmp_path):
    docs = [{"text": f"word{i % 7} common text {i}", "label": ["x", "y", 3][i % 3]} for i in range(40)]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    vec = HashingVectorizer(n_features=64, alternate_sign=False, norm=None)
    chunks = _read(open_reader(path, vectorizer=vec.get_params(), chunk_bytes=50))
    assert len(chunks) > 10
    X, y = _concat(chunks)
    np.testing.assert_array_equal(X, vec.transform([d["text"] for d in docs]).toarray())
    np.testing.assert_array_equal(y, [str(d["label"]) for d in docs])  # labels as text: 3 and "3" are one label


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("r.csv", "1,2,0\n3,4\n", "r.csv line 2: 2 fields where the first row has 3"),
        ("r.csv", "a,b,label\n1,x,0\n", "r.csv line 2: feature values must be numbers; got 'x'"),
        ("r.csv", "a,b,label\n1,2,0\n1,2,\n", "r.csv line 3: the label is empty"),
        ("r.csv", "a,b,label\n1,2,0\n1,\xff,1\n", r"r.csv line 3: not valid UTF-8 text \(byte 0xff\)"),
        ("b.jsonl", '{"text": "ok", "label": 1}\n{"text": "missing quote}\n', "b.jsonl line 2: not valid JSON"),
        ("b.jsonl", '{"text": "ok", "label": 1}\n{"label": 2}\n', 'b.jsonl line 2: expected an object with a string "text"'),
        ("b.jsonl", '{"text": "ok", "label": 1}\n{"text": "x"}\n', 'b.jsonl line 2: no "label"'),
        ("b.jsonl", '{"text": "ok", "label": [1]}\n', 'b.jsonl line 1: "label" must be a non-empty string or a number'),
        # (was: 'no "label"; the object's keys are ["text", "label"]')
        ("b.jsonl", '{"text": "ok", "label": null}\n', 'b.jsonl line 1: "label" is null; expected a non-empty string'),
        ("b.jsonl", '{"text": "ok", "label": NaN}\n', 'b.jsonl line 1: "label" is NaN or infinite'),
        ("b.jsonl", '{"text": "ok", "label": 1}\n\n{"text": "\xe9", "label": 1}\n', r"b.jsonl line 3: not valid UTF-8 text"),
    ],
)
def test_text_errors_name_the_file_and_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1"))
    vec = HashingVectorizer(n_features=64, alternate_sign=False, norm=None) if name.endswith(".jsonl") else None
    with pytest.raises(ValueError, match=message):
        _read(open_reader(path, vectorizer=vec and vec.get_params()))


def test_jsonl_needs_a_text_model_and_a_text_model_needs_jsonl(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "a", "label": 1}\n')
    vec = HashingVectorizer(n_features=64)
    with pytest.raises(ValueError, match="not trained on text"):
        open_reader(path)
    with pytest.raises(ValueError, match="trained on JSON-lines text"):
        open_reader(path, "csv", vectorizer=vec.get_params())


def test_format_detection_and_unusable_files(tmp_path):
    assert detect_format("a.SVM") == "svmlight" and detect_format("x.bin", "npz") == "npz"
    with pytest.raises(ValueError, match="cannot tell the format"):
        detect_format("data.bin")
    with pytest.raises(ValueError, match="no such file"):
        open_reader(tmp_path / "nope.csv")
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="is empty"):
        open_reader(empty)
    with pytest.raises(ValueError, match="is a directory"):
        open_reader(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_is_read_like_a_file_except_npz(tmp_path, svm_file):
    path, X, y = svm_file
    fifo = tmp_path / "pipe.svm"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(path.read_bytes()))
    writer.start()
    reader = open_reader(fifo, chunk_bytes=200)
    Xr, yr = _concat(_read(reader, finish=_layout(reader, zero_based=True, n_features=30)))
    writer.join()
    np.testing.assert_array_equal(Xr, X)
    np.testing.assert_array_equal(yr, y)
    with pytest.raises(ValueError, match="must be a regular file"):
        open_reader(fifo, "npz")


def test_labels_typed_and_aligned():
    assert typed_labels(np.array(["1", "2"])).dtype == np.int64
    assert typed_labels(np.array([1.0, 2.0])).dtype == np.int64
    assert typed_labels(np.array([1.5, 2.0])).dtype == np.float64
    assert typed_labels(np.array(["a", "2"])).dtype.kind == "U"
    assert typed_labels(np.array(["99999999999999999999"])).dtype.kind == "U"  # too large for int64: text
    np.testing.assert_array_equal(align_labels(np.array(["3", "1"]), np.array([1, 3]), where="f"), [3, 1])
    np.testing.assert_array_equal(align_labels(np.array([1.0]), np.array([1, 3]), where="f"), [1])
    with pytest.raises(ValueError, match=r"f has label\(s\) \['1.5'\] the model does not know"):
        align_labels(np.array([1.5]), np.array([1, 3]), where="f")
    with pytest.raises(ValueError, match=r"\['dog'\]"):
        align_labels(np.array(["cat", "dog"]), np.array(["cat"]), where="f")


def test_progress_bar_only_on_a_terminal(monkeypatch):
    import io
    import sys

    from tqdm import tqdm

    from nbgpu._interop.progress import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    bar = progress("reading", total=10)
    assert isinstance(bar, tqdm) and bar.unit == " rows"
    bar.update(10)
    bar.close()
    bar = progress("reading", total=2048, unit="B")
    assert bar.unit == "B" and bar.unit_divisor == 1024
    bar.close()
    assert not isinstance(progress("reading", quiet=True), tqdm)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe or a file: no bar
    assert not isinstance(progress("reading"), tqdm)


def test_a_line_beyond_the_record_limit_is_refused_not_read_whole(tmp_path, monkeypatch):
    """A file with no line end (or a CSV quote never closed) is refused past
    RECORD_BLOCKS blocks (and MIN_RECORD_LIMIT), on a pipe too, where it was
    read whole into memory; a long line within the limit is one block."""
    from nbgpu._app import readers

    monkeypatch.setattr(readers, "MIN_RECORD_LIMIT", 0)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"a" * 6000 + b"\n" + b"b" * 100 + b"\n")
    blocks = list(readers.read_blocks(path, 1024))
    assert b"".join(b.data for b in blocks) == path.read_bytes() and all(b.data.endswith(b"\n") for b in blocks)
    path.write_bytes(b"a" * 6000 + b"\n" + b"b" * 20_000 + b"\n")
    with pytest.raises(ValueError, match=r"long.jsonl line 2: no line ends within 0.0078125 MiB .*8 blocks"):
        list(readers.read_blocks(path, 1024))
    # Just past the limit (8 KiB): refused too, not let through by a read that doubled past it.
    path.write_bytes(b"a" * 6000 + b"\n" + b"b" * 8192 + b"\n")
    with pytest.raises(ValueError, match=r"long.jsonl line 2: no line ends within"):
        list(readers.read_blocks(path, 1024))
    path.write_bytes(b"a" * 6000 + b"\n" + b"b" * 8191 + b"\n")  # the line end is the limit's last byte
    assert b"".join(b.data for b in readers.read_blocks(path, 1024)) == path.read_bytes()
    quote = tmp_path / "q.csv"
    quote.write_bytes(b'a,label\n"open,x\n' + b"more,y\n" * 3000)
    with pytest.raises(ValueError, match="q.csv line 2: no line ends within .*a CSV quote never closed"):
        list(readers.read_blocks(quote, 1024, record_end=readers.csv_record_end))


def test_csv_blocks_end_where_the_csv_reader_ends_a_record(tmp_path):
    """Blocks ended at a line end after an even number of quotes: a literal quote
    (5" in an unquoted field, one after a closed field) shifted every later cut into
    a quoted field, and records (so the model) changed with --chunk-mb. Random CSV
    text cut into blocks of every size reads as csv.reader reads it whole."""
    import csv
    import random

    from nbgpu._app import readers

    rng = random.Random(0)
    pieces = ["a", "bb", " ", '5" screen', '"', '""', ",", "\n", '"x\ny"', '"q""r"', '"s"t', 'u"v', '"w,z"', "\r\n"]
    path = tmp_path / "r.csv"
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 60))) + "\n"
        path.write_text(text, newline="")
        whole = list(csv.reader(io.StringIO(text)))
        for chunk in (1, 5, 16):
            blocks = readers.read_blocks(path, chunk, record_end=readers.csv_record_end)
            assert [row for b in blocks for row in csv.reader(io.StringIO(b.data.decode()))] == whole, (text, chunk)


def test_npz_reads_only_its_data_each_checked_against_memory(tmp_path, monkeypatch):
    """Every member was read (a small file could expand to gigabytes of arrays it does
    not use; here an object array it cannot read), and a MemoryError was reported as
    'not a readable .npz archive'."""
    from nbgpu._app import readers

    path = tmp_path / "d.npz"
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6) % 2
    np.savez(path, X=X, y=y, notes=np.array([{"a": 1}], dtype=object))
    chunks = list(_read(open_reader(path)))
    np.testing.assert_array_equal(np.concatenate([c.X for c in chunks]), X)
    monkeypatch.setattr(readers, "machine_memory", lambda: 64)
    with pytest.raises(ValueError, match=r"d.npz: array 'X' holds 0.0 GiB, more than this machine's 0 GiB"):
        list(_read(open_reader(path)))


def test_a_byte_order_mark_at_the_start_is_not_text(tmp_path):
    """A UTF-8 BOM (Windows tools write one) made JSON lines 'not valid JSON' and
    renamed a CSV's first column ('\\ufefflabel': the label column was missed)."""
    csv_path, jsonl = tmp_path / "b.csv", tmp_path / "b.jsonl"
    csv_path.write_bytes(b"\xef\xbb\xbflabel,f1\na,1\nb,2\n")
    chunks = list(_read(open_reader(csv_path)))
    assert chunks[0].y.tolist() == ["a", "b"]
    vec = HashingVectorizer(n_features=64, alternate_sign=False, norm=None).get_params()
    jsonl.write_bytes(b'\xef\xbb\xbf{"text": "a b", "label": "x"}\n{"text": "c d", "label": "y"}\n')
    assert [c.y.tolist() for c in _read(open_reader(jsonl, vectorizer=vec))] == [["x", "y"]]
    jsonl.write_bytes(b'\xef\xbb\xbf{"text": "a b", "label": "x"}\n{"text": "c \xff", "label": "y"}\n')
    with pytest.raises(ValueError, match=r"b.jsonl line 2: not valid UTF-8 text \(byte 0xff\)"):
        list(_read(open_reader(jsonl, vectorizer=vec)))
