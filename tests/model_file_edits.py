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
_LOCAL_FLAGS, _LOCAL_METHOD, _LOCAL_SIZE = 6, 8, 22
_CENTRAL_FLAGS, _CENTRAL_METHOD, _CENTRAL_SIZE = 8, 10, 24


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


def put(members, header, key, array):
    """Set member ``key`` to ``array`` and list it in ``header`` with its checksum (a consistent forgery)."""
    members[key] = array
    header["arrays"][key] = listed(array)


def put_sparse(members, header, name, shape, indices, values):
    """Store statistics entry ``name`` as the entries ``values`` at the flat ``indices`` of an array of ``shape``."""
    key = f"stats.{name}"
    members.pop(key, None)
    header["arrays"].pop(key, None)
    put(members, header, f"{key}.indices", indices)
    put(members, header, f"{key}.values", values)
    header["stats"]["dict"][name] = {"sparse": {"shape": list(shape), "indices": f"{key}.indices", "values": f"{key}.values"}}


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
    with zipfile.ZipFile(out, "w") as z:
        for name, data in entries.items():
            # A fixed date: the same entries always make the same bytes.
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data, compress_type=method)
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


def set_zip_size(data, name, size):
    """``data`` with the uncompressed size of member ``name`` (not zip64) set to ``size`` in both zip headers."""
    local, central, _, _ = _entry(data, name)
    out = bytearray(data)
    struct.pack_into("<I", out, local + _LOCAL_SIZE, size)
    struct.pack_into("<I", out, central + _CENTRAL_SIZE, size)
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


# --------------------------------------------------------------------------- #
# Random mutations (the fuzz test and the fuzz target)
# --------------------------------------------------------------------------- #
class Picker:
    """The random choices a mutation makes, from any source of integers.

    ``integer(lo, hi)`` (inclusive) is the only primitive: hypothesis draws
    it (``lambda lo, hi: data.draw(st.integers(lo, hi))``), atheris consumes
    it from its input, a survey takes it from ``random.Random``.
    """

    def __init__(self, integer):
        self.integer = integer

    def choice(self, options):
        return options[self.integer(0, len(options) - 1)]

    def raw(self, n):
        return bytes(self.integer(0, 255) for _ in range(n))


_DESCRS = ("<f8", "<f4", "<i8", "|u1", "|b1", "<U3", "|S2", "<M8[D]", "|O", "|V8", ">f8", "<c16", "f8", "<f8,<i4", "")
_SHAPES = ((), (0,), (3,), (3, 6), (2, 3, 4), (10**12,), (-1,), (2**31, 2**31), (1.5,))
_JSON_VALUES = (
    None, True, False, 0, 1, -1, 2, 3, 6, 2**31, 2**63, 10**400, 0.5, -0.0, float("nan"), float("inf"), "",
    "float32", "float64", "MultinomialNB", "ColumnwiseNB", "Pipeline", "<f8", "|O", "classes", "stats.class_count",
    [], [1, 2], [[0, 1], [1, 0]], {}, {"value": 1}, {"array": "classes"}, {"list": []}, {"slice": [0, None, None]},
    {"sparse": {"shape": [3, 6], "indices": "classes", "values": "classes"}}, "(\\w+\\s?)+$", "filename",
)


def _flip_bytes(data, pick):
    out = bytearray(data)
    for _ in range(pick.integer(1, 8)):
        out[pick.integer(0, len(out) - 1)] ^= pick.integer(1, 255)
    return bytes(out)


def _truncate(data, pick):
    return data[: pick.integer(0, len(data) - 1)]


def _zip_field(data, pick):
    name = pick.choice(sorted(raw_members(data)))
    field = pick.choice(("flags", "method"))
    value = pick.choice((1, 8, 0x20, 0x40, 0x800, 12, 14, 99, 0xFFFF, pick.integer(0, 0xFFFF)))
    return set_zip_field(data, name, field, value)


