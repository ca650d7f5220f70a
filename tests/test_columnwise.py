import numpy as np
import pytest
from sklearn import naive_bayes as sk
from sklearn.base import clone
from sklearn.datasets import load_digits, load_iris
from sklearn.model_selection import GridSearchCV

from conftest import to_numpy
from model_checks import assert_scores_match, inherited_failures
import nbgpu
from nbgpu import (
    BernoulliNB,
    CategoricalNB,
    ColumnwiseNB,
    ComplementNB,
    GaussianNB,
    MultinomialNB,
    NormalBayesClassifier,
    PoissonNB,
)
from sklearn_suite import parametrize_with_checks

GAUSS, COUNTS, CATS = [0, 1], [2, 3, 4], [5, 6]


def mixed_data(n=150, seed=0):
    """Two Gaussian columns, three count columns, two categorical columns."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n)
    gauss = rng.normal(y[:, None] * [1.0, -0.5], 1.0, size=(n, 2))
    counts = rng.poisson(1.0 + np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]])[y])
    cats = (rng.integers(0, 3, size=(n, 2)) + y[:, None]) % 4
    return np.column_stack([gauss, counts, cats]).astype(float), y


def mixed_model(**kwargs):
    return ColumnwiseNB(
        [("gauss", GaussianNB(), GAUSS), ("counts", MultinomialNB(), COUNTS), ("cats", CategoricalNB(), CATS)], **kwargs
    )


def by_hand(X, y, sample_weight=None):
    """scikit-learn's parts on their columns, prior counted once."""
    parts = [
        sk.GaussianNB().fit(X[:, GAUSS], y, sample_weight=sample_weight),
        sk.MultinomialNB().fit(X[:, COUNTS], y, sample_weight=sample_weight),
        sk.CategoricalNB().fit(X[:, CATS].astype(int), y, sample_weight=sample_weight),
    ]
    jll = parts[0].predict_joint_log_proba(X[:, GAUSS])
    jll = jll + parts[1].predict_joint_log_proba(X[:, COUNTS])
    jll = jll + parts[2].predict_joint_log_proba(X[:, CATS].astype(int))
    return jll - 2 * parts[1].class_log_prior_


def test_matches_parts_combined_by_hand_on_every_backend(backend, dtype):
    X, y = mixed_data()
    Xb = backend.asarray(X, dtype)
    clf = mixed_model().fit(Xb, backend.asarray(y))
    assert_scores_match(clf, Xb, by_hand(X, y), backend, rtol=1e-4 if dtype == "float32" else 1e-10)
    for part in clf.estimators_:  # fitted on the same labels: the classes agree
        np.testing.assert_array_equal(to_numpy(part.classes_), to_numpy(clf.classes_))


def test_fitted_parts_are_usable_on_their_own_columns():
    X, y = mixed_data()
    clf = mixed_model().fit(X, y)
    named = clf.named_estimators_
    assert list(named) == ["gauss", "counts", "cats"]
    assert named["gauss"] is clf.estimators_[0]
    np.testing.assert_allclose(
        named["counts"].predict_proba(X[:, COUNTS]), sk.MultinomialNB().fit(X[:, COUNTS], y).predict_proba(X[:, COUNTS])
    )
    assert named["cats"].n_features_in_ == 2
    assert clf.estimators[0][1] is not clf.estimators_[0]  # the unfitted templates stay unfitted
    assert not hasattr(clf.estimators[0][1], "classes_")


@pytest.mark.parametrize(
    "columns",
    [
        (GAUSS, COUNTS, CATS),
        (slice(0, 2), slice(2, 5), slice(5, None)),
        ([-7, -6], [2, -4, 4], [5, -1]),
        (np.arange(7) < 2, (np.arange(7) >= 2) & (np.arange(7) < 5), np.arange(7) >= 5),
        (np.array(GAUSS), np.array(COUNTS), np.array(CATS)),
    ],
    ids=["ints", "slices", "negative", "masks", "arrays"],
)
def test_column_specifications_are_equivalent(columns):
    X, y = mixed_data()
    clf = ColumnwiseNB(list(zip(["g", "m", "c"], [GaussianNB(), MultinomialNB(), CategoricalNB()], columns))).fit(X, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), by_hand(X, y), rtol=1e-10)


