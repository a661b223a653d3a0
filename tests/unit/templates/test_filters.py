"""The filters the runtime adds, and the standard ones written for it (reasoning-format.md, "Filters")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

import pytest

from parley.templates.render import RenderFailure, render_text, render_typed

DATA: Mapping[str, object] = {"input": {}, "today": "2026-10-17", "now": "2026-10-17T10:18:42Z"}


def render(source: str, **input_fields: object) -> str:
    return render_text(source, {**DATA, "input": input_fields})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{{ 364028 | money }}", "$364,028"),
        ("{{ 1234.5 | money }}", "$1,234.50"),
        ('{{ "1234.5" | money }}', "$1,234.50"),
        ('{{ "364028" | money }}', "$364,028"),
        ("{{ 0.5 | money }}", "$0.50"),
        ("{{ 1234.567 | money }}", "$1,234.57"),
        ("{{ -1234.5 | money }}", "-$1,234.50"),
        ("{{ 1000000 | money }}", "$1,000,000"),
        ("{{ 12.0 | money }}", "$12"),
    ],
)
def test_money(source: str, expected: str) -> None:
    assert render(source) == expected


def test_money_reads_the_input() -> None:
    assert render("{{ input.total | money }}", total=364028) == "$364,028"


@pytest.mark.parametrize("value", ['"abc"', '"1,000"', "true", "nil", "input.list", "input.obj"])
def test_money_of_anything_else_stops_the_render(value: str) -> None:
    with pytest.raises(RenderFailure, match="money takes a number"):
        render(f"{{{{ {value} | money }}}}", list=[1], obj={"a": 1})


def test_clip_cuts_to_400_code_points_by_default_and_appends_an_ellipsis() -> None:
    text = "é" * 401
    assert render("{{ input.notes | clip }}", notes=text) == "é" * 400 + "…"
    assert render("{{ input.notes | clip }}", notes="é" * 400) == "é" * 400


def test_clip_takes_a_length() -> None:
    assert render("{{ input.notes | clip: 5 }}", notes="hello world") == "hello…"
    assert render("{{ input.notes | clip: 200 }}", notes="short") == "short"
    assert render("{{ input.notes | clip: 0 }}", notes="x") == "…"


def test_clip_counts_code_points_not_bytes_or_graphemes() -> None:
    assert render("{{ input.notes | clip: 2 }}", notes="👍🏽x") == "👍🏽…"


def test_clip_refuses_a_negative_length() -> None:
    with pytest.raises(RenderFailure, match="clip"):
        render("{{ 'abc' | clip: -1 }}")


def test_words_counts_runs_between_whitespace() -> None:
    assert render("{% assign n = input.notes | words %}{{ n }}", notes="  one two\tthree\nfour  ") == "4"
    assert render("{{ '' | words }}") == "0"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{{ input.l | join }}", "a b c"),
        ('{{ input.l | join: ", " }}', "a, b, c"),
        ("{{ input.l | array_to_sentence_string }}", "a, b, and c"),
        ('{{ input.two | array_to_sentence_string: "or" }}', "a or b"),
        ("{{ input.l | push: 'd' | json }}", '["a","b","c","d"]'),
        ("{{ input.l | pop | json }}", '["a","b"]'),
        ("{{ input.l | shift | json }}", '["b","c"]'),
        ("{{ input.l | unshift: 'z' | json }}", '["z","a","b","c"]'),
        ("{{ input.l | first }}{{ input.l | last }}", "ac"),
        ("{{ input.dupes | uniq | json }}", '[1,true,"1",{"a":1}]'),
        ("{{ input.obj | json }}", '{"a":1}'),
        ("{{ input.obj | json: 2 }}", '{\n  "a": 1\n}'),
        ('{{ "Hello, World!" | slugify }}', "hello-world"),
        ('{{ "Héllo Wörld" | slugify: "latin" }}', "hello-world"),
        ('{{ "a  \n b" | normalize_whitespace }}', "a b"),
        ('{{ "one two  three" | number_of_words }}', "3"),
        ('{{ "123" | to_integer | plus: 1 }}', "124"),
        ('{{ "3.9" | to_integer }}', "3"),
        ("{{ \"<a href='x'>\" | xml_escape }}", "&lt;a href=&#x27;x&#x27;&gt;"),
        ("{{ '<b>' | raw }}", "<b>"),
        ("{{ 'Hello' | upcase | append: '!' }}", "HELLO!"),
    ],
)
def test_standard_filters(source: str, expected: str) -> None:
    assert (
        render(
            source,
            l=["a", "b", "c"],
            two=["a", "b"],
            dupes=[1, True, 1, "1", {"a": 1}, {"a": 1}],
            obj={"a": 1},
        )
        == expected
    )


def test_group_by() -> None:
    people = [{"team": "a", "n": 1}, {"team": "b", "n": 2}, {"team": "a", "n": 3}]
    assert render("{{ input.people | group_by: 'team' | json }}", people=people) == (
        '[{"name":"a","items":[{"team":"a","n":1},{"team":"a","n":3}]},{"name":"b","items":[{"team":"b","n":2}]}]'
    )


def test_uniq_is_linear_on_a_long_list() -> None:
    # 20,000 distinct items: a quadratic uniq (2e8 comparisons) would take seconds, far past the 200 ms
    # render limit; a linear one takes a few milliseconds, with room for a loaded machine.
    assert render("{{ input.l | uniq | size }}", l=[str(i) for i in range(20_000)]) == "20000"


def test_to_integer_of_a_word_stops_the_render() -> None:
    with pytest.raises(RenderFailure, match="to_integer"):
        render("{{ 'abc' | to_integer }}")


ITEMS: Final = [{"owner": "ana", "n": 1}, {"n": 2}, {"owner": None, "n": 3}]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('{{ input.items | map: "owner" | json }}', '["ana",null,null]'),
        ('{{ input.items | map: "owner" | json: 2 }}', '[\n  "ana",\n  null,\n  null\n]'),
        ('{{ input.items | map: "owner" | compact | json }}', '["ana"]'),
        ('{% assign o = input.items | map: "owner" %}{{ input.items | push: o | json }}', None),
        ('{{ input.items | group_by: "owner" | map: "name" | json }}', '["ana",null]'),
        ('{{ input.items | map: "owner" | uniq | json }}', '["ana",null]'),
        ("{{ nil | json }}", "null"),
        ('{{ input.items | map: "owner" | join: "," }}', "ana,,"),
    ],
)
def test_a_missing_value_is_nil_and_json_writes_it_as_null(source: str, expected: str | None) -> None:
    """A property an item lacks reads as nil (``map``), and ``json`` writes nil as ``null`` at any depth."""
    rendered = render(source, items=ITEMS)
    if expected is None:
        assert json.loads(rendered)[-1] == ["ana", None, None]
    else:
        assert rendered == expected


def test_a_whole_value_argument_sends_a_missing_value_as_null() -> None:
    assert render_typed('{{ input.items | map: "owner" }}', {**DATA, "input": {"items": ITEMS}}) == [
        "ana",
        None,
        None,
    ]


def test_map_over_a_list_holding_nil_is_nil_as_before() -> None:
    assert render('{{ input.l | map: "a" | json }}', l=[{"a": 1}, None]) == "null"


def test_concat_refuses_what_is_not_a_list_in_words() -> None:
    with pytest.raises(RenderFailure) as failure:
        render("{{ input.l | concat: 5 }}", l=[1])
    assert failure.value.message.startswith("concat takes a list, not ")
    assert render("{{ input.l | concat: input.l | join: ',' }}", l=[1, 2]) == "1,2,1,2"
