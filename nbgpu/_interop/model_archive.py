"""The container of a model file: a zip of ``.npy`` arrays, read with bounded memory.

This is numpy's ``.npz`` layout (``np.load`` opens a model file), but a model
file is read by this module only, strictly and in an order that refuses a
bad file before its data costs anything:

1. the zip directory: every member a ``.npy`` file, named once, stored or
   deflated (no other compression method, no encryption), of a bounded size;
2. a member's ``.npy`` header (its first bytes only): the format numpy
   writes, a plain dtype, a shape, and a size that agrees with the zip
   directory and with what the caller expects;
3. only then its data, streamed into an array allocated once at its final
   size, so memory never exceeds what the declared array needs; the zip's
   CRC is checked at the end of every member.

Every failure is a :class:`ModelFileError` (a ``ValueError``) naming the
file and the member.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import struct
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npy_format

from .atomic_files import atomic_output

# numpy's own bound on a .npy header (``max_header_size``); ours are ~128 bytes.
MAX_NPY_HEADER_BYTES = 10_000
# A sanity bound on the data of one file (all arrays together): far beyond
# any model that fits in memory, far below what a forged size could ask for.
MAX_FILE_DATA_BYTES = 2**36
MAX_MEMBERS = 100_000
# Deflate's largest expansion: a 258-byte match takes at least 2 bits, so a
# stored byte gives at most 1032. A member declaring more data than its
# stored bytes can expand to is refused before anything is allocated.
_MAX_DEFLATE_RATIO = 1032
# Dtypes a member may have: booleans, numbers, text and dates (labels of any
# numpy type); never objects (pickle), structures or raw bytes.
_KINDS = frozenset("biufUSMm")
_DESCR = re.compile(r"[<>|=][a-zA-Z][0-9]{0,10}(\[[0-9]{0,4}[a-zA-Z]{1,3}\])?")
# General-purpose bits of a zip entry a model file may have set: deflate's
# level hints (1, 2), a trailing data descriptor (3), UTF-8 names (11).
# Never encryption (0, 6) or patched data (5).
_ZIP_FLAGS = 0x080E
# What zipfile and zlib raise on a corrupt archive, a corrupt member included
# (NotImplementedError and RuntimeError for features checked beforehand).
_ZIP_ERRORS = (
    zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError, struct.error, NotImplementedError, RuntimeError,
)
# Bytes read into an array at a time: zipfile inflates each read into a new
# bytes object (grown as it inflates) that is then copied into the array, so
# small reads reuse the same few blocks of memory. Loading Debian's 1-2gram
# ComplementNB model (19 MB of arrays) in a fresh process, medians of 8: 16 MiB
# reads 0.205 s CPU and 20.3K page faults, 256 KiB 0.176 s and 6.6K.
_CHUNK = 2**18


class ModelFileError(ValueError):
    """A file that is not a model file nbgpu can load; the message names it and says why."""


def plain_dtype(text, where):
    """The numpy dtype ``text`` (as ``dtype.str`` spells it) names, if a member may have it."""
    if isinstance(text, str) and _DESCR.fullmatch(text):
        with contextlib.suppress(TypeError, ValueError, SyntaxError):
            dtype = np.dtype(text)
            if dtype.kind in _KINDS and dtype.str == text and dtype.itemsize > 0:
                return dtype
    if isinstance(text, str) and text[1:2] == "O":
        msg = f"{where} is an object array; refusing to load it (that would need pickle)"
    else:
        msg = f"{where} has dtype {text!r}; expected a plain numeric, boolean, text or date dtype"
    raise ModelFileError(msg)


def is_int(value):
    """True for a Python int that is not a bool (JSON numbers and flags are both)."""
    return isinstance(value, int) and not isinstance(value, bool)


def plain_shape(value, where):
    """``value`` as a shape tuple if it is a list or tuple of non-negative ints."""
    ints = isinstance(value, (list, tuple)) and all(map(is_int, value))
    if ints and len(value) <= 32 and all(n >= 0 for n in value):
        return tuple(value)
    msg = f"{where} has shape {value!r}; expected a list of non-negative integers"
    raise ModelFileError(msg)


def data_bytes(dtype, shape):
    """Bytes of an array of ``dtype`` and ``shape`` (Python ints: no overflow)."""
    return dtype.itemsize * math.prod(shape)


def write_archive(path, members):
    """Write ``members`` (name -> numpy array) atomically as a deflated zip of ``.npy`` files (no pickle)."""
    # Deflate level 1: on a wide model's statistics much faster than the default, files a little larger.
    with atomic_output(path, "wb") as f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, array in members.items():
            with z.open(f"{name}.npy", "w", force_zip64=True) as out:
                # np.asarray, not np.ascontiguousarray: that makes a 0-d array (a
                # parameter such as alpha=np.array(0.5)) 1-d, which load refuses.
                np.lib.format.write_array(out, np.asarray(array, order="C"), allow_pickle=False)


class Archive:
    """An open model file, its zip directory checked, members read on request: ``with Archive(path) as archive: ...``."""

    def __init__(self, path):
        self.where = str(path)
        try:
            self._file = open(path, "rb")  # noqa: SIM115  (closed by close())
        except FileNotFoundError as exc:
            raise ModelFileError(f"{self.where}: no such file") from exc
        except OSError as exc:
            raise ModelFileError(f"{self.where} cannot be read ({exc})") from exc
        try:
            self._length = os.fstat(self._file.fileno()).st_size
            self._zip = zipfile.ZipFile(self._file)
            self.members = self._check_directory(self._zip.infolist())  # name (without .npy) -> ZipInfo
        except ModelFileError:  # the directory's own refusal (a ValueError: not zipfile's)
            self.close()
            raise
        except _ZIP_ERRORS as exc:
            self.close()
            msg = f"{self.where} is not an nbgpu model file (not a readable zip archive: {exc})"
            raise ModelFileError(msg) from exc
        except BaseException:  # a ModelFileError, or anything else (MemoryError, Ctrl-C): no open file left
            self.close()
            raise

    def __enter__(self):
        return self

    @property
    def size(self):
        """Bytes of the file."""
        return self._length

    def close(self, *exc):
        with contextlib.suppress(AttributeError):
            self._zip.close()
        self._file.close()

    __exit__ = close

    def _check_directory(self, infos):
        where = self.where
        if len(infos) > MAX_MEMBERS:
            raise ModelFileError(f"{where} is not an nbgpu model file (it has {len(infos)} members)")
        found = {}
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in found:
                why = "a repeated member" if name[:-4] in found else "a member that is not a .npy array"
                raise ModelFileError(f"{where} is not an nbgpu model file ({why}: {name!r})")
            if info.flag_bits & ~_ZIP_FLAGS:
                msg = f"{where}: member {name!r} has zip flags {info.flag_bits:#06x} (encrypted or patched data); model files never do"
                raise ModelFileError(msg)
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                msg = f"{where}: member {name!r} uses zip compression method {info.compress_type}; model files are stored or deflated"
                raise ModelFileError(msg)
            if info.file_size > MAX_FILE_DATA_BYTES + MAX_NPY_HEADER_BYTES:
                raise ModelFileError(f"{where}: member {name!r} declares {info.file_size} bytes, beyond any model file")
            stored = min(info.compress_size, self._length)  # its stored bytes are in the file
            ratio = 1 if info.compress_type == zipfile.ZIP_STORED else _MAX_DEFLATE_RATIO
            if info.file_size > ratio * stored:
                msg = f"{where}: member {name!r} declares {info.file_size} bytes; its {info.compress_size} stored bytes hold at most {ratio * stored}"
                raise ModelFileError(msg)
            found[name[:-4]] = info
        return found

    def open(self, name):
        """Member ``name`` open for reading, a file to close.

        Members read on several threads are opened first, on one: from Python 3.12
        zipfile's ``open`` skips a member's extra field by a seek relative to the
        file position all readers share, so an open beside another thread's read
        lands at a wrong offset. Reads of opened members are thread-safe.
        """
        info = self.members.get(name)
        if info is None:
            raise ModelFileError(f"{self.where}: member {name!r} is missing")
        try:
            return self._zip.open(info)
        except _ZIP_ERRORS as exc:
            raise ModelFileError(f"{self.where}: member {name!r} is corrupted ({type(exc).__name__}: {exc})") from exc

    def read(self, name, dtype, shape=None, *, max_bytes=None, member=None):
        """Member ``name``, which must be an array of ``dtype`` (and ``shape``, if given); its ``.npy`` header and zip
        size are checked (``max_bytes`` too) before any data is read. ``member``: the member as :meth:`open` gave it
        (left open), else it is opened here."""
        where, info = f"{self.where}: member {name!r}", self.members.get(name)
        try:
            with contextlib.nullcontext(member) if member else self.open(name) as f:
                npy_dtype, fortran, npy_shape, offset = _read_npy_header(f, where)
                shape = npy_shape if shape is None else shape
                if npy_dtype != dtype or npy_shape != shape:
                    msg = f"{where} holds a {npy_dtype.str} array of shape {npy_shape}; expected {dtype.str} of shape {shape}"
                    raise ModelFileError(msg)
                size = data_bytes(dtype, shape)
                if max_bytes is not None and size > max_bytes:
                    raise ModelFileError(f"{where} holds {size} bytes; at most {max_bytes} are allowed")
                if info.file_size != offset + size:
                    msg = f"{where} is {info.file_size} bytes long; a {dtype.str} array of shape {shape} takes {offset + size}"
                    raise ModelFileError(msg)
                try:
                    array = np.empty(shape[::-1] if fortran else shape, dtype=dtype)
                except MemoryError as exc:  # within the sanity bound, but not in this machine's memory
                    raise ModelFileError(f"{where}: not enough memory for its {size} bytes") from exc
                _read_into(f, array, where)
        except ModelFileError:
            raise
        except _ZIP_ERRORS as exc:
            raise ModelFileError(f"{where} is corrupted ({type(exc).__name__}: {exc})") from exc
        return array.T if fortran else array


def _read_npy_header(f, where):
    """(dtype, fortran order, shape, bytes before the data) of the ``.npy`` file open in ``f``, parsed by numpy's
    own functions; the dtype and shape must be ones a model file may hold."""
    try:
        major, _minor = npy_format.read_magic(f)
    except ValueError as exc:  # a wrong signature, or fewer bytes than it
        raise ModelFileError(f"{where} is not a .npy array (no .npy signature)") from exc
    if major not in (1, 2, 3):
        raise ModelFileError(f"{where} is a .npy array of an unknown format version {major}")
    # Format 3 differs from 2 only in a UTF-8 header, which a plain dtype never needs.
    read = npy_format.read_array_header_1_0 if major == 1 else npy_format.read_array_header_2_0
    try:
        shape, fortran, dtype = read(f, max_header_size=MAX_NPY_HEADER_BYTES)
    except Exception as exc:  # numpy's parser: ValueError, SyntaxError, tokenize's TokenError, ...
        raise ModelFileError(f"{where} has a malformed .npy header ({type(exc).__name__}: {exc})") from exc
    return plain_dtype(dtype.str, where), fortran, plain_shape(shape, where), f.tell()


def _read_into(f, array, where):
    """Fill ``array`` from ``f`` in bounded chunks, then read to the end (the zip checks its CRC there)."""
    view = memoryview(array.reshape(-1).view(np.uint8)) if array.size else memoryview(b"")
    done = 0
    while done < len(view):
        n = f.readinto(view[done : done + _CHUNK])
        if not n:
            raise ModelFileError(f"{where} is truncated")
        done += n
    if f.read(1):
        raise ModelFileError(f"{where} holds data after its array")
