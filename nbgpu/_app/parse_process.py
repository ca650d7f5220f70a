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
import select
import signal
import struct
import sys
import threading

# NBGPU_PARSE_PROCESS=0 parses in a thread (for comparisons and debugging).
_SWITCH = "NBGPU_PARSE_PROCESS"
# Linux's prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1
# Each message: its length, then its pickle.
_HEADER = struct.Struct("<Q")
# How long the command waits on the pipe before its signal handlers get a turn.
_WAKE_SECONDS = 0.2


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
        self._fd = read_end
        atexit.register(self.stop)  # a command that ends early leaves no child behind

    def __iter__(self):
        try:
            while True:
                try:
                    (size,) = _HEADER.unpack(_read_exactly(self._fd, _HEADER.size))
                    kind, value = pickle.loads(_read_exactly(self._fd, size))
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
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        atexit.unregister(self.stop)


def _read_exactly(fd, size):
    """``size`` bytes of the pipe ``fd`` (EOFError if it ends first).

    Waits in slices of ``_WAKE_SECONDS``: a signal the kernel gave another
    thread (a CUDA driver's, a pool's) interrupts no read of this one, but
    its Python handler runs here between two waits, so Ctrl-C ends a command
    that waits for a child stuck on a file that never ends."""
    buf = bytearray(size)
    view, got = memoryview(buf), 0
    while got < size:
        if not select.select([fd], [], [], _WAKE_SECONDS)[0]:
            continue
        n = os.readv(fd, [view[got:]])
        if n == 0:
            raise EOFError
        got += n
    return buf


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


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
        try:
            for index, item in enumerate(items):
                _send(write_end, ("ok", produce(index, item)))
            message = ("done", None)
        except Exception as exc:  # noqa: BLE001 (handed to the command, which reports it)
            message = ("error", _portable(exc))
        _send(write_end, message)
        status = 0
    except BaseException:  # noqa: BLE001, S110 (the command went away, a broken pipe: nothing to tell)
        pass
    finally:
        os._exit(status)


def _send(fd, message):
    """One message, whole (its length, then its pickle): the command reads
    a chunk as soon as it is parsed, not when a buffer fills."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(data)))
    _write_all(fd, data)


def _portable(exc):
    """``exc`` if it survives pickling, else a ValueError with its message."""
    try:
        return pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 (any failure to pickle or unpickle)
        return ValueError(str(exc))
