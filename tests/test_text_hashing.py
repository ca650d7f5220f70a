"""nbgpu.text.HashingVectorizer gives scikit-learn's HashingVectorizer's matrix exactly."""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.feature_extraction.text import HashingVectorizer as Reference
from sklearn.naive_bayes import MultinomialNB
from sklearn.pipeline import make_pipeline
from sklearn.utils.murmurhash import murmurhash3_32 as reference_murmur

import nbgpu.text
from nbgpu.text import HashingVectorizer
from nbgpu.text import _pipeline, _words
from nbgpu.text._charclass import EXTRA_SHIFT, WORD, code_point_flags, lower_code_points
from nbgpu.text._transform import DEFAULTS
from nbgpu.text._murmurhash import ByteWords, extend, finish, hash_to_index, murmurhash3_32, state

DOCS = [
    "This is the first document.",
    "This document is the second document!  And THE third: one, two; three.",
    "",
    "   ",
    "a",
    "Это второй документ, по-русски. Ещё: ёлка, ЁЖ.",
    "Ελληνικά: ΟΔΟΣ οδός ΑΣ' ΣΑ Σ",
    "日本語のテキストと中文文本，混合 mixed 123 ١٢٣ العربية",
    "naïve café résumé Ångström façade coöperate",
    "İstanbul İİ ßtraße ǅemal ﬁnance ＦＵＬＬ",
    "emoji 😀🎉 👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
    "combining e\u0301 a\u0308\u0304 \u0301lead",
    "tabs\tand\nnewlines\r\n\x0bvertical\x0cform\x1c\x1d\x1e\x1f\x85\u2028\u3000end",
    "under_score snake_case x_1 __init__ 3.14 1,000 v2",
    "a b c d e f g h i j k l m n o p",
    "x" * 300 + " " + "abc" * 50,
    "repeat repeat repeat repeat Repeat REPEAT",
]

CASES = [
    {},
    {"ngram_range": (1, 2)},
    {"ngram_range": (2, 3)},
    {"ngram_range": (1, 4), "n_features": 2**10},
    {"analyzer": "char"},
    {"analyzer": "char", "ngram_range": (2, 4)},
    {"analyzer": "char", "ngram_range": (1, 5), "n_features": 1000},
    {"analyzer": "char_wb", "ngram_range": (3, 5)},
    {"analyzer": "char_wb", "ngram_range": (1, 3)},
    {"analyzer": "char_wb", "ngram_range": (5, 8)},
    {"lowercase": False},
    {"lowercase": False, "analyzer": "char", "ngram_range": (1, 2)},
    {"stop_words": "english"},
    {"stop_words": "english", "ngram_range": (1, 3)},
    {"stop_words": ["the", "document", "это", "οδός", "😀", 3]},
    {"strip_accents": "ascii"},
    {"strip_accents": "unicode"},
    {"strip_accents": "unicode", "analyzer": "char_wb", "ngram_range": (2, 3)},
    {"strip_accents": "ascii", "analyzer": "char", "ngram_range": (1, 3)},
    {"binary": True},
    {"binary": True, "norm": None, "n_features": 7},
    {"alternate_sign": False},
    {"alternate_sign": False, "norm": "l1", "analyzer": "char"},
    {"norm": None},
    {"norm": "l1"},
    {"n_features": 1},
    {"n_features": 3, "norm": None, "ngram_range": (1, 2)},
    {"n_features": 2**31 - 1},
    {"dtype": np.float32},
    {"dtype": np.float32, "norm": None, "analyzer": "char"},
    {"dtype": np.int64, "norm": None},
    {"dtype": np.int8, "norm": None, "binary": True},
    {"token_pattern": r"(?u)\b\w+\b"},
    {"token_pattern": r"\b\w\w+\b", "ngram_range": (1, 2)},
]


def assert_same(got, want):
    assert type(got) is type(want)
    assert got.format == want.format == "csr"
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    assert got.indices.dtype == want.indices.dtype
    assert got.indptr.dtype == want.indptr.dtype
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


def both(params, docs):
    return HashingVectorizer(**params).transform(docs), Reference(**params).transform(docs)


