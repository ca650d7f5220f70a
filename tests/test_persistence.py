"""Model files: round trips on the backend grid, and refusal of bad files."""

import json
import os
import pickle
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import HashingVectorizer

import nbgpu
from conftest import to_numpy
from nbgpu._io import atomic_output

MODELS = ["GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB"]


def _data(seed=0, n=80, d=6):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, d)).astype(float)
    y = rng.integers(0, 3, size=n)
    return X, y


@pytest.mark.parametrize("name", MODELS)
def test_round_trip_on_every_backend(backend, dtype, name, tmp_path):
    X, y = _data()
    Xb = backend.asarray(X, dtype=dtype)
    model = getattr(nbgpu, name)().fit(Xb, backend.asarray(y))
    path = nbgpu.save(model, tmp_path / "m.nbgpu")
    loaded = nbgpu.load(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(to_numpy(loaded.classes_), to_numpy(model.classes_))
    assert loaded.n_features_in_ == model.n_features_in_
    X32 = X.astype(dtype)
    np.testing.assert_array_equal(to_numpy(loaded.predict(X32)), to_numpy(model.predict(Xb)))
    expected = to_numpy(model.predict_proba(Xb))
    got = loaded.predict_proba(X32)
    assert got.dtype == expected.dtype
    if backend.name.startswith("numpy"):
        np.testing.assert_array_equal(got, expected)  # same statistics, same code: identical
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-12)


@pytest.mark.parametrize("name", MODELS)
def test_loaded_model_continues_with_partial_fit(name, tmp_path):
    X, y = _data(1, n=120)
    first = getattr(nbgpu, name)().partial_fit(X[:70], y[:70], classes=[0, 1, 2])
    loaded = nbgpu.load(nbgpu.save(first, tmp_path / "m"))
    loaded.partial_fit(X[70:], y[70:])
    whole = getattr(nbgpu, name)().fit(X, y)
    np.testing.assert_allclose(loaded.predict_proba(X), whole.predict_proba(X), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "model",
    [
        nbgpu.PoissonNB(missing="ignore", prior_smoothing=0.5, loss_matrix=[[0.0, 3.0, 1.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]),
        nbgpu.NormalBayesClassifier(prior_smoothing=1.5, loss_matrix=[[0.0, 3.0, 1.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]]),
    ],
    ids=lambda m: type(m).__name__,
)
def test_extra_models_keep_their_new_parameters_and_statistics(model, tmp_path):
    X, y = _data(4, n=120)
    if model.get_params().get("missing") == "ignore":
        X[np.random.default_rng(5).random(X.shape) < 0.2] = np.nan
    first = clone(model).partial_fit(X[:70], y[:70], classes=[0, 1, 2])
    loaded = nbgpu.load(nbgpu.save(first, tmp_path / "m"))
    assert loaded.get_params() == first.get_params()
    for key, value in first._stats.items():  # e.g. PoissonNB's per-feature observed weights
        np.testing.assert_array_equal(loaded._stats[key], value)
    np.testing.assert_array_equal(loaded.predict_risk(X), first.predict_risk(X))
    np.testing.assert_array_equal(loaded.predict(X), first.predict(X))
    loaded.partial_fit(X[70:], y[70:])
    whole = clone(model).fit(X, y)
    np.testing.assert_allclose(loaded.predict_risk(X), whole.predict_risk(X), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "labels",
    [
        np.array(["spam", "ham", "eggs"]),
        np.array(["α", "β", "γ"]),
        np.array([-3, 7, 100], dtype=np.int8),
        np.array([2**40, 5, 9], dtype=np.uint64),
        np.array([1.0, 2.0, -3.0]),
        np.array([True, False, True]),
        np.array(["2020-01-01", "2021-06-30", "1999-12-31"], dtype="datetime64[D]"),
    ],
    ids=lambda a: a.dtype.str,
)
def test_labels_of_any_numpy_type_round_trip(labels, tmp_path):
    X, codes = _data(2, n=60)
    y = labels[codes % labels.shape[0]]
    model = nbgpu.MultinomialNB().fit(X, y)
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m"))
    assert loaded.classes_.dtype == model.classes_.dtype
    np.testing.assert_array_equal(loaded.classes_, model.classes_)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_parameters_feature_names_and_vectorizer_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data(3)
    model = nbgpu.CategoricalNB(alpha=np.linspace(0.5, 1.0, 6), min_categories=7, class_prior=[0.2, 0.3, 0.5])
    model.fit(X, y)
    expected = model.predict_proba(X)
    model.feature_names_in_ = np.array([f"f{i}" for i in range(X.shape[1])], dtype=object)
    frame = pd.DataFrame(X, columns=model.feature_names_in_)
    vec = HashingVectorizer(n_features=2**10, ngram_range=(1, 2), alternate_sign=False, norm=None, dtype=np.float32)
    path = nbgpu.save(model, tmp_path / "m", vectorizer=vec, metadata={"note": "hello"})
    loaded, lvec = nbgpu.load(path, return_vectorizer=True)
    np.testing.assert_array_equal(loaded.alpha, model.alpha)
    assert loaded.class_prior == model.class_prior and loaded.min_categories == 7
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)
    assert loaded.feature_names_in_.dtype == object
    with warnings.catch_warnings():  # the core may record names from numpy after conversion
        warnings.simplefilter("ignore", UserWarning)
        np.testing.assert_array_equal(loaded.predict_proba(frame), expected)
    assert lvec.get_params() == vec.get_params()
    docs = ["the cat sat", "on the mat, the cat"]
    assert (lvec.transform(docs) != vec.transform(docs)).nnz == 0
    assert nbgpu.load(path, return_vectorizer=True)[1] is not None
    assert nbgpu.load(nbgpu.save(model, tmp_path / "n"), return_vectorizer=True)[1] is None


