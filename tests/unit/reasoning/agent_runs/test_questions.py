"""Questions a run asks and the answers it takes: every rule of a ``request_input`` call refused with its
field, the question as shown and read back, the answer schema, and every rule of an answer refused with
its pointer (agent-runs.md, "Questions: ``request_input``" and "A tool that asks")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from parley.errors import ErrorEntry
from parley.reasoning.agent_runs.questions import (
    REQUEST_INPUT,
    FormQuestion,
    Option,
    Question,
    answer_errors,
    answer_schema,
    check_question,
    request_input_spec,
)

OPTIONS = [{"id": "lisbon", "label": "Lisbon", "recommended": True}, {"id": "porto", "label": "Porto"}]
CHOICE: dict[str, Any] = {"kind": "choice", "prompt": "Where do you leave from?", "options": OPTIONS}
TEXT: dict[str, Any] = {"kind": "text", "prompt": "What is the trip for?"}
FORM: dict[str, Any] = {
    "kind": "form",
    "prompt": "A few details",
    "questions": [
        {"id": "purpose", "kind": "text", "prompt": "What is the trip for?"},
        {"id": "city", "kind": "choice", "prompt": "Which city?", "options": OPTIONS, "multiple": True},
        {"id": "notes/extra", "kind": "text", "prompt": "Anything else?", "required": False},
    ],
}


def question(arguments: dict[str, Any]) -> Question:
    checked = check_question(arguments)
    assert isinstance(checked, Question), checked
    return checked


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**base, **changes}


def without(base: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in base.items() if name != key}


def form_with(*questions: Any) -> dict[str, Any]:
    return with_(FORM, questions=list(questions))


def text_q(question_id: Any = "a", **changes: Any) -> dict[str, Any]:
    return {"id": question_id, "kind": "text", "prompt": "Why?", **changes}


def choice_q(question_id: Any = "b", **changes: Any) -> dict[str, Any]:
    return {"id": question_id, "kind": "choice", "prompt": "Which?", "options": OPTIONS, **changes}


def has_no_ref(value: Any) -> bool:
    if isinstance(value, dict):
        return "$ref" not in value and all(has_no_ref(each) for each in value.values())
    if isinstance(value, list):
        return all(has_no_ref(each) for each in value)
    return True


# --- the tool ---------------------------------------------------------------------------------------


def test_the_tool_is_request_input_with_a_plain_2020_12_schema() -> None:
    spec = request_input_spec()
    assert spec.name == REQUEST_INPUT == "request_input"
    schema = dict(spec.input_schema)
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert schema["required"] == ["kind", "prompt"]
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {
        "kind",
        "prompt",
        "options",
        "multiple",
        "allow_custom",
        "allow_skip",
        "skip_label",
        "questions",
    }
    assert has_no_ref(schema)
    assert len(spec.description.encode()) < 4096
    assert "cannot find out yourself" in spec.description
    assert "result" in spec.description


@pytest.mark.parametrize("arguments", [TEXT, CHOICE, FORM], ids=["text", "choice", "form"])
def test_the_tool_schema_takes_valid_calls(arguments: dict[str, Any]) -> None:
    assert list(Draft202012Validator(dict(request_input_spec().input_schema)).iter_errors(arguments)) == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"kind": "poll", "prompt": "?"},
        {"kind": "text", "prompt": ""},
        {"kind": "text"},
        with_(CHOICE, options=[]),
        with_(CHOICE, options=[{"id": "x" * 65, "label": "X"}]),
        with_(TEXT, colour="red"),
        form_with(text_q()),
    ],
)
def test_the_tool_schema_refuses_what_it_can_express(arguments: dict[str, Any]) -> None:
    assert not Draft202012Validator(dict(request_input_spec().input_schema)).is_valid(arguments)


def test_each_spec_is_a_fresh_schema() -> None:
    first = request_input_spec()
    first.input_schema["properties"]["kind"]["enum"].append("poll")
    assert request_input_spec().input_schema["properties"]["kind"]["enum"] == ["text", "choice", "form"]


# --- valid calls ------------------------------------------------------------------------------------


def test_a_text_question_parses() -> None:
    assert question(TEXT) == Question("text", "What is the trip for?")


def test_a_choice_parses_with_its_defaults() -> None:
    assert question(CHOICE) == Question(
        "choice",
        "Where do you leave from?",
        (Option("lisbon", "Lisbon", recommended=True), Option("porto", "Porto")),
    )


def test_a_choice_parses_with_every_field() -> None:
    arguments = with_(CHOICE, multiple=True, allow_custom=True, allow_skip=True, skip_label="Not sure yet")
    assert question(arguments) == Question(
        "choice",
        "Where do you leave from?",
        (Option("lisbon", "Lisbon", True), Option("porto", "Porto")),
        multiple=True,
        allow_custom=True,
        allow_skip=True,
        skip_label="Not sure yet",
    )


def test_a_form_parses() -> None:
    parsed = question(FORM)
    assert parsed.kind == "form"
    assert parsed.questions == (
        FormQuestion("purpose", "text", "What is the trip for?"),
        FormQuestion(
            "city",
            "choice",
            "Which city?",
            (Option("lisbon", "Lisbon", True), Option("porto", "Porto")),
            True,
        ),
        FormQuestion("notes/extra", "text", "Anything else?", required=False),
    )


def test_the_bounds_themselves_are_taken() -> None:
    options = [{"id": f"{n:064d}", "label": f"Option {n}"} for n in range(50)]
    assert isinstance(check_question(with_(CHOICE, prompt="x" * 2000, options=options)), Question)
    assert isinstance(check_question(with_(CHOICE, allow_skip=True, skip_label="s" * 200)), Question)
    many = [text_q(f"q{n}") for n in range(8)]
    assert isinstance(check_question(form_with(*many)), Question)
    assert isinstance(check_question(form_with(text_q("a"), choice_q("b"))), Question)


def test_a_tool_request_may_carry_its_continuation() -> None:
    arguments = with_(CHOICE, continuation={"tool": "pick_city", "arguments": {"trip": 7}})
    assert check_question(arguments, allow_continuation=True) == question(CHOICE)
    refused = check_question(arguments)
    assert isinstance(refused, str)
    assert refused.startswith("request_input: continuation: not a field of request_input")


def test_a_tool_request_is_named_as_such_when_refused() -> None:
    refused = check_question(with_(CHOICE, options=[]), allow_continuation=True)
    assert refused == "parley/interaction: options: a choice offers 1 to 50 options; this one has 0."


# --- refused calls ----------------------------------------------------------------------------------


def test_the_pages_example_message() -> None:
    assert (
        check_question(with_(CHOICE, options=[]))
        == "request_input: options: a choice offers 1 to 50 options; this one has 0."
    )


@pytest.mark.parametrize("arguments", [None, [], "ask", 3])
def test_arguments_that_are_not_an_object_are_refused(arguments: Any) -> None:
    refused = check_question(arguments)
    assert isinstance(refused, str)
    assert refused.startswith("request_input: the arguments must be a JSON object")


REFUSED_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown key", with_(TEXT, colour="red"), "colour: not a field of request_input"),
    ("kind missing", without(TEXT, "kind"), "kind: required"),
    ("kind unknown", with_(TEXT, kind="poll"), 'kind: "poll" is not a kind'),
    ("kind not text", with_(TEXT, kind=["text"]), "kind: "),
    ("prompt missing", without(TEXT, "prompt"), "prompt: required"),
    ("prompt not text", with_(TEXT, prompt=7), "prompt: expected text"),
    ("prompt empty", with_(TEXT, prompt=""), "prompt: a prompt is 1 to 2,000 characters; this one has 0."),
    ("prompt too long", with_(TEXT, prompt="x" * 2001), "this one has 2,001."),
    ("text with options", with_(TEXT, options=OPTIONS), "options: not for a text question"),
    ("text with multiple", with_(TEXT, multiple=False), "multiple: not for a text question"),
    ("text with allow_custom", with_(TEXT, allow_custom=True), "allow_custom: not for a text question"),
    ("text with allow_skip", with_(TEXT, allow_skip=True), "allow_skip: not for a text question"),
    ("text with skip_label", with_(TEXT, skip_label="Skip"), "skip_label: not for a text question"),
    ("text with questions", with_(TEXT, questions=[]), "questions: not for a text question"),
    ("choice without options", without(CHOICE, "options"), "options: required"),
    ("options not a list", with_(CHOICE, options={"a": "A"}), "options: expected a list"),
    (
        "51 options",
        with_(CHOICE, options=[{"id": str(n), "label": "L"} for n in range(51)]),
        "this one has 51.",
    ),
    ("option not object", with_(CHOICE, options=["lisbon"]), "options[0]: expected an option"),
    (
        "option unknown key",
        with_(CHOICE, options=[{"id": "a", "label": "A", "x": 1}]),
        "options[0].x: not a field",
    ),
    ("option id missing", with_(CHOICE, options=[{"label": "A"}]), "options[0].id: required"),
    (
        "option id not text",
        with_(CHOICE, options=[{"id": 1, "label": "A"}]),
        "options[0].id: an option's id is",
    ),
    (
        "option id empty",
        with_(CHOICE, options=[{"id": "", "label": "A"}]),
        "options[0].id: an option's id is 1",
    ),
    ("option id too long", with_(CHOICE, options=[{"id": "x" * 65, "label": "A"}]), "this one has 65."),
    (
        "option id twice",
        with_(CHOICE, options=[{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]),
        'options[1].id: "a" is the id of an earlier option; ids are unique.',
    ),
    ("label missing", with_(CHOICE, options=[{"id": "a"}]), "options[0].label: required"),
    ("label empty", with_(CHOICE, options=[{"id": "a", "label": ""}]), "options[0].label: expected"),
    ("label not text", with_(CHOICE, options=[{"id": "a", "label": 3}]), "options[0].label: expected"),
    (
        "recommended not boolean",
        with_(CHOICE, options=[{"id": "a", "label": "A", "recommended": "yes"}]),
        "options[0].recommended: expected true or false",
    ),
    ("multiple not boolean", with_(CHOICE, multiple="yes"), "multiple: expected true or false"),
    ("allow_custom not boolean", with_(CHOICE, allow_custom=1), "allow_custom: expected true or false"),
    ("allow_skip not boolean", with_(CHOICE, allow_skip=None), "allow_skip: expected true or false"),
    ("skip_label without allow_skip", with_(CHOICE, skip_label="Skip"), "skip_label: only with allow_skip"),
    (
        "skip_label with allow_skip false",
        with_(CHOICE, allow_skip=False, skip_label="Skip"),
        "skip_label: only with allow_skip",
    ),
    ("skip_label not text", with_(CHOICE, allow_skip=True, skip_label=1), "skip_label: expected text"),
    ("skip_label empty", with_(CHOICE, allow_skip=True, skip_label=""), "skip_label: the words"),
    ("skip_label too long", with_(CHOICE, allow_skip=True, skip_label="s" * 201), "this one has 201."),
    ("choice with questions", with_(CHOICE, questions=FORM["questions"]), "questions: only for a form"),
    ("form with options", with_(FORM, options=OPTIONS), "options: not for a form"),
    ("form with multiple", with_(FORM, multiple=True), "multiple: not for a form"),
    ("form with allow_custom", with_(FORM, allow_custom=True), "allow_custom: not for a form"),
    ("form with allow_skip", with_(FORM, allow_skip=True), "allow_skip: not for a form"),
    ("form with skip_label", with_(FORM, skip_label="Skip"), "skip_label: not for a form"),
    ("form without questions", without(FORM, "questions"), "questions: required"),
    ("questions not a list", with_(FORM, questions={"a": 1}), "questions: expected a list"),
    ("one question", form_with(text_q()), "questions: a form asks 2 to 8 questions; this one has 1."),
    ("nine questions", form_with(*[text_q(f"q{n}") for n in range(9)]), "this one has 9."),
    ("question not object", form_with(text_q(), "why?"), "questions[1]: expected a question"),
    (
        "question unknown key",
        form_with(text_q(), choice_q(allow_skip=True)),
        "questions[1].allow_skip: not a field",
    ),
    ("question id missing", form_with(text_q(), without(choice_q(), "id")), "questions[1].id: required"),
    ("question id empty", form_with(text_q(), choice_q("")), "questions[1].id: a question's id is 1"),
    (
        "question id too long",
        form_with(text_q(), choice_q("q" * 65)),
        "questions[1].id: a question's id is 1",
    ),
    ("question id not text", form_with(text_q(), choice_q(5)), "questions[1].id: a question's id is text"),
    (
        "question id twice",
        form_with(text_q("a"), choice_q("a")),
        'questions[1].id: "a" is the id of an earlier question; ids are unique.',
    ),
    (
        "question kind missing",
        form_with(text_q(), without(choice_q(), "kind")),
        "questions[1].kind: required",
    ),
    ("question kind form", form_with(text_q(), choice_q(kind="form")), 'questions[1].kind: "form" is not'),
    (
        "question prompt missing",
        form_with(text_q(), without(choice_q(), "prompt")),
        "questions[1].prompt: required",
    ),
    ("question prompt empty", form_with(text_q(), choice_q(prompt="")), "questions[1].prompt: a prompt is 1"),
    (
        "question prompt too long",
        form_with(text_q(), choice_q(prompt="x" * 2001)),
        "questions[1].prompt: a prompt",
    ),
    (
        "text question with options",
        form_with(text_q(options=OPTIONS), choice_q()),
        "questions[0].options: not for",
    ),
    (
        "text question with multiple",
        form_with(text_q(multiple=True), choice_q()),
        "questions[0].multiple: not for",
    ),
    (
        "text question custom",
        form_with(text_q(allow_custom=True), choice_q()),
        "questions[0].allow_custom: not for",
    ),
    (
        "choice question no options",
        form_with(text_q(), without(choice_q(), "options")),
        "questions[1].options: req",
    ),
    (
        "choice question 0 options",
        form_with(text_q(), choice_q(options=[])),
        "questions[1].options: a choice offers",
    ),
    (
        "choice question option id twice",
        form_with(text_q(), choice_q(options=[{"id": "a", "label": "A"}, {"id": "a", "label": "B"}])),
        "questions[1].options[1].id: ",
    ),
    (
        "choice question multiple",
        form_with(text_q(), choice_q(multiple=0)),
        "questions[1].multiple: expected true",
    ),
    (
        "choice question custom",
        form_with(text_q(), choice_q(allow_custom="no")),
        "questions[1].allow_custom: expec",
    ),
    (
        "required not boolean",
        form_with(text_q(required="yes"), choice_q()),
        "questions[0].required: expected true",
    ),
]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [(arguments, expected) for _, arguments, expected in REFUSED_CALLS],
    ids=[name for name, _, _ in REFUSED_CALLS],
)
def test_a_call_that_breaks_a_rule_is_refused_naming_the_field(
    arguments: dict[str, Any], expected: str
) -> None:
    refused = check_question(arguments)
    assert isinstance(refused, str)
    lines = refused.split("\n")
    assert all(line.startswith("request_input: ") for line in lines)
    assert any(line.startswith("request_input: ") and expected in line for line in lines), refused


def test_every_rule_broken_is_listed_and_the_rest_counted() -> None:
    refused = check_question({"kind": "choice", "prompt": "", "options": [], "multiple": 1, "skip_label": 2})
    assert refused == "\n".join(
        [
            "request_input: prompt: a prompt is 1 to 2,000 characters; this one has 0.",
            "request_input: options: a choice offers 1 to 50 options; this one has 0.",
            "request_input: multiple: expected true or false, not 1.",
            "request_input: skip_label: only with allow_skip true: it is the words of the button that skips.",
        ]
    )
    many = check_question({"kind": "text", "prompt": "?", **{f"k{n}": n for n in range(12)}})
    assert isinstance(many, str)
    lines = many.split("\n")
    assert len(lines) == 11
    assert lines[-1] == "request_input: and 2 more rules broken."


# --- the question as shown --------------------------------------------------------------------------


def test_a_choice_is_shown_with_what_it_offers() -> None:
    shown = question(with_(CHOICE, allow_skip=True)).as_json()
    assert shown == {
        "kind": "choice",
        "prompt": "Where do you leave from?",
        "options": [
            {"id": "lisbon", "label": "Lisbon", "recommended": True},
            {"id": "porto", "label": "Porto"},
        ],
        "multiple": False,
        "allow_custom": False,
        "allow_skip": True,
        "skip_label": None,
    }


def test_a_text_question_is_shown_with_its_prompt() -> None:
    assert question(TEXT).as_json() == {"kind": "text", "prompt": "What is the trip for?"}


def test_a_form_is_shown_with_its_questions() -> None:
    assert question(FORM).as_json() == {
        "kind": "form",
        "prompt": "A few details",
        "questions": [
            {"id": "purpose", "kind": "text", "prompt": "What is the trip for?", "required": True},
            {
                "id": "city",
                "kind": "choice",
                "prompt": "Which city?",
                "options": OPTIONS,
                "multiple": True,
                "allow_custom": False,
                "required": True,
            },
            {"id": "notes/extra", "kind": "text", "prompt": "Anything else?", "required": False},
        ],
    }


@pytest.mark.parametrize(
    "arguments",
    [
        TEXT,
        CHOICE,
        with_(CHOICE, multiple=True, allow_custom=True, allow_skip=True, skip_label="Later"),
        FORM,
        form_with(text_q(), choice_q(allow_custom=True, required=False)),
    ],
)
def test_a_question_reads_back_as_it_was_shown(arguments: dict[str, Any]) -> None:
    parsed = question(arguments)
    shown = json.loads(json.dumps(parsed.as_json()))
    assert Question.from_json(shown) == parsed
    assert Question.from_json(shown).as_json() == shown


# --- the answer schema ------------------------------------------------------------------------------


def test_the_text_schema_is_the_pages_bounds() -> None:
    assert answer_schema(question(TEXT)) == {
        "type": "string",
        "minLength": 1,
        "maxLength": 8192,
        "pattern": "\\S",
    }


def test_a_single_choice_schema() -> None:
    assert answer_schema(question(with_(CHOICE, allow_custom=True, allow_skip=True))) == {
        "type": "object",
        "properties": {
            "selected": {
                "type": "array",
                "items": {"type": "string", "enum": ["lisbon", "porto"]},
                "uniqueItems": True,
                "maxItems": 1,
            },
            "custom": {"type": "string", "minLength": 1, "maxLength": 8192, "pattern": "\\S"},
            "skipped": {"const": True},
        },
        "additionalProperties": False,
        "minProperties": 1,
    }


def test_a_multiple_choice_schema_without_custom_or_skip() -> None:
    schema = answer_schema(question(with_(CHOICE, multiple=True)))
    assert set(schema["properties"]) == {"selected"}
    assert "maxItems" not in schema["properties"]["selected"]


def test_a_form_schema() -> None:
    schema = answer_schema(question(FORM))
    assert schema["required"] == ["answers"]
    assert schema["additionalProperties"] is False
    answers = schema["properties"]["answers"]
    assert answers["required"] == ["purpose", "city"]
    assert answers["additionalProperties"] is False
    assert set(answers["properties"]) == {"purpose", "city", "notes/extra"}
    assert "skipped" not in answers["properties"]["city"]["properties"]


def test_a_form_of_optional_questions_requires_none() -> None:
    schema = answer_schema(question(form_with(text_q(required=False), choice_q(required=False))))
    assert "required" not in schema["properties"]["answers"]


SCHEMA_CASES: list[tuple[dict[str, Any], Any, bool]] = [
    (TEXT, "For a wedding", True),
    (TEXT, "", False),
    (TEXT, "   \n", False),
    (TEXT, 3, False),
    (TEXT, "x" * 8193, False),
    (CHOICE, {"selected": ["lisbon"]}, True),
    (CHOICE, {"selected": ["lisbon", "porto"]}, False),
    (CHOICE, {"selected": ["madrid"]}, False),
    (CHOICE, {}, False),
    (CHOICE, {"custom": "Faro"}, False),
    (CHOICE, {"selected": [], "skipped": True}, False),
    (with_(CHOICE, allow_custom=True), {"custom": "Faro"}, True),
    (with_(CHOICE, allow_skip=True), {"selected": [], "skipped": True}, True),
    (with_(CHOICE, allow_skip=True), {"skipped": True}, True),
    (with_(CHOICE, allow_skip=True), {"skipped": False}, False),
    (with_(CHOICE, multiple=True), {"selected": ["lisbon", "porto"]}, True),
    (with_(CHOICE, multiple=True), {"selected": ["lisbon", "lisbon"]}, False),
    (with_(CHOICE, multiple=True), {"selected": ["lisbon"], "note": "x"}, False),
    (FORM, {"answers": {"purpose": "Wedding", "city": {"selected": ["porto"]}}}, True),
    (FORM, {"answers": {"purpose": "Wedding", "city": {"selected": ["porto"]}, "notes/extra": "No"}}, True),
    (FORM, {"answers": {"purpose": "Wedding"}}, False),
    (FORM, {"answers": {"purpose": "Wedding", "city": {"selected": ["porto"]}, "other": "x"}}, False),
    (FORM, {"answers": {"purpose": "Wedding", "city": {"selected": [], "skipped": True}}}, False),
    (FORM, {"answers": {"purpose": "", "city": {"selected": ["porto"]}}}, False),
    (FORM, {"purpose": "Wedding"}, False),
]


@pytest.mark.parametrize(("arguments", "answer", "valid"), SCHEMA_CASES)
def test_the_answer_schema_agrees_where_it_can_say(
    arguments: dict[str, Any], answer: Any, valid: bool
) -> None:
    asked = question(arguments)
    schema = answer_schema(asked)
    Draft202012Validator.check_schema(schema)
    assert Draft202012Validator(schema).is_valid(answer) is valid
    assert (answer_errors(asked, answer) == []) is valid


# --- answers ----------------------------------------------------------------------------------------

SINGLE = question(with_(CHOICE, allow_custom=True))
SINGLE_PLAIN = question(CHOICE)
MULTIPLE = question(with_(CHOICE, multiple=True, allow_custom=True))
SKIPPABLE = question(with_(CHOICE, allow_skip=True, allow_custom=True, skip_label="Not yet"))
SKIPPABLE_MULTIPLE = question(with_(CHOICE, allow_skip=True, multiple=True))
TEXT_Q = question(TEXT)
FORM_Q = question(FORM)


@pytest.mark.parametrize(
    ("asked", "answer"),
    [
        (TEXT_Q, "For a wedding"),
        (TEXT_Q, "é" * 4096),
        (SINGLE_PLAIN, {"selected": ["lisbon"]}),
        (SINGLE, {"custom": "Faro"}),
        (SINGLE, {"selected": [], "custom": "Faro"}),
        (MULTIPLE, {"selected": ["lisbon", "porto"]}),
        (MULTIPLE, {"selected": ["porto"], "custom": "Faro"}),
        (MULTIPLE, {"custom": "Faro"}),
        (SKIPPABLE, {"selected": [], "skipped": True}),
        (SKIPPABLE, {"skipped": True}),
        (SKIPPABLE, {"selected": ["porto"]}),
        (FORM_Q, {"answers": {"purpose": "Wedding", "city": {"selected": ["lisbon", "porto"]}}}),
        (FORM_Q, {"answers": {"purpose": "Wedding", "city": {"selected": ["porto"]}, "notes/extra": "None"}}),
    ],
)
def test_a_good_answer_is_taken(asked: Question, answer: Any) -> None:
    assert answer_errors(asked, answer) == []


REFUSED_ANSWERS: list[tuple[str, Question, Any, list[str]]] = [
    ("text not a string", TEXT_Q, 5, ["/answer"]),
    ("text null", TEXT_Q, None, ["/answer"]),
    ("text empty", TEXT_Q, "", ["/answer"]),
    ("text only whitespace", TEXT_Q, " \t\n ", ["/answer"]),
    ("text over 8 KiB", TEXT_Q, "é" * 4097, ["/answer"]),
    ("choice not an object", SINGLE, ["lisbon"], ["/answer"]),
    ("choice empty", SINGLE, {}, ["/answer"]),
    ("choice nothing selected", SINGLE, {"selected": []}, ["/answer"]),
    ("selected not a list", SINGLE, {"selected": "lisbon"}, ["/answer/selected"]),
    ("selected id not text", MULTIPLE, {"selected": ["lisbon", 2]}, ["/answer/selected/1"]),
    ("unknown id", MULTIPLE, {"selected": ["lisbon", "madrid"]}, ["/answer/selected/1"]),
    ("id twice", MULTIPLE, {"selected": ["porto", "lisbon", "porto"]}, ["/answer/selected/2"]),
    ("single choice two ids", SINGLE_PLAIN, {"selected": ["lisbon", "porto"]}, ["/answer/selected/1"]),
    ("custom not allowed", SINGLE_PLAIN, {"custom": "Faro"}, ["/answer/custom"]),
    (
        "custom beside selected in a single choice",
        SINGLE,
        {"selected": ["lisbon"], "custom": "Faro"},
        ["/answer/custom"],
    ),
    ("custom empty", SINGLE, {"custom": ""}, ["/answer/custom"]),
    ("custom only whitespace", MULTIPLE, {"custom": "  "}, ["/answer/custom"]),
    ("custom not text", MULTIPLE, {"custom": ["Faro"]}, ["/answer/custom"]),
    ("custom over 8 KiB", MULTIPLE, {"custom": "x" * 8193}, ["/answer/custom"]),
    ("skip not allowed", SINGLE, {"selected": [], "skipped": True}, ["/answer/skipped"]),
    ("skip false", SKIPPABLE, {"skipped": False}, ["/answer/skipped"]),
    ("skip not true", SKIPPABLE, {"selected": [], "skipped": "yes"}, ["/answer/skipped"]),
    ("skip beside selected", SKIPPABLE, {"selected": ["lisbon"], "skipped": True}, ["/answer/skipped"]),
    ("skip beside custom", SKIPPABLE, {"custom": "Faro", "skipped": True}, ["/answer/skipped"]),
    (
        "skip beside several",
        SKIPPABLE_MULTIPLE,
        {"selected": ["lisbon", "porto"], "skipped": True},
        ["/answer/skipped"],
    ),
    ("unknown member", SINGLE, {"selected": ["lisbon"], "reason": "x"}, ["/answer/reason"]),
    ("unknown member only", SINGLE, {"reason": "x"}, ["/answer/reason", "/answer"]),
    ("form not an object", FORM_Q, "Wedding", ["/answer"]),
    ("form without answers", FORM_Q, {}, ["/answer/answers"]),
    ("form answers not an object", FORM_Q, {"answers": ["Wedding"]}, ["/answer/answers"]),
    (
        "form member beside answers",
        FORM_Q,
        {"answers": {"purpose": "W", "city": {"selected": ["porto"]}}, "x": 1},
        ["/answer/x"],
    ),
    ("form required question left out", FORM_Q, {"answers": {"purpose": "W"}}, ["/answer/answers/city"]),
    (
        "form unknown question",
        FORM_Q,
        {"answers": {"purpose": "W", "city": {"selected": ["porto"]}, "budget": "100"}},
        ["/answer/answers/budget"],
    ),
    (
        "form text answer empty, id escaped",
        FORM_Q,
        {"answers": {"purpose": "W", "city": {"selected": ["porto"]}, "notes/extra": " "}},
        ["/answer/answers/notes~1extra"],
    ),
    (
        "form choice unknown id",
        FORM_Q,
        {"answers": {"purpose": "W", "city": {"selected": ["madrid"]}}},
        ["/answer/answers/city/selected/0"],
    ),
    (
        "form choice skipped",
        FORM_Q,
        {"answers": {"purpose": "W", "city": {"selected": [], "skipped": True}}},
        ["/answer/answers/city/skipped"],
    ),
    (
        "form optional answer null",
        FORM_Q,
        {"answers": {"purpose": "W", "city": {"selected": ["porto"]}, "notes/extra": None}},
        ["/answer/answers/notes~1extra"],
    ),
    (
        "form all wrong",
        FORM_Q,
        {"answers": {"purpose": 1, "city": {}}},
        ["/answer/answers/purpose", "/answer/answers/city"],
    ),
]


@pytest.mark.parametrize(
    ("asked", "answer", "pointers"),
    [(asked, answer, pointers) for _, asked, answer, pointers in REFUSED_ANSWERS],
    ids=[name for name, _, _, _ in REFUSED_ANSWERS],
)
def test_an_answer_that_breaks_a_rule_is_refused_with_its_pointer(
    asked: Question, answer: Any, pointers: list[str]
) -> None:
    errors = answer_errors(asked, answer)
    assert [entry.pointer for entry in errors] == pointers
    assert all(entry.detail.endswith(".") and len(entry.detail) > 20 for entry in errors)


def test_the_details_say_what_is_wrong_and_what_is_taken() -> None:
    assert answer_errors(MULTIPLE, {"selected": ["madrid"]}) == [
        ErrorEntry(
            "/answer/selected/0",
            '"madrid" is not an option of this question; its options are "lisbon" and "porto".',
        )
    ]
    assert answer_errors(SINGLE_PLAIN, {"selected": ["lisbon", "porto"]}) == [
        ErrorEntry("/answer/selected/1", "This is a single choice: at most one option is chosen.")
    ]
    assert answer_errors(TEXT_Q, "é" * 4097) == [
        ErrorEntry("/answer", "An answer is at most 8 KiB (8,192 bytes of UTF-8); this one is 8,194 bytes.")
    ]
    [empty] = answer_errors(SKIPPABLE, {"selected": []})
    assert empty.pointer == "/answer"
    assert '"selected": [one option id], "custom": your own answer, "skipped": true' in empty.detail
    [required] = answer_errors(FORM_Q, {"answers": {"purpose": "W"}})
    assert required == ErrorEntry("/answer/answers/city", "This question is required: answer it.")


def test_the_pointer_is_under_the_one_given() -> None:
    assert [entry.pointer for entry in answer_errors(SINGLE_PLAIN, {"custom": "x"}, "/body/answer")] == [
        "/body/answer/custom"
    ]


def test_a_tilde_in_a_question_id_is_escaped() -> None:
    asked = question(form_with(text_q("a~b"), choice_q()))
    errors = answer_errors(asked, {"answers": {"b": {"selected": ["porto"]}}})
    assert [entry.pointer for entry in errors] == ["/answer/answers/a~0b"]


def test_a_lone_surrogate_is_counted_not_raised() -> None:
    assert answer_errors(TEXT_Q, "\ud800" + "x") == []
