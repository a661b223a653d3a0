"""No module of the core imports one that imports it back, directly or round a circle (issue 30),
counting every import (at the top, inside a function, for type checking only). ``test_imports.py``
checks the parts; this checks the modules within them."""

from __future__ import annotations

import ast
from pathlib import Path

import parley

PACKAGE = Path(parley.__file__).parent
#: Packages whose circles are not yet removed: none.
NOT_YET: tuple[str, ...] = ()


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module (or package) that ``name`` names or is a name of."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def module_graph() -> dict[str, set[str]]:
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = edges.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported: list[str] = []
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                imported = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            for target in imported:
                owner = _owner(target, modules) if target.startswith("parley") else None
                # a module's own package is run before it is: importing it is no edge of a circle
                if owner is not None and owner != name and not name.startswith(owner + "."):
                    targets.add(owner)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    edges = {
        name: {target for target in targets if not target.startswith(NOT_YET)}
        for name, targets in module_graph().items()
        if not name.startswith(NOT_YET)
    }
    assert circles(edges) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
