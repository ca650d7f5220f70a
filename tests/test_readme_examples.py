"""Every example of the README runs as it is, and prints what its comments say.

Each ```python block runs alone in a fresh interpreter (its own imports, a
temporary directory). A ``print(...)`` line whose comment states a value
(``print(x)  # [0 1]: ...``) must print that value: numbers agree to the
digits the comment shows, everything else exactly. A comment on a print line
that states no value fails the test, so no check is skipped silently. A block
may only import the libraries nbgpu installs, or those the README names
where the example stands (an extra such as ``".[dask]"`` or the package).
The shell example of "Command line" runs too, with ``nbgpu`` on the PATH.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import io
import json
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from conftest import subprocess_env

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CORE = {"numpy", "scipy", "sklearn", "array_api_compat", "nbgpu"}

# Runs a block, recording what every print call on every line printed.
RUNNER = r"""
import builtins, io, json, sys
if __name__ == "__main__":
    path, record = sys.argv[1], sys.argv[2]
    printed = []
    real_print = builtins.print

    def recording_print(*args, **kwargs):
        buf = io.StringIO()
        real_print(*args, **{**kwargs, "file": buf})
        printed.append([sys._getframe(1).f_lineno, buf.getvalue()])
        real_print(*args, **kwargs)

    builtins.print = recording_print
    source = open(path, encoding="utf-8").read()
    try:
        exec(compile(source, path, "exec"), {"__name__": "__main__", "__file__": path})
    finally:
        with open(record, "w") as f:
            json.dump(printed, f)
"""


def _blocks(language):
    """(line of the block in README.md, source, README text from the section heading to the block)."""
    found, heading = [], 0
    lines = README.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].startswith("#") and not lines[index].startswith("#!"):
            heading = index
        if lines[index].strip() == f"```{language}":
            end = lines.index("```", index + 1)
            found.append((index + 1, "\n".join(lines[index + 1 : end]) + "\n", "\n".join(lines[heading:index])))
            index = end
        index += 1
    return found


PYTHON = _blocks("python")


def _value_part(comment):
    """The value a comment states: its text up to a remark (``: ...``, `` = ...``
    or ``  (...)``) outside brackets and quotes."""
    depth, quote = 0, None
    for i, ch in enumerate(comment):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and (comment.startswith(": ", i) or comment.startswith(" = ", i) or comment.startswith("  (", i)):
            return comment[:i].strip()
    return comment.strip()


def _stated_values(source):
    """{(first line, last line) of a print(...) call: the value its comment states}."""
    comments = {t.start[0]: t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT}
    values = {}
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"):
            continue
        span = (node.lineno, node.end_lineno)
        found = [comments[n] for n in range(span[0], span[1] + 1) if n in comments]
        if not found:
            continue
        value = _value_part(found[-1].lstrip("#").strip())
        assert re.match(r"^(\[|\{|\(|'|-?\d|True|False)", value), (
            f"README line with print(...) has a comment that states no value: {found[-1]!r}"
        )
        values[span] = value
    return values


_TOKEN = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?|\[|\]|[^\s\[\]]+")


def _agree(expected, printed):
    want, got = _TOKEN.findall(expected), _TOKEN.findall(printed)
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        if re.fullmatch(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?", w):
            try:
                value = float(g)
            except ValueError:
                return False
            decimals = len(w.split(".")[1].split("e")[0]) if "." in w else 0
            if abs(value - float(w)) > 0.5 * 10.0**-decimals * (1 + 1e-9):
                return False
        elif w != g:
            return False
    return True


def _module_distributions():
    return md.packages_distributions()


def _extras():
    """``{extra: distribution names}`` of nbgpu's extras, from this checkout's
    pyproject.toml: the GPU machine runs nbgpu from the checkout, not
    installed, so ``importlib.metadata`` knows no nbgpu there."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: the installed distribution's metadata, where there is one
        try:
            requirements = md.requires("nbgpu") or []
        except md.PackageNotFoundError:
            pytest.skip("the README's extras are read from nbgpu's metadata on Python 3.10 (no tomllib), "
                        "and nbgpu is not installed as a distribution here")
        extras = {}
        for requirement in requirements:
            marker = re.search(r'extra == "([^"]+)"', requirement)
            if marker:
                extras.setdefault(marker.group(1), []).append(requirement)
    else:
        project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        extras = project.get("optional-dependencies", {})
    return {extra: {re.match(r"[A-Za-z0-9_.-]+", r).group(0).lower() for r in reqs} for extra, reqs in extras.items()}


