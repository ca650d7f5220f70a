"""Fuzzing model files, shared by the fuzz test and the fuzz target (ci/fuzz).

The seeds are valid model files, small and of every kind of content; the
property every mutation of them must have is :func:`check_outcome`.
"""

from __future__ import annotations

import io
import json
import math
import random
import time
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


# --------------------------------------------------------------------------- #
# Format 2: statistics stored sparse (``<key>.indices`` / ``<key>.values``)
# --------------------------------------------------------------------------- #
# Loading a mutated format-2 seed, or refusing it: the seeds hold ~4000
# stored entries of 8 x 2**20 statistics, so a load that allocates more than
# this made something of the header's shapes alone.
SPARSE_MEMORY_BOUND = 256 * 2**20
# Loading (or refusing) one file takes no longer (the seeds load in ~10 ms).
SPARSE_TIME_BOUND = 2.0
# A loaded model predicts when its statistics (k x d) are no larger.
PREDICT_ENTRIES = 2**24
_WIDE = 2**20
# The format's bound on the elements any array declares (model_header.MAX_ARRAY_ELEMENTS).
MAX_ARRAY_ELEMENTS = 2**30


def sparse_seed_files(folder):
    """Write format-2 seeds into ``folder``; returns their paths.

    MultinomialNB, ComplementNB and BernoulliNB fitted on a random sparse
    CSR of 8 classes x 2**20 features (their feature counts kept sparse, so
    stored as ``stats.feature_count.indices`` / ``.values``), and a
    MultinomialNB fitted on a dense matrix that is mostly zeros (stored
    sparse because that is smaller).
    """
    folder = Path(folder)
    rng = np.random.default_rng(0)
    # ~20 stored values a row at random columns (scipy.sparse.random samples 2**28 cells: seconds)
    rows = np.repeat(np.arange(200), 21)
    X = sp.csr_matrix((rng.integers(1, 5, rows.size).astype(float), (rows, rng.integers(0, _WIDE, rows.size))), shape=(200, _WIDE))
    y = np.arange(200) % 8
    paths = [
        nbgpu.save(cls().fit(X, y), folder / f"{cls.__name__}.nbgpu")
        for cls in (nbgpu.MultinomialNB, nbgpu.ComplementNB, nbgpu.BernoulliNB)
    ]
    dense = np.zeros((60, 3000))
    dense[rng.integers(0, 60, 200), rng.integers(0, 3000, 200)] = rng.integers(1, 9, 200)
    paths.append(nbgpu.save(nbgpu.MultinomialNB(alpha=0.1).fit(dense, np.arange(60) % 3), folder / "mostly_zeros.nbgpu"))
    return paths


def _read_npy(data):
    return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)


