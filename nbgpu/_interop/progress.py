"""Progress bars: tqdm's where it is installed and useful, else nothing."""

from __future__ import annotations

import sys


class _NoProgress:
    def update(self, n=1):
        pass

    def close(self):
        pass


def progress(desc, *, total=None, quiet=False):
    """A tqdm bar counting rows (rows/s), or a no-op one.

    Silent with ``quiet``, when stderr is not a terminal, or without tqdm;
    shown only for passes that take more than half a second.
    """
    if quiet or not sys.stderr.isatty():
        return _NoProgress()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoProgress()
    return tqdm(desc=desc, total=total, unit=" rows", unit_scale=True, delay=0.5, file=sys.stderr)
