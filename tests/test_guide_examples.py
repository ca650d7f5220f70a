"""Every example of README.md and GUIDE.md runs as it is and prints what its comments say,
and every results file they name exists.

Each ```python block runs alone in a process of its own (forked from one
interpreter that has imported numpy, scipy, scikit-learn and nbgpu; a
temporary directory). A ``print(...)`` line whose comment states a value
(``print(x)  # [0 1]: ...``) must print that value: numbers agree to the
digits the comment shows, everything else exactly. A comment on a print line
that states no value fails the test, so no check is skipped silently. A block
may only import the libraries nbgpu installs, or those the document names in
the section where the example stands (an extra such as ``".[dask]"`` or the
package). A block preceded by a line ``<!-- no-test: REASON -->`` is not run;
only blocks that need GPUs may be marked, and their number is fixed below.
The ```bash blocks of the README's text example and of the guide's command
line reference run too, with ``nbgpu`` on the PATH.
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
DOCUMENTS = ("README.md", "GUIDE.md")
CORE = {"numpy", "scipy", "sklearn", "array_api_compat", "nbgpu"}
NO_TEST = re.compile(r"^<!-- no-test: (?P<reason>.+) -->$")
# The blocks that are not run, each for a GPU (the GPU machine's ci/gpu.sh runs
# the suite with cupy, but a block with a cluster of GPUs cannot run there either).
MARKED = {"README.md": 1, "GUIDE.md": 1}

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


def _text(name):
    return (REPO / name).read_text(encoding="utf-8")


def _blocks(text, language):
    """[(line of the block, source, text from its section heading to the block, no-test reason or None)]."""
    found, heading = [], 0
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].startswith("#") and not lines[index].startswith("#!"):
            heading = index
        if lines[index].strip() == f"```{language}":
            end = lines.index("```", index + 1)
            marker = NO_TEST.match(lines[index - 1].strip()) if index else None
            found.append((index + 1, "\n".join(lines[index + 1 : end]) + "\n", "\n".join(lines[heading:index]),
                          marker and marker["reason"]))
            index = end
        index += 1
    return found


PYTHON = [(name, *block) for name in DOCUMENTS for block in _blocks(_text(name), "python")]


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
        assert re.match(r"^(\[|\{|\(|'|-?\d|True|False|[a-z][a-z-]*\s)", value), (
            f"a line with print(...) has a comment that states no value: {found[-1]!r}"
        )
        values[span] = value
    return values


_TOKEN = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?|\[|\]|\(|\)|,|[^\s\[\](),]+")
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def _agree(expected, printed):
    want, got = _TOKEN.findall(expected), _TOKEN.findall(printed)
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        if _NUMBER.fullmatch(w):
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
            pytest.skip("the extras are read from nbgpu's metadata on Python 3.10 (no tomllib), "
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
    """Distributions a document's text names: packages, and the contents of extras like ``.[dask]``."""
    extras = _extras()
    named = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]+", text)}
    for extra in re.findall(r"\[([a-z0-9_,]+)\]", text):
        for name in extra.split(","):
            named |= extras.get(name, set())
    return named


