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


def test_the_text_table_keeps_one_aligned_row_per_class():
    """A label holding a line break split its row (and the never-seen line); East Asian
    wide characters pushed their row's numbers right."""
    import unicodedata

    from nbgpu._app.evaluation import report_text

    names = ["two\nlines", "長い名前のクラス", "a"]
    confusion = np.array([[2, 0, 0], [0, 2, 0], [0, 1, 0]])
    text = report_text(evaluation_report(confusion, 0.5, np.asarray(names[:2]), unseen=names[2:]), "GaussianNB")
    rows = text.split("\n\n")[1].splitlines()  # the table: a header, 3 classes, 2 averages
    assert len(rows) == 1 + 3 + 2 and rows[1].lstrip().startswith("two\\nlines")
    rows = [row.removesuffix("  (never seen by the model)") for row in rows]
    columns = {sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in row) for row in rows}
    assert len(columns) == 1, rows
