"""The ``nbgpu`` command: train, predict, evaluate, info, compare and bench.

Every subcommand reads its data in one pass, in chunks parsed in a background thread while the
previous chunk is fitted or scored (``readers.py``, ``training.py``), runs on the device named by
``--device`` and reports a bad input as one line on stderr: exit status 2 when the command was called
wrong (options), 1 when a file is wrong. Outputs are checked before any work, never overwrite an
input, and appear whole or not at all. Ctrl-C and SIGTERM end the command with one line (status 130,
143) and no partial file.

This module imports numpy and the standard library only; everything else (scikit-learn, scipy, the
models, cupy) loads when a command needs it, so ``nbgpu --help`` and ``nbgpu info`` start fast.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import io
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from .._interop.atomic_files import STDOUT, atomic_output, check_output
from .._interop.progress import progress
from .._version import __version__
from .evaluation import (
    confusion_figure,
    evaluation_report,
    label_text,
    log_loss_sum,
    report_text,
    write_png,
)
from .options import (
    USAGE_STATUS,
    OneLineParser,
    UsageError,
    add_parameter_flags,
    checked_model,
    chunk_bytes,
    feature_count,
    given_flags,
    ngram_range,
    positive_int,
)
from .readers import (
    CHUNK_BYTES,
    FORMATS,
    TEXT_DEFAULTS,
    TEXT_TRAIN_CHUNK_BYTES,
    detect_format,
    is_regular_file,
    known_labels,
    named_format,
    open_reader,
    parsed_chunks,
    shown,
    text_labels,
    typed_labels,
)
from .signals import Terminated, report_signal, signal_behind, terminate_like_interrupt
from .training import train

MODELS = {
    "gaussian": "GaussianNB",
    "multinomial": "MultinomialNB",
    "complement": "ComplementNB",
    "bernoulli": "BernoulliNB",
    "categorical": "CategoricalNB",
    "poisson": "PoissonNB",
    "normal": "NormalBayesClassifier",
}


def _device(kind):
    """An empty array of the device to run on (None: numpy on the CPU)."""
    if kind == "cpu":
        return None
    from .._array.devices import gpu_array_like

    like = gpu_array_like()
    if like is None and kind == "gpu":
        raise ValueError("--device gpu: no usable GPU (cupy is not installed or finds no CUDA device)")
    return like


def _say(args, text):
    if not args.quiet:
        print(text, file=sys.stderr)


def _bar(args, doing):
    """A progress bar of the bytes of args.data read (``doing``: what the command does with them)."""
    return progress(f"{doing} {Path(shown(args.data)).name}", total=_size(args.data), quiet=args.quiet, unit="B")


def _check_output(output, *inputs):
    """:func:`check_output` of -o; also a ValueError now if ``output`` is standard output
    and the process has none (started with ``>&-``: see ``nbgpu.__main__``)."""
    check_output(output, inputs=inputs, what="-o")
    if str(output) in (STDOUT, "/dev/stdout") and (sys.stdout is None or not sys.stdout.writable()):
        msg = (f"the output is standard output (-o {output}), which is closed "
               "(the command was started with >&-); name a file with -o FILE")
        raise ValueError(msg)


# The longest column name or JSON key a model file may name (its header is data from elsewhere).
_MAX_NAME = 1000


def _reader_options(args, header=None):
    """The reader options given, else (predict, evaluate) those the model file's ``header`` stores, checked:
    a model file is data from elsewhere, and its header is free-form JSON."""
    stored, where = {}, getattr(args, "model_file", None)
    if header is not None:
        metadata = header.get("metadata", {})
        stored = metadata.get("reader", {}) if isinstance(metadata, dict) else None
        if not isinstance(stored, dict):
            raise ValueError(f"{where}: inconsistent model file (its metadata is not a JSON object of reader settings)")
    zero_based = stored.get("zero_based")
    if zero_based is not None and not isinstance(zero_based, bool):
        raise ValueError(f"{where}: inconsistent model file (reader setting zero_based={zero_based!r})")
    for name in ("label_column", "text_column", "text_key", "label_key"):
        value = stored.get(name)
        if value is not None and not (isinstance(value, str) and len(value) <= _MAX_NAME):
            raise ValueError(f"{where}: inconsistent model file (reader setting {name}={value!r:.80})")
    chunk = args.chunk_mb if args.chunk_mb is not None else CHUNK_BYTES
    options = {"chunk_bytes": chunk, "dtype": np.dtype(args.dtype).type, "zero_based": zero_based,
               "label_column": args.label_column if args.label_column is not None else stored.get("label_column")}
    if getattr(args, "zero_based", "auto") != "auto":
        options["zero_based"] = args.zero_based == "yes"
    # Text: the keys and the column given again, else those the model was trained with.
    for name in ("text_key", "label_key", "text_column"):
        given = getattr(args, name)
        options[name] = given if given is not None else stored.get(name)
    return options


def _check_format_options(args, fmt=None):
    """Options that do not apply to the format of args.data (``fmt``, else detected) are a UsageError
    (--label-column on JSON lines would otherwise be silently ignored); none if it cannot be told (opening
    the data says what is wrong)."""
    if fmt is None:
        try:
            fmt = detect_format(args.data, args.format)
        except ValueError:
            return
    prog, data = f"nbgpu {args.command}", shown(args.data)
    if fmt == "jsonl" and args.label_column is not None:
        raise UsageError(f"--label-column is for CSV; {data} is JSON lines: --label-key names the key "
                         "of the label (default 'label')", prog)
    if fmt in ("svmlight", "npz") and args.label_column is not None:
        where = "the first field of each line" if fmt == "svmlight" else "the array `y`"
        raise UsageError(f"--label-column is for CSV; {data} is {fmt}, whose labels are {where}", prog)
    for name in ("text_key", "label_key"):
        if fmt != "jsonl" and getattr(args, name) is not None:
            hint = "; --text-column names the text column of a CSV file" if fmt == "csv" else ""
            raise UsageError(f"--{name.replace('_', '-')} is for JSON lines; {data} is {fmt}{hint}", prog)
    if fmt != "csv" and args.text_column is not None:
        hint = "; --text-key names the key of the text" if fmt == "jsonl" else ""
        raise UsageError(f"--text-column is for CSV; {data} is {fmt}{hint}", prog)


def _scored_format(args, header):
    """The format predict and evaluate read args.data with: --format, else the data's extension, else the
    reader the model file stores (its header's metadata), else the data's first bytes."""
    fmt = named_format(args.data, args.format)
    if fmt is None:
        metadata = header.get("metadata") if isinstance(header, dict) else None
        stored = metadata.get("reader") if isinstance(metadata, dict) else None
        fmt = stored.get("format") if isinstance(stored, dict) else None
        if fmt not in FORMATS:
            fmt = detect_format(args.data)
        _check_format_options(args, fmt)
    return fmt


def _early_reader(args, labels, finish_for):
    """``(header, n_features, vectorizer, chunks)``: the model file's header read alone (no models, no
    statistics) and the data's chunks started on it, parsed while the model loads; None where anything
    fails (a file that is not a model file, data that cannot be opened): loading the model first then
    says what is wrong, in the order it always has."""
    from .._interop.model_archive import Archive
    from .._interop.model_header import header_of
    from .._interop.vectorizer_settings import check_settings, check_weighting

    try:
        with Archive(args.model_file) as archive:
            header = header_of(archive, str(args.model_file)).header
        n_features = header["n_features_in"]
        settings = header.get("vectorizer")
        vectorizer = None if settings is None else check_settings(settings, n_features)
        metadata = header.get("metadata")
        tf = check_weighting(metadata.get("features") if isinstance(metadata, dict) else None, args.model_file)
        reader, zero_based = _scoring_reader(args, header, n_features, vectorizer)
    except (ValueError, TypeError, KeyError):
        return None
    return header, n_features, vectorizer, parsed_chunks(reader, labels=labels, finish=finish_for(reader, zero_based, n_features, tf))


def _scoring_reader(args, header, n_features, vectorizer):
    """The reader of args.data for a model of ``n_features`` trained with the file ``header`` says, and
    the indexing base it reads svmlight with."""
    options = _reader_options(args, header)
    reader = open_reader(args.data, _scored_format(args, header), vectorizer=vectorizer, n_features=n_features,
                         **options)
    return reader, True if options["zero_based"] is None else options["zero_based"]


def _model_and_chunks(args, output, *, labels):
    """Check ``output``, load the model onto the device; the model, its classes and a generator (not started)
    of (chunk, host probabilities, class indices decided by ``predict``'s rule) over the chunks of args.data.
    The data are read and parsed (text hashed) while the model loads."""
    from .._array.devices import host_to_like
    from .._array.namespace import to_numpy
    from .._estimator.scoring import decide
    from .._interop.vectorizer_settings import weighted

    _check_output(output, args.model_file, args.data)
    like = _device(args.device)  # before the reader's thread starts (see cmd_train)

    def finish_for(reader, zero_based, n_features, tf):
        def finish(chunk):  # laid out as the model's columns, weighted as at training (--model auto's choice)
            return chunk._replace(X=weighted(reader.layout(chunk, zero_based=zero_based, n_features=n_features), tf))

        return finish

    early = _early_reader(args, labels, finish_for)
    try:
        loaded = _loaded_model(args)
    except BaseException:
        if early is not None:
            early[3].close()
        raise
    model = loaded.model
    if like is not None:
        model.to_device(like)
    own = np.asarray(to_numpy(model.classes_))
    # Classes fitted as bytes (in Python) are text: printed as such, and matched with a file's labels.
    classes = text_labels(own)
    n_features = int(model.n_features_in_)
    if early is not None and (early[0] != loaded.header or early[1] != n_features or early[2] != loaded.vectorizer):
        early[3].close()  # the data were read as the header said before the whole file was read
        raise ValueError(f"{args.model_file} changed while it was read")

    def scored():
        if early is None:
            from .._interop.vectorizer_settings import check_weighting

            metadata = loaded.header.get("metadata")
            tf = check_weighting(metadata.get("features") if isinstance(metadata, dict) else None, args.model_file)
            # loaded.vectorizer: the HashingVectorizer's parameters (read with core=True), or None
            reader, zero_based = _scoring_reader(args, loaded.header, n_features, loaded.vectorizer)
            chunks = parsed_chunks(reader, labels=labels, finish=finish_for(reader, zero_based, n_features, tf))
        else:
            chunks = early[3]
        bar = _bar(args, "scoring")
        rows = 0
        with chunks:
            for chunk in chunks:
                bar.update(chunk.nbytes)
                if chunk.X is None:
                    continue
                proba = model.predict_proba(host_to_like(chunk.X, like))
                decided = np.searchsorted(own, np.asarray(to_numpy(decide(model, proba))))
                rows += chunk.X.shape[0]
                yield chunk, np.asarray(to_numpy(proba), dtype=np.float64), decided
        bar.close()
        if rows == 0:
            raise ValueError(f"{shown(args.data)} holds no data rows")

    return model, classes, scored()


def _loaded_model(args):
    """The model file of args, read without scikit-learn; a one-line ValueError if it cannot be."""
    from .._interop.model_files import read_model_file

    try:
        return read_model_file(args.model_file, core=True, max_memory=args.max_memory)  # no scikit-learn to load
    except ValueError as exc:
        # numpy's advice to pass allow_pickle=True must never reach a user holding a file of unknown origin.
        if "pickle" in str(exc).lower():
            raise ValueError(f"{args.model_file} is not an nbgpu model file") from None
        raise exc from None


def _size(path):
    return os.path.getsize(path) if is_regular_file(path) else None


def _classes(args):
    if args.classes is None:
        return None
    values = [v.strip() for v in args.classes.split(",")]
    if not all(values):
        raise UsageError(f"--classes: expected comma-separated labels, got {args.classes!r}", "nbgpu train")
    return np.unique(typed_labels(values))


def cmd_train(args):
    classes = _classes(args)
    _check_format_options(args)
    fmt = detect_format(args.data, args.format)
    _check_output(args.output, args.data)
    vectorizer = None  # the HashingVectorizer's parameters: JSON lines, or CSV with --text-column
    if fmt == "jsonl" or (fmt == "csv" and args.text_column is not None):
        vectorizer = {**TEXT_DEFAULTS, "n_features": args.hash_features,
                      "ngram_range": tuple(args.ngram_range or (1, 1)), "lowercase": not args.no_lowercase,
                      "stop_words": args.stop_words, "binary": args.binary_counts, "analyzer": args.analyzer}
    from .._array.devices import host_to_like
    from .._interop.model_files import save
    from .feature_choice import text_transform
    from .model_choice import NotCounts, search_setup

    if args.model is None:  # auto, unless --alpha is given (then multinomial, as before auto was the default)
        args.model = "multinomial" if hasattr(args, "alpha") else "auto"
    # --model auto on word text chooses the n-grams, unless they are given: both are hashed, side by side.
    ngram_fixed = args.ngram_range is not None or args.analyzer != "word" or args.binary_counts
    choose_ngrams = args.model == "auto" and vectorizer is not None and not ngram_fixed
    if args.model == "auto":
        model, state = search_setup(given_flags(args), text=vectorizer is not None, ngram_fixed=ngram_fixed)
    else:
        model, state = checked_model(MODELS[args.model], given_flags(args)), None

    options = _reader_options(args)
    if args.chunk_mb is None and vectorizer is not None:
        # Text in smaller chunks: a chunk is hashed and fitted while the next one's JSON is parsed (one core).
        options["chunk_bytes"] = TEXT_TRAIN_CHUNK_BYTES

    def open_data():
        reader = open_reader(args.data, fmt, vectorizer=vectorizer, n_features=None, **options)
        if choose_ngrams:
            reader._transform = text_transform(vectorizer)
        return reader

    reader = open_data()
    # After the usage checks, before any thread starts: cupy imported while a
    # parser thread runs can meet importlib's deadlock guard and come back partly initialised.
    like = _device(args.device)
    chunks = parsed_chunks(reader, labels=True, hash_here=True)  # hashed here: the next chunk is parsed meanwhile
    start = time.perf_counter()
    bar = _bar(args, "training on")
    noted = []

    def report(nbytes, rows, note):
        if note:  # a second pass starts
            bar.close()
            _say(args, f"nbgpu train: {note}")
        if nbytes:
            bar.update(nbytes)
            bar.set_postfix_str(f"{rows:,} rows", refresh=False)
        label_note = getattr(reader, "label_note", None)
        if label_note and not noted:
            noted.append(label_note)
            _say(args, f"nbgpu train: {label_note}")

    def again():
        nonlocal bar
        bar = _bar(args, "second pass over")
        return open_data()

    common = dict(classes=classes, n_features=args.n_features, to_device=functools.partial(host_to_like, like=like),
                  progress=report, open_again=again)
    with chunks:  # closed on every way out, the taker's errors too
        try:
            trained = train(model, reader, chunks=chunks, state=state, **common)
        except NotCounts as exc:  # --model auto: GaussianNB, with the flags given
            not_counts = f"{exc}: the data are not counts"
            model = checked_model("GaussianNB", given_flags(args), lambda wrong: (
                f"{not_counts}, so --model auto would train GaussianNB, which does not take {', '.join(wrong)}; "
                "name the model with --model"))
            if exc.chunk is not None:  # nothing was fitted before the chunk that showed it: go on from there
                _say(args, f"nbgpu train: {not_counts}; --model auto trains GaussianNB")
                trained = train(model, reader, chunks=itertools.chain([exc.chunk], chunks), **common)
            elif not is_regular_file(reader.source):
                raise ValueError(f"{not_counts}, and {reader.path} cannot be read again for GaussianNB "
                                 "(not a regular file): give --model gaussian")
            else:
                chunks.close()
                report(None, 0, f"{not_counts}; --model auto trains GaussianNB (a second pass)")
                trained = train(model, again(), **common)
                trained = trained._replace(passes=trained.passes + 1)
    seconds = time.perf_counter() - start
    settings = dict(reader.settings)
    if trained.zero_based is not None:
        settings["zero_based"] = bool(trained.zero_based)
    metadata = {"reader": settings, "trained_on": {"file": Path(shown(args.data)).name, "rows": trained.rows}}
    if trained.search is not None:
        metadata["model_search"] = trained.search.record()
        features = metadata["model_search"]["features"]
        metadata["features"] = {"tf": features["tf"]}  # applied to the vectorizer's output by predict/evaluate
        if choose_ngrams:
            vectorizer = {**vectorizer, "ngram_range": tuple(features["ngram_range"])}
        if trained.search.scored:
            _say(args, f"nbgpu train: {trained.search.table()}")
        _say(args, f"nbgpu train: chose {trained.search.summary()}")
    if len(trained.model.classes_) == 1:  # shown even with --quiet: every prediction will be that class
        print(f"nbgpu train: warning: {shown(args.data)} holds one class only, "
              f"{label_text(np.asarray(trained.model.classes_))[0]!r}: the model predicts it for every row",
              file=sys.stderr)
    bar.set_description(f"saving {args.output}")
    save(trained.model, args.output, vectorizer=vectorizer, metadata=metadata)
    bar.close()
    fitted = trained.model
    passes = {1: "one pass", 2: "two passes"}.get(trained.passes, "three passes")
    _say(args, f"trained {type(fitted).__name__} on {trained.rows} rows, {len(fitted.classes_)} classes, "
               f"{fitted.n_features_in_} features in {seconds:.2f} s "
               f"({trained.rows / max(seconds, 1e-9):,.0f} rows/s, {passes}) -> {args.output}")
    return 0


def _csv_row(fields):
    """One CSV line; labels holding commas or quotes are quoted."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def cmd_predict(args):
    output = args.output or STDOUT
    _check_format_options(args, named_format(args.data, args.format))  # else once the model's reader is known
    _, classes, scored = _model_and_chunks(args, output, labels=False)
    # Each class's CSV field, once: a label holding a comma, quote or line break is
    # quoted, so the output stays one line per row (a one-column CSV without --proba).
    fields = np.array([_csv_row([c])[:-1] for c in label_text(classes)], dtype=object)
    with atomic_output(output, "w") as out, contextlib.closing(scored):  # closed on an error here too
        if args.proba:
            out.write(_csv_row(["prediction", *(f"proba_{c}" for c in label_text(classes))]))
        for _, proba, decided in scored:
            predicted = fields[decided]
            if args.proba:
                buf = io.StringIO()
                np.savetxt(buf, proba, fmt="%.6g", delimiter=",")
                out.writelines(f"{p},{row}\n" for p, row in zip(predicted, buf.getvalue().splitlines()))
            else:
                out.write("\n".join(predicted) + "\n")
    return 0


def _label_order(name):
    """Labels in numeric order when they are numbers, then the others by text."""
    try:
        return (0, float(name), name)
    except ValueError:
        return (1, 0.0, name)


def cmd_evaluate(args):
    output = args.output or STDOUT
    _check_format_options(args, named_format(args.data, args.format))  # else once the model's reader is known
    if args.confusion_png:
        if os.path.abspath(args.confusion_png) == os.path.abspath(output):
            raise UsageError("--confusion-png and -o name the same file", "nbgpu evaluate")
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("--confusion-png needs matplotlib: pip install 'nbgpu[cli]'", "nbgpu evaluate") from None
        check_output(args.confusion_png, inputs=[args.model_file, args.data], what="--confusion-png")
    model, classes, scored = _model_and_chunks(args, output, labels=True)
    k = classes.shape[0]
    confusion, loss = np.zeros((k, k), dtype=np.int64), 0.0
    unseen = {}  # a class the model never saw: how its rows were decided (counts over the k classes)
    with contextlib.closing(scored):  # closed on an error here too
        for chunk, proba, decided in scored:
            y, found = known_labels(chunk.y, classes)
            if not np.all(found):
                names = np.asarray(label_text(typed_labels(np.asarray(chunk.y)[~found])))
                for name in np.unique(names):
                    counts = np.bincount(decided[~found][names == name], minlength=k)
                    unseen[name] = unseen.get(name, 0) + counts
                y, proba, decided = y[found], proba[found], decided[found]
            codes = np.searchsorted(classes, y)
            confusion += np.bincount(codes * k + decided, minlength=k * k).reshape(k, k)  # rows: truth
            if k > 1 and codes.size:
                # Rows of float32 probabilities sum to 1 only to float32 precision.
                proba = proba / np.sum(proba, axis=1, keepdims=True)
                loss += log_loss_sum(codes, proba)
    names = sorted(unseen, key=_label_order)
    if names:
        # The unseen classes are rows (truth) and columns (never decided) of the matrix, after the model's.
        confusion = np.pad(confusion, (0, len(names)))
        confusion[k:, :k] = [unseen[name] for name in names]
    report = evaluation_report(confusion, loss, classes, unseen=names)
    text = json.dumps(report, indent=2) + "\n" if args.json else report_text(report, type(model).__name__)
    # The report and the picture appear together or not at all.
    picture = atomic_output(args.confusion_png, "wb") if args.confusion_png else contextlib.nullcontext()
    with picture as png, atomic_output(output, "w") as out:
        if png is not None:
            write_png(confusion_figure(report, normalize=args.confusion_normalize), png)
        out.write(text)
    if args.confusion_png:
        _say(args, f"nbgpu evaluate: confusion matrix of {len(report['classes'])} classes -> {args.confusion_png}")
    return 0


def environment():
    """Versions of nbgpu and its libraries, and the devices present."""
    import importlib.metadata as md
    import importlib.util
    import platform

    out = {"nbgpu": __version__, "python": platform.python_version()}
    for dist in ("numpy", "scipy", "scikit-learn", "array-api-compat", "cupy-cuda12x", "cupy-cuda13x",
                 "torch", "dask", "tqdm", "matplotlib"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[dist] = md.version(dist)
    # No cupy: no GPU, and no need to load the array layer.
    like = _device("auto") if importlib.util.find_spec("cupy") is not None else None
    out["gpu"] = device_description(like) if like is not None else None
    return out


def device_description(like):
    """A readable name of the device of ``like`` (None: this CPU)."""
    if like is None:
        return f"CPU ({os.cpu_count()} cores)"
    from .._array.devices import device_name

    return f"GPU {device_name(like)}"


def _bytes_text(n, *, binary):
    """``n`` bytes in words: MiB and such (``binary``) or MB and such."""
    base, units = (1024, ("bytes", "KiB", "MiB", "GiB", "TiB")) if binary else (1000, ("bytes", "kB", "MB", "GB", "TB"))
    value, unit = float(n), units[0]
    for unit in units:
        if value < base or unit == units[-1]:
            break
        value /= base
    return f"{int(n)} bytes" if unit == "bytes" else f"{value:.3g} {unit} ({int(n)} bytes)"


def _classes_text(classes, most=20):
    """The labels as Python writes them (integers bare, strings quoted), with their type."""
    values = np.asarray(classes)
    kind = "integers" if values.dtype.kind in "iu" else "strings" if values.dtype.kind in "USO" else str(values.dtype)
    shown = ", ".join(repr(v) for v in values[:most].tolist()) + (", ..." if len(values) > most else "")
    return f"{len(values)} {kind}: [{shown}]"


def cmd_info(args):
    if args.model_file is None:
        info = environment()
    else:
        from .._interop.model_files import read_model_info

        # The header and the labels only: the statistics are never read.
        described = read_model_info(args.model_file, core=True)
        header = described.header
        classes = text_labels(described.classes)  # bytes: their text
        info = {
            "file": str(args.model_file),
            "estimator": header["estimator"],
            "parameters": {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                           for k, v in described.estimator._params().items()},
            "n_classes": len(classes),
            # As the model's classes_ are: integers stay integers.
            "classes": classes.tolist(),
            "n_features": described.n_features,
            # The memory the statistics take once loaded (the file holds them compressed).
            "statistics_bytes": described.statistics_bytes,
            "file_bytes": _size(args.model_file),
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
            if key == "classes" and args.model_file is not None:
                print(f"classes: {_classes_text(classes)}")
            elif key == "statistics_bytes":
                print(f"statistics in memory when loaded: {_bytes_text(value, binary=True)}")
            elif key == "file_bytes":
                if value is not None:
                    print(f"file size: {_bytes_text(value, binary=False)}")
            elif key == "model_search" and args.model_file is not None:
                from .model_choice import record_text

                print(f"{key}: {record_text(value)}")
            else:
                print(f"{key}: {value}")
    return 0


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


def build_parser():
    """The argparse parser of the ``nbgpu`` command."""
    parser = OneLineParser(
        prog="nbgpu",
        description="Naive Bayes on CPU and GPU: train, predict and evaluate from files.",
        epilog="Run 'nbgpu COMMAND --help' for the options of a command. Exit status: 0 done, "
               "1 a file could not be used, 2 the command was called wrong, 130/143 interrupted/terminated.",
    )
    parser.add_argument("--version", action="version", version=f"nbgpu {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                        help="where to compute: auto = the GPU if cupy finds one, else the CPU")
    common.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summaries")
    data = argparse.ArgumentParser(add_help=False)
    data.add_argument("--format", choices=("auto", *FORMATS), default="auto",
                      help="input format (default: from the extension: .svm/.svmlight/.libsvm, .npz, .csv, "
                           "and JSON lines as .jsonl/.ndjson/.json; any but .npz may be gzip-compressed, "
                           "e.g. .jsonl.gz, .csv.gz, and is decompressed as it is read; at predict/evaluate "
                           "else the model's; else, standard input (-) or a name without an extension, "
                           "from the first bytes)")
    data.add_argument("--chunk-mb", type=chunk_bytes, metavar="MIB",
                      help=f"MiB of file read per chunk (bounds memory; default {CHUNK_BYTES / 2**20:g}, and "
                           f"{TEXT_TRAIN_CHUNK_BYTES / 2**20:g} for text at train but with --model auto: a chunk is "
                           "fitted while the next is parsed)")
    data.add_argument("--dtype", choices=("float32", "float64"), default="float64",
                      help="float type of the features (default %(default)s)")
    data.add_argument("--label-column", help="CSV: name or index of the label column (default: 'label', else the last); "
                                             "for JSON lines use --label-key")
    data.add_argument("--text-column", metavar="NAME|INDEX",
                      help="CSV: hash this column's text as JSON lines' text is (the text options of 'train'), "
                           "instead of reading numeric features (default at predict/evaluate: the model's)")
    data.add_argument("--text-key", metavar="NAME",
                      help="JSON lines: the key of the text (default 'text', or the model's at predict/evaluate)")
    data.add_argument("--label-key", metavar="NAME",
                      help="JSON lines: the key of the label (default 'label', or the model's at predict/evaluate)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("train", parents=[common, data], help="fit a model on a data file and save it",
                       description="Fit a model on a data file, reading it once in chunks, and save it.")
    p.add_argument("data", help="training data file ('-': standard input; a FIFO or /dev/stdin too)")
    p.add_argument("-o", "--output", required=True, help="model file to write ('-': standard output)")
    p.add_argument("--model", choices=("auto", *MODELS),
                   help="naive Bayes model (default auto, or multinomial when --alpha is given): auto chooses "
                        "MultinomialNB, ComplementNB or (not on text) BernoulliNB and --alpha by 5-fold "
                        "cross-validation in the same pass, on text also unigrams or 1-2grams (unless "
                        "--ngram-range is given) and raw or sublinear (1 + log) counts; GaussianNB when a value "
                        "is negative, or not a whole number in numeric columns (measurements)")
    p.add_argument("--classes", help="comma-separated class labels (default: the labels found in the file)")
    p.add_argument("--n-features", type=feature_count,
                   help="svmlight: number of features (default: the largest index found, +1 if zero-based)")
    p.add_argument("--zero-based", choices=("auto", "yes", "no"), default="auto",
                   help="svmlight: whether feature indices start at 0 (auto: scikit-learn's rule, "
                        "zero-based if an index 0 appears anywhere in the file)")
    add_parameter_flags(p)
    text = p.add_argument_group("text (JSON lines, CSV with --text-column; stored in the model for predict/evaluate)")
    text.add_argument("--hash-features", type=feature_count, default=TEXT_DEFAULTS["n_features"],
                      help="HashingVectorizer n_features (default %(default)s)")
    text.add_argument("--ngram-range", type=ngram_range, metavar="MIN,MAX",
                      help="n-grams of words, or of characters with --analyzer char/char_wb (default 1,1; "
                           "--model auto chooses 1,1 or 1,2 of words)")
    text.add_argument("--analyzer", choices=("word", "char", "char_wb"), default="word",
                      help="word n-grams, character n-grams, or character n-grams inside word boundaries "
                           "(default %(default)s)")
    text.add_argument("--no-lowercase", action="store_true", help="keep case")
    text.add_argument("--stop-words", choices=("english",), help="drop English stop words")
    text.add_argument("--binary-counts", action="store_true", help="count presence (0/1) instead of occurrences")
    p.set_defaults(func=cmd_train)

    for name, func, what in (("predict", cmd_predict, "predict the labels of a data file"),
                             ("evaluate", cmd_evaluate, "score a model on a labelled data file")):
        p = sub.add_parser(name, parents=[common, data], help=what, description=what[0].upper() + what[1:] + ".")
        p.add_argument("model_file", metavar="MODEL", help="model file written by 'nbgpu train' or nbgpu.save")
        p.add_argument("data", help="data file ('-': standard input; a FIFO or /dev/stdin too)")
        p.add_argument("-o", "--output", help="write here (atomically) instead of stdout ('-': stdout)")
        p.add_argument("--zero-based", choices=("auto", "yes", "no"), default="auto",
                       help="svmlight: whether feature indices start at 0 (auto: as the model's training file, "
                            "else yes)")
        p.add_argument("--max-memory", type=positive_int, metavar="BYTES",
                       help="the most memory loading MODEL may take (default: 256 MiB or 64 times the file's size, "
                            "whichever is larger); raise it for a large model you trust")
        p.set_defaults(func=func)
        if name == "predict":
            p.add_argument("--proba", action="store_true", help="CSV of the prediction and every class probability")
        else:
            p.add_argument("--json", action="store_true", help="machine-readable JSON report")
            p.add_argument("--confusion-png", metavar="PNG", help="also draw the confusion matrix (matplotlib)")
            p.add_argument("--confusion-normalize", action="store_true",
                           help="draw each true class's row as shares of its total (recall per class)")

    p = sub.add_parser("info", help="library versions and devices, or what a model file holds",
                       description="Without MODEL: versions and devices. With MODEL: what the file holds.")
    p.add_argument("model_file", metavar="MODEL", nargs="?", help="a model file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("compare", parents=[common], help="all five models against scikit-learn on bundled datasets",
                       description="Fit the five models on iris, wine, breast_cancer and digits on the best device "
                                   "present and print accuracy and fit/predict time next to scikit-learn's.")
    p.add_argument("--repeats", type=positive_int, default=5, help="timing repeats; the best is shown (default %(default)s)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("bench", add_help=False, help="speed benchmark against scikit-learn ('nbgpu bench --help')")
    p.set_defaults(func=cmd_bench)
    return parser


def _error_line(prog, exc):
    text = " ".join(str(exc).split()) or type(exc).__name__
    print(f"{prog}: error: {text}", file=sys.stderr)


def main(argv=None):
    """Run the ``nbgpu`` command; return its exit status."""
    with terminate_like_interrupt():
        try:
            return _run(argv)
        except (KeyboardInterrupt, Terminated) as exc:
            return report_signal(exc)


def _run(argv):
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if args.command != "bench" and extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except UsageError as exc:
        _error_line(exc.prog, exc)
        return USAGE_STATUS
    except SystemExit as exc:  # --help, --version
        return exc.code
    args.bench_args = extra
    if args.command is None:
        parser.print_help()
        return 0
    prog = f"nbgpu {args.command}"
    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as exc:
        _error_line(prog, exc)
        return USAGE_STATUS
    except Exception as exc:  # one line, no traceback (NBGPU_DEBUG=1 shows it)
        signalled = signal_behind(exc)
        if signalled is not None:  # e.g. an import that SIGTERM interrupted fails as "initialization failed"
            raise signalled from None
        if os.environ.get("NBGPU_DEBUG"):
            raise
        _error_line(prog, exc)
        return 1