# Starting an interpreter and importing numpy, scipy and scikit-learn is most of what an example
# costs (about 3.4 of 4 CPU seconds). So one interpreter per test process imports them once and
# forks a child for each block: the child is a process of its own, as fresh as an interpreter
# that has just imported them, and runs RUNNER as ``python runner.py BLOCK RECORD`` would, in the
# block's folder, its output in files; the server answers with the child's exit status.
SERVER = r"""
import json, os, sys
if __name__ == "__main__":
    import numpy, scipy.sparse, sklearn.base  # noqa: F401  (what every example imports, and nbgpu)
    import nbgpu  # noqa: F401
    import gc
    # What these imports made is never garbage: each child's collections, its last one at exit
    # included (about 0.5 CPU s of the interpreter's 0.7 s end otherwise), leave it alone.
    gc.freeze()
    runner = sys.argv[1]
    for line in sys.stdin:
        folder, block, record = json.loads(line)
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the example's process: never back into this loop
            os.chdir(folder)
            for fd, name, flags in ((0, os.devnull, os.O_RDONLY), (1, "stdout", os.O_WRONLY | os.O_CREAT),
                                    (2, "stderr", os.O_WRONLY | os.O_CREAT)):
                os.dup2(os.open(name, flags, 0o644), fd)
            sys.stdin = open(0, closefd=False)
            sys.argv = [runner, block, record]
            source = open(runner, encoding="utf-8").read()
            exec(compile(source, runner, "exec"), {"__name__": "__main__", "__file__": runner})
            raise SystemExit(0)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


@pytest.fixture(scope="module")
def python_server(tmp_path_factory):
    """``run(folder) -> CompletedProcess``: ``python runner.py example.py printed.json`` in ``folder``."""
    home = tmp_path_factory.mktemp("python_server")
    (home / "server.py").write_text(SERVER, encoding="utf-8")
    (home / "runner.py").write_text(RUNNER, encoding="utf-8")
    server = subprocess.Popen([sys.executable, str(home / "server.py"), str(home / "runner.py")], cwd=home,
                              env=subprocess_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(folder):
        server.stdin.write(json.dumps([str(folder), str(folder / "example.py"), str(folder / "printed.json")]) + "\n")
        server.stdin.flush()
        status = server.stdout.readline()
        assert status, f"the examples' interpreter ended (status {server.wait()})"
        return subprocess.CompletedProcess([sys.executable, "runner.py"], int(status),
                                           (folder / "stdout").read_text(), (folder / "stderr").read_text())

    yield run
    server.stdin.close()
    server.wait(timeout=60)
    server.stdout.close()


def _run_python(run, tmp_path, source):
    (tmp_path / "example.py").write_text(source, encoding="utf-8")
    result = run(tmp_path)
    record = tmp_path / "printed.json"
    printed = json.loads(record.read_text()) if record.exists() else []
    return result, printed


@pytest.mark.parametrize(("document", "line", "source", "context", "skipped"), PYTHON,
                         ids=[f"{b[0]}:{b[1]}" for b in PYTHON])
def test_python_example(python_server, tmp_path, document, line, source, context, skipped):
    where = f"{document}:{line}"
    tree = ast.parse(source)
    modules = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    private = [f"{n.module}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
               and any(part.startswith("_") for part in n.module.split("."))]
    assert private == [], f"{where} imports private modules {private}"
    if skipped:
        assert re.search(r"\bGPU", skipped), f"{where} is marked no-test for a reason other than a GPU: {skipped!r}"
        pytest.skip(f"{where}: {skipped}")
    distributions = md.packages_distributions()
    named = _named_distributions(context)
    for module in sorted(modules - CORE - set(sys.stdlib_module_names)):
        dists = {d.lower() for d in distributions.get(module, [module])}
        assert dists & named, f"{where} imports {module} but {document} does not name {sorted(dists)} there"

    result, printed = _run_python(python_server, tmp_path, source)
    assert result.returncode == 0, f"{where}\n{result.stderr[-3000:]}"
    for (first, last), value in _stated_values(source).items():
        got = "".join(text for number, text in printed if first <= number <= last)
        assert _agree(value, got), f"{document}:{line + first}: the comment says {value!r}, it printed {got!r}"


def test_only_gpu_blocks_are_marked_and_their_number_is_known():
    for name in DOCUMENTS:
        marked = [b for b in _blocks(_text(name), "python") if b[3]]
        assert len(marked) == MARKED[name], (name, [b[0] for b in marked])
    # A marker before a block of another language, or away from a block, would mark nothing.
    for name in DOCUMENTS:
        lines = _text(name).splitlines()
        for index, text in enumerate(lines):
            if text.startswith("<!-- no-test"):
                assert NO_TEST.match(text.strip()) and lines[index + 1] == "```python", f"{name}:{index + 1}"


def test_the_value_check_can_fail():
    assert _agree("[0.4286 0.5714]", "[0.42857143 0.57142857]\n")
    assert _agree("[[1.  2.25] [3.25 0.5 ]]", "[[1.   2.25]\n [3.25 0.5 ]]\n")
    assert _agree("(3, 1024) 21 0.0", "(3, 1024) 21 0.0\n")
    assert _agree("nbgpu-model 2 GaussianNB 4", "nbgpu-model 2 GaussianNB 4\n")
    assert not _agree("[0.4286 0.5714]", "[0.4285 0.5714]")
    assert not _agree("0.86", "0.53")
    assert not _agree("[1]", "[0]")
    assert not _agree("True", "False")
    assert not _agree("(3, 1024)", "(3, 1025)")
    assert _stated_values("print(1)  # 1: one\nprint(2)\nx = 3  # prose\nprint(4,\n      5)  # 4 5  (two)\n") == {
        (1, 1): "1", (4, 5): "4 5"}
    assert _value_part("{'alpha': 1.0} 0.9: best") == "{'alpha': 1.0} 0.9"
    with pytest.raises(AssertionError, match="states no value"):
        _stated_values("print(1)  # The number one\n")


def test_a_failing_example_fails(python_server, tmp_path):
    result, printed = _run_python(python_server, tmp_path, "print(1 + 1)\nraise SystemExit(3)\n")
    assert result.returncode == 3 and printed == [[1, "2\n"]] and result.stdout == "2\n"
    result, printed = _run_python(python_server, tmp_path, "import sys\nprint('a')\n1 / 0\n")
    assert result.returncode == 1 and printed == [[2, "a\n"]]
    assert result.stderr.splitlines()[-1] == "ZeroDivisionError: division by zero"


def test_each_example_runs_in_a_process_of_its_own(python_server, tmp_path):
    # What one block does to its interpreter (modules, globals, the folder) is not the next one's.
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    _run_python(python_server, first, "import os, sys, json\nsys.modules['json'].marked = 1\nprint(os.getpid())\n")
    result, _ = _run_python(python_server, second,
                            "import os, json\nprint(os.getpid(), hasattr(json, 'marked'), os.getcwd())\n")
    pid, marked, folder = result.stdout.split()
    assert pid != (first / "stdout").read_text().strip() and marked == "False" and folder == str(second)


def test_every_block_is_found():
    for name in DOCUMENTS:
        text = _text(name)
        assert len([b for b in PYTHON if b[0] == name]) == text.count("```python")
    assert len(PYTHON) >= 20


# --------------------------------------------------------------------------- #
# The shell examples
# --------------------------------------------------------------------------- #
def _run_shell(tmp_path, script):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "nbgpu"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m nbgpu "$@"\n')
    shim.chmod(0o755)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    env = subprocess_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _section_block(document, heading, language="bash"):
    (block,) = [b for b in _blocks(_text(document), language) if b[2].startswith(heading + "\n")]
    return block


def test_the_readme_text_example(tmp_path):
    line, script, context, _ = _section_block("README.md", "## A first model from text")
    assert line <= 60, "the text example stands within the README's first 60 lines"
    for command in ("nbgpu train", "nbgpu evaluate", "nbgpu predict"):
        assert command in script
    result = _run_shell(tmp_path, script)
    # The prose after the block states the accuracy and the chosen model: they are what the commands print.
    after = _text("README.md").split(script, 1)[1].split("\n\n", 2)[1]
    (accuracy,) = re.findall(r"`accuracy: (\d\.\d+)`", after)
    assert f"accuracy: {accuracy}\n" in result.stdout
    (chosen, ngrams, tf) = re.findall(r"keeps the best, here (\w+\(alpha=[\d.]+\))\s+on (\S+) with (\w+) counts", after)[0]
    assert f"chose {chosen} on {ngrams}, {tf} tf," in result.stderr, result.stderr
    labels = (tmp_path / "predicted.csv").read_text().split()
    assert len(labels) == 500 and set(labels) <= {"billing", "outage", "account"}


def test_the_guide_command_line_example(tmp_path):
    _, script, _, _ = _section_block("GUIDE.md", "## Command line reference")
    assert "accuracy:" in _run_shell(tmp_path, script).stdout
    for name in ("digits.nbgpu", "confusion.png", "predictions.csv", "piped.nbgpu"):
        assert (tmp_path / name).stat().st_size > 0


def test_the_quick_start_commands_are_the_ci_ones():
    (block,) = [b for b in _blocks(_text("README.md"), "bash") if b[2].startswith("## Quick start")]
    commands = [line for line in block[1].splitlines() if line and not line.startswith("#")]
    assert commands == [
        'python3 -m venv .venv && . .venv/bin/activate && pip install ".[cli]" && nbgpu bench',
        "bash ci/test.sh",
    ]
    assert "exec bash ci/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    readme = _text("README.md")
    assert readme.index("## Quick start") < readme.index("## A first model from text") < readme.index("## The family")


# --------------------------------------------------------------------------- #
# Results files and figures
# --------------------------------------------------------------------------- #
RESULTS = re.compile(r"benchmarks/results/[A-Za-z0-9_.*{},-]+[A-Za-z0-9}]")


def _named_results(text):
    """Every results path a text names, braces expanded (``x.{json,png}``) and a trailing ``.``/``,`` left out."""
    named = set()
    for path in RESULTS.findall(text):
        brace = re.search(r"\{([^}]*)\}", path)
        options = brace.group(1).split(",") if brace else [""]
        for option in options:
            named.add(path[: brace.start()] + option + path[brace.end():] if brace else path)
    return named


def test_the_results_path_reader_can_fail():
    assert _named_results("see `benchmarks/results/a-b.{json,png}`, and benchmarks/results/c.json.") == {
        "benchmarks/results/a-b.json", "benchmarks/results/a-b.png", "benchmarks/results/c.json"}


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_named_results_file_exists(document):
    named = _named_results(_text(document))
    assert named, f"{document} names no results file"
    missing = [path for path in sorted(named) if not list(REPO.glob(path))]
    assert missing == [], f"{document} names results files that are not in the repository: {missing}"


def _json(name):
    return json.loads((REPO / "benchmarks" / "results" / name).read_text(encoding="utf-8"))


def test_the_readme_gpu_figures_are_the_results_files():
    readme = _text("README.md")
    name = "gpu-targets-NVIDIA-H200-20261126-064702.json"
    assert f"benchmarks/results/{name}" in readme
    data = _json(name)
    multinomial, gaussian = data["multinomial"], data["gaussian"]
    rows = {tuple(c.strip() for c in row.split("|")[1:3]): [c.strip() for c in row.split("|")[1:-1]]
            for row in readme.splitlines() if row.startswith(("| MultinomialNB", "| GaussianNB")) and " ms |" in row}
    for op in ("fit", "predict"):
        row = rows["MultinomialNB", op]
        result = multinomial[op]
        assert row[3] == f"{result['gpu_median_s'] * 1e3:.0f} ms"
        assert row[4] == f"{result['sklearn_cpu_median_s']:.1f} s"
        assert row[5] == f"{result['speedup_vs_sklearn']:.0f}×"
        assert row[6] == f"{result['fraction_of_copy_bandwidth'] * 100:.1f} %"
        row = rows["GaussianNB", op]
        assert row[3] == f"{gaussian[op]['median_s'] * 1e3:.{0 if op == 'fit' else 1}f} ms"
        assert row[6] == f"{gaussian[op]['fraction_of_roofline'] * 100:.1f} %"
    assert "1.05e8 stored values" in readme and round(multinomial["nnz"] / 1e8, 2) == 1.05
    assert f"{data['device_copy_GBps'] / 1e3:.1f} TB/s" in readme


def test_the_readme_cpu_table_is_its_results_file():
    readme = _text("README.md")
    name = "cpu-amd-epyc-2core-full-20261123.json"
    assert f"benchmarks/results/{name}" in _named_results(readme)
    rows = {(r["model"], r["op"], r["backend"]): r for r in _json(name)["rows"]}
    checked = 0
    for line in readme.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 6 and (cells[0], cells[1], "nbgpu-cpu") in rows and cells[2][:1].isdigit():
            sk, ours = rows[cells[0], cells[1], "sklearn"], rows[cells[0], cells[1], "nbgpu-cpu"]
            assert cells[2] == f"{sk['median_s'] * 1e3:.1f}" and cells[3] == f"{ours['median_s'] * 1e3:.1f}", line
            assert cells[4] == f"{ours['speedup_vs_sklearn']:.2f}×", line
            checked += 1
    assert checked == 10


def test_the_readme_default_bench_table_is_its_results_files():
    readme = _text("README.md")
    full_name, default_name = "cpu-amd-epyc-2core-full-20261123.json", "cpu-2core-bench-default-20261129.json"
    assert f"benchmarks/results/{default_name}" in readme

    def speedups(name, model, op, *, real):
        return [r["speedup_vs_sklearn"] for r in _json(name)["rows"]
                if r["model"] == model and r["op"] == op and r["backend"] == "nbgpu-cpu"
                and (str(r.get("data")).startswith("python-stdlib") == real)]

    checked = 0
    for line in readme.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) != 5 or not cells[2].endswith("×"):
            continue
        model, op = cells[0], cells[1]
        (full,), (small,) = speedups(full_name, model, op, real=False), speedups(default_name, model, op, real=False)
        assert cells[2] == f"{full:.2f}×" and cells[3] == f"{small:.2f}×", line
        real = speedups(default_name, model, op, real=True)
        assert cells[4] == (f"{min(real):.2f}–{max(real):.2f}×" if real else ""), line
        checked += 1
    assert checked == 10


def test_the_guide_em_learning_curve_is_its_results_file():
    name = "semi-supervised-learning-curve-pydoc-en-20261129.txt"
    guide = _text("GUIDE.md")
    assert f"benchmarks/results/{name}" in guide
    measured = {}
    for line in (REPO / "benchmarks" / "results" / name).read_text(encoding="utf-8").splitlines():
        found = re.fullmatch(r"\s*([\d.]+)%\s+([\d.]+)\s+([\d.]+)\s+[\d.]+", line)
        if found:
            measured[float(found[1])] = (found[2], found[3])
    quoted = {float(m[1]): (m[2], m[3]) for m in re.finditer(r"^\| ([\d.]+) % \| ([\d.]+) \| ([\d.]+) \|$", guide, re.M)}
    assert quoted == measured and len(quoted) == 4


def test_the_guide_hashing_and_search_figures_are_their_results_files():
    guide = _text("GUIDE.md")
    hashing = (REPO / "benchmarks/results/text-hashing-pydoc-en-2core-20261129.txt").read_text(encoding="utf-8")
    ratios = {m[1]: float(m[2]) for m in re.finditer(r"^pydoc-en\s+(\w+)\s.*\s([\d.]+)x\s+[\d.]+x\s+[\d.]+$", hashing, re.M)}
    quoted = re.search(r"by ([\d.]+)×\nfor words, ([\d.]+)× for words and word pairs, ([\d.]+)× for char \(2, 4\) and "
                       r"([\d.]+)× for char_wb \(3, 5\)", guide)
    assert quoted, "the hashing sentence of GUIDE.md changed: update this test"
    for config, value in zip(("word", "word12", "char24", "char_wb35"), quoted.groups()):
        assert value == f"{ratios[config]:.1f}", (config, value, ratios[config])
    search = (REPO / "benchmarks/results/smoothing-search-pipeline-pydoc-en-2core-20261129.txt").read_text(encoding="utf-8")
    grid, fast, ratio = re.search(r"GridSearchCV ([\d.]+) s, SmoothingSearchCV ([\d.]+) s, ratio ([\d.]+)x", search).groups()
    assert "best_params_ equal: True" in search
    assert (f"it took {float(fast):.1f} s against GridSearchCV's\n{float(grid):.1f} s ({ratio}×)" in guide)
