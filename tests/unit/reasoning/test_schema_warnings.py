"""Warnings about an answer schema (reasoning-format.md, "Answers that are JSON")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from parley.documents.front_matter import LineIndex, load_front_matter
from parley.reasoning.schema_warnings import (
    MAX_WARNINGS,
    SchemaWarning,
    capped_warnings,
    schema_warnings,
)
from parley.reasoning.shapes import SHAPE_NAMES, ShapeName, shape_schema

ANTHROPIC = "(anthropic, bedrock, bedrock-anthropic, vertex-anthropic)"
OPENAI = "(azure, openai)"
BOTH = "(anthropic, bedrock, bedrock-anthropic, google, vertex, vertex-anthropic)"


def closed(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def warnings(schema: Any) -> list[str]:
    """Warnings as text, with every line 1 (a front matter whose schema is one line of JSON)."""
    return [f"{w.pointer}: {w.message}" for w in schema_warnings(schema, "/output/schema", LineIndex())]


def test_the_pages_example_with_its_line() -> None:
    yaml = (
        "model: openai/gpt-5\n"
        "output:\n"
        "  format: json\n"
        "  schema:\n"
        "    type: object\n"
        "    properties:\n"
        "      total: { type: number, minimum: 0 }\n"
        "    required: [total]\n"
        "    additionalProperties: false\n"
    )
    loaded = load_front_matter(yaml, 2)
    assert not isinstance(loaded, list)
    found = schema_warnings(loaded.data["output"]["schema"], "/output/schema", loaded.lines)
    assert [str(w) for w in found] == [
        "Line 8, /output/schema/properties/total/minimum: minimum is not enforced while Anthropic models "
        f"write the answer; an answer outside it fails as output_invalid {ANTHROPIC}"
    ]


def test_a_schema_every_provider_accepts_has_no_warnings() -> None:
    schema = closed(
        {
            "name": {"type": "string", "description": "Who"},
            "note": {"type": ["string", "null"]},
            "kind": {"enum": ["a", "b"]},
            "items": {"type": "array", "items": closed({"id": {"type": "integer"}}), "minItems": 1},
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "ref": {"$ref": "#/$defs/point"},
        }
    )
    schema["$defs"] = {"point": closed({"x": {"type": "number"}})}
    assert warnings(schema) == []


@pytest.mark.parametrize("name", SHAPE_NAMES)
def test_the_shapes_schemas_have_no_warnings(name: ShapeName) -> None:
    assert warnings(shape_schema(name)) == []


@pytest.mark.parametrize(
    ("keyword", "value", "who"),
    [
        ("minimum", 0, ("Anthropic", ANTHROPIC)),
        ("maximum", 10, ("Anthropic", ANTHROPIC)),
        ("exclusiveMinimum", 0, ("Anthropic and Gemini", BOTH)),
        ("multipleOf", 2, ("Anthropic and Gemini", BOTH)),
    ],
)
def test_numeric_bounds_not_enforced(keyword: str, value: Any, who: tuple[str, str]) -> None:
    schema = closed({"n": {"type": "number", keyword: value}})
    assert warnings(schema) == [
        f"/output/schema/properties/n/{keyword}: {keyword} is not enforced while {who[0]} models write the "
        f"answer; an answer outside it fails as output_invalid {who[1]}"
    ]


@pytest.mark.parametrize("keyword", ["minLength", "maxLength"])
def test_length_bounds_are_not_enforced_or_are_rejected(keyword: str) -> None:
    schema = closed({"s": {"type": "string", keyword: 3}})
    at = f"/output/schema/properties/s/{keyword}"
    assert warnings(schema) == [
        f"{at}: {keyword} is not enforced while Anthropic and Gemini models write the answer; "
        f"an answer outside it fails as output_invalid {BOTH}",
        f"{at}: {keyword} is rejected by OpenAI and Azure strict structured outputs; a run there ends as "
        f"conflict, kind unworkable {OPENAI}",
    ]


def test_count_bounds() -> None:
    schema = closed({"a": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}})
    assert warnings(schema) == [
        "/output/schema/properties/a/maxItems: maxItems is not enforced while Anthropic models write the "
        f"answer; an answer outside it fails as output_invalid {ANTHROPIC}"
    ]
    schema["properties"]["a"]["minItems"] = 2
    assert (
        "/output/schema/properties/a/minItems: minItems is not enforced while Anthropic models write the "
        f"answer; an answer outside it fails as output_invalid {ANTHROPIC}"
    ) in warnings(schema)


def test_one_of() -> None:
    schema = closed({"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}})
    assert warnings(schema) == [
        "/output/schema/properties/v/oneOf: oneOf reaches Anthropic and Gemini models as anyOf; "
        f"an answer that matches more than one fails as output_invalid {BOTH}",
        "/output/schema/properties/v/oneOf: oneOf is rejected by OpenAI and Azure strict structured outputs; "
        f"a run there ends as conflict, kind unworkable {OPENAI}",
    ]


def test_the_root_is_an_object() -> None:
    assert warnings({"type": "array", "items": {"type": "string"}}) == [
        '/output/schema/type: The root is not "type": "object"; OpenAI and Azure strict structured outputs, '
        "and providers that return JSON through a tool call, accept only an object "
        "(anthropic, azure, bedrock, bedrock-anthropic, openai, vertex-anthropic)"
    ]
    assert warnings(True)[0].startswith('/output/schema: The root is not "type": "object"')


def test_every_object_closed_and_every_property_required() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "object"}},
        "required": ["a"],
        "additionalProperties": True,
    }
    assert warnings(schema) == [
        "/output/schema/additionalProperties: An object without additionalProperties: false is rejected by "
        "OpenAI and Azure strict structured outputs; a run there ends as conflict, kind unworkable; "
        f"set it to false {OPENAI}",
        "/output/schema/properties/b: The property b, missing from required, is rejected by OpenAI and Azure "
        "strict structured outputs; a run there ends as conflict, kind unworkable; list it in required and "
        f'make it nullable, such as "type": ["string", "null"] {OPENAI}',
        "/output/schema/properties/b: An object without additionalProperties: false is rejected by "
        "OpenAI and Azure strict structured outputs; a run there ends as conflict, kind unworkable; "
        f"set it to false {OPENAI}",
    ]


def test_format_is_not_checked_by_the_runtime() -> None:
    schema = closed({"when": {"type": "string", "format": "date"}})
    assert warnings(schema) == [
        "/output/schema/properties/when/format: format is sent to the provider but not checked by the "
        "runtime: an answer that breaks it passes"
    ]


def test_formats_some_providers_do_not_accept() -> None:
    schema = closed(
        {"link": {"type": "string", "format": "uri"}, "phone": {"type": "string", "format": "phone"}}
    )
    found = warnings(schema)
    assert found[1] == (
        "/output/schema/properties/link/format: format uri is rejected by OpenAI and Azure strict structured "
        f"outputs; a run there ends as conflict, kind unworkable {OPENAI}"
    )
    assert found[3] == (
        "/output/schema/properties/phone/format: format phone is not one Anthropic models accept (date, "
        "date-time, duration, email, hostname, ipv4, ipv6, time, uri, uuid); they may reject the schema "
        f"{ANTHROPIC}"
    )
    assert len(found) == 5


def test_keywords_the_runtime_does_not_know_and_content_keywords() -> None:
    schema = closed({"x": {"type": "string", "x-order": 1, "contentMediaType": "text/html"}})
    assert warnings(schema) == [
        "/output/schema/properties/x/x-order: x-order is not a keyword the runtime knows: it is sent to the "
        "provider but not checked",
        "/output/schema/properties/x/contentMediaType: contentMediaType is sent to the provider but not "
        "checked by the runtime",
    ]


def test_annotations_are_known() -> None:
    schema = closed(
        {"x": {"type": "string", "title": "X", "default": "a", "examples": ["b"], "$comment": "c"}}
    )
    assert warnings(schema) == []


def test_a_recursive_schema() -> None:
    node = closed(
        {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}
    )
    schema = {**closed({"root": {"$ref": "#/$defs/node"}}), "$defs": {"node": node}}
    assert warnings(schema) == [
        "/output/schema/$defs/node/properties/children/items/$ref: This $ref makes the schema recursive; "
        f"Anthropic models reject a recursive schema {ANTHROPIC}"
    ]


def test_recursion_through_two_definitions() -> None:
    a = closed({"b": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]}})
    b = closed({"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}})
    schema = {**closed({"a": {"$ref": "#/$defs/a"}}), "$defs": {"a": a, "b": b}}
    found = warnings(schema)
    assert [w.split(":")[0] for w in found] == [
        "/output/schema/$defs/a/properties/b/anyOf/0/$ref",
        "/output/schema/$defs/b/properties/a/anyOf/0/$ref",
    ]


def test_deep_nesting() -> None:
    schema: dict[str, Any] = closed({"leaf": {"type": "string"}})
    for _ in range(10):
        schema = closed({"inner": schema})
    found = warnings(schema)
    inner = "/properties/inner" * 10
    assert found == [
        f"/output/schema{inner}: The schema nests more than 10 levels of objects and lists here; OpenAI and "
        "Azure strict structured outputs reject it, and Gemini models may (azure, google, openai, vertex)"
    ]
    assert warnings(schema["properties"]["inner"]) == []  # ten levels


def test_a_very_large_schema() -> None:
    properties = {f"field_{i:04d}": {"type": "string", "description": "x" * 80} for i in range(200)}
    schema = closed(properties)
    assert len(json.dumps(schema)) > 16_384
    assert warnings(schema) == [
        "/output/schema: The schema takes more than 16,384 bytes as JSON; Gemini models may reject a "
        "very large schema: keep it small (google, vertex)"
    ]


def test_warnings_are_in_line_order_and_each_once() -> None:
    yaml = (
        "schema:\n"
        "  type: object\n"
        "  properties:\n"
        "    b: { type: string, maxLength: 3 }\n"
        "    a: { type: number, minimum: 0 }\n"
        "  required: [a, b]\n"
        "  additionalProperties: false\n"
    )
    loaded = load_front_matter(yaml, 2)
    assert not isinstance(loaded, list)
    found = schema_warnings(loaded.data["schema"], "/schema", loaded.lines)
    assert [w.line for w in found] == [5, 5, 6]
    assert len({(w.pointer, w.message) for w in found}) == len(found)


def test_at_most_100_warnings() -> None:
    many = [SchemaWarning(i + 1, f"/p/{i}", "w") for i in range(150)]
    shown = capped_warnings(many)
    assert len(shown) == MAX_WARNINGS
    assert shown[0] == "Line 1, /p/0: w"
    assert shown[-1] == "Line 100: 51 more warnings are not shown"
    assert capped_warnings(many[:100]) == [str(w) for w in many[:100]]
