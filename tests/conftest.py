"""The backend / device / dtype grid every test runs over.

``NBGPU_TEST_BACKENDS`` (comma-separated) names the backends that must run;
a requested backend that cannot be used fails the run instead of skipping,
so a GPU job can never pass by silently testing nothing. Without the
variable, every CPU backend whose library is installed runs.

Backends: numpy, numpy_readonly (catches writes into inputs),
array_api_strict (default device), array_api_strict_device1 (a second
device, so device bugs show on a CPU-only machine), torch (CPU),
device_emulated (the device code paths of cupy and cupyx, run by numpy and
scipy.sparse standing in for them: ``tests/emulated_device.py``),
cupy, torch_cuda.
"""

from __future__ import annotations

import importlib
import os
import site
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

ALL_BACKENDS = (
    "numpy",
    "numpy_readonly",
    "array_api_strict",
    "array_api_strict_device1",
    "torch",
    "device_emulated",
    "cupy",
    "torch_cuda",
)
CPU_BACKENDS = ALL_BACKENDS[:6]
GPU_BACKENDS = ("cupy", "torch_cuda")
_LIBRARY = {
    "numpy": "numpy",
    "numpy_readonly": "numpy",
    "array_api_strict": "array_api_strict",
    "array_api_strict_device1": "array_api_strict",
    "torch": "torch",
    "device_emulated": "emulated_device",  # tests/emulated_device.py (registers itself with the array layer)
    "cupy": "cupy",
    "torch_cuda": "torch",
}


@dataclass
class Backend:
    """One cell of the grid: how to make arrays of a namespace on a device."""

    name: str
    xp: object
    device: object

    def asarray(self, a, dtype=None):
        """A numpy array (or list) as an array of this backend."""
        a = np.asarray(a)
        if dtype is not None:
            a = a.astype(dtype)
        if self.name == "numpy":
            return a.copy()
        if self.name == "numpy_readonly":
            a = a.copy()
            a.flags.writeable = False
            return a
        return self.xp.asarray(a, device=self.device)

    def sparse(self, a, fmt="csr"):
        """A sparse matrix of this backend's sparse library (numpy/cupy only)."""
        if self.name.startswith("numpy"):
            return sp.csr_matrix(np.asarray(a)).asformat(fmt)
        if self.name in ("cupy", "device_emulated"):
            from nbgpu._array.namespace import device_library

            csp = device_library(self.xp).cupyx.scipy.sparse
            return getattr(csp, f"{fmt}_matrix")(sp.csr_matrix(np.asarray(a)).asformat(fmt))
        pytest.skip(f"{self.name} has no sparse matrices")

    @property
    def has_sparse(self):
        return self.name in ("numpy", "numpy_readonly", "device_emulated", "cupy")


def requested_backends():
    raw = os.environ.get("NBGPU_TEST_BACKENDS", "").strip()
    if not raw:
        return None
    names = [n.strip() for n in raw.split(",") if n.strip()]
    unknown = sorted(set(names) - set(ALL_BACKENDS))
    if unknown:
        raise pytest.UsageError(f"NBGPU_TEST_BACKENDS names unknown backends {unknown}; known: {ALL_BACKENDS}")
    return names


# Warnings a GPU library gave while it was imported (shown in the header).
IMPORT_WARNINGS: list[str] = []


def _import(module):
    """Import a backend's library. cupy's import-time notes about the CUDA
    installation (e.g. "CUDA path could not be detected") say nothing about
    nbgpu: recorded and shown in the header, not turned into errors by
    ``filterwarnings = error``; a library that fails to work still fails below."""
    if module not in ("cupy", "torch"):
        return importlib.import_module(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib = importlib.import_module(module)
        if module == "cupy":
            importlib.import_module("cupyx.scipy.sparse")
    IMPORT_WARNINGS.extend(f"{module}: {w.category.__name__}: {w.message}" for w in caught)
    return lib


def _make_backend(name):
    """A usable Backend, or raise ImportError/RuntimeError saying why not."""
    lib = _import(_LIBRARY[name])
    if name.startswith("numpy"):
        import array_api_compat.numpy as xp

        return Backend(name, xp, "cpu")
    if name.startswith("array_api_strict"):
        device = lib.Device("device1") if name.endswith("device1") else lib.Device("CPU_DEVICE")
        return Backend(name, lib, device)
    if name == "device_emulated":
        return Backend(name, lib.xp, lib.DEVICE)
    if name == "torch":
        import array_api_compat.torch as xp

        return Backend(name, xp, lib.device("cpu"))
    if name == "torch_cuda":
        import array_api_compat.torch as xp

        if not lib.cuda.is_available():
            raise RuntimeError("torch reports no CUDA device")
        # The device a tensor reports (cuda:0), not torch.device("cuda"), whose
        # index None compares unequal to it.
        return Backend(name, xp, lib.empty(0, device="cuda").device)
    if name == "cupy":
        import array_api_compat.cupy as xp

        with warnings.catch_warnings(record=True) as caught:  # the first kernel finds the CUDA installation
            warnings.simplefilter("always")
            float(lib.zeros(1).sum())  # fails here when no GPU/driver is usable
        IMPORT_WARNINGS.extend(f"cupy: {w.category.__name__}: {w.message}" for w in caught)
        return Backend(name, xp, lib.cuda.Device())
    raise AssertionError(name)


_BACKENDS: dict[str, Backend | None] = {}


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "fast_path(name, ...): checks what fast path `name` itself does (keeps sparse, syncs, "
        "copies); skipped where NBGPU_REFERENCE sends it to its reference",
    )
    names = requested_backends()
    if names is None:
        candidates, required = CPU_BACKENDS, ()
    else:
        candidates, required = names, names
    for name in candidates:
        try:
            _BACKENDS[name] = _make_backend(name)
        except Exception as exc:
            if name in required:
                raise pytest.UsageError(f"backend {name!r} was requested but cannot run: {exc!r}") from exc


