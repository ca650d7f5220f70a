"""One lock per model: updates one at a time, predictions together, never the two at once.

A model's statistics are read, extended and written back by ``partial_fit``;
without a lock, threads feeding batches to one model lose most of them.
Updates (``fit``, ``partial_fit``, ``to_device``) hold the model exclusively;
predictions and reads of derived parameters share it, so each sees one model
or the next, never a mixture; a thread that holds the update may also read.
The locks live beside the models (a weak mapping), so models still pickle,
copy and clone as plain objects.
"""

from __future__ import annotations

import contextlib
import threading
import weakref

_LOCKS = weakref.WeakKeyDictionary()
_MADE = threading.Lock()


class ModelLock:
    """Readers and one writer of a model; both re-entrant for the thread that holds them."""

    def __init__(self):
        self._state = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = None  # the ident of the thread updating, and how deep
        self._depth = 0
        # Derived parameters are written into the model while it is read: one thread at a time.
        self.deriving = threading.RLock()

    def acquire(self, *, blocking=True):
        """Hold the update, waiting where ``blocking``; whether it is held (release with :meth:`release`)."""
        me = threading.get_ident()
        with self._state:
            if self._writer != me:
                while self._writer is not None or self._readers:
                    if not blocking:
                        return False
                    self._state.wait()
                self._writer = me
            self._depth += 1
        return True

    def release(self):
        with self._state:
            self._depth -= 1
            if not self._depth:
                self._writer = None
                self._state.notify_all()

    @contextlib.contextmanager
    def update(self):
        """Hold the model alone: no other update, no prediction."""
        self.acquire()
        try:
            yield
        finally:
            self.release()

    @contextlib.contextmanager
    def reading(self):
        """Hold the model against updates (other readers welcome)."""
        me = threading.get_ident()
        with self._state:
            if self._writer == me:  # the updating thread reads what it is writing
                counted = False
            else:
                while self._writer is not None:
                    self._state.wait()
                self._readers += 1
                counted = True
        try:
            yield
        finally:
            if counted:
                with self._state:
                    self._readers -= 1
                    if not self._readers:
                        self._state.notify_all()


def lock_of(model) -> ModelLock:
    """The lock of ``model`` (made at its first use)."""
    lock = _LOCKS.get(model)
    if lock is None:
        with _MADE:
            lock = _LOCKS.setdefault(model, ModelLock())
    return lock
