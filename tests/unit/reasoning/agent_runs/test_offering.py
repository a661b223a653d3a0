"""What a tool's offer holds, and its schema's warnings (reasoning-format.md, "What the model sees")."""

from __future__ import annotations

from typing import Any

from parley.models.providers.base import ToolSpec
from parley.ports.tools import ListedTool
from parley.reasoning.agent_runs.offering import (
    DESCRIPTION_MAX_BYTES,
    cut_description,
    schema_warnings_for,
    tool_spec,
)

ANTHROPIC = "(anthropic, bedrock, bedrock-anthropic, vertex-anthropic)"
GEMINI = "(google, vertex)"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 200}, "limit": {"type": "integer", "minimum": 1}},
    "required": ["query"],
}


def test_the_spec_holds_the_name_the_description_and_the_schema_unchanged() -> None:
    listed = ListedTool("search", "Search the graph.", SCHEMA, read_only=True)
    spec = tool_spec("graph__search", listed)
    assert spec == ToolSpec("graph__search", "Search the graph.", SCHEMA)
    assert spec.input_schema is SCHEMA


def test_the_description_is_cut_to_4_kib() -> None:
    assert DESCRIPTION_MAX_BYTES == 4096
    assert cut_description("a" * 4096) == "a" * 4096
    assert cut_description("a" * 5000) == "a" * 4096


def test_the_description_is_cut_at_a_character_boundary() -> None:
    # 4,095 one-byte characters, then "é" (2 bytes) straddles the 4,096th byte: it is left out whole.
    text = "a" * 4095 + "é" + "b"
    cut = cut_description(text)
    assert cut == "a" * 4095
    # A 4-byte character ending exactly at 4,096 bytes is kept.
    text = "a" * 4092 + "😀" + "b"
    assert cut_description(text) == "a" * 4092 + "😀"
    assert all(len(cut_description("é" * n).encode()) <= 4096 for n in (2047, 2048, 2049, 3000))
    assert cut_description("é" * 3000) == "é" * 2048


def test_a_long_description_in_the_spec_is_cut() -> None:
    listed = ListedTool("search", "€" * 2000, SCHEMA, read_only=False)
    assert tool_spec("graph__search", listed).description == "€" * 1365  # 4,095 bytes


def test_anthropic_warnings_name_the_tool_and_the_pointer() -> None:
    assert schema_warnings_for("graph__search", SCHEMA, "anthropic") == [
        "graph__search inputSchema#/properties/query/maxLength: maxLength is not enforced while Anthropic "
        "models write the call's arguments; the tool server may refuse arguments outside it " + ANTHROPIC,
        "graph__search inputSchema#/properties/limit/minimum: minimum is not enforced while Anthropic "
        "models write the call's arguments; the tool server may refuse arguments outside it " + ANTHROPIC,
    ]


def test_gemini_enforces_minimum_but_not_max_length() -> None:
    warnings = schema_warnings_for("graph__search", SCHEMA, "google")
    assert [warning.split(":")[0] for warning in warnings] == [
        "graph__search inputSchema#/properties/query/maxLength"
    ]
    assert warnings[0].endswith(GEMINI)


def test_one_of_and_min_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "ids": {
                "type": "array",
                "minItems": 2,
                "items": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "tags": {"type": "array", "minItems": 1},
        },
    }
    pointers = [w.split(":")[0] for w in schema_warnings_for("t", schema, "bedrock")]
    assert pointers == ["t inputSchema#/properties/ids/minItems", "t inputSchema#/properties/ids/items/oneOf"]
    assert schema_warnings_for("t", schema, "vertex") == [
        f"t inputSchema#/properties/ids/items/oneOf: oneOf reaches Gemini models as anyOf {GEMINI}"
    ]


def test_tools_are_not_strict_so_openai_azure_and_gateways_have_no_warnings() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 3, "format": "x"}}}
    for kind in ("openai", "azure", "gateway"):
        assert schema_warnings_for("t", schema, kind) == []
    # Nor the strict-output rules: no additionalProperties, no required, a format Anthropic lacks.
    assert [w.split(":")[0] for w in schema_warnings_for("t", schema, "anthropic")] == [
        "t inputSchema#/properties/q/maxLength"
    ]


def test_gemini_may_refuse_a_deep_or_large_schema() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        deep = {"type": "object", "properties": {"a": deep}}
    warnings = schema_warnings_for("t", deep, "google")
    assert len(warnings) == 1
    assert warnings[0].startswith("t inputSchema#" + "/properties/a" * 10 + ": the schema nests more than 10")
    assert schema_warnings_for("t", deep, "anthropic") == []
    large = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "d" * 100} for i in range(200)},
    }
    assert [w for w in schema_warnings_for("t", large, "google") if "16,384 bytes" in w] == [
        "t inputSchema#: the schema takes more than 16,384 bytes as JSON; Gemini models may refuse a very "
        f"large schema {GEMINI}"
    ]


def test_each_warning_once_and_definitions_walked() -> None:
    schema = {
        "type": "object",
        "$defs": {"name": {"type": "string", "maxLength": 5}},
        "properties": {
            "a/b": {"$ref": "#/$defs/name"},
            "c": {"type": "string", "pattern": "x", "maxLength": 1},
        },
    }
    assert [w.split(":")[0] for w in schema_warnings_for("t", schema, "anthropic")] == [
        "t inputSchema#/$defs/name/maxLength",
        "t inputSchema#/properties/c/maxLength",
    ]
