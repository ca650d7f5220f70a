"""Model files that declare more than they hold, or statistics that are not numbers (issue 26).

Each file is a real saved model with its header (and checksums) edited, so
only the bounds and checks under test can refuse it.
"""

import time
import tracemalloc

import model_file_edits as edits
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import nbgpu
from nbgpu._interop.model_archive import ModelFileError
from nbgpu._interop.model_files import read_model_info
from nbgpu._interop.model_header import MAX_ARRAY_ELEMENTS

_members, _header, _write = edits.members, edits.header, edits.write
_HUGE = 2**31 - 1  # features a forged header declares


def _data(seed=0, n=80, d=6):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 5, size=(n, d)).astype(float), rng.integers(0, 3, size=n)


def _wide(n_classes=3, n_features=2**16, nnz=300, seed=0):
    """Sparse counts of few nonzeros: a model of them stores its feature counts sparse."""
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(0, 40, size=nnz), rng.integers(0, n_features, size=nnz)
    X = sp.csr_matrix((rng.integers(1, 4, size=nnz).astype(float), (rows, cols)), shape=(40, n_features))
    return X, np.arange(40) % n_classes


def _refused(path, message):
    """Load ``path``: a ModelFileError naming it and matching ``message``; the peak traced bytes
    (the refusal comes before the declared arrays are made: what bounds the time bounds the memory)."""
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match=message) as info:
            nbgpu.load(path)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert str(path) in str(info.value)
    return peak


# --------------------------------------------------------------------------- #
# Declared sizes are bounded before anything is allocated
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["BernoulliNB", "MultinomialNB"])  # densified / kept sparse (d + 1 column index)
def test_sparse_statistics_declaring_a_huge_shape_are_refused_at_once(name, tmp_path, capsys):
    X, y = _wide()
    members = _members(nbgpu.save(getattr(nbgpu, name)().fit(X, y), tmp_path / "wide"))
    header = _header(members)
    node = header["stats"]["dict"]["feature_count"]["sparse"]  # a tiny file: 300 entries
    node["shape"] = [3, _HUGE]
    header["n_features_in"] = _HUGE
    bad = _write(tmp_path / "huge.nbgpu", members, header)
    message = (
        rf"sparse array '{node['values']}' declares shape \[3, {_HUGE}\] \({3 * _HUGE} elements\), "
        rf"beyond the bound of {MAX_ARRAY_ELEMENTS} elements"
    )
    assert _refused(bad, message) < 64 * 2**20  # (it took 37 s and 8 GiB, or 48 GiB to densify)
    with pytest.raises(ModelFileError, match=message):
        read_model_info(bad)
    from nbgpu._app.cli import main

    assert main(["info", str(bad)]) == 1  # it reported 51 GB of statistics
    assert "beyond the bound" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["ComplementNB", "BernoulliNB"])
def test_a_tiny_file_declaring_a_huge_width_within_the_element_bound_is_refused(name, tmp_path):
    # 3 x 2**27 is within MAX_ARRAY_ELEMENTS, but the model's per-feature
    # arrays are O(width): a 14 kB ComplementNB file of 8 x 2**27 loaded in 2.4 s and 2 GiB.
    X, y = _wide()
    members = _members(nbgpu.save(getattr(nbgpu, name)().fit(X, y), tmp_path / "wide"))
    header = _header(members)
    node = header["stats"]["dict"]["feature_count"]["sparse"]  # 300 entries at most
    node["shape"] = [3, 2**27]
    header["n_features_in"] = 2**27
    bad = _write(tmp_path / "wide.nbgpu", members, header)
    message = r"n_features_in is 134217728 but the statistics store \d+ values: beyond 4194304 features"
    assert _refused(bad, message) < 64 * 2**20
    with pytest.raises(ModelFileError, match=message):
        read_model_info(bad)


def test_save_refuses_what_load_would_refuse_for_its_width(tmp_path):
    X, y = _wide(n_features=2**23, nnz=40)  # 2**23 features, 40 counts: wider than 1024 per stored value
    model = nbgpu.MultinomialNB().fit(X, y)
    with pytest.raises(ValueError, match="was not written: the model file would not load .*n_features_in is 8388608"):
        nbgpu.save(model, tmp_path / "w.nbgpu")
    assert not (tmp_path / "w.nbgpu").exists()


def test_dense_array_declaring_a_huge_shape_is_refused_before_it_is_read(tmp_path):
    X, y = _data()
    members = _members(nbgpu.save(nbgpu.GaussianNB().fit(X, y), tmp_path / "m"))
    header = _header(members)
    header["arrays"]["stats.per_class.1"]["shape"] = [3, 2**29]  # 12 GB: within the bound on a file's bytes
    header["n_features_in"] = 2**29
    _refused(_write(tmp_path / "huge", members, header), r"array 'stats.per_class.1' in the header's list declares shape \[3, 536870912\]")


