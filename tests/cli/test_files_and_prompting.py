"""Without a server: the type of a document as ``parley save`` reads it, and the answers ``parley
answer`` asks for on a terminal from an agent run's question, an approval or an answer schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.client.exits import CommandError
from parley.client.files import name_of, type_of
from parley.client.prompting import Prompter, ask_answer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "definitions"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("approve-campaign-brief.md", "interaction"),
        ("read-thread-replies.md", "interaction"),
        ("approve-draft-in-chat.md", "interaction"),
        ("reasoning/review-brief.md", "reasoning"),
        ("brief-approval.yaml", "workflow"),
        ("launch-decision.yaml", "workflow"),
    ],
)
def test_the_examples_types_are_read_from_the_files(path: str, expected: str) -> None:
    assert type_of((EXAMPLES / path).read_text(), path) == expected


def test_types_of_documents_written_by_hand() -> None:
    assert type_of("---\ntools: [chat/*]\n---\nHi", "a.md") == "reasoning"
    assert type_of("---\nto: [unclosed\n---\nHi", "a.md") == "interaction"  # the server names the line
    assert type_of("---\ndocument: {dsl: '1.0.3'}\ndo: []\n", "a.yaml") == "workflow"
    assert type_of("document:\n  dsl: '1.0.3'\n", "flow.txt") == "workflow"
    assert type_of("key: [broken\n", "flow.yml") == "workflow"
    with pytest.raises(CommandError):
        type_of("Just words.", "notes.txt")


def test_the_name_is_the_files_without_its_suffix() -> None:
    assert name_of("examples/definitions/approve-campaign-brief.md") == "approve-campaign-brief"
    assert name_of("launch-decision.yaml") == "launch-decision"


def answered(request: dict[str, Any], *typed: str) -> tuple[Any, str]:
    lines: Iterator[str] = iter(typed)
    shown: list[str] = []
    prompter = Prompter(lambda: next(lines, None), shown.append)
    return ask_answer(request, prompter), "".join(shown)


def agent(question: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": "r", "type": "reasoning", "function": "trip", "to": "maria", "message": "Which?",
            "question": question, "answer_schema": {}}  # fmt: skip


CHOICE = {"kind": "choice", "prompt": "Which station?",
          "options": [{"id": "north", "label": "North station", "recommended": True},
                      {"id": "south", "label": "South station"}]}  # fmt: skip


def test_a_choice_is_asked_by_its_labels() -> None:
    answer, shown = answered(agent(CHOICE), "3", "2")
    assert answer == {"selected": ["south"]}
    assert "  1) North station (recommended)\n  2) South station\n" in shown
    assert "Type a number from 1 to 2." in shown


def test_a_choice_takes_several_own_words_or_a_skip_where_allowed() -> None:
    several = {**CHOICE, "multiple": True}
    assert answered(agent(several), "2, 1")[0] == {"selected": ["south", "north"]}
    single, shown = answered(agent(CHOICE), "1,2", "1")
    assert single == {"selected": ["north"]} and "Choose one." in shown
    custom = {**CHOICE, "allow_custom": True}
    answer, shown = answered(agent(custom), "5", "The east one")
    assert answer == {"selected": [], "custom": "The east one"} and "from 1 to 2" in shown
    skip = {**CHOICE, "allow_skip": True, "skip_label": "No preference"}
    answer, shown = answered(agent(skip), "s")
    assert answer == {"selected": [], "skipped": True} and "No preference" in shown


def test_a_form_asks_each_question_and_leaves_out_an_optional_one() -> None:
    form = {"kind": "form", "prompt": "Trip", "questions": [
        {"id": "city", "kind": "text", "prompt": "Which city?", "required": True},
        {**CHOICE, "id": "station", "required": True},
        {"id": "notes", "kind": "text", "prompt": "Anything else?", "required": False},
    ]}  # fmt: skip
    answer, shown = answered(agent(form), "", "Lyon", "1", "")
    assert answer == {"answers": {"city": "Lyon", "station": {"selected": ["north"]}}}
    assert "An answer is some text." in shown and "Anything else? (optional)" in shown


def test_a_text_question_takes_words() -> None:
    assert answered(agent({"kind": "text", "prompt": "Why?"}), "Because")[0] == "Because"


def test_an_approval_shows_the_call_and_takes_yes_or_no_and_a_note() -> None:
    request = {"run_id": "r", "type": "reasoning", "function": "poster", "to": "maria",
               "message": "Post to #launch: We ship today?",
               "approval": {"server": "chat", "tool": "post_message", "arguments": {"channel": "launch"}},
               "answer_schema": {}}  # fmt: skip
    answer, shown = answered(request, "maybe", "n", "Not today")
    assert answer == {"approved": False, "note": "Not today"}
    assert 'The call: chat/post_message {"channel": "launch"}' in shown and "Type y or n." in shown
    assert answered(request, "y", "")[0] == {"approved": True}


def test_a_schema_of_numbers_texts_and_nested_objects() -> None:
    schema = {"type": "object", "required": ["score", "owner"], "properties": {
        "score": {"type": "number", "exclusiveMaximum": 1},
        "owner": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 5},
            "site": {"type": "string", "format": "uri"},
        }},
        "when": {"type": "string", "format": "date-time"},
        "extra": {},
    }}  # fmt: skip
    request = {"run_id": "r", "type": "interaction", "function": "f", "to": "x", "message": "",
               "answer_schema": schema}  # fmt: skip
    typed = ("two", "1", "0.5", "", "Mariana", "Ana", "nowhere", "https://example.com", "soon",
             "2026-10-17T10:18:42Z", '{"a": 1}')  # fmt: skip
    answer, shown = answered(request, *typed)
    assert answer == {"score": 0.5, "owner": {"name": "Ana", "site": "https://example.com"},
                      "when": "2026-10-17T10:18:42Z", "extra": {"a": 1}}  # fmt: skip
    for words in ("Type a number.", "Type a number less than 1.", "Type some text.", "At most 5 characters",
                  "Type an address", "Type a time."):  # fmt: skip
        assert words in shown, words


def test_a_notification_takes_no_answer() -> None:
    with pytest.raises(CommandError):
        answered({"run_id": "r", "type": "interaction", "function": "f", "to": "x", "message": "Done.",
                  "answer_schema": None})  # fmt: skip