def test_columns_by_name_with_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, y = mixed_data()
    names = ["height", "weight", "visits", "calls", "mails", "colour", "shape"]
    df = pd.DataFrame(X, columns=names)
    clf = ColumnwiseNB(
        [
            ("gauss", GaussianNB(), ["height", "weight"]),
            ("counts", MultinomialNB(), ["visits", "calls", "mails"]),
            ("cats", CategoricalNB(), ["colour", "shape"]),
        ]
    ).fit(df, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(df), by_hand(X, y), rtol=1e-10)
    assert clf.feature_names_in_.tolist() == names
    assert clf.named_estimators_["cats"].feature_names_in_.tolist() == ["colour", "shape"]
    # A single name selects one column; order within a part is as given.
    one = ColumnwiseNB([("g", GaussianNB(), "height"), ("h", GaussianNB(), ["weight"])]).fit(df, y)
    g, h = sk.GaussianNB().fit(X[:, :1], y), sk.GaussianNB().fit(X[:, 1:2], y)
    ref = g.predict_joint_log_proba(X[:, :1]) + h.predict_joint_log_proba(X[:, 1:2]) - np.log(g.class_prior_)
    np.testing.assert_allclose(one.predict_joint_log_proba(df), ref, rtol=1e-10)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df[names[::-1]])


def test_nested_parts_name_their_columns_too(tmp_path):
    """A nested ColumnwiseNB selects by name among the columns its parent gave it."""
    pd = pytest.importorskip("pandas")
    X, y = mixed_data()
    names = ["height", "weight", "visits", "calls", "mails", "colour", "shape"]
    df = pd.DataFrame(X, columns=names)
    inner = ColumnwiseNB([("counts", MultinomialNB(), ["visits", "calls", "mails"]), ("cats", CategoricalNB(), ["shape", "colour"])])
    clf = ColumnwiseNB([("gauss", GaussianNB(), ["height", "weight"]), ("inner", inner, names[2:])]).fit(df, y)
    np.testing.assert_allclose(clf.predict_joint_log_proba(df), by_hand(X, y), rtol=1e-10)
    fitted = clf.named_estimators_["inner"]
    assert fitted.feature_names_in_.tolist() == names[2:]
    assert fitted.named_estimators_["cats"].feature_names_in_.tolist() == ["shape", "colour"]
    with pytest.raises(ValueError, match="needs a pandas DataFrame"):
        clone(clf).fit(X, y)  # names without a DataFrame: the nested part says so
    halves = clone(clf).partial_fit(df[:70], y[:70], classes=[0, 1, 2]).partial_fit(df[70:], y[70:])
    np.testing.assert_allclose(halves.predict_joint_log_proba(df), by_hand(X, y), rtol=1e-10)
    loaded = nbgpu.load(nbgpu.save(clf, tmp_path / "nested.nbgpu"))
    np.testing.assert_allclose(loaded.predict_joint_log_proba(df), by_hand(X, y), rtol=1e-10)


@pytest.mark.parametrize("chunks", [[0, 40, 41, 150], [0, 3, 150], [0, 75, 150]])
def test_partial_fit_in_chunks_equals_fit(backend, chunks):
    X, y = mixed_data()
    model = ColumnwiseNB(
        [
            ("gauss", GaussianNB(), GAUSS),
            ("poisson", PoissonNB(), COUNTS),
            ("cats", CategoricalNB(), CATS),
            ("normal", NormalBayesClassifier(), [0, 1, 2]),
        ]
    )
    full = clone(model).fit(backend.asarray(X), backend.asarray(y))
    part = clone(model)
    for a, b in zip(chunks[:-1], chunks[1:]):
        part.partial_fit(backend.asarray(X[a:b]), backend.asarray(y[a:b]), classes=[0, 1, 2])
    Xb = backend.asarray(X)
    np.testing.assert_allclose(
        to_numpy(part.predict_joint_log_proba(Xb)), to_numpy(full.predict_joint_log_proba(Xb)), rtol=1e-9
    )


