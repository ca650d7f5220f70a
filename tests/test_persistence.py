"""Model files: round trips on the backend grid, and refusal of bad files."""

import json
import os
import pickle
import warnings
import zipfile
from pathlib import Path

import model_file_edits as edits
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import to_numpy
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import HashingVectorizer

import nbgpu
from nbgpu._interop.atomic_files import atomic_output

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
    _assert_predicts_alike(loaded, model, X, Xb, backend, dtype, ("predict_proba",))


def _assert_predicts_alike(loaded, model, X, Xb, backend, dtype, methods):
    """``loaded`` (numpy) predicts on ``X`` what ``model`` predicts on ``X`` on its backend."""
    X32 = X.astype(dtype)
    np.testing.assert_array_equal(to_numpy(loaded.predict(X32)), to_numpy(model.predict(Xb)))
    for method in methods:
        expected = to_numpy(getattr(model, method)(Xb))
        got = getattr(loaded, method)(X32)
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


def test_parameters_and_feature_names_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data(3)
    model = nbgpu.CategoricalNB(alpha=np.linspace(0.5, 1.0, 6), min_categories=7, class_prior=[0.2, 0.3, 0.5])
    model.fit(X, y)
    expected = model.predict_proba(X)
    model.feature_names_in_ = np.array([f"f{i}" for i in range(X.shape[1])], dtype=object)
    frame = pd.DataFrame(X, columns=model.feature_names_in_)
    path = nbgpu.save(model, tmp_path / "m", metadata={"note": "hello"})
    loaded = nbgpu.load(path)
    np.testing.assert_array_equal(loaded.alpha, model.alpha)
    assert loaded.class_prior == model.class_prior and loaded.min_categories == 7
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)
    assert loaded.feature_names_in_.dtype == object
    with warnings.catch_warnings():  # the core may record names from numpy after conversion
        warnings.simplefilter("ignore", UserWarning)
        np.testing.assert_array_equal(loaded.predict_proba(frame), expected)
    assert nbgpu.load(path, return_vectorizer=True)[1] is None


def _text_model(n_features=2**10):
    docs = ["the cat sat on the mat", "a dog ate my homework", "the cat and the dog", "homework is due"] * 5
    y = ["pets", "school", "pets", "school"] * 5
    vec = HashingVectorizer(n_features=n_features, ngram_range=(1, 2), alternate_sign=False, norm=None, dtype=np.float32)
    return nbgpu.MultinomialNB().fit(vec.transform(docs), y), vec, docs


def test_vectorizer_round_trip(tmp_path):
    model, vec, docs = _text_model()
    path = nbgpu.save(model, tmp_path / "m", vectorizer=vec)
    loaded, lvec = nbgpu.load(path, return_vectorizer=True)
    assert lvec.get_params() == vec.get_params()
    assert (lvec.transform(docs) != vec.transform(docs)).nnz == 0
    np.testing.assert_array_equal(loaded.predict_proba(lvec.transform(docs)), model.predict_proba(vec.transform(docs)))


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
    with pytest.raises(ValueError, match="n_features=1048576 differs from the model's 6 features"):
        nbgpu.save(model, tmp_path / "m", vectorizer=HashingVectorizer())
    with pytest.raises(TypeError, match="`metadata` must be a dict"):
        nbgpu.save(model, tmp_path / "m", metadata=["a"])
    assert not os.listdir(tmp_path)  # nothing written, no temporary left


# --------------------------------------------------------------------------- #
# ColumnwiseNB: parts described in the header, statistics nested
# --------------------------------------------------------------------------- #
def _columnwise():
    """Every kind of part and of columns, a nested ColumnwiseNB included."""
    inner = nbgpu.ColumnwiseNB([("poisson", nbgpu.PoissonNB(), [0]), ("counts", nbgpu.MultinomialNB(), slice(1, None))])
    return nbgpu.ColumnwiseNB(
        [
            ("gauss", nbgpu.GaussianNB(var_smoothing=1e-6), [0, 1]),
            ("counts", nbgpu.MultinomialNB(alpha=0.5), slice(2, 4)),
            ("cats", nbgpu.CategoricalNB(), np.array([False, False, False, False, True, True])),
            ("poisson", nbgpu.PoissonNB(), np.array([2, 3])),
            ("normal", nbgpu.NormalBayesClassifier(), [0, -5]),
            ("inner", inner, [2, 3, 5]),
        ],
        prior_smoothing=0.5,
    )


