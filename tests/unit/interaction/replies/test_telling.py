"""Tellings (``replies.tell``) and the bounds of refused replies ("Bounds": 10 recorded, 3 told)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.errors import ErrorEntry
from parley.interaction.replies.rule import read_reply
from parley.interaction.replies.taking import Refusal
from parley.interaction.replies.telling import (
    REFUSALS_RECORDED_MAX,
    TELLS_MAX,
    RefusalFate,
    how_to_answer,
    refusal_fate,
    telling_text,
)
from parley.interaction.reply_rule import ReplyRule, resolve_reply_rule

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["verdict"],
    "properties": {
        "verdict": {"type": "string", "enum": ["approve", "revise"]},
        "note": {"type": "string", "maxLength": 2000},
    },
}
HOW = "To answer, reply with one of approve, revise; what follows is kept as the note."


def rule(written: Any, schema: Any = VERDICT_SCHEMA) -> ReplyRule:
    resolved = resolve_reply_rule(written, schema)
    assert resolved is not None
    return resolved


PAGES_RULE = rule({"verdict": "word", "note": "rest"})


def test_the_pages_telling_word_for_word() -> None:
    assert how_to_answer(PAGES_RULE, VERDICT_SCHEMA) == HOW


@pytest.mark.parametrize(
    ("written", "schema", "expected"),
    [
        (None, VERDICT_SCHEMA, "To answer, reply with one of approve, revise."),
        (
            {"verdict": {"from": "word", "words": {"approve": ["yes", "ok"]}}, "note": "rest"},
            VERDICT_SCHEMA,
            "To answer, reply with one of approve (or yes, ok), revise; what follows is kept as the note.",
        ),
        (
            {"verdict": "word", "note": "rest"},
            {**VERDICT_SCHEMA, "required": ["verdict", "note"]},
            "To answer, reply with one of approve, revise, then the note.",
        ),
        (
            None,
            {"type": "object", "required": ["comment"], "properties": {"comment": {"type": "string"}}},
            "To answer, reply with your comment; the whole reply is kept as the comment.",
        ),
        (
            {"verdict": "word", "note": "rest", "whole_reply": "text"},
            {
                **VERDICT_SCHEMA,
                "properties": {**VERDICT_SCHEMA["properties"], "whole_reply": {"type": "string"}},
            },
            "To answer, reply with one of approve, revise; what follows is kept as the note, "
            "and the whole reply as the whole reply.",
        ),
        (
            {"verdict": "word", "summary": "text"},
            {**VERDICT_SCHEMA, "properties": {**VERDICT_SCHEMA["properties"], "summary": {"type": "string"}}},
            "To answer, reply with one of approve, revise; the whole reply is kept as the summary.",
        ),
        (
            {"ticket": "word", "note": "rest"},
            {
                "type": "object",
                "required": ["ticket"],
                "properties": {"ticket": {"type": "string"}, "note": {"type": "string"}},
            },
            "To answer, reply with the ticket as your first word; what follows is kept as the note.",
        ),
        (
            {"due_date": "rest"},
            {"type": "object", "required": ["due_date"], "properties": {"due_date": {"type": "string"}}},
            "To answer, reply with a first word, then the due date.",
        ),
    ],
)
def test_how_to_answer_each_rule_shape(written: Any, schema: Any, expected: str) -> None:
    assert how_to_answer(rule(written, schema), schema) == expected


def test_after_a_reply_the_schema_refuses_the_problems_come_first() -> None:
    reading = read_reply(PAGES_RULE, "revise " + "x" * 2001, VERDICT_SCHEMA)
    assert reading.refused is not None
    refusal = Refusal("run-1", "3", reading.refused, reading.problems)
    assert telling_text(refusal, PAGES_RULE, VERDICT_SCHEMA) == (
        "Your reply was not taken as an answer: for the note, expected at most 2000 characters. " + HOW
    )


def test_after_a_word_that_is_none_of_the_values() -> None:
    reading = read_reply(PAGES_RULE, "lgtm", VERDICT_SCHEMA)
    assert reading.refused is not None
    text = telling_text(Refusal("run-1", "3", reading.refused, reading.problems), PAGES_RULE, VERDICT_SCHEMA)
    assert text == (
        "Your reply was not taken as an answer: "
        "for the verdict, the first word is not one of approve, revise. " + HOW
    )
    assert "lgtm" not in text


def test_many_problems_are_counted_past_five() -> None:
    problems = tuple(ErrorEntry(f"/answer/p{n}", "Expected a value") for n in range(7))
    text = telling_text(Refusal("run-1", "3", "unreadable", problems), PAGES_RULE, VERDICT_SCHEMA)
    assert text.count("expected a value") == 5
    assert "and 2 more problems. " + HOW in text


def test_after_a_reply_that_answers_no_single_request() -> None:
    refusal = Refusal(None, "3", "several_open", candidates=("run-1", "run-2"))
    assert telling_text(refusal, PAGES_RULE, VERDICT_SCHEMA) == (
        "Your reply was not taken as an answer: several requests wait for your answer here. "
        "Reply to the message of the request you answer. " + HOW
    )


def test_after_a_reply_past_8_kib_the_limit() -> None:
    reading = read_reply(PAGES_RULE, "approve " + "x" * 9000, VERDICT_SCHEMA)
    assert reading.refused == "too_long"
    text = telling_text(Refusal("run-1", "3", reading.refused, reading.problems), PAGES_RULE, VERDICT_SCHEMA)
    assert text == "Your reply was not taken as an answer: a reply takes at most 8 KiB (8,192 bytes). " + HOW


def test_the_bounds_are_10_recorded_and_3_told() -> None:
    assert (REFUSALS_RECORDED_MAX, TELLS_MAX) == (10, 3)


@pytest.mark.parametrize(
    ("recorded", "told", "tells", "fate"),
    [
        (0, 0, True, RefusalFate(recorded=True, told=True)),
        (2, 2, True, RefusalFate(recorded=True, told=True)),
        (3, 3, True, RefusalFate(recorded=True, told=False)),
        (9, 3, True, RefusalFate(recorded=True, told=False)),
        (10, 3, True, RefusalFate(recorded=False, told=False)),
        (10, 0, True, RefusalFate(recorded=False, told=False)),  # no trace at all, so no telling
        (0, 0, False, RefusalFate(recorded=True, told=False)),  # the function writes no tell
    ],
)
def test_refusal_fate(recorded: int, told: int, tells: bool, fate: RefusalFate) -> None:
    assert refusal_fate(recorded, told, tells=tells) == fate


def test_a_request_refused_twelve_times_records_ten_and_tells_three() -> None:
    recorded = told = 0
    for _ in range(12):
        fate = refusal_fate(recorded, told)
        recorded += fate.recorded
        told += fate.told
    assert (recorded, told) == (10, 3)
