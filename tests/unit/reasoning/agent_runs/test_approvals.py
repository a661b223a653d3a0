"""An approval's answer (agent-runs.md, "Approvals"): the schema is the page's, and every rule an answer
breaks is refused with its pointer. The approval's steps (the call frozen, the request, the frozen call
sent) are run end to end in ``test_agent_runs.py``."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from parley.reasoning.agent_runs.approvals import (
    APPROVAL_ANSWER_SCHEMA,
    approval_answer_errors,
    approval_answer_schema,
)


def test_the_approval_schema_is_the_pages() -> None:
    assert APPROVAL_ANSWER_SCHEMA == {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "note": {"type": "string", "maxLength": 2000}},
        "required": ["approved"],
        "additionalProperties": False,
    }
    assert approval_answer_schema() == APPROVAL_ANSWER_SCHEMA
    assert approval_answer_schema() is not APPROVAL_ANSWER_SCHEMA
    Draft202012Validator.check_schema(APPROVAL_ANSWER_SCHEMA)


@pytest.mark.parametrize(
    "answer",
    [
        {"approved": True},
        {"approved": False},
        {"approved": False, "note": "Not that day"},
        {"approved": True, "note": ""},
    ],
)
def test_a_good_approval_is_taken(answer: Any) -> None:
    assert approval_answer_errors(answer) == []
    assert Draft202012Validator(APPROVAL_ANSWER_SCHEMA).is_valid(answer)


@pytest.mark.parametrize(
    ("answer", "pointers"),
    [
        (True, ["/answer"]),
        ({}, ["/answer/approved"]),
        ({"approved": "yes"}, ["/answer/approved"]),
        ({"approved": 1}, ["/answer/approved"]),
        ({"approved": False, "note": 3}, ["/answer/note"]),
        ({"approved": False, "note": "x" * 2001}, ["/answer/note"]),
        ({"approved": True, "reason": "x"}, ["/answer/reason"]),
        ({"note": "x" * 2001, "why": 1}, ["/answer/why", "/answer/approved", "/answer/note"]),
    ],
)
def test_an_approval_that_breaks_a_rule_is_refused_with_its_pointer(answer: Any, pointers: list[str]) -> None:
    errors = approval_answer_errors(answer)
    assert [entry.pointer for entry in errors] == pointers
    assert not Draft202012Validator(APPROVAL_ANSWER_SCHEMA).is_valid(answer)