def _assert_same_params(a, b):
    """Parameters equal in type and value, through the parts (estimators compare by identity)."""
    if isinstance(a, BaseEstimator):
        assert type(a) is type(b)
        _assert_same_params(a.get_params(deep=False), b.get_params(deep=False))
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _assert_same_params(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            _assert_same_params(u, v)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


@pytest.mark.parametrize("labels", ["int", "float32", "str"])
def test_columnwise_round_trip_on_every_backend(backend, dtype, labels, tmp_path):
    X, codes = _data()
    y = {"int": codes, "float32": codes.astype(np.float32) * 2 - 1, "str": np.array(["a", "b", "c"])[codes]}[labels]
    Xb = backend.asarray(X, dtype=dtype)
    model = _columnwise().fit(Xb, y if labels == "str" else backend.asarray(y))
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m.nbgpu"))
    _assert_same_params(loaded, model)
    assert loaded.classes_.dtype == to_numpy(model.classes_).dtype
    np.testing.assert_array_equal(loaded.classes_, to_numpy(model.classes_))
    for part in (*loaded.estimators_, *loaded.named_estimators_["inner"].estimators_):
        np.testing.assert_array_equal(part.classes_, loaded.classes_)
    _assert_predicts_alike(loaded, model, X, Xb, backend, dtype, ("predict_proba", "predict_joint_log_proba"))


def test_columnwise_by_column_names_keeps_feature_names(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _data(5, n=120)
    frame = pd.DataFrame(X, columns=["t", "u", "n1", "n2", "c1", "c2"])
    model = nbgpu.ColumnwiseNB(
        [("gauss", nbgpu.GaussianNB(), ["t", "u"]), ("counts", nbgpu.PoissonNB(), ["n1", "n2"]), ("cats", nbgpu.CategoricalNB(), "c1")]
    )
    model.partial_fit(frame[:70], y[:70], classes=[0, 1, 2])
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m"))
    _assert_same_params(loaded, model)
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)
    np.testing.assert_array_equal(loaded.named_estimators_["counts"].feature_names_in_, ["n1", "n2"])
    np.testing.assert_array_equal(loaded.predict_proba(frame), model.predict_proba(frame))
    loaded.partial_fit(frame[70:], y[70:])
    whole = clone(model).fit(frame, y)
    np.testing.assert_allclose(loaded.predict_proba(frame), whole.predict_proba(frame), rtol=1e-10, atol=1e-14)


def test_columnwise_continues_with_partial_fit_and_merges_with_the_original(tmp_path):
    X, y = _data(6, n=150)
    first = _columnwise().partial_fit(X[:70], y[:70], classes=[0, 1, 2])
    loaded = nbgpu.load(nbgpu.save(first, tmp_path / "m"))
    whole = _columnwise().fit(X, y)
    second = _columnwise().partial_fit(X[70:], y[70:], classes=[0, 1, 2])
    continued = nbgpu.load(nbgpu.save(first, tmp_path / "m")).partial_fit(X[70:], y[70:])
    for model in (continued, loaded.merge(second), second.merge(loaded)):
        np.testing.assert_allclose(model.predict_proba(X), whole.predict_proba(X), rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(loaded.merge(first).predict_proba(X), first.merge(first).predict_proba(X))


def test_columnwise_part_names_with_dots_keep_their_own_statistics(tmp_path):
    X, y = _data()
    inner = nbgpu.ColumnwiseNB([("y", nbgpu.MultinomialNB(), [0])])
    # Both parts' feature counts would be stored as "stats.parts.x.parts.y.feature_count".
    model = nbgpu.ColumnwiseNB([("x", inner, [0, 1]), ("x.parts.y", nbgpu.MultinomialNB(), [2, 3])]).fit(X, y)
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m"))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_columnwise_part_that_is_not_nbgpus_own_is_not_saved(tmp_path):
    class MyNB(nbgpu.GaussianNB):
        pass

    X, y = _data()
    model = nbgpu.ColumnwiseNB([("mine", MyNB(), [0, 1])]).fit(X, y)
    with pytest.raises(ValueError, match=r"`param.estimators.0.1`: estimator 'MyNB' is not an nbgpu naive Bayes model"):
        nbgpu.save(model, tmp_path / "m")
    assert not os.listdir(tmp_path)


def _part(header, i):
    """The (name, estimator, columns) entries of part ``i`` of a ColumnwiseNB's header."""
    return header["params"]["dict"]["estimators"]["list"][i]["tuple"]


def _set_part_estimator(header, value):
    _part(header, 0)[1]["estimator"]["estimator"] = value


def _set_part_param(header, value):
    _part(header, 0)[1]["estimator"]["params"]["dict"]["var_smoothing"] = value


def _drop_part_param(header, value):
    del _part(header, 0)[1]["estimator"]["params"]["dict"][value]


def _set_part_columns(header, value):
    _part(header, 0)[2] = value


def _set_part_name(header, value):
    _part(header, 0)[0] = value


@pytest.mark.parametrize(
    ("tamper", "value", "message"),
    [
        (_set_part_estimator, "Pipeline", "'params.estimators.0.1': estimator 'Pipeline' is not an nbgpu naive Bayes model"),
        (_set_part_estimator, "os.system", "not an nbgpu naive Bayes model"),
        (_set_part_param, {"value": "big"}, "invalid parameters of GaussianNB.*var_smoothing"),
        (_set_part_param, {"list": [{"value": 1.0}]}, "invalid parameters of GaussianNB.*var_smoothing"),
        (_drop_part_param, "var_smoothing", "parameters .* are not those of GaussianNB"),
        (_set_part_columns, {"list": [{"value": 0}, {"value": 17}]}, "inconsistent model file .*out of range for X with 6 features"),
        (_set_part_columns, {"slice": [7, None, None]}, "inconsistent model file .*select no column"),
        (_set_part_columns, {"slice": ["a", None, None]}, "malformed entry 'params.estimators.0.2'"),
        (_set_part_columns, {"value": 2.5}, "inconsistent model file .*must be int indices, a slice.*got 2.5"),
        (_set_part_columns, {"list": [{"value": 0}]}, "inconsistent model file"),  # the statistics are of 2 columns
        (_set_part_columns, {"list": [{"value": "t"}]}, "inconsistent model file .*pandas DataFrame"),
        (_set_part_name, {"value": "other"}, "inconsistent model file"),  # no statistics of that name
    ],
    ids=lambda v: v.__name__ if callable(v) else None,
)
def test_columnwise_tampered_header(tamper, value, message, tmp_path):
    X, y = _data()
    model = nbgpu.ColumnwiseNB([("gauss", nbgpu.GaussianNB(), [0, 1]), ("counts", nbgpu.MultinomialNB(), slice(2, None))])
    members = _members(nbgpu.save(model.fit(X, y), tmp_path / "good"))
    header = _header(members)
    tamper(header, value)
    with pytest.raises(ValueError, match=message):
        nbgpu.load(_write(tmp_path / "bad", members, header))


def test_columnwise_part_described_malformed_is_refused(tmp_path):
    X, y = _data()
    members = _members(nbgpu.save(nbgpu.ColumnwiseNB([("gauss", nbgpu.GaussianNB(), [0])]).fit(X, y), tmp_path / "m"))
    for broken in ({"estimator": "GaussianNB"}, ["GaussianNB", {}], {"estimator": "GaussianNB", "params": {"value": 1}}):
        header = _header(members)
        _part(header, 0)[1] = {"estimator": broken}
        with pytest.raises(ValueError, match="malformed entry|parameters .* are not those of GaussianNB"):
            nbgpu.load(_write(tmp_path / "bad", members, header))


# --------------------------------------------------------------------------- #
# Bad files
# --------------------------------------------------------------------------- #
@pytest.fixture
def saved(tmp_path):
    X, y = _data()
    return nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "good.nbgpu")


_members, _header, _write = edits.members, edits.header, edits.write


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
    with pytest.raises(ValueError, match="corrupted|not an nbgpu model file"):
        nbgpu.load(bad)


def test_changed_array_is_reported_as_corrupted(saved, tmp_path):
    members = _members(saved)
    members["stats.feature_count"] = members["stats.feature_count"] * 2
    with pytest.raises(ValueError, match=r"corrupted: array 'stats.feature_count' does not match its SHA-256 checksum"):
        nbgpu.load(_write(tmp_path / "t", members))
    members = _members(saved)
    members["extra"] = np.zeros(3)
    with pytest.raises(ValueError, match="corrupted: its arrays do not match the list in its header"):
        nbgpu.load(_write(tmp_path / "u", members))


def test_inconsistent_but_checksummed_file(saved, tmp_path):
    members = _members(saved)
    header = _header(members)
    fc = members["stats.feature_count"][:, :3].copy()  # fewer features than n_features_in
    members["stats.feature_count"] = fc
    header["arrays"]["stats.feature_count"] = edits.listed(fc)
    with pytest.raises(ValueError, match=r"inconsistent model file .*'feature_count' has shape \(3, 3\); expected \(3, 6\)"):
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
    # The zip is readable: said once, with the reason (it was wrapped in "not a readable zip archive: ...").
    with pytest.raises(ValueError, match=r"^\S+z.zip is not an nbgpu model file \(a member that is not a .npy array: 'readme.txt'\)$"):
        nbgpu.load(plain_zip)
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
    X, y = _data()
    members = _members(nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "good"))
    members["classes"] = np.array([_Payload(str(marker))], dtype=object)
    with open(evil, "wb") as f:
        np.savez(f, **members)
    with pytest.raises(ValueError, match="object array"):
        nbgpu.load(evil)
    assert not marker.exists()


