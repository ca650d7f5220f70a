"""Quick checks of ``corpora.py``: small builds into a temporary folder.

Run with ``pytest benchmarks/test_corpora.py`` (not part of the unit tests).
The man page corpora need ``apt-get download`` to reach Debian's archive (or
the .deb files already in ``$NBGPU_CORPORA/_src/debs``); where it cannot,
those tests are skipped with the builder's message.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora
from _corpora_roff import roff_blocks, unescape


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    r = tmp_path_factory.mktemp("corpora")
    # reuse .deb files already downloaded to the default cache (no network then)
    cached = corpora.root_dir() / "_src" / "debs"
    if cached.is_dir():
        shutil.copytree(cached, r / "_src" / "debs")
    return r


def _small(name, root):
    try:
        return corpora.build(name, root=root, small=True)
    except corpora.CorpusUnavailable as exc:
        pytest.skip(f"{name}: {exc}")


def _check_jsonl(p: Path) -> tuple[list[str], list[str]]:
    texts, labels = [], []
    raw = p.read_bytes()
    assert raw.endswith(b"\n")
    for line in raw.decode("utf-8").split("\n")[:-1]:
        doc = json.loads(line)
        assert set(doc) == {"text", "label"}
        assert isinstance(doc["text"], str) and doc["text"].strip()
        assert isinstance(doc["label"], str) and doc["label"]
        texts.append(doc["text"])
        labels.append(doc["label"])
    assert len(set(texts)) == len(texts), "documents are deduplicated"
    return texts, labels


def test_roff_to_text():
    src = "\n".join([
        '.\\" a comment',
        ".TH TEST 1",
        ".SH ОПИСАНИЕ",
        "Команда \\fBtest\\fP проверяет \\(lqусловие\\(rq\\-и \\fIвыходит\\fR.",
        ".BR ls (1),",
        ".PP",
        ".nf",
        "code line",
        ".fi",
        ".EX",
        "skipped example",
        ".EE",
        ".SH \"SEE ALSO\"",
        "\\fBls\\fP(1)",
    ])
    blocks = roff_blocks(src)
    assert blocks[0] == ("ОПИСАНИЕ", "Команда test проверяет \u201cусловие\u201d-и выходит. ls(1),")
    assert ("ОПИСАНИЕ", "code line") in blocks
    assert all("skipped" not in t for _, t in blocks)
    assert blocks[-1] == ("SEE ALSO", "ls(1)")
    assert roff_blocks(".so man3/other.3\n") == []
    assert unescape("a\\[u0416]b\\s-1c\\s0\\*(lq") == "aЖbc\u201c"


def test_merge_small():
    cands = [["a", "a.x"]] * 5 + [["a", "a.y"]] * 2 + [["a", "a.z"]] * 2 + [["b", "b.x"]]
    assert corpora._merge_small(cands, 3) == ["a.x"] * 5 + ["a"] * 4 + ["other"]


def test_unknown_name():
    with pytest.raises(KeyError):
        corpora.path("no-such-corpus")
    assert set(corpora.names()) >= {"pydoc-en", "manpages-ru", "manpages-ja"}


def test_pydoc_small(root):
    p = _small("pydoc-en", root)
    texts, labels = _check_jsonl(p)
    assert len(texts) > 1000
    assert len(set(labels)) >= 2
    assert all(len(t) >= 40 for t in texts)
    meta = json.loads((root / "pydoc-en.meta.json").read_text(encoding="utf-8"))
    assert meta["documents"] == len(texts) and meta["classes"] == len(set(labels))
    t5, l5 = corpora.load("pydoc-en", limit=5, root=root)
    assert (t5, l5) == (texts[:5], labels[:5])


@pytest.mark.parametrize("name,letters", [("manpages-ru", corpora._CYRILLIC),
                                          ("manpages-ja", corpora._CJK)])
def test_manpages_small(root, name, letters):
    p = _small(name, root)
    texts, labels = _check_jsonl(p)
    assert len(texts) > 300
    assert len(set(labels)) >= 2
    assert all(label.startswith("man") or label == "other" for label in labels)
    native = sum(len(letters.findall(t)) for t in texts)
    latin = sum(len(corpora._LATIN.findall(t)) for t in texts)
    assert native / (native + latin) > 0.6, "mostly non-Latin letters"
    # a second build from the cached .deb files gives the same bytes
    first = p.read_bytes()
    assert corpora.build(name, root=root, small=True).read_bytes() == first


def test_cli_info(root, capsys):
    if not (root / "pydoc-en.jsonl").exists():
        pytest.skip("pydoc-en not built")
    assert corpora.main(["--out", os.fspath(root), "info", "pydoc-en"]) == 0
    out = capsys.readouterr().out
    assert "pydoc-en" in out and "docs" in out and "Latin" in out
