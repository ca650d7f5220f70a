"""``nbgpu train --model auto`` chooses the features too (issue 37 item 2): word n-grams and term
weighting on text, GaussianNB on measurements, alpha beyond the grid's edge; the choice is stored
and applied by ``predict``/``evaluate``; too few rows and one class are said once."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file, load_iris
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.naive_bayes import ComplementNB, MultinomialNB

import nbgpu
from model_file_edits import header, members, write
from nbgpu._app import model_choice
from nbgpu._app.feature_choice import FeatureSet, text_transform
from nbgpu._interop.vectorizer_settings import weighted
from test_model_auto import _metadata, run

N_FEATURES = 2**12


def _write_jsonl(path, texts, labels):
    with open(path, "w") as f:
        for text, label in zip(texts, labels):
            f.write(json.dumps({"text": text, "label": label}) + "\n")


def _word_order_texts(n=400, seed=0):
    """Two classes of the same words in the same numbers, told apart by their order only: class "ab"
    writes pairs "aN bN", class "ba" writes "bN aN". Unigram counts carry no signal; bigrams all of it."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        label = ("ab", "ba")[i % 2]
        pairs = rng.integers(0, 6, size=5)
        words = [(f"a{p} b{p}" if label == "ab" else f"b{p} a{p}") for p in pairs]
        texts.append(" . ".join(words))
        labels.append(label)
    return texts, labels