def test_header_lies(saved, tmp_path):
    from nbgpu._interop.model_files import read_model_info

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
    header["params"]["dict"]["alpha"] = {"value": 10**400}  # JSON ints have no bound; float() overflows
    with pytest.raises(ValueError, match="malformed entry 'params.alpha'"):
        nbgpu.load(_write(tmp_path / "alpha", members, header))
    for part, where in (("params", "loss_matrix"), ("stats", "class_count")):  # an array named by a non-string
        for body in (5, None, ["stats.class_count"]):
            header = _header(members)
            header[part]["dict"][where] = {"array": body}
            for read in (nbgpu.load, read_model_info):  # a KeyError came out of both
                with pytest.raises(ValueError, match="malformed array"):
                    read(_write(tmp_path / "array", members, header))
    members_bad = dict(members)
    members_bad["header"] = np.frombuffer(b"{not json", dtype=np.uint8)
    with pytest.raises(ValueError, match="not valid JSON"):
        nbgpu.load(_write(tmp_path / "json", members_bad))
    # JSON nested deeper than the parser's recursion limit: an error, not a RecursionError.
    members_bad["header"] = np.frombuffer(b"[" * 100_000 + b"]" * 100_000, dtype=np.uint8)
    with pytest.raises(ValueError, match="not valid JSON"):
        nbgpu.load(_write(tmp_path / "deep", members_bad))


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


