"""Model files whose statistics contradict themselves, or whose model cannot predict (issue 34, item 3).

Statistics are sums of non-negative weights and their totals: a file whose
signs or totals say otherwise is refused, for every model. Hyper-parameters
that make every log-probability -inf (the model predicts only NaN) and a
vectorizer whose output the model refuses are refused by ``save`` and by
``load`` alike. Every model ``fit`` and ``partial_fit`` make still round-trips.
"""

import model_file_edits as edits
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction.text import HashingVectorizer as SklearnHashingVectorizer
from sklearn.utils import get_tags

import nbgpu
from nbgpu._interop.model_archive import ModelFileError
from nbgpu._interop import vectorizer_settings as settings_of
from nbgpu._models.estimators import MODELS
from nbgpu.text import HashingVectorizer

_members, _header, _write = edits.members, edits.header, edits.write


def _counts(seed=0, n=120, d=6, k=3):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 5, size=(n, d)).astype(float), rng.integers(0, k, size=n)


def _real(seed=0, n=120, d=5, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    return rng.normal(size=(n, d)) * 3 + 1000 * y[:, None], y


def _forged(tmp_path, model, X, y, key, change):
    """A saved fit of ``model`` with statistics member ``key`` changed by ``change`` (and its checksum)."""
    members = _members(nbgpu.save(clone(model).fit(X, y), tmp_path / "m"))
    header = _header(members)
    edits.put(members, header, key, change(members[key].copy()))
    return _write(tmp_path / "bad", members, header)


def _refused(path, message):
    with pytest.raises(ModelFileError, match=message) as info:
        nbgpu.load(path)
    assert str(path) in str(info.value)


def _negated(a):
    return -a


def _doubled(a):
    return 2 * a


# --------------------------------------------------------------------------- #
# Statistics that contradict themselves
# --------------------------------------------------------------------------- #
_COLUMNWISE = nbgpu.ColumnwiseNB([("gauss", nbgpu.GaussianNB(), [0, 1]), ("counts", nbgpu.MultinomialNB(), [2, 3, 4])])

_CASES = [
    # Signs: counts, weights and sums of squares are >= 0.
    (nbgpu.CategoricalNB(), "counts", "stats.counts", _negated, r"'counts' holds -\d+ at \[0, 0\]; expected a value >= 0"),
    (nbgpu.GaussianNB(), "real", "stats.per_class.0", _negated, r"'per_class.0' holds -\d+ at \[0, 0\]; expected class_count"),
    (nbgpu.GaussianNB(), "real", "stats.per_class.2", _negated, r"'per_class.2' holds -[\d.e+]+ at \[0, 0\]; expected a value >= 0"),
    (nbgpu.GaussianNB(), "real", "stats.total.2", _negated, r"'total.2' holds -[\d.e+]+ at \[0\]; expected a value >= 0"),
    (nbgpu.NormalBayesClassifier(), "real", "stats.scatter", _negated, r"'scatter \(diagonal\)' holds -[\d.e+]+ at \[0, 0\]"),
    (nbgpu.KernelDensityNB(), "real", "stats.weights", edits.assign(3, -1.0), r"'weights' holds a negative value \(-1\)"),
    # Totals are sums of their parts.
    (nbgpu.GaussianNB(), "real", "stats.class_count", _doubled, r"'per_class.0' holds \d+ at \[0, 0\]; expected class_count \(\d+\)"),
    (nbgpu.GaussianNB(), "real", "stats.total.0", _doubled, r"'total.0' is \d+ at \[0\]; expected the sum of 'per_class.0' over the classes, 120"),
    (nbgpu.GaussianNB(), "real", "stats.total.1", edits.assign(1, 7.0), r"'total.0 × total.1' is 840 at \[1\]; expected the sum of 'per_class.0 × per_class.1'"),
    (nbgpu.BernoulliNB(), "counts", "stats.class_count", lambda a: a / 2, r"'feature_count' holds [\d.]+ at \[0, 0\]; expected between 0 and class_count"),
    (nbgpu.CategoricalNB(), "counts", "stats.class_count", lambda a: a / 2, r"'counts \(summed over the categories of each feature\)' holds \d+ at \[0, 0\]; expected between 0 and class_count"),
    (nbgpu.PoissonNB(missing="ignore"), "missing", "stats.observed_count", _doubled, r"'observed_count' holds [\d.]+ at \[0, 0\]; expected between 0 and class_count"),
    (nbgpu.KernelDensityNB(), "real", "stats.class_count", _doubled, r"'class_count' holds \d+ at \[0\]; expected the sum of 'weights' of the class's points"),
    (nbgpu.KernelDensityNB(), "real", "stats.codes", edits.assign(0, 3), r"'codes' holds 0 to 3; expected class indices 0 to 2"),
    (nbgpu.KernelDensityNB(), "real", "stats.points", edits.assign((0, 0), np.inf), r"'points' holds infinity"),
    (_COLUMNWISE, "counts", "stats.parts.counts.class_count", _doubled, r"part 'counts': statistics entry 'class_count' holds \d+ at \[0\]; expected the whole model's class_count"),
]


def _data(kind):
    if kind == "real":
        return _real()
    X, y = _counts()
    if kind == "missing":
        X[::7, 1] = np.nan
    return X, y


@pytest.mark.parametrize(("model", "data", "key", "change", "message"), _CASES,
                         ids=[f"{type(c[0]).__name__}-{c[2]}-{i}" for i, c in enumerate(_CASES)])
def test_statistics_that_contradict_themselves_are_refused(tmp_path, model, data, key, change, message):
    X, y = _data(data)
    _refused(_forged(tmp_path, model, X, y, key, change), f"inconsistent model file .*{message}")


def test_negated_category_counts_are_refused_like_negative_word_counts(tmp_path):
    # Every log-probability of negated counts is >= 0: it loaded and predicted every digit wrong.
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X.astype(np.int64)
    _refused(_forged(tmp_path, nbgpu.CategoricalNB(), X, y, "stats.counts", _negated), "'counts' holds -")
    _refused(_forged(tmp_path, nbgpu.MultinomialNB(), X, y, "stats.feature_count", _negated), "'feature_count' holds a negative")


# --------------------------------------------------------------------------- #
# Hyper-parameters that make every prediction NaN
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    ("model", "message"),
    [
        (nbgpu.MultinomialNB(alpha=1e308), r"`alpha=1e\+308` makes the smoothed feature totals overflow float64"),
        (nbgpu.ComplementNB(alpha=1e308), r"`alpha=1e\+308` makes the smoothed feature totals overflow float64"),
        (nbgpu.BernoulliNB(alpha=1e308), r"`alpha=1e\+308` makes the smoothed class totals N_c \+ 2α overflow"),
        (nbgpu.CategoricalNB(alpha=1e308), r"`alpha=1e\+308` makes the smoothed category totals"),
        (nbgpu.MultinomialNB(prior_smoothing=1e308), r"`prior_smoothing=1e\+308` makes the class prior's total overflow"),
        (nbgpu.GaussianNB(prior_smoothing=1e308), r"`prior_smoothing=1e\+308` makes the class prior's total overflow"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) else None,
)
def test_parameters_that_make_every_prediction_nan_are_refused_by_save(tmp_path, model, message):
    X, y = _counts()
    with np.errstate(all="ignore"):
        fitted = clone(model).fit(X.astype(np.int64), y)
    with pytest.raises(ValueError, match=f"was not written: the model file would not load .*{message}"):
        nbgpu.save(fitted, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_header_edited_to_such_parameters_is_refused_by_load(tmp_path):
    X, y = _counts()
    members = _members(nbgpu.save(nbgpu.MultinomialNB().fit(X, y), tmp_path / "m"))
    header = _header(members)
    header["params"]["dict"]["alpha"] = {"value": 1e308}
    _refused(_write(tmp_path / "bad", members, header), r"`alpha=1e\+308` makes the smoothed feature totals overflow")


@pytest.mark.parametrize("model", [nbgpu.MultinomialNB(alpha=0.0), nbgpu.BernoulliNB(alpha=0.0)], ids=["multinomial", "bernoulli"])
def test_legitimate_infinite_log_probabilities_still_round_trip(tmp_path, model):
    # alpha=0: an unseen feature's log-probability is -inf; a fixed prior of 0: a class never predicted.
    X, y = _counts()
    X[:, 0] = 0
    fitted = clone(model).set_params(force_alpha=True, class_prior=[0.0, 0.5, 0.5]).fit(X, y)
    loaded = nbgpu.load(nbgpu.save(fitted, tmp_path / "m"))
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))


