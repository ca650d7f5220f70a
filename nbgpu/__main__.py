"""``python -m nbgpu`` and the ``nbgpu`` console script.

Only the standard library is imported before the signal handlers are in
place, so Ctrl-C or SIGTERM while the command's modules load ends it with one
line (``nbgpu: interrupted``, status 130; ``nbgpu: terminated``, 143) and no
traceback.
"""

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


if __name__ == "__main__":
    sys.exit(main())
