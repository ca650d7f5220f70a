"""Fitting on data larger than memory: chunks through ``partial_fit``.

``fit_stream`` fits an estimator on any iterable of chunks while a background
thread produces the next chunk (on a GPU, and copies it through pinned host
memory on a second CUDA stream), so memory stays bounded by a few chunks.
``svmlight_chunks`` reads an svmlight/libsvm file in byte ranges with
scikit-learn's ``load_svmlight_file(offset=, length=)``.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading

import numpy as np

from .._array.devices import PinnedUploader

__all__ = ["fit_stream", "svmlight_chunks"]

_DONE = object()


class _Prefetcher:
    """Runs ``produce(index, item)`` over ``items`` in a daemon thread, at most ``depth`` ahead; its
    exceptions are re-raised in the consumer where they happened. A consumer that stops early (an
    exception, Ctrl-C) tells the thread to stop but does not wait: it may be blocked reading a pipe."""

    def __init__(self, items, produce, depth):
        self._queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(items, produce), daemon=True)
        self._thread.start()

    def _put(self, value):
        while not self._stop.is_set():
            with contextlib.suppress(queue.Full):
                self._queue.put(value, timeout=0.1)
                return True
        return False

    def _work(self, items, produce):
        try:
            for index, item in enumerate(items):
                if not self._put(("ok", produce(index, item))):
                    return
            self._put(("ok", _DONE))
        except BaseException as exc:  # handed to the consumer
            self._put(("error", exc))
        finally:
            # Closed here, not when collected: the error's traceback keeps this frame, and with it
            # ``items`` (a reader holding its file open), alive for as long as the caller keeps the error.
            close = getattr(items, "close", None)
            if close is not None:
                close()

    def __iter__(self):
        try:
            while True:
                try:
                    # In slices: a signal the kernel gave another thread
                    # interrupts no wait of this one; its handler runs here.
                    kind, value = self._queue.get(timeout=0.2)
                except queue.Empty:
                    continue
                if kind == "error" or value is _DONE:
                    self._thread.join()  # it has returned
                    if kind == "error":
                        try:
                            raise value
                        finally:
                            del value  # else the error's traceback holds this frame, which holds the error: a cycle
                    return
                yield value
        finally:
            self.stop()

    def stop(self):
        """Tell the thread to stop (iterated or not): it ends once the item it is on is produced."""
        self._stop.set()


def fit_stream(estimator, chunks, *, classes, device="cpu", prefetch=2, progress=False):
    """Fit ``estimator`` on a stream of chunks through ``partial_fit``.

    The model is the one ``fit`` would give on the concatenated chunks (the
    statistics of naive Bayes are sums). Only ``prefetch + 1`` chunks are
    held at a time.

    Parameters
    ----------
    estimator : nbgpu (or scikit-learn) estimator with ``partial_fit``
        Fitted in place; an already fitted estimator is updated.
    chunks : iterable of tuples
        ``(X_chunk, y_chunk)`` or ``(X_chunk, y_chunk, sample_weight_chunk)``;
        ``X_chunk`` any input the estimator takes (numpy, scipy.sparse, cupy,
        ...), e.g. from ``HashingVectorizer.transform`` or
        :func:`svmlight_chunks`. A generator is consumed lazily.
    classes : array-like of shape (n_classes,)
        Every class label that can appear in any chunk.
    device : {"cpu", "gpu"}, default="cpu"
        ``"gpu"`` moves each chunk to the current CUDA device (cupy) through
        pinned memory on a second stream, overlapping the copy of the next
        chunk with the work on this one. ``"cpu"`` fits the chunks as given.
    prefetch : int, default=2
        How many chunks are produced ahead of the one being fitted (>= 1).
    progress : bool, default=False
        Show a tqdm progress bar (tqdm must be installed).

    Returns
    -------
    estimator : the fitted estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from nbgpu import MultinomialNB, fit_stream
    >>> rng = np.random.default_rng(0)
    >>> chunks = ((rng.integers(0, 5, (100, 20)), rng.integers(0, 3, 100)) for _ in range(4))
    >>> model = fit_stream(MultinomialNB(), chunks, classes=[0, 1, 2])
    >>> int(model.class_count_.sum())
    400
    """
    if not hasattr(estimator, "partial_fit"):
        msg = f"`estimator` must have a partial_fit method; got {type(estimator).__name__}."
        raise TypeError(msg)
    if device not in ("cpu", "gpu"):
        msg = f"`device` must be 'cpu' or 'gpu'; got {device!r}."
        raise ValueError(msg)
    if not isinstance(prefetch, int) or prefetch < 1:
        msg = f"`prefetch` must be an int >= 1; got {prefetch!r}."
        raise ValueError(msg)
    if classes is None:
        msg = "`classes` is required: every label of every chunk, known before the first chunk."
        raise ValueError(msg)
    uploader = PinnedUploader() if device == "gpu" else None

    def produce(index, chunk):
        if not isinstance(chunk, (tuple, list)) or len(chunk) not in (2, 3):
            length = f" of length {len(chunk)}" if isinstance(chunk, (tuple, list)) else ""
            msg = (
                f"chunk {index} must be a tuple (X, y) or (X, y, sample_weight); "
                f"got {type(chunk).__name__}{length}."
            )
            raise TypeError(msg)
        X, y, weight = (*chunk, None)[:3]
        if uploader is None:
            return X, y, weight, None, None
        return uploader.upload(X, y, weight)

    stream = _Prefetcher(chunks, produce, prefetch)
    if progress:
        from tqdm.auto import tqdm

        stream = tqdm(stream, unit="chunk")
    n = 0
    for n, (X, y, weight, event, _pinned) in enumerate(stream, 1):
        if event is not None:
            uploader.wait(event)
        estimator.partial_fit(X, y, classes=classes, sample_weight=weight)
        if uploader is not None:
            uploader.release((X, weight))
    if uploader is not None:
        uploader.synchronize()
    if n == 0:
        msg = "`chunks` was empty: there is nothing to fit."
        raise ValueError(msg)
    return estimator


def svmlight_chunks(path, *, n_features, chunk_bytes=256 * 2**20, dtype=np.float32, zero_based=True,
                    query_id=False):
    """Read an svmlight/libsvm file as ``(X, y)`` chunks of about ``chunk_bytes``.

    Uses :func:`sklearn.datasets.load_svmlight_file` with ``offset`` and
    ``length``: every line belongs to exactly one chunk, and only one chunk
    is in memory at a time.

    Parameters
    ----------
    path : str or path-like
    n_features : int
        Number of features of the whole file (every chunk has this width).
    chunk_bytes : int, default=256 MiB
        Bytes of file per chunk.
    dtype : numpy dtype, default=float32
    zero_based : bool, default=True
        Whether column indices in the file start at 0 (as written by
        scikit-learn's ``dump_svmlight_file``) or 1 (libsvm's convention).
        It must be stated: guessing it per chunk could differ between chunks.
    query_id : bool, default=False
        Passed to the loader (the query ids are dropped).

    Yields
    ------
    X : scipy.sparse.csr_matrix of shape (n_rows, n_features)
    y : ndarray of shape (n_rows,)

    Examples
    --------
    >>> from nbgpu import MultinomialNB, fit_stream, svmlight_chunks
    >>> chunks = svmlight_chunks("train.svm", n_features=2**18, chunk_bytes=2**28)  # doctest: +SKIP
    >>> fit_stream(MultinomialNB(), chunks, classes=range(20))  # doctest: +SKIP
    """
    if not isinstance(chunk_bytes, (int, np.integer)) or chunk_bytes < 1:
        msg = f"`chunk_bytes` must be a positive int; got {chunk_bytes!r}."
        raise ValueError(msg)
    from sklearn.datasets import load_svmlight_file

    chunk_bytes = int(chunk_bytes)
    for offset in range(0, os.path.getsize(path), chunk_bytes):
        try:
            X, y, *_ = load_svmlight_file(str(path), n_features=n_features, dtype=dtype, zero_based=zero_based,
                                          query_id=query_id, offset=offset, length=chunk_bytes)
        except ValueError as exc:
            if "n_features was set" in str(exc):
                msg = f"{path} has more features than the {n_features} the model was trained on ({exc})"
            else:
                msg = f"{path} is not a valid svmlight/libsvm file near byte {offset} ({exc})"
            raise ValueError(msg) from exc
        if X.shape[0]:
            yield X, y
