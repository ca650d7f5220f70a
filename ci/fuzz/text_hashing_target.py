"""Fuzz campaign: nbgpu.text.HashingVectorizer on long tokens gives scikit-learn's matrix, value for value.

Case ``i`` (choices from ``random.Random(i)``) makes a few documents mixing
ordinary words with tokens of random lengths up to a few MiB (ASCII,
multi-byte UTF-8, digits and underscores, and lengths around the 4-byte
blocks of MurmurHash3), and a random vectorizer: word analyzer with
n-grams up to 4 (long tokens inside the n-grams), or char / char_wb
n-grams (tokens up to 64 KiB there: scikit-learn makes every char n-gram
a Python string), lowercase or not, ``alternate_sign``, ``binary``,
``norm``, ``n_features`` and ``dtype``. The property: the CSR matrices are
identical (shape, dtype, indptr, indices, data) and nbgpu takes no longer
than ``2 x scikit-learn + 2 s``.

    python ci/fuzz/text_hashing_target.py --survey 200
    python ci/fuzz/text_hashing_target.py --minutes 5
    python ci/fuzz/text_hashing_target.py --replay 17     # one case, with its traceback

``tests/test_fuzz_round3.py`` runs a few seeded cases by number.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
import traceback

import numpy as np

MIB = 2**20
WORDS = ("the", "cat", "sat", "on", "a", "mat", "naïve", "café", "Straße", "ΟΔΟΣ", "日本語", "x1", "A", "I", "__init__")
_ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabc",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВ",
    "日本語中文字漢",
    "é\u0301ñüßİı",
    "0123456789_",
    "😀🎉👍",
    "aé日😀_9",
)


def _length(rng, cap):
    kind = rng.randint(0, 3)
    if kind == 0:  # around a block edge
        return max(2, 4 * rng.randint(1, 4096) + rng.randint(-3, 3))
    if kind == 1:
        return rng.randint(2, 5000)
    return min(cap, int(2 ** rng.uniform(10, np.log2(cap))))


def _token(rng, n):
    alphabet = rng.choice(_ALPHABETS)
    if len(set(alphabet)) == 1 or rng.randint(0, 2) == 0:
        return rng.choice(alphabet) * n
    unit = "".join(rng.choice(alphabet) for _ in range(min(n, 257)))
    return (unit * (n // len(unit) + 1))[:n]


def make_case(case):
    """(params, docs) of case ``case``."""
    rng = random.Random(case)
    analyzer = rng.choice(("word", "word", "word", "char", "char_wb"))
    if analyzer == "word":
        lo = rng.randint(1, 3)
        ngram, cap = (lo, lo + rng.randint(0, 1)), rng.choice((MIB, 2 * MIB, 4 * MIB))
    else:
        lo = rng.randint(1, 5)
        ngram, cap = (lo, lo + rng.randint(0, 3)), 64 * 1024
    params = {
        "analyzer": analyzer,
        "ngram_range": ngram,
        "lowercase": rng.random() < 0.7,
        "alternate_sign": rng.random() < 0.6,
        "binary": rng.random() < 0.2,
        "norm": rng.choice(("l2", "l1", None)),
        "n_features": rng.choice((2**20, 2**18, 1000, 7, 2**31 - 1)),
        "dtype": rng.choice((np.float64, np.float64, np.float32)),
    }
    if params["norm"] is None and rng.random() < 0.3:
        params["dtype"] = np.int64
    docs, budget = [], rng.choice((2, 4, 8)) * MIB if analyzer == "word" else 256 * 1024
    for _ in range(rng.randint(1, 5)):
        parts = []
        for _ in range(rng.randint(0, 6)):
            if rng.random() < 0.4 and budget > 4:
                n = min(_length(rng, cap), budget)
                budget -= n
                parts.append(_token(rng, n))
            else:
                parts.append(rng.choice(WORDS))
        docs.append(rng.choice((" ", "  ", "\n", ", ", "\t")).join(parts))
    return params, docs


def check_case(case, *, slack=2.0):
    """Compare both vectorizers on case ``case``; returns (seconds nbgpu, seconds scikit-learn, total bytes)."""
    from sklearn.feature_extraction.text import HashingVectorizer as Reference

    from nbgpu.text import HashingVectorizer

    params, docs = make_case(case)
    t = time.perf_counter()
    want = Reference(**params).transform(docs)
    t_ref = time.perf_counter() - t
    t = time.perf_counter()
    got = HashingVectorizer(**params).transform(docs)
    t_got = time.perf_counter() - t
    assert type(got) is type(want) and got.format == want.format == "csr", (type(got), got.format)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)
    assert t_got <= slack * t_ref + 2.0, f"nbgpu took {t_got:.2f} s, scikit-learn {t_ref:.2f} s"
    return t_got, t_ref, sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)


def describe(case):
    params, docs = make_case(case)
    lengths = [sorted((len(w) for w in d.split()), reverse=True)[:3] for d in docs]
    return f"{params}, {len(docs)} docs, longest tokens (chars) {lengths}"


def survey(first, n_cases, deadline):
    tally, failures, done, worst = collections.Counter(), [], 0, (0.0, None)
    total_bytes = 0
    for case in range(first, first + n_cases):
        if time.monotonic() >= deadline:
            break
        params = make_case(case)[0]
        key = f"{params['analyzer']} {params['ngram_range']}"
        try:
            t_got, t_ref, nbytes = check_case(case)
            tally[key, "same"] += 1
            total_bytes += nbytes
            if t_got > worst[0]:
                worst = (t_got, case, t_ref)
        except Exception as exc:  # noqa: BLE001  (any failure: count it, go on)
            tally[key, f"FAILED {type(exc).__name__}"] += 1
            failures.append((case, f"{type(exc).__name__}: {exc}"[:300]))
        done += 1
    print(f"{done} cases (from case {first}), {total_bytes / MIB:.0f} MiB of text; slowest nbgpu {worst[0]:.2f} s (case {worst[1]}, scikit-learn {worst[2] if worst[1] is not None else 0:.2f} s)")
    for (key, outcome), count in sorted(tally.items()):
        print(f"{count:8d}  {key:16s} {outcome}")
    for case, what in failures[:50]:
        print(f"case {case}: {what}\n    {describe(case)[:400]}")
    return 1 if failures else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--survey", type=int)
    parser.add_argument("--minutes", type=float)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--replay", type=int)
    args = parser.parse_args(argv)
    if args.replay is not None:
        print(describe(args.replay)[:2000])
        try:
            print(check_case(args.replay))
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            return 1
        return 0
    if args.survey is None and args.minutes is None:
        parser.error("give --survey N, --minutes M or --replay CASE")
    deadline = time.monotonic() + (args.minutes * 60 if args.minutes else float("inf"))
    return survey(args.first, args.survey or 10**12, deadline)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
