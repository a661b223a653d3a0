"""A keyword no draft of JSON Schema defines is saved, and warned of with the keyword it probably meant
(issue 18, point 3): one check for every schema of every function type."""

from __future__ import annotations

from typing import Any

import pytest

from parley.documents.front_matter import LoadedFrontMatter, load_front_matter
from parley.documents.json_schema import (
    SCHEMA_KEYWORDS,
    check_schema,
    closest_keyword,
    schema_keyword_warnings,
    unknown_keywords,
)
from parley.documents.problems import DocumentWarning

FRONT_MATTER = """\
input:
  schema:
    type: object
    requried: [owner]
    proprties:
      owner: { type: string }
    properties:
      owner: { type: string, maxLenght: 20 }
"""


def loaded() -> LoadedFrontMatter:
    result = load_front_matter(FRONT_MATTER, 2)
    assert isinstance(result, LoadedFrontMatter)
    return result


def test_each_unknown_keyword_is_warned_of_at_its_line_with_the_keyword_meant() -> None:
    data, lines = loaded()

    found = schema_keyword_warnings(data["input"]["schema"], "/input/schema", lines)

    assert [str(warning) for warning in found] == [
        "Line 5, /input/schema/requried: requried is not a JSON Schema keyword, so nothing checks it; "
        "did you mean required?",
        "Line 6, /input/schema/proprties: proprties is not a JSON Schema keyword, so nothing checks it; "
        "did you mean properties?",
        "Line 9, /input/schema/properties/owner/maxLenght: maxLenght is not a JSON Schema keyword, so "
        "nothing checks it; did you mean maxLength?",
    ]
    assert all(isinstance(warning, DocumentWarning) for warning in found)


def test_such_a_schema_is_saved_all_the_same() -> None:
    data, lines = loaded()
    assert check_schema(data["input"]["schema"], "/input/schema", lines) == []


@pytest.mark.parametrize(
    ("keyword", "meant"),
    [
        ("requried", "required"),
        ("require", "required"),
        ("proprties", "properties"),
        ("maxLenght", "maxLength"),
        ("MaxLength", "maxLength"),
        ("min_length", "minLength"),
        ("additional-properties", "additionalProperties"),
        ("enums", "enum"),
        ("descripton", "description"),
        ("typ", "type"),
        ("exclusiveMinumum", "exclusiveMinimum"),
        ("zzzzzz", None),
        ("patern", None),  # pattern is refused, so it is never the keyword meant
    ],
)
def test_the_keyword_meant(keyword: str, meant: str | None) -> None:
    assert closest_keyword(keyword) == meant


def test_an_unknown_keyword_with_nothing_close_is_named_alone() -> None:
    data, lines = load_front_matter("schema: { type: object, widget: slider }\n", 2)
    assert [warning.message for warning in schema_keyword_warnings(data["schema"], "/schema", lines)] == [
        "widget is not a JSON Schema keyword, so nothing checks it"
    ]


def test_only_schema_positions_are_read() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"requried": {"type": "string"}, "proprties": {"type": "object"}},
        "enum": [{"requried": 1}],
        "default": {"maxLenght": 3},
        "examples": [{"proprties": {}}],
        "$defs": {"requried": {"type": "string", "maxLenght": 3}},
        "items": {"anyOf": [{"minimun": 1}, {"type": "null"}]},
        "x-widget": "slider",
        "proprties": {"inner": {"maxLenght": 1}},  # what an unknown keyword holds is no schema
    }
    assert sorted(unknown_keywords(schema)) == [
        ("/$defs/requried/maxLenght", "maxLenght"),
        ("/items/anyOf/0/minimun", "minimun"),
        ("/proprties", "proprties"),
    ]


def test_every_keyword_the_drafts_define_is_known() -> None:
    every = dict.fromkeys(SCHEMA_KEYWORDS, 1)
    assert list(unknown_keywords(every)) == []
    for keyword in ("format", "contentMediaType", "deprecated", "$comment", "dependencies", "$defs"):
        assert keyword in SCHEMA_KEYWORDS


def test_a_schema_that_is_not_a_mapping_has_no_keywords() -> None:
    assert list(unknown_keywords(True)) == []
    assert list(unknown_keywords([1, 2])) == []
