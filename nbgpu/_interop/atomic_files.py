"""Output files that are never half-written: a temporary file renamed into place.

- A regular file is written under a temporary name in its own directory and
  renamed over it at the end, so a reader sees the old file or the whole new
  one. An existing file keeps its permission bits.
- A symbolic link is followed: its target is replaced, the link stays.
- ``-``, a device (``/dev/stdout``), a FIFO or another non-regular file is
  written directly: it cannot be renamed into.
- Temporary names are ``.NAME.HOST-PID.RANDOM.nbgpu-partial``: a run that
  was killed (SIGKILL, power loss) leaves one behind, and the next write of
  ``NAME`` from the same host removes those whose process is gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import sys
import tempfile
from pathlib import Path

STDOUT = "-"
_PARTIAL = ".nbgpu-partial"


def _host():
    # A name part: no separators or dots, so the temporary name parses back.
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname()) or "host"


def _is_direct(path):
    """True where ``path`` is written in place: ``-``, /dev and /proc names (``/dev/stdout`` may be a pipe
    or the shell's redirect target, not to be replaced), and existing non-regular files."""
    text = str(path)
    if text == STDOUT or text.startswith(("/dev/", "/proc/")):
        return True
    try:
        return not stat.S_ISREG(os.stat(text).st_mode)
    except OSError:  # does not exist yet (or a dangling link): a new file
        return False


def _target(text):
    """The file a write of ``text`` replaces (symbolic links followed); its directory must exist."""
    target = Path(os.path.realpath(text))
    if not target.parent.is_dir():
        raise ValueError(f"cannot write {text}: directory {target.parent} does not exist")
    return target


def check_output(path, *, inputs=(), what="output"):
    """Raise a ValueError now if ``path`` cannot be written, or is one of ``inputs``.

    Called before any work, so that a long run does not end in a write that
    fails (a missing or read-only directory) or that would destroy its own
    input (``-o`` naming the data or the model read).
    """
    text = str(path)
    if text == STDOUT:
        return
    if os.path.isdir(text):
        raise ValueError(f"cannot write {text}: it is a directory")
    for source in inputs:
        with contextlib.suppress(OSError):
            if os.path.samefile(text, source):
                msg = f"{what} {text} is the input file {source}; writing it would destroy it"
                raise ValueError(msg)
    if _is_direct(text):
        if os.path.exists(text) and not os.access(text, os.W_OK):
            raise ValueError(f"cannot write {text}: permission denied")
        return
    target = _target(text)
    if target.is_dir():
        raise ValueError(f"cannot write {text}: it is a directory")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {text}: directory {target.parent} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise ValueError(f"cannot write {text}: the file is read-only")


def remove_stale_partials(target):
    """Remove temporary files of ``target`` left by dead processes of this host."""
    prefix, host = f".{target.name}.", _host()
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(_PARTIAL)):
                continue
            owner = name[len(prefix) : -len(_PARTIAL)].rsplit(".", 1)[0]  # HOST-PID
            owner_host, _, pid = owner.rpartition("-")
            if owner_host == host and pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return exc.errno == errno.EPERM  # exists, owned by someone else
    return True


@contextlib.contextmanager
def atomic_output(path, mode="w"):
    """Open ``path`` for writing; it appears whole when the block ends, or not at all.

    A regular file is written to a temporary file next to it and renamed on
    success; if the block raises (``KeyboardInterrupt`` and ``SystemExit``
    included) the temporary file is removed and ``path`` is left as it was.
    ``-`` is standard output; devices and FIFOs are written directly.
    """
    text = str(path)
    if text == STDOUT:
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    if _is_direct(text):
        with open(text, mode) as f:
            yield f
        return
    target = _target(text)
    remove_stale_partials(target)
    try:
        mode_bits = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:  # a new file: the usual permissions, read from the umask (only setting it reads it)
        umask = os.umask(0)
        os.umask(umask)
        mode_bits = 0o666 & ~umask
    prefix = f".{target.name}.{_host()}-{os.getpid()}."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=_PARTIAL, dir=target.parent)
    try:
        with os.fdopen(fd, mode) as f:
            os.fchmod(f.fileno(), mode_bits)  # mkstemp makes 0600; keep the file's (or the usual) permissions
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