def _topic_texts(n=400, seed=1):
    """Two classes of disjoint vocabularies in random order: unigrams tell them apart perfectly."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        label = ("x", "y")[i % 2]
        texts.append(" ".join(f"{label}{w}" for w in rng.integers(0, 30, size=8)))
        labels.append(label)
    return texts, labels


def _train_text(tmp_path, capsys, texts, labels, *flags):
    _write_jsonl(tmp_path / "train.jsonl", texts, labels)
    status, _, err = run("train", tmp_path / "train.jsonl", "-o", tmp_path / "m.nbgpu",
                         "--hash-features", N_FEATURES, *flags, capsys=capsys)
    assert status == 0, err
    return err


def test_text_transform_is_unigrams_then_the_1_2gram_vectorizer():
    texts = ["the cat sat on the mat", "a cat, a hat", "mat"]
    settings = {"n_features": N_FEATURES, "alternate_sign": False, "norm": None}
    X = text_transform(settings)(texts)
    assert X.shape == (3, 2 * N_FEATURES)
    for n in (1, 2):
        ref = HashingVectorizer(ngram_range=(1, n), **settings).transform(texts)
        np.testing.assert_array_equal(FeatureSet(n, "counts").view(X).toarray(), ref.toarray())


def test_sublinear_weighting_is_scikit_learns():
    X = sp.csr_matrix(np.array([[0.0, 1, 2, 7], [3, 0, 0, 1]]))
    ref = TfidfTransformer(sublinear_tf=True, use_idf=False, norm=None).fit_transform(X)
    np.testing.assert_allclose(weighted(X, "sublinear").toarray(), ref.toarray())
    assert weighted(X, "counts") is X


def test_bigrams_chosen_where_word_order_matters(tmp_path, capsys):
    texts, labels = _word_order_texts()
    err = _train_text(tmp_path, capsys, texts, labels)
    search = _metadata(tmp_path / "m.nbgpu")["model_search"]
    assert search["features"]["ngram_range"] == [1, 2], err
    best = max(c["mean"] for c in search["candidates"] if c["features"].get("ngram_range") == [1, 2])
    unigrams = max(c["mean"] for c in search["candidates"] if c["features"].get("ngram_range") == [1, 1])
    assert best > unigrams + 0.2  # unigrams are at chance
    assert "1-2grams" in err.split("chose", 1)[1]


def test_unigrams_kept_where_bigrams_add_nothing(tmp_path, capsys):
    """Unigrams separate the classes already: on a tie the simpler features, listed first, are kept."""
    texts, labels = _topic_texts()
    _train_text(tmp_path, capsys, texts, labels)
    search = _metadata(tmp_path / "m.nbgpu")["model_search"]
    assert search["features"]["ngram_range"] == [1, 1]
    assert nbgpu.load(tmp_path / "m.nbgpu", return_vectorizer=True)[1].ngram_range == (1, 1)


def test_given_ngram_range_is_kept(tmp_path, capsys):
    texts, labels = _word_order_texts()
    _train_text(tmp_path, capsys, texts, labels, "--ngram-range", "1,1")
    search = _metadata(tmp_path / "m.nbgpu")["model_search"]
    assert {tuple(c["features"].get("ngram_range", ())) for c in search["candidates"]} == {()}
    assert nbgpu.load(tmp_path / "m.nbgpu", return_vectorizer=True)[1].ngram_range == (1, 1)


@pytest.mark.parametrize("tf", ["counts", "sublinear"])
def test_predict_applies_the_stored_features(tmp_path, capsys, tf):
    """Round trip through the model file: ``evaluate``/``predict`` hash with the stored n-grams and weight
    with the stored tf, as the scikit-learn pipeline of the same choice does (the model file's ``tf`` set to
    each weighting, with the statistics of that weighting)."""
    texts, labels = _word_order_texts(seed=3)
    _train_text(tmp_path, capsys, texts, labels)
    metadata = _metadata(tmp_path / "m.nbgpu")
    chosen = metadata["model_search"]["chosen"]
    assert metadata["features"]["tf"] in ("counts", "sublinear")
    ngram = tuple(metadata["model_search"]["features"]["ngram_range"])
    vec = HashingVectorizer(n_features=N_FEATURES, ngram_range=ngram, alternate_sign=False, norm=None)
    X = vec.transform(texts)
    if tf == "sublinear":
        X = TfidfTransformer(sublinear_tf=True, use_idf=False, norm=None).fit_transform(X)
    family = {"MultinomialNB": MultinomialNB, "ComplementNB": ComplementNB}[chosen["estimator"]]
    ref = family(alpha=chosen["alpha"]).fit(X, labels)
    # The file as auto would write it had it chosen ``tf``: the statistics of that weighting, tf stored.
    model = getattr(nbgpu, chosen["estimator"])(alpha=chosen["alpha"]).fit(X, labels)
    nbgpu.save(model, tmp_path / "w.nbgpu", vectorizer=vec, metadata={**metadata, "features": {"tf": tf}})
    test_texts, test_labels = _word_order_texts(n=60, seed=4)
    _write_jsonl(tmp_path / "test.jsonl", test_texts, test_labels)
    status, out, err = run("predict", tmp_path / "w.nbgpu", tmp_path / "test.jsonl", capsys=capsys)
    assert status == 0, err
    X_test = vec.transform(test_texts)
    if tf == "sublinear":
        X_test = TfidfTransformer(sublinear_tf=True, use_idf=False, norm=None).fit_transform(X_test)
    assert out.split() == list(ref.predict(X_test))


def test_unknown_weighting_in_a_model_file_is_refused(tmp_path, capsys):
    texts, labels = _topic_texts(n=60)
    _train_text(tmp_path, capsys, texts, labels)
    parts = members(tmp_path / "m.nbgpu")
    edited = header(parts)
    edited["metadata"]["features"] = {"tf": "cubic"}
    write(tmp_path / "bad.nbgpu", parts, edited)
    status, _, err = run("predict", tmp_path / "bad.nbgpu", tmp_path / "train.jsonl", capsys=capsys)
    assert status == 1
    assert "features tf='cubic'" in err and "'sublinear'" in err


def test_iris_is_measurements_for_gaussian(tmp_path, capsys):
    X, y = load_iris(return_X_y=True)
    with open(tmp_path / "iris.csv", "w") as f:
        f.write("a,b,c,d,label\n")
        for row, label in zip(X, y):
            f.write(",".join(f"{v:g}" for v in row) + f",{label}\n")
    status, _, err = run("train", tmp_path / "iris.csv", "-o", tmp_path / "m.nbgpu", capsys=capsys)
    assert status == 0, err
    assert "not whole numbers" in err and "GaussianNB" in err
    model = nbgpu.load(tmp_path / "m.nbgpu")
    assert type(model).__name__ == "GaussianNB"
    np.testing.assert_allclose(model.theta_, nbgpu.GaussianNB().fit(X, y).theta_)


def test_one_row_says_so_once(tmp_path, capsys):
    dump_svmlight_file(np.array([[1.0, 2.0, 0.0]]), np.array([1]), str(tmp_path / "one.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "one.svm", "-o", tmp_path / "m.nbgpu", capsys=capsys)
    assert status == 0, err
    assert err.count("too few to cross-validate") == 1
    assert "nan" not in err.lower() and "±" not in err


def test_one_class_is_a_warning_naming_it(tmp_path, capsys):
    texts = [f"spam offer {i}" for i in range(20)]
    _write_jsonl(tmp_path / "one.jsonl", texts, ["spam"] * 20)
    for flags in ([], ["-q"], ["--model", "multinomial"]):
        status, _, err = run("train", tmp_path / "one.jsonl", "-o", tmp_path / "m.nbgpu", "--hash-features", 64,
                             *flags, capsys=capsys)
        assert status == 0, err
        warnings = [line for line in err.splitlines() if "warning:" in line]
        assert len(warnings) == 1 and "one class only, 'spam'" in warnings[0]


def test_alpha_grid_extended_at_its_edge(tmp_path, capsys):
    """Where the best alpha is the grid's largest, larger ones are scored until the best is inside, and the
    output says so; the extension's scores are those of the library's fits."""
    X, y = _edge_data()
    dump_svmlight_file(X, y, str(tmp_path / "e.svm"), zero_based=True)
    status, _, err = run("train", tmp_path / "e.svm", "-o", tmp_path / "m.nbgpu", "--chunk-mb", "0.002",
                         capsys=capsys)
    assert status == 0, err
    search = _metadata(tmp_path / "m.nbgpu")["model_search"]
    grid = set(model_choice.ALPHAS)
    beyond = [c for c in search["candidates"] if c["alpha"] not in grid]
    assert beyond and search["alpha_grid_extended"]
    assert "alpha grid extended up" in err
    family, alpha = search["chosen"]["estimator"], search["chosen"]["alpha"]
    same = sorted(c["alpha"] for c in search["candidates"]
                  if c["estimator"] == family and c["features"] == search["features"])
    assert same[0] < alpha < same[-1]  # the best is inside the extended grid
    # The scores of the extension are those of the library's fits.
    fold = np.arange(X.shape[0]) % model_choice.FOLDS
    for c in beyond:
        model = getattr(nbgpu, c["estimator"])
        scores = [np.mean(model(alpha=c["alpha"]).fit(X[fold != f], y[fold != f]).predict(X[fold == f]) == y[fold == f])
                  for f in range(model_choice.FOLDS)]
        assert c["mean"] == pytest.approx(np.mean(scores), abs=1e-6)


def _edge_data(n=300, seed=5):
    """Counts where more smoothing than alpha 10 helps: many features of a few counts, classes told apart by
    small differences in common features, and rare features that are noise."""
    rng = np.random.default_rng(seed)
    d = 400
    y = np.arange(n) % 2
    common = np.where(y[:, None] == 0, [6, 4], [4, 6])
    X = np.hstack([rng.poisson(common), rng.poisson(0.02, size=(n, d))]).astype(np.float64)
    return X, y


def test_next_alpha_follows_the_grid():
    assert [model_choice.next_alpha(a, True) for a in (10.0, 30.0, 0.3)] == [30.0, 100.0, 1.0]
    assert [model_choice.next_alpha(a, False) for a in (0.01, 0.003, 3.0)] == [0.003, 0.001, 1.0]


def _captured_search(monkeypatch):
    """Run ``--model auto`` with :func:`model_choice.search` recording its candidates and scorer."""
    seen = {}
    original = model_choice.search

    def search(candidates, scorer, *, extend):
        seen["candidates"], seen["scorer"] = list(candidates), scorer
        seen["search"] = original(candidates, scorer, extend=extend)
        return seen["search"]

    monkeypatch.setattr(model_choice, "search", search)
    return seen


def _pipeline(texts, ngram, tf):
    """scikit-learn's matrix of the feature set (the HashingVectorizer of ``ngram``, then ``tf``)."""
    vec = HashingVectorizer(n_features=N_FEATURES, ngram_range=(1, ngram), alternate_sign=False, norm=None)
    X = vec.transform(texts)
    return TfidfTransformer(sublinear_tf=True, use_idf=False, norm=None).fit_transform(X) if tf == "sublinear" else X


