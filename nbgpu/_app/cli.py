"""The ``nbgpu`` command: train, predict, evaluate, info, compare and bench.

Every subcommand reads its data in chunks (see ``readers.py``), runs on the device
named by ``--device`` and reports a bad input as one line on stderr with a
non-zero exit status. Files it writes appear whole or not at all.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .._array.devices import device_name, gpu_array_like, host_to_like
from .._array.namespace import to_numpy
from .._interop.atomic_files import atomic_output
from .._interop.progress import progress
from .readers import CHUNK_BYTES, FORMATS, TEXT_DEFAULTS, align_labels, open_reader, typed_labels

MODELS = {
    "gaussian": "GaussianNB",
    "multinomial": "MultinomialNB",
    "complement": "ComplementNB",
    "bernoulli": "BernoulliNB",
    "categorical": "CategoricalNB",
    "poisson": "PoissonNB",
    "normal": "NormalBayesClassifier",
}


class UsageError(ValueError):
    """A bad combination of command-line options."""


# --------------------------------------------------------------------------- #
# Option types
# --------------------------------------------------------------------------- #
def _floats(text):
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _float_or_none(text):
    if text.lower() == "none":
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'none', got {text!r}") from None


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _ngram_range(text):
    try:
        low, high = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN,MAX (e.g. 1,2), got {text!r}") from None
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError(f"expected 1 <= MIN <= MAX, got {text!r}")
    return [low, high]


# Estimator parameters as flags: name -> (argparse keywords).
_PARAMS = {
    "alpha": dict(type=float, help="additive smoothing (discrete models)"),
    "force_alpha": dict(action=argparse.BooleanOptionalAction, help="keep alpha even if tiny"),
    "fit_prior": dict(action=argparse.BooleanOptionalAction, help="learn class priors (else uniform)"),
    "class_prior": dict(type=_floats, metavar="P1,P2,...", help="fixed class priors (discrete models)"),
    "binarize": dict(type=_float_or_none, metavar="T|none", help="threshold for BernoulliNB"),
    "norm": dict(action=argparse.BooleanOptionalAction, help="second normalisation (ComplementNB)"),
    "min_categories": dict(type=_positive_int, help="minimum categories per feature (CategoricalNB)"),
    "priors": dict(type=_floats, metavar="P1,P2,...", help="fixed class priors (GaussianNB)"),
    "var_smoothing": dict(type=float, help="variance smoothing (GaussianNB)"),
    "reg_covar": dict(type=float, help="added to the covariance diagonals (NormalBayesClassifier)"),
    "prior_smoothing": dict(type=float, metavar="LAMBDA", help="class prior (N_c + LAMBDA) / (N + K LAMBDA)"),
}


def _estimator(args):
    """The estimator named by --model with the parameters given as flags."""
    import nbgpu

    cls = getattr(nbgpu, MODELS[args.model])
    accepted = cls().get_params()
    params = {}
    for name in _PARAMS:
        if not hasattr(args, name):  # flags default to argparse.SUPPRESS: only given ones are set
            continue
        value = getattr(args, name)
        if name not in accepted:
            flag = "--" + name.replace("_", "-")
            usable = ", ".join("--" + p.replace("_", "-") for p in accepted)
            raise UsageError(f"{flag} does not apply to {cls.__name__} (its parameters: {usable})")
        params[name] = value
    model = cls(**params)
    model._validate_params()
    return model


# --------------------------------------------------------------------------- #
# Shared pieces of the subcommands
# --------------------------------------------------------------------------- #
def _device(kind):
    """An empty array of the device to run on (None: numpy on the CPU)."""
    if kind == "cpu":
        return None
    like = gpu_array_like()
    if like is None and kind == "gpu":
        raise UsageError("--device gpu: no usable GPU (cupy is not installed or finds no CUDA device)")
    return like


def _say(args, text):
    if not args.quiet:
        print(text, file=sys.stderr)


def _reader_options(args, stored=None):
    stored = stored or {}
    options = {"chunk_bytes": int(args.chunk_mb * 2**20), "dtype": np.dtype(args.dtype).type}
    zero_based = getattr(args, "zero_based", "auto")
    options["zero_based"] = {"yes": True, "no": False}.get(zero_based, stored.get("zero_based"))
    options["label_column"] = getattr(args, "label_column", None) or stored.get("label_column")
    return options


def _load_model(args):
    from .._interop.model_files import read_model_file

    loaded = read_model_file(args.model_file)
    like = _device(args.device)
    if like is not None:
        loaded.model.to_device(like)
    return loaded, like


def _scored_batches(args, loaded, like, *, labels):
    """(y, probabilities on the host, the model's decisions as class indices)
    for every chunk of args.data.

    The decisions are the model's own (``predict``'s rule: least risk under
    its ``loss_matrix``), made from the same probabilities.
    """
    model = loaded.model
    classes = np.asarray(to_numpy(model.classes_))
    stored = loaded.header.get("metadata", {}).get("reader", {})
    reader = open_reader(args.data, args.format, vectorizer=loaded.vectorizer, **_reader_options(args, stored))
    bar = progress(f"scoring {Path(args.data).name}", quiet=args.quiet)
    rows = 0
    for X, y in reader.batches(n_features=model.n_features_in_, labels=labels):
        proba = model.predict_proba(host_to_like(X, like))
        decided = np.searchsorted(classes, np.asarray(to_numpy(model._decide(proba))))
        rows += X.shape[0]
        bar.update(X.shape[0])
        yield y, np.asarray(to_numpy(proba), dtype=np.float64), decided
    bar.close()
    if rows == 0:
        raise ValueError(f"{args.data} holds no data rows")


# --------------------------------------------------------------------------- #
# train
# --------------------------------------------------------------------------- #
def _vectorizer(args, fmt):
    if fmt != "jsonl":
        return None
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        **{**TEXT_DEFAULTS, "n_features": args.hash_features},
        ngram_range=tuple(args.ngram_range), lowercase=not args.no_lowercase,
        stop_words=args.stop_words, binary=args.binary_counts,
    )


def cmd_train(args):
    from .._interop.model_files import save
    from .readers import detect_format

    model = _estimator(args)
    like = _device(args.device)
    fmt = detect_format(args.data, args.format)
    vectorizer = _vectorizer(args, fmt)
    reader = open_reader(args.data, fmt, vectorizer=vectorizer, **_reader_options(args))
    start = time.perf_counter()
    if args.classes is not None and (args.n_features is not None or vectorizer is not None):
        classes = np.unique(typed_labels(args.classes.split(",")))
        n_features, total = args.n_features or vectorizer.n_features, None
    else:
        scan = reader.scan(quiet=args.quiet)
        classes = np.unique(typed_labels(args.classes.split(","))) if args.classes else scan.classes
        n_features, total = args.n_features or scan.n_features, scan.n_rows
    bar = progress(f"training on {Path(args.data).name}", total=total, quiet=args.quiet)
    rows = 0
    for X, y in reader.batches(n_features=n_features, labels=True):
        y = align_labels(y, classes, where=args.data)
        model.partial_fit(host_to_like(X, like), y, classes=classes)
        rows += X.shape[0]
        bar.update(X.shape[0])
    bar.close()
    seconds = time.perf_counter() - start
    metadata = {"reader": reader.settings, "trained_on": {"file": Path(args.data).name, "rows": rows}}
    save(model, args.output, vectorizer=vectorizer, metadata=metadata)
    _say(args, f"trained {type(model).__name__} on {rows} rows, {len(classes)} classes, "
               f"{n_features} features in {seconds:.2f} s ({rows / max(seconds, 1e-9):,.0f} rows/s) -> {args.output}")
    return 0


# --------------------------------------------------------------------------- #
# predict
# --------------------------------------------------------------------------- #
def _label_text(labels):
    return [str(v) for v in np.asarray(labels).tolist()]


def _csv_row(fields):
    """One CSV line; labels holding commas or quotes are quoted."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def cmd_predict(args):
    loaded, like = _load_model(args)
    classes = np.asarray(to_numpy(loaded.model.classes_))
    target = atomic_output(args.output, "w") if args.output else contextlib.nullcontext(sys.stdout)
    with target as out:
        if args.proba:
            out.write(_csv_row(["prediction", *(f"proba_{c}" for c in _label_text(classes))]))
        for _, proba, decided in _scored_batches(args, loaded, like, labels=False):
            predicted = _label_text(classes[decided])
            if args.proba:
                buf = io.StringIO()
                np.savetxt(buf, proba, fmt="%.6g", delimiter=",")
                out.writelines(f"{_csv_row([p])[:-1]},{row}\n" for p, row in zip(predicted, buf.getvalue().splitlines()))
            else:
                out.write("\n".join(predicted) + "\n")
    return 0