def test_sample_weight_matches_by_hand_and_repeated_rows(backend):
    X, y = mixed_data()
    w = np.random.default_rng(5).integers(0, 4, size=len(y)).astype(float)
    clf = mixed_model().fit(backend.asarray(X), backend.asarray(y), sample_weight=backend.asarray(w))
    np.testing.assert_allclose(to_numpy(clf.predict_joint_log_proba(backend.asarray(X))), by_hand(X, y, w), rtol=1e-9)
    rep = mixed_model().fit(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(to_numpy(clf.predict_joint_log_proba(backend.asarray(X))), rep.predict_joint_log_proba(X), rtol=1e-9)


def test_the_prior_counts_once_whatever_the_parts_priors():
    X, y = mixed_data()
    ref = mixed_model().fit(X, y).predict_joint_log_proba(X)
    odd = ColumnwiseNB(
        [
            ("gauss", GaussianNB(priors=[0.7, 0.2, 0.1]), GAUSS),
            ("counts", MultinomialNB(fit_prior=False), COUNTS),
            ("cats", CategoricalNB(class_prior=[0.1, 0.1, 0.8]), CATS),
        ]
    ).fit(X, y)
    np.testing.assert_allclose(odd.predict_joint_log_proba(X), ref, rtol=1e-10)
    # The ColumnwiseNB's own `priors` replace the class frequencies, once.
    priors = np.array([0.5, 0.25, 0.25])
    fixed = mixed_model(priors=priors).fit(X, y)
    freq = np.bincount(y) / len(y)
    np.testing.assert_allclose(fixed.predict_joint_log_proba(X), ref - np.log(freq) + np.log(priors), rtol=1e-10)
    np.testing.assert_allclose(fixed.class_prior_, priors)


def test_a_part_prior_of_zero_is_refused():
    X, y = mixed_data()
    clf = ColumnwiseNB([("g", GaussianNB(priors=[0.5, 0.5, 0.0]), GAUSS), ("m", MultinomialNB(), COUNTS)])
    with pytest.raises(ValueError, match="Part 'g' of `estimators` gives class index"):
        clf.fit(X, y)


def test_unseen_class_in_partial_fit_keeps_zero_probability():
    X, y = mixed_data()
    keep = y < 2
    clf = mixed_model().partial_fit(X[keep], y[keep], classes=[0, 1, 2])
    proba = clf.predict_proba(X)
    assert np.all(proba[:, 2] == 0) and np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_nested_columnwise_equals_flat():
    X, y = mixed_data()
    nested = ColumnwiseNB(
        [
            ("gauss", GaussianNB(), GAUSS),
            ("discrete", ColumnwiseNB([("counts", MultinomialNB(), [0, 1, 2]), ("cats", CategoricalNB(), [3, 4])]), [2, 3, 4, 5, 6]),
        ]
    ).fit(X, y)
    np.testing.assert_allclose(nested.predict_joint_log_proba(X), by_hand(X, y), rtol=1e-10)


def test_sparse_input_stays_sparse_and_matches_dense(backend):
    if not backend.has_sparse:
        pytest.skip(f"{backend.name} has no sparse matrices")
    X, y = mixed_data()
    model = ColumnwiseNB([("gauss", GaussianNB(), GAUSS), ("counts", PoissonNB(), COUNTS), ("bin", BernoulliNB(), [4, 5, 6])])
    dense = clone(model).fit(backend.asarray(X), backend.asarray(y)).predict_joint_log_proba(backend.asarray(X))
    for fmt in ("csr", "csc"):
        Xs = backend.sparse(X, fmt)
        got = clone(model).fit(Xs, backend.asarray(y)).predict_joint_log_proba(Xs)
        np.testing.assert_allclose(to_numpy(got), to_numpy(dense), rtol=1e-10)
    with pytest.raises(TypeError, match="needs dense `X`"):
        ColumnwiseNB([("n", NormalBayesClassifier(), GAUSS)]).fit(backend.sparse(X), y)


def test_real_data_iris_gaussian_and_full_covariance_parts():
    X, y = load_iris(return_X_y=True)
    clf = ColumnwiseNB([("sepal", GaussianNB(), [0, 1]), ("petal", NormalBayesClassifier(), [2, 3])]).fit(X, y)
    g = GaussianNB().fit(X[:, :2], y)
    n = NormalBayesClassifier().fit(X[:, 2:], y)
    ref = g.predict_joint_log_proba(X[:, :2]) + n.predict_joint_log_proba(X[:, 2:]) - np.log(n.class_prior_)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), ref, rtol=1e-10)
    assert clf.score(X, y) > 0.9


