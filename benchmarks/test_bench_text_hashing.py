"""nbgpu.text.HashingVectorizer against scikit-learn's on real text.

The corpora of ``benchmarks/corpora.py`` (built offline from installed
Python packages and Debian's archive; ``python benchmarks/corpora.py build``):

- ``pydoc-en``: English docstrings (about 870 characters each);
- ``manpages-ru``: Russian man-page paragraphs (about 200 characters);
- ``manpages-ja``: Japanese man-page paragraphs (about 120 characters).

Each is cut to its first ``MAX_CHARS`` characters (the stored order is a
seeded shuffle, so the cut is a deterministic sample).

``pytest benchmarks/test_bench_text_hashing.py`` times ``transform`` per
corpus and analyzer (groups ``hashing <corpus> <analyzer>``), and a fresh
process's first ``transform`` of one short document against its import of
numpy and scipy.sparse alone (group ``first transform``; issue 37's target:
0.25 s where those imports take 0.15 s; the suite checks that it imports no
scikit-learn, ``tests/test_text_estimator.py``).
``python benchmarks/test_bench_text_hashing.py [repeats] [corpus ...]``
prints the speed-ups measured side by side in one process, after checking
the outputs are equal: repeats are interleaved (sklearn, nbgpu, sklearn,
...), and the table gives the median and the best time of each and the
ratios of the medians and of the minima, the CPU time nbgpu took per second
of its median run (up to the number of cores; below 2 on two cores means the
other core was busy, or waiting on the GIL), with the load average before
and after (the timings are only as good as the machine was quiet).
"""

from __future__ import annotations

import functools
import os
import sys
import time

import corpora
import numpy as np
import pytest

CONFIGS = {
    "word": {"analyzer": "word"},
    "word12": {"analyzer": "word", "ngram_range": (1, 2)},
    "char24": {"analyzer": "char", "ngram_range": (2, 4)},
    "char_wb35": {"analyzer": "char_wb", "ngram_range": (3, 5)},
}
CORPORA = ("pydoc-en", "manpages-ru", "manpages-ja")
MAX_CHARS = 4_000_000  # per corpus, so a run stays short


@functools.cache
def corpus(name):
    try:
        texts, _ = corpora.load(name)
    except corpora.CorpusUnavailable as exc:
        pytest.skip(f"corpus {name!r} cannot be built here: {exc}")
    ends = np.cumsum([len(d) for d in texts])
    return texts[: int(np.searchsorted(ends, MAX_CHARS)) + 1]


def _vectorizers(config):
    from sklearn.feature_extraction.text import HashingVectorizer as Reference

    from nbgpu.text import HashingVectorizer

    return {"sklearn": Reference(**CONFIGS[config]), "nbgpu": HashingVectorizer(**CONFIGS[config])}


@pytest.mark.parametrize("impl", ["sklearn", "nbgpu"])
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("name", CORPORA)
def test_hashing_transform(benchmark, name, config, impl):
    docs = corpus(name)
    vec = _vectorizers(config)[impl]
    benchmark.group = f"hashing {name} {config}"
    benchmark.extra_info.update({"corpus": name, "documents": len(docs), "characters": sum(map(len, docs))})
    benchmark.pedantic(vec.transform, args=(docs,), rounds=3, iterations=1, warmup_rounds=1)


def _load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main(repeats=5, names=CORPORA):
    print(f"load average (1/5/15 min) before: {_load()}; {os.cpu_count()} CPUs; {repeats} interleaved repeats")
    print(
        f"{'corpus':12} {'config':10} {'docs':>6} {'chars':>8} {'sklearn med/min s':>18} "
        f"{'nbgpu med/min s':>16} {'x median':>8} {'x min':>6} {'cores':>5}"
    )
    for name in names:
        docs = corpus(name)
        chars = sum(map(len, docs))
        for config in CONFIGS:
            vecs = _vectorizers(config)
            a, b = vecs["sklearn"].transform(docs), vecs["nbgpu"].transform(docs)
            assert (a != b).nnz == 0 and np.array_equal(a.indices, b.indices) and np.array_equal(a.indptr, b.indptr)
            times = {"sklearn": [], "nbgpu": []}
            cpu = []
            for _ in range(repeats):
                for impl, vec in vecs.items():
                    c0, t0 = time.process_time(), time.perf_counter()
                    vec.transform(docs)
                    times[impl].append(time.perf_counter() - t0)
                    if impl == "nbgpu":
                        cpu.append((time.process_time() - c0) / times[impl][-1])
            ts, tn = np.median(times["sklearn"]), np.median(times["nbgpu"])
            ms, mn = min(times["sklearn"]), min(times["nbgpu"])
            print(
                f"{name:12} {config:10} {len(docs):6d} {chars:8d} {ts:9.3f}/{ms:.3f} {tn:9.3f}/{mn:.3f}"
                f" {ts / tn:7.2f}x {ms / mn:5.2f}x {np.median(cpu):5.2f}",
                flush=True,
            )
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5, tuple(sys.argv[2:]) or CORPORA)


_COLD = {
    "numpy + scipy.sparse": "import numpy, scipy.sparse",
    "first transform": "import nbgpu.text; nbgpu.text.HashingVectorizer().transform(['one short document'])",
}


@pytest.mark.parametrize("what", list(_COLD))
def test_first_transform_in_a_fresh_process(benchmark, what):
    import subprocess

    benchmark.group = "first transform"
    run = functools.partial(subprocess.run, [sys.executable, "-c", _COLD[what]], check=True)
    benchmark.pedantic(run, rounds=5, iterations=1)
