"""Edits of model files for tests: members, the JSON header, zip headers, raw bytes.

A model file is a zip of ``.npy`` members; these helpers take one apart and
put it back together, or patch the zip's own headers, so a test can make
exactly the broken file it means (and the fuzz test can make many).
"""

from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np

from nbgpu._interop.model_header import digest

# Offsets of fields in a zip local file header and central directory entry.
_LOCAL_FLAGS, _LOCAL_METHOD = 6, 8
_CENTRAL_FLAGS, _CENTRAL_METHOD = 8, 10


def members(path):
    """Every member of a valid model file, by name (``header`` included)."""
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def header(members):
    """The JSON header of ``members`` as a dict."""
    return json.loads(members["header"].tobytes())


def with_header(members, header):
    """``members`` with ``header`` (a dict) as their JSON header."""
    return {**members, "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}


def listed(array):
    """The header's entry for ``array`` (dtype, shape, checksum): a forged one is consistent."""
    return {"dtype": array.dtype.str, "shape": list(array.shape), "sha256": digest(array)}


def write(path, members, header=None, *, compress=False):
    """Write ``members`` (with ``header`` if given) as an archive; returns ``path``."""
    if header is not None:
        members = with_header(members, header)
    save = np.savez_compressed if compress else np.savez
    with open(path, "wb") as f:
        save(f, **members)
    return path


def raw_archive(entries, *, compress=True):
    """Bytes of a zip whose members hold exactly ``entries`` (name -> bytes)."""
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return out.getvalue()


def raw_members(data):
    """Name -> raw bytes of every member of the zip ``data`` (as stored: ``.npy`` files)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {info.filename: z.read(info) for info in z.infolist()}


def npy_bytes(array):
    """``array`` as the bytes of a ``.npy`` file."""
    out = io.BytesIO()
    np.lib.format.write_array(out, array, allow_pickle=False)
    return out.getvalue()


def npy_with_header(text, payload=b""):
    """A ``.npy`` file (version 1.0) whose header is the literal ``text``."""
    body = text.encode("latin1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body + payload


def _entry(data, name):
    """(local header offset, central directory entry offset, data offset, compressed size) of member ``name``."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info, central = z.getinfo(name), z.start_dir
    local = info.header_offset
    name_len, extra_len = struct.unpack_from("<HH", data, local + 26)
    # Walk the central directory (each entry: 46 bytes, then name, extra field, comment).
    while data[central : central + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack_from("<HHH", data, central + 28)
        if data[central + 46 : central + 46 + n] == name.encode():
            break
        central += 46 + n + m + k
    return local, central, local + 30 + name_len + extra_len, info.compress_size


def set_zip_field(data, name, field, value):
    """``data`` with a 2-byte field of member ``name`` set in both zip headers: ``"flags"`` or ``"method"``."""
    local, central, _, _ = _entry(data, name)
    out = bytearray(data)
    at_local, at_central = {"flags": (_LOCAL_FLAGS, _CENTRAL_FLAGS), "method": (_LOCAL_METHOD, _CENTRAL_METHOD)}[field]
    struct.pack_into("<H", out, local + at_local, value)
    struct.pack_into("<H", out, central + at_central, value)
    return bytes(out)


def set_member_byte(data, name, index, value):
    """``data`` with byte ``index`` of the stored (compressed) data of member ``name`` set to ``value``."""
    _, _, start, size = _entry(data, name)
    if not 0 <= index < size:
        raise IndexError(f"member {name!r} stores {size} bytes")
    out = bytearray(data)
    out[start + index] = value
    return bytes(out)


def member_span(data, name):
    """(offset, length) of the stored bytes of member ``name`` in ``data``."""
    _, _, start, size = _entry(data, name)
    return start, size
