"""``parsed_chunks(..., hash_here=True)``: text parsed in the reader's thread and hashed by the thread
that takes the chunks (``nbgpu train``) gives the chunks, empty ones and errors that hashing in the
reader's thread gives."""

import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from nbgpu._app.readers import TEXT_DEFAULTS, open_reader, parsed_chunks

VECTORIZER = {**TEXT_DEFAULTS, "n_features": 2**12, "ngram_range": (1, 2)}


def _chunks(path, *, hash_here, finish=None, **options):
    reader = open_reader(path, vectorizer=VECTORIZER, n_features=None, chunk_bytes=300, **options)
    return list(parsed_chunks(reader, labels=True, finish=finish, hash_here=hash_here))


def _assert_same(got, want):
    assert len(got) == len(want) > 3  # several chunks
    for g, w in zip(got, want):
        assert (g.X is None) == (w.X is None)
        if w.X is not None:
            assert g.X.format == w.X.format == "csr"
            assert g.X.has_canonical_format
            assert_array_equal(g.X.indptr, w.X.indptr)
            assert_array_equal(g.X.indices, w.X.indices)
            assert_array_equal(g.X.data, w.X.data)
            assert_array_equal(g.y, w.y)
        assert (g.lines, g.nbytes) == (w.lines, w.nbytes)


def _documents(n=60):
    rng = np.random.default_rng(0)
    words = ["naive", "Bayes", "counts", "Wörter", "テキスト", "the", "a", "of"]
    return [(" ".join(rng.choice(words, size=rng.integers(0, 9))), f"c{i % 3}") for i in range(n)]


def test_json_lines_hashed_by_the_taker_are_the_same(tmp_path):
    path = tmp_path / "d.jsonl"
    docs = _documents()
    lines = [json.dumps({"text": t, "label": y}) for t, y in docs]
    lines[7:7] = ["", "   "]  # blank lines: a chunk of them alone is empty
    path.write_text("\n".join(lines[:20]) + "\n" + "  \n" * 400 + "\n".join(lines[20:]) + "\n")
    want = _chunks(path, hash_here=False)
    assert any(c.X is None for c in want)  # an empty chunk on the way
    _assert_same(_chunks(path, hash_here=True), want)


def test_a_csv_text_column_hashed_by_the_taker_is_the_same(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("text,label\n" + "".join(f'"{t}",{y}\n' for t, y in _documents()))
    _assert_same(_chunks(path, hash_here=True, text_column="text"), _chunks(path, hash_here=False, text_column="text"))


def test_finish_runs_after_hashing(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"text": t, "label": y}) + "\n" for t, y in _documents()))
    finished = _chunks(path, hash_here=True, finish=lambda c: c._replace(X=c.X.shape))
    assert all(c.X == (c.y.shape[0], 2**12) for c in finished)


def test_a_hashing_error_names_its_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"text": "fine", "label": "a"}) + "\n" + '{"text": "lone \\ud800x", "label": "b"}\n')
    for hash_here in (False, True):
        with pytest.raises(ValueError, match=r"lines 1-2: a text holds a lone surrogate"):
            _chunks(path, hash_here=hash_here)