# --------------------------------------------------------------------------- #
# evaluate
# --------------------------------------------------------------------------- #
def evaluation_report(true_codes, pred_codes, log_loss_sum, classes):
    """Accuracy, log-loss, per-class precision/recall/F1 and the confusion matrix."""
    from sklearn.metrics import accuracy_score, classification_report, confusion_matrix

    k = len(classes)
    names = _label_text(classes)
    report = classification_report(
        true_codes, pred_codes, labels=np.arange(k), target_names=names, output_dict=True, zero_division=0
    )
    per_class = {name: report.pop(name) for name in names}
    report.pop("accuracy", None)
    return {
        "rows": int(true_codes.shape[0]),
        "accuracy": float(accuracy_score(true_codes, pred_codes)),
        "log_loss": log_loss_sum / true_codes.shape[0],
        "classes": names,
        "per_class": per_class,
        "averages": report,
        "confusion_matrix": confusion_matrix(true_codes, pred_codes, labels=np.arange(k)).tolist(),
    }


def _report_text(report, model_name):
    width = max(12, *(len(c) for c in report["classes"]))
    lines = [
        f"model: {model_name}",
        f"rows: {report['rows']}",
        f"accuracy: {report['accuracy']:.4f}",
        f"log-loss: {report['log_loss']:.4f}",
        "",
        f"{'class':>{width}}  precision     recall         f1    support",
    ]
    rows = list(report["per_class"].items()) + list(report["averages"].items())
    for name, m in rows:
        lines.append(
            f"{name:>{width}}  {m['precision']:9.4f}  {m['recall']:9.4f}  {m['f1-score']:9.4f}  {int(m['support']):9d}"
        )
    return "\n".join(lines) + "\n"


