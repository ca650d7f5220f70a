"""``nbgpu compare``: the five models against scikit-learn on bundled datasets.

Each dataset is split 75/25 (stratified, fixed seed); CategoricalNB gets a
copy discretised into quantile bins (fitted on the training part). nbgpu runs
on the device given (data moved there before the clocks start, the device
synchronised before they stop); scikit-learn runs on numpy. Times are the
best of ``repeats`` runs.
"""

from __future__ import annotations

import warnings

import numpy as np

import nbgpu

from .._array.devices import host_to_like, timed_runs
from .._array.namespace import to_numpy

DATASETS = ("iris", "wine", "breast_cancer", "digits")
MODELS = ("GaussianNB", "MultinomialNB", "ComplementNB", "BernoulliNB", "CategoricalNB")
N_BINS = 5


def _run(make, Xtr, ytr, Xte, yte, repeats, like):
    """Accuracy and best fit/predict seconds of ``make()``, and its predictions (on the host)."""
    fit_times, model = timed_runs(lambda: make().fit(Xtr, ytr), repeats, like)
    predict_times, pred = timed_runs(lambda: model.predict(Xte), repeats, like)
    pred = np.asarray(to_numpy(pred))
    scores = {"accuracy": float(np.mean(pred == yte)), "fit_s": min(fit_times), "predict_s": min(predict_times)}
    return scores, pred


def compare(*, like=None, repeats=5):
    """Accuracy and fit/predict seconds (the best of ``repeats``) of nbgpu and scikit-learn, per dataset
    and model; nbgpu runs on the device of ``like`` (an array there, e.g. ``cupy.empty(0)``; None: numpy).

    One row (a dict) per dataset and model: ``dataset``, ``model``, ``n_train``, ``n_test``,
    ``n_features``, ``accuracy`` / ``fit_s`` / ``predict_s`` for ``nbgpu`` and ``sklearn``, and
    ``agreement`` (share of equal predictions).
    """
    import sklearn.naive_bayes as sk
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import KBinsDiscretizer

    rows = []
    for name in DATASETS:
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
        bins = KBinsDiscretizer(n_bins=N_BINS, encode="ordinal", strategy="quantile",
                                quantile_method="averaged_inverted_cdf")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant pixels of digits get one bin: expected
            Ctr, Cte = bins.fit_transform(Xtr), bins.transform(Xte)
        for model in MODELS:
            categorical = model == "CategoricalNB"
            train, test = (Ctr, Cte) if categorical else (Xtr, Xte)
            kwargs = {"min_categories": N_BINS} if categorical else {}
            dtr, dte, dy = host_to_like(train, like), host_to_like(test, like), host_to_like(ytr, like)
            ours, o_pred = _run(lambda: getattr(nbgpu, model)(**kwargs), dtr, dy, dte, yte, repeats, like)
            ref, r_pred = _run(lambda: getattr(sk, model)(**kwargs), train, ytr, test, yte, repeats, None)
            rows.append({
                "dataset": name, "model": model,
                "n_train": int(train.shape[0]), "n_test": int(test.shape[0]), "n_features": int(train.shape[1]),
                "nbgpu": ours, "sklearn": ref, "agreement": float(np.mean(o_pred == r_pred)),
            })
    return rows


def format_table(rows):
    """The rows of :func:`compare` as a fixed-width text table (times in ms)."""
    head = ("dataset", "model", "acc nbgpu", "acc sklearn", "agree", "fit nbgpu", "fit sklearn",
            "pred nbgpu", "pred sklearn")
    lines = [head]
    for r in rows:
        o, s = r["nbgpu"], r["sklearn"]
        lines.append((
            r["dataset"], r["model"], f"{o['accuracy']:.4f}", f"{s['accuracy']:.4f}", f"{r['agreement']:.0%}",
            f"{o['fit_s'] * 1e3:.2f}", f"{s['fit_s'] * 1e3:.2f}",
            f"{o['predict_s'] * 1e3:.2f}", f"{s['predict_s'] * 1e3:.2f}",
        ))
    widths = [max(map(len, column)) for column in zip(*lines)]
    out = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
           for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))  # under the head
    return "\n".join(out)