def _member_bytes(data, pick):
    members = raw_members(data)
    name = pick.choice(sorted(members))
    kind = pick.integer(0, 3)
    if kind == 0:
        content = pick.raw(pick.integer(0, 64))
    elif kind == 1:
        content = members[name][: pick.integer(0, len(members[name]))]
    else:
        descr, shape = pick.choice(_DESCRS), pick.choice(_SHAPES)
        order = pick.choice(("False", "True", "1", "None"))
        text = f"{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}"
        if kind == 3:
            text = text[: pick.integer(0, len(text))]
        content = npy_with_header(text + "\n", pick.raw(pick.integer(0, 64)))
    members[name] = content
    return raw_archive(members, compress=bool(pick.integer(0, 1)))


def _members_set(data, pick):
    members = raw_members(data)
    names = sorted(members)
    kind = pick.integer(0, 2)
    if kind == 0:
        del members[pick.choice(names)]
    elif kind == 1:
        members[pick.choice((*names, "x.npy", "header", "classes.npy.npy"))] = npy_bytes(np.arange(pick.integer(0, 5)))
    else:  # stored instead of deflated: still a valid model file
        return raw_archive(members, compress=False)
    return raw_archive(members)


def _paths(node, path=()):
    """Every path into a JSON value (dict keys, list indices), the value's own included."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*path, i))


def _header_edit(data, pick):
    members = raw_members(data)
    npy = io.BytesIO(members["header.npy"])
    text = np.lib.format.read_array(npy, allow_pickle=False).tobytes()
    head = json.loads(text)
    path = pick.choice(list(_paths(head))[1:])
    parent = head
    for step in path[:-1]:
        parent = parent[step]
    if isinstance(parent, dict) and pick.integer(0, 3) == 0:
        del parent[path[-1]]
    else:
        parent[path[-1]] = pick.choice(_JSON_VALUES)
    members["header.npy"] = npy_bytes(np.frombuffer(json.dumps(head).encode(), dtype=np.uint8))
    return raw_archive(members)


def _array_edit(data, pick):
    """A member replaced by another array, listed with its checksum: only the model's own checks can refuse it."""
    members = raw_members(data)
    head = json.loads(np.lib.format.read_array(io.BytesIO(members["header.npy"]), allow_pickle=False).tobytes())
    key = pick.choice(sorted(head["arrays"]))
    old = np.lib.format.read_array(io.BytesIO(members[f"{key}.npy"]), allow_pickle=False)
    kind = pick.integer(0, 3)
    if kind == 0 and old.size and old.dtype.kind in "fiu":  # one value changed
        new = old.copy()
        values = (np.nan, np.inf, -np.inf, -1.0, 0.0, 1e308) if old.dtype.kind == "f" else (0, -1, 1, 255, 2**40)
        new.reshape(-1)[pick.integer(0, old.size - 1)] = np.array(pick.choice(values)).astype(old.dtype)
    elif kind == 1:  # another shape
        new = np.resize(old, pick.choice(((0,), (1,), (3,), (3, 6), (6, 3), (3, 7), (2, 2, 2)))) if old.size else np.zeros(3)
    elif kind == 2:  # another dtype
        new = np.zeros(old.shape, dtype=pick.choice(("<f4", "<i8", "|u1", "|b1", "<U2", "<M8[s]", "<c8")))
    else:  # sorted the other way (labels, indices)
        new = old[::-1].copy() if old.ndim else old
    members[f"{key}.npy"] = npy_bytes(new)
    head["arrays"][key] = listed(new)
    members["header.npy"] = npy_bytes(np.frombuffer(json.dumps(head).encode(), dtype=np.uint8))
    return raw_archive(members)


MUTATIONS = (_flip_bytes, _truncate, _zip_field, _member_bytes, _members_set, _header_edit, _array_edit)


def assign(index, value):
    """A change for ``put``: ``a[index] = value``, returning ``a``."""

    def change(a):
        a[index] = value
        return a

    return change