# --------------------------------------------------------------------------- #
# Format versions: files of format 1 still load
# --------------------------------------------------------------------------- #
DATA = Path(__file__).parent / "data"


def _v1_models():
    """The models (unfitted), data and vectorizer of the format-1 files in tests/data.

    Those files were written by nbgpu's ``save`` of format 1 (every array
    whole) from exactly these fits: ``nbgpu.save(model.fit(X, y),
    "tests/data/v1_<name>.nbgpu", vectorizer=vec, metadata={"note": "format 1"})``.
    """
    rng = np.random.default_rng(7)
    X = rng.poisson(0.3, size=(60, 64)).astype(float)
    y = np.array(["ham", "spam", "eggs"])[rng.integers(0, 3, size=60)]
    vec = HashingVectorizer(n_features=64, alternate_sign=False, norm=None, ngram_range=(1, 2))
    text = (nbgpu.MultinomialNB(alpha=0.5, loss_matrix=[[0, 1, 2], [1, 0, 1], [3, 1, 0]]), X, y, vec)
    Xc = np.column_stack(
        [
            rng.normal(size=60),
            rng.normal(size=60) * 3 + 1,
            rng.integers(0, 4, size=(60, 2)),
            rng.poisson(2.0, size=(60, 2)).astype(float),
        ]
    )
    Xc[rng.random(Xc.shape) < 0.1] = np.nan
    Xc[:, :4] = np.where(np.isnan(Xc[:, :4]), 1.0, Xc[:, :4])
    yc = rng.integers(0, 2, size=60)
    parts = [
        ("g", nbgpu.GaussianNB(), [0, 1]),
        ("c", nbgpu.CategoricalNB(min_categories=5), [2, 3]),
        ("p", nbgpu.PoissonNB(missing="ignore"), [4, 5]),
    ]
    columnwise = (nbgpu.ColumnwiseNB(parts, prior_smoothing=0.5), Xc, yc, None)
    return {"multinomial_text": text, "columnwise": (columnwise)}


