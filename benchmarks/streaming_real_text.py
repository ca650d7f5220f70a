"""partial_fit in 1, 10, 100 and 1,000 chunks against one fit, on real text.

The corpus: Debian's package descriptions with their archive section as the
label (``apt-cache dumpavail``: about 63,000 short technical descriptions,
50-odd sections; needs ``apt-get update`` once), hashed to 2**20 word and
word-bigram features (float32 CSR, as ``nbgpu train`` makes them). Falls back
to a JSON-lines corpus given as ``--corpus FILE`` (``{"text", "label"}``).

Every run fits ComplementNB on the first 50,000 documents (one ``fit``, or
``partial_fit`` over equal chunks) and then predicts the next 1,000: the
model's parameters are derived once, as a user streaming a corpus pays for
them. Also timed: a 1-row ``partial_fit`` into the fitted 2**20-wide model,
and ``load`` + predict 1 row of its saved file. nbgpu and scikit-learn are
timed in the same process, medians of interleaved repeats. Run from the
repository root:

    python benchmarks/streaming_real_text.py [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def debian_descriptions():
    """(texts, labels) from the package lists apt has (short descriptions)."""
    out = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True, errors="replace", check=True)
    texts, labels = [], []
    for stanza in out.stdout.split("\n\n"):
        fields = dict(
            line.split(":", 1) for line in stanza.splitlines() if line and line[0] not in " \t" and ":" in line
        )
        if "Description" in fields and "Section" in fields:
            texts.append(fields["Description"].strip())
            labels.append(fields["Section"].strip().rsplit("/", 1)[-1])
    return texts, np.asarray(labels)


def jsonl(path):
    texts, labels = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            texts.append(doc["text"])
            labels.append(doc["label"])
    return texts, np.asarray(labels)


def median_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="JSON-lines corpus instead of Debian's descriptions")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)

    import nbgpu
    from nbgpu.text import HashingVectorizer

    texts, labels = jsonl(args.corpus) if args.corpus else debian_descriptions()
    rng = np.random.default_rng(0)
    order = rng.permutation(len(texts))
    texts = [texts[i] for i in order]
    labels = labels[order]
    vec = HashingVectorizer(n_features=2**20, ngram_range=(1, 2), alternate_sign=False, norm=None, dtype=np.float32)
    X = vec.transform(texts[:51_000]).tocsr()
    y = labels[:51_000]
    Xtr, ytr, Xte = X[:50_000], y[:50_000], X[50_000:51_000]
    classes = np.unique(ytr)
    print(f"{Xtr.shape[0]} documents, {Xtr.shape[1]} features, {Xtr.nnz} stored values, {classes.size} classes")

    def run(n_chunks):
        model = nbgpu.ComplementNB()
        if n_chunks == 0:
            model.fit(Xtr, ytr)
        else:
            step = -(-Xtr.shape[0] // n_chunks)
            for a in range(0, Xtr.shape[0], step):
                model.partial_fit(Xtr[a : a + step], ytr[a : a + step], classes=classes)
        model.predict(Xte)

    results = {}
    chunks = (0, 1, 10, 100, 1000)
    times = {n: [] for n in chunks}
    for n in chunks:
        run(n)  # warm
    for _ in range(args.repeats):
        for n in chunks:
            start = time.perf_counter()
            run(n)
            times[n].append(time.perf_counter() - start)
    fit_s = float(np.median(times[0]))
    for n in chunks:
        t = float(np.median(times[n]))
        label = "one fit + predict" if n == 0 else f"{n} chunks + predict"
        print(f"{label:24s} {t:8.3f} s   speed {fit_s / t:5.2f}x one fit")
        results[label] = {"seconds": t, "speed_vs_fit": fit_s / t}

    model = nbgpu.ComplementNB().fit(Xtr, ytr)
    one = Xte[:1]
    one_y = ytr[:1]
    single = [median_of(lambda: model.partial_fit(one, one_y), 21) for _ in range(1)][0]
    print(f"1-row partial_fit into the fitted model: {1e3 * single:.2f} ms")
    results["1-row partial_fit ms"] = 1e3 * single

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.nbgpu")
        nbgpu.save(nbgpu.ComplementNB().fit(Xtr, ytr), path)
        load_predict = median_of(lambda: nbgpu.load(path).predict(one), 7)
    print(f"load + predict 1 row: {1e3 * load_predict:.1f} ms")
    results["load + predict 1 row ms"] = 1e3 * load_predict

    from sklearn.naive_bayes import ComplementNB as SkComplementNB

    sk_fit = median_of(lambda: SkComplementNB().fit(Xtr, ytr).predict(Xte), args.repeats)
    print(f"scikit-learn one fit + predict {sk_fit:.3f} s   nbgpu {sk_fit / fit_s:.2f}x")
    results["sklearn fit + predict s"] = sk_fit
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"shape": list(Xtr.shape), "nnz": int(Xtr.nnz), "classes": int(classes.size),
                       "python": sys.version.split()[0], "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