def test_real_data_digits_poisson_and_multinomial_parts():
    X, y = load_digits(return_X_y=True)
    clf = ColumnwiseNB([("top", PoissonNB(), slice(0, 32)), ("bottom", MultinomialNB(), slice(32, 64))]).fit(X, y)
    top = PoissonNB().fit(X[:, :32], y)
    bottom = sk.MultinomialNB().fit(X[:, 32:], y)
    ref = top.predict_joint_log_proba(X[:, :32]) + bottom.predict_joint_log_proba(X[:, 32:]) - bottom.class_log_prior_
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), ref, rtol=1e-10)


def test_clone_get_params_set_params_and_grid_search():
    X, y = mixed_data()
    clf = mixed_model()
    params = clf.get_params()
    assert params["gauss"] is clf.estimators[0][1]
    assert params["counts__alpha"] == 1.0
    clf.set_params(counts__alpha=0.5, gauss=GaussianNB(var_smoothing=1e-3))
    assert clf.estimators[1][1].alpha == 0.5
    assert clf.estimators[0][1].var_smoothing == 1e-3
    assert clf.estimators[0][2] == GAUSS  # columns kept
    twin = clone(clf)
    assert twin.estimators[1][1] is not clf.estimators[1][1] and twin.estimators[1][1].alpha == 0.5
    search = GridSearchCV(mixed_model(), {"counts__alpha": [0.1, 1.0], "cats__alpha": [0.5, 2.0]}, cv=3).fit(X, y)
    assert set(search.best_params_) == {"counts__alpha", "cats__alpha"}


def test_to_device_moves_the_parts():
    torch = pytest.importorskip("torch")
    X, y = mixed_data()
    clf = mixed_model().fit(X, y)
    ref = clf.predict_proba(X)
    clf.to_device(torch.empty(0, dtype=torch.float64))
    got = clf.predict_proba(torch.asarray(X))
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    assert isinstance(clf.estimators_[0].theta_, torch.Tensor)
    # partial_fit continues on the new device, exactly. (Without a CategoricalNB
    # part: the core's CategoricalNB moves its host category numbers to the device.)
    model = ColumnwiseNB([("gauss", GaussianNB(), GAUSS), ("counts", PoissonNB(), COUNTS), ("full", NormalBayesClassifier(), GAUSS)])
    X2, y2 = mixed_data(seed=1)
    moved = clone(model).fit(X, y).to_device(torch.empty(0, dtype=torch.float64))
    moved.partial_fit(torch.asarray(X2), torch.asarray(y2))
    both = clone(model).fit(np.vstack([X, X2]), np.concatenate([y, y2]))
    np.testing.assert_allclose(moved.predict_joint_log_proba(torch.asarray(X)).numpy(), both.predict_joint_log_proba(X), rtol=1e-10)


def test_failed_fit_leaves_model_unchanged():
    X, y = mixed_data()
    clf = mixed_model().fit(X, y)
    before = clf.predict_joint_log_proba(X)
    clf.set_params(cats__alpha=-1.0)
    with pytest.raises(ValueError, match="alpha"):
        clf.fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        clf.partial_fit(X, y)
    np.testing.assert_array_equal(clf.predict_joint_log_proba(X), before)
    assert not hasattr(clf, "_pending")


@pytest.mark.parametrize(
    "estimators, error, match",
    [
        ([], ValueError, "`estimators` must be a non-empty list"),
        (GaussianNB(), ValueError, r"`estimators` must be a non-empty list .*got GaussianNB\(\)"),  # was TypeError: not iterable
        ([("g", GaussianNB())], ValueError, r"`estimators` must be a non-empty list of \(name, estimator, columns\)"),
        ([("g", sk.GaussianNB(), GAUSS)], TypeError, "Part 'g' of `estimators` must be an nbgpu"),
        ([("c", ComplementNB(), COUNTS)], TypeError, "got ComplementNB"),
        ([("g", GaussianNB(), GAUSS), ("g", MultinomialNB(), COUNTS)], ValueError, "not unique"),
        ([("g", GaussianNB(), [0, 9])], ValueError, "out of range for X with 7 features"),
        ([("g", GaussianNB(), [])], ValueError, "select no column"),
        ([("g", GaussianNB(), slice(3, 3))], ValueError, "select no column"),
        ([("g", GaussianNB(), np.ones(5, dtype=bool))], ValueError, "boolean mask of shape"),
        ([("g", GaussianNB(), ["height"])], ValueError, "needs a pandas DataFrame"),
        ([("g", GaussianNB(), [0.5])], TypeError, "must be int indices"),
        ([("g", GaussianNB(), 0.5)], TypeError, "must be int indices, a slice, a boolean mask or column names; got 0.5"),
        ([("g", GaussianNB(), None)], TypeError, "must be int indices.*got None"),
        ([("g", GaussianNB(), [[0, 1]])], ValueError, r"one-dimensional list; got an array of shape \(1, 2\)"),
        ([("g", GaussianNB(), [[0, 1], [2]])], TypeError, r"must be int indices.*got \[\[0, 1\], \[2\]\]"),
        ([("m", MultinomialNB(), [0, 1])], ValueError, "`X` must hold counts"),
    ],
)
def test_bad_estimators_name_the_argument(estimators, error, match):
    X, y = mixed_data()
    clf = ColumnwiseNB(estimators)
    with pytest.raises(error, match=match):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_")


