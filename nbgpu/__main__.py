"""``python -m nbgpu`` and the ``nbgpu`` console script.

Only the standard library is imported before the signal handlers are in
place, so Ctrl-C or SIGTERM while the command's modules load ends it with one
line (``nbgpu: interrupted``, status 130; ``nbgpu: terminated``, 143) and no
traceback.

The console script and ``python -m nbgpu`` end the process as soon as the
command returns (:func:`console`); :func:`main` returns the exit status.
"""

import atexit
import os
import sys

from ._app.signals import Terminated, report_signal, terminate_like_interrupt


def main(argv=None):
    """Run the ``nbgpu`` command; return its exit status."""
    try:
        with terminate_like_interrupt():
            from ._app.cli import main as run  # numpy, scipy: loaded under the handlers

            return run(argv)
    except (KeyboardInterrupt, Terminated) as exc:
        return report_signal(exc)


def console():
    """The ``nbgpu`` console script and ``python -m nbgpu``: run the command,
    then end the process without tearing the interpreter down.

    When the command returns its work is done: every output is written,
    closed and renamed, and the process that parsed the data has ended.
    Tearing down the interpreter would then free every module and object of
    scikit-learn, scipy and pandas one by one, 0.3–0.6 s: a sixth of a short
    command. The exit handlers run first, then the standard streams are
    flushed; if one cannot be (a closed pipe) the interpreter ends as
    usual, and says so as usual.
    """
    status = main()
    if status is None:
        status = 0
    if not isinstance(status, int):
        sys.exit(status)
    atexit._run_exitfuncs()  # e.g. a parsing process left running is stopped
    atexit._clear()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":
    console()