@pytest.mark.parametrize("name", ["multinomial_text", "columnwise"])
def test_format_1_files_still_load(name):
    model, X, y, vec = _v1_models()[name]
    path = DATA / f"v1_{name}.nbgpu"
    loaded, lvec = nbgpu.load(path, return_vectorizer=True)
    assert _header(_members(path))["format_version"] == 1
    _assert_same_params(loaded, model)
    assert (lvec is None) == (vec is None) and (vec is None or lvec.get_params() == vec.get_params())
    fitted = clone(model).fit(X, y)
    np.testing.assert_array_equal(loaded.classes_, fitted.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))


# --------------------------------------------------------------------------- #
# Wide models: statistics stored as their nonzero entries
# --------------------------------------------------------------------------- #
def _wide_counts(n_classes=4, n_features=2**16, nnz=300, seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 40, size=nnz)
    X = sp.csr_matrix((rng.integers(1, 4, size=nnz).astype(float), (rows, rng.integers(0, n_features, size=nnz))), shape=(40, n_features))
    return X, np.arange(40) % n_classes


def test_wide_statistics_are_stored_sparse_and_come_back_bit_for_bit(tmp_path):
    X, y = _wide_counts()
    model = nbgpu.MultinomialNB().fit(X, y)
    model._stats["feature_count"][1, 5] = -0.0  # a signed zero keeps its sign
    path = nbgpu.save(model, tmp_path / "wide")
    members = _members(path)
    header = _header(members)
    assert header["format_version"] == 2
    node = header["stats"]["dict"]["feature_count"]
    assert set(node) == {"sparse"} and node["sparse"]["shape"] == [4, 2**16]
    assert members[node["sparse"]["indices"]].dtype == np.uint32
    assert set(header["arrays"]) == set(members) - {"header"}  # every member listed with its checksum
    assert path.stat().st_size < 20_000  # dense, the counts take 2 MB (and 10 kB compressed)
    loaded = nbgpu.load(path)
    for key, value in model._stats.items():
        assert loaded._stats[key].dtype == value.dtype
        np.testing.assert_array_equal(loaded._stats[key].view(np.uint64), value.view(np.uint64))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


def test_save_and_load_do_not_score(tmp_path, monkeypatch):
    X, y = _data()
    model = nbgpu.GaussianNB().fit(X, y)

    def boom(self, *args, **kwargs):
        raise AssertionError("scored")

    finalize = nbgpu.GaussianNB._finalize
    monkeypatch.setattr(nbgpu.GaussianNB, "_joint_log_likelihood", boom)
    monkeypatch.setattr(nbgpu.GaussianNB, "_finalize", boom)
    path = nbgpu.save(model, tmp_path / "m")  # no finalize to save
    monkeypatch.setattr(nbgpu.GaussianNB, "_finalize", finalize)
    assert isinstance(nbgpu.load(path), nbgpu.GaussianNB)  # no probe row scored to load


def test_unseen_declared_classes_keep_a_zero_count(tmp_path):
    X, y = _data()
    model = nbgpu.MultinomialNB().partial_fit(X, y % 2, classes=[0, 1, 2])
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m"))
    np.testing.assert_array_equal(loaded.class_count_, model.class_count_)
    assert loaded.class_count_[2] == 0


# --------------------------------------------------------------------------- #
# Broken archives: every failure is a ValueError naming the file
# --------------------------------------------------------------------------- #
_FC = "stats.feature_count.npy"