def test_save_refuses_what_it_cannot_store_safely(tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        nbgpu.save(nbgpu.GaussianNB(), tmp_path / "m")
    with pytest.raises(TypeError, match="nbgpu estimator"):
        nbgpu.save(object(), tmp_path / "m")
    X, y = _data()
    model = nbgpu.MultinomialNB().fit(X, y)
    with pytest.raises(TypeError, match="callable"):
        nbgpu.save(model, tmp_path / "m", vectorizer=HashingVectorizer(tokenizer=str.split))
    assert not os.listdir(tmp_path)  # nothing written, no temporary left


# --------------------------------------------------------------------------- #
# Bad files
# --------------------------------------------------------------------------- #
@pytest.fixture
def saved(tmp_path):
    X, y = _data()
    return nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "good.nbgpu")


def _members(path):
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _header(members):
    return json.loads(members["header"].tobytes())


def _write(path, members, header=None):
    if header is not None:
        members = {**members, "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
    with open(path, "wb") as f:
        np.savez(f, **members)
    return path


def test_truncated_file(saved, tmp_path):
    data = saved.read_bytes()
    for cut in (10, len(data) // 2, len(data) - 5):
        bad = tmp_path / f"cut{cut}"
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError, match="not an nbgpu model file|corrupted"):
            nbgpu.load(bad)


def test_corrupted_bytes(saved, tmp_path):
    data = bytearray(saved.read_bytes())
    data[len(data) // 3] ^= 0xFF
    bad = tmp_path / "flip"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupted|tampered|not an nbgpu model file"):
        nbgpu.load(bad)


def test_tampered_array(saved, tmp_path):
    members = _members(saved)
    members["stats.feature_count"] = members["stats.feature_count"] * 2
    with pytest.raises(ValueError, match="tampered"):
        nbgpu.load(_write(tmp_path / "t", members))
    members = _members(saved)
    members["extra"] = np.zeros(3)
    with pytest.raises(ValueError, match="tampered"):
        nbgpu.load(_write(tmp_path / "u", members))


def test_inconsistent_but_checksummed_file(saved, tmp_path):
    from nbgpu._persistence import _digest

    members = _members(saved)
    header = _header(members)
    fc = members["stats.feature_count"][:, :3].copy()  # fewer features than n_features_in
    members["stats.feature_count"] = fc
    header["arrays"]["stats.feature_count"] = {"dtype": fc.dtype.str, "shape": list(fc.shape), "sha256": _digest(fc)}
    with pytest.raises(ValueError, match="inconsistent model file"):
        nbgpu.load(_write(tmp_path / "i", members, header))


def test_foreign_files(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    other = tmp_path / "other.npz"
    np.savez(other, a=np.arange(3))
    single = tmp_path / "a.npy"
    np.save(single, np.arange(3))
    plain_zip = tmp_path / "z.zip"
    with zipfile.ZipFile(plain_zip, "w") as z:
        z.writestr("readme.txt", "hi")
    for path in (text, other, single, plain_zip):
        with pytest.raises(ValueError, match="not an nbgpu model file"):
            nbgpu.load(path)
    with pytest.raises(ValueError, match="no such file"):
        nbgpu.load(tmp_path / "missing")


def test_object_arrays_are_refused(saved, tmp_path):
    members = _members(saved)
    members["classes"] = np.array([0, "x", None], dtype=object)
    path = tmp_path / "obj"
    with open(path, "wb") as f:
        np.savez(f, **members)  # numpy pickles object arrays; we must not unpickle them
    with pytest.raises(ValueError, match="object array"):
        nbgpu.load(path)


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_loading_never_executes_code(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.nbgpu"
    evil.write_bytes(pickle.dumps(_Payload(str(marker))))
    with pytest.raises(ValueError, match="not an nbgpu model file"):
        nbgpu.load(evil)
    # A pickle inside an otherwise valid archive.
    members = {"header": np.frombuffer(b"{}", dtype=np.uint8), "x": np.array([_Payload(str(marker))], dtype=object)}
    with open(evil, "wb") as f:
        np.savez(f, **members)
    with pytest.raises(ValueError, match="object array"):
        nbgpu.load(evil)
    assert not marker.exists()


def test_header_lies(saved, tmp_path):
    members = _members(saved)
    cases = {
        "estimator": ("Pipeline", "not an nbgpu naive Bayes model"),
        "format": ("something-else", "not an nbgpu model file"),
        "n_features_in": (-1, "n_features_in"),
        "dtype": ("object", "dtype"),
        "params": ({"dict": {"alpha": {"value": 1.0}}}, "parameters"),
    }
    for key, (value, message) in cases.items():
        header = _header(members)
        header[key] = value
        with pytest.raises(ValueError, match=message):
            nbgpu.load(_write(tmp_path / key, members, header))
    header = _header(members)
    header["params"]["dict"]["alpha"] = {"value": -1.0}
    with pytest.raises(ValueError, match="inconsistent"):
        nbgpu.load(_write(tmp_path / "alpha", members, header))
    members_bad = dict(members)
    members_bad["header"] = np.frombuffer(b"{not json", dtype=np.uint8)
    with pytest.raises(ValueError, match="not valid JSON"):
        nbgpu.load(_write(tmp_path / "json", members_bad))


def test_newer_format_version_says_so(saved, tmp_path):
    members = _members(saved)
    header = _header(members)
    header["format_version"] = 99
    header["nbgpu_version"] = "9.0"
    with pytest.raises(ValueError, match=r"format version 99 .*nbgpu 9\.0.*upgrade nbgpu"):
        nbgpu.load(_write(tmp_path / "new", members, header))


def test_atomic_output_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_output(target) as f:
        f.write("half")
        raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]
    with atomic_output(target) as f:
        f.write("new")
    assert target.read_text() == "new"