@pytest.mark.fast_path("sparse_sums")  # dense sums of its width take more than the default bound
def test_the_widest_real_models_still_load(tmp_path):
    # 53 classes of 2**20 hashed features: 445 MiB dense, a few kB stored.
    X, y = _wide(n_classes=53, n_features=2**20, nnz=2000, seed=1)
    model = nbgpu.MultinomialNB().fit(X, y)
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "wide"))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert 1024 * 2**20 <= MAX_ARRAY_ELEMENTS  # HashingVectorizer's default width, a thousand classes


def test_zip_member_declaring_more_than_its_bytes_hold_is_refused(tmp_path):
    X, y = _data()
    saved = nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "m")
    raw = edits.raw_archive(edits.raw_members(saved.read_bytes()))
    bad = tmp_path / "bomb"
    bad.write_bytes(edits.set_zip_size(raw, "stats.feature_count.npy", 10**9))
    _refused(bad, r"member 'stats.feature_count.npy' declares 1000000000 bytes; its \d+ stored bytes hold at most \d+")


def test_memory_error_while_densifying_is_a_model_file_error(tmp_path, monkeypatch):
    X, y = _wide(n_classes=4, n_features=2**20)
    path = nbgpu.save(nbgpu.BernoulliNB().fit(X, y), tmp_path / "wide")
    zeros = np.zeros

    def short_of_memory(shape, *args, **kwargs):
        if np.prod(shape) >= 2**22:
            raise MemoryError
        return zeros(shape, *args, **kwargs)

    monkeypatch.setattr(np, "zeros", short_of_memory)
    _refused(path, r"not enough memory for sparse array 'stats.feature_count.values' of shape \[4, 1048576\]")


@pytest.mark.fast_path("sparse_sums")
def test_memory_error_while_keeping_sparse_is_a_model_file_error(tmp_path, monkeypatch):
    from nbgpu._array import sparse_counts

    X, y = _wide(n_classes=4, n_features=2**20)
    path = nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "wide")

    def short_of_memory(*args):
        raise MemoryError

    monkeypatch.setattr(sparse_counts, "from_entries", short_of_memory)
    _refused(path, "not enough memory for sparse array 'stats.feature_count.values'")


# --------------------------------------------------------------------------- #
# What save writes, load takes back
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"])
def test_zero_dimensional_array_parameter_round_trips(name, tmp_path):
    X, y = _data()
    model = getattr(nbgpu, name)(alpha=np.array(0.5)).fit(X, y)
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m"))
    assert isinstance(loaded.alpha, np.ndarray) and loaded.alpha.shape == () and loaded.alpha == 0.5
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


# --------------------------------------------------------------------------- #
# Statistics that make parameters that are not numbers
# --------------------------------------------------------------------------- #
_MAX = np.finfo(np.float64).max


def _forged(tmp_path, model, X, y, key, change, **header_changes):
    """A saved fit of ``model`` with statistics member ``key`` changed by ``change`` (and its checksum)."""
    return _forged_all(tmp_path, model, X, y, {key: lambda read, a: change(a)}, **header_changes)


def _forged_all(tmp_path, model, X, y, changes, **header_changes):
    """A saved fit of ``model`` with every statistics member ``key`` of ``changes`` changed by ``changes[key]``
    (a function of all members as read, and the member)."""
    members = _members(nbgpu.save(clone(model).fit(X, y), tmp_path / "m"))
    header = _header(members)
    header.update(header_changes)
    read = dict(members)
    for key, change in changes.items():
        edits.put(members, header, key, change(read, members[key].copy()))
    return _write(tmp_path / "bad", members, header)


@pytest.mark.parametrize(
    ("model", "key", "change", "message"),
    [
        (nbgpu.MultinomialNB(), "stats.feature_count", edits.assign((1, slice(0, 2)), _MAX), r"'feature_count' sums to infinity in float64"),
        (nbgpu.MultinomialNB(), "stats.class_count", edits.assign(slice(None), _MAX), r"'class_count' sums to infinity in float64"),
        (nbgpu.MultinomialNB(), "stats.class_count", lambda a: a.astype(np.longdouble), "'class_count' has dtype float(96|128); expected float32 or float64"),
        (nbgpu.PoissonNB(), "stats.class_count", edits.assign(slice(None), 5e-324), "parameter 'rate_' derived from the statistics holds NaN or \\+infinity"),
    ],
    ids=["counts-at-max", "class-counts-at-max", "longdouble", "poisson-subnormal"],
)
def test_statistics_whose_parameters_are_not_numbers_are_refused(tmp_path, model, key, change, message):
    X, y = _data()
    _refused(_forged(tmp_path, model, X, y, key, change), f"inconsistent model file .*{message}")