@pytest.mark.parametrize("params", CASES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default")
def test_parity(params):
    assert_same(*both(params, DOCS))


@pytest.mark.parametrize(
    "params", [{}, {"ngram_range": (1, 3)}, {"analyzer": "char", "ngram_range": (2, 3)}, {"analyzer": "char_wb"}]
)
def test_parity_many_chunks(monkeypatch, params):
    # small chunks: every document boundary case crosses a chunk boundary somewhere
    monkeypatch.setattr(_pipeline, "CHUNK_CHARS_WORD", 64)
    monkeypatch.setattr(_pipeline, "CHUNK_CHARS_CHAR", 64)
    docs = DOCS * 7
    assert_same(*both(params, docs))


# the word analyzers' documents without the two characters str.lower treats
# specially (U+0130 lowercases to two, U+03A3 by its context)
_PLAIN_LOWER = [d for d in DOCS if "\u0130" not in d and "\u03a3" not in d]
_BMP = [d for d in _PLAIN_LOWER if max(d, default="a") < "\U00010000"]  # UTF-16 without surrogates


@pytest.mark.parametrize("share", [0.0, 2.0], ids=["code-points", "bytes"])
@pytest.mark.parametrize(
    "params",
    [
        {"ngram_range": (1, 3)},
        {"lowercase": False, "ngram_range": (1, 2)},
        {"strip_accents": "unicode", "ngram_range": (1, 2)},
        {"token_pattern": r"(?u)\b\w+\b"},
        {"stop_words": "english", "ngram_range": (2, 2)},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()),
)
def test_word_tokens_on_bytes_and_on_code_points(monkeypatch, share, params):
    # share 0: a chunk with a character outside ASCII in its sample of
    # documents (all of them, when few) is tokenized on its code points
    # (lowered by the table, or by str.lower when U+0130 or U+03A3 is in it);
    # share 2: every chunk on its UTF-8 bytes
    monkeypatch.setattr(_words, "CODE_POINT_SHARE", share)
    assert_same(*both(params, DOCS))
    assert_same(*both(params, _PLAIN_LOWER))
    assert_same(*both(params, _BMP))
    assert_same(*both(params, ["ASCII only, no CAPITAL left", "a b", ""]))
    assert_same(*both(params, ["Plain ASCII words"] * 150 + DOCS))  # a sample that may miss the others


def test_word_tokens_longer_than_the_block_count_keys():
    # block counts of 256 and more (uint16 sort keys) and of 65536 and more (int64)
    docs = ["a" * 1030 + " short é" * 3, "x" * (2**18 + 7) + " y" + " ё" * 600 + "ж" * 700, "tail"]
    assert_same(*both({"ngram_range": (1, 2)}, docs))


def test_bytes_input_and_decode_errors():
    docs = [d.encode("utf-8") for d in DOCS] + ["mixed str", b"caf\xe9 latin-1"]
    for params in [{"decode_error": "replace"}, {"decode_error": "ignore", "analyzer": "char"}]:
        assert_same(*both(params, docs))
    assert_same(*both({"encoding": "latin-1"}, [b"caf\xe9 na\xefve", "str"]))
    with pytest.raises(UnicodeDecodeError):
        HashingVectorizer().transform(docs)


@pytest.mark.parametrize("separators", ["\x00", "\x00\x01\x03", "".join(_pipeline._SEPARATORS)])
def test_control_characters_and_callable_strip_accents(separators):
    # the word analyzers join a chunk's documents with a control character
    # that none contains, or tokenize them one by one when all occur
    docs = [f"a{c}b ab{c}cd ΑΣ{c}ΣΑ" for c in separators] + ["plain", "ΣΑΣ"]
    analyzers = [{"analyzer": "char"}, {"analyzer": "char_wb"}]
    for params in [{}, {"ngram_range": (1, 2)}, {"strip_accents": str.upper}, *analyzers]:
        assert_same(*both(params, docs))


def test_other_inputs():
    assert_same(*both({}, tuple(DOCS)))
    assert_same(*both({}, np.array(DOCS, dtype=object)))
    assert_same(HashingVectorizer().transform(iter(DOCS)), Reference().transform(DOCS))
    assert_same(*both({}, [np.str_("numpy str_ doc")]))


@pytest.mark.parametrize(
    "params",
    [
        {"analyzer": lambda doc: doc.split()},
        {"preprocessor": str.upper},
        {"tokenizer": str.split},
        {"token_pattern": r"[a-z]+"},
        {"dtype": np.uint8, "norm": None, "alternate_sign": False},
    ],
    ids=["analyzer", "preprocessor", "tokenizer", "token_pattern", "uint8"],
)
def test_fallback_gives_sklearn_results(params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's own warnings about unused params
        assert_same(*both(params, DOCS))


def test_fallback_float16_raises_as_sklearn():
    with pytest.raises(ValueError, match="float16"):
        Reference(dtype=np.float16).transform(DOCS)
    with pytest.raises(ValueError, match="float16"):
        HashingVectorizer(dtype=np.float16).transform(DOCS)


def test_fallback_input_file_and_filename(tmp_path):
    paths = []
    for i, doc in enumerate(DOCS[:5]):
        path = tmp_path / f"{i}.txt"
        path.write_text(doc, encoding="utf-8")
        paths.append(str(path))
    assert_same(*both({"input": "filename"}, paths))
    files = [open(p, "rb") for p in paths]  # noqa: SIM115
    try:
        got = HashingVectorizer(input="file").transform(files)
    finally:
        for f in files:
            f.close()
    assert_same(got, Reference(input="filename").transform(paths))


def test_stop_words_exact_under_hash_collisions():
    # the stop word "the" and a token with the same 32-bit hash must not be confused
    vec = HashingVectorizer(stop_words=["the"], norm=None)
    stop = nbgpu.text._stopwords.StopWords(["the", "zz"])
    buf = np.frombuffer(b"the thf zz zy", dtype=np.uint8)
    starts = np.array([0, 4, 8, 11])
    lengths = np.array([3, 3, 2, 2])
    words = ByteWords(buf, xp=np)
    # hashes forced equal to the stop words': only byte equality decides
    forced = np.array([stop.hashes[0], stop.hashes[0], stop.hashes[1], stop.hashes[1]], dtype=np.uint32)
    forced = np.where(lengths == 3, murmurhash3_32(words, starts[:1], lengths[:1], xp=np)[0], forced)
    forced[2:] = murmurhash3_32(words, starts[2:3], lengths[2:3], xp=np)[0]
    got = stop.member(words, starts, lengths, forced, xp=np)
    np.testing.assert_array_equal(got, [True, False, True, False])
    assert_same(vec.transform(["the thf the"]), Reference(stop_words=["the"], norm=None).transform(["the thf the"]))


def test_murmurhash_matches_sklearn():
    rng = np.random.default_rng(0)
    strings = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in rng.integers(0, 70, 500)]
    strings += [b"", b"a", b"ab", b"abc", b"abcd", "тест".encode()]
    lengths = np.array([len(s) for s in strings], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    buf = np.frombuffer(b"".join(strings), dtype=np.uint8)
    h = murmurhash3_32(ByteWords(buf, xp=np), starts, lengths, xp=np)
    signed = np.array([reference_murmur(s, 0) for s in strings], dtype=np.int64)
    np.testing.assert_array_equal(h.view(np.int32), signed)
    index, negative = hash_to_index(h, 12345, xp=np)
    np.testing.assert_array_equal(index, np.abs(signed) % 12345)
    np.testing.assert_array_equal(negative, signed < 0)
    # strings of one length, given as an int (character n-grams of ASCII text)
    for length in range(13):
        same = [s[:length] for s in strings if len(s) >= length][:50]
        starts = np.arange(len(same), dtype=np.int64) * length
        buf = np.frombuffer(b"".join(same), dtype=np.uint8)
        h = murmurhash3_32(ByteWords(buf, xp=np), starts, length, xp=np)
        np.testing.assert_array_equal(h.view(np.int32), [reference_murmur(s, 0) for s in same])
    # the one hash whose absolute value does not fit int32
    index, negative = hash_to_index(np.array([2**31], dtype=np.uint32), 1000, xp=np)
    assert index[0] == (2147483647 - 999) % 1000 and negative[0]


@pytest.mark.parametrize("split", [0, 1, 2, 3, 5, 9])
def test_extend_hashes_strings_joined_by_a_space(split):
    # the state of a, extended by b and then by c, hashes a + b" " + b + b" " + c
    rng = np.random.default_rng(split)
    n = 300
    parts = [[rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in rng.integers(lo, 14, n)] for lo in (0, 1, 1)]
    parts[0][:split] = [b""] * split
    flat = [p for triple in zip(*parts) for p in triple]
    lengths = np.array([len(p) for p in flat], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    words = ByteWords(np.frombuffer(b"".join(flat), dtype=np.uint8), xp=np)
    h, tail = state(words, starts[0::3], lengths[0::3], xp=np)
    np.testing.assert_array_equal(
        finish(h, tail, lengths[0::3], xp=np).view(np.int32), [reference_murmur(a, 0) for a in parts[0]]
    )
    length = lengths[0::3]
    for k in (1, 2):
        h, tail, length = extend(words, h, tail, length, starts[k::3], lengths[k::3], xp=np)
        want = [b" ".join(ps[: k + 1]) for ps in zip(*parts)]
        np.testing.assert_array_equal(length, [len(w) for w in want])
        np.testing.assert_array_equal(finish(h, tail, length, xp=np).view(np.int32), [reference_murmur(w, 0) for w in want])


def test_code_point_tables_match_python():
    cps = np.arange(0x110000, dtype=np.uint32)
    cps = cps[((cps < 0xD800) | (cps >= 0xE000)) & ((cps < 0x3000) | (cps % 5 == 0))]  # a fifth past U+3000
    chars = [chr(c) for c in cps.tolist()]
    flags = code_point_flags(cps, xp=np)
    word = re.compile(r"(?u)\w")
    np.testing.assert_array_equal((flags & WORD) != 0, [bool(word.match(ch)) for ch in chars])
    np.testing.assert_array_equal(flags >> EXTRA_SHIFT, [len(ch.encode("utf-8")) - 1 for ch in chars])
    plain = np.flatnonzero((cps != 0x130) & (cps != 0x3A3))
    low = [chars[i].lower() for i in plain.tolist()]
    lowered, is_word, extra = lower_code_points(cps[plain], xp=np)
    np.testing.assert_array_equal(lowered, [ord(ch) for ch in low])
    np.testing.assert_array_equal(is_word, [bool(word.match(ch)) for ch in low])
    np.testing.assert_array_equal(extra, [len(ch.encode("utf-8")) - 1 for ch in low])
    bmp = np.flatnonzero(cps[plain] < 0x10000)  # UTF-16 code units: the low 16 bits
    lowered16, is_word16, extra16 = lower_code_points(cps[plain][bmp].astype(np.uint16), xp=np)
    np.testing.assert_array_equal(lowered16.astype(np.uint16), lowered[bmp])
    np.testing.assert_array_equal(is_word16, is_word[bmp])
    np.testing.assert_array_equal(extra16, extra[bmp])
    for special in (0x130, 0x3A3):  # two code points; the final sigma
        assert lower_code_points(np.array([0x41, special], dtype=np.uint32), xp=np) is None


def test_re_space_is_str_isspace():
    # char_wb splits with str.split after scikit-learn's r"\s\s+" -> " "; equal sets make that exact
    space = re.compile(r"\s")
    assert all(bool(space.match(chr(c))) == chr(c).isspace() for c in range(0x110000))


# --------------------------------------------------------------------------- #
# random Unicode text
# --------------------------------------------------------------------------- #
_ALPHABET = st.characters(
    codec="utf-8",
    categories=["L", "M", "N", "P", "S", "Z", "Cc"],
    include_characters="İΣσςß \t\n\r\x0b\x0c\x1c\x85\u2028\u3000\u0301\x00",
)
_DOCS = st.lists(st.text(alphabet=_ALPHABET, max_size=40), min_size=1, max_size=8)


@pytest.mark.parametrize(
    "params",
    [
        {"analyzer": "word", "ngram_range": (1, 2), "norm": None},
        {"analyzer": "word", "stop_words": "english", "strip_accents": "unicode"},
        {"analyzer": "char", "ngram_range": (1, 3), "norm": None},
        {"analyzer": "char_wb", "ngram_range": (2, 4), "lowercase": False},
    ],
    ids=["word", "word-stop-strip", "char", "char_wb"],
)
@settings(max_examples=150, deadline=None)
@given(docs=_DOCS)
def test_random_unicode_parity(params, docs):
    params = {"n_features": 2**12, **params}
    assert_same(*both(params, docs))


@pytest.mark.parametrize("share", [0.0, 2.0], ids=["code-points", "bytes"])
@settings(max_examples=150, deadline=None)
@given(docs=_DOCS)
def test_random_unicode_word_tokens_on_bytes_and_on_code_points(share, docs):
    saved = _words.CODE_POINT_SHARE
    _words.CODE_POINT_SHARE = share
    try:
        assert_same(*both({"ngram_range": (1, 3), "norm": None, "n_features": 2**12}, docs))
    finally:
        _words.CODE_POINT_SHARE = saved


# --------------------------------------------------------------------------- #
# estimator API
# --------------------------------------------------------------------------- #
def test_same_parameters_as_sklearn():
    assert HashingVectorizer().get_params() == Reference().get_params()
    # The defaults the command line and model files use without the estimator.
    assert DEFAULTS == Reference().get_params()


def test_hashing_imports_no_sklearn():
    # The command line hashes its first chunk while scikit-learn is imported; the
    # estimator implements scikit-learn's protocol itself and hashes without it.
    code = (
        "import sys; import nbgpu.text._transform as t; p = {'n_features': 16, 'norm': None}; "
        "X = t.hashed_matrix(['a b', 'c'], t.fast_plan(p)); "
        "assert X.shape == (2, 16), X.shape; "
        "import nbgpu.text; vec = nbgpu.text.HashingVectorizer(n_features=2**10, ngram_range=(1, 2)); "
        "X = vec.fit_transform(['one short document', b'and bytes', '']); "
        "vec.set_params(norm='l1').get_params(); vec.transform(['x y']); repr(vec); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_api():
    assert nbgpu.text.__all__ == sorted(nbgpu.text.__all__) == ["HashingVectorizer"]


def test_fit_partial_fit_fit_transform_clone_pickle():
    vec = HashingVectorizer(n_features=2**8, ngram_range=(1, 2))
    assert vec.fit(DOCS) is vec and vec.partial_fit(DOCS) is vec
    assert_same(vec.fit_transform(DOCS), Reference(n_features=2**8, ngram_range=(1, 2)).fit_transform(DOCS))
    twin = clone(vec)
    assert twin.get_params() == vec.get_params()
    assert_same(twin.transform(DOCS), vec.transform(DOCS))
    assert_same(pickle.loads(pickle.dumps(vec)).transform(DOCS), vec.transform(DOCS))
    vec.set_params(analyzer="char")
    assert_same(vec.transform(DOCS), Reference(n_features=2**8, ngram_range=(1, 2), analyzer="char").transform(DOCS))
    tags = vec.__sklearn_tags__()
    assert tags.input_tags.string and not tags.input_tags.two_d_array and not tags.requires_fit


def test_pipeline():
    y = np.arange(len(DOCS)) % 2
    ours = make_pipeline(HashingVectorizer(n_features=2**10, alternate_sign=False), MultinomialNB()).fit(DOCS, y)
    ref = make_pipeline(Reference(n_features=2**10, alternate_sign=False), MultinomialNB()).fit(DOCS, y)
    np.testing.assert_array_equal(ours.predict_proba(DOCS), ref.predict_proba(DOCS))


def test_sparray_interface():
    import sklearn

    if "sparse_interface" not in sklearn.get_config():
        pytest.skip("this scikit-learn has no sparse_interface option")
    with sklearn.config_context(sparse_interface="sparray"):
        got, want = both({}, DOCS)
    assert sp.issparse(got) and not sp.isspmatrix(got)
    assert_same(got, want)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"ngram_range": (2, 1)}, ValueError, "ngram_range"),
        ({"n_features": 0}, ValueError, "n_features"),
        ({"norm": "l3"}, ValueError, "norm"),
        ({"analyzer": "words"}, ValueError, "analyzer"),
        ({"stop_words": "french"}, ValueError, "stop_words"),
        ({"strip_accents": "latin"}, ValueError, "strip_accents"),
        ({"input": "url"}, ValueError, "input"),
    ],
)
def test_errors_as_sklearn(params, error, match):
    with pytest.raises(error, match=match):
        HashingVectorizer(**params).fit(DOCS)
    with pytest.raises(error, match=match):
        Reference(**params).fit(DOCS)