# --------------------------------------------------------------------------- #
# A vectorizer whose output the model refuses
# --------------------------------------------------------------------------- #
_DOCS = ["the cat sat", "a dog ran", "the cat ran far", "dogs and cats"]
_REFUSING = [nbgpu.MultinomialNB(), nbgpu.ComplementNB(), nbgpu.CategoricalNB(), nbgpu.PoissonNB(),
             nbgpu.ColumnwiseNB([("real", nbgpu.GaussianNB(), [0, 1]), ("counts", nbgpu.MultinomialNB(), [2, 3])])]


def _fitted_on_hashes(model, n_features=16):
    X = np.abs(HashingVectorizer(n_features=n_features, alternate_sign=False, norm=None).transform(_DOCS).toarray())
    return clone(model).fit(X, [0, 1, 0, 1])


@pytest.mark.parametrize("vectorizer_class", [HashingVectorizer, SklearnHashingVectorizer], ids=["nbgpu", "sklearn"])
@pytest.mark.parametrize("model", _REFUSING, ids=lambda m: type(m).__name__)
def test_save_refuses_alternate_sign_for_a_model_of_values_at_least_zero(tmp_path, model, vectorizer_class):
    fitted = _fitted_on_hashes(model)
    vectorizer = vectorizer_class(n_features=16, alternate_sign=True)
    with pytest.raises(ValueError, match=r"alternate_sign=True makes negative feature values, which .*refuses"):
        nbgpu.save(fitted, tmp_path / "m", vectorizer=vectorizer)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("model", [nbgpu.GaussianNB(), nbgpu.BernoulliNB(), nbgpu.KernelDensityNB()], ids=lambda m: type(m).__name__)
