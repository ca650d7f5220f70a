"""Fuzzing model files, shared by the fuzz test and the fuzz target (ci/fuzz).

The seeds are valid model files, small and of every kind of content; the
property every mutation of them must have is :func:`check_outcome`.
"""

from __future__ import annotations

import random
import tracemalloc
import warnings
from pathlib import Path

import model_file_edits as edits
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

import nbgpu

DATA = Path(__file__).parent / "data"
# Loading a mutated seed (each under 100 kB of arrays) never needs more.
MEMORY_BOUND = 64 * 2**20


def mutated(seeds, case):
    """(mutation name, bytes) of fuzz case ``case``: a random mutation of a random seed.

    Case ``case`` makes its choices with ``random.Random(case)``, so any case
    (a failing one that hypothesis reports, say) can be replayed by number.
    """
    pick = edits.Picker(random.Random(case).randint)
    seed = seeds[pick.integer(0, len(seeds) - 1)]
    mutation = pick.choice(edits.MUTATIONS)
    return mutation.__name__, mutation(seed, pick)


def check_outcome(path):
    """Load ``path``: "loaded" (the model predicts) or "refused" (a ValueError
    naming the file), within the memory bound; anything else raises."""
    tracemalloc.start()
    try:
        model, vectorizer = nbgpu.load(path, return_vectorizer=True)
    except ValueError as exc:
        if str(path) not in str(exc):
            raise AssertionError(f"the message does not name the file: {exc}") from exc
        return "refused"
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if peak > MEMORY_BOUND:
            raise AssertionError(f"loading took {peak} bytes")
    with warnings.catch_warnings():  # extreme statistics may overflow: the model works, if poorly
        warnings.simplefilter("ignore")
        if model.n_features_in_ <= 10**5:
            try:  # parameters may be derived lazily: an error then is a ValueError too
                model.predict_proba(np.zeros((1, model.n_features_in_)))
            except ValueError:
                return "refused at predict"
        if vectorizer is not None:
            vectorizer.transform(["the cat sat on the mat"])
    return "loaded"


def seed_files(folder):
    """Write the seed files into ``folder``; returns their paths.

    A text model with its vectorizer and statistics stored sparse (format
    2), a ColumnwiseNB of every kind of part (nested, by mask, slice and
    index; a loss matrix, feature names), and a file of format 1.
    """
    folder = Path(folder)
    rng = np.random.default_rng(0)
    docs = ["the cat sat on the mat", "a dog ate my homework", "the cat and the dog", "homework is due"] * 3
    vec = HashingVectorizer(n_features=2**12, alternate_sign=False, norm=None, ngram_range=(1, 2))
    text = nbgpu.MultinomialNB(alpha=0.5).fit(vec.transform(docs), ["pets", "school", "pets", "school"] * 3)
    X = np.column_stack([rng.normal(size=(40, 2)), rng.integers(0, 3, size=(40, 2)), rng.poisson(2.0, size=(40, 2))]).astype(float)
    y = rng.integers(0, 3, size=40)
    inner = nbgpu.ColumnwiseNB([("b", nbgpu.BernoulliNB(), [0]), ("m", nbgpu.MultinomialNB(), slice(1, None))])
    parts = [
        ("g", nbgpu.GaussianNB(), [0, 1]),
        ("c", nbgpu.CategoricalNB(min_categories=4), np.array([False, False, True, True, False, False])),
        ("p", nbgpu.PoissonNB(), slice(4, 6)),
        ("n", nbgpu.NormalBayesClassifier(reg_covar=1e-3), [0, 1]),
        ("inner", inner, [2, 3, 4]),
    ]
    loss = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [4.0, 1.0, 0.0]])
    columnwise = nbgpu.ColumnwiseNB(parts, loss_matrix=loss).fit(X, y)
    columnwise.feature_names_in_ = np.array([f"f{i}" for i in range(6)], dtype=object)
    codes = sp.random(30, 5, density=0.3, format="csr", random_state=1, data_rvs=lambda n: rng.integers(1, 4, size=n))
    paths = [
        nbgpu.save(text, folder / "text.nbgpu", vectorizer=vec),
        nbgpu.save(columnwise, folder / "columnwise.nbgpu", metadata={"source": "seed"}),
        nbgpu.save(nbgpu.CategoricalNB().fit(codes, np.arange(30) % 2), folder / "categorical.nbgpu"),
    ]
    old = folder / "v1.nbgpu"
    old.write_bytes((DATA / "v1_multinomial_text.nbgpu").read_bytes())
    return [*paths, old]
