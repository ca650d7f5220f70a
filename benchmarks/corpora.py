"""Real labelled text corpora for nbgpu's benchmarks, built offline.

Every corpus is made from text that is already on the machine or comes from
Debian's package archive -- nothing else is downloaded -- and is cached as
JSON lines (``{"text": ..., "label": ...}``, one document a line, UTF-8) in
``benchmarks/.corpora/`` (``--out DIR`` or ``$NBGPU_CORPORA`` to move it),
next to a ``NAME.meta.json`` with the sources' versions, counts and the build
time.  Only this script is in the repository, never the corpora.

Corpora
-------
``pydoc-en`` -- English, docstrings of installed Python code.
    Source: the docstrings of the public modules, classes, functions, methods,
    properties (and documented objects such as ufuncs and scipy.stats
    distributions) of the Python standard library and of the packages that
    ``pip install nbgpu[torch,dask,test,bench]`` brings in: numpy, scipy,
    scikit-learn, pandas, matplotlib, dask, distributed, torch and torch's
    own dependencies sympy, networkx, mpmath, plus Pillow, fontTools, jinja2,
    tornado, fsspec, toolz and dateutil.  Packages that are not installed are
    left out (``NAME.meta.json`` lists them and every version used), so the
    corpus depends on the environment: compare timings on one build only.
    Extraction runs in child processes (one per package, two at a time) with
    ``PYTHONHASHSEED=0``, no user site, stdout/stderr discarded,
    ``MPLBACKEND=Agg``, HOME and the cache directories pointed at a temporary
    folder, a 20 s limit per module, and modules that open windows, print or
    start things never imported (tkinter, turtle, antigravity, ``this``,
    idlelib, test suites, matplotlib backends).
    Public means no name component starting with ``_``; an object counts for
    a package only if its ``__module__`` belongs to that package (re-exports
    are not counted twice), and inherited members are taken once.
    Texts are ``inspect.cleandoc``-ed, object addresses (``0x7f...``) masked
    and example lines marked ``# may vary`` dropped (so that two builds give
    the same bytes), at least 40 characters and 5 words;
    identical texts are kept once (first in sorted module/name order).
    Labels: the package and its first subpackage taken from where the object
    is defined (``scipy.stats``, ``torch.nn``, ``sklearn.linear_model``; for
    the standard library the top-level module, ``asyncio``, ``email``...).
    A label with fewer than 300 documents falls back to its package
    (``torch`` then means "torch outside the subpackages listed"), and a
    package left with fewer than 300 goes to ``other``.
    Licences: each package's own (PSF for Python, BSD/MIT/Apache/HPND for the
    others); the texts are only read locally as benchmark input.

``manpages-ru`` -- Russian (Cyrillic), Debian's translated manual pages.
    Source: Debian packages ``manpages-ru`` and ``manpages-ru-dev``
    (manpages-l10n project: translations of the Linux man-pages project and
    other pages; GPL-3+ for the translations), fetched with
    ``apt-get download`` and unpacked with ``dpkg-deb -x`` in the cache
    folder (no installation, no root needed when apt's package lists are
    present; as root the script runs ``apt-get update`` once when they are
    missing or stale, and says so; with no archive it stops with a message).  Documents are paragraphs of the pages converted from roff to
    plain text (standard library only, see ``_corpora_roff.py``), from every
    section except the synopsis, "see also", translator and colophon ones;
    kept when at least 60 characters, with at least 30 Cyrillic letters that
    make at least half of the letters (po4a leaves untranslated paragraphs in
    English); deduplicated.  Label: the manual section (``man2`` system
    calls, ``man3`` library functions, ``man7`` overviews ...); sections with
    fewer than 150 paragraphs are merged into ``other`` (man6 and man8 here).

``manpages-ja`` -- Japanese (CJK), the same from ``manpages-ja`` and
    ``manpages-ja-dev`` (JM project translations; licences per page, the
    Linux man-pages ones are free to redistribute).  Paragraphs of at least
    25 characters with at least 15 kana/kanji making at least half of the
    letters.

Measured here (Debian 12, Python 3.11, 2 cores; torch 2.13, numpy 2.4,
scipy 1.17, scikit-learn 1.9, pandas 3.1, sympy from torch's requirements):

=============  ======  =======  =======  =====  ==========  ======  ========
corpus         docs    classes  MB       chars  letters     build   baseline
=============  ======  =======  =======  =====  ==========  ======  ========
pydoc-en       35,357  32       32.9     869    Latin       50-120  0.762
manpages-ru    14,011  7        5.3      202    86% Cyr.    2-5 s   0.646
manpages-ja    31,902  8        10.0     119    79% CJK     3-5 s   0.696
=============  ======  =======  =======  =====  ==========  ======  ========

"chars" is the mean document length; "build" in seconds (the man pages
after a ~1 s download of 4-6 MB of .deb files); "baseline" is the accuracy of
``HashingVectorizer(n_features=2**20, ngram_range=(1, 2),
alternate_sign=False)`` + ``ComplementNB`` on a stratified 80/20 split
(``python corpora.py baseline``); the majority class is 0.144, 0.381 and
0.355.  Two builds give the same bytes (pydoc-en for the same installed
versions; the man pages for the same .deb versions, listed in the meta file).

Use
---
``load(name, limit=None) -> (texts, labels)``, ``path(name)`` (builds it if
missing), ``build(name)``, ``names()``; from a shell
``python benchmarks/corpora.py build [NAME ...]`` and ``... info``.
Documents are stored in a fixed shuffled order (seeded), so ``limit=n`` takes
a deterministic sample that holds every class in about its proportion.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import glob
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the helpers sit next to this file
    sys.path.insert(0, str(HERE))

from _corpora_roff import roff_blocks

DEFAULT_ROOT = HERE / ".corpora"
SEED = 20240917


class CorpusUnavailable(RuntimeError):
    """The source of a corpus cannot be had on this machine."""


def root_dir(root: str | os.PathLike | None = None) -> Path:
    if root is None:
        root = os.environ.get("NBGPU_CORPORA") or DEFAULT_ROOT
    return Path(root)


# --------------------------------------------------------------------------
# writing and reading
# --------------------------------------------------------------------------

def _write(name: str, docs: list[tuple[str, str]], meta: dict, root: Path) -> Path:
    """Shuffle (seeded) and write ``docs`` as JSON lines plus the meta file."""
    docs = sorted(docs)
    random.Random(SEED).shuffle(docs)
    root.mkdir(parents=True, exist_ok=True)
    out = root / f"{name}.jsonl"
    tmp = out.with_suffix(".jsonl.tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        for text, label in docs:
            fh.write(json.dumps({"text": text, "label": label}, ensure_ascii=False) + "\n")
    counts = collections.Counter(label for _, label in docs)
    meta = dict(meta, name=name, documents=len(docs), classes=len(counts),
                bytes=tmp.stat().st_size, per_class=dict(sorted(counts.items())))
    tmp.replace(out)
    (root / f"{name}.meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1),
                                           encoding="utf-8")
    return out


def _merge_small(labels: list[list[str]], minimum: int, other: str = "other") -> list[str]:
    """Pick for each document the most specific label that has ``minimum`` documents.

    ``labels[i]`` lists candidate labels from general to specific.  Specific
    labels are decided first; documents of too-small ones fall back one level,
    where they are counted together; what is too small at the top is ``other``.
    """
    depth = max(len(c) for c in labels)
    chosen: list[str | None] = [None] * len(labels)
    for level in range(depth - 1, -1, -1):
        counts = collections.Counter(c[level] for i, c in enumerate(labels)
                                     if chosen[i] is None and len(c) > level)
        for i, c in enumerate(labels):
            if chosen[i] is None and len(c) > level and counts[c[level]] >= minimum:
                chosen[i] = c[level]
    return [c if c is not None else other for c in chosen]


# --------------------------------------------------------------------------
# pydoc-en: docstrings
# --------------------------------------------------------------------------

PYDOC_PACKAGES = [  # the slowest first: two workers share them
    "sympy", "torch", "stdlib", "numpy", "scipy", "sklearn", "pandas", "matplotlib", "dask",
    "distributed", "networkx", "mpmath", "PIL", "fontTools", "jinja2", "tornado",
    "fsspec", "toolz", "dateutil",
]
PYDOC_SMALL = ["stdlib", "numpy"]
PYDOC_MIN_CLASS = 300
PYDOC_WORKERS = 2
PYDOC_TIMEOUT_S = 240


def _extract_docstrings(packages: list[str], python: str = sys.executable) -> dict:
    worker = HERE / "_corpora_docstrings.py"
    with tempfile.TemporaryDirectory(prefix="nbgpu-corpora-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.update(PYTHONHASHSEED="0", PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1",
                   HOME=tmp, XDG_CACHE_HOME=tmp, XDG_CONFIG_HOME=tmp, MPLCONFIGDIR=tmp,
                   MPLBACKEND="Agg", DISPLAY="", WAYLAND_DISPLAY="", TQDM_DISABLE="1",
                   OMP_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")

        def one(pkg: str) -> dict:
            out = os.path.join(tmp, f"{pkg}.json")
            cmd = [python, "-s", str(worker), out, pkg]
            try:
                subprocess.run(cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=PYDOC_TIMEOUT_S, check=True)
                with open(out, encoding="utf-8") as fh:
                    return json.load(fh)
            except (subprocess.SubprocessError, OSError, ValueError) as exc:
                return {"rows": [], "skipped": [f"{pkg} (worker failed: {exc})"],
                        "timing": {}, "versions": {}}

        with concurrent.futures.ThreadPoolExecutor(PYDOC_WORKERS) as pool:
            parts = list(pool.map(one, packages))
    merged = {"rows": [], "skipped": [], "timing": {}, "versions": {}}
    for part in parts:
        merged["rows"].extend(part["rows"])
        merged["skipped"].extend(part["skipped"])
        merged["timing"].update(part["timing"])
        merged["versions"].update(part["versions"])
    return merged


def _public_prefix(module: str) -> list[str]:
    parts = []
    for p in module.split("."):
        if p.startswith("_"):
            break
        parts.append(p)
    return parts


def _pydoc_candidates(found: str, owner: str, group: str) -> list[str]:
    """General-to-specific labels of one docstring."""
    if group == "stdlib":
        top = owner.split(".")[0].lstrip("_")
        if top not in sys.stdlib_module_names or top == "builtins":
            top = found.split(".")[0]
        return ["stdlib", top]
    pub = _public_prefix(owner)
    if len(pub) < 2 or pub[0] != group:
        pub = found.split(".")
    return [group, ".".join(pub[:2])] if len(pub) >= 2 else [group]


_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_MAY_VARY = re.compile(r"^.*#\s*may vary\s*$", re.MULTILINE)


def _stable(doc: str) -> str:
    """Drop what changes from run to run: object addresses, random example output."""
    return _MAY_VARY.sub("", _ADDRESS.sub("0x...", doc))


def _words(text: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", text))


def build_pydoc(root: Path, small: bool = False) -> Path:
    packages = PYDOC_SMALL if small else PYDOC_PACKAGES
    data = _extract_docstrings(packages)
    if not data["rows"]:
        raise CorpusUnavailable("no docstrings extracted; skipped: " + "; ".join(data["skipped"]))
    rows = []
    for found, qualname, _kind, owner, doc in data["rows"]:
        doc = _stable(doc)
        if len(doc) < 40 or _words(doc) < 5:
            continue
        group = found.split(".")[0]
        if found.split(".")[0] in sys.stdlib_module_names and group not in PYDOC_PACKAGES:
            group = "stdlib"
        rows.append((found, qualname, doc, _pydoc_candidates(found, owner, group)))
    rows.sort(key=lambda r: (r[0], r[1]))
    seen: set[str] = set()
    texts, cands = [], []
    for _found, _q, doc, cand in rows:
        if doc in seen:
            continue
        seen.add(doc)
        texts.append(doc)
        cands.append(cand)
    labels = _merge_small(cands, 60 if small else PYDOC_MIN_CLASS)
    meta = {"language": "en", "script": "Latin", "source": "docstrings of installed Python code",
            "packages": packages, "versions": data["versions"],
            "skipped_modules": data["skipped"], "extract_seconds": data["timing"]}
    return _write("pydoc-en", list(zip(texts, labels)), meta, root)


# --------------------------------------------------------------------------
# manpages-*: Debian's translated manual pages
# --------------------------------------------------------------------------

_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")

MANPAGES = {
    "manpages-ru": {"packages": ["manpages-ru", "manpages-ru-dev"], "lang": "ru",
                    "script": "Cyrillic", "letters": _CYRILLIC, "min_chars": 60,
                    "min_letters": 30},
    "manpages-ja": {"packages": ["manpages-ja", "manpages-ja-dev"], "lang": "ja",
                    "script": "CJK", "letters": _CJK, "min_chars": 25, "min_letters": 15},
}
MANPAGES_MIN_CLASS = 150
MANPAGES_SMALL_PAGES = 12  # pages per section in a small build

# Section headings whose paragraphs are not running text about the page's
# subject: synopsis, see also, translators, colophon, authors, copyright.
_SKIP_HEADINGS = re.compile(
    r"SYNOPSIS|СИНТАКСИС|ОБЗОР|書式|SEE ALSO|СМ\. ТАКЖЕ|関連項目|ПЕРЕВОД|COLOPHON|КОЛОФОН|"
    r"この文書について|翻訳|著作権|作者|AUTHORS?|АВТОР|COPYRIGHT|АВТОРСКИЕ|LIBRARY|БИБЛИОТЕКА|"
    r"REPORTING BUGS|ОБ ОШИБКАХ", re.IGNORECASE)


def _say(msg: str) -> None:
    print(f"[corpora] {msg}", file=sys.stderr, flush=True)


def _fetch_debs(packages: list[str], dest: Path) -> list[Path]:
    """``.deb`` files of ``packages`` in ``dest``, downloaded with apt-get if missing."""
    dest.mkdir(parents=True, exist_ok=True)

    def have():
        found = []
        for pkg in packages:
            hits = sorted(dest.glob(f"{pkg}_*.deb"))
            if not hits:
                return None
            found.append(hits[-1])
        return found

    debs = have()
    if debs:
        return debs
    if shutil.which("apt-get") is None:
        raise CorpusUnavailable(
            f"needs the Debian packages {' '.join(packages)} but apt-get is not available; "
            f"put their .deb files in {dest}")
    cmd = ["apt-get", "download", *packages]
    _say(f"running: {' '.join(cmd)}  (in {dest})")
    res = subprocess.run(cmd, cwd=dest, capture_output=True, text=True, check=False)
    stale = re.search(r"Unable to locate|Can't select|No candidate|404", res.stderr)
    if res.returncode != 0 and stale and hasattr(os, "geteuid") and os.geteuid() == 0:
        # package lists missing or out of date: refresh them once
        _say("apt-get download failed; running: apt-get update")
        subprocess.run(["apt-get", "update"], capture_output=True, text=True, check=False)
        _say(f"running: {' '.join(cmd)}  (in {dest})")
        res = subprocess.run(cmd, cwd=dest, capture_output=True, text=True, check=False)
    debs = have()
    if res.returncode != 0 or not debs:
        errors = [ln for ln in res.stderr.splitlines() if ln.startswith("E:")] or [res.stderr]
        raise CorpusUnavailable(
            f"`{' '.join(cmd)}` failed (exit {res.returncode}): "
            f"{' / '.join(errors).strip()[-600:]}\n"
            f"Run `apt-get update` (as root) and try again, or put the .deb files in {dest}.")
    return debs


def _unpack_deb(deb: Path, dest: Path) -> None:
    if shutil.which("dpkg-deb"):
        _say(f"running: dpkg-deb -x {deb.name} {dest}")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
        return
    # ar archive holding data.tar.{xz,gz}: the standard library can read it
    import io
    import tarfile
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        raise CorpusUnavailable(f"{deb} is not a Debian package")
    pos = 8
    while pos + 60 <= len(raw):
        name = raw[pos:pos + 16].decode().strip().rstrip("/")
        size = int(raw[pos + 48:pos + 58].decode().strip())
        body = raw[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name.startswith("data.tar"):
            try:
                with tarfile.open(fileobj=io.BytesIO(body)) as tar:
                    tar.extractall(dest, filter="data")
            except tarfile.TarError as exc:
                raise CorpusUnavailable(f"cannot unpack {deb} ({name}) without dpkg-deb: {exc}")
            return
    raise CorpusUnavailable(f"no data.tar member in {deb}")


def _deb_version(deb: Path) -> str:
    return deb.name.split("_")[1] if deb.name.count("_") >= 2 else "?"


def build_manpages(name: str, root: Path, small: bool = False) -> Path:
    cfg = MANPAGES[name]
    src = root / "_src"
    debs = _fetch_debs(cfg["packages"], src / "debs")
    tree = src / name
    stamp = tree / ".unpacked"
    want = "\n".join(d.name for d in debs)
    if not stamp.exists() or stamp.read_text() != want:
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        for deb in debs:
            _unpack_deb(deb, tree)
        stamp.write_text(want)
    pattern = str(tree / "usr" / "share" / "man" / cfg["lang"] / "man*" / "*")
    files = sorted(glob.glob(pattern))
    if not files:
        raise CorpusUnavailable(f"no manual pages under {pattern}")
    per_section: collections.Counter = collections.Counter()
    letters = cfg["letters"]
    seen: set[str] = set()
    texts, cands = [], []
    pages = 0
    for f in files:
        section = Path(f).parent.name[3:][:1]  # man3 -> "3", man3p -> "3"
        if small and per_section[section] >= MANPAGES_SMALL_PAGES:
            continue
        opener = gzip.open if f.endswith(".gz") else open
        with opener(f, "rb") as fh:
            source = fh.read().decode("utf-8", errors="replace")
        blocks = roff_blocks(source)
        if not blocks:
            continue
        per_section[section] += 1
        pages += 1
        for heading, text in blocks:
            if _SKIP_HEADINGS.search(heading):
                continue
            text = unicodedata.normalize("NFC", text)
            n = len(letters.findall(text))
            if len(text) < cfg["min_chars"] or n < cfg["min_letters"]:
                continue
            if n < len(_LATIN.findall(text)):
                continue
            if text in seen:
                continue
            seen.add(text)
            texts.append(text)
            cands.append([f"man{section}"])
    labels = _merge_small(cands, 40 if small else MANPAGES_MIN_CLASS)
    meta = {"language": cfg["lang"], "script": cfg["script"],
            "source": "Debian packages " + ", ".join(d.name for d in debs),
            "versions": {d.name.split("_")[0]: _deb_version(d) for d in debs},
            "pages": pages, "licence": "see usr/share/doc/*/copyright in " + str(tree)}
    return _write(name, list(zip(texts, labels)), meta, root)


# --------------------------------------------------------------------------
# API
# --------------------------------------------------------------------------

_BUILDERS = {
    "pydoc-en": build_pydoc,
    "manpages-ru": lambda root, small=False: build_manpages("manpages-ru", root, small),
    "manpages-ja": lambda root, small=False: build_manpages("manpages-ja", root, small),
}


def names() -> list[str]:
    """Names of the corpora this module can build."""
    return list(_BUILDERS)


def _check(name: str) -> None:
    if name not in _BUILDERS:
        raise KeyError(f"unknown corpus {name!r}; known: {', '.join(_BUILDERS)}")


def build(name: str, *, root: str | os.PathLike | None = None, small: bool = False) -> Path:
    """(Re)build corpus ``name``; ``small=True`` uses a subset of the sources (tests)."""
    _check(name)
    r = root_dir(root)
    t0 = time.perf_counter()
    out = _BUILDERS[name](r, small=small)
    meta_path = r / f"{name}.meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["build_seconds"] = round(time.perf_counter() - t0, 1)
    meta["small"] = small
    meta_path.write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    return out


def path(name: str, *, root: str | os.PathLike | None = None) -> Path:
    """Path of corpus ``name``'s JSON lines file, built first if missing."""
    _check(name)
    p = root_dir(root) / f"{name}.jsonl"
    return p if p.exists() else build(name, root=root)


