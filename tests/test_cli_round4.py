"""Command line, issue 34 item 7: a CSV file of a header alone, an infinite value named by its line,
labels that are bytes printed as the text they are, and the memory of reading numeric CSV."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from nbgpu import MultinomialNB, save
from nbgpu._app.cli import main
from nbgpu._app.readers import CsvReader, open_reader, read_blocks


def _run(args, capsys):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _one_line(err, status, match):
    lines = err.strip().splitlines()
    assert status == 1, err  # a file that could not be used
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert match in lines[0], lines[0]


def _csv(path, rows, header="a,b,label"):
    path.write_text("".join(line + "\n" for line in [header, *rows]), encoding="utf-8")
    return path


@pytest.fixture
def model(tmp_path, capsys):
    data = _csv(tmp_path / "train.csv", [f"{i % 4},{i % 3},{'xy'[i % 2]}" for i in range(40)])
    assert _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q", "--model", "multinomial"], capsys)[0] == 0
    return tmp_path / "m.nbgpu"


# --------------------------------------------------------------------------- #
# (a) A CSV file of its header row alone holds no data rows (was numpy's broadcast error)
@pytest.mark.parametrize("command", ["train", "predict", "evaluate"])
@pytest.mark.parametrize("header", ["a,b,label\n", "a,b,label", "a,b,label\n\n  \n"], ids=["eol", "no-eol", "blank"])
def test_a_csv_of_a_header_alone_holds_no_data_rows(tmp_path, capsys, model, command, header):
    data = tmp_path / "header.csv"
    data.write_text(header, encoding="utf-8")
    args = ["train", data, "-o", tmp_path / "out.nbgpu"] if command == "train" else [command, model, data]
    status, _, err = _run([*args, "-q"], capsys)
    _one_line(err, status, f"{data} holds no data rows")


def test_a_chunk_of_blank_lines_after_the_header_is_skipped(tmp_path, capsys):
    rows = [f"{i % 4},{i % 3},{'xy'[i % 2]}" for i in range(40)]
    data = _csv(tmp_path / "blank.csv", rows[:20] + [""] * 3000 + rows[20:])
    status, _, err = _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q", "--chunk-mb", "0.001"], capsys)
    assert status == 0, err


# --------------------------------------------------------------------------- #
# (b) A value that overflows to infinity is named by its line (was the whole chunk's range)
@pytest.mark.parametrize("command", ["train", "predict", "evaluate"])
@pytest.mark.parametrize("value", ["1e999", "-1e999", "inf"])
def test_an_infinite_csv_value_is_named_by_its_line(tmp_path, capsys, model, command, value):
    rows = [f"{i % 4},{i % 3},{'xy'[i % 2]}" for i in range(200)]
    rows[1] = f"{value},4,y"  # line 3 of the file, the header being line 1
    data = _csv(tmp_path / "inf.csv", rows)
    args = ["train", data, "-o", tmp_path / "out.nbgpu"] if command == "train" else [command, model, data]
    status, _, err = _run([*args, "-q"], capsys)
    _one_line(err, status, f"{data} line 3: ")
    assert repr(value) in err and "infinite" in err


def test_a_value_beyond_float32_is_named_by_its_line(tmp_path, capsys):
    rows = [f"{i % 4},{i % 3},{'xy'[i % 2]}" for i in range(20)]
    rows[5] = "1e39,1,x"  # a float64, but beyond float32's range
    data = _csv(tmp_path / "big.csv", rows)
    status, _, err = _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q", "--dtype", "float32"], capsys)
    _one_line(err, status, f"{data} line 7: ")
    assert "'1e39'" in err and "float32" in err


def test_an_infinite_svmlight_value_is_named_by_its_line(tmp_path, capsys):
    lines = [f"{i % 2} 1:{i % 3 + 1} 2:1" for i in range(50)]
    lines[9] = "1 1:1e999 2:1"
    data = tmp_path / "inf.svm"
    data.write_text("# a comment line\n" + "\n".join(lines) + "\n", encoding="utf-8")
    status, _, err = _run(["train", data, "-o", tmp_path / "m.nbgpu", "-q"], capsys)
    _one_line(err, status, f"{data} line 11: ")


# --------------------------------------------------------------------------- #
# (c) Labels that are bytes print as the text they are (were b'a,b' and proba_b'a,b')
@pytest.fixture
def bytes_model(tmp_path):
    """A model fitted in Python on labels that are bytes (its classes_ are numpy bytes)."""
    X = np.array([[3.0, 0.0], [0.0, 3.0], [2.0, 1.0], [1.0, 2.0]])
    fitted = MultinomialNB().fit(X, np.array([b"a,b", "é".encode(), b"a,b", "é".encode()]))
    assert fitted.classes_.dtype.kind == "S"
    save(fitted, tmp_path / "bytes.nbgpu")
    np.savez(tmp_path / "data.npz", X=X, y=np.array(["a,b", "é", "a,b", "é"]))
    _csv(tmp_path / "data.csv", ["3,0,\"a,b\"", "0,3,é", "2,1,\"a,b\"", "1,2,é"])
    return tmp_path / "bytes.nbgpu"


@pytest.mark.parametrize("data", ["data.npz", "data.csv"])
def test_predict_prints_labels_that_are_bytes_as_text(tmp_path, capsys, bytes_model, data):
    status, out, err = _run(["predict", bytes_model, tmp_path / data, "--proba", "-q"], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split(",")[:2] == ["prediction", '"proba_a'] and lines[0].endswith("proba_é")
    assert [line.split(",")[0] for line in lines[1:]] == ['"a', "é", '"a', "é"]
    assert "b'" not in out


def test_evaluate_matches_and_prints_labels_that_are_bytes_as_text(tmp_path, capsys, bytes_model):
    status, out, err = _run(["evaluate", bytes_model, tmp_path / "data.csv", "--json", "-q"], capsys)
    assert status == 0, err
    assert "b'" not in out
    report = json.loads(out)
    assert report["classes"] == ["a,b", "é"] and report["unseen_classes"] == {}
    assert report["accuracy"] == 1.0


def test_info_prints_labels_that_are_bytes_as_text(capsys, bytes_model):
    status, out, err = _run(["info", bytes_model], capsys)
    assert status == 0, err
    assert "classes: 2 strings: ['a,b', 'é']" in out


def test_npz_labels_that_are_utf8_bytes_are_read_as_text(tmp_path, capsys):
    X = np.array([[3.0, 0.0], [0.0, 3.0], [2.0, 1.0], [1.0, 2.0]])
    np.savez(tmp_path / "bytes.npz", X=X, y=np.array(["a,b".encode(), "é".encode()] * 2))
    status, _, err = _run(["train", tmp_path / "bytes.npz", "-o", tmp_path / "m.nbgpu", "-q"], capsys)
    assert status == 0, err
    status, out, err = _run(["predict", tmp_path / "m.nbgpu", tmp_path / "bytes.npz", "-q"], capsys)
    assert status == 0, err
    assert out.splitlines() == ['"a,b"', "é", '"a,b"', "é"]


def test_npz_labels_that_are_not_utf8_are_refused_naming_the_file(tmp_path, capsys):
    np.savez(tmp_path / "latin1.npz", X=np.ones((2, 2)), y=np.array([b"\xe9", b"a"]))
    status, _, err = _run(["train", tmp_path / "latin1.npz", "-o", tmp_path / "m.nbgpu", "-q"], capsys)
    _one_line(err, status, f"{tmp_path / 'latin1.npz'}: ")
    assert "UTF-8" in err


# --------------------------------------------------------------------------- #
# (d) Parsing a chunk of numeric CSV takes a few times its bytes, not 20-30 times
def test_parsing_a_numeric_csv_chunk_takes_a_few_times_its_bytes(tmp_path):
    rng = np.random.default_rng(0)
    values = rng.integers(0, 10_000, size=(40_000, 10))
    lines = [",".join(f"{v // 1000}.{v % 1000:03d}" for v in row) + f",{i % 7}" for i, row in enumerate(values.tolist())]
    path = _csv(tmp_path / "numbers.csv", lines, header=",".join(f"f{i}" for i in range(10)) + ",label")
    reader = open_reader(path, "csv", chunk_bytes=2**30)
    assert isinstance(reader, CsvReader)
    (block,) = read_blocks(path, 2**30, min_lines=2)
    tracemalloc.start()
    try:
        chunk = reader.parse(block)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # What must be held: the float64 features (8 bytes a value, for 6 bytes of text) and the labels.
    assert chunk.X.shape == (40_000, 10) and chunk.y.shape == (40_000,)
    np.testing.assert_array_equal(chunk.X, values / 1000)
    assert peak < 4 * len(block.data), f"parsing {len(block.data):,} bytes peaked at {peak:,} bytes"