def _replace_member(name, content):
    return lambda data: edits.raw_archive({**edits.raw_members(data), name: content})


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # A reserved deflate block type: zlib.error while decompressing.
        (lambda data: edits.set_member_byte(data, _FC, 0, 0x07), r"member 'stats.feature_count' is corrupted \(error"),
        # numpy returns such a member as bytes (AttributeError).
        (_replace_member(_FC, b"hello"), "not a .npy array"),
        # numpy allocates 8 TB (MemoryError).
        (
            _replace_member(_FC, edits.npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }\n")),
            r"holds a <f8 array of shape \(1000000000000,\); expected <f8 of shape \(3, 6\)",
        ),
        # numpy's header parser falls back to tokenize (TokenError).
        (_replace_member(_FC, edits.npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,\n")), "malformed .npy header"),
        # zipfile: NotImplementedError, RuntimeError.
        (lambda data: edits.set_zip_field(data, _FC, "method", 99), "compression method 99"),
        (lambda data: edits.set_zip_field(data, _FC, "flags", 1), "encrypted"),
        (lambda data: edits.set_zip_field(data, _FC, "flags", 0x20), "patched data"),
    ],
    ids=["zlib", "no-npy-magic", "huge-shape", "unclosed-npy-header", "method-99", "encrypted", "patched"],
)
def test_broken_archive_is_a_value_error_naming_the_file(saved, tmp_path, edit, message):
    bad = tmp_path / "bad.nbgpu"
    bad.write_bytes(edit(saved.read_bytes()))
    with pytest.raises(ValueError, match=message) as info:
        nbgpu.load(bad)
    assert str(bad) in str(info.value)


def test_labels_of_a_void_dtype_are_refused(saved, tmp_path):
    members = _members(saved)
    header = _header(members)
    members["classes"] = np.zeros(3, dtype="V8")  # numpy cannot compare these (UFuncTypeError)
    header["arrays"]["classes"] = edits.listed(members["classes"])
    with pytest.raises(ValueError, match=r"array 'classes' in the header's list has dtype '\|V8'"):
        nbgpu.load(_write(tmp_path / "void", members, header))


@pytest.mark.parametrize(
    ("version", "node", "message"),
    [
        (2, {"sparse": {"shape": [3, 6], "indices": "classes", "values": "float32"}}, "array 'float32' is not in the header's list"),
        (2, {"array": "classes"}, r"arrays used twice \['classes'\], or never \['stats.feature_count'\]"),
        (1, {"sparse": {"shape": [3, 6], "indices": "stats.feature_count", "values": "classes"}}, "a sparse array outside the statistics of format 2"),
    ],
)
def test_header_must_use_each_listed_array_once(saved, tmp_path, version, node, message):
    members = _members(saved)
    header = _header(members)
    header["stats"]["dict"]["feature_count"] = node
    header["format_version"] = version
    with pytest.raises(ValueError, match=message):
        nbgpu.load(_write(tmp_path / "bad", members, header))


def test_sparse_statistics_with_indices_out_of_order_are_refused(tmp_path):
    X, y = _wide_counts()
    members = _members(nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "wide"))
    header = _header(members)
    key = header["stats"]["dict"]["feature_count"]["sparse"]["indices"]
    members[key] = members[key][::-1].copy()
    header["arrays"][key] = edits.listed(members[key])
    with pytest.raises(ValueError, match="has indices out of order or of range"):
        nbgpu.load(_write(tmp_path / "bad", members, header))


# --------------------------------------------------------------------------- #
# Sizes are checked before data is read
# --------------------------------------------------------------------------- #
@pytest.fixture
def reads(monkeypatch):
    """The names of the members read (their data) by the model file reader."""
    from nbgpu._interop import model_archive

    seen = []
    original = model_archive.Archive.read

    def spy(self, name, *args, **kwargs):
        seen.append(name)
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(model_archive.Archive, "read", spy)
    return seen


def test_unlisted_member_is_refused_before_it_is_read(saved, tmp_path, reads):
    members = _members(saved)
    members["bomb"] = np.zeros(2**22)  # 32 MiB of zeros, 33 kB compressed
    bad = _write(tmp_path / "bomb", members, compress=True)
    with pytest.raises(ValueError, match="do not match the list in its header"):
        nbgpu.load(bad)
    assert reads == ["header"]


def test_statistics_that_do_not_fit_are_refused_before_they_are_read(saved, tmp_path, reads):
    members = _members(saved)
    header = _header(members)
    members["stats.feature_count"] = np.zeros((3, 2**20))  # consistent list and checksum, wrong shape
    header["arrays"]["stats.feature_count"] = edits.listed(members["stats.feature_count"])
    bad = _write(tmp_path / "wide", members, header, compress=True)
    with pytest.raises(ValueError, match=r"'feature_count' has shape \(3, 1048576\); expected \(3, 6\)"):
        nbgpu.load(bad)
    assert "stats.feature_count" not in reads


