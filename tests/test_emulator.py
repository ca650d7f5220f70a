"""The CPU stand-in for cupy (tests/emulated_device.py) behaves as cupy 14
does where nbgpu's device paths could tell: no implicit host conversion,
array_api_compat's cupy implementations, cupyx's synchronisations; and no
product module knows it exists."""

from __future__ import annotations

from pathlib import Path

import emulated_device as emu
import numpy as np
import pytest
import scipy.sparse as sp

import nbgpu
from nbgpu._array.namespace import device_library, get_namespace, is_host_array, to_numpy

IMPLICIT = "Implicit conversion to a NumPy array is not allowed"


def test_device_arrays_are_not_numpy_arrays():
    a = emu.cupy.asarray([1.0, 2.0])
    assert not isinstance(a, np.ndarray)
    assert not is_host_array(a)
    for convert in (np.asarray, np.array, np.asanyarray, lambda x: x.__array__()):
        with pytest.raises(TypeError, match=IMPLICIT):
            convert(a)
    host = a.get()
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, [1.0, 2.0])
    np.testing.assert_array_equal(to_numpy(a), [1.0, 2.0])
    assert get_namespace(a) is emu.xp


def test_numpy_functions_and_operators_stay_on_the_device():
    a = emu.cupy.asarray([[1.0, -2.0], [3.0, 4.0]])
    for result in (a + 1, 2 * a, -a, a @ a, np.exp(a), np.sum(a, axis=0), a.sum(), a.T, a[0], a.reshape(4)):
        assert isinstance(result, emu.DeviceArray)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(2)
    with pytest.raises(TypeError, match="Unsupported type"):
        np.ones(2) * a
    assert not hasattr(a, "tobytes")  # only the ndarray methods cupy has (and nbgpu may use)
    assert emu.xp.asarray(a) is a and a.astype(a.dtype, copy=False) is a


def test_reading_values_back_is_counted():
    a = emu.cupy.asarray([1.0, 0.0, 3.0])
    with emu.count_syncs() as log:
        bool(a[0])
        float(a[1])
        a[a > 0]  # the number of True values is read back
        a[a > 1] = 0.0
        emu.xp.nonzero(a)
        emu.xp.unique_values(a)
    assert log.total == 6, log


def test_clip_is_array_api_compat_masked_assignment():
    """array_api_compat.cupy's clip assigns through boolean masks: two
    synchronisations and an upload per bound (the bound as an array)."""
    a = emu.xp.asarray([-1.0, 0.5, 2.0])
    with emu.count_syncs() as log:
        out = emu.xp.clip(a, 0.0, 1.0)
    np.testing.assert_array_equal(out.get(), [0.0, 0.5, 1.0])
    assert log.total == 4, log
    assert sum(log.uploads.values()) == 2, log
    with emu.count_syncs() as log:
        emu.xp.minimum(emu.xp.maximum(a, 0.0), 1.0)  # the sync-free spelling
    assert log.total == 0, log


def test_sparse_constructor_from_arrays_synchronises_and_leaves_the_flag_unknown():
    host = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    parts = tuple(emu.cupy.asarray(v) for v in (host.data, host.indices.astype(np.int32), host.indptr.astype(np.int32)))
    with emu.count_syncs() as log:
        X = emu.cupyx.scipy.sparse.csr_matrix(parts, shape=host.shape)
    assert log.total == 1, log  # both ends of indptr, read in one copy
    with emu.count_syncs() as log:
        assert X.has_canonical_format
        assert X.has_canonical_format  # computed once, then cached
    assert log.total == 1, log


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_max_along_an_axis_synchronises(fmt):
    host = sp.random(6, 5, density=0.5, format=fmt, random_state=1)
    X = getattr(emu.cupyx.scipy.sparse, f"{fmt}_matrix")(host)
    with emu.count_syncs() as log:
        got = X.max(axis=0)
    np.testing.assert_array_equal(got.toarray().get(), host.max(axis=0).toarray())
    # Two cupy.compress of the result, and the canonical flag of the CSC
    # matrix reduced: unknown after a copy from the host or cuSPARSE's csr2csc.
    assert log.total == 3, log


def test_scatters_are_ufunc_at_and_cupyxs_warn_as_in_cupy_14():
    out = emu.cupy.zeros(4)
    emu.cupy.add.at(out, emu.cupy.asarray([1, 1, 3]), emu.cupy.asarray([0.5, 0.25, 2.0]))
    emu.cupy.maximum.at(out, emu.cupy.asarray([0, 3]), emu.cupy.asarray([1.0, 1.5]))
    np.testing.assert_array_equal(out.get(), [1.0, 0.75, 0.0, 2.0])
    with pytest.raises(TypeError, match="device array"):
        emu.cupy.add.at(np.zeros(4), emu.cupy.asarray([1]), emu.cupy.asarray([1.0]))
    for name, replacement in (("scatter_add", "add"), ("scatter_max", "maximum")):
        with pytest.warns(DeprecationWarning, match=f"cupy.{replacement}.at"):
            getattr(emu.cupyx, name)(out, emu.cupy.asarray([0]), emu.cupy.asarray([1.0]))


def test_the_registration_hook_is_the_only_link():
    assert device_library(emu.xp) is emu.LIBRARY
    package = Path(nbgpu.__file__).parent
    naming = [
        str(p.relative_to(package)) for p in package.rglob("*.py") if "emulated_device" in p.read_text(encoding="utf-8")
    ]
    assert naming == []
    assert not (package / "_array" / "emulated_device.py").exists()  # not shipped in the wheel
