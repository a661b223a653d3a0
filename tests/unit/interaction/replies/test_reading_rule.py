"""The reply rule reading a reply's words ("Answering by reply"): word, rest, text and the bounds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.errors import ErrorEntry
from parley.interaction.replies.rule import REPLY_MAX_BYTES, ReplyReading, read_reply
from parley.interaction.reply_rule import ReplyRule, resolve_reply_rule

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["verdict"],
    "properties": {
        "verdict": {"type": "string", "enum": ["approve", "revise"]},
        "note": {"type": "string", "maxLength": 2000},
    },
}


def rule(written: Any, schema: Any = VERDICT_SCHEMA) -> ReplyRule:
    resolved = resolve_reply_rule(written, schema)
    assert resolved is not None
    return resolved


VERDICT_AND_NOTE = rule({"verdict": "word", "note": "rest"})
WITH_WORDS = rule({"verdict": {"from": "word", "words": {"approve": ["yes", "ok"]}}, "note": "rest"})


def answer(reading: ReplyReading) -> dict[str, Any] | None:
    assert (reading.answer is None) == (reading.refused is not None)
    return reading.answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("approve", {"verdict": "approve"}),
        ("Approve!", {"verdict": "approve"}),
        ("  REVISE:  name the job role  ", {"verdict": "revise", "note": "name the job role"}),
        ("revise name the job role.", {"verdict": "revise", "note": "name the job role."}),
        ("revise — name the job role", {"verdict": "revise", "note": "name the job role"}),
        ("revise - name the job role", {"verdict": "revise", "note": "name the job role"}),
        ("revise\n\nline one\nline two", {"verdict": "revise", "note": "line one\nline two"}),
        ("approve :)", {"verdict": "approve", "note": ":)"}),
        ("*approve*", {"verdict": "approve"}),
    ],
)
def test_the_pages_rule_reads_the_verdict_and_the_note(text: str, expected: dict[str, Any]) -> None:
    assert answer(read_reply(VERDICT_AND_NOTE, text, VERDICT_SCHEMA)) == expected


def test_words_the_rule_lists_mean_their_value_whatever_the_case_and_punctuation() -> None:
    assert answer(read_reply(WITH_WORDS, "OK, ship it", VERDICT_SCHEMA)) == {
        "verdict": "approve",
        "note": "ship it",
    }
    assert answer(read_reply(WITH_WORDS, "Yes!", VERDICT_SCHEMA)) == {"verdict": "approve"}
    # "ok" means approve only under the rule that lists it
    assert read_reply(VERDICT_AND_NOTE, "ok", VERDICT_SCHEMA).refused == "unreadable"


def test_a_word_that_is_none_of_the_values_names_the_values_and_not_the_word() -> None:
    reading = read_reply(WITH_WORDS, "maybe later", VERDICT_SCHEMA)
    assert reading == ReplyReading(
        None,
        "unreadable",
        (ErrorEntry("/answer/verdict", "The first word is not one of approve (or yes, ok), revise"),),
    )
    assert "maybe" not in reading.problems[0].detail


def test_the_rule_made_from_the_schema_reads_the_word_alone() -> None:
    derived = rule(None)
    assert answer(read_reply(derived, "revise: name the role", VERDICT_SCHEMA)) == {"verdict": "revise"}


def test_text_takes_the_whole_reply() -> None:
    schema = {"type": "object", "required": ["comment"], "properties": {"comment": {"type": "string"}}}
    derived = rule(None, schema)
    assert answer(read_reply(derived, "  Looks good, ship it.\n", schema)) == {
        "comment": "Looks good, ship it."
    }


def test_a_word_for_a_property_without_enum_is_taken_as_written() -> None:
    schema = {
        "type": "object",
        "required": ["code"],
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}, "note": {"type": "string"}},
    }
    written = rule({"code": "word", "note": "rest"}, schema)
    assert answer(read_reply(written, "ABC-12 done", schema)) == {"code": "ABC-12", "note": "done"}
    assert read_reply(written, "abc done", schema).refused == "unreadable"


def test_the_schema_judges_the_answer_and_its_problems_are_under_answer() -> None:
    reading = read_reply(VERDICT_AND_NOTE, "revise " + "x" * 2001, VERDICT_SCHEMA)
    assert reading.refused == "unreadable"
    assert reading.problems == (ErrorEntry("/answer/note", "Expected at most 2000 characters"),)


def test_an_empty_rest_is_left_out_for_an_optional_property_and_kept_for_a_required_one() -> None:
    required_note = {**VERDICT_SCHEMA, "required": ["verdict", "note"]}
    assert answer(read_reply(VERDICT_AND_NOTE, "approve", required_note)) == {
        "verdict": "approve",
        "note": "",
    }
    strict = {
        **required_note,
        "properties": {**VERDICT_SCHEMA["properties"], "note": {"type": "string", "minLength": 1}},
    }
    reading = read_reply(VERDICT_AND_NOTE, "revise", strict)
    assert reading.problems == (ErrorEntry("/answer/note", "Expected at least 1 characters"),)


def test_an_empty_reply_is_refused() -> None:
    for text in ("", "   \n\t"):
        reading = read_reply(VERDICT_AND_NOTE, text, VERDICT_SCHEMA)
        assert reading == ReplyReading(None, "unreadable", (ErrorEntry("/answer", "The reply has no words"),))


def test_a_reply_past_8_kib_is_refused_before_it_is_read() -> None:
    at_limit = "approve " + "x" * (REPLY_MAX_BYTES - len("approve "))
    assert read_reply(rule({"verdict": "word"}), at_limit, VERDICT_SCHEMA).answer == {"verdict": "approve"}
    past = at_limit + "x"
    reading = read_reply(VERDICT_AND_NOTE, past, VERDICT_SCHEMA)
    assert reading.refused == "too_long"
    assert reading.problems == (ErrorEntry("/answer", "A reply takes at most 8 KiB (8192 bytes)"),)
    # bytes, not characters: 2,731 three-byte characters pass 8 KiB
    assert read_reply(VERDICT_AND_NOTE, "approve " + "€" * 2731, VERDICT_SCHEMA).refused == "too_long"


def test_an_answer_past_64_kib_as_json_is_refused() -> None:
    names = [f"t{n}" for n in range(9)]
    schema = {"type": "object", "properties": {name: {"type": "string"} for name in names}}
    written = rule(dict.fromkeys(names, "text"), schema)
    reading = read_reply(written, '"' * 4000, schema)  # each quote is two bytes as JSON, nine times
    assert reading.refused == "unreadable"
    assert reading.problems[0].pointer == "/answer"


@given(st.text(max_size=200))
def test_any_reply_is_read_or_refused_never_raises(text: str) -> None:
    reading = read_reply(WITH_WORDS, text, VERDICT_SCHEMA)
    assert (reading.answer is None) == (reading.refused is not None)
    if reading.answer is not None:
        assert reading.answer["verdict"] in ("approve", "revise")
