"""The table's keys are built in one module, ``parley.infrastructure.keys`` (issue 30: "the table's keys
built in one module"): no other module of the core spells a key's prefix, in a text or at the start of
an f-string."""

from __future__ import annotations

import ast
from pathlib import Path

import parley
from parley.definitions.model import PlaybookRef
from parley.infrastructure import keys

PACKAGE = Path(parley.__file__).parent
KEYS_MODULE = PACKAGE / "infrastructure" / "keys.py"
#: The prefixes of the table's keys (``parley.infrastructure.keys``).
PREFIXES = (
    "PB#",
    "DEF#",
    "DEFV#",
    "RUN#",
    "REQ#",
    "EVT#",
    "WORK#",
    "COUNTER#",
    "CONV#",
    "SENTCOUNT#",
    "LISTENED#",
    "SENT#",
    "KEPT#",
    "LISTEN#",
    "LISTENTYPE#",
    "EMITTED#",
    "ORG#",
    "CONNECTION#",
)


def _leading_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """Each text of the module, and the leading text of each f-string, with its line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((node.lineno, first.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
    return found


def test_no_module_but_the_keys_module_builds_a_key() -> None:
    spelled = [
        f"{path.relative_to(PACKAGE)}:{line}: {text[:40]!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != KEYS_MODULE
        for line, text in _leading_texts(ast.parse(path.read_text(encoding="utf-8")))
        if text.startswith(PREFIXES)
    ]
    assert spelled == []


def test_the_keys_module_knows_every_prefix_it_is_checked_for() -> None:
    source = KEYS_MODULE.read_text(encoding="utf-8")
    assert all(prefix in source for prefix in PREFIXES)


def test_a_playbooks_partition_key_reads_back() -> None:
    playbook = PlaybookRef("acme", "campaigns")

    assert keys.playbook_of(keys.playbook_key(playbook)) == ("acme", "campaigns")
    assert keys.playbook_of("CONV#x") is None
    assert keys.event_id_of(keys.event_key("e1")) == "e1"
    assert keys.position_run_id(keys.list_position("2026-10-17T10:18:42.000Z", "r-1")) == "r-1"
