"""Warnings about ``input.<field>`` reads the input schema does not list (issue 18, point 3): the page
allows them unless the schema sets ``additionalProperties: false``, so a save warns and does not refuse."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pytest

from parley.templates.checks import PlaceNames, check_template, input_warnings, place_names

MESSAGE = place_names("message")

REVIEW_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["owner", "review"],
    "properties": {
        "owner": {"type": "string"},
        "review": {"type": "string"},
        "account": {"type": "object", "properties": {"name": {"type": "string"}}},
        "lines": {"type": "array", "items": {"type": "object", "properties": {"amount": {"type": "number"}}}},
        "billing": {"$ref": "#/$defs/billing"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "$defs": {"billing": {"type": "object", "properties": {"iban": {"type": "string"}}}},
}


def warnings(
    source: str,
    *,
    schema: Mapping[str, Any] | None = REVIEW_SCHEMA,
    place: PlaceNames = MESSAGE,
    first_line: int = 1,
    defaults: Collection[str] = (),
) -> list[tuple[int, str]]:
    return input_warnings(source, place=place, input_schema=schema, first_line=first_line, defaults=defaults)


def test_a_misspelt_field_is_named_with_the_field_it_probably_meant() -> None:
    assert warnings("The review:\n\n{{ input.reveiw }}\n", first_line=20) == [
        (
            22,
            "the message reads 'input.reveiw', which the input schema does not list; "
            "did you mean 'input.review'?",
        )
    ]


def test_the_same_template_passes_the_check_that_refuses() -> None:
    # the page allows a field the schema does not list, unless additionalProperties is false
    assert check_template("{{ input.reveiw }}", place=MESSAGE, input_schema=REVIEW_SCHEMA, first_line=1) == []


def test_a_field_with_no_close_listed_one_is_named_alone() -> None:
    assert warnings("{{ input.nickname | default: 'friend' }}") == [
        (
            1,
            "the message reads 'input.nickname', which the input schema does not list; "
            "add it to the schema's properties if the input may hold it",
        )
    ]


@pytest.mark.parametrize(
    ("source", "shown", "meant"),
    [
        ("{{ input.account.nmae }}", "input.account.nmae", "input.account.name"),
        ("{{ input.lines[0].amuont }}", "input.lines[0].amuont", "input.lines[0].amount"),
        ("{{ input.lines.first.amuont }}", "input.lines.first.amuont", "input.lines.first.amount"),
        ("{{ input.billing.ibna }}", "input.billing.ibna", "input.billing.iban"),
        ("{{ input.Owner }}", "input.Owner", "input.owner"),
    ],
)
def test_fields_further_in_are_checked_through_items_and_refs(source: str, shown: str, meant: str) -> None:
    assert warnings(source) == [
        (1, f"the message reads '{shown}', which the input schema does not list; did you mean '{meant}'?")
    ]


def test_reads_in_conditions_and_loops_are_warned_of_too() -> None:
    source = "{% if input.reveiw %}\n{% for line in input.lins %}{{ line.amount }}{% endfor %}\n{% endif %}"
    assert [line for line, _ in warnings(source)] == [1, 2]


@pytest.mark.parametrize(
    "source",
    [
        "{{ input.owner }} {{ input.review }}",
        "{{ input.account.name }} {{ input.lines[0].amount }} {{ input.billing.iban }}",
        "{{ input.review.size }} {{ input.tags.first }} {{ input.tags[0] }} {{ input.lines.size }}",
        "{% assign r = input.review %}{{ r.whatever }}",
        "{% for line in input.lines %}{{ line.anything }}{% endfor %}",
        "{{ today }} {{ now }}",
    ],
)
def test_listed_fields_are_not_warned_of(source: str) -> None:
    assert warnings(source) == []


@pytest.mark.parametrize(
    "schema",
    [
        {**REVIEW_SCHEMA, "additionalProperties": True},
        {**REVIEW_SCHEMA, "additionalProperties": {"type": "string"}},
        {**REVIEW_SCHEMA, "patternProperties": {"^rev": {"type": "string"}}},
        {**REVIEW_SCHEMA, "anyOf": [{"properties": {"reveiw": {}}}, {}]},
        {**REVIEW_SCHEMA, "allOf": [{"properties": {"reveiw": {}}}]},
        {**REVIEW_SCHEMA, "$ref": "#/$defs/billing"},
        {"type": "object"},
    ],
    ids=["additional-true", "additional-schema", "pattern", "anyOf", "allOf", "ref", "no-properties"],
)
def test_a_schema_that_may_allow_the_field_is_left_alone(schema: Mapping[str, Any]) -> None:
    assert warnings("{{ input.reveiw }}", schema=schema) == []


def test_a_closed_schema_refuses_instead_of_warning() -> None:
    closed = {**REVIEW_SCHEMA, "additionalProperties": False}
    assert warnings("{{ input.reveiw }}", schema=closed) == []
    assert check_template("{{ input.reveiw }}", place=MESSAGE, input_schema=closed, first_line=1) == [
        (1, "the message reads 'input.reveiw', which the input schema does not allow")
    ]


def test_a_field_input_default_gives_every_run_is_not_warned_of() -> None:
    assert warnings("{{ input.tone }}", defaults={"tone"}) == []
    assert len(warnings("{{ input.account.tone }}", defaults={"tone"})) == 1


def test_no_schema_or_a_template_that_does_not_compile_has_no_warnings() -> None:
    assert warnings("{{ input.reveiw }}", schema=None) == []
    assert warnings("{{ input.reveiw ") == []


def test_each_place_names_itself_and_a_read_is_warned_of_once() -> None:
    found = warnings("'{{ input.reveiw }}' '{{ input.reveiw }}'", place=place_names("call.with"))
    assert found == [
        (
            1,
            "`call.with` reads 'input.reveiw', which the input schema does not list; "
            "did you mean 'input.review'?",
        )
    ]


def test_a_reasoning_template_is_read_with_its_system_block() -> None:
    source = "{% system %}Judge {{ input.reveiw }}{% endsystem %}\nBrief: {{ input.owner }}"
    assert warnings(source, place=place_names("template"), first_line=7) == [
        (
            7,
            "the template reads 'input.reveiw', which the input schema does not list; "
            "did you mean 'input.review'?",
        )
    ]