def test_fold_statistics_are_scikit_learns_fits(tmp_path, capsys, monkeypatch):
    """The statistics made from the pass's sums (1-2grams as unigrams plus bigrams, sublinear tf as the counts
    less their corrections, the log of entries folded in many times, a class that comes late, one of one row) are
    those of scikit-learn's MultinomialNB fitted on the feature set's matrix: on every row, and on every fold but f
    (a class without rows there left out)."""
    monkeypatch.setattr(model_choice, "LOG_ENTRIES", 64)
    texts, labels = _word_order_texts(n=300, seed=6)
    labels[-7:] = ["late"] * 7
    labels[7] = "lone"  # in fold 2 only: left out of that fold's statistics
    seen = _captured_search(monkeypatch)
    _train_text(tmp_path, capsys, texts, labels, "--chunk-mb", "0.002")
    statistics = seen["scorer"].statistics
    y = np.asarray(labels)
    fold = np.arange(len(texts)) % model_choice.FOLDS
    for key in {c.statistics for c in seen["candidates"]}:
        X = _pipeline(texts, key[1].ngram, key[1].tf)
        for f in (None, 0, 2, 3):
            rows = fold != f
            ref = MultinomialNB().fit(X[rows], y[rows])
            made = statistics.model(key, f)
            np.testing.assert_array_equal(made.classes_, ref.classes_)
            np.testing.assert_allclose(made._stats["class_count"], ref.class_count_)
            count = made._stats["feature_count"]
            count = count.csc.toarray() if hasattr(count, "csc") else count
            np.testing.assert_allclose(count, ref.feature_count_, rtol=1e-12, atol=1e-12)


