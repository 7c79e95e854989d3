"""The package's own modules import one another in one direction: no circle.

Every import of a capstan module counts, wherever it is written: at the top,
inside a function (a deferred import is still a dependency) and under
``TYPE_CHECKING`` (a type a lower module names is a dependency on a higher
one). A lower module that needs something of a higher one is handed it
(as _registry hands _tools its registry factory) or names it by a Protocol.
Read with ``ast`` (nothing is imported), so a circle fails here even where
Python would import it without error.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "capstan"


def imports_of(source: str, package_modules: set[str]) -> set[str]:
    """The package modules a module's source imports (relative imports, or
    absolute ones of ``capstan.<module>``), anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif node.level == 0 and node.module and node.module.split(".")[0] == "capstan":
                parts = node.module.split(".")
                if len(parts) > 1:
                    found.add(parts[1])
                else:
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "capstan" and len(parts) > 1:
                    found.add(parts[1])
    return found & package_modules


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one
    that imports itself (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package_graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    names = set(modules) - {"__init__"}
    return {
        name: imports_of(path.read_text(encoding="utf-8"), names) - {name}
        for name, path in modules.items()
        if name != "__init__"
    }


def test_no_circle_among_capstans_own_modules():
    graph = package_graph()
    assert len(graph) > 20 and "_tools" in graph.get("_registry_core", graph["_registry"]), "the package was read"
    found = circles(graph)
    assert found == [], "import circles (each: modules that import one another): " + "; ".join(
        " <-> ".join(c) + " (" + ", ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) + ")" for c in found
    )


def test_the_circle_check_finds_deferred_type_only_and_absolute_imports():
    names = {"_a", "_b", "_c", "_d"}
    deferred = "def f():\n    from ._b import x\n"
    type_only = "import typing\nif typing.TYPE_CHECKING:\n    from ._c import Y\n"
    absolute = "import capstan._a\n"
    graph = {
        "_a": imports_of(deferred, names),
        "_b": imports_of(type_only, names),
        "_c": imports_of(absolute, names),
        "_d": imports_of("from . import _a, json\n", names),
    }
    assert graph == {"_a": {"_b"}, "_b": {"_c"}, "_c": {"_a"}, "_d": {"_a"}}
    assert circles(graph) == [["_a", "_b", "_c"]]
    assert circles({"_a": {"_b"}, "_b": set()}) == []
    assert circles({"_a": {"_a"}}) == [["_a"]]