def pytest_report_header(config):
    from nbgpu._array import paths

    lines = [f"nbgpu backends: {', '.join(active_backends())}"]
    if paths.reference_paths():
        lines.append(f"nbgpu reference paths (NBGPU_REFERENCE): {', '.join(sorted(paths.reference_paths()))}")
    lines += [f"import warning (not an error): {w}" for w in IMPORT_WARNINGS]
    return lines


def pytest_collection_modifyitems(config, items):
    """Tests marked ``gpu`` run where the cupy backend runs; elsewhere they are
    skipped, saying so (a requested cupy that cannot run already failed).
    Tests marked ``fast_path(name)`` are skipped while ``name`` runs its reference."""
    from nbgpu._array import paths

    gpu = "cupy" in active_backends()
    skip = pytest.mark.skip(reason="needs cupy and a CUDA GPU: request NBGPU_TEST_BACKENDS=cupy (ci/gpu.sh does)")
    referenced = paths.reference_paths()
    for item in items:
        if not gpu and "gpu" in item.keywords:
            item.add_marker(skip)
        for mark in item.iter_markers("fast_path"):
            names = referenced.intersection(mark.args)
            if names:
                item.add_marker(pytest.mark.skip(reason=f"NBGPU_REFERENCE: {', '.join(sorted(names))} runs its reference"))


def active_backends():
    return [n for n, b in _BACKENDS.items() if b is not None]


def backend_named(name):
    """The Backend of an active backend name (for tests parametrized by hand)."""
    return _BACKENDS[name]


def pytest_generate_tests(metafunc):
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", active_backends(), indirect=True)


@pytest.fixture
def backend(request):
    """The namespace/device under test (see the module docstring)."""
    return _BACKENDS[request.param]


@pytest.fixture(params=["float32", "float64"])
def dtype(request):
    """Input float dtype."""
    return request.param


@pytest.fixture(scope="session")
def stdlib_docstrings(tmp_path_factory):
    """``(texts, labels)``: the whole corpus of ``nbgpu.datasets.load_stdlib_docstrings()``,
    built once per run (it parses the standard library's sources: 7 s of CPU on the team's
    2-core machine) for the tests that read it (labels read-only; do not change the list).
    Under pytest-xdist the first worker to ask builds it and the others read its copy
    (:func:`built_once_per_run`): another process's build, as a later run's would be."""
    from nbgpu.datasets import load_stdlib_docstrings

    texts, labels = built_once_per_run(tmp_path_factory, "stdlib-docstrings", load_stdlib_docstrings)
    labels.flags.writeable = False
    return texts, labels


def built_once_per_run(tmp_path_factory, name, build):
    """``build()`` once for all the pytest-xdist workers of this run: the first to ask builds
    it and pickles it into the run's temporary folder (under a lock), the others unpickle
    that. Outside xdist (no folder is the run's alone) it is simply built."""
    import pickle

    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build()
    import fcntl

    path = tmp_path_factory.getbasetemp().parent / f"{name}.pickle"  # the run's folder, above each worker's
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = build()
        path.with_suffix(".partial").write_bytes(pickle.dumps(value))
        path.with_suffix(".partial").rename(path)
        return value


def to_numpy(a):
    """Any array (or sparse matrix) as numpy, for comparisons."""
    from nbgpu._array.namespace import to_numpy as tn

    if sp.issparse(a):
        return a.toarray()
    return np.asarray(tn(a)) if not isinstance(a, (list, tuple)) else np.asarray(a)


def assert_namespace(a, backend):
    """``a`` is an array of the backend's namespace on its device."""
    from nbgpu._array.namespace import get_device, get_namespace

    assert get_namespace(a) is get_namespace(backend.asarray([0.0]))
    device = get_device(a)
    assert same_device(device, backend.device), f"expected an array on {backend.device!r}, got one on {device!r}"


