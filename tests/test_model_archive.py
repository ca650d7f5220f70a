"""The zip container of model files as written (``nbgpu/_interop/model_archive.py``).

Members are deflated in pieces on all cores and the zip records are written
by nbgpu: every zip reader must read the file (zipfile, ``np.load``, the
strict reader of model files), each member must hold the bytes ``np.save``
writes, and the file must not depend on the threads.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from nbgpu._interop import model_archive
from nbgpu._interop.model_archive import Archive, write_archive


def arrays():
    rng = np.random.default_rng(0)
    return {
        "header": np.frombuffer(b'{"format": "x"}', dtype=np.uint8),
        "scalar": np.array(0.5),
        "empty": np.zeros((0, 3), dtype=np.int32),
        "labels": np.array(["spam", "ham", "égal"]),
        "flags": np.array([True, False, True]),
        "dates": np.array(["2026-11-29", "1980-01-01"], dtype="datetime64[D]"),
        "big_endian": np.arange(7, dtype=">f8"),
        "fortran": np.asfortranarray(rng.random((30, 20))),
        "counts": rng.integers(0, 3, 300_000).astype(np.float64),  # many pieces, compressible
        "noise": rng.integers(0, 2**32, 50_000, dtype=np.uint64),  # little to compress
    }


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 4 KiB, three at a time (the real ones: 1 MiB, 16)."""
    monkeypatch.setattr(model_archive, "_PIECE", 4096)
    monkeypatch.setattr(model_archive, "_PIECES_AT_ONCE", 3)


def npy_bytes(array):
    out = io.BytesIO()
    np.save(out, np.asarray(array, order="C"), allow_pickle=False)
    return out.getvalue()


@pytest.mark.parametrize("pieces", ["real", "small"])
def test_every_reader_reads_what_np_save_writes(tmp_path, request, pieces):
    if pieces == "small":
        request.getfixturevalue("small_pieces")
    path = tmp_path / "m.nbgpu"
    members = arrays()
    write_archive(path, members)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None  # every CRC
        assert [info.filename for info in z.infolist()] == [f"{name}.npy" for name in members]
        for name, array in members.items():
            assert z.read(f"{name}.npy") == npy_bytes(array)
            assert z.getinfo(f"{name}.npy").compress_type == zipfile.ZIP_DEFLATED
    with np.load(path) as loaded:
        for name, array in members.items():
            assert_array_equal(loaded[name], array)
    with Archive(path) as archive:
        for name, array in members.items():
            got = archive.read(name, np.asarray(array).dtype, np.shape(array))
            assert_array_equal(got, array)


@pytest.mark.fast_path("parallel_deflate")
def test_the_same_arrays_give_the_same_bytes_on_any_threads(tmp_path, small_pieces, monkeypatch):
    files = []
    for threads in ["1", "2", "3"]:
        monkeypatch.setenv("NBGPU_NUM_THREADS", threads)
        write_archive(tmp_path / f"{threads}.nbgpu", arrays())
        files.append((tmp_path / f"{threads}.nbgpu").read_bytes())
    assert files[0] == files[1] == files[2]


@pytest.mark.fast_path("parallel_deflate")
def test_as_small_as_one_deflate_stream(tmp_path):
    """Pieces primed with the bytes before them compress as one stream does."""
    members = {"counts": np.random.default_rng(1).integers(0, 3, 1_000_000).astype(np.float64)}
    write_archive(tmp_path / "m.nbgpu", members)
    one = io.BytesIO()
    with zipfile.ZipFile(one, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("counts.npy", npy_bytes(members["counts"]))
    assert (tmp_path / "m.nbgpu").stat().st_size <= 1.01 * len(one.getvalue())


@pytest.mark.fast_path("parallel_deflate")
def test_zip64_records(tmp_path, monkeypatch):
    """Sizes and offsets past 32 bits (here past 64 bytes) go to zip64 fields and records."""
    monkeypatch.setattr(model_archive, "_ZIP32", 64)
    path = tmp_path / "m.nbgpu"
    members = arrays()
    write_archive(path, members)
    data = path.read_bytes()
    assert b"PK\x06\x06" in data and b"PK\x06\x07" in data  # the zip64 end of the central directory, its locator
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        assert z.infolist()[-1].header_offset > 64
    with Archive(path) as archive:
        for name, array in members.items():
            assert_array_equal(archive.read(name, np.asarray(array).dtype, np.shape(array)), array)
