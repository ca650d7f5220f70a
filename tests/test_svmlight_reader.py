"""nbgpu's svmlight/libsvm parser (nbgpu/_app/svmlight.py) reads what scikit-learn's
``load_svmlight_file(zero_based=True)`` reads, value for value, and refuses what it refuses,
naming the line."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from nbgpu._app import svmlight
from nbgpu._app.readers import open_reader
from nbgpu._app.svmlight import SvmlightLineError, parse_svmlight


def _ours(data, dtype=np.float64):
    rows = parse_svmlight(data, dtype)
    return sp.csr_matrix((rows.data, rows.indices, rows.indptr), shape=(rows.labels.shape[0], rows.width)), rows.labels


def _theirs(data, dtype=np.float64):
    return load_svmlight_file(io.BytesIO(data), zero_based=True, dtype=dtype)


def _assert_same(data, dtype=np.float64):
    """Both read ``data`` to the same matrix and labels, bit for bit, or both refuse it."""
    try:
        want = _theirs(data, dtype)
    except (ValueError, OverflowError):
        with pytest.raises(SvmlightLineError):
            _ours(data, dtype)
        return
    X, y = _ours(data, dtype)
    Xw, yw = want
    assert X.shape == Xw.shape and X.dtype == Xw.dtype
    np.testing.assert_array_equal(X.indptr, Xw.indptr)
    np.testing.assert_array_equal(X.indices, Xw.indices)
    np.testing.assert_array_equal(X.data.view(np.uint8), Xw.data.view(np.uint8))  # -0.0 and NaN payloads too
    np.testing.assert_array_equal(y.view(np.uint8), yw.view(np.uint8))


def _both_paths(data, dtype=np.float64):
    """The array path gives what the line-by-line path gives (where it takes the slice at all)."""
    fast = svmlight._parse_fast(data, dtype)
    if fast is not None:
        slow = svmlight._parse_lines(data, dtype)
        for got, want in zip(fast, slow):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    return fast is not None


EDGES = [
    b"", b"\n\n", b"# a comment only\n", b"  \t \n", b"1 0:1 3:2.5\n0 1:4 2:1\n", b"1 0:1\n2 1:1",  # no final line end
    b"3\n", b"1 qid:3 1:2\n", b"1 qid:abc 1:2 # c\n", b"1 qidx:3 1:2\n", b"1 qid 1:2\n", b"1 1:2 qid:3\n",
    b"1 1:2:3\n", b"1 1: 2\n", b"1 :2\n", b"1:2 3:4\n", b"1 +3:2\n", b"1 1_0:2\n", b"1 1:1_0\n", b"1_5 1:1\n",
    b"1 1:nan 2:inf 3:-inf 4:Infinity\n", b"nan 1:1\n", b"1 1:1e5 2:1E-3 3:.5 4:5. 5:-0 6:+7 7:-0.0\n",
    b"1 4000000000:1\n", b"1 2147483647:1\n", b"1 2147483648:1\n", b"1 " + b"9" * 5000 + b":1\n", b"1 -3:1\n",
    b"1 -0:1\n", b"1 3:1 3:2\n", b"1 3:1 2:2\n", b"1\t2:3\r\n0 1:1\x0b2:2\x0c\n", b"1 1:2\x00#c\n", b"1 1:2 #c\x00\n",
    b"1 1:0.1234567890123456789 2:12345678901234567 3:123456789012345 4:1234567890123456\n", b"1 1:\xff\n",
    b"1 00000000000000000000003:1\n", b"-1 1:1e39 2:1e-50\n", b"1 1:0x10\n", b"  1   1:1  \n", b"1 1:1 # a:b c\n2 2:2\n",
    b"1.5 0:1\n", b"1 0:-.5 1:-5.\n", b"1 0:-.\n", b"1 0:1e\n", b"1 0:1..2\n", b"1 0:--1\n", b"1 0:1-2\n", b"1 0:1 0\n",
    b"qid:1 1:2\n", b"1 1:1\x01\n", b"#\n1 1:1 #\n#x 2:2\n", b"1 1:1\r\n\r\n2 2:2\r\n", b"1 0:00012.50\n",
    b"\xef\xbb\xbf1 1:1\n",  # a byte order mark: not a number
]


@pytest.mark.parametrize("data", EDGES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_edge_cases_as_sklearn(data, dtype):
    _assert_same(data, dtype)


def _random_file(rng, n_lines):
    lines = []
    for i in range(n_lines):
        k = int(rng.integers(0, 8))
        indices = np.sort(rng.choice(100, k, replace=False))
        form = str(rng.choice(["%d", "%.3f", "%.16g", "%g", "%.2e", "%.15g", "%.17g"]))
        values = [form % v for v in rng.normal(0, 10.0 ** rng.integers(-6, 7), k)]
        label = str(rng.choice(["1", "-1", "2.5", "0", "+3"]))
        qid = f" qid:{i}" if rng.random() < 0.2 else ""
        comment = " # a comment: 1:2" if rng.random() < 0.2 else ""
        lines.append(f"{label}{qid} " + " ".join(f"{a}:{b}" for a, b in zip(indices, values)) + comment)
    return ("\n".join(lines) + str(rng.choice(["\n", ""]))).encode()


@pytest.mark.parametrize("seed", range(20))
def test_random_files_as_sklearn(seed):
    rng = np.random.default_rng(seed)
    data = _random_file(rng, int(rng.integers(0, 60)))
    for dtype in (np.float64, np.float32):
        _assert_same(data, dtype)
    assert _both_paths(data)  # such files take the array path


def test_sklearns_own_files():
    rng = np.random.default_rng(3)
    X = sp.random(200, 50, density=0.2, format="csr", random_state=3, dtype=np.float64)
    X.data = rng.normal(size=X.nnz) * 10.0 ** rng.integers(-8, 8, X.nnz)
    out = io.BytesIO()
    dump_svmlight_file(X, rng.integers(0, 3, 200), out, zero_based=True, comment="written by scikit-learn")
    _assert_same(out.getvalue())
    _assert_same(out.getvalue(), np.float32)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from([b"1", b"0", b" ", b":", b"\n", b".", b"-", b"e", b"#", b"q", b"qid:", b"2:3", b"\t",
                                 b"nan", b"+", b"\r", b"5", b"\x00", b"_"]), max_size=40).map(b"".join))
def test_any_bytes_as_sklearn(data):
    _assert_same(data)
    _both_paths(data)


def test_slices_join_and_count_lines(monkeypatch):
    rng = np.random.default_rng(5)
    data = _random_file(rng, 300)
    whole = _ours(data)
    monkeypatch.setattr(svmlight, "SLICE_BYTES", 64)  # many slices
    X, y = _ours(data)
    assert (X != whole[0]).nnz == 0 and np.array_equal(y, whole[1])
    lines = data.split(b"\n")
    lines[250] = b"1 5:1 4:1"
    with pytest.raises(SvmlightLineError) as caught:
        parse_svmlight(b"\n".join(lines))
    assert caught.value.line == 250 and "sorted and unique: 4 after 5" in caught.value.reason
    rows = parse_svmlight(b"# head\n\n1 1:1\n# x\n2 2:2\n")
    np.testing.assert_array_equal(rows.row_lines, [2, 4])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"1 1:1\n1 2:x\n", "line 2: could not convert string to float: b'x'"),
        (b"1 1:1\nlabel 2:1\n", "line 2: could not convert string to float: b'label', the label"),
        (b"1 1:1\n1 2\n", "line 2: b'2' is not index:value"),
        (b"1 qid 2:1\n", "line 1: b'qid' is not qid:value"),
        (b"1 1:1\n1 " + b"7" * 100 + b":1\n", "line 2: a feature index is larger than 2147483647"),
        (b"1 x:1\n", "line 1: invalid literal for int() with base 10: b'x', a feature index"),
        (b"1 -3:1\n", "line 1: Invalid index -3: indices are 0 or more"),
        (b"1 " + b"y" * 100 + b"\n", "line 1: b'" + "y" * 40 + "'... is not index:value"),
    ],
)
def test_errors_name_the_line_and_why(data, reason):
    with pytest.raises(SvmlightLineError) as caught:
        parse_svmlight(data)
    assert str(caught.value) == reason


def test_the_reader_names_the_file_and_its_line(tmp_path):
    path = tmp_path / "d.svm"
    path.write_bytes(b"1 0:1\n# comment\n0 1:2 3:x\n")
    reader = open_reader(path, chunk_bytes=2**20)
    with pytest.raises(ValueError, match=r"d\.svm line 3: not a valid svmlight/libsvm line \(could not convert string"):
        [reader.parse(block) for block in reader.blocks()]
    path.write_bytes(b"1 0:1\n\n0 1:2 3:1e39\n")
    reader = open_reader(path, chunk_bytes=2**20, dtype=np.float32)
    with pytest.raises(ValueError, match=r"d\.svm line 3: a feature value is infinite as a float32"):
        [reader.parse(block) for block in reader.blocks()]


def test_the_reader_gives_sklearns_chunks(tmp_path):
    rng = np.random.default_rng(7)
    data = _random_file(rng, 400)
    path = tmp_path / "d.svm"
    path.write_bytes(data)
    reader = open_reader(path, chunk_bytes=1000)
    chunks = [reader.parse(block) for block in reader.blocks()]
    assert len(chunks) > 3
    width = max(c.X.shape[1] for c in chunks)
    X = sp.vstack([sp.csr_matrix((c.X.data, c.X.indices, c.X.indptr), shape=(c.X.shape[0], width)) for c in chunks])
    Xw, yw = _theirs(data)
    assert X.shape == Xw.shape and (X != Xw).nnz == 0
    np.testing.assert_array_equal(np.concatenate([c.y for c in chunks]), yw)


def test_memory_of_a_long_field_is_bounded():
    # one 4 MB field: read by float (infinite), never laid out as a table of fields by their widest
    data = b"1 1:" + b"1" * (4 << 20) + b"\n"
    rows = parse_svmlight(data)
    assert rows.data.shape == (1,) and np.isinf(rows.data[0])
