"""Command line, issue 25 item 2: text input as people keep it.

JSON lines with other keys (--text-key, --label-key), JSON lines named
.json/.ndjson, gzip-compressed files read as they are decompressed, a CSV
column of text (--text-column), and the vectorizer's --analyzer; the keys,
the column and the vectorizer are stored in the model for predict/evaluate.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

import nbgpu
from nbgpu._app.cli import main
from nbgpu._app.readers import detect_format, open_reader, read_blocks

WORDS = {"sport": "ball goal team match score", "tech": "gpu chip code data cache"}


def _docs(n=300, seed=0):
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        label = "sport" if i % 3 else "tech"
        words = WORDS[label].split() + ["the", "a", "news"]
        docs.append((" ".join(rng.choice(words, size=6 + i % 5)), label))
    return docs


def _jsonl(path, docs, text_key="text", label_key="label", opener=open):
    with opener(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": i, text_key: t, label_key: y}) + "\n" for i, (t, y) in enumerate(docs))
    return path


def _csv(path, docs, *, header=("id", "body", "label"), labels=True, opener=open):
    with opener(path, "wt", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        if header:
            w.writerow(header if labels else header[:2])
        for i, (t, y) in enumerate(docs):
            w.writerow([i, t, y] if labels else [i, t])
    return path


def _run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _ok(capsys, *args):
    status, out, err = _run(capsys, *args)
    assert status == 0, err
    return out


def _one_line(err, status, expected_status, *parts):
    lines = err.strip().splitlines()
    assert status == expected_status, err
    assert len(lines) == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


def _reader_metadata(capsys, model):
    return json.loads(_ok(capsys, "info", model, "--json"))["reader"]


@pytest.fixture
def docs():
    return _docs()


@pytest.fixture
def reference(tmp_path, capsys, docs):
    """A model trained on plain "text"/"label" JSON lines, and its predictions."""
    plain = _jsonl(tmp_path / "plain.jsonl", docs)
    _ok(capsys, "train", plain, "-o", tmp_path / "plain.nbgpu", "-q", "--model", "multinomial")
    return _ok(capsys, "predict", tmp_path / "plain.nbgpu", plain, "-q", "--proba")


# --------------------------------------------------------------------------- #
# 1. JSON lines with other keys
def test_text_and_label_keys_are_read_and_stored(tmp_path, capsys, docs, reference):
    data = _jsonl(tmp_path / "d.jsonl", docs, "description", "section")
    model = tmp_path / "m.nbgpu"
    _ok(capsys, "train", data, "-o", model, "-q", "--model", "multinomial",
        "--text-key", "description", "--label-key", "section")
    reader = _reader_metadata(capsys, model)
    assert reader["text_key"] == "description" and reader["label_key"] == "section"
    # predict and evaluate take the keys from the model unless given again
    assert _ok(capsys, "predict", model, data, "-q", "--proba") == reference
    report = json.loads(_ok(capsys, "evaluate", model, data, "-q", "--json"))
    assert report["accuracy"] == pytest.approx(json.loads(_ok(
        capsys, "evaluate", tmp_path / "plain.nbgpu", tmp_path / "plain.jsonl", "-q", "--json"))["accuracy"])
    # given again, the keys given win
    _ok(capsys, "predict", model, tmp_path / "plain.jsonl", "-q", "--text-key", "text")
    status, _, err = _run(capsys, "evaluate", model, tmp_path / "plain.jsonl", "-q")
    _one_line(err, status, 1, 'plain.jsonl line 1: expected an object with a string "description"')


def test_other_keys_error_names_the_keys_and_the_options(tmp_path, capsys, docs):
    data = _jsonl(tmp_path / "d.jsonl", docs, "description", "section")
    status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q")
    _one_line(err, status, 1, 'd.jsonl line 1: expected an object with a string "text"',
              '["id", "description", "section"]', "--text-key", "--label-key")
    assert not (tmp_path / "m.nbgpu").exists()
    status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q", "--text-key", "description")
    _one_line(err, status, 1, 'd.jsonl line 1: no "label"', '"section"', "--label-key")


def test_many_and_long_keys_are_shown_bounded(tmp_path, capsys):
    record = {f"key{i}_" + "x" * 500: i for i in range(5000)}
    path = tmp_path / "wide.jsonl"
    path.write_text(json.dumps(record) + "\n")
    status, _, err = _run(capsys, "train", path, "-o", tmp_path / "m.nbgpu", "-q")
    line = _one_line(err, status, 1, "wide.jsonl line 1", "(5000 keys)")
    assert len(line) < 1000


def test_label_column_on_json_lines_is_an_error_pointing_to_label_key(tmp_path, capsys, docs):
    data = _jsonl(tmp_path / "d.jsonl", docs, "text", "section")
    for command in (["train", data, "-o", tmp_path / "m.nbgpu"], ["evaluate", tmp_path / "m.nbgpu", data]):
        status, _, err = _run(capsys, *command, "-q", "--label-column", "section")
        _one_line(err, status, 2, "--label-column is for CSV", "--label-key")
    assert not (tmp_path / "m.nbgpu").exists()


def test_csv_blocks_end_between_records_not_inside_a_quoted_field(tmp_path, capsys, docs):
    """Documents over several lines, read in blocks far smaller than the file:
    a block cut inside a quoted field failed ("1 fields where the first row has
    3"); the model and the scores are those of one block."""
    multi = [(text.replace(" ", "\n", 2), label) for text, label in docs]
    data = _csv(tmp_path / "d.csv", multi)
    assert data.stat().st_size > 10 * 1024  # over ten blocks of 0.001 MiB
    for name, chunk_mb in (("one.nbgpu", "64"), ("small.nbgpu", "0.001")):
        _ok(capsys, "train", data, "-o", tmp_path / name, "-q", "--model", "multinomial", "--text-column", "body",
            "--chunk-mb", chunk_mb)
    one = _ok(capsys, "predict", tmp_path / "one.nbgpu", data, "-q", "--proba")
    assert _ok(capsys, "predict", tmp_path / "small.nbgpu", data, "-q", "--proba", "--chunk-mb", "0.001") == one
    assert len(one.splitlines()) == len(docs) + 1
    from nbgpu._app.readers import csv_record_end

    assert csv_record_end(b'a,"b\nc",d\ne,"f\n') == len(b'a,"b\nc",d\n')
    assert csv_record_end(b'a,"say ""hi""\nthere",x\n') == len(b'a,"say ""hi""\nthere",x\n')
    assert csv_record_end(b'a,"open\n') == 0


def test_label_column_on_svmlight_and_npz_is_an_error(tmp_path, capsys):
    """It was silently ignored there (exit 0, labels from the file)."""
    X, y = np.arange(40).reshape(20, 2) % 5, np.arange(20) % 2
    svm, npz = tmp_path / "d.svm", tmp_path / "d.npz"
    dump_svmlight_file(X, y, str(svm))
    np.savez(npz, X=X, y=y)
    for data, where in ((svm, "the first field of each line"), (npz, "the array `y`")):
        status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q", "--label-column", "1")
        _one_line(err, status, 2, "--label-column is for CSV", where)
        assert not (tmp_path / "m.nbgpu").exists()


def test_keys_and_columns_do_not_apply_to_other_formats(tmp_path, capsys, docs):
    data = _csv(tmp_path / "d.csv", docs)
    status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q", "--text-key", "body")
    _one_line(err, status, 2, "--text-key is for JSON lines", "--text-column")
    jsonl = _jsonl(tmp_path / "d.jsonl", docs)
    status, _, err = _run(capsys, "train", jsonl, "-o", tmp_path / "m.nbgpu", "-q", "--text-column", "text")
    _one_line(err, status, 2, "--text-column is for CSV", "--text-key")


def test_a_model_file_with_odd_key_settings_is_refused(tmp_path, capsys, docs):
    from sklearn.feature_extraction.text import HashingVectorizer

    vec = HashingVectorizer(n_features=64, alternate_sign=False, norm=None)
    X = vec.transform([t for t, _ in docs])
    y = [label for _, label in docs]
    data = _jsonl(tmp_path / "d.jsonl", docs)
    for odd in ({"text_key": 5}, {"label_key": ["a"]}, {"text_column": "x" * 5000}):
        model = tmp_path / "odd.nbgpu"
        nbgpu.save(nbgpu.MultinomialNB().fit(X, y), model, vectorizer=vec, metadata={"reader": odd})
        status, _, err = _run(capsys, "predict", model, data, "-q")
        _one_line(err, status, 1, "inconsistent model file", f"reader setting {next(iter(odd))}=")


# --------------------------------------------------------------------------- #
# 2. File names: .json, .ndjson, gzip
def test_json_and_ndjson_are_json_lines(tmp_path, capsys, docs, reference):
    assert detect_format("a.json") == detect_format("a.NDJSON") == detect_format("a.jsonl") == "jsonl"
    for name in ("d.json", "d.ndjson"):
        data = _jsonl(tmp_path / name, docs)
        model = tmp_path / f"{name}.nbgpu"
        _ok(capsys, "train", data, "-o", model, "-q", "--model", "multinomial")
        assert _ok(capsys, "predict", model, data, "-q", "--proba") == reference


def test_a_json_array_gets_a_clear_error(tmp_path, capsys, docs):
    for text in (json.dumps([{"text": t, "label": y} for t, y in docs[:5]]),
                 json.dumps([{"text": t, "label": y} for t, y in docs[:5]], indent=2)):
        path = tmp_path / "array.json"
        path.write_text(text + "\n")
        status, _, err = _run(capsys, "train", path, "-o", tmp_path / "m.nbgpu", "-q")
        _one_line(err, status, 1, "array.json line 1: a JSON array, where JSON lines are expected")


def test_gzip_names_tell_the_format_inside():
    assert detect_format("d.jsonl.gz") == detect_format("d.ndjson.GZ") == detect_format("d.json.gz") == "jsonl"
    assert detect_format("d.csv.gz") == "csv" and detect_format("d.svm.gz") == "svmlight"
    with pytest.raises(ValueError, match=r"\.gz"):
        detect_format("d.gz")


@pytest.mark.parametrize("chunk_mb", ["64", "0.0005"])
def test_gzip_json_lines_and_csv_read_as_the_plain_files(tmp_path, capsys, docs, reference, chunk_mb):
    data = _jsonl(tmp_path / "d.jsonl.gz", docs, opener=gzip.open)
    model = tmp_path / "g.nbgpu"
    _ok(capsys, "train", data, "-o", model, "-q", "--model", "multinomial", "--chunk-mb", chunk_mb)
    assert _ok(capsys, "predict", model, data, "-q", "--proba", "--chunk-mb", chunk_mb) == reference
    assert _ok(capsys, "predict", tmp_path / "plain.nbgpu", data, "-q", "--proba") == reference
    plain_csv, gz_csv = _csv(tmp_path / "d.csv", docs), _csv(tmp_path / "d.csv.gz", docs, opener=gzip.open)
    _ok(capsys, "train", plain_csv, "-o", tmp_path / "c.nbgpu", "-q", "--text-column", "body")
    _ok(capsys, "train", gz_csv, "-o", tmp_path / "cg.nbgpu", "-q", "--text-column", "body", "--chunk-mb", chunk_mb)
    assert (_ok(capsys, "predict", tmp_path / "cg.nbgpu", gz_csv, "-q", "--proba", "--chunk-mb", chunk_mb)
            == _ok(capsys, "predict", tmp_path / "c.nbgpu", plain_csv, "-q", "--proba"))


def test_gzip_svmlight_and_numeric_csv(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X, y = rng.poisson(2.0, size=(200, 6)).astype(float), rng.integers(0, 3, 200)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"), zero_based=True)
    with open(tmp_path / "d.svm", "rb") as f, gzip.open(tmp_path / "d.svm.gz", "wb") as g:
        g.write(f.read())
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",", fmt="%g")
    with open(tmp_path / "d.csv", "rb") as f, gzip.open(tmp_path / "d.csv.gz", "wb") as g:
        g.write(f.read())
    for ext in ("svm", "csv"):
        plain, packed = tmp_path / f"d.{ext}", tmp_path / f"d.{ext}.gz"
        _ok(capsys, "train", plain, "-o", tmp_path / "p.nbgpu", "-q", "--model", "multinomial")
        _ok(capsys, "train", packed, "-o", tmp_path / "g.nbgpu", "-q", "--model", "multinomial", "--chunk-mb", "0.001")
        for model in ("p.nbgpu", "g.nbgpu"):
            assert (_ok(capsys, "predict", tmp_path / model, packed, "-q", "--proba", "--chunk-mb", "0.001")
                    == _ok(capsys, "predict", tmp_path / "p.nbgpu", plain, "-q", "--proba"))


def test_gzip_blocks_are_the_plain_blocks_and_count_compressed_bytes(tmp_path, docs):
    plain = _jsonl(tmp_path / "d.jsonl", docs * 5)
    packed = _jsonl(tmp_path / "d.jsonl.gz", docs * 5, opener=gzip.open)
    unnamed = tmp_path / "d_gz.jsonl"  # gzip data under a plain name: told by its magic bytes
    unnamed.write_bytes(packed.read_bytes())
    expected = [(b.data, b.first) for b in read_blocks(plain, 2000)]
    for path in (packed, unnamed):
        blocks = list(read_blocks(path, 2000))
        assert len(blocks) > 10
        assert [(b.data, b.first) for b in blocks] == expected
        assert sum(b.nbytes for b in blocks) == path.stat().st_size  # progress against the file's size


def test_broken_gzip_is_one_line(tmp_path, capsys, docs):
    _jsonl(tmp_path / "d.jsonl.gz", docs * 20, opener=gzip.open)
    whole = (tmp_path / "d.jsonl.gz").read_bytes()
    (tmp_path / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "junk.jsonl.gz").write_bytes(b'{"text": "not gzip", "label": 1}\n')
    corrupt = bytearray(whole)
    corrupt[len(corrupt) // 2 : len(corrupt) // 2 + 50] = b"\0" * 50
    (tmp_path / "bad.jsonl.gz").write_bytes(bytes(corrupt))
    for name, message in (("cut", "the gzip data end early"), ("junk", "not valid gzip data"),
                          ("bad", "gzip")):
        status, _, err = _run(capsys, "train", tmp_path / f"{name}.jsonl.gz", "-o", tmp_path / "m.nbgpu", "-q",
                              "--chunk-mb", "0.01")
        _one_line(err, status, 1, f"{name}.jsonl.gz", message)
        assert not (tmp_path / "m.nbgpu").exists()


def test_npz_gz_is_refused(tmp_path):
    path = tmp_path / "d.npz.gz"
    path.write_bytes(gzip.compress(b"PK whatever"))
    with pytest.raises(ValueError, match="cannot be read gzip-compressed"):
        open_reader(path)


# --------------------------------------------------------------------------- #
# 3. CSV with a text column
def test_csv_text_column_hashes_the_text_as_json_lines(tmp_path, capsys, docs, reference):
    data = _csv(tmp_path / "d.csv", docs)
    model = tmp_path / "c.nbgpu"
    _ok(capsys, "train", data, "-o", model, "-q", "--model", "multinomial", "--text-column", "body")
    assert _reader_metadata(capsys, model)["text_column"] == "body"
    assert json.loads(_ok(capsys, "info", model, "--json"))["vectorizer"] is not None
    # the stored column is used at predict/evaluate; the label column is optional there
    assert _ok(capsys, "predict", model, data, "-q", "--proba") == reference
    unlabelled = _csv(tmp_path / "u.csv", docs, labels=False)
    assert _ok(capsys, "predict", model, unlabelled, "-q") == "".join(
        row.split(",")[0] + "\n" for row in reference.splitlines()[1:])
    assert json.loads(_ok(capsys, "evaluate", model, data, "-q", "--json"))["accuracy"] > 0.9
    # by index, without a header; the label is the other column
    bare = _csv(tmp_path / "bare.csv", docs, header=None)
    _ok(capsys, "train", bare, "-o", tmp_path / "b.nbgpu", "-q", "--model", "multinomial", "--text-column", "1",
        "--label-column", "2")
    assert _ok(capsys, "predict", tmp_path / "b.nbgpu", bare, "-q", "--proba") == reference
    # an index is no name: a first row whose field is "1" is still a row of data
    first_one = tmp_path / "one.csv"
    first_one.write_text("".join(f"{i + 1},{t},{y}\n" for i, (t, y) in enumerate(docs)))
    _ok(capsys, "train", first_one, "-o", tmp_path / "o.nbgpu", "-q", "--model", "multinomial", "--text-column", "1")
    assert _ok(capsys, "predict", tmp_path / "o.nbgpu", first_one, "-q", "--proba") == reference
    # a JSON-lines model scores a CSV text column, and a CSV-trained model JSON lines
    assert _ok(capsys, "predict", tmp_path / "plain.nbgpu", data, "-q", "--proba", "--text-column", "body") == reference
    assert _ok(capsys, "predict", model, tmp_path / "plain.jsonl", "-q", "--proba") == reference


def test_csv_text_without_text_column_suggests_it(tmp_path, capsys, docs):
    data = _csv(tmp_path / "d.csv", docs)
    status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q")
    _one_line(err, status, 1, "d.csv line 2: feature values must be numbers", "--text-column")
    status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q", "--text-column", "nope")
    _one_line(err, status, 1, "d.csv: no text column 'nope'", "'body'")
    _ok(capsys, "train", _jsonl(tmp_path / "p.jsonl", docs), "-o", tmp_path / "t.nbgpu", "-q")
    status, _, err = _run(capsys, "predict", tmp_path / "t.nbgpu", data, "-q")
    _one_line(err, status, 1, "--text-column")


def test_csv_documents_longer_than_csvs_field_limit_and_over_several_lines(tmp_path, capsys, docs):
    """A document beyond the csv module's default field limit (128 KiB) is read
    (it failed with "field larger than field limit"), as in JSON lines; a quoted
    field over several lines moves the line numbers of later errors."""
    long_docs = [(" ".join([text] * 10_000) if i == 3 else text, label) for i, (text, label) in enumerate(docs)]
    assert len(long_docs[3][0]) > 131_072  # the csv module's default limit
    _ok(capsys, "train", _csv(tmp_path / "d.csv", long_docs), "-o", tmp_path / "c.nbgpu", "-q", "--model",
        "multinomial", "--text-column", "body")
    _ok(capsys, "train", _jsonl(tmp_path / "d.jsonl", long_docs), "-o", tmp_path / "j.nbgpu", "-q", "--model",
        "multinomial")
    data = _jsonl(tmp_path / "p.jsonl", docs[:20])
    assert _ok(capsys, "predict", tmp_path / "c.nbgpu", data, "-q", "--proba") == _ok(
        capsys, "predict", tmp_path / "j.nbgpu", data, "-q", "--proba")
    bad = tmp_path / "bad.csv"
    bad.write_text('body,label\n"one\ntwo\nthree",a\n"four",b,extra\n')
    status, _, err = _run(capsys, "train", bad, "-o", tmp_path / "b.nbgpu", "-q", "--text-column", "body")
    _one_line(err, status, 1, "bad.csv line 5: 3 fields where the first row has 2")


# --------------------------------------------------------------------------- #
# 4. --analyzer
@pytest.mark.parametrize("analyzer", ["char", "char_wb"])
def test_analyzer_is_stored_and_applied_at_predict(tmp_path, capsys, docs, analyzer):
    data = _jsonl(tmp_path / "d.jsonl", docs)
    model = tmp_path / "m.nbgpu"
    _ok(capsys, "train", data, "-o", model, "-q", "--model", "multinomial", "--analyzer", analyzer,
        "--ngram-range", "2,3", "--hash-features", "4096")
    vectorizer = json.loads(_ok(capsys, "info", model, "--json"))["vectorizer"]
    assert vectorizer["analyzer"] == analyzer and vectorizer["ngram_range"] == [2, 3]
    fitted, vec = nbgpu.load(model, return_vectorizer=True)
    assert vec.get_params()["analyzer"] == analyzer
    from sklearn.feature_extraction.text import HashingVectorizer

    X = HashingVectorizer(analyzer=analyzer, ngram_range=(2, 3), n_features=4096, alternate_sign=False,
                          norm=None).transform([t for t, _ in docs])
    expected = nbgpu.MultinomialNB().fit(X, [label for _, label in docs]).predict(X)
    assert _ok(capsys, "predict", model, data, "-q").split() == list(expected)
    csv_model = tmp_path / "c.nbgpu"
    _ok(capsys, "train", _csv(tmp_path / "d.csv", docs), "-o", csv_model, "-q", "--model", "multinomial",
        "--analyzer", analyzer, "--ngram-range", "2,3", "--hash-features", "4096", "--text-column", "body")
    assert _ok(capsys, "predict", csv_model, tmp_path / "d.csv", "-q").split() == list(expected)


def test_analyzer_choices_are_checked(tmp_path, capsys, docs):
    status, _, err = _run(capsys, "train", _jsonl(tmp_path / "d.jsonl", docs), "-o", tmp_path / "m.nbgpu",
                          "--analyzer", "letters")
    _one_line(err, status, 2, "--analyzer")


def test_help_names_the_new_options(capsys):
    for command in ("train", "predict", "evaluate"):
        assert _run(capsys, command, "--help")[0] == 0
    for command in ("predict", "evaluate"):
        main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for option in ("--text-key", "--label-key", "--text-column", ".gz", ".ndjson"):
            assert option in text, (command, option)
    main(["train", "--help"])
    assert "--analyzer" in capsys.readouterr().out


def test_paths_given_as_path_objects_work():
    assert detect_format(Path("x.jsonl.gz")) == "jsonl"


def test_a_long_field_widens_no_other_cell(tmp_path, capsys):
    """CSV rows were one fixed-width string table: a 1 MB document made all
    2,001 × 3 cells 1 MB wide (24 GB) and the command failed."""
    rows = [(" ".join(["word"] * 200_000), "a")] + [(f"short text {i}", "ab"[i % 2]) for i in range(2000)]
    _ok(capsys, "train", _csv(tmp_path / "d.csv", rows), "-o", tmp_path / "m.nbgpu", "-q", "--model",
        "multinomial", "--text-column", "body")
    assert nbgpu.load(tmp_path / "m.nbgpu").class_count_.sum() == 2001


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_labels_too_long_for_a_label_array_or_not_unicode_are_refused(tmp_path, capsys, kind):
    """One label of 100,000 characters made every label of its chunk as wide (800 MB
    here, gigabytes for longer ones); a lone surrogate label was trained on, and the
    model then failed in predict and evaluate ('utf-8' codec can't encode)."""
    write = _jsonl if kind == "jsonl" else _csv
    docs = [("red apple", "x" * 100_000)] + [(f"green pear {i}", "ab"[i % 2]) for i in range(2000)]
    status, _, err = _run(capsys, "train", write(tmp_path / f"d.{kind}", docs), "-o", tmp_path / "m.nbgpu", "-q",
                          *(["--text-column", "body"] if kind == "csv" else []))
    line = 1 if kind == "jsonl" else 2  # after the CSV header
    _one_line(err, status, 1, f"d.{kind} line {line}: a label of 100,000 characters", "shorten it")
    if kind == "jsonl":
        data = tmp_path / "s.jsonl"
        data.write_text('{"text": "cc dd", "label": "bb"}\n{"text": "xx yy", "label": "\\ud800"}\n')
        status, _, err = _run(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "-q")
        _one_line(err, status, 1, "s.jsonl line 2: the label holds a lone surrogate")
    assert not (tmp_path / "m.nbgpu").exists()


def test_csv_text_is_hashed_as_written(tmp_path, capsys):
    """--text-column stripped the spaces at the ends of each text: with the char analyzer
    the CSV's features, so its model and predictions, differed from the same JSON lines'."""
    docs = [("  ab", "x"), ("ab ", "y"), ("\tab", "x"), ("ab", "y")]
    options = ["-q", "--model", "multinomial", "--analyzer", "char", "--hash-features", "64"]
    _ok(capsys, "train", _jsonl(tmp_path / "d.jsonl", docs), "-o", tmp_path / "j.nbgpu", *options)
    _ok(capsys, "train", _csv(tmp_path / "d.csv", docs), "-o", tmp_path / "c.nbgpu", "--text-column", "body", *options)
    np.testing.assert_array_equal(nbgpu.load(tmp_path / "c.nbgpu").feature_count_, nbgpu.load(tmp_path / "j.nbgpu").feature_count_)
    assert _ok(capsys, "predict", tmp_path / "j.nbgpu", tmp_path / "d.csv", "--text-column", "body", "--proba") == _ok(
        capsys, "predict", tmp_path / "j.nbgpu", tmp_path / "d.jsonl", "--proba")
