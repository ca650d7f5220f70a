"""Parsing a data file in a child process while the command imports and fits.

Parsing text is Python work (JSON, then hashing), and so is importing
scikit-learn and the models: in two threads of one process they take turns
on the GIL, and a command that starts parsing first gains nothing. A forked
child parses on a core of its own instead: the first chunk is ready about
when the imports are done, and every later chunk is parsed while the one
before is fitted or scored.

Forking is safe only on Linux and while this process runs one thread (a
fork copies the calling thread only); elsewhere, or after a pool of threads
has started, :func:`readers.parsed_chunks` parses in a thread as before.
The child reads the file itself, sends each parsed chunk through a pipe (in
order; the pipe's buffer bounds how far ahead it gets), and ends with
``os._exit``: it never returns into the command, writes no file and prints
nothing. Ctrl-C ends it at once; the command then reports the interrupt.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import pickle
import signal
import sys
import threading

# NBGPU_PARSE_PROCESS=0 parses in a thread (for comparisons and debugging).
_SWITCH = "NBGPU_PARSE_PROCESS"
# Linux's prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


def can_fork():
    """Whether chunks may be parsed in a forked child here and now."""
    return (
        sys.platform == "linux"
        and threading.active_count() == 1
        and os.environ.get(_SWITCH, "1") != "0"
    )


class ParseProcess:
    """``produce(index, item)`` over ``items`` in a forked child; iterating
    gives the results in order, and re-raises an exception of ``produce``
    (or of ``items``) where it happened."""

    def __init__(self, items, produce):
        read_end, write_end = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_end)
            _end_with_parent(parent)
            _child(items, produce, write_end)  # never returns
        os.close(write_end)
        self._pid = pid
        self._pipe = os.fdopen(read_end, "rb")
        atexit.register(self.stop)  # a command that ends early leaves no child behind

    def __iter__(self):
        try:
            while True:
                try:
                    kind, value = pickle.load(self._pipe)
                except (EOFError, pickle.UnpicklingError):  # the pipe closed, perhaps within a chunk
                    raise RuntimeError(self._why_it_ended()) from None
                if kind == "error":
                    raise value
                if kind == "done":
                    return
                yield value
        finally:
            self.stop()

    def _why_it_ended(self):
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if os.WIFSIGNALED(status):
            how = f"was killed by signal {os.WTERMSIG(status)}"
            if os.WTERMSIG(status) == signal.SIGKILL:
                how += " (out of memory?)"
        else:
            how = f"exited with status {os.waitstatus_to_exitcode(status)}"
        return f"the process parsing the data {how}"

    def stop(self):
        """End the child (if still running) and close the pipe; idempotent."""
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self._pid, 0)
            self._pid = None
        self._pipe.close()
        atexit.unregister(self.stop)


def _end_with_parent(parent):
    """Have the kernel kill this child when the command dies (even by
    SIGKILL, which runs no clean-up), rather than parse on until its next
    write finds the pipe closed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the pipe still ends the child at its next write
        return
    if os.getppid() != parent:  # the command died before the request took hold
        os._exit(1)


def _child(items, produce, write_end):
    status = 1
    try:
        # Ctrl-C or a SIGTERM ends the child without a word: the command
        # (which gets the Ctrl-C too) reports it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with os.fdopen(write_end, "wb") as out:
            try:
                for index, item in enumerate(items):
                    pickle.dump(("ok", produce(index, item)), out, protocol=pickle.HIGHEST_PROTOCOL)
                message = ("done", None)
            except Exception as exc:  # noqa: BLE001 (handed to the command, which reports it)
                message = ("error", _portable(exc))
            pickle.dump(message, out, protocol=pickle.HIGHEST_PROTOCOL)
        status = 0
    except BaseException:  # noqa: BLE001, S110 (the command went away, a broken pipe: nothing to tell)
        pass
    finally:
        os._exit(status)


def _portable(exc):
    """``exc`` if it survives pickling, else a ValueError with its message."""
    try:
        return pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 (any failure to pickle or unpickle)
        return ValueError(str(exc))
