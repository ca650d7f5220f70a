"""Progress bars: tqdm's where it is installed and useful, else nothing."""

from __future__ import annotations

import sys


class _NoProgress:
    def update(self, n=1):
        pass

    def set_description(self, desc=None, refresh=True):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def close(self):
        pass


def progress(desc, *, total=None, quiet=False, unit=" rows"):
    """A tqdm bar counting ``unit`` (rows by default; ``"B"``: bytes, scaled), or a no-op one.

    Silent with ``quiet``, when stderr is not a terminal, or without tqdm;
    shown only for passes that take more than half a second.
    """
    if quiet or not sys.stderr.isatty():
        return _NoProgress()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoProgress()
    extra = {"unit_divisor": 1024} if unit == "B" else {}
    return tqdm(desc=desc, total=total, unit=unit, unit_scale=True, delay=0.5, file=sys.stderr, **extra)
