"""Save-time checks of templates, with document lines (interaction-format.md, "Templates and pointers")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from parley.templates.checks import PlaceNames, check_template, place_names, template_roots
from parley.templates.environment import NESTING_MAX
from parley.templates.render import RenderFailure, render_text

MESSAGE = place_names("message")

BRIEF_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"brief": {"type": "string"}, "criteria": {"type": "string"}},
    "required": ["brief", "criteria"],
}

CLOSED_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "owner": {"type": "string"},
        "limit": {"type": "integer"},
        "account": {"$ref": "#/$defs/account"},
        "legacy": {"$ref": "#/definitions/legacy"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
        "open": {"type": "object"},
    },
    "$defs": {
        "account": {"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": False}
    },
    "definitions": {"legacy": {"type": "object", "properties": {"v": {}}, "additionalProperties": False}},
}


def check(
    source: str,
    *,
    place: PlaceNames = MESSAGE,
    schema: Mapping[str, Any] | None = CLOSED_SCHEMA,
    first_line: int = 1,
    whole_value: bool = False,
    refuse_structures: bool = True,
) -> list[tuple[int, str]]:
    return check_template(
        source,
        place=place,
        input_schema=schema,
        first_line=first_line,
        whole_value=whole_value,
        refuse_structures=refuse_structures,
    )


# --- templates that pass ------------------------------------------------------------------------------


def test_the_reasoning_example_passes() -> None:
    source = "{{ input.brief }}\nCriteria: {{ input.criteria }}"
    assert check(source, schema=BRIEF_SCHEMA) == []


@pytest.mark.parametrize(
    "source",
    [
        '{{ input.nickname | default: "friend" }}',
        "{% if input.vip %}VIP{% endif %}",
        "{{ today }} {{ now }}",
        "{{ 364028 | money }} {{ input.notes | clip: 200 }} {% assign n = input.notes | words %}{{ n }}",
        "{% for item in input.list %}{{ forloop.index }}: {{ item.name }}{% endfor %}",
        "{% tablerow cell in input.list cols: 2 %}{{ cell }}{{ tablerowloop.col }}{% endtablerow %}",
        "{% increment counter %}{{ counter }}{% decrement down %}{{ down }}",
        "{% cycle 'a', 'b' %}{% cycle 'group': 'x', 'y' %}",
        "{% case input.kind %}{% when 'a' %}A{% else %}?{% endcase %}",
        "{% liquid\n assign x = input.a\n echo x | upcase\n%}",
        "{% raw %}{{ anything }} {% include 'x' %}{% endraw %}",
        "{% comment %}{{ anything }} {% include 'x' %}{% endcomment %}{% # {{ note }} %}",
        "{% unless input.a %}{% for i in (1..3) %}{% if i == 2 %}{% break %}{% endif %}"
        "{% continue %}{% endfor %}{% endunless %}",
        "{{ input.limit }} {{ input.for.in }}",
    ],
)
def test_templates_that_pass(source: str) -> None:
    assert check(source, schema=None) == []


def test_a_name_assigned_later_in_the_template_is_its_own() -> None:
    assert check("{% for i in (1..2) %}{{ last }}{% assign last = i %}{% endfor %}", schema=None) == []


# --- names ---------------------------------------------------------------------------------------------


def test_a_name_the_place_does_not_read() -> None:
    source = "Line one\n\n{{ foo }}"
    assert check(source, first_line=10) == [
        (12, "the message reads 'foo', which is not one of input, today, now")
    ]


def test_a_loop_variable_outside_its_loop() -> None:
    problems = check("{% for i in (1..2) %}{% endfor %}{{ i }}{{ forloop.index }}")
    assert [message for _, message in problems] == [
        "the message reads 'forloop', which is not one of input, today, now",
        "the message reads 'i', which is not one of input, today, now",
    ]


@pytest.mark.parametrize(
    ("place", "source", "shown"),
    [
        ("replies.conversation", "{{ sent.conversation }}/{{ sent.id }}{{ sent.channel }}", "sent.channel"),
        ("replies.conversation", "{{ sent }}", "sent"),
        ("replies.conversation", "{{ input.owner }}", "input"),
        ("replies.conversation", "{{ to.name }}", "to.name"),
        ("replies.with", "{{ message }}", "message"),
        ("tell.with", "{{ since }}", "since"),
        ("to", "{{ message }}", "message"),
        ("call.with", "{{ to }}", "to"),
    ],
)
def test_each_place_reads_only_its_names(place: str, source: str, shown: str) -> None:
    problems = check(source, place=place_names(place), schema=None)
    assert len(problems) == 1
    assert f"reads '{shown}', which is not one of" in problems[0][1]


def test_the_names_of_each_place_pass() -> None:
    assert check("{{ sent.conversation }}/{{ sent.id }}", place=place_names("replies.conversation")) == []
    replies_with = "{{ to }}{{ sent.conversation }}{{ sent.id }}{{ conversation }}{{ since | default: '0' }}"
    assert check(replies_with, place=place_names("replies.with")) == []
    assert check("{{ to }}{{ sent.id }}{{ message }}", place=place_names("tell.with")) == []
    deliver = (
        "{{ input.owner }}{{ today }}{{ now }}{{ to }}{{ message }}{{ run_id }}{{ function }}{{ expires_at }}"
    )
    assert check(deliver, place=place_names("deliver.with")) == []


def test_the_message_lists_the_names_of_the_place() -> None:
    problems = check("{{ foo }}", place=place_names("replies.with"))
    assert problems == [
        (
            1,
            "`replies.with` reads 'foo', which is not one of "
            "to, sent.conversation, sent.id, conversation, since",
        )
    ]


# --- the input schema ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("{{ input.nickname }}", "input.nickname"),
        ('{{ input.nickname | default: "friend" }}', "input.nickname"),
        ("{% if input.vip %}{% endif %}", "input.vip"),
        ("{{ input.account.name }}", "input.account.name"),
        ("{{ input.legacy.w }}", "input.legacy.w"),
        ("{{ input.items[0].m }}", "input.items[0].m"),
        ("{{ input.items.first.m }}", "input.items.first.m"),
        ("{{ input.constructor }}", "input.constructor"),
        ("{{ input['owner2'] }}", "input.owner2"),
    ],
)
def test_a_field_the_input_schema_does_not_allow(source: str, shown: str) -> None:
    assert check(source) == [(1, f"the message reads '{shown}', which the input schema does not allow")]


@pytest.mark.parametrize(
    "source",
    [
        "{{ input.owner }} {{ input.limit }}",
        "{{ input.account.id }} {{ input.legacy.v }}",
        "{{ input.items[0].n }} {{ input.items.last.n }} {{ input.items.size }} {{ input.size }}",
        "{{ input.open.anything.deeper }}",
        "{{ input.items[input.limit] }}",
        "{% for item in input.items %}{{ item.anything }}{% endfor %}",
    ],
)
def test_fields_the_input_schema_allows(source: str) -> None:
    assert check(source) == []


def test_without_additional_properties_false_any_field_passes() -> None:
    assert check("{{ input.anything }}", schema=BRIEF_SCHEMA) == []
    assert check("{{ input.anything.at.all }}", schema=None) == []


# --- structures among text --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "shown", "kind"),
    [
        ("Account: {{ input.account }}", "input.account", "an object"),
        ("{{ input.items }}\n", "input.items", "a list"),
        ("Tags: {{ input.tags }}", "input.tags", "a list"),
        ("Input: {{ input }}", "input", "an object"),
        ("{% echo input.open %}.", "input.open", "an object"),
    ],
)
def test_a_structure_inside_a_longer_text(source: str, shown: str, kind: str) -> None:
    assert check(source) == [
        (1, f"the message renders '{shown}', {kind}, inside a longer text; use '| json' to write it as JSON")
    ]


def test_a_structure_through_json_or_alone_passes() -> None:
    assert check("Account: {{ input.account | json }}") == []
    assert check("{{ input.account }}") == []


def test_whole_value_lets_whitespace_surround_the_one_expression() -> None:
    place = place_names("deliver.with")
    assert check(" {{ answer_schema }} ", place=place, whole_value=True) == []
    assert check("{{ answer_schema }}", place=place) == []
    problems = check(" {{ answer_schema }} ", place=place)
    assert problems == [
        (
            1,
            "`deliver.with` renders 'answer_schema', an object, inside a longer text; "
            "use '| json' to write it as JSON",
        )
    ]
    assert len(check("Schema: {{ answer_schema }}", place=place, whole_value=True)) == 1


def test_a_reasoning_template_may_render_structures() -> None:
    assert check("Account: {{ input.account }}", refuse_structures=False) == []


# --- tags, filters, compile errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tag", "source"),
    [
        ("include", "{% include 'other' %}"),
        ("render", "{% render 'other' %}"),
        ("layout", "{% layout 'base' %}"),
        ("block", "{% block main %}x{% endblock %}"),
        ("capture", "{% capture x %}y{% endcapture %}"),
        ("ifchanged", "{% ifchanged %}x{% endifchanged %}"),
        ("doc", "{% doc %}x{% enddoc %}"),
        ("extends", "{% extends 'base' %}"),
        ("system", "{% system %}x{% endsystem %}"),
    ],
)
def test_every_unavailable_tag_is_refused_with_its_line(tag: str, source: str) -> None:
    problems = check(f"Hello\n\n{source}\n", first_line=7)
    assert problems == [(9, f"the tag '{tag}' is not available")]


def test_an_unavailable_tag_inside_a_liquid_tag_is_refused_with_its_line() -> None:
    problems = check("{% liquid\n  assign a = 1\n  include 'x'\n%}", first_line=4)
    assert problems == [(6, "the tag 'include' is not available")]


def test_several_unavailable_tags_are_all_listed() -> None:
    problems = check("{% include 'a' %}\n{% render 'b' %}")
    assert problems == [(1, "the tag 'include' is not available"), (2, "the tag 'render' is not available")]


@pytest.mark.parametrize(
    "name",
    [
        "date",
        "date_to_xmlschema",
        "sample",
        "md5",
        "sha256",
        "hmac_sha1",
        "strip_html",
        "url_encode",
        "url_decode",
        "cgi_escape",
        "uri_escape",
        "where_exp",
        "find_exp",
        "group_by_exp",
        "inspect",
        "jsonify",
    ],
)
def test_every_unavailable_filter_is_refused_with_its_line(name: str) -> None:
    source = f"Hello\n{{% if true %}}\n  {{{{ input.owner | {name} }}}}\n{{% endif %}}"
    assert check(source, first_line=20) == [(22, f"the filter '{name}' is not available")]


def test_a_template_that_does_not_compile_is_refused_with_its_line() -> None:
    assert check("a\nb\n{{ input.owner", first_line=5) == [
        (7, "the template does not compile: expected '}}', found end of file")
    ]
    problems = check("ok\n{% if %}x{% endif %}", first_line=3)
    assert [line for line, _ in problems] == [4]
    assert problems[0][1].startswith("the template does not compile")


def test_a_dollar_brace_is_refused_wherever_it_is() -> None:
    problems = check("${HOME}\n{{ input.owner }} ${X}", first_line=3)
    message = "a template holds no '${': a document is never filled from the environment"
    assert problems == [(3, message), (4, message)]


def test_break_outside_a_loop_is_refused() -> None:
    assert check("a\n{% if true %}{% break %}{% endif %}") == [(2, "'break' is used outside a for loop")]


# --- limits ------------------------------------------------------------------------------------------------


def test_a_template_longer_than_65536_characters_is_refused() -> None:
    assert check("x" * 65_536) == []
    assert check("x" * 65_537, first_line=4) == [
        (4, "the template is 65,537 characters long; at most 65,536")
    ]


def test_more_than_1000_names_are_refused() -> None:
    # `{{ input.owner | upcase }}` names input, owner and upcase: three names.
    assert check("{{ input.owner | upcase }}\n" * 333) == []
    problems = check("{{ input.owner | upcase }}\n" * 334, first_line=2)
    assert problems == [(335, "the template uses more than 1,000 names in its tags and outputs")]


def test_names_in_tags_count_keywords_and_not_strings() -> None:
    # `{% if input.a and input.b %}` is if, input, a, and, input, b (6); `{% endif %}` 1.
    assert check("{% if input.a and input.b %}{% endif %}" * 142 + '{{ "a b c d e f" }}', schema=None) == []
    assert len(check("{% if input.a and input.b %}{% endif %}" * 143, schema=None)) == 1


def test_nesting_is_limited_without_a_recursion_error() -> None:
    nested = "{% if true %}" * NESTING_MAX + "x" + "{% endif %}" * NESTING_MAX
    assert check(nested) == []
    deeper = "{% if true %}" * (NESTING_MAX + 1) + "x" + "{% endif %}" * (NESTING_MAX + 1)
    assert check(deeper) == [(1, f"tags nest more than {NESTING_MAX} levels deep")]
    very_deep = "{% if true %}" * 5000 + "x" + "{% endif %}" * 5000
    assert len(check(very_deep)) == 1


@pytest.mark.parametrize(
    "source",
    [
        "{{ " + "(" * 3000 + "1..2" + ")" * 3000 + " }}",
        "{{ " + "a[" * 900 + "b" + "]" * 900 + " }}",
        "{{ " + "a[" * 40 + "b" + "]" * 40 + " }}",
        "{% liquid\n" + "if true\n" * 200 + "endif\n" * 200 + "%}",
    ],
)
def test_deep_expressions_are_refused_without_a_recursion_error(source: str) -> None:
    problems = check(source)
    assert len(problems) == 1
    assert "nest" in problems[0][1]


# --- filter arguments ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ input.owner | append }}", "the filter 'append' takes 1 argument, not 0"),
        ("{{ input.owner | upcase: 1 }}", "the filter 'upcase' takes no arguments"),
        ("{{ input.owner | truncate: 1, 'x', 3 }}", "the filter 'truncate' takes at most 2 arguments, not 3"),
        ("{{ input.owner | default: 1, colour: true }}", "the filter 'default' has no argument 'colour'"),
        ("{{ input.owner | money: 2 }}", "the filter 'money' takes no arguments"),
        ("{{ input.owner | clip: 1, 2 }}", "the filter 'clip' takes at most 1 argument, not 2"),
    ],
)
def test_a_filter_given_arguments_it_does_not_take(source: str, message: str) -> None:
    assert check("\n" + source, schema=None, first_line=2) == [(3, message)]


def test_filters_given_the_arguments_they_take() -> None:
    source = (
        "{{ input.owner | default: 'x', allow_false: true | clip | clip: 3 | truncate: 5, '…' | escape }}"
        "{{ input.list | where: 'a' | where: 'a', 1 | slice: 1 | join: ', ' }}"
    )
    assert check(source, schema=None) == []


# --- filter arguments written as literals ----------------------------------------------------------------

#: The data each run below renders with: the run refuses the argument whatever the value on the left.
RUN_DATA: Mapping[str, Any] = {
    "input": {"notes": "Some notes", "n": 7, "obj": {"a": 1}, "l": [1, 2]},
    "today": "2026-10-17",
    "now": "2026-10-17T10:18:42Z",
}


@pytest.mark.parametrize(
    "source",
    [
        "{{ input.notes | clip: -1 }}",
        "{{ input.notes | clip: 'many' }}",
        "{{ input.notes | clip: 2.5 }}",
        "{{ input.notes | clip: nil }}",
        "{{ input.notes | clip: (1..3) }}",
        "{{ input.obj | json: 'wide' }}",
        "{{ input.obj | json: true }}",
        "{{ input.n | divided_by: 0 }}",
        "{{ input.n | modulo: 0 }}",
        "{{ input.notes | truncate: 'x' }}",
        "{{ input.l | concat: 5 }}",
        "{% assign short = input.notes | clip: -1 %}{{ short }}",
        "{% if input.notes %}\n{% for x in input.l %}{{ x | clip: -2 }}{% endfor %}{% endif %}",
        "{% liquid\necho input.notes | upcase | clip: -1\n%}",
    ],
)
def test_a_literal_argument_the_filter_refuses_is_refused_with_the_runs_words(source: str) -> None:
    with pytest.raises(RenderFailure) as run:
        render_text("\n" + source, RUN_DATA, first_line=2)
    assert check("\n" + source, schema=None, first_line=2) == [(run.value.line, run.value.message)]


@pytest.mark.parametrize(
    "source",
    [
        "{{ input.notes | clip: 0 }}{{ input.notes | clip: '12' }}{{ input.notes | clip: 3.0 }}",
        "{{ input.obj | json: 2 }}{{ input.obj | json: -1 }}",
        "{{ input.n | divided_by: 2 }}{{ input.n | modulo: 3 }}{{ input.n | plus: 'x' }}",
        "{{ input.l | concat: input.l }}{{ input.notes | clip: input.n }}",
        "{{ input.notes | slugify: 'nonsense' }}{{ input.notes | truncate: 3, '' }}",
        "{{ input.l | where: 'a', 1 | map: 'b' | join: 5 | default: nil, allow_false: true }}",
        "{% if false %}{% endif %}{{ 'x' | money }}",
    ],
)
def test_literal_arguments_the_filter_takes_for_some_value_pass(source: str) -> None:
    assert check(source, schema=None) == []


def test_a_literal_argument_is_checked_once_where_it_is_written() -> None:
    source = "{{ input.notes | clip: -1 }}\n{{ input.notes | clip: -1 | clip: -3 }}"
    assert check(source, schema=None) == [
        (1, "clip takes a length of 0 or more"),
        (2, "clip takes a length of 0 or more"),
    ]


# --- the system block (reasoning templates) ----------------------------------------------------------------

REASONING = place_names("template")
EXPENSES = (
    "{% system %}You review expenses against the policy of {{ input.company }}.{% endsystem %}\n"
    "Review this expense: {{ input.expense | json }}"
)


def reasoning_check(source: str, *, first_line: int = 1) -> list[tuple[int, str]]:
    return check_template(
        source,
        place=REASONING,
        input_schema=None,
        first_line=first_line,
        refuse_structures=False,
        system_block=True,
    )


def test_a_reasoning_template_may_hold_one_system_block() -> None:
    assert reasoning_check(EXPENSES) == []


def test_a_system_block_elsewhere_is_refused() -> None:
    assert check(EXPENSES, schema=None, first_line=3) == [(3, "the tag 'system' is not available")]


def test_a_second_system_block_is_refused() -> None:
    source = "{% system %}a{% endsystem %}\nx\n{% system %}b{% endsystem %}"
    assert reasoning_check(source, first_line=10) == [(12, "a template has at most one system block")]


@pytest.mark.parametrize(
    "source",
    [
        "{% if true %}\n{% system %}a{% endsystem %}{% endif %}x",
        "{% for i in (1..2) %}\n{% system %}a{% endsystem %}{% endfor %}x",
        "{% liquid\nsystem\necho 1\nendsystem\n%}x",
    ],
)
def test_a_system_block_inside_another_tag_is_refused(source: str) -> None:
    assert reasoning_check(source) == [
        (2, "the system block must sit at the top level, outside every other tag")
    ]


def test_system_tags_take_no_arguments() -> None:
    problems = reasoning_check("{% system strict %}a{% endsystem %}x")
    assert problems == [(1, "the template does not compile: the system tag takes no arguments")]


def test_custom_place_names() -> None:
    place = PlaceNames({"input": None, "cursor": frozenset()}, label="the page template")
    assert check("{{ cursor }}{{ input.a }}", place=place, schema=None) == []
    assert check("{{ today }}", place=place, schema=None) == [
        (1, "the page template reads 'today', which is not one of input, cursor")
    ]


def test_template_roots_are_the_names_read_from_the_data() -> None:
    assert template_roots("{{ input.a }} {% assign x = 1 %}{{ x }}{{ today | upcase }}") == {"input", "today"}
    assert template_roots("{% for i in (1..2) %}{{ i }}{% endfor %}{{ sent.id }}") == {"sent"}
    assert template_roots("plain text") == frozenset()
    assert template_roots("{{ broken") == frozenset()