def load(name: str, *, limit: int | None = None,
         root: str | os.PathLike | None = None) -> tuple[list[str], list[str]]:
    """``(texts, labels)`` of corpus ``name`` (the first ``limit`` documents if given)."""
    texts: list[str] = []
    labels: list[str] = []
    with open(path(name, root=root), encoding="utf-8") as fh:
        for line in fh:
            if limit is not None and len(texts) >= limit:
                break
            doc = json.loads(line)
            texts.append(doc["text"])
            labels.append(doc["label"])
    return texts, labels


def _script_share(texts: list[str]) -> dict[str, float]:
    counts: collections.Counter = collections.Counter()
    for t in texts:
        for ch in t:
            if ch.isalpha():
                if _LATIN.match(ch):
                    counts["Latin"] += 1
                elif _CYRILLIC.match(ch):
                    counts["Cyrillic"] += 1
                elif _CJK.match(ch):
                    counts["CJK"] += 1
                else:
                    counts["other"] += 1
    total = sum(counts.values()) or 1
    return {k: round(v / total, 3) for k, v in counts.most_common()}


def info(name: str, root: str | os.PathLike | None = None) -> dict:
    r = root_dir(root)
    p = r / f"{name}.jsonl"
    if not p.exists():
        return {"name": name, "built": False}
    texts, labels = load(name, root=root)
    meta_path = r / f"{name}.meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
    return {"name": name, "built": True, "documents": len(texts),
            "classes": len(set(labels)), "bytes": p.stat().st_size,
            "mean_chars": round(sum(map(len, texts)) / max(len(texts), 1), 1),
            "script": _script_share(texts), "build_seconds": meta.get("build_seconds"),
            "small": meta.get("small")}


