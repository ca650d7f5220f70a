"""The command line decides as the model does (its loss matrix included)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nbgpu
from nbgpu._app.cli import main


@pytest.fixture
def costly_miss(tmp_path):
    """A saved GaussianNB whose loss matrix makes it decide class 1 where
    class 0 is more probable, and an svmlight file of such rows."""
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0.0, 1.0, (200, 2)), rng.normal(2.5, 1.0, (200, 2))]) + 1.0
    y = np.repeat([0, 1], 200)
    model = nbgpu.GaussianNB(loss_matrix=[[0.0, 20.0], [1.0, 0.0]]).fit(X, y)
    path = tmp_path / "m.nbgpu"
    nbgpu.save(model, path)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(data), zero_based=True)
    proba = model.predict_proba(X)
    # The test is only meaningful where the two rules disagree.
    assert np.any(model.predict(X) != np.argmax(proba, axis=1))
    return model, X, y, path, data


def test_predict_uses_the_models_decisions(costly_miss, tmp_path, capsys):
    model, X, _, path, data = costly_miss
    out = tmp_path / "pred.txt"
    assert main(["predict", str(path), str(data), "-o", str(out), "--quiet"]) == 0
    got = np.loadtxt(out, dtype=np.int64)
    np.testing.assert_array_equal(got, model.predict(X))


def test_predict_proba_csv_uses_the_models_decisions(costly_miss, tmp_path):
    model, X, _, path, data = costly_miss
    out = tmp_path / "pred.csv"
    assert main(["predict", str(path), str(data), "--proba", "-o", str(out), "--quiet"]) == 0
    rows = out.read_text().splitlines()[1:]
    np.testing.assert_array_equal([int(r.split(",")[0]) for r in rows], model.predict(X))


def test_evaluate_scores_the_models_decisions(costly_miss, tmp_path):
    model, X, y, path, data = costly_miss
    out = tmp_path / "report.json"
    assert main(["evaluate", str(path), str(data), "--json", "-o", str(out), "--quiet"]) == 0
    report = json.loads(out.read_text())
    assert report["accuracy"] == pytest.approx(model.score(X, y))
