"""The package's layers import in one direction only, and no module imports itself back.

An AST scan of every module of ``nbgpu/``, imports inside functions
included. ARCHITECTURE.md describes the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "nbgpu"

# Lower layers first; a module may import its own layer and the layers below.
LAYERS = [
    ("version", ["nbgpu._version"]),
    ("array", ["nbgpu._array"]),
    ("validation", ["nbgpu._validation"]),
    ("estimator", ["nbgpu._estimator"]),
    ("models", ["nbgpu._models"]),
    ("interop", ["nbgpu._interop", "nbgpu.text"]),
    ("public API", ["nbgpu"]),  # nbgpu/__init__.py
    ("application", ["nbgpu._app", "nbgpu.__main__"]),
]

# The only modules that may name array libraries (cupy, torch, ...) by import.
ARRAY_LIBRARIES = {"cupy", "cupyx", "torch", "array_api_strict", "jax", "dpnp"}


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules():
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name, path):
    """Every module ``name`` imports (absolute names), with the line of each."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            out.append((target, node.lineno))
            # ``from . import x`` imports the submodule x.
            out.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)
    return out


def _layer(module):
    """Index of the layer ``module`` belongs to (the longest matching prefix)."""
    best, rank = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    return rank


def _internal_graph():
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        targets = set()
        for target, line in _imports(name, path):
            if target in modules and target != name:
                targets.add((target, line))
        graph[name] = targets
    return graph


def test_every_module_has_a_layer():
    assert {name: _layer(name) for name in _modules() if _layer(name) is None} == {}


def test_imports_go_down_the_layers():
    upward = []
    for name, targets in _internal_graph().items():
        for target, line in targets:
            if _layer(target) > _layer(name):
                upward.append(
                    f"{name}:{line} imports {target} "
                    f"({LAYERS[_layer(name)][0]} -> {LAYERS[_layer(target)][0]})"
                )
    assert upward == []


def test_no_import_cycles():
    graph = {name: {t for t, _ in targets} for name, targets in _internal_graph().items()}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == []


def test_array_libraries_are_named_only_in_the_array_layer():
    named = []
    for name, path in _modules().items():
        if _layer(name) == _layer("nbgpu._array"):
            continue
        for target, line in _imports(name, path):
            if target.split(".")[0] in ARRAY_LIBRARIES:
                named.append(f"{name}:{line} imports {target}")
    assert named == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [("nbgpu._array.blocks", "array"), ("nbgpu._models.gaussian", "models"), ("nbgpu._app.cli", "application")],
)
def test_the_layer_map_places_modules(module, layer):
    assert LAYERS[_layer(module)][0] == layer