def baseline(name: str, root: str | os.PathLike | None = None, *, seed: int = 0) -> dict:
    """Sanity baseline: hashed 1-2-grams + ComplementNB on a stratified 80/20 split."""
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import ComplementNB

    texts, labels = load(name, root=root)
    vec = HashingVectorizer(n_features=2**20, ngram_range=(1, 2), alternate_sign=False)
    tr_x, te_x, tr_y, te_y = train_test_split(texts, labels, test_size=0.2,
                                              stratify=labels, random_state=seed)
    t0 = time.perf_counter()
    clf = ComplementNB().fit(vec.transform(tr_x), tr_y)
    pred = clf.predict(vec.transform(te_x))
    acc = sum(p == t for p, t in zip(pred, te_y)) / len(te_y)
    majority = collections.Counter(te_y).most_common(1)[0][1] / len(te_y)
    return {"name": name, "accuracy": round(acc, 4),
            "majority": round(majority, 4), "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="cache folder (default $NBGPU_CORPORA or benchmarks/.corpora)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build corpora (all when none named)")
    b.add_argument("names", nargs="*", metavar="NAME", help=", ".join(names()))
    b.add_argument("--small", action="store_true", help="small version from part of the sources")
    i = sub.add_parser("info", help="documents, classes, bytes, mean length, script")
    i.add_argument("names", nargs="*", metavar="NAME")
    bl = sub.add_parser("baseline", help="HashingVectorizer + ComplementNB accuracy, 80/20 split")
    bl.add_argument("names", nargs="*", metavar="NAME")
    args = ap.parse_args(argv)
    chosen = args.names or names()
    for n in chosen:
        if n not in _BUILDERS:
            ap.error(f"unknown corpus {n!r}; known: {', '.join(names())}")
    if args.cmd == "build":
        failed = 0
        for n in chosen:
            _say(f"building {n} ...")
            try:
                out = build(n, root=args.out, small=args.small)
            except CorpusUnavailable as exc:
                _say(f"{n}: source not available: {exc}")
                failed += 1
                continue
            d = info(n, root=args.out)
            _say(f"{n}: {d['documents']} documents, {d['classes']} classes, "
                 f"{d['bytes'] / 1e6:.1f} MB in {d['build_seconds']} s -> {out}")
        return 1 if failed else 0
    if args.cmd == "baseline":
        for n in chosen:
            r = baseline(n, root=args.out)
            print(f"{n:12s} word 1-2-grams + ComplementNB: accuracy {r['accuracy']:.3f}"
                  f" (majority class {r['majority']:.3f}; {r['seconds']} s)")
        return 0
    for n in chosen:
        d = info(n, root=args.out)
        if not d["built"]:
            print(f"{n:12s} not built")
            continue
        script = ", ".join(f"{k} {v:.0%}" for k, v in d["script"].items())
        print(f"{n:12s} {d['documents']:7d} docs {d['classes']:3d} classes "
              f"{d['bytes'] / 1e6:7.1f} MB  mean {d['mean_chars']:7.1f} chars  "
              f"letters: {script}  built in {d['build_seconds']} s"
              + ("  (small)" if d["small"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
