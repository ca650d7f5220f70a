"""Ending the ``nbgpu`` command on a signal: SIGTERM is handled like Ctrl-C.

Python turns SIGINT into ``KeyboardInterrupt``; :func:`terminate_like_interrupt`
turns SIGTERM into :class:`Terminated`, so both unwind the stack and every
``atomic_output`` removes its temporary file on the way out. Standard library
only: the command installs it before its heavier modules load.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading


class Terminated(BaseException):
    """SIGTERM arrived (a BaseException, like KeyboardInterrupt, so that
    ``except Exception`` blocks do not swallow it)."""


# The exception each signal raises within terminate_like_interrupt, and those raised so far.
_RAISES = {signal.SIGTERM: Terminated, signal.SIGINT: KeyboardInterrupt}
_RECEIVED = []


def _raise(signum, frame):
    _RECEIVED.append(_RAISES[signum])
    raise _RAISES[signum]


@contextlib.contextmanager
def terminate_like_interrupt():
    """Within the block, SIGTERM raises :class:`Terminated` and SIGINT
    KeyboardInterrupt, each recorded (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _RECEIVED.clear()
    previous = {signum: signal.signal(signum, _raise) for signum in _RAISES}
    hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_deliver_again, hook)
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _deliver_again(hook, unraisable):
    """Python ignores an exception raised in a weakref callback or ``__del__``
    (seen on the GPU machine: SIGINT while modules load, in importlib's lock
    cleanup): the signal goes to the main thread again a moment later, once
    that code has returned, so the command still ends."""
    signum = next((s for s, exc in _RAISES.items() if issubclass(unraisable.exc_type, exc)), None)
    if signum is None:
        return hook(unraisable)
    again = threading.Timer(0.01, signal.pthread_kill, (threading.main_thread().ident, signum))
    again.daemon = True
    again.start()
    return None


def report_signal(exc):
    """Print the one line for an interrupted or terminated run; return its exit status."""
    terminated = isinstance(exc, Terminated)
    print("nbgpu: terminated" if terminated else "nbgpu: interrupted", file=sys.stderr)
    # 128 + the signal's number: the status shells report for a process the signal ended.
    return 128 + (signal.SIGTERM if terminated else signal.SIGINT)


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
