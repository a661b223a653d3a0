"""The core's one direction of imports (README, "Design in a page"): no two parts of the package — its
subpackages and top-level modules — import each other, directly or round a circle, counting every
import (at the top of a module, inside a function, or for type checking only); the run lifecycle and
the definitions reach a function type only through the registry (``parley.runs.kinds``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import parley

PACKAGE = Path(parley.__file__).parent
#: The function types: packages the lifecycle reaches only by name, through the registry.
TYPES = ("interaction", "reasoning", "workflow")


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "parley" else None


def _imports(path: Path) -> Iterator[str]:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield ".".join([*base, *([node.module] if node.module else [])])
            else:
                yield node.module or ""
            if node.module in ("parley", None) or (node.level and not node.module):
                # ``from parley import x`` / ``from . import x``: x may be a part of its own
                root = node.module or package
                yield from (f"{root}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        source = _part(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
        if source is None:
            continue
        targets = edges.setdefault(source, set())
        for imported in _imports(path):
            target = _part(imported)
            if target is not None and target != source:
                targets.add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                found.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return found


def test_no_two_parts_import_each_other_directly_or_round_a_circle() -> None:
    assert cycles(graph()) == []


def test_the_lifecycle_and_the_definitions_reach_no_type_but_through_the_registry() -> None:
    edges = graph()
    for part in ("runs", "definitions", "documents", "templates", "tools", "ports", "aws"):
        assert not edges.get(part, set()) & set(TYPES), part


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_every_type_of_the_definitions_has_its_kind_in_the_registry() -> None:
    from parley.definitions.model import DEFINITION_TYPES
    from parley.runs.kinds import KINDS, kind_module

    assert set(KINDS) == set(DEFINITION_TYPES)
    for definition_type in DEFINITION_TYPES:
        assert callable(kind_module(definition_type).check)


#: The models (``parley.models``) sit on the core's middle floor, beside ``parley.tools``: a function type
#: uses them, never the reverse, and they reach no front door, entry or lifecycle (issue 30).
ABOVE_THE_MODELS = (
    "reasoning",
    "workflow",
    "interaction",
    "api",
    "front",
    "inbox",
    "local",
    "executions",
    "runs",
)


def test_the_models_import_no_type_lifecycle_or_front_door() -> None:
    assert not graph().get("models", set()) & set(ABOVE_THE_MODELS)


#: The front doors: the HTTP API (and its description), the MCP front door, the web inbox. They sit on
#: top of the core; only the entries that serve them (the local server, the CLI, the authorizer's logs)
#: import them. The MCP front door is made from the API's registry of operations, never the reverse.
FRONT_DOORS = ("api", "front", "inbox")
ENTRIES = ("local", "cli", "authorizer")


def test_the_front_doors_sit_on_top_and_the_mcp_door_is_made_from_the_apis_registry() -> None:
    edges = graph()
    for part, targets in edges.items():
        if part not in (*FRONT_DOORS, *ENTRIES):
            assert not targets & set(FRONT_DOORS), (part, sorted(targets & set(FRONT_DOORS)))
    assert "front" not in edges.get("api", set())
    assert edges.get("front", set()) & set(TYPES) == set()


#: The README's drawing of the core ("Design in a page"), floor by floor from the top: a part imports only
#: parts on its own floor or below it (and, on its own floor, never round a circle: the test above).
FLOORS: tuple[tuple[str, ...], ...] = (
    # front doors and entries: the HTTP API, the MCP front door, the web inbox, the functions' entries,
    # parley serve, the command line and its client, the authorizer, the demo servers
    ("api", "front", "inbox", "executions", "local", "cli", "client", "authorizer", "demo"),
    # the adapters on AWS
    ("aws",),
    # the function types
    TYPES,
    # beside each other: the MCP client and the tool servers a playbook sees, the models
    ("tools", "models"),
    # the lifecycle that knows no type
    ("runs",),
    # the runtime bundle and its ports
    ("ports",),
    # the org's connections: record, rules, store, secrets, OAuth
    ("connections",),
    # definitions saved and versioned
    ("definitions",),
    # what every type's documents share
    ("documents", "templates"),
    # the foundation
    (
        "auth",
        "errors",
        "clock",
        "dynamo",
        "durations",
        "faces",
        "config",
        "infrastructure",
        "reading",
        "secret",
        "coroutines",
        "listening",
        "parties",
        "reference",
        "__init__",
    ),
)


def _floor_of() -> dict[str, int]:
    return {part: floor for floor, parts in enumerate(FLOORS) for part in parts}


def test_every_part_of_the_core_has_its_floor_in_the_drawing() -> None:
    assert set(graph()) - set(_floor_of()) == set()


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports of ``edges`` that go from a part to one drawn on a floor above it."""
    floor = _floor_of()
    return sorted(
        (part, target)
        for part, targets in edges.items()
        for target in targets
        if floor.get(target, len(FLOORS)) < floor.get(part, len(FLOORS))
    )


def test_no_part_imports_a_part_drawn_above_it() -> None:
    assert upward(graph()) == []


def test_the_floor_check_finds_an_import_that_goes_up() -> None:
    assert upward({"runs": {"interaction", "ports"}, "config": {"connections"}, "tools": {"models"}}) == [
        ("config", "connections"),
        ("runs", "interaction"),
    ]