def test_gaussian_class_of_subnormal_weight_is_refused(tmp_path):
    # Class 0 weighs 5e-324 in every statistic, the pooled moments remade to match
    # (consistent statistics): its variances M2 / 5e-324 overflow.
    def count(read, a):
        a[0] = 5e-324
        return a

    def pooled(read):
        n, mean, m2 = count(read, read["stats.per_class.0"].copy()), read["stats.per_class.1"], read["stats.per_class.2"]
        mu = np.sum(n * mean, axis=0) / np.sum(n, axis=0)
        return np.sum(n, axis=0), mu, np.sum(m2, axis=0) + np.sum(n * (mean - mu) ** 2, axis=0)

    changes = {"stats.class_count": count, "stats.per_class.0": count,
               **{f"stats.total.{i}": (lambda read, a, i=i: pooled(read)[i]) for i in range(3)}}
    X, y = _data()
    bad = _forged_all(tmp_path, nbgpu.GaussianNB(), X, y, changes)
    _refused(bad, "inconsistent model file .*parameter 'var_' derived from the statistics holds NaN or \\+infinity")


def test_sparse_counts_at_the_float64_maximum_are_refused(tmp_path):
    X, y = _wide()
    members = _members(nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "wide"))
    header = _header(members)
    key = header["stats"]["dict"]["feature_count"]["sparse"]["values"]
    edits.put(members, header, key, np.full_like(members[key], _MAX))
    _refused(_write(tmp_path / "bad", members, header), "'feature_count' sums to infinity in float64")


def test_float16_statistics_are_refused(tmp_path):
    # 65,505 ones sum to infinity in float16: the model predicted NaN.
    X, y = _data()
    d = 65_505
    change = lambda a: np.ones((3, d), dtype=np.float16)  # noqa: E731
    bad = _forged(tmp_path, nbgpu.MultinomialNB(), X, y, "stats.feature_count", change, n_features_in=d)
    _refused(bad, "'feature_count' has dtype float16; expected float32 or float64")


def test_parameters_that_are_not_numbers_name_the_part(tmp_path):
    X, y = _data()
    model = nbgpu.ColumnwiseNB([("words", nbgpu.MultinomialNB(), [0, 1]), ("counts", nbgpu.PoissonNB(), [2, 3])])
    # Every class weighs 5e-324 in the model and in each part (consistent statistics).
    tiny = lambda read, a: np.full_like(a, 5e-324)  # noqa: E731
    keys = ("stats.class_count", "stats.parts.words.class_count", "stats.parts.counts.class_count")
    bad = _forged_all(tmp_path, model, X, y, dict.fromkeys(keys, tiny))
    _refused(bad, "part 'counts': parameter 'rate_' derived from the statistics")


def test_a_file_is_closed_whatever_stops_opening_it(tmp_path, monkeypatch):
    """An error that is not about the file (here MemoryError from the zip
    reader) still leaves no open file behind."""
    import builtins
    import zipfile

    from nbgpu._interop import model_archive

    path = tmp_path / "m.nbgpu"
    path.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    opened = []
    real_open = builtins.open
    monkeypatch.setattr(model_archive, "open", lambda *a, **k: opened.append(real_open(*a, **k)) or opened[-1],
                        raising=False)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(zipfile, "ZipFile", no_memory)
    with pytest.raises(MemoryError):
        model_archive.Archive(path)
    assert len(opened) == 1 and opened[0].closed


def test_members_read_on_two_threads_are_opened_on_one(tmp_path, monkeypatch):
    """A sparse array's two members are read on two threads, but opened on the
    caller's: from Python 3.12 zipfile's open skips a member's extra field (a
    model file's members have one) by a seek relative to the position all
    readers share, so an open beside another thread's read lands at a wrong
    offset (a zlib error on a sound file, seen on a 16-core machine). The slow
    open below lets a pool thread take the second member while the first opens."""
    import threading
    import zipfile

    monkeypatch.setenv("NBGPU_NUM_THREADS", "2")
    X, y = _wide()
    path = tmp_path / "m.nbgpu"
    nbgpu.save(nbgpu.MultinomialNB().fit(X, y), path)
    openers, real_open = [], zipfile.ZipFile.open

    def slow_open(self, name, *args, **kwargs):
        openers.append(threading.current_thread())
        time.sleep(0.05)
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", slow_open)
    loaded = nbgpu.load(path)
    assert set(openers) == {threading.current_thread()}
    np.testing.assert_array_equal(loaded.predict(X), nbgpu.MultinomialNB().fit(X, y).predict(X))
