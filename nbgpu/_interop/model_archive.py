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
import io
import math
import os
import re
import struct
import zipfile
import zlib

import numpy as np
from numpy.lib import format as npy_format

from .._array.paths import fast
from .._array.threads import parallel_map
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
    """Write ``members`` (name -> numpy array) atomically as a zip of deflated ``.npy`` files (no pickle).

    Each member is one deflate stream made of pieces deflated on all cores, each primed with
    the 32 KiB before it (as pigz does): the bytes depend on the pieces, not on the threads, and
    any zip reader (zipfile, ``np.load``) inflates them as one stream. Every member carries a
    trailing data descriptor (sizes and CRC after the data), so standard output works too, and a
    fixed date, so the same model gives the same file. Debian's 1-2gram ComplementNB model
    (19 MB of arrays, deflate level 1) is written in 0.148 s against zipfile's 0.251 s on one
    thread (wall, medians of 20 at load 1.4, the same CPU: 0.24 s), 0.01 % larger. Fast path
    ``parallel_deflate``; its reference is zipfile's writer (any reader reads either file alike).
    """
    # np.asarray, not np.ascontiguousarray: that makes a 0-d array (a parameter
    # such as alpha=np.array(0.5)) 1-d, which load refuses.
    arrays = {name: np.asarray(array, order="C") for name, array in members.items()}
    if not fast("parallel_deflate"):
        with atomic_output(path, "wb") as f, zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED,
                                                             compresslevel=_LEVEL) as z:
            for name, array in arrays.items():
                with z.open(f"{name}.npy", "w", force_zip64=True) as out:
                    npy_format.write_array(out, array, allow_pickle=False)
        return
    with atomic_output(path, "wb") as f:
        out = _Counted(f)
        _write_directory(out, [_write_member(out, name, array) for name, array in arrays.items()])


class _Counted:
    """A binary output that counts the bytes written to it (the offsets a zip records)."""

    def __init__(self, f):
        self.f, self.offset = f, 0

    def write(self, data):
        self.f.write(data)
        self.offset += len(data)


# Deflate level 1: on a wide model's statistics much faster than the default, files a little larger.
_LEVEL = 1
# A member's data is deflated in pieces of this many bytes, a window of
# _PIECES_AT_ONCE at a time (the memory a write takes beyond the arrays).
_PIECE = 2**20
_PIECES_AT_ONCE = 16
_WINDOW = 2**15  # deflate's reach back: what primes the next piece
_ZIP64 = 45  # the zip version that reads zip64 fields; the zip64 extra field's id is 1
_DATE, _TIME = (1 << 5) | 1, 0  # 1980-01-01 00:00, MS-DOS style
_FULL = 0xFFFFFFFF  # a 32-bit field that says "see the zip64 field"
_ZIP32 = 2**31 - 1  # zipfile's limit for 32-bit sizes and offsets


def _write_member(out, name, array):
    """Write member ``name``.npy holding ``array`` (C-ordered): local header, deflated data,
    data descriptor. Returns what the central directory says of it."""
    head = io.BytesIO()  # numpy's own .npy header (version 1.0; 2.0 for a huge one)
    try:
        npy_format.write_array_header_1_0(head, npy_format.header_data_from_array_1_0(array))
    except ValueError:
        head = io.BytesIO()
        npy_format.write_array_header_2_0(head, npy_format.header_data_from_array_1_0(array))
    data = memoryview(array.reshape(-1).view(np.uint8)) if array.size else memoryview(b"")
    raw = [memoryview(head.getvalue()), *(data[i : i + _PIECE] for i in range(0, len(data), _PIECE))]
    filename = f"{name}.npy".encode()
    flags = 0x08 | (0x800 if not filename.isascii() else 0)  # a data descriptor; UTF-8 name
    offset = out.offset
    zip64_sizes = struct.pack("<HHQQ", 1, 16, 0, 0)  # sizes in the descriptor (zip64: 8 bytes each)
    out.write(struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", _ZIP64, 0, flags, zipfile.ZIP_DEFLATED, _TIME, _DATE, 0,
                          _FULL, _FULL, len(filename), len(zip64_sizes)))
    out.write(filename)
    out.write(zip64_sizes)

    def deflated(i):
        # Primed with the bytes before it that deflate can reach, those of the piece before (all
        # pieces are that long but the .npy header); ends on a byte, the stream open (but the last).
        before = bytes(raw[i - 1][-_WINDOW:]) if i else b""
        compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15, zdict=before)
        return compressor.compress(raw[i]) + compressor.flush(zlib.Z_FINISH if i == len(raw) - 1 else zlib.Z_SYNC_FLUSH)

    crc, start = 0, out.offset
    for first in range(0, len(raw), _PIECES_AT_ONCE):
        window = range(first, min(first + _PIECES_AT_ONCE, len(raw)))
        for i, piece in zip(window, parallel_map(deflated, window, blas=False)):
            crc = zlib.crc32(raw[i], crc)
            out.write(piece)
    size, packed = sum(map(len, raw)), out.offset - start
    out.write(struct.pack("<4sLQQ", b"PK\x07\x08", crc, packed, size))
    return filename, flags, crc, packed, size, offset


def _write_directory(out, directory):
    """The central directory of the members ``_write_member`` wrote, and the end records."""
    start = out.offset
    for filename, flags, crc, packed, size, offset in directory:
        # zipfile's rule: zip64 fields for sizes (both) or an offset beyond 2**31 - 1, in this order
        wide = [size, packed] if max(size, packed) > _ZIP32 else []
        fields = [_FULL, _FULL] if wide else [packed, size]
        wide += [offset] if offset > _ZIP32 else []
        extra = struct.pack(f"<HH{len(wide)}Q", 1, 8 * len(wide), *wide) if wide else b""
        out.write(struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", _ZIP64, 3, _ZIP64, 0, flags, zipfile.ZIP_DEFLATED,
                              _TIME, _DATE, crc, *fields, len(filename), len(extra), 0, 0, 0, 0o600 << 16,
                              _FULL if offset > _ZIP32 else offset))
        out.write(filename)
        out.write(extra)
    count, size, end = len(directory), out.offset - start, out.offset
    if count > 0xFFFF or start > _ZIP32 or size > _ZIP32:
        out.write(struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, _ZIP64, _ZIP64, 0, 0, count, count, size, start))
        out.write(struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1))
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, min(count, 0xFFFF), min(count, 0xFFFF),
                          min(size, _FULL), min(start, _FULL), 0))


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
