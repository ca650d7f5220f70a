"""File readers: chunking by bytes, formats, labels, and their error messages."""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.feature_extraction.text import HashingVectorizer

from nbgpu._app.readers import align_labels, detect_format, open_reader, typed_labels


def _concat(batches):
    Xs, ys = zip(*batches)
    X = sp.vstack(Xs).toarray() if sp.issparse(Xs[0]) else np.vstack(Xs)
    return X, np.concatenate(ys)


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


def test_svmlight_in_small_byte_ranges_equals_one_read(svm_file):
    path, X, y = svm_file
    reader = open_reader(path, chunk_bytes=97, zero_based=True)
    scan = reader.scan(quiet=True)
    assert scan.n_rows == 200 and scan.n_features == 30
    np.testing.assert_array_equal(scan.classes, np.unique(y))
    batches = list(reader.batches(n_features=30))
    assert len(batches) > 20  # really chunked
    Xr, yr = _concat(batches)
    np.testing.assert_array_equal(Xr, X)
    np.testing.assert_array_equal(yr, y)
    assert yr.dtype == np.int64


def test_svmlight_zero_based_follows_scikit_learn_over_the_whole_file(svm_file):
    path, X, _ = svm_file
    auto = open_reader(path, chunk_bytes=97)
    scan = auto.scan(quiet=True)
    Xs, _ = load_svmlight_file(str(path))  # scikit-learn's own guess on the whole file
    assert auto.settings["zero_based"] is False
    assert scan.n_features == Xs.shape[1]
    np.testing.assert_array_equal(_concat(auto.batches(n_features=scan.n_features))[0], Xs.toarray())


def test_svmlight_errors(svm_file, tmp_path):
    path, _, _ = svm_file
    with pytest.raises(ValueError, match="more features than the 10"):
        list(open_reader(path, zero_based=True).batches(n_features=10))
    bad = tmp_path / "bad.svm"
    bad.write_text("1 0:1 2:3\nthis is not svmlight\n")
    with pytest.raises(ValueError, match="not a valid svmlight"):
        open_reader(bad).scan(quiet=True)


def test_npz_sparse_and_dense(tmp_path):
    rng = np.random.default_rng(1)
    X = sp.random(50, 8, density=0.3, format="csc", random_state=1)
    y = rng.choice(["a", "b"], size=50)
    path = tmp_path / "s.npz"
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, format=X.format, y=y)
    reader = open_reader(path, chunk_bytes=100)
    scan = reader.scan()
    assert (scan.n_rows, scan.n_features) == (50, 8)
    Xr, yr = _concat(reader.batches(n_features=8))
    np.testing.assert_allclose(Xr, X.toarray())
    np.testing.assert_array_equal(yr, y)
    # scipy's own writer (format stored as bytes), labels added beside it.
    sp.save_npz(tmp_path / "t.npz", X.tocsr(), compressed=False)
    with np.load(tmp_path / "t.npz") as f:
        np.savez(tmp_path / "u.npz", **{k: f[k] for k in f.files}, y=y)
    np.testing.assert_allclose(_concat(open_reader(tmp_path / "u.npz").batches(n_features=8))[0], X.toarray())
    dense = tmp_path / "d.npz"
    np.savez(dense, X=X.toarray(), y=y)
    np.testing.assert_allclose(_concat(open_reader(dense).batches(n_features=8))[0], X.toarray())
    with pytest.raises(ValueError, match="has 8 features but the model expects 9"):
        list(open_reader(dense).batches(n_features=9))
    np.savez(tmp_path / "w.npz", a=np.arange(3))
    with pytest.raises(ValueError, match="expected a sparse matrix"):
        open_reader(tmp_path / "w.npz").scan()


def test_csv_header_label_column_and_predict_layout(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("f1,label,f2\n1,spam,2\n3,ham,4\n\n5,spam,6\n")
    reader = open_reader(path, chunk_bytes=8)
    scan = reader.scan()
    np.testing.assert_array_equal(scan.classes, ["ham", "spam"])
    X, y = _concat(reader.batches(n_features=2))
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(y, ["spam", "ham", "spam"])
    nohead = tmp_path / "n.csv"
    nohead.write_text("1,2,0\n3,4,1\n")
    scan = open_reader(nohead).scan()
    assert scan.n_features == 2 and scan.classes.dtype == np.int64
    first = open_reader(nohead, label_column="0")
    np.testing.assert_array_equal(_concat(first.batches(n_features=2))[1], ["1", "3"])
    features_only = tmp_path / "f.csv"
    features_only.write_text("1,2\n3,4\n")
    batches = list(open_reader(features_only).batches(n_features=2, labels=False))
    assert batches[0][1] is None
    with pytest.raises(ValueError, match="has 2 columns; the model expects 5"):
        list(open_reader(features_only).batches(n_features=5))
    ragged = tmp_path / "r.csv"
    ragged.write_text("1,2,0\n3,4\n")
    with pytest.raises(ValueError, match="line 2: 2 fields"):
        open_reader(ragged).scan()
    words = tmp_path / "w.csv"
    words.write_text("a,b,label\n1,x,0\n")
    with pytest.raises(ValueError, match="must be numbers"):
        open_reader(words).scan()


def test_jsonl_vectorised_per_chunk_like_one_call(tmp_path):
    docs = [{"text": f"word{i % 7} common text {i}", "label": ["x", "y"][i % 2]} for i in range(40)]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    vec = HashingVectorizer(n_features=64, alternate_sign=False, norm=None)
    reader = open_reader(path, vectorizer=vec, chunk_bytes=50)
    scan = reader.scan()
    assert scan.n_rows == 40 and scan.n_features == 64
    X, y = _concat(reader.batches(n_features=64))
    np.testing.assert_array_equal(X, vec.transform([d["text"] for d in docs]).toarray())
    np.testing.assert_array_equal(y, [d["label"] for d in docs])
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"text": "ok", "label": 1}\n{"text": "missing quote}\n')
    with pytest.raises(ValueError, match="line 2: not valid JSON"):
        open_reader(bad, vectorizer=vec).scan()
    bad.write_text('{"text": "ok", "label": 1}\n{"label": 2}\n')
    with pytest.raises(ValueError, match='line 2: expected an object with a string "text"'):
        open_reader(bad, vectorizer=vec).scan()
    with pytest.raises(ValueError, match="not trained on text"):
        open_reader(path)
    with pytest.raises(ValueError, match="trained on JSON-lines text"):
        open_reader(tmp_path / "b.jsonl", "csv", vectorizer=vec)


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
    with pytest.raises(ValueError, match="is not a file"):
        open_reader(tmp_path)


def test_labels_typed_and_aligned():
    assert typed_labels(np.array(["1", "2"])).dtype == np.int64
    assert typed_labels(np.array([1.0, 2.0])).dtype == np.int64
    assert typed_labels(np.array([1.5, 2.0])).dtype == np.float64
    assert typed_labels(np.array(["a", "2"])).dtype.kind == "U"
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
    assert not isinstance(progress("reading", quiet=True), tqdm)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a pipe or a file: no bar
    assert not isinstance(progress("reading"), tqdm)
