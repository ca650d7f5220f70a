"""``nbgpu evaluate``'s metrics, computed from the confusion matrix without
scikit-learn, against scikit-learn's own on the rows they stand for."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, classification_report, log_loss

from nbgpu._app.evaluation import evaluation_report, log_loss_sum


@pytest.mark.parametrize("seed", range(6))
def test_the_report_is_scikit_learns(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 7))
    confusion = rng.integers(0, 6, (k, k)) * (rng.random((k, k)) < 0.6)  # empty rows and columns too
    confusion[0, 0] += 1
    unseen = ["zz"] if seed % 2 else []
    if unseen:
        confusion[-1, -1] = 0  # a class the model never saw is never decided
    true, pred = np.nonzero(confusion)
    weight = confusion[true, pred]
    names = [f"c{i}" for i in range(k - len(unseen))] + unseen
    ref = classification_report(true, pred, labels=np.arange(k), target_names=names, output_dict=True,
                                zero_division=0, sample_weight=weight)
    ours = evaluation_report(confusion, 0.0, np.asarray(names[: k - len(unseen)]), unseen=unseen)
    for name in names:
        assert ours["per_class"][name] == pytest.approx(ref[name], rel=1e-12, abs=1e-15), name
    for name in ("macro avg", "weighted avg"):
        assert ours["averages"][name] == pytest.approx(ref[name], rel=1e-12, abs=1e-15), name
    assert ours["accuracy"] == pytest.approx(accuracy_score(true, pred, sample_weight=weight), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_log_loss_is_scikit_learns(dtype):
    rng = np.random.default_rng(1)
    proba = rng.dirichlet(np.full(4, 0.3), 200).astype(dtype)
    proba[:5] = np.eye(4, dtype=dtype)[[1, 2, 3, 0, 1]]  # certain and wrong: clipped, as in scikit-learn
    proba /= proba.sum(axis=1, keepdims=True)
    codes = rng.integers(0, 4, 200)
    ref = log_loss(codes, proba, labels=np.arange(4), normalize=False)
    assert log_loss_sum(codes, proba) == pytest.approx(ref, rel=1e-6 if dtype == np.float32 else 1e-12)
