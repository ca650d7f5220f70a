"""A model file's load costs what the file stores, not what it declares (issue 34).

Zeros deflate about 1000:1, so a file within every element bound can still
declare gigabytes. Each forged file here passes every checksum; the memory
bound (``max_memory``, by default 256 MiB or 64 bytes per byte of the file)
must refuse it before its statistics are read, and a trusted file must load
when the bound is raised.
"""

import tracemalloc

import model_file_edits as edits
import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu
from nbgpu._app.cli import main
from nbgpu._interop import model_files
from nbgpu._interop.model_archive import Archive, ModelFileError
from nbgpu._interop.model_header import estimator_class, header_of


def _fitted(model, k=2, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.normal(size=(6 * k, d)))
    return model.fit(X, np.arange(6 * k) % k), X


def _declared(tmp_path, model, arrays, n_features, *, compress=True):
    """A saved ``model`` whose statistics ``arrays`` (key -> array) are replaced and whose width is
    ``n_features``: a consistent forgery (checksums recomputed), compressed as np.savez_compressed does."""
    members = edits.members(nbgpu.save(model, tmp_path / "base.nbgpu"))
    header = edits.header(members)
    header["n_features_in"] = n_features
    for key, array in arrays.items():
        edits.put(members, header, key, array)
    return edits.write(tmp_path / "forged.nbgpu", members, header, compress=compress)


def _needed(path):
    with Archive(path) as archive:
        parsed = header_of(archive, str(path))
        return model_files.memory_needed(parsed, estimator_class(parsed.header["estimator"], "", core=True))


def _refused_before_reading(path, **options):
    """Load ``path``: a ModelFileError that names it and says how to allow it, with little memory traced."""
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match=r"declares arrays whose loading takes up to (\d+) bytes") as info:
            nbgpu.load(path, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert str(path) in message and "max_memory" in message and "--max-memory" in message
    assert peak < 16 * 2**20  # the statistics (hundreds of MB) were never read
    return message


def test_a_normal_bayes_file_of_compressed_zeros_is_refused_before_it_is_read(tmp_path):
    # d = 2048: 2 × 32 MiB scatter matrices of zeros deflate to ~70 kB; as loaded they and their
    # covariances and Cholesky factors take ~200 MiB, their factorization d³ time.
    model, _ = _fitted(nbgpu.NormalBayesClassifier())
    d = 2048
    path = _declared(tmp_path, model, {"stats.mean": np.zeros((2, d)), "stats.scatter": np.zeros((2, d, d))}, d)
    assert path.stat().st_size < 200_000
    needed = _needed(path)
    assert needed > 64 * path.stat().st_size
    message = _refused_before_reading(path, max_memory=needed - 1)
    assert f"up to {needed} bytes" in message and "more than max_memory allows" in message


def test_a_gaussian_file_of_sparse_zeros_is_refused_by_default(tmp_path):
    # Statistics stored as no entries at all: a few kB declaring 16 classes × 2**22 features (3 GiB).
    model, _ = _fitted(nbgpu.GaussianNB(), k=16)
    d = 2**22
    members = edits.members(nbgpu.save(model, tmp_path / "base.nbgpu"))
    header = edits.header(members)
    header["n_features_in"] = d
    for part, shape in (("per_class.1", [16, d]), ("per_class.2", [16, d]), ("total.1", [d]), ("total.2", [d])):
        key = f"stats.{part}"
        del members[key], header["arrays"][key]
        index, values = f"{key}.indices", f"{key}.values"
        edits.put(members, header, index, np.zeros(1, dtype="<u4"))
        edits.put(members, header, values, np.zeros(1))
        group, i = part.split(".")
        header["stats"]["dict"][group]["tuple"][int(i)] = {"sparse": {"shape": shape, "indices": index, "values": values}}
    path = edits.write(tmp_path / "forged.nbgpu", members, header)
    message = _refused_before_reading(path)
    assert "more than the default for its size allows (268435456 bytes)" in message


def test_a_wide_sparse_count_file_is_refused_for_its_column_index(tmp_path):
    # Kept sparse, a k × d count matrix still has a column index of d + 1: 2 × 2**28 features with one
    # stored count per 1024 pass the width rule yet take gigabytes.
    X = sp.csr_matrix((np.ones(2), ([0, 1], [0, 1])), shape=(2, 8))
    model = nbgpu.MultinomialNB().fit(X, [0, 1])
    d, n = 2**28, 2**29 // 1024
    members = edits.members(nbgpu.save(model, tmp_path / "base.nbgpu"))
    header = edits.header(members)
    header["n_features_in"] = d
    edits.put_sparse(members, header, "feature_count", (2, d), (np.arange(n, dtype=np.int64) * 1024).astype("<u4"), np.ones(n))
    edits.put(members, header, "stats.class_count", np.full(2, n / 2))
    path = edits.write(tmp_path / "forged.nbgpu", members, header, compress=True)
    assert _needed(path) > 6 * 2**30  # 24 bytes a column, whatever the few entries
    _refused_before_reading(path)


def test_a_trusted_file_loads_with_a_larger_bound(tmp_path, monkeypatch):
    model, X = _fitted(nbgpu.NormalBayesClassifier(), d=40)
    path = nbgpu.save(model, tmp_path / "m.nbgpu")
    needed = _needed(path)
    monkeypatch.setattr(model_files, "MEMORY_FLOOR", 1024)
    monkeypatch.setattr(model_files, "MEMORY_PER_FILE_BYTE", 1)
    _refused_before_reading(path)
    loaded = nbgpu.load(path, max_memory=needed)
    np.testing.assert_array_equal(loaded.predict_joint_log_proba(X), model.predict_joint_log_proba(X))


def test_the_command_line_takes_the_bound(tmp_path, monkeypatch, capsys):
    model, X = _fitted(nbgpu.MultinomialNB(), d=4)
    path = nbgpu.save(model, tmp_path / "m.nbgpu")
    data = tmp_path / "x.csv"
    np.savetxt(data, X, delimiter=",", header="a,b,c,d", comments="")
    monkeypatch.setattr(model_files, "MEMORY_FLOOR", 16)
    monkeypatch.setattr(model_files, "MEMORY_PER_FILE_BYTE", 0)
    assert main(["predict", str(path), str(data)]) != 0
    assert "--max-memory" in capsys.readouterr().err
    assert main(["predict", str(path), str(data), "--max-memory", str(_needed(path))]) == 0
    assert capsys.readouterr().out.split() == [str(label) for label in model.predict(X)]


@pytest.mark.parametrize("value", [0, -5, 1.5, "1GB", True])
def test_max_memory_must_be_a_positive_int(tmp_path, value):
    model, _ = _fitted(nbgpu.MultinomialNB())
    path = nbgpu.save(model, tmp_path / "m.nbgpu")
    with pytest.raises(ValueError, match=r"`max_memory` must be a positive int \(bytes\) or None; got"):
        nbgpu.load(path, max_memory=value)


def test_real_models_stay_far_within_the_default(tmp_path):
    # The bound's margin on the models users make (benchmarks/model_file_cost.py measures more).
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    for model in (nbgpu.GaussianNB(), nbgpu.MultinomialNB(), nbgpu.CategoricalNB(), nbgpu.NormalBayesClassifier()):
        path = nbgpu.save(model.fit(X, y), tmp_path / "m.nbgpu")
        assert _needed(path) <= 20 * path.stat().st_size, type(model).__name__
        nbgpu.load(path)