def _sparse_entries(node, path=()):
    """(path, body) of every ``{"sparse": body}`` entry in a header value."""
    if isinstance(node, dict):
        if isinstance(node.get("sparse"), dict):
            yield path, node["sparse"]
        for key, value in node.items():
            yield from _sparse_entries(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _sparse_entries(value, (*path, i))


class _File:
    """A model file taken apart: raw members (name -> .npy bytes) and the JSON header (a dict)."""

    def __init__(self, data):
        self.members = edits.raw_members(data)
        self.head = json.loads(_read_npy(self.members["header.npy"]).tobytes())

    def array(self, key):
        return _read_npy(self.members[f"{key}.npy"])

    def put(self, key, array):
        """Set member ``key`` to ``array``, listed with its checksum (a consistent forgery)."""
        self.members[f"{key}.npy"] = edits.npy_bytes(array)
        self.head["arrays"][key] = edits.listed(array)

    def bytes(self, compress=True):
        text = json.dumps(self.head).encode()
        self.members["header.npy"] = edits.npy_bytes(np.frombuffer(text, dtype=np.uint8))
        return edits.raw_archive(self.members, compress=compress)


_SHAPES_2 = (
    [3, 2**31 - 1], [2**31 - 1, 3], [1, 2**30], [2**30, 1], [1024, _WIDE], [8, 2**27], [2**15, 2**15], [8, 2**31],
    [2**32, 2**32], [2**62, 4], [-1, _WIDE], [8, -_WIDE], [-8, -_WIDE], [0, _WIDE], [8, 0], [0, 0],
    [7, _WIDE], [9, _WIDE], [8, _WIDE - 1], [8, _WIDE + 1], [_WIDE, 8], [4, 2**21], [16, 2**19], [8, 4194],
    [8.0, _WIDE], [8, 1.5], ["8", _WIDE], [None, _WIDE], [True, _WIDE], [[8], _WIDE], [8], [], [8 * _WIDE],
    [8, _WIDE, 1], [1, 8, _WIDE], [2, 4, 2**20], [10**30, 1], [3, 20], [3, 3000], [60, 3000], [3, 2999],
)
_INDEX_DTYPES = ("<u4", "<i4", "<i8", "<u8", "<u2", "<i2", "|u1", "|i1", ">u4", ">i8", "<f8", "<f4", "|b1", "<c8", "<M8[s]", "<U4")
_VALUE_DTYPES = ("<f4", "<f2", "<i8", "<u4", "|u1", "|b1", ">f8", "<c16", "<U3", "<M8[D]", "<m8[s]", "<f16")


def _pick_sparse(f, pick):
    """(path, body) of a random sparse entry of ``f``'s header."""
    return pick.choice(list(_sparse_entries(f.head)))


def _pick_member(f, pick, part):
    """(body, key, array) of the ``part`` ("indices" or "values") of a random
    sparse entry, or None when the header lists no such array."""
    _, body = _pick_sparse(f, pick)
    key = body[part]
    if key not in f.head["arrays"]:
        return None
    return body, key, f.array(key)


def _s_shape(f, pick):
    """The shape of a sparse entry set to another (odd, huge, negative, non-int) one."""
    _, body = _pick_sparse(f, pick)
    body["shape"] = list(pick.choice(_SHAPES_2)) if pick.integer(0, 7) else pick.choice((None, 3, "8x3", {}, [[]]))
    if pick.integer(0, 1) == 0 and isinstance(body["shape"], list) and body["shape"]:
        f.head["n_features_in"] = body["shape"][-1]  # a consistent model of that width
        k = body["shape"][0]
        if len(body["shape"]) == 2 and type(k) is int and 0 < k <= 4096 and "classes" in f.head["arrays"]:
            f.put("classes", np.arange(k))  # ... and of that many classes
            if "stats.class_count" in f.head["arrays"]:
                f.put("stats.class_count", np.full(k, 25.0))
    return "shape"


def _s_members(f, pick):
    """The members a sparse entry names: swapped, the same, another array's, missing, not a string."""
    _, body = _pick_sparse(f, pick)
    others = sorted(f.head["arrays"])
    kind = pick.integer(0, 4)
    if kind == 0:
        body["indices"], body["values"] = body["values"], body["indices"]
    elif kind == 1:
        body[pick.choice(("indices", "values"))] = body[pick.choice(("indices", "values"))]
    elif kind == 2:
        body[pick.choice(("indices", "values"))] = pick.choice(others)
    elif kind == 3:
        body[pick.choice(("indices", "values"))] = pick.choice(("nope", "", None, 3, ["classes"], "header"))
    else:
        del body[pick.choice(("indices", "values", "shape"))]
    return "members"


def _s_entry(f, pick):
    """The sparse entry itself edited: extra keys, not a dict, moved to another statistic, format 1."""
    path, body = _pick_sparse(f, pick)
    kind = pick.integer(0, 4)
    if kind == 0:
        body[pick.choice(("dtype", "order", "nnz", "sparse"))] = pick.choice((1, "C", None, [1]))
    elif kind == 1:
        parent = f.head
        for step in path:
            parent = parent[step]
        parent["sparse"] = pick.choice((None, [], "x", [body["shape"], body["indices"], body["values"]]))
    elif kind == 2:  # another statistic (class_count, classes) declared sparse with the same members
        stats = f.head["stats"]["dict"]
        stats[pick.choice(sorted(stats))] = {"sparse": dict(body)}
    elif kind == 3:
        f.head["format_version"] = pick.choice((1, 0, 3, "2", 2.0))
    else:  # the class labels (outside the statistics) declared sparse
        f.head["classes"] = {"sparse": dict(body)} if "classes" in f.head else f.head.get("classes")
        f.head["n_features_in"] = pick.choice((0, -1, 2**31, 2**62, None, "8", 1.5, _WIDE + 1, 3000))
    return "entry"


def _s_indices(f, pick):
    """The stored indices changed, listed with their checksum: only the model's checks can refuse them."""
    picked = _pick_member(f, pick, "indices")
    if picked is None:
        return "indices"
    body, key, idx = picked
    size = math.prod(body["shape"]) if all(isinstance(s, int) for s in body["shape"]) else 2**20
    kind = pick.integer(0, 9)
    if kind == 0:  # reversed
        new = idx[::-1].copy()
    elif kind == 1 and idx.size > 1:  # two swapped
        new = idx.copy()
        i = pick.integer(0, idx.size - 2)
        new[i], new[i + 1] = new[i + 1], new[i]
    elif kind == 2 and idx.size:  # a duplicate
        new = idx.copy()
        i = pick.integer(1, idx.size - 1) if idx.size > 1 else 0
        new[i] = new[i - 1]
    elif kind == 3 and idx.size:  # one out of range (size, past it, the largest)
        new = idx.astype("<i8")
        new[pick.choice((-1, 0, idx.size // 2))] = pick.choice((size, size + 1, 2**32 - 1, 2**31, 2**62, -1, -(2**62)))
    elif kind == 4:  # another dtype
        dtype = np.dtype(pick.choice(_INDEX_DTYPES))
        with np.errstate(all="ignore"):
            try:
                new = idx.astype(dtype) if dtype.kind != "U" else idx.astype(str).astype(dtype)
            except (TypeError, ValueError, OverflowError):
                new = np.zeros(idx.shape, dtype)
    elif kind == 5:  # fewer or more
        n = pick.choice((0, 1, idx.size - 1, idx.size + 1, 2 * idx.size))
        new = np.resize(idx, max(n, 0)) if idx.size else np.arange(n, dtype=idx.dtype)
    elif kind == 6:  # 2-D, 0-D
        new = idx.reshape(1, -1) if pick.integer(0, 1) else np.array(idx[0] if idx.size else 0)
    elif kind == 7:  # all entries, dense-like (every index of the array: as many as its size)
        new = np.arange(min(size, 2**16), dtype=idx.dtype) if size > 0 else idx[:0]
    elif kind == 8:  # random, sorted, maybe in range
        rng = np.random.default_rng(pick.integer(0, 2**31))
        new = np.sort(rng.integers(0, max(size, 1) * pick.choice((1, 2)), idx.size)).astype(idx.dtype)
    else:  # shuffled
        new = idx.copy()
        np.random.default_rng(pick.integer(0, 2**31)).shuffle(new)
    f.put(key, new)
    return f"indices {kind}"


def _s_values(f, pick):
    """The stored values changed, listed with their checksum."""
    picked = _pick_member(f, pick, "values")
    if picked is None:
        return "values"
    _, key, val = picked
    kind = pick.integer(0, 4)
    if kind == 0:  # another dtype
        dtype = np.dtype(pick.choice(_VALUE_DTYPES))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                new = val.astype(dtype) if dtype.kind not in "UMm" else np.zeros(val.shape, dtype)
            except (TypeError, ValueError):
                new = np.zeros(val.shape, dtype)
    elif kind == 1 and val.size:  # one odd value
        new = val.copy()
        new[pick.integer(0, val.size - 1)] = pick.choice((np.nan, np.inf, -np.inf, -1.0, 0.0, 1e308, -1e308, 5e-324))
    elif kind == 2:  # fewer, more
        new = np.resize(val, pick.choice((0, 1, max(val.size - 1, 0), val.size + 1)))
    elif kind == 3:  # 2-D
        new = val.reshape(-1, 1)
    else:  # all zeros, all negative
        new = np.zeros_like(val) if pick.integer(0, 1) else -np.abs(val)
    f.put(key, new)
    return f"values {kind}"


def _s_member_bytes(f, pick):
    """The .npy bytes of an indices or values member: truncated, flipped, another .npy header (checksum as it was)."""
    _, body = _pick_sparse(f, pick)
    name = f"{body[pick.choice(('indices', 'values'))]}.npy"
    if name not in f.members:
        return "member bytes"
    data = f.members[name]
    kind = pick.integer(0, 2)
    if kind == 0:
        f.members[name] = data[: pick.integer(0, len(data) - 1)]
    elif kind == 1:
        out = bytearray(data)
        for _ in range(pick.integer(1, 4)):
            out[pick.integer(0, len(out) - 1)] ^= pick.integer(1, 255)
        f.members[name] = bytes(out)
    else:
        descr = pick.choice(("<u4", "<i8", "<f8", "|u1", "|O", "<U9", ""))
        shape = pick.choice(((2**31 - 1,), (10**12,), (3, 2**31 - 1), (-1,), (), (0,), (4194,), (4193,), (4195,)))
        body_len = pick.choice((0, 16, len(data) - 128))
        text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}\n"
        f.members[name] = edits.npy_with_header(text, data[128:][: max(body_len, 0)])
    return f"member bytes {kind}"


SPARSE_MUTATIONS = (_s_shape, _s_members, _s_entry, _s_indices, _s_values, _s_member_bytes)


def mutated_sparse(seeds, case):
    """(mutation names, bytes) of format-2 fuzz case ``case`` (choices from ``random.Random(case)``).

    One to three of the format-2 mutations stacked, or (one case in eight)
    one of the generic mutations of the other campaign on a format-2 seed.
    """
    pick = edits.Picker(random.Random(case).randint)
    seed = seeds[pick.integer(0, len(seeds) - 1)]
    if pick.integer(0, 7) == 0:
        mutation = pick.choice(edits.MUTATIONS)
        return mutation.__name__, mutation(seed, pick)
    f = _File(seed)
    names = []
    for _ in range(pick.choice((1, 1, 1, 2, 3))):
        if not any(_sparse_entries(f.head)):  # an earlier mutation took the sparse entry away
            break
        mutation = pick.choice(SPARSE_MUTATIONS)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):  # casts of odd dtypes warn
                warnings.simplefilter("ignore")
                names.append(mutation(f, pick))
        except Exception:  # noqa: BLE001  (a member an earlier mutation broke: numpy refuses to read it)
            names.append(f"{mutation.__name__} (not applied)")
    return "+".join(names), f.bytes(compress=bool(pick.integer(0, 1)))


def declared_elements(data):
    """The elements the sparse arrays of model file ``data`` declare (each within the
    format's bound), 0 if there are none or the header cannot be read."""
    try:
        head = _File(data).head
    except Exception:  # noqa: BLE001  (a file too broken to read a header from declares nothing)
        return 0
    total = 0
    for _, body in _sparse_entries(head):
        shape = body.get("shape")
        if isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape):
            size = math.prod(shape)
            total += size if size <= MAX_ARRAY_ELEMENTS else 0
    return total


def check_sparse_outcome(path, *, memory_bound=SPARSE_MEMORY_BOUND, time_bound=SPARSE_TIME_BOUND):
    """Load ``path``: "loaded" (the model predicts finite probabilities),
    "loaded (wide)" (too large to predict here), or "refused" (a ValueError
    naming the file), within the memory and time bounds; anything else raises.

    The memory bound grows by 8 bytes per element the file's sparse arrays
    declare: the format accepts up to ``MAX_ARRAY_ELEMENTS`` (2**30)
    elements, which loading may densify (or index by column, d + 1 entries),
    so an 8 x 2**27 declaration of a few kB of entries may allocate 512 MiB
    (MultinomialNB) to 2 GiB (ComplementNB) by design
    (``nbgpu/_interop/model_header.py``); more than that is a failure. The
    time bound grows likewise, by 1 s per 2**28 declared elements.
    """
    declared = declared_elements(Path(path).read_bytes())
    memory_bound += 8 * declared
    time_bound += declared / 2**28  # O(d) work of a d-wide model (ComplementNB's per-feature totals): ~2 s at 8 x 2**27
    # The process's CPU time (all its threads), not the clock: what the load does, however busy
    # the machine (a shared CI machine's clock time ran past the bound with the work within it).
    start = time.process_time()
    tracemalloc.start()
    try:
        model = nbgpu.load(path)
    except ValueError as exc:
        if str(path) not in str(exc):
            raise AssertionError(f"the message does not name the file: {exc}") from exc
        return "refused"
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        elapsed = time.process_time() - start
        if peak > memory_bound:
            raise AssertionError(f"loading took {peak} bytes (bound {memory_bound})")
        if elapsed > time_bound:
            raise AssertionError(f"loading took {elapsed:.2f} s of CPU time (bound {time_bound} s)")
    d = model.n_features_in_
    if len(model.classes_) * d > PREDICT_ENTRIES:
        return "loaded (wide)"
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((np.ones(40), (np.repeat(np.arange(4), 10), rng.integers(0, d, 40))), shape=(4, d)) if d > 0 else sp.csr_matrix((4, 0))
    with warnings.catch_warnings():  # extreme statistics may overflow: the model works, if poorly
        warnings.simplefilter("ignore")
        try:  # parameters may be derived lazily: an error then is a ValueError too
            proba = model.predict_proba(X)
        except ValueError:
            return "refused at predict"
    proba = np.asarray(proba)
    if proba.shape != (4, len(model.classes_)):
        raise AssertionError(f"predict_proba gave shape {proba.shape}")
    if not np.all(np.isfinite(proba)):
        raise AssertionError("predict_proba gave values that are not finite")
    return "loaded"


def print_campaign(tally, failures):
    """A campaign's outcome (ci/fuzz/*model_file_target.py): its tally of
    (mutation, outcome) counts and its first failures; the exit status."""
    for (name, outcome), count in sorted(tally.items()):
        print(f"{count:8d}  {name:16s} {outcome}")
    for case, name, what in failures[:50]:
        print(f"case {case} ({name}): {what}")
    return 1 if failures else 0
