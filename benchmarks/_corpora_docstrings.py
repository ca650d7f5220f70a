"""Worker for ``corpora.py``: collect the docstrings of installed Python modules.

Run as a separate process (``python _corpora_docstrings.py OUT.json TOP ...``,
with ``PYTHONHASHSEED`` fixed so that set-ordered texts come out the same)
so that the imports it makes never reach the caller.  It only uses the standard
library itself.  For each top-level name (``stdlib`` stands for the standard
library) it lists the public modules from the files on disk, without importing
anything, then imports them one by one in sorted order, each under a time limit
and with stdout/stderr sent to /dev/null, and records one row per docstring:

    [module where found, qualified name, kind, defining module, cleaned docstring]

Objects are taken from a module's namespace only when their ``__module__``
belongs to the same top-level package (so re-exports of numpy in scipy, or of
``collections.abc`` in ``typing``, are not counted twice), and methods and
properties from a class's own ``__dict__`` (inherited ones are skipped).  The
parent process assigns labels and dedupes.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import pkgutil
import signal
import sys
import time
import warnings

# Modules never imported: GUI, browser, printing on import, interpreter
# internals, test suites, slow-to-import or side-effect heavy ones.
SKIP_PARTS = {
    "test", "tests", "testing_utils", "conftest", "setup", "__main__",
    "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo",
    "ensurepip", "pydoc_data", "lib2to3", "venv", "xxsubtype",
    "backends", "benchmarks", "benchmark", "examples", "sandbox",
}
SKIP_STDLIB = {"__phello__", "__hello__", "_pyrepl"}
MODULE_TIMEOUT_S = 20


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - signal handler
    raise _Timeout()


def _public(name: str) -> bool:
    return all(not p.startswith("_") and p not in SKIP_PARTS for p in name.split("."))


def _walk_package(top: str) -> list[str]:
    """Public module names under ``top`` found on disk (no imports)."""
    spec = importlib.util.find_spec(top)
    if spec is None:
        return []
    names = [top]
    if spec.submodule_search_locations:
        stack = [(top, list(spec.submodule_search_locations))]
        while stack:
            prefix, paths = stack.pop()
            for info in pkgutil.iter_modules(paths, prefix + "."):
                if not _public(info.name):
                    continue
                names.append(info.name)
                if info.ispkg:
                    sub = os.path.join(info.module_finder.path, info.name.rsplit(".", 1)[1])
                    stack.append((info.name, [sub]))
    return sorted(set(names))


def _stdlib_tops() -> list[str]:
    return sorted(n for n in sys.stdlib_module_names
                  if _public(n) and n not in SKIP_STDLIB)


def _top_of(mod: str, stdlib: set[str]) -> str:
    top = mod.split(".")[0]
    return "stdlib" if top in stdlib or top == "builtins" else top


def _clean(doc) -> str | None:
    if not isinstance(doc, str):
        return None
    doc = inspect.cleandoc(doc).strip()
    return doc or None


def _owner(obj) -> str | None:
    owner = getattr(obj, "__module__", None)
    if isinstance(owner, str):
        return owner
    cls = getattr(obj, "__objclass__", None)  # slot wrappers, method descriptors
    owner = getattr(cls, "__module__", None)
    return owner if isinstance(owner, str) else None


def _accept(owner: str | None, found: str, group: str, stdlib: set[str]) -> bool:
    if owner is None:
        return False
    top = owner.split(".")[0]
    if group == "stdlib":
        return top in stdlib or top == "builtins"
    return top == group


def _rows_for_module(modname: str, module, group: str, stdlib: set[str]) -> list[list[str]]:
    rows = []
    doc = _clean(getattr(module, "__doc__", None))
    if doc:
        rows.append([modname, modname, "module", modname, doc])
    try:
        items = sorted(vars(module).items())
    except TypeError:
        return rows
    for name, obj in items:
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        is_class = inspect.isclass(obj)
        if is_class or inspect.isroutine(obj):
            owner = _owner(obj)
            doc = _clean(getattr(obj, "__doc__", None))
            kind = "class" if is_class else "function"
        else:
            # instances with a docstring of their own: numpy/scipy ufuncs,
            # scipy.stats distributions, typing special forms ...
            owner = _owner(type(obj))
            doc = _clean(getattr(obj, "__doc__", None))
            if doc is None or doc == _clean(getattr(type(obj), "__doc__", None)):
                continue
            owner = modname if owner is not None else None
            kind = "object"
        if not _accept(owner, modname, group, stdlib):
            continue
        if doc:
            rows.append([modname, f"{modname}.{name}", kind, owner, doc])
        if not is_class:
            continue
        # members, inherited ones included when their defining class belongs
        # to the same group (duplicates are dropped by the caller)
        try:
            mro = inspect.getmro(obj)
        except Exception:  # noqa: BLE001
            continue
        done = set()
        for base in mro:
            base_owner = _owner(base)
            if base is object or not _accept(base_owner, modname, group, stdlib):
                continue
            try:
                members = sorted(vars(base).items())
            except TypeError:
                continue
            for mname, member in members:
                if mname.startswith("_") or mname in done:
                    continue
                done.add(mname)
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if not (inspect.isroutine(member) or isinstance(member, property)
                        or inspect.isdatadescriptor(member)):
                    continue
                mdoc = _clean(getattr(member, "__doc__", None))
                if mdoc:
                    rows.append([modname, f"{modname}.{name}.{mname}", "member",
                                 base_owner, mdoc])
    return rows


def main(argv: list[str]) -> int:
    out_path, tops = argv[0], argv[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != here]
    warnings.simplefilter("ignore")
    stdlib = set(sys.stdlib_module_names)
    signal.signal(signal.SIGALRM, _alarm)
    rows: list[list[str]] = []
    skipped: list[str] = []
    timing: dict[str, float] = {}
    versions: dict[str, str] = {"python": sys.version.split()[0]}
    sink = io.StringIO()
    for top in tops:
        t0 = time.perf_counter()
        if top == "stdlib":
            names = []
            for t in _stdlib_tops():
                names.extend(_walk_package(t))
        else:
            names = _walk_package(top)
            if not names:
                skipped.append(f"{top} (not installed)")
                continue
        group = top
        for modname in names:
            signal.alarm(MODULE_TIMEOUT_S)
            try:
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    module = importlib.import_module(modname)
                    rows.extend(_rows_for_module(modname, module, group, stdlib))
            except _Timeout:
                skipped.append(f"{modname} (timeout)")
            except BaseException as exc:  # noqa: BLE001 - anything an import may raise
                skipped.append(f"{modname} ({type(exc).__name__})")
            finally:
                signal.alarm(0)
                sink.seek(0)
                sink.truncate()
        if top != "stdlib":
            mod = sys.modules.get(top)
            versions[top] = str(getattr(mod, "__version__", "?"))
        timing[top] = round(time.perf_counter() - t0, 2)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({"rows": rows, "skipped": skipped, "timing": timing,
                   "versions": versions}, fh, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