def test_member_whose_zip_size_disagrees_is_refused_before_its_data(saved, tmp_path):
    raw = edits.raw_members(saved.read_bytes())
    raw[_FC] = raw[_FC] + bytes(2**20)  # a valid .npy header, then more data than it declares
    bad = tmp_path / "long"
    bad.write_bytes(edits.raw_archive(raw))
    with pytest.raises(ValueError, match=r"member 'stats.feature_count' is \d+ bytes long; a <f8 array of shape \(3, 6\) takes \d+"):
        nbgpu.load(bad)


def test_declared_data_beyond_the_bound_is_refused(saved, tmp_path):
    members = _members(saved)
    header = _header(members)
    header["arrays"]["stats.feature_count"]["shape"] = [3, 10**12]
    with pytest.raises(ValueError, match="beyond the bound"):
        nbgpu.load(_write(tmp_path / "big", members, header))


# --------------------------------------------------------------------------- #
# Settings and parameters are checked when the file is loaded
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("token_pattern", r"(\w+\s?)+$", "token_pattern"),  # exponential backtracking
        ("input", "filename", "input='filename' is not accepted"),  # would open the files named in the data
        ("input", "file", "input='file' is not accepted"),
        ("analyzer", "os.system", "analyzer"),
        ("tokenizer", "str.split", "tokenizer"),
        ("ngram_range", [1, 1000], "ngram_range"),
        ("ngram_range", [3, 2], "ngram_range"),
        ("ngram_range", [0, 2], "ngram_range"),
        ("n_features", 2**20, "n_features=1048576 differs from the model's 1024 features"),
        ("encoding", "rot13", "encoding"),
        ("stop_words", "french", "stop_words"),
        ("lowercase", "yes", "lowercase"),
        ("norm", "l3", "norm"),
    ],
)
def test_vectorizer_settings_outside_the_allowlist_are_refused_at_load(tmp_path, setting, value, message):
    model, vec, _ = _text_model()
    members = _members(nbgpu.save(model, tmp_path / "m", vectorizer=vec))
    header = _header(members)
    header["vectorizer"][setting] = value
    with pytest.raises(ValueError, match=f"inconsistent model file .*vectorizer setting.*{message}"):
        nbgpu.load(_write(tmp_path / "bad", members, header))


def test_vectorizer_settings_outside_the_allowlist_are_refused_at_save(tmp_path):
    model, vec, _ = _text_model()
    for bad in (vec.set_params(input="filename"), HashingVectorizer(n_features=2**10, token_pattern=r"(\w+\s?)+$")):
        with pytest.raises(ValueError, match="cannot be saved with the model: vectorizer setting"):
            nbgpu.save(model, tmp_path / "m", vectorizer=bad)
    assert not os.listdir(tmp_path)


def _set_param(name, value):
    def tamper(header, members):
        header["params"]["dict"][name] = {"array": f"param.{name}"}
        members[f"param.{name}"] = np.asarray(value)
        header["arrays"][f"param.{name}"] = edits.listed(members[f"param.{name}"])

    return tamper


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (_set_param("loss_matrix", np.ones((2, 2))), r"`loss_matrix` must have shape \(3, 3\)"),
        (_set_param("class_prior", [0.5, 0.5]), "`class_prior` must have one probability per class"),
        (_set_param("alpha", np.ones(4)), r"`alpha` must be a scalar or have one value per feature \(6\)"),
    ],
)
def test_parameters_that_do_not_fit_the_data_are_refused_at_load(saved, tmp_path, tamper, message):
    members = _members(saved)
    header = _header(members)
    tamper(header, members)
    with pytest.raises(ValueError, match=f"inconsistent model file .*{message}"):
        nbgpu.load(_write(tmp_path / "bad", members, header))


# --------------------------------------------------------------------------- #
# Impossible statistics
# --------------------------------------------------------------------------- #
def _set_stat(key, change):
    def tamper(members):
        members[key] = change(members[key].copy())

    return tamper


