"""What ``nbgpu evaluate`` reports: scikit-learn's metrics (computed from the
confusion matrix, as its ``classification_report`` and ``log_loss`` define
them, without importing it), as text or JSON, and the confusion matrix drawn
with matplotlib."""

from __future__ import annotations

import unicodedata

import numpy as np


def label_text(labels):
    return [str(v) for v in np.asarray(labels).tolist()]


def evaluation_report(confusion, log_loss_sum, classes, *, unseen=()):
    """Accuracy, log-loss, per-class precision/recall/F1 and the confusion matrix, all from the
    confusion matrix summed over the chunks, with scikit-learn's definitions and ``zero_division=0``.

    ``unseen``: names of the true classes the model never saw, the last ``len(unseen)`` rows of
    ``confusion``. As in scikit-learn's reports, their rows count as errors and the classes are
    listed with recall 0; the log-loss is over the rows of the classes the model knows (it gives
    the others no probability at all).
    """
    confusion = np.asarray(confusion, dtype=np.int64)
    unseen = list(unseen)
    names = label_text(classes) + unseen
    hits, decided, support = np.diagonal(confusion), confusion.sum(axis=0), confusion.sum(axis=1)
    precision, recall = _ratio(hits, decided), _ratio(hits, support)
    f1 = _ratio(2 * precision * recall, precision + recall)
    per_class = {name: _scores(precision[i], recall[i], f1[i], support[i]) for i, name in enumerate(names)}
    rows = int(confusion.sum())
    weights = _ratio(support, rows)
    averages = {
        "macro avg": _scores(precision.mean(), recall.mean(), f1.mean(), rows),
        "weighted avg": _scores(precision @ weights, recall @ weights, f1 @ weights, rows),
    }
    known_rows = int(confusion[: len(names) - len(unseen)].sum())
    return {
        "rows": rows,
        "accuracy": float(_ratio(hits.sum(), rows)),
        "log_loss": log_loss_sum / known_rows if known_rows else None,
        "log_loss_rows": known_rows,
        "classes": names,
        "unseen_classes": {name: int(per_class[name]["support"]) for name in unseen},
        "per_class": per_class,
        "averages": averages,
        "confusion_matrix": confusion.tolist(),
    }


def _ratio(a, b):
    """``a / b``, 0 where ``b`` is 0 (scikit-learn's ``zero_division=0``)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.divide(a, b, out=np.zeros_like(a), where=b != 0)


def _scores(precision, recall, f1, support):
    return {"precision": float(precision), "recall": float(recall), "f1-score": float(f1), "support": float(support)}


def log_loss_sum(codes, proba):
    """scikit-learn's ``log_loss(codes, proba, normalize=False)`` of rows whose probabilities sum to 1:
    each row's true-class probability clipped to ``[eps, 1 - eps]`` of its dtype."""
    eps = np.finfo(proba.dtype).eps
    picked = np.clip(proba[np.arange(codes.shape[0]), codes], eps, 1 - eps)
    return float(-np.sum(np.log(picked)))


def _shown(label):
    """A label as one line of text: control characters (a line break) escaped as Python writes them."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in label)


def _columns(text):
    """Terminal columns of ``text``: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _right(text, width):
    return " " * (width - _columns(text)) + text


def report_text(report, model_name):
    width = max(12, *(_columns(_shown(c)) for c in report["classes"]))
    unseen = report.get("unseen_classes") or {}
    if report["log_loss"] is None:
        loss = "log-loss: none (the model knows none of the classes of these rows)"
    else:
        loss = f"log-loss: {report['log_loss']:.4f}"
        if unseen:
            loss += f" (over the {report['log_loss_rows']} rows of classes the model knows)"
    lines = [f"model: {model_name}", f"rows: {report['rows']}", f"accuracy: {report['accuracy']:.4f}", loss]
    if unseen:
        listed = ", ".join(f"{_shown(name)} (support {support})" for name, support in unseen.items())
        lines.append(f"classes the model never saw (their rows count as errors): {listed}")
    lines += ["", f"{'class':>{width}}  precision     recall         f1    support"]
    for name, m in [*report["per_class"].items(), *report["averages"].items()]:
        note = "  (never seen by the model)" if name in unseen else ""
        lines.append(f"{_right(_shown(name), width)}  {m['precision']:9.4f}  {m['recall']:9.4f}  {m['f1-score']:9.4f}  "
                     f"{int(m['support']):9d}{note}")
    return "\n".join(lines) + "\n"


def confusion_figure(report, *, normalize=False):
    """A matplotlib figure of the confusion matrix, readable with many classes (the figure grows up
    to 40 inches, tick labels shrink and turn, long labels are cut, counts are written up to 30
    classes, a colour bar gives the scale). ``normalize``: each row divided by its total (recall)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import ConfusionMatrixDisplay

    matrix = np.asarray(report["confusion_matrix"], dtype=np.float64)
    if normalize:
        matrix = _ratio(matrix, matrix.sum(axis=1, keepdims=True))
    k = matrix.shape[0]
    side = float(np.clip(3 + 0.3 * k, 6, 40))
    font = float(np.clip(300 / max(k, 1), 4, 10))
    fig, ax = plt.subplots(figsize=(side + 1.5, side), layout="constrained")
    labels = [c if len(c) <= 24 else c[:23] + "…" for c in report["classes"]]
    display = ConfusionMatrixDisplay(matrix if normalize else matrix.astype(np.int64), display_labels=labels)
    display.plot(
        ax=ax, colorbar=True, include_values=k <= 30, values_format=".2f" if normalize else "d",
        text_kw={"fontsize": font},
        xticks_rotation="vertical" if k > 8 or max(map(len, labels)) > 6 else "horizontal",
    )
    ax.tick_params(labelsize=font)
    what = "share of each true class" if normalize else "rows"
    ax.set_title(f"accuracy {report['accuracy']:.4f} on {report['rows']} rows ({what})", fontsize=max(font, 8))
    return fig


def write_png(fig, f):
    import matplotlib.pyplot as plt

    try:
        fig.savefig(f, format="png", dpi=100)
    finally:
        plt.close(fig)
