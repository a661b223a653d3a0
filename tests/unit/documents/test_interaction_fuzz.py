"""Hypothesis throws random and mutated documents at the checker: always accepted or a listed problem."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.documents.definition import CheckedDocument
from parley.documents.interaction import check_interaction_source
from parley.errors import Problem

EXAMPLES = [
    p.read_text()
    for p in sorted((Path(__file__).resolve().parents[3] / "examples" / "definitions").glob("*.md"))
]
LINE = re.compile(r"^Line [1-9]\d*(: |, /).+", re.S)

FRAGMENTS = [
    "{{",
    "}}",
    "{%",
    "%}",
    "${",
    "&a",
    "*a",
    "!!str",
    "---",
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "\t",
    "\n",
    "  ",
    "yes",
    "P2D",
    "PT5S",
    "~1",
    "/",
    "input.owner",
    "sent.id",
    "| json",
    "| date",
    "{% include 'x' %}",
    "pattern: x",
    "$ref: '#/$defs/a'",
    "\x00",
    "\u2028",
    "é",
    "0x1F",
    ".inf",
    "9" * 400,
]


def outcome(source: str) -> None:
    try:
        checked = check_interaction_source(source)
    except Problem as problem:
        assert problem.reason == "invalid_input"
        assert 1 <= len(problem.errors) <= 21
        for entry in problem.errors:
            assert entry.pointer == "/source"
            assert LINE.match(entry.detail), entry.detail
        json.dumps(problem.as_json())
    else:
        assert isinstance(checked, CheckedDocument)
        json.dumps(checked.front_matter)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(EXAMPLES)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "splice", "swap"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "insert":
            lines.insert(i, draw(st.text(max_size=40)))
        elif op == "splice":
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            lines[i] = line[:at] + draw(st.sampled_from(FRAGMENTS)) + line[at:]
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
field_names = st.sampled_from(
    [
        "description",
        "to",
        "from",
        "expires",
        "deliver",
        "replies",
        "call",
        "input",
        "output",
        "reply",
        "model",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_examples(source: str) -> None:
    outcome(source)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(field_names, json_values, max_size=8), st.text(max_size=60))
def test_random_front_matter(front: dict[str, object], body: str) -> None:
    outcome("---\n" + json.dumps(front) + "\n---\n" + body)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_random_text(source: str) -> None:
    outcome(source)
    outcome("---\n" + source)
