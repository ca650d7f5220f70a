"""``python -m nbgpu`` and the ``nbgpu`` console script.

Only the standard library is imported before the signal handlers are in
place, so Ctrl-C or SIGTERM while the command's modules load ends it with one
line (``nbgpu: interrupted``, status 130; ``nbgpu: terminated``, 143) and no
traceback.

The console script and ``python -m nbgpu`` exit as soon as the command returns,
without a last sweep of the garbage collector (:func:`console`); :func:`main`
returns the exit status.
A process started with standard output or error closed (``>&-``, ``2>&-``)
gets stand-ins for them (:func:`_stand_in_streams`).
"""

import gc
import io
import os
import sys

from ._app.signals import Terminated, report_signal, signal_behind, terminate_like_interrupt


def main(argv=None):
    """Run the ``nbgpu`` command; return its exit status."""
    try:
        with terminate_like_interrupt():
            try:
                from ._app.cli import main as run  # numpy, scipy: loaded under the handlers
            except Exception as exc:
                # A signal during a C extension's initialisation can surface as
                # that import's error (numpy's "PyCapsule_Import could not import").
                signalled = signal_behind(exc)
                if signalled is not None:
                    raise signalled from None
                raise
            return run(argv)
    except (KeyboardInterrupt, Terminated) as exc:
        return report_signal(exc)


class _ClosedOutput(io.TextIOBase):
    """``sys.stdout`` when descriptor 1 was closed at start: ``writable()`` is False (the command
    checks it before any work) and a write raises (the command ends with one line, status 1)."""

    def writable(self):
        return False

    def write(self, text):
        raise io.UnsupportedOperation("standard output is closed (started with >&-): nothing can be written to it")

    @property
    def buffer(self):  # binary writes (a model file to ``-o -``) raise alike
        return self

    def fileno(self):
        return 1


def _reserve(fd):
    # Hold a closed standard descriptor with /dev/null, read-only (writes to
    # it still fail), so that no file the command opens becomes "standard
    # output" for code that writes to descriptor 1 or 2 directly.
    null = os.open(os.devnull, os.O_RDONLY)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def _stand_in_streams():
    """Stand-ins for ``sys.stdout`` and ``sys.stderr`` that Python set to None (closed at start):
    ``print`` would drop text silently, and flushing them at the end failed with a traceback."""
    if sys.stdout is None:
        _reserve(1)
        sys.stdout = _ClosedOutput()
    if sys.stderr is None:
        _reserve(2)
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (the process's stream): messages have nowhere to go


def console():
    """The ``nbgpu`` console script and ``python -m nbgpu``: run the command, then exit as usual
    (exit handlers, flushed streams, status), less the garbage collector's passes over every
    object at interpreter teardown: by then every output is written, closed and renamed, and those
    passes only add time (about 60 ms of CPU on a small ``nbgpu predict``).
    """
    _stand_in_streams()
    status = main()
    # Objects left to the permanent generation are not collected again:
    # teardown still frees them by reference counting, but no longer walks
    # them all in its final collections.
    gc.freeze()
    sys.exit(status)


if __name__ == "__main__":
    console()