def test_auto_model_is_the_chosen_pipeline_on_all_rows(tmp_path, capsys):
    """The saved model is scikit-learn's pipeline of the chosen features and model fitted on every row."""
    texts, labels = _word_order_texts(n=300, seed=7)
    _train_text(tmp_path, capsys, texts, labels, "--chunk-mb", "0.002")
    search = _metadata(tmp_path / "m.nbgpu")["model_search"]
    chosen, features = search["chosen"], search["features"]
    X = _pipeline(texts, features["ngram_range"][1], features["tf"])
    family = {"MultinomialNB": MultinomialNB, "ComplementNB": ComplementNB}[chosen["estimator"]]
    ref = family(alpha=chosen["alpha"]).fit(X, labels)
    model = nbgpu.load(tmp_path / "m.nbgpu")
    np.testing.assert_allclose(model.feature_count_, ref.feature_count_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_the_choice_does_not_depend_on_how_the_file_is_cut(tmp_path, capsys):
    """The held-out rows are chosen by row number (``row_keys``), not by chunk: one chunk or many, the same
    rows are scored, the same scores, the same model (sums of counts: bit for bit)."""
    texts, labels = _word_order_texts(n=6000, seed=3)
    made = {}
    for chunk_mb in ("64", "0.01"):
        _train_text(tmp_path, capsys, texts, labels, "--chunk-mb", chunk_mb)
        made[chunk_mb] = _metadata(tmp_path / "m.nbgpu")["model_search"], nbgpu.load(tmp_path / "m.nbgpu")
    (search, model), (search_cut, model_cut) = made["64"], made["0.01"]
    assert search["rows_scored"] == model_choice.FOLDS * model_choice.SAMPLE_ROWS  # a sample of each fold
    assert search == search_cut
    np.testing.assert_array_equal(model.feature_count_, model_cut.feature_count_)
    np.testing.assert_array_equal(model.class_count_, model_cut.class_count_)


@pytest.mark.fast_path("few_columns")
def test_scoring_on_the_rows_columns_is_the_whole_width_models(tmp_path, capsys, monkeypatch):
    """Held-out rows scored from the sums of the columns they use (a column's weights as those of a column
    without sums plus their excess at its entries) get the fold accuracies of the whole-width models of the
    same statistics (the reference path)."""
    from nbgpu._array.paths import reference

    texts, labels = _word_order_texts(n=400, seed=8)
    texts = [t + f" w{i % 37} w{i % 11}" for i, t in enumerate(texts)]  # words the folds share, and not
    _write_jsonl(tmp_path / "train.jsonl", texts, labels)
    scores = []
    for switch in (contextlib.nullcontext(), reference("few_columns")):
        seen = _captured_search(monkeypatch)
        with switch:
            status, _, err = run("train", tmp_path / "train.jsonl", "-o", tmp_path / "m.nbgpu", "--hash-features",
                                 N_FEATURES, capsys=capsys)
            assert status == 0, err
            scorer = seen["scorer"]
            scores.append(scorer.scores(seen["candidates"]))
            restricted = [isinstance(scorer._rest(c, 0, None, {}), model_choice._HeldOut) for c in seen["candidates"]]
        assert all(restricted) if len(scores) == 1 else not any(restricted)
    np.testing.assert_array_equal(scores[0], scores[1])


def _one_row_class_texts():
    """Word-order texts with a class of one row: absent from the sums of every fold but its own."""
    texts, labels = _word_order_texts(n=300, seed=9)
    texts[7], labels[7] = "a1 b1 zz qq zz", "lone"
    return texts, labels


@pytest.mark.fast_path("few_columns")
def test_held_out_sums_are_scikit_learns(tmp_path, capsys, monkeypatch):
    """The sums a fold's held-out rows are scored from (the columns they use; every fold but f; a class with rows in
    fold f only left out) are scikit-learn's fit of the other folds at those columns, whether a term's entries are
    gathered for the key or shared with another key of the same columns."""
    texts, labels = _one_row_class_texts()
    seen = _captured_search(monkeypatch)
    _train_text(tmp_path, capsys, texts, labels)
    statistics = seen["scorer"].statistics
    y = np.asarray(labels)
    fold = np.arange(len(texts)) % model_choice.FOLDS
    keys = sorted({c.statistics for c in seen["candidates"]}, key=lambda key: (key[1].ngram, key[1].tf))
    for f in range(model_choice.FOLDS):
        parts = {}
        for key in keys:
            X = _pipeline(texts, key[1].ngram, key[1].tf)
            ref = MultinomialNB().fit(X[fold != f], y[fold != f])
            columns = np.unique(sp.csr_matrix(X[fold == f]).indices)
            for shared in (None, parts.setdefault(key[1].ngram, {})):
                sums = statistics.held_out(key, f, columns, shared)
                np.testing.assert_array_equal(sums.classes, ref.classes_)
                np.testing.assert_array_equal(sums.class_count, ref.class_count_)
                np.testing.assert_allclose(sums.class_total, ref.feature_count_.sum(axis=1), rtol=1e-12)
                count = np.zeros((columns.size, sums.classes.size))
                count[sums.column, sums.klass] = sums.value
                assert np.all(sums.value != 0) and np.all(np.diff(sums.column * sums.classes.size + sums.klass) > 0)
                np.testing.assert_allclose(count, ref.feature_count_[:, columns].T, rtol=1e-12, atol=1e-12)
        assert "lone" not in statistics.held_out(keys[0], 7 % model_choice.FOLDS, np.arange(3)).classes


@pytest.mark.fast_path("few_columns")
@pytest.mark.parametrize("family", ["MultinomialNB", "ComplementNB"])
@pytest.mark.parametrize("alpha", [0.01, 1.0, 30.0])
def test_held_out_scores_are_scikit_learns_joint_log_likelihood(tmp_path, capsys, monkeypatch, family, alpha):
    """A candidate's scores of fold f's held-out rows made from the sums of the columns they use are the joint
    log-likelihoods of scikit-learn's model fitted on every other fold, over every column."""
    texts, labels = _one_row_class_texts()
    seen = _captured_search(monkeypatch)
    _train_text(tmp_path, capsys, texts, labels)
    scorer = seen["scorer"]
    y = np.asarray(labels)
    fold = np.arange(len(texts)) % model_choice.FOLDS
    sklearn_family = {"MultinomialNB": MultinomialNB, "ComplementNB": ComplementNB}[family]
    for features in {c.features for c in seen["candidates"]}:
        candidate = model_choice.Candidate(family, {"alpha": alpha}, features)
        X = _pipeline(texts, features.ngram, features.tf)
        for f in (0, 2):
            held = scorer._rest(candidate, f, None, {})
            assert isinstance(held, model_choice._HeldOut)
            ref = sklearn_family(alpha=alpha).fit(X[fold != f], y[fold != f])
            scores = held.scores(model_choice.estimator(candidate, {}, per_class=False))
            np.testing.assert_allclose(scores, ref.predict_joint_log_proba(X[fold == f]), rtol=1e-10, atol=1e-8)