def _confusion_png(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import ConfusionMatrixDisplay

    k = len(report["classes"])
    size = min(4 + 0.4 * k, 30)
    fig, ax = plt.subplots(figsize=(size, size))
    ConfusionMatrixDisplay(np.asarray(report["confusion_matrix"]), display_labels=report["classes"]).plot(
        ax=ax, colorbar=False, include_values=k <= 30
    )
    ax.set_title(f"accuracy {report['accuracy']:.4f} on {report['rows']} rows")
    fig.tight_layout()
    with atomic_output(path, "wb") as f:
        fig.savefig(f, format="png", dpi=100)
    plt.close(fig)


def cmd_evaluate(args):
    from sklearn.metrics import log_loss

    if args.confusion_png:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--confusion-png needs matplotlib: pip install 'nbgpu[cli]'") from None
    loaded, like = _load_model(args)
    classes = np.asarray(to_numpy(loaded.model.classes_))
    k = classes.shape[0]
    true, pred, loss = [], [], 0.0
    for y, proba, decided in _scored_batches(args, loaded, like, labels=True):
        y = align_labels(y, classes, where=args.data)
        codes = np.searchsorted(classes, y)
        true.append(codes)
        pred.append(decided)
        if k > 1:
            # Rows of float32 probabilities sum to 1 only to float32 precision.
            proba = proba / np.sum(proba, axis=1, keepdims=True)
            loss += float(log_loss(codes, proba, labels=np.arange(k), normalize=False))
    report = evaluation_report(np.concatenate(true), np.concatenate(pred), loss, classes)
    if args.confusion_png:
        _confusion_png(report, args.confusion_png)
    text = json.dumps(report, indent=2) + "\n" if args.json else _report_text(report, type(loaded.model).__name__)
    if args.output:
        with atomic_output(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


# --------------------------------------------------------------------------- #
# info
# --------------------------------------------------------------------------- #
def environment():
    """Versions of nbgpu and its libraries, and the devices present."""
    import importlib.metadata as md
    import platform

    import nbgpu

    out = {"nbgpu": nbgpu.__version__, "python": platform.python_version()}
    for dist in ("numpy", "scipy", "scikit-learn", "array-api-compat", "cupy-cuda12x", "cupy-cuda13x",
                 "torch", "dask", "tqdm", "matplotlib"):
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    like = gpu_array_like()
    out["gpu"] = device_description(like) if like is not None else None
    return out


def device_description(like):
    """A readable name of the device of ``like`` (None: this CPU)."""
    return f"CPU ({os.cpu_count()} cores)" if like is None else f"GPU {device_name(like)}"


def cmd_info(args):
    if args.model_file is None:
        info = environment()
    else:
        from .._interop.model_files import read_model_info

        # The header and the labels only: the statistics are never read.
        described = read_model_info(args.model_file)
        header = described.header
        classes = _label_text(described.classes)
        info = {
            "file": str(args.model_file),
            "estimator": header["estimator"],
            "parameters": {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                           for k, v in described.estimator.get_params(deep=False).items()},
            "n_classes": len(classes),
            "classes": classes,
            "n_features": described.n_features,
            "statistics_bytes": described.statistics_bytes,
            "dtype": header["dtype"],
            "format_version": header["format_version"],
            "written_by_nbgpu": header["nbgpu_version"],
            "vectorizer": header.get("vectorizer"),
            **header.get("metadata", {}),
        }
    if args.json:
        # A ColumnwiseNB's parts (estimators, column slices) as their repr.
        print(json.dumps(info, indent=2, default=repr))
    else:
        for key, value in info.items():
            if key == "classes" and len(value) > 20:
                value = value[:20] + ["..."]
            print(f"{key}: {value}")
    return 0


# --------------------------------------------------------------------------- #
# compare, bench
# --------------------------------------------------------------------------- #
def cmd_compare(args):
    from .compare import compare, format_table

    like = _device(args.device)
    rows = compare(like=like, repeats=args.repeats)
    if args.json:
        print(json.dumps({"device": device_description(like), "results": rows}, indent=2))
    else:
        print(f"device: {device_description(like)}; times are the best of {args.repeats} runs, in ms")
        print(format_table(rows))
    return 0


def cmd_bench(args):
    from . import bench  # the speed benchmark lives in its own module

    parser = argparse.ArgumentParser(prog="nbgpu bench", description="Time nbgpu against scikit-learn.")
    bench.configure_parser(parser)
    return bench.run(parser.parse_args(args.bench_args))


# --------------------------------------------------------------------------- #
# The parser
# --------------------------------------------------------------------------- #
def build_parser():
    """The argparse parser of the ``nbgpu`` command."""
    import nbgpu

    parser = argparse.ArgumentParser(
        prog="nbgpu",
        description="Naive Bayes on CPU and GPU: train, predict and evaluate from files.",
        epilog="Run 'nbgpu COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"nbgpu {nbgpu.__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                        help="where to compute: auto = the GPU if cupy finds one, else the CPU")
    common.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summaries")
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument("--format", choices=("auto", *FORMATS), default="auto",
                      help="input format (default: from the extension: .svm/.svmlight/.libsvm, .npz, .csv, .jsonl)")
    data.add_argument("--chunk-mb", type=_positive_float, default=CHUNK_BYTES / 2**20,
                      help="MiB of file read per chunk (bounds memory; default %(default)g)")
    data.add_argument("--dtype", choices=("float32", "float64"), default="float64",
                      help="float type of the features (default %(default)s)")
    data.add_argument("--label-column", help="CSV: name or index of the label column (default: 'label', else the last)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("train", parents=[common, data], help="fit a model on a data file and save it",
                       description="Fit a model on a data file, streaming it in chunks, and save it.")
    p.add_argument("data", help="training data file")
    p.add_argument("-o", "--output", required=True, help="model file to write")
    p.add_argument("--model", choices=tuple(MODELS), default="multinomial", help="naive Bayes model (default %(default)s)")
    for name, kwargs in _PARAMS.items():
        p.add_argument("--" + name.replace("_", "-"), dest=name, default=argparse.SUPPRESS, **kwargs)
    p.add_argument("--classes", help="comma-separated class labels (skips the labels pass with --n-features)")
    p.add_argument("--n-features", type=_positive_int, help="number of features (svmlight: skips the scan)")
    p.add_argument("--zero-based", choices=("auto", "yes", "no"), default="auto",
                   help="svmlight: whether feature indices start at 0 (auto: scikit-learn's rule over the whole file)")
    text = p.add_argument_group("text (JSON lines)")
    text.add_argument("--hash-features", type=_positive_int, default=TEXT_DEFAULTS["n_features"],
                      help="HashingVectorizer n_features (default %(default)s)")
    text.add_argument("--ngram-range", type=_ngram_range, default=[1, 1], metavar="MIN,MAX", help="word n-grams (default 1,1)")
    text.add_argument("--no-lowercase", action="store_true", help="keep case")
    text.add_argument("--stop-words", choices=("english",), help="drop English stop words")
    text.add_argument("--binary-counts", action="store_true", help="count presence (0/1) instead of occurrences")
    p.set_defaults(func=cmd_train)

    for name, func, what in (("predict", cmd_predict, "predict the labels of a data file"),
                             ("evaluate", cmd_evaluate, "score a model on a labelled data file")):
        p = sub.add_parser(name, parents=[common, data], help=what, description=what[0].upper() + what[1:] + ".")
        p.add_argument("model_file", metavar="MODEL", help="model file written by 'nbgpu train' or nbgpu.save")
        p.add_argument("data", help="data file")
        p.add_argument("-o", "--output", help="write here (atomically) instead of stdout")
        p.set_defaults(func=func)
        if name == "predict":
            p.add_argument("--proba", action="store_true", help="CSV of the prediction and every class probability")
        else:
            p.add_argument("--json", action="store_true", help="machine-readable JSON report")
            p.add_argument("--confusion-png", metavar="PNG", help="also draw the confusion matrix (matplotlib)")

    p = sub.add_parser("info", help="library versions and devices, or what a model file holds",
                       description="Without MODEL: versions and devices. With MODEL: what the file holds.")
    p.add_argument("model_file", metavar="MODEL", nargs="?", help="a model file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("compare", parents=[common], help="all five models against scikit-learn on bundled datasets",
                       description="Fit the five models on iris, wine, breast_cancer and digits on the best device "
                                   "present and print accuracy and fit/predict time next to scikit-learn's.")
    p.add_argument("--repeats", type=_positive_int, default=5, help="timing repeats; the best is shown (default %(default)s)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("bench", add_help=False, help="speed benchmark against scikit-learn ('nbgpu bench --help')")
    p.set_defaults(func=cmd_bench)
    return parser


def main(argv=None):
    """Run the ``nbgpu`` command; return its exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "bench":
        args.bench_args = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("nbgpu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # one line, no traceback (NBGPU_DEBUG=1 shows it)
        if os.environ.get("NBGPU_DEBUG"):
            raise
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"nbgpu {args.command}: error: {text}", file=sys.stderr)
        return 1