def test_transform_errors_as_sklearn():
    with pytest.raises(ValueError, match="ngram_range"):
        HashingVectorizer(ngram_range=(2, 1)).transform(DOCS)
    with pytest.raises(ValueError, match="string object received"):
        HashingVectorizer().transform("one string")
    with pytest.raises(ValueError, match="np.nan is an invalid document"):
        HashingVectorizer().transform(["ok", np.nan])
    assert_same(*both({}, ["lone \ud800 surrogate"]))  # not inside a token: no error
    with pytest.raises(UnicodeEncodeError):
        HashingVectorizer(analyzer="char").transform(["lone \ud800 surrogate"])
    with pytest.raises(type(_reference_error(lambda: Reference().transform([])))):
        HashingVectorizer().transform([])


def _reference_error(call):
    try:
        call()
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("scikit-learn raised nothing")


def test_stop_word_consistency_warning_as_sklearn():
    params = {"stop_words": ["and", "we're"]}
    with pytest.warns(UserWarning, match="stop_words may be inconsistent"):
        HashingVectorizer(**params).transform(DOCS)
    with pytest.warns(UserWarning, match="stop_words may be inconsistent"):
        Reference(**params).transform(DOCS)


def test_no_features_is_an_error_not_a_crash():
    """n_features=0 reached scikit-learn's hashing, which divides by it: the process died
    ("Floating point exception"). transform now refuses it as fit does."""
    with pytest.raises(ValueError, match=r"'n_features' parameter .* Got 0 instead"):
        HashingVectorizer(n_features=0, norm=None).transform(["hello world"])
