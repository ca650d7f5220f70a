"""nbgpu.text.HashingVectorizer against scikit-learn's on real text.

Two real corpora found offline on this machine (nothing is downloaded):

- ``en``: English, the docstrings of numpy, scipy and scikit-learn (every
  public module, class, function and method), one document each;
- ``ru``: Russian and Ukrainian (Cyrillic), the translated messages of the
  gettext catalogs (``*.mo``) under /usr/share/locale and /usr/share/vim;
- ``ja``: Japanese and Chinese, the same catalogs for ja, zh_CN, zh_TW.

``pytest benchmarks/test_bench_text_hashing.py`` times ``transform`` per
corpus and analyzer (groups ``hashing <corpus> <analyzer>``).
``python benchmarks/test_bench_text_hashing.py [repeats]`` prints the
speed-ups measured side by side in one process: medians of interleaved
repeats (sklearn, nbgpu, sklearn, ...), after checking the outputs are equal.
"""

from __future__ import annotations

import functools
import gettext
import glob
import importlib
import inspect
import os
import sys
import time
import warnings

import numpy as np
import pytest

CONFIGS = {
    "word": {"analyzer": "word"},
    "word12": {"analyzer": "word", "ngram_range": (1, 2)},
    "char24": {"analyzer": "char", "ngram_range": (2, 4)},
    "char_wb35": {"analyzer": "char_wb", "ngram_range": (3, 5)},
}
MAX_CHARS = 4_000_000  # per corpus, so a run stays short


def _docstrings(packages):
    seen, docs = set(), []

    def add(obj):
        doc = getattr(obj, "__doc__", None)
        if isinstance(doc, str) and len(doc) >= 40 and doc not in seen:
            seen.add(doc)
            docs.append(inspect.cleandoc(doc))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for top in packages:
            pkg = importlib.import_module(top)
            names = [top] + [
                m.name
                for m in __import__("pkgutil").walk_packages(pkg.__path__, top + ".")
                if not any(p.startswith("_") or p in ("tests", "testing") for p in m.name.split(".")[1:])
            ]
            for name in sorted(names):
                try:
                    mod = importlib.import_module(name)
                except Exception:  # noqa: BLE001  (optional dependencies)
                    continue
                add(mod)
                for attr, obj in sorted(vars(mod).items()):
                    if attr.startswith("_") or not str(getattr(obj, "__module__", "")).startswith(top):
                        continue
                    add(obj)
                    if inspect.isclass(obj):
                        for mname, member in sorted(vars(obj).items()):
                            if not mname.startswith("_"):
                                add(member)
    return docs


def _catalog_messages(languages):
    docs = []
    for root in ("/usr/share/locale", "/usr/share/vim"):
        for path in sorted(glob.glob(root + "/**/*.mo", recursive=True)):
            if not any(p.split(".")[0] in languages for p in path.split(os.sep)):
                continue
            try:
                with open(path, "rb") as fh:
                    catalog = gettext.GNUTranslations(fh)._catalog
            except Exception:  # noqa: BLE001  (malformed catalogs)
                continue
            docs.extend(v for k, v in catalog.items() if k and isinstance(v, str) and v)
    return docs


def _cap(docs):
    ends = np.cumsum([len(d) for d in docs])
    return docs[: int(np.searchsorted(ends, MAX_CHARS)) + 1]


@functools.lru_cache(maxsize=None)
def corpus(name):
    if name == "en":
        docs = _docstrings(["numpy", "scipy", "sklearn"])
    elif name == "ru":
        docs = _catalog_messages({"ru", "uk"})
    elif name == "ja":
        docs = _catalog_messages({"ja", "zh_CN", "zh_TW"})
    else:
        raise KeyError(name)
    if not docs:
        pytest.skip(f"no text found for corpus {name!r} on this machine")
    return _cap(docs)


def _vectorizers(config):
    from sklearn.feature_extraction.text import HashingVectorizer as Reference

    from nbgpu.text import HashingVectorizer

    return {"sklearn": Reference(**CONFIGS[config]), "nbgpu": HashingVectorizer(**CONFIGS[config])}


@pytest.mark.parametrize("impl", ["sklearn", "nbgpu"])
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("name", ["en", "ru", "ja"])
def test_hashing_transform(benchmark, name, config, impl):
    docs = corpus(name)
    vec = _vectorizers(config)[impl]
    benchmark.group = f"hashing {name} {config}"
    benchmark.extra_info.update({"corpus": name, "documents": len(docs), "characters": sum(map(len, docs))})
    benchmark.pedantic(vec.transform, args=(docs,), rounds=3, iterations=1, warmup_rounds=1)


def main(repeats=5):
    print(f"{'corpus':6} {'config':10} {'docs':>7} {'chars':>9} {'sklearn s':>10} {'nbgpu s':>9} {'speed-up':>8}")
    for name in ("en", "ru", "ja"):
        docs = corpus(name)
        chars = sum(map(len, docs))
        for config in CONFIGS:
            vecs = _vectorizers(config)
            a, b = vecs["sklearn"].transform(docs), vecs["nbgpu"].transform(docs)
            assert (a != b).nnz == 0 and np.array_equal(a.indices, b.indices) and np.array_equal(a.indptr, b.indptr)
            times = {"sklearn": [], "nbgpu": []}
            for _ in range(repeats):
                for impl, vec in vecs.items():
                    t0 = time.perf_counter()
                    vec.transform(docs)
                    times[impl].append(time.perf_counter() - t0)
            ts, tn = np.median(times["sklearn"]), np.median(times["nbgpu"])
            print(f"{name:6} {config:10} {len(docs):7d} {chars:9d} {ts:10.3f} {tn:9.3f} {ts / tn:7.2f}x", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