def test_tags_of_a_part_that_is_no_classifier_leave_fit_to_refuse_it():
    from sklearn.preprocessing import StandardScaler

    clf = ColumnwiseNB([("scale", StandardScaler(), [0]), ("g", GaussianNB(), [1])])
    assert clf.__sklearn_tags__().classifier_tags.poor_score is False  # raised AttributeError
    with pytest.raises(TypeError, match="Part 'scale' of `estimators` must be an nbgpu"):
        clf.fit(*mixed_data())


def test_partial_fit_with_other_parts_is_refused():
    X, y = mixed_data()
    clf = mixed_model().partial_fit(X, y, classes=[0, 1, 2])
    clf.set_params(estimators=[("gauss", GaussianNB(), GAUSS)])
    with pytest.raises(ValueError, match="differ from those of the fitted model"):
        clf.partial_fit(X, y)


@parametrize_with_checks(
    [ColumnwiseNB([("diag", GaussianNB(), slice(None)), ("full", NormalBayesClassifier(), slice(None))])],
    expected_failed_checks=lambda est: inherited_failures(GaussianNB(), ("check_dtype_object", "check_requires_y_none")),
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_merge_of_models_fitted_on_disjoint_data_equals_one_fit():
    X, y = mixed_data()
    model = ColumnwiseNB([("gauss", GaussianNB(), GAUSS), ("counts", PoissonNB(), COUNTS), ("full", NormalBayesClassifier(), GAUSS)])
    a = clone(model).partial_fit(X[:70], y[:70], classes=[0, 1, 2])
    b = clone(model).partial_fit(X[70:], y[70:], classes=[0, 1, 2])
    before = a.predict_joint_log_proba(X)
    merged = a.merge(b)
    np.testing.assert_allclose(merged.predict_joint_log_proba(X), clone(model).fit(X, y).predict_joint_log_proba(X), rtol=1e-10)
    np.testing.assert_array_equal(a.predict_joint_log_proba(X), before)  # self unchanged
    np.testing.assert_array_equal(merged.named_estimators_["counts"].classes_, [0, 1, 2])
    other = clone(model).set_params(counts__alpha=2.0).fit(X[70:], y[70:])
    with pytest.raises(ValueError, match="same parameters"):
        a.merge(other)


def test_nan_passes_through_to_parts_that_ignore_missing_values(backend):
    X, y = mixed_data(seed=7)
    Xn = X.copy()
    rng = np.random.default_rng(8)
    Xn[:, :5] = np.where(rng.random((len(y), 5)) < 0.2, np.nan, X[:, :5])
    gauss, counts = GaussianNB(missing="ignore"), PoissonNB(missing="ignore")
    clf = ColumnwiseNB([("gauss", gauss, GAUSS), ("counts", counts, COUNTS), ("cats", CategoricalNB(), CATS)])
    assert not clf.__sklearn_tags__().input_tags.allow_nan  # not in every column
    assert clone(clf).set_params(estimators=clf.estimators[:2]).__sklearn_tags__().input_tags.allow_nan
    clf.fit(backend.asarray(Xn), backend.asarray(y))
    # Reference: each part fitted alone on its columns, prior counted once.
    parts = [clone(gauss).fit(Xn[:, GAUSS], y), clone(counts).fit(Xn[:, COUNTS], y), CategoricalNB().fit(X[:, CATS], y)]
    ref = sum(p.predict_joint_log_proba(Xn[:, c]) for p, c in zip(parts, (GAUSS, COUNTS, CATS)))
    ref = ref - 2 * parts[1].class_log_prior_
    np.testing.assert_allclose(to_numpy(clf.predict_joint_log_proba(backend.asarray(Xn))), ref, rtol=1e-10)


def test_nan_in_the_columns_of_a_part_that_does_not_ignore_it_is_an_error():
    X, y = mixed_data(seed=9)
    clf = ColumnwiseNB([("gauss", GaussianNB(missing="ignore"), GAUSS), ("counts", PoissonNB(), COUNTS)]).fit(X, y)
    proba = clf.predict_proba(X)
    Xn = X.copy()
    Xn[3, COUNTS[0]] = np.nan
    with pytest.raises(ValueError, match=r"columns of part 'counts'.*NaN.*PoissonNB.*missing='ignore'"):
        clf.partial_fit(Xn, y)
    with pytest.raises(ValueError, match="columns of part 'counts'"):
        clf.predict(Xn)
    np.testing.assert_array_equal(clf.predict_proba(X), proba)  # the failed calls changed nothing


def test_a_fitted_model_scores_missing_values_as_its_fitted_parts_do():
    """``set_params`` of a part changes the next fit, not the fitted model."""
    X, y = mixed_data(seed=10)
    Xn = X.copy()
    Xn[3, GAUSS[0]] = np.nan
    clf = ColumnwiseNB([("gauss", GaussianNB(missing="ignore"), GAUSS), ("counts", PoissonNB(), COUNTS)]).fit(Xn, y)
    before = clf.predict_proba(Xn)
    clf.set_params(gauss__missing="error")
    np.testing.assert_array_equal(clf.predict_proba(Xn), before)
    with pytest.raises(ValueError, match="NaN"):
        clone(clf).fit(Xn, y)


def test_fitted_parts_merged_on_their_own_keep_the_score_dtype():
    X, y = mixed_data()
    X32 = X.astype(np.float32)
    a = mixed_model().partial_fit(X32[::2], y[::2], classes=[0, 1, 2])
    b = mixed_model().partial_fit(X32[1::2], y[1::2], classes=[0, 1, 2])
    merged = a.named_estimators_["gauss"].merge(b.named_estimators_["gauss"])
    assert merged.theta_.dtype == np.float32
    np.testing.assert_allclose(merged.theta_, GaussianNB().fit(X32[:, GAUSS], y).theta_, rtol=1e-6)


def test_compact_kernel_parts_give_the_posterior_of_one_model_over_all_columns():
    """Each KernelDensityNB part kept its own least-excluded classes, so the sum was −inf
    for every class (NaN posteriors) where one part excluded one class and another the
    other, or the ColumnwiseNB's prior excluded the part's choice. Split into parts, the
    model equals one KernelDensityNB over all columns: posteriors, joint and predictions."""
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(size=(30, 3)), rng.normal(size=(30, 3)) + 3.0])
    y = np.repeat([0, 1], 30)
    Xt = np.concatenate([X[:5], [[0.0, 3.0, 0.0], [3.0, 0.0, 20.0], [50.0, 50.0, 50.0]]])
    for priors in (None, [1.0, 0.0]):
        whole = nbgpu.KernelDensityNB(kernel="epanechnikov", bandwidth=0.5, priors=priors).fit(X, y)

        def part():
            return nbgpu.KernelDensityNB(kernel="epanechnikov", bandwidth=0.5)

        split = nbgpu.ColumnwiseNB([("a", part(), [0]), ("b", part(), [1, 2])], priors=priors).fit(X, y)
        proba = split.predict_proba(Xt)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba, whole.predict_proba(Xt), rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(split.predict_joint_log_proba(Xt), whole.predict_joint_log_proba(Xt), rtol=1e-9)
        np.testing.assert_array_equal(split.predict(Xt), whole.predict(Xt))


