"""Long tokens: hashed in time linear in their bytes, with scikit-learn's results.

The MurmurHash3 body of a string is a chain of one step per 4-byte block;
nbgpu runs the first block positions as array steps over every string and
leaves the blocks past them, of the few strings that long, to scikit-learn's
compiled hash (``nbgpu/text/_murmurhash.py``). Wall-clock time is not
asserted here; the number of array steps is.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer as Reference
from sklearn.utils.murmurhash import murmurhash3_32 as reference_murmur

from nbgpu.text import HashingVectorizer
from nbgpu.text import _murmurhash
from nbgpu.text._murmurhash import ByteWords, finish, murmurhash3_32, state

MIB = 2**20


def _strings(lengths, seed=0):
    rng = np.random.default_rng(seed)
    strings = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in lengths]
    sizes = np.array(lengths, dtype=np.int64)
    buf = np.frombuffer(b"".join(strings), dtype=np.uint8)
    return strings, ByteWords(buf, xp=np), np.cumsum(sizes) - sizes, sizes


def _lengths():
    rng = np.random.default_rng(1)
    edge = 4 * _murmurhash.ARRAY_BLOCKS  # where the array steps end for few strings
    lengths = list(range(41)) + [edge + d for d in range(-5, 9)] + [4099, 100_000, 2 * MIB]
    # more strings past the array steps than are left to the compiled hash
    lengths += rng.integers(edge + 1, edge + 600, _murmurhash._FEW_STRINGS + 80).tolist()
    rng.shuffle(lengths)
    return lengths


def test_long_strings_hash_as_scikit_learn():
    strings, words, starts, lengths = _strings(_lengths())
    got = murmurhash3_32(words, starts, lengths, xp=np)
    np.testing.assert_array_equal(got.view(np.int32), [reference_murmur(s, 0) for s in strings])


def test_long_strings_continue_a_given_state():
    # word n-grams extend the state of their first words: a seeded body
    strings, words, starts, lengths = _strings(_lengths(), seed=2)
    seeds = np.random.default_rng(3).integers(0, 2**32, len(strings), dtype=np.uint64).astype(np.uint32)
    h, tail = state(words, starts, lengths, xp=np, h=seeds.copy())
    expected = [reference_murmur(s, seed=int(k), positive=True) for s, k in zip(strings, seeds)]
    np.testing.assert_array_equal(finish(h, tail, lengths, xp=np), np.array(expected, dtype=np.uint32))


def test_the_final_mix_is_undone():
    values = np.random.default_rng(4).integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32)
    mixed = _murmurhash._final_mix(values.copy())
    assert [_murmurhash._unfinish(int(m)) for m in mixed] == values.tolist()


def test_array_steps_do_not_grow_with_the_token_length(monkeypatch):
    steps = []
    scramble = _murmurhash._scramble

    def counted(k):
        steps.append(k.shape[0])
        return scramble(k)

    monkeypatch.setattr(_murmurhash, "_scramble", counted)
    counts = []
    for size in (64 * 1024, 2 * MIB):
        steps.clear()
        HashingVectorizer(ngram_range=(1, 2)).transform(["a " + "x" * size + " b", "short words"])
        counts.append(len(steps))
    assert counts[0] == counts[1] <= 4 * _murmurhash.ARRAY_BLOCKS, counts


def _assert_same(params, docs):
    got, expected = HashingVectorizer(**params).transform(docs), Reference(**params).transform(docs)
    assert got.shape == expected.shape
    assert (got != expected).nnz == 0


_LONG = [
    "a " + "x" * (2 * MIB) + " b c",  # one 2 MiB token
    "words " + "y" * 5003 + " and " + "Z" * 1030 + " END",
    "é" * 300_001 + " ok",  # 600,002 bytes of UTF-8 in one token
    " ".join("q" * n for n in range(1, 41)),  # every length around the block boundaries
    "plain short document",
    "",
]


@pytest.mark.parametrize(
    "params",
    [{}, {"ngram_range": (1, 3)}, {"ngram_range": (2, 2)}, {"stop_words": "english", "ngram_range": (1, 2)},
     {"lowercase": False}, {"token_pattern": r"(?u)\b\w+\b", "ngram_range": (1, 2)}],
)
def test_long_tokens_give_scikit_learn_matrix(params):
    _assert_same(params, _LONG)


@pytest.mark.parametrize(
    "params",
    [{"analyzer": "char", "ngram_range": (1, 5)}, {"analyzer": "char_wb", "ngram_range": (2, 5)},
     {"analyzer": "char_wb", "ngram_range": (1, 3)}],
)
def test_long_tokens_give_scikit_learn_matrix_char_analyzers(params):
    docs = ["a " + "x" * 20_000 + " b", "é" * 3000 + " ok " + "Q" * 1500, " ".join("q" * n for n in range(1, 41))]
    _assert_same(params, docs)
