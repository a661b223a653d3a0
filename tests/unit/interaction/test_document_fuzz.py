"""Hypothesis throws random and mutated documents at the checker: always accepted or a listed problem."""

from __future__ import annotations

import json
import re

from document_strategies import mutated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.documents.definition import CheckedDocument
from parley.errors import Problem
from parley.interaction.document import check_interaction_source

LINE = re.compile(r"^Line [1-9]\d*(: |, /).+", re.S)


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