def _canonical_device(device):
    """A torch device as the tensors made on it report it: torch compares the
    index, and ``torch.device("cuda")`` (index None, the current device) is
    unequal to the ``cuda:0`` its tensors report, which the Array API calls the
    same device. Other libraries' devices are as they are."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(device, torch.device):
        try:
            return torch.empty(0, device=device).device
        except RuntimeError:  # no such device here: nothing to compare but its name
            return device
    return device


def same_device(a, b):
    """Whether ``a`` and ``b`` name the same device, as the Array API compares them."""
    return a == b or _canonical_device(a) == _canonical_device(b)


# --------------------------------------------------------------------------- #
# Subprocesses
# --------------------------------------------------------------------------- #
REPO = Path(__file__).resolve().parents[1]
# nbgpu's run-time dependencies (pyproject.toml), by import name.
DEPENDENCIES = ("numpy", "scipy", "sklearn", "array_api_compat")


def _dependency_paths():
    """The entries of this interpreter's sys.path that hold nbgpu's
    dependencies but that a fresh interpreter would not find by itself (not
    a site-packages folder of this interpreter)."""
    fresh = {os.path.realpath(p) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    found = []
    for name in DEPENDENCIES:
        module = sys.modules.get(name) or importlib.import_module(name)
        folder = os.path.dirname(os.path.dirname(os.path.realpath(module.__file__)))
        if folder not in fresh and folder not in found:
            found.append(folder)
    return found


def subprocess_env(base=None, *, also=(), **extra):
    """The environment of a Python subprocess that runs this checkout's nbgpu.

    ``base`` (default ``os.environ``) with the repository first on PYTHONPATH,
    then the folders ``also``, then every entry already there (ci/gpu.sh
    installs array-api-compat & co. with ``--target`` into a folder on
    PYTHONPATH: setting PYTHONPATH to the repository alone lost them), then the
    folders this interpreter found nbgpu's dependencies in that a fresh one
    would not; ``extra`` variables last. The tests' one way to set PYTHONPATH
    (tests/test_gpu_helpers.py holds them to it).
    """
    env = dict(os.environ if base is None else base)
    # Not an xdist worker's variables: pytest-benchmark in a pytest subprocess
    # would take them for xdist and warn, an error under the suite's filter.
    env = {k: v for k, v in env.items() if not k.startswith("PYTEST_XDIST_")}
    given = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]  # no "": it would add the cwd
    entries = [str(REPO), *map(str, also), *given, *_dependency_paths()]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(entries))  # in order, once each
    env.update(extra)
    return env


@pytest.fixture
def run(capsys, monkeypatch):
    """``run(*args) -> (status, stdout, stderr)``: the ``nbgpu`` command in-process (NBGPU_DEBUG unset)."""
    from nbgpu._app.cli import main

    monkeypatch.delenv("NBGPU_DEBUG", raising=False)

    def run(*args):
        status = main([str(a) for a in args])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def wait_until_it_waits_for_input(proc, writer, timeout=120):
    """Return once the command ``proc`` has read all that its FIFO ``writer`` holds and has
    used no CPU for 0.2 s with none of its threads running: it has done what it could with
    what it got and waits for more (a fixed sleep waited 3 s, most of it idle, and under load
    could end before the command had started). Without Linux's /proc, after 3 s."""
    import array
    import fcntl
    import termios

    task = Path(f"/proc/{proc.pid}/task")
    if not task.is_dir():
        time.sleep(3)
        return

    def state():
        unread = array.array("i", [0])
        fcntl.ioctl(writer.fileno(), termios.FIONREAD, unread)
        try:
            fields = [(t / "stat").read_text().rsplit(")", 1)[1].split() for t in task.iterdir()]
        except (FileNotFoundError, ProcessLookupError):  # a thread ended while read: look again
            return None
        running = any(f[0] == "R" for f in fields)
        ticks = sum(int(f[11]) + int(f[12]) for f in fields)  # utime + stime of each thread
        return None if unread[0] or running else ticks

    deadline, before = time.monotonic() + timeout, None
    while proc.poll() is None:
        now = state()
        if now is not None and now == before:
            return
        if time.monotonic() > deadline:
            proc.kill()
            _out, err = proc.communicate(timeout=60)
            pytest.fail(f"the command never waited for more input in {timeout} s: {err[-3000:]}")
        before = now
        time.sleep(0.2)


def fifo_writer(fifo, proc, timeout=120):
    """``fifo`` opened for writing once the command ``proc`` opens it to read;
    the test fails with the command's own words if it ends first (a blocking
    open would wait for ever)."""
    import errno
    import fcntl

    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        else:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            return os.fdopen(fd, "wb")
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            _out, err = proc.communicate(timeout=60)
            pytest.fail(f"the command never read {fifo} (status {proc.returncode}): {err[-3000:]}")
        time.sleep(0.05)