def _named_distributions(text):
    """Distributions the README text names: packages, and the contents of extras like ``.[dask]``."""
    extras = _extras()
    named = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]+", text)}
    for extra in re.findall(r"\[([a-z0-9_,]+)\]", text):
        for name in extra.split(","):
            named |= extras.get(name, set())
    return named


@pytest.mark.parametrize(("line", "source", "context"), PYTHON, ids=[f"README.md:{b[0]}" for b in PYTHON])
def test_python_example(tmp_path, line, source, context):
    # Imports: nbgpu's own dependencies, the standard library, or what the README names there.
    tree = ast.parse(source)
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    private = [f"{n.module}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
               and any(part.startswith("_") for part in n.module.split("."))]
    assert private == [], f"README.md:{line} imports private modules {private}"
    distributions = _module_distributions()
    named = _named_distributions(context)
    for module in sorted(modules - CORE - set(sys.stdlib_module_names)):
        dists = {d.lower() for d in distributions.get(module, [module])}
        assert dists & named, f"README.md:{line} imports {module} but the README does not name {sorted(dists)} there"

    block = tmp_path / "example.py"
    block.write_text(source, encoding="utf-8")
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")
    record = tmp_path / "printed.json"
    env = subprocess_env()
    result = subprocess.run([sys.executable, "runner.py", str(block), str(record)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"README.md:{line}\n{result.stderr[-3000:]}"
    printed = json.loads(record.read_text())
    for (first, last), value in _stated_values(source).items():
        got = "".join(text for number, text in printed if first <= number <= last)
        assert _agree(value, got), f"README.md:{line + first}: the comment says {value!r}, it printed {got!r}"


def test_the_value_check_can_fail():
    assert _agree("[0.4286 0.5714]", "[0.42857143 0.57142857]\n")
    assert _agree("[[1.  2.25] [3.25 0.5 ]]", "[[1.   2.25]\n [3.25 0.5 ]]\n")
    assert not _agree("[0.4286 0.5714]", "[0.4285 0.5714]")
    assert not _agree("0.86", "0.53")
    assert not _agree("[1]", "[0]")
    assert not _agree("True", "False")
    assert _stated_values("print(1)  # 1: one\nprint(2)\nx = 3  # prose\nprint(4,\n      5)  # 4 5  (two)\n") == {
        (1, 1): "1", (4, 5): "4 5"}
    assert _value_part("{'alpha': 1.0} 0.9: best") == "{'alpha': 1.0} 0.9"
    with pytest.raises(AssertionError, match="states no value"):
        _stated_values("print(1)  # the number one\n")


def test_every_python_block_is_found():
    assert len(PYTHON) == README.count("```python") >= 10


def test_command_line_example(tmp_path):
    (section,) = [b for b in _blocks("bash") if b[2].startswith("## Command line")]
    _, script, _ = section
    shim = tmp_path / "bin" / "nbgpu"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nbgpu "$@"\n')
    shim.chmod(0o755)
    python = tmp_path / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    env = subprocess_env(PATH=f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "accuracy:" in result.stdout
    for name in ("digits.nbgpu", "confusion.png", "predictions.csv", "text.nbgpu"):
        assert (tmp_path / name).stat().st_size > 0
