"""Reply rules ("Answering by reply"): parts, words, bounds and the rule made from the schema."""

from __future__ import annotations

from typing import Any

import pytest

from parley.interaction.reply_rule import (
    ReplyRule,
    RulePart,
    normalize_word,
    reply_rule_problems,
    resolve_reply_rule,
)

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["verdict"],
    "properties": {
        "verdict": {"type": "string", "enum": ["approve", "revise"]},
        "note": {"type": "string", "maxLength": 2000},
    },
}


def messages(written: Any, schema: Any = VERDICT_SCHEMA) -> list[str]:
    return [f"{pointer}: {message}" for pointer, message in reply_rule_problems(written, schema)]


def test_the_pages_rule_with_words_is_accepted() -> None:
    written = {"verdict": {"from": "word", "words": {"approve": ["yes", "ok"]}}, "note": "rest"}
    assert messages(written) == []
    rule = resolve_reply_rule(written, VERDICT_SCHEMA)
    assert rule == ReplyRule(
        {"verdict": RulePart("word", {"approve": ("yes", "ok")}), "note": RulePart("rest")}
    )


def test_parts_are_word_rest_or_text() -> None:
    assert messages({"verdict": "word", "note": "text"}) == []
    assert messages({"verdict": "first"}) == ["/reply/verdict: Expected word, rest or text, found 'first'"]
    assert "/reply/verdict/from: 'from' is one of word, rest, text" in messages({"verdict": {"from": "all"}})


def test_only_word_takes_words() -> None:
    found = messages({"verdict": "word", "note": {"from": "rest", "words": {"approve": ["yes"]}}})
    assert "/reply/note/words: Only word takes 'words'" in found


def test_a_word_means_one_value_only() -> None:
    found = messages({"verdict": {"from": "word", "words": {"approve": ["yes"], "revise": ["YES!"]}}})
    assert found == [
        "/reply/verdict/words/revise/0: 'YES!' already means 'approve': a word means one value only"
    ]
    clash = messages({"verdict": {"from": "word", "words": {"approve": ["Revise"]}}})
    assert clash == [
        "/reply/verdict/words/approve/0: 'Revise' already means 'revise': a word means one value only"
    ]


def test_words_name_enum_values() -> None:
    found = messages({"verdict": {"from": "word", "words": {"maybe": ["perhaps"]}}})
    assert found == ["/reply/verdict/words/maybe: 'maybe' is not one of the property's enum values"]


def test_bounds_sixteen_values_sixteen_words_64_bytes() -> None:
    many = {"type": "object", "properties": {"v": {"type": "string", "enum": [f"v{i}" for i in range(20)]}}}
    seventeen = {f"v{i}": [f"w{i}"] for i in range(17)}
    assert "/reply/v/words: A reply rule lists words for at most 16 values" in messages(
        {"v": {"from": "word", "words": seventeen}}, many
    )
    sixteen = {f"v{i}": [f"w{i}"] for i in range(16)}
    assert messages({"v": {"from": "word", "words": sixteen}}, many) == []
    words = [f"w{i}" for i in range(17)]
    assert "/reply/v/words/v0: At most 16 words a value" in messages(
        {"v": {"from": "word", "words": {"v0": words}}}, many
    )
    assert "/reply/v/words/v0/0: A word is at most 64 bytes" in messages(
        {"v": {"from": "word", "words": {"v0": ["x" * 65]}}}, many
    )
    assert messages({"v": {"from": "word", "words": {"v0": ["x" * 64]}}}, many) == []


def test_a_word_is_one_word() -> None:
    assert "/reply/verdict/words/approve/0: 'looks good' is not one word" in messages(
        {"verdict": {"from": "word", "words": {"approve": ["looks good"]}}}
    )


def test_properties_are_top_level_strings_of_the_schema() -> None:
    schema = {"type": "object", "properties": {"count": {"type": "integer"}, "verdict": {"type": "string"}}}
    assert messages({"count": "word"}, schema) == [
        "/reply/count: 'count' is not a string property: a reply gives only text"
    ]
    assert messages({"other": "text"}, schema) == [
        "/reply/other: 'other' is not a top-level property of output.schema"
    ]


def test_a_rule_that_leaves_a_required_property_unread_is_refused() -> None:
    assert messages({"note": "rest"}) == [
        "/reply: The rule reads no value for the required property 'verdict'"
    ]


def test_the_rule_made_from_the_schema() -> None:
    assert resolve_reply_rule(None, VERDICT_SCHEMA) == ReplyRule({"verdict": RulePart("word")}, derived=True)
    free = {"type": "object", "required": ["comment"], "properties": {"comment": {"type": "string"}}}
    assert resolve_reply_rule(None, free) == ReplyRule({"comment": RulePart("text")}, derived=True)
    two = {**VERDICT_SCHEMA, "required": ["verdict", "note"]}
    assert resolve_reply_rule(None, two) is None
    number = {"type": "object", "required": ["n"], "properties": {"n": {"type": "number"}}}
    assert resolve_reply_rule(None, number) is None
    via_ref = {
        "type": "object",
        "required": ["v"],
        "properties": {"v": {"$ref": "#/$defs/verdict"}},
        "$defs": {"verdict": {"type": "string", "enum": ["a", "b"]}},
    }
    assert resolve_reply_rule(None, via_ref) == ReplyRule({"v": RulePart("word")}, derived=True)


@pytest.mark.parametrize(
    ("word", "normal"),
    [("Approve", "approve"), ("approve.", "approve"), ("**approve**", "approve"), ("¡Sí!", "sí")],
)
def test_words_compare_without_case_and_surrounding_punctuation(word: str, normal: str) -> None:
    assert normalize_word(word) == normal
