"""Command line, issue 37 item 1: the work of train and evaluate overlapped.

``evaluate``/``predict`` read the model file's header alone and start parsing the data
while the model loads; ``train`` reads text in chunks of ``TEXT_TRAIN_CHUNK_BYTES`` so
that a chunk is fitted while the next is parsed. The results are those of reading in
one chunk after the model, and errors keep their order.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from test_text_input import _ok, _run

from nbgpu._app import cli, readers

WORDS = {"sport": "ball goal team match score", "tech": "gpu chip code data cache"}


def _jsonl(path, n=200, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            label = "sport" if i % 3 else "tech"
            words = WORDS[label].split() + ["the", "a", "news"]
            f.write(json.dumps({"text": " ".join(rng.choice(words, size=6 + i % 5)), "label": label}) + "\n")
    return path


@pytest.fixture
def trained(tmp_path, capsys):
    data = _jsonl(tmp_path / "d.jsonl")
    _ok(capsys, "train", data, "-o", tmp_path / "m.nbgpu", "--model", "complement", "--ngram-range", "1,2", "-q")
    return tmp_path, data


def test_evaluate_parses_the_data_while_the_model_loads(trained, capsys, monkeypatch):
    tmp_path, data = trained
    reference = _ok(capsys, "evaluate", tmp_path / "m.nbgpu", data, "--json", "-q")
    parsing = threading.Event()
    parse, load = readers.JsonlReader.parse, cli._loaded_model

    def parse_seen(self, block, **kw):
        parsing.set()
        return parse(self, block, **kw)

    def load_after_parsing(args):
        assert parsing.wait(60), "the data were not being parsed while the model loaded"
        return load(args)

    monkeypatch.setattr(readers.JsonlReader, "parse", parse_seen)
    monkeypatch.setattr(cli, "_loaded_model", load_after_parsing)
    assert _ok(capsys, "evaluate", tmp_path / "m.nbgpu", data, "--json", "-q") == reference
    assert json.loads(reference)["accuracy"] > 0.9


def test_a_model_file_that_is_not_one_is_said_before_missing_data(trained, capsys):
    tmp_path, _ = trained
    (tmp_path / "junk.nbgpu").write_bytes(b"not a zip archive")
    for command in ("evaluate", "predict"):
        status, _, err = _run(capsys, command, tmp_path / "junk.nbgpu", tmp_path / "missing.jsonl")
        assert status == 1
        assert "junk.nbgpu is not an nbgpu model file" in err, err


def test_a_model_file_that_changes_while_it_loads_is_refused(trained, capsys, monkeypatch):
    tmp_path, data = trained
    _ok(capsys, "train", data, "-o", tmp_path / "other.nbgpu", "--model", "complement", "-q")  # unigrams
    load = cli._loaded_model

    def load_other(args):
        args.model_file = tmp_path / "other.nbgpu"
        loaded = load(args)
        args.model_file = tmp_path / "m.nbgpu"
        return loaded

    monkeypatch.setattr(cli, "_loaded_model", load_other)
    status, _, err = _run(capsys, "evaluate", tmp_path / "m.nbgpu", data, "-q")
    assert status == 1
    assert "m.nbgpu changed while it was read" in err


def test_text_is_trained_on_in_small_chunks_by_default(trained, capsys, monkeypatch):
    tmp_path, data = trained
    sizes = []
    blocks = readers.read_blocks

    def read_blocks(path, chunk_bytes, **kw):
        sizes.append(chunk_bytes)
        return blocks(path, chunk_bytes, **kw)

    monkeypatch.setattr(readers, "read_blocks", read_blocks)
    monkeypatch.setattr(cli, "TEXT_TRAIN_CHUNK_BYTES", 1000)  # several chunks of this small file
    _ok(capsys, "train", data, "-o", tmp_path / "small.nbgpu", "--model", "complement", "--ngram-range", "1,2", "-q")
    assert sizes == [1000]
    _ok(capsys, "train", data, "-o", tmp_path / "one.nbgpu", "--model", "complement", "--ngram-range", "1,2", "-q",
        "--chunk-mb", "64")
    assert sizes == [1000, 64 * 2**20]
    one = _ok(capsys, "predict", tmp_path / "one.nbgpu", data, "--proba", "-q")
    assert _ok(capsys, "predict", tmp_path / "small.nbgpu", data, "--proba", "-q") == one
    # Scoring reads in the usual chunks: the weights of the columns a chunk uses are made once.
    sizes.clear()
    _ok(capsys, "evaluate", tmp_path / "small.nbgpu", data, "-q")
    assert sizes == [readers.CHUNK_BYTES]