@pytest.mark.parametrize(
    ("model", "key", "change", "message"),
    [
        (nbgpu.MultinomialNB(), "stats.class_count", edits.assign(0, -2.0), "'class_count' holds a negative value"),
        (nbgpu.MultinomialNB(), "stats.class_count", edits.assign(slice(None), 0.0), "'class_count' sums to 0"),
        (nbgpu.MultinomialNB(), "stats.feature_count", edits.assign((1, 2), np.nan), "'feature_count' holds NaN or infinity"),
        (nbgpu.BernoulliNB(), "stats.feature_count", edits.assign((1, 2), -1.0), "'feature_count' holds a negative value"),
        (nbgpu.GaussianNB(), "stats.per_class.1", edits.assign((0, 0), np.inf), r"'per_class.1' holds NaN or infinity"),
        (nbgpu.CategoricalNB(), "stats.n_categories", edits.assign(0, 0), "'n_categories' .* does not describe"),
        (nbgpu.NormalBayesClassifier(), "stats.scatter", edits.assign((0, 0, 0), np.nan), "'scatter' holds NaN"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseEstimator) else None,
)
def test_impossible_statistics_are_refused_naming_the_entry(tmp_path, model, key, change, message):
    X, y = _data()
    members = _members(nbgpu.save(clone(model).fit(X, y), tmp_path / "m"))
    header = _header(members)
    members[key] = change(members[key].copy())
    header["arrays"][key] = edits.listed(members[key])
    with pytest.raises(ValueError, match=f"inconsistent model file .*statistics entry {message}"):
        nbgpu.load(_write(tmp_path / "bad", members, header))


def test_columnwise_statistics_errors_name_the_part(tmp_path):
    X, y = _data()
    model = nbgpu.ColumnwiseNB([("gauss", nbgpu.GaussianNB(), [0, 1]), ("counts", nbgpu.MultinomialNB(), [2, 3])]).fit(X, y)
    members = _members(nbgpu.save(model, tmp_path / "m"))
    header = _header(members)
    key = "stats.parts.counts.feature_count"
    members[key] = -members[key]
    header["arrays"][key] = edits.listed(members[key])
    with pytest.raises(ValueError, match="part 'counts': statistics entry 'feature_count' holds a negative value"):
        nbgpu.load(_write(tmp_path / "bad", members, header))


def test_save_refuses_statistics_that_are_not_finite(tmp_path):
    X, y = _data()
    model = nbgpu.GaussianNB().fit(X, y)
    model._stats["per_class"][1][0, 0] = np.nan
    with pytest.raises(ValueError, match=r"was not written: the model file would not load .*'per_class.1' holds NaN or infinity"):
        nbgpu.save(model, tmp_path / "m")
    assert not os.listdir(tmp_path)


# --------------------------------------------------------------------------- #
# nbgpu info reads the header and the labels, never the statistics
# --------------------------------------------------------------------------- #
def test_info_never_reads_the_statistics(tmp_path, capsys, reads):
    from nbgpu._app.cli import main

    model, vec, _ = _text_model()
    path = nbgpu.save(model, tmp_path / "m", vectorizer=vec, metadata={"note": "hello"})
    raw = edits.raw_members(path.read_bytes())
    for name in raw:
        if name.startswith("stats."):
            raw[name] = b"not an array"  # reading it would fail
    bad = tmp_path / "stats-corrupt.nbgpu"
    bad.write_bytes(edits.raw_archive(raw))
    assert main(["info", str(bad), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["classes"] == ["pets", "school"] and info["n_features"] == 2**10 and info["note"] == "hello"
    assert info["vectorizer"]["ngram_range"] == [1, 2] and info["format_version"] == 2
    assert info["statistics_bytes"] >= 2 * 2**10 * 8  # the feature counts, once read
    assert not [name for name in reads if name.startswith("stats.")]
    with pytest.raises(ValueError, match="not a .npy array"):
        nbgpu.load(bad)


def test_info_describes_a_columnwise_model(capsys):
    from nbgpu._app.cli import main

    assert main(["info", str(DATA / "v1_columnwise.nbgpu"), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["estimator"] == "ColumnwiseNB" and info["format_version"] == 1
    assert [part[0] for part in info["parameters"]["estimators"]] == ["g", "c", "p"]
    assert "PoissonNB(missing='ignore')" in info["parameters"]["estimators"][2][1]