def test_alternate_sign_is_saved_for_a_model_taking_negative_values(tmp_path, model):
    fitted = _fitted_on_hashes(model)
    loaded, vectorizer = nbgpu.load(nbgpu.save(fitted, tmp_path / "m", vectorizer=HashingVectorizer(n_features=16)),
                                    return_vectorizer=True)
    assert vectorizer.alternate_sign
    X = vectorizer.transform(_DOCS).toarray()
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))


def test_load_refuses_a_file_edited_to_alternate_sign(tmp_path):
    fitted = _fitted_on_hashes(nbgpu.MultinomialNB())
    members = _members(nbgpu.save(fitted, tmp_path / "m", vectorizer=HashingVectorizer(n_features=16, alternate_sign=False)))
    header = _header(members)
    header["vectorizer"]["alternate_sign"] = True
    _refused(_write(tmp_path / "bad", members, header), "alternate_sign=True makes negative feature values, which MultinomialNB refuses")


def test_check_for_model_names_the_part_that_refuses():
    settings = settings_of.vectorizer_settings(HashingVectorizer(n_features=16), 16)
    with pytest.raises(ValueError, match="which part 'counts' MultinomialNB refuses"):
        settings_of.check_for_model(settings, _REFUSING[-1])
    settings_of.check_for_model({**settings, "alternate_sign": False}, nbgpu.MultinomialNB())


@pytest.mark.parametrize("name", sorted(MODELS))
def test_refusing_negative_values_agrees_with_the_positive_only_tag(name):
    model = _REFUSING[-1] if name == "ColumnwiseNB" else MODELS[name]()
    settings = settings_of.vectorizer_settings(HashingVectorizer(n_features=16), 16)
    try:
        settings_of.check_for_model(settings, model)
        refused = False
    except ValueError:
        refused = True
    assert refused == get_tags(model).input_tags.positive_only


# --------------------------------------------------------------------------- #
# What fit and partial_fit make still round-trips
# --------------------------------------------------------------------------- #
def _round_trips(tmp_path, model, X):
    loaded = nbgpu.load(nbgpu.save(model, tmp_path / "m"))
    np.testing.assert_allclose(loaded.predict_joint_log_likelihood(X), model.predict_joint_log_likelihood(X), rtol=1e-9, atol=1e-9) \
        if hasattr(model, "predict_joint_log_likelihood") else np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


_MODELS = [
    nbgpu.MultinomialNB(), nbgpu.ComplementNB(norm=True), nbgpu.BernoulliNB(), nbgpu.BernoulliNB(binarize=None),
    nbgpu.CategoricalNB(), nbgpu.PoissonNB(), nbgpu.GaussianNB(), nbgpu.KernelDensityNB(), nbgpu.NormalBayesClassifier(),
    nbgpu.MultinomialNB(prior_smoothing=0.5), nbgpu.CategoricalNB(missing="ignore"), nbgpu.PoissonNB(missing="ignore"),
    nbgpu.GaussianNB(missing="ignore"), nbgpu.KernelDensityNB(missing="ignore"),
    nbgpu.ColumnwiseNB([("gauss", nbgpu.GaussianNB(), [0, 1]), ("counts", nbgpu.PoissonNB(), [2, 3, 4, 5])]),
]
_SPARSE = ("MultinomialNB", "ComplementNB", "BernoulliNB", "PoissonNB", "GaussianNB", "CategoricalNB")


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("model", _MODELS, ids=[f"{type(m).__name__}-{i}" for i, m in enumerate(_MODELS)])
@pytest.mark.parametrize("seed", [0, 1])
def test_fitted_in_chunks_with_fractional_weights_round_trips(tmp_path, model, sparse, seed):
    if sparse and type(model).__name__ not in _SPARSE:
        pytest.skip("dense input only")
    rng = np.random.default_rng(seed)
    n, d, k = 400, 6, 4
    y = rng.integers(0, k, size=n)
    X = np.floor(rng.gamma(1.0 + y[:, None], 2.0, size=(n, d)) * (rng.random((n, d)) < 0.6))
    missing = getattr(model, "missing", "error") == "ignore"
    if missing:
        X[rng.random((n, d)) < 0.15] = np.nan
        X[y == 0, 1] = np.nan  # a class whose every value of a feature is missing
    weights = rng.random(n) * rng.choice([1e-3, 1.0, 1e3], size=n)
    weights[rng.random(n) < 0.05] = 0.0
    Xs = sp.csr_matrix(np.nan_to_num(X)) if sparse else X
    # One fit, and partial_fit in many chunks (a class absent from some).
    whole = clone(model).fit(Xs, y, sample_weight=weights)
    _round_trips(tmp_path, whole, np.nan_to_num(X[:50]) if sparse else X[:50])
    chunked = clone(model)
    for start in range(0, n, 23):
        part = slice(start, start + 23)
        chunked.partial_fit(Xs[part], y[part], classes=np.arange(k), sample_weight=weights[part])
    _round_trips(tmp_path, chunked, np.nan_to_num(X[:50]) if sparse else X[:50])
