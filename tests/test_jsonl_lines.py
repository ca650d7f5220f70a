"""JSON lines read by one decoder call per line (``JsonlReader.parse``) give what reading each line
with ``json.loads`` and its checks (``JsonlReader._record``, the reference) gives: the same texts,
labels and line numbers, and the same first error, for lines of every shape."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from nbgpu._app.readers import TEXT_DEFAULTS, Block, _decoded, _label_text, label_array, open_reader


def _reader(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "a", "label": "b"}\n')
    return open_reader(path, vectorizer={**TEXT_DEFAULTS, "n_features": 2**10})


def _reference(reader, block, labels):
    """The chunk's texts and labels as the reference reads them, line by line."""
    texts, found, numbers = [], [], []
    for offset, line in enumerate(_decoded(reader.path, block).split("\n")):
        read = reader._record(line, block.first + offset, labels)
        if read is not None:
            texts.append(read[0])
            found.append(read[1])
            numbers.append(block.first + offset)
    y = None if not found or any(v is None for v in found) else [_label_text(v) for v in found]
    return texts, None if y is None else label_array(reader.path, y, numbers, len(block.data))


def _outcome(read):
    try:
        return read()
    except ValueError as exc:
        return str(exc)


def _assert_same(reader, data, *, first=1, labels=True):
    block = Block(data.encode("utf-8"), first, len(data))
    want = _outcome(lambda: _reference(reader, block, labels))
    got = _outcome(lambda: reader.parse(block, labels=labels, hashed=False))
    if isinstance(want, str):
        assert got == want
        return
    texts, y = want
    assert got.X == texts
    if y is None:
        assert got.y is None
    else:
        assert got.y.dtype == y.dtype
        assert_array_equal(got.y, y)
    assert got.lines == block.lines


LINES = [
    '{"text": "plain", "label": "a"}',
    '{"label": "a", "text": "keys in another order", "other": [1, {"x": null}]}',
    '{"text": "int label", "label": 3}',
    '{"text": "float label", "label": 3.0}',
    '{"text": "float label", "label": 2.5}',
    '{"text": "bool label", "label": true}',
    '{"text": "escapes \\u00e9\\n\\t\\"", "label": "\\u00e9t\\u00e9"}',
    '{"text": "", "label": "empty text"}',
    '  {"text": "leading spaces", "label": "a"}',
    '{"text": "trailing spaces", "label": "a"}  ',
    '{"text": "carriage return", "label": "a"}\r',
    "",
    "   ",
    "\t\r",
    '{"text": "duplicate key", "text": "the last", "label": "a"}',
    '{"text": "big int label", "label": 123456789012345678901234567890}',
]
BAD = [
    '{"text": "no label"}',
    '{"text": "null label", "label": null}',
    '{"text": "empty label", "label": ""}',
    '{"text": "list label", "label": [1]}',
    '{"text": 5, "label": "a"}',
    '{"label": "a"}',
    '["an", "array"]',
    '"a string"',
    "42",
    '{"text": "a", "label": "b"} trailing',
    '{"text": "a", "label": NaN}',
    '{"text": "a", "label": Infinity}',
    "not json",
    '{"text": "cut short',
    "[" * 100_000,
    '{"text": "a", "label": 1' + "0" * 5000 + "}",
]


@pytest.mark.parametrize("labels", [True, False])
def test_each_kind_of_line_alone_reads_as_the_reference(tmp_path, labels):
    reader = _reader(tmp_path)
    for line in LINES + BAD:
        _assert_same(reader, line + "\n", first=7, labels=labels)


def test_good_lines_together_read_as_the_reference(tmp_path):
    reader = _reader(tmp_path)
    data = "\n".join(LINES) + "\n"
    _assert_same(reader, data)
    # the decoder's path took the plain lines: the same chunk, one object per line
    plain = "".join(json.dumps({"text": f"t{i}", "label": f"c{i % 3}"}) + "\n" for i in range(50))
    _assert_same(reader, plain)


@pytest.mark.parametrize("bad", BAD)
def test_the_first_bad_line_is_named_as_the_reference_names_it(tmp_path, bad):
    reader = _reader(tmp_path)
    data = "\n".join(LINES[:3] + [bad] + LINES[3:] + [BAD[0]]) + "\n"
    _assert_same(reader, data, first=41)


def test_labels_not_asked_for_may_be_missing(tmp_path):
    reader = _reader(tmp_path)
    chunk = reader.parse(Block(b'{"text": "a"}\n{"text": "b", "label": "x"}\n', 1, 0), labels=False, hashed=False)
    assert chunk.X == ["a", "b"] and chunk.y is None


def test_the_longest_label_is_checked_against_the_bytes_read(tmp_path):
    reader = _reader(tmp_path)
    wide = "w" * 3_000_000
    data = '{"text": "a", "label": "short"}\n' * 2000 + json.dumps({"text": "b", "label": wide}) + "\n"
    with pytest.raises(ValueError, match="line 2001: a label of 3,000,000 characters"):
        reader.parse(Block(data.encode(), 1, 0), hashed=False)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=5,
)
_records = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=20), "label": st.text(min_size=1, max_size=4) | st.integers()}),
    st.fixed_dictionaries({"text": st.text(max_size=20), "label": _json_values}),
    st.fixed_dictionaries({"text": _json_values}, optional={"label": _json_values, "x": _json_values}),
    _json_values,
)
_lines = st.tuples(_records, st.sampled_from(["", " ", "\t", "\r"]), st.sampled_from(["", " ", "\r"])).map(
    lambda t: t[1] + json.dumps(t[0], ensure_ascii=False) + t[2]) | st.sampled_from(["", "  ", "{", "nul"])


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_lines, min_size=1, max_size=12), labels=st.booleans())
def test_random_lines_read_as_the_reference(tmp_path, lines, labels):
    _assert_same(_reader(tmp_path), "\n".join(lines) + "\n", first=3, labels=labels)


def test_surrogates_in_labels_are_refused_as_before(tmp_path):
    reader = _reader(tmp_path)
    data = '{"text": "a", "label": "ok"}\n{"text": "b", "label": "\\ud800"}\n'
    _assert_same(reader, data)
    with pytest.raises(ValueError, match="line 2: the label holds a lone surrogate"):
        reader.parse(Block(data.encode(), 1, 0), hashed=False)
    assert np.asarray(reader.parse(Block(data.encode()[:29], 1, 0), hashed=False).y).tolist() == ["ok"]
