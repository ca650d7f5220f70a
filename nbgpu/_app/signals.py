"""Ending the ``nbgpu`` command on a signal: SIGTERM is handled like Ctrl-C.

Python turns SIGINT into ``KeyboardInterrupt``; :func:`terminate_like_interrupt`
turns SIGTERM into :class:`Terminated`, so both unwind the stack and every
``atomic_output`` removes its temporary file on the way out. Standard library
only: the command installs it before its heavier modules load.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

# Exit statuses of a process ended by SIGINT / SIGTERM (128 + signal number), as shells report them.
INTERRUPTED = 128 + signal.SIGINT
TERMINATED = 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException, like KeyboardInterrupt, so that
    ``except Exception`` blocks do not swallow it)."""


# The signals received within terminate_like_interrupt (the exception each raised).
_RECEIVED = []


def _raise_terminated(signum, frame):
    _RECEIVED.append(Terminated)
    raise Terminated


def _raise_interrupted(signum, frame):
    _RECEIVED.append(KeyboardInterrupt)
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_like_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` and SIGINT
    KeyboardInterrupt, each recorded (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _RECEIVED.clear()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    previous_int = signal.signal(signal.SIGINT, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def report_signal(exc):
    """Print the one line for an interrupted or terminated run; return its exit status."""
    terminated = isinstance(exc, Terminated)
    print("nbgpu: terminated" if terminated else "nbgpu: interrupted", file=sys.stderr)
    return TERMINATED if terminated else INTERRUPTED


def signal_behind(exc):
    """The KeyboardInterrupt or :class:`Terminated` that caused ``exc`` (in its
    chain of causes and contexts), or None: a signal that arrives while a
    module loads can surface as that import's own error."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, (KeyboardInterrupt, Terminated)):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    # A C extension may report the failed initialisation without the
    # exception the signal raised: the handlers recorded it.
    return _RECEIVED[-1]() if _RECEIVED else None