def test_a_part_keeping_raw_points_with_missing_values():
    """KernelDensityNB(missing="ignore") keeps its training points, NaN included: as a part,
    their NaN was taken for an overflow of sums ("statistics ... overflow float64")."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 2))
    X[::7, 0] = np.nan
    y = np.arange(40) % 2
    kde = nbgpu.KernelDensityNB(missing="ignore")
    split = nbgpu.ColumnwiseNB([("k", kde, [0]), ("g", nbgpu.GaussianNB(), [1])]).fit(X, y)
    alone = kde.fit(X[:, :1], y).predict_joint_log_proba(X[:, :1]) + nbgpu.GaussianNB().fit(X[:, 1:], y).predict_joint_log_proba(X[:, 1:])
    np.testing.assert_allclose(split.predict_joint_log_proba(X), alone - np.log(split.class_prior_), rtol=1e-10)


def test_a_saved_model_keeps_its_parts_parameters_after_set_params(tmp_path):
    """set_params(p__alpha=...) changes the template in `estimators`, not the fitted
    part: predictions stayed, but the model file took the template's alpha, so the
    loaded model predicted differently."""
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=40), rng.poisson(2, (40, 2))]
    y = rng.integers(0, 2, 40)
    model = nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0]), ("p", nbgpu.PoissonNB(), [1, 2])]).fit(X, y)
    before = model.predict_proba(X)
    model.set_params(p__alpha=100.0, g__var_smoothing=0.5)
    np.testing.assert_array_equal(model.predict_proba(X), before)
    nbgpu.save(model, tmp_path / "m.nbgpu")
    loaded = nbgpu.load(tmp_path / "m.nbgpu")
    np.testing.assert_allclose(loaded.predict_proba(X), before, rtol=1e-12)
    assert loaded.estimators[1][1].alpha == 1.0 and model.estimators[1][1].alpha == 100.0


@pytest.mark.parametrize(("part", "match"), [
    (("p", nbgpu.PoissonNB(), [1]), "columns of part 'p'"),
    (("p", nbgpu.PoissonNB(), [2, 1]), "columns of part 'p'"),
    (("p", nbgpu.MultinomialNB(), [1, 2]), "is a MultinomialNB in `estimators` but was fitted as a PoissonNB"),
])
def test_partial_fit_refuses_parts_changed_since_the_fit(part, match):
    """set_params(estimators=...) with other columns or another model for a part, then
    partial_fit: the fit went on with the old columns and statistics, and the model file
    then failed or predicted differently."""
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=40), rng.poisson(2, (40, 2))]
    y = rng.integers(0, 2, 40)
    model = nbgpu.ColumnwiseNB([("g", nbgpu.GaussianNB(), [0]), ("p", nbgpu.PoissonNB(), [1, 2])]).fit(X, y)
    before = model.predict_proba(X)
    model.set_params(estimators=[("g", nbgpu.GaussianNB(), [0]), part])
    with pytest.raises(ValueError, match=match):
        model.partial_fit(X[:3], y[:3])
    np.testing.assert_array_equal(model.predict_proba(X), before)
    model.set_params(estimators=[("g", nbgpu.GaussianNB(), [0]), ("p", nbgpu.PoissonNB(alpha=2.0), [1, 2])])
    model.partial_fit(X[:3], y[:3])  # other hyper-parameters: the fit goes on with them


def test_a_class_without_rows_that_the_prior_keeps():
    """prior_smoothing (or priors) on the ColumnwiseNB with a class no row has was refused with
    advice the user had followed ("leave the parts' priors at their defaults"): the part's own
    prior excluded it. As the single models do, the class is scored."""
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=40), rng.poisson(2, (40, 2))]
    y = rng.integers(0, 2, 40)
    parts = [("g", nbgpu.GaussianNB(), [0]), ("p", nbgpu.PoissonNB(), [1, 2])]
    model = nbgpu.ColumnwiseNB(parts, prior_smoothing=1.0).partial_fit(X, y, classes=[0, 1, 2])
    g = nbgpu.GaussianNB(prior_smoothing=1.0).partial_fit(X[:, :1], y, classes=[0, 1, 2])
    p = nbgpu.PoissonNB(prior_smoothing=1.0).partial_fit(X[:, 1:], y, classes=[0, 1, 2])
    expected = g.predict_joint_log_proba(X[:, :1]) + p.predict_joint_log_proba(X[:, 1:]) - np.log(g.class_prior_)
    np.testing.assert_allclose(model.predict_joint_log_proba(X), expected, rtol=1e-10)
    fixed = nbgpu.ColumnwiseNB(parts, priors=[0.2, 0.3, 0.5]).partial_fit(X, y, classes=[0, 1, 2])
    np.testing.assert_allclose(fixed.class_prior_, [0.2, 0.3, 0.5])
    assert np.all(np.isfinite(fixed.predict_proba(X)))
