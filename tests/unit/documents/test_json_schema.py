"""Schema rules of "Answers that are JSON" and validation of inputs and answers against a schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.documents.front_matter import LineIndex, LoadedFrontMatter, load_front_matter
from parley.documents.json_schema import (
    ANSWER_MAX_BYTES,
    ANSWER_MAX_DEPTH,
    ENUM_MAX_VALUES,
    SCHEMA_MAX_BYTES,
    SCHEMA_MAX_DEPTH,
    check_schema,
    compiled_validator,
    json_bounds_errors,
    json_depth,
    json_size,
    schema_draft,
    validate_instance,
)
from parley.documents.problems import DocumentProblem
from parley.errors import ErrorEntry

NO_LINES = LineIndex()

# interaction-format.md, "A function document"
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["owner", "review"],
    "properties": {"owner": {"type": "string"}, "review": {"type": "string"}},
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["verdict"],
    "properties": {
        "verdict": {"type": "string", "enum": ["approve", "revise"]},
        "note": {"type": "string", "maxLength": 2000},
    },
}
TREE: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
        }
    },
    "properties": {"root": {"$ref": "#/$defs/node"}},
}


def problems(schema: Any, pointer: str = "/output/schema") -> list[tuple[str, str]]:
    return [(p.pointer, p.message) for p in check_schema(schema, pointer, NO_LINES)]


def pointers(schema: Any, pointer: str = "/output/schema") -> list[str]:
    return [p for p, _ in problems(schema, pointer)]


# --- accepted --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        INPUT_SCHEMA,
        OUTPUT_SCHEMA,
        TREE,
        True,
        False,
        {},
        {"type": "object", "properties": {"pattern": {"type": "string"}, "if": {"type": "number"}}},
        {"type": "object", "properties": {"$ref": {"type": "string"}, "not": {"type": "string"}}},
        {"enum": ["pattern", "if", None, 1.5, True]},
        {"default": {"pattern": "a+", "if": 1}, "examples": [{"contains": 1}], "description": "pattern"},
        {"not": {}},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}, "$ref": "#/$defs/a"},
        {
            "$defs": {"a/b": {"type": "string"}, "c d": {}},
            "anyOf": [{"$ref": "#/$defs/a~1b"}, {"$ref": "#/$defs/c%20d"}],
        },
        {"definitions": {"a": {"type": "string"}}, "properties": {"x": {"$ref": "#/definitions/a"}}},
        {"$defs": {"list": {"type": "array", "prefixItems": [{"$ref": "#/$defs/list"}]}}},
        {
            "$defs": {
                "a": {
                    "anyOf": [
                        {"type": "null"},
                        {"type": "object", "properties": {"next": {"$ref": "#/$defs/a"}}},
                    ]
                }
            }
        },
        {"type": "string", "format": "email", "contentSchema": {"type": "object"}},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"},
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": [{"type": "string"}],
        },
        {"$id": "https://example.com/answer", "type": "object"},
    ],
)
def test_schemas_that_keep_the_rules(schema: Any) -> None:
    assert problems(schema) == []


# --- refused keywords ------------------------------------------------------------------------------------


REFUSED = [
    "pattern",
    "patternProperties",
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
]
SAMPLE_VALUES: dict[str, Any] = {
    "pattern": "^(a+)+$",
    "patternProperties": {"^x": {}},
    "minContains": 1,
    "maxContains": 2,
    "dependentRequired": {"a": ["b"]},
    "dependencies": {"a": ["b"]},
    "$anchor": "here",
    "$dynamicRef": "#here",
    "$dynamicAnchor": "here",
    "$recursiveRef": "#",
    "$recursiveAnchor": True,
}


@pytest.mark.parametrize("keyword", REFUSED)
def test_refused_keywords_are_refused_where_they_are_keywords(keyword: str) -> None:
    value = SAMPLE_VALUES.get(keyword, {})
    schema = {"type": "object", "properties": {"owner": {"type": "string", keyword: value}}}
    found = problems(schema)
    assert found and found[0][0] == f"/output/schema/properties/owner/{keyword}"
    assert found[0][1].startswith(f"{keyword} is not allowed")


def test_a_regular_expression_is_refused_with_the_reason() -> None:
    assert problems({"type": "string", "pattern": "^(a+)+$"}) == [
        (
            "/output/schema/pattern",
            "pattern is not allowed, because a hostile regular expression can stall validation",
        )
    ]


@pytest.mark.parametrize(
    "place",
    [
        ("items",),
        ("additionalProperties",),
        ("propertyNames",),
        ("allOf", 0),
        ("anyOf", 1),
        ("oneOf", 0),
        ("prefixItems", 0),
        ("$defs", "x"),
        ("definitions", "x"),
        ("properties", "a", "items", "properties", "b"),
    ],
)
def test_a_refused_keyword_is_found_in_every_schema_position(place: tuple[str | int, ...]) -> None:
    schema: Any = {"pattern": "x"}
    for step in reversed(place):
        schema = [{}, schema] if step == 1 else [schema] if isinstance(step, int) else {step: schema}
    found = pointers(schema, "")
    assert found == ["/" + "/".join(str(step) for step in place) + "/pattern"]


def test_a_refused_keyword_inside_data_is_data() -> None:
    schema = {
        "properties": {"pattern": {"const": "pattern"}},
        "enum": ["if"],
        "default": {"pattern": "x", "properties": {"if": {}}},
        "examples": [{"contains": 1}],
        "required": ["pattern"],
    }
    assert problems(schema) == []


# --- $ref ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        "#",
        "#/properties/a",
        "https://example.com/schema",
        "other.json#/$defs/a",
        "#/$defs/a/properties/b",
        "#a",
    ],
)
def test_ref_only_into_defs_or_definitions(ref: str) -> None:
    schema = {"$defs": {"a": {"properties": {"b": {}}}}, "properties": {"a": {"$ref": ref}}}
    assert problems(schema) == [
        ("/output/schema/properties/a/$ref", "$ref may point only to #/$defs/<name> or #/definitions/<name>")
    ]


@pytest.mark.parametrize("ref", ["#/$defs/missing", "#/definitions/a", "#/$defs/"])
def test_ref_target_must_exist(ref: str) -> None:
    schema = {"$defs": {"a": {}}, "properties": {"a": {"$ref": ref}}}
    [(pointer, message)] = problems(schema)
    assert pointer == "/output/schema/properties/a/$ref"
    assert "does not define" in message or "may point only" in message


def test_nested_id_is_refused() -> None:
    assert pointers({"properties": {"a": {"$id": "https://example.com/a"}}}) == [
        "/output/schema/properties/a/$id"
    ]


# --- loops -----------------------------------------------------------------------------------------------


def test_a_definition_referring_to_itself_directly_is_refused() -> None:
    # the spec's own example: "a": {"$ref": "#/$defs/a"}
    found = problems({"$defs": {"a": {"$ref": "#/$defs/a"}}})
    assert found == [
        (
            "/output/schema/$defs/a/$ref",
            "$ref #/$defs/a loops back through $ref, allOf, anyOf or oneOf with no property or item between",
        )
    ]


@pytest.mark.parametrize(
    "defs",
    [
        {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        {"a": {"allOf": [{"$ref": "#/$defs/a"}]}},
        {"a": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/b"}]}, "b": {"oneOf": [{"$ref": "#/$defs/a"}]}},
        {"a": {"type": "object", "properties": {"x": {}}, "$ref": "#/$defs/a"}},
        {"a": {"allOf": [{"allOf": [{"anyOf": [{"$ref": "#/$defs/a"}]}]}]}},
    ],
)
def test_loops_without_a_property_or_item_between_are_refused(defs: dict[str, Any]) -> None:
    found = problems({"$defs": defs})
    assert len(found) == 1
    assert "loops back" in found[0][1]


def test_a_loop_reached_from_a_property_is_reported_once() -> None:
    schema = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}
    assert pointers(schema) == ["/output/schema/$defs/a/$ref"]


@pytest.mark.parametrize(
    "defs",
    [
        {"a": {"properties": {"next": {"$ref": "#/$defs/a"}}}},
        {"a": {"items": {"$ref": "#/$defs/a"}}},
        {"a": {"prefixItems": [{"$ref": "#/$defs/a"}]}},
        {"a": {"additionalProperties": {"$ref": "#/$defs/a"}}},
        {"a": {"anyOf": [{"type": "string"}, {"items": {"$ref": "#/$defs/a"}}]}},
        {"a": {"$ref": "#/$defs/b"}, "b": {"properties": {"x": {"$ref": "#/$defs/a"}}}},
    ],
)
def test_a_definition_may_refer_to_itself_through_a_property_or_an_item(defs: dict[str, Any]) -> None:
    assert problems({"$defs": defs}) == []


def test_a_tree_validates_as_deep_as_it_goes() -> None:
    tree = {"root": {"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}}
    assert validate_instance(tree, TREE, "/answer") == [
        ErrorEntry("/answer/root/children/0/children/0/name", "Expected string, found integer")
    ]


# --- not, enum, const, additionalProperties --------------------------------------------------------------


@pytest.mark.parametrize("value", [{"type": "string"}, True, False, {"not": {}}])
def test_not_may_only_be_empty(value: Any) -> None:
    assert problems({"not": value}) == [("/output/schema/not", "not may only be {}")]


def test_enum_holds_at_most_1000_values() -> None:
    assert ENUM_MAX_VALUES == 1000
    assert problems({"enum": list(range(1000))}) == []
    assert problems({"enum": list(range(1001))}) == [
        ("/output/schema/enum", "An enum holds at most 1,000 values, not 1,001")
    ]


def test_enum_and_const_hold_only_scalars() -> None:
    assert problems({"enum": ["a", {"b": 1}, [1]]}) == [
        ("/output/schema/enum/1", "enum may contain only strings, numbers, booleans and null"),
        ("/output/schema/enum/2", "enum may contain only strings, numbers, booleans and null"),
    ]
    assert problems({"const": {"a": 1}}) == [
        ("/output/schema/const", "const may be only a string, a number, a boolean or null")
    ]
    assert problems({"const": None}) == []


def test_additional_properties_may_not_be_a_schema_beside_properties() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}}
    assert problems(schema) == [
        (
            "/output/schema/additionalProperties",
            "additionalProperties may not be a schema when properties is present: use true or false",
        )
    ]
    assert pointers({"properties": {"a": {}}, "additionalProperties": {}}) == [
        "/output/schema/additionalProperties"
    ]


# --- size, depth, drafts, metaschema ---------------------------------------------------------------------


def test_a_schema_takes_at_most_65536_bytes() -> None:
    def sized(size: int) -> dict[str, Any]:
        schema = {"description": ""}
        schema["description"] = "x" * (size - json_size(schema))
        assert json_size(schema) == size
        return schema

    assert SCHEMA_MAX_BYTES == 65_536
    assert problems(sized(65_536)) == []
    assert problems(sized(65_537)) == [("/output/schema", "A schema takes at most 65,536 bytes as JSON")]


def test_a_schema_nests_at_most_64_levels() -> None:
    def nested(levels: int) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "string"}
        for _ in range(levels - 1):
            schema = {"items": schema}
        assert json_depth(schema) == levels
        return schema

    assert SCHEMA_MAX_DEPTH == 64
    assert problems(nested(64)) == []
    [(pointer, message)] = problems(nested(65))
    assert pointer == "/output/schema" + "/items" * 64
    assert message == "A schema nests at most 64 levels of objects and lists"


def test_draft_choice() -> None:
    assert schema_draft({}) == "2020-12"
    assert schema_draft(True) == "2020-12"
    assert schema_draft({"definitions": {}}) == "draft-07"
    assert schema_draft({"definitions": {}, "$defs": {}}) == "2020-12"
    assert schema_draft({"$schema": "http://json-schema.org/draft-07/schema#"}) == "draft-07"
    assert schema_draft({"$schema": "https://json-schema.org/draft-07/schema"}) == "draft-07"
    assert (
        schema_draft({"$schema": "https://json-schema.org/draft/2020-12/schema", "definitions": {}})
        == "2020-12"
    )
    assert schema_draft({"$schema": "http://json-schema.org/draft-04/schema#"}) is None
    assert schema_draft({"$schema": 7}) is None


def test_another_draft_is_refused() -> None:
    [(pointer, message)] = problems({"$schema": "http://json-schema.org/draft-04/schema#"})
    assert pointer == "/output/schema/$schema"
    assert "2020-12" in message and "draft-07" in message


def test_each_draft_is_checked_with_its_own_metaschema() -> None:
    # an array of schemas in items is draft-07; 2020-12 writes prefixItems
    assert problems({"items": [{"type": "string"}]}) == [
        ("/output/schema/items", "Expected object or boolean, found array")
    ]
    assert problems({"definitions": {}, "items": [{"type": "string"}]}) == []


@pytest.mark.parametrize(
    ("schema", "pointer", "message"),
    [
        (
            {"type": "strin"},
            "/type",
            'Unknown type "strin": use array, boolean, integer, null, number, object, string',
        ),
        ({"properties": {"a": {"minLength": -1}}}, "/properties/a/minLength", "Expected at least 0"),
        ({"required": "owner"}, "/required", "Expected array, found string"),
        ({"required": ["a", "a"]}, "/required", "Expected items that are all different"),
        ({"properties": []}, "/properties", "Expected object, found array"),
        ({"allOf": []}, "/allOf", "Expected at least 1 items"),
        ({"properties": {"a": 5}}, "/properties/a", "Expected object or boolean, found integer"),
    ],
)
def test_metaschema_errors_are_reported_at_their_pointer(schema: Any, pointer: str, message: str) -> None:
    assert problems(schema) == [("/output/schema" + pointer, message)]


@pytest.mark.parametrize("schema", [5, "object", ["a"], None])
def test_a_schema_is_a_mapping_or_a_boolean(schema: Any) -> None:
    assert problems(schema) == [
        ("/output/schema", "A JSON Schema is a mapping of keywords (or true or false)")
    ]


def test_problems_are_distinct() -> None:
    found = problems({"allOf": [{"pattern": "x"}, {"pattern": "x"}], "enum": [[1]]})
    assert len(found) == len(set(found)) == 3


def test_problems_name_their_line() -> None:
    front_matter = """\
output:
  schema:
    type: object
    properties:
      verdict:
        type: string
        pattern: ^(a+)+$
      pattern: { type: string }
    required: [verdict, missing]
    additionalProperties: { type: string }
"""
    loaded = load_front_matter(front_matter, 2)
    assert isinstance(loaded, LoadedFrontMatter)
    schema = loaded.data["output"]["schema"]
    assert check_schema(schema, "/output/schema", loaded.lines) == [
        DocumentProblem(
            8,
            "/output/schema/properties/verdict/pattern",
            "pattern is not allowed, because a hostile regular expression can stall validation",
        ),
        DocumentProblem(
            11,
            "/output/schema/additionalProperties",
            "additionalProperties may not be a schema when properties is present: use true or false",
        ),
    ]


# --- validation ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {"verdict": "approve"},
        {"verdict": "revise", "note": "Name the job role."},
        {"verdict": "approve", "x": 1},
    ],
)
def test_the_spec_answers_match(answer: Any) -> None:
    assert validate_instance(answer, OUTPUT_SCHEMA, "/answer") == []


def test_a_missing_required_property_points_at_its_object_and_names_it() -> None:
    assert validate_instance({"note": "hi"}, OUTPUT_SCHEMA, "/answer") == [
        ErrorEntry("/answer", 'Missing required property "verdict"')
    ]
    assert validate_instance({}, INPUT_SCHEMA, "/input") == [
        ErrorEntry("/input", 'Missing required property "owner"'),
        ErrorEntry("/input", 'Missing required property "review"'),
    ]


def test_defaults_may_leave_required_top_level_fields_to_the_input() -> None:
    schema = {
        "type": "object",
        "required": ["owner", "review"],
        "properties": {"owner": {"type": "string"}, "meta": {"type": "object", "required": ["id"]}},
    }
    assert validate_instance({"owner": "ana"}, schema, "/input/default", missing_at_root=True) == []
    assert validate_instance({"owner": 1, "meta": {}}, schema, "/input/default", missing_at_root=True) == [
        ErrorEntry("/input/default/owner", "Expected string, found integer"),
        ErrorEntry("/input/default/meta", 'Missing required property "id"'),
    ]
    assert len(validate_instance({"owner": "ana"}, schema, "/input")) == 1


def test_issues_are_listed_in_document_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "array", "items": {"type": "integer", "maximum": 3}},
            "c": False,
        },
        "required": ["z"],
        "additionalProperties": False,
    }
    instance = {"c": 1, "b": [1, 5, "x"], "extra": True, "a": 1}
    assert validate_instance(instance, schema, "/answer") == [
        ErrorEntry("/answer", 'Missing required property "z"'),
        ErrorEntry("/answer/c", "Not allowed here"),
        ErrorEntry("/answer/b/1", "Expected at most 3"),
        ErrorEntry("/answer/b/2", "Expected integer, found string"),
        ErrorEntry("/answer/extra", "Unexpected property: the schema allows no others here"),
        ErrorEntry("/answer/a", "Expected string, found integer"),
    ]


def test_messages_are_short_and_say_what_was_expected() -> None:
    schema = {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["approve", "revise"]},
            "note": {"type": "string", "maxLength": 5},
            "count": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "maxItems": 1, "uniqueItems": True},
            "kind": {"const": "x"},
            "either": {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 10}]},
            "any": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "ratio": {"type": "number", "exclusiveMaximum": 1, "multipleOf": 0.5},
            "nothing": {"not": {}},
        },
    }
    answer = {
        "verdict": 7,
        "note": "x" * 10_000,
        "count": 0,
        "tags": [1, 1],
        "kind": "y",
        "either": "short",
        "any": 1,
        "ratio": 1.2,
        "nothing": 0,
    }
    entries = validate_instance(answer, schema, "/answer")
    assert entries == [
        ErrorEntry("/answer/verdict", "Expected string, found integer"),
        ErrorEntry("/answer/verdict", 'Expected one of "approve", "revise"'),
        ErrorEntry("/answer/note", "Expected at most 5 characters"),
        ErrorEntry("/answer/count", "Expected at least 1"),
        ErrorEntry("/answer/tags", "Expected at most 1 items"),
        ErrorEntry("/answer/tags", "Expected items that are all different"),
        ErrorEntry("/answer/kind", 'Expected "x"'),
        ErrorEntry("/answer/either", "Matches more than one of the schemas oneOf lists"),
        ErrorEntry("/answer/any", "Matches none of the schemas anyOf lists"),
        ErrorEntry("/answer/ratio", "Expected less than 1"),
        ErrorEntry("/answer/ratio", "Expected a multiple of 0.5"),
        ErrorEntry("/answer/nothing", "Not allowed here"),
    ]


def test_twenty_issues_then_one_that_counts_the_rest() -> None:
    entries = validate_instance(list(range(50)), {"items": {"type": "string"}}, "/answer")
    assert len(entries) == 21
    assert entries[0] == ErrorEntry("/answer/0", "Expected string, found integer")
    assert entries[19].pointer == "/answer/19"
    assert entries[20] == ErrorEntry("/answer/20", "30 more issues are not shown")


def test_formats_are_annotations_only() -> None:
    assert validate_instance("not an email", {"type": "string", "format": "email"}, "/answer") == []


def test_draft_07_is_validated_as_draft_07() -> None:
    schema = {
        "definitions": {"s": {"type": "string"}},
        "type": "array",
        "items": [{"$ref": "#/definitions/s"}],
    }
    assert validate_instance(["a", 1], schema, "/input") == []
    assert validate_instance([1], schema, "/input") == [
        ErrorEntry("/input/0", "Expected string, found integer")
    ]


def test_a_false_property_and_a_false_item_keep_their_pointers() -> None:
    schema = {"prefixItems": [{}, False], "items": False}
    assert validate_instance([1, 2, 3], schema, "/answer") == [
        ErrorEntry("/answer", "Expected at most 2 items"),
        ErrorEntry("/answer/1", "Not allowed here"),
    ]
    assert validate_instance(1, False, "/answer") == [ErrorEntry("/answer", "Not allowed here")]


def test_pointers_escape_names() -> None:
    schema = {"properties": {"a/b": {"type": "string"}, "m~n": {"type": "string"}}}
    assert validate_instance({"a/b": 1, "m~n": 2}, schema, "/input") == [
        ErrorEntry("/input/a~1b", "Expected string, found integer"),
        ErrorEntry("/input/m~0n", "Expected string, found integer"),
    ]


def test_validators_are_cached_by_canonical_json() -> None:
    first = compiled_validator({"type": "object", "required": ["a"]})
    second = compiled_validator(json.loads('{"required": ["a"], "type": "object"}'))
    assert first is second
    assert compiled_validator({"type": "object", "required": ["b"]}) is not first


def test_validation_does_not_change_the_schema() -> None:
    schema = {"properties": {"x": False}}
    validate_instance({"x": 1}, schema, "/answer")
    assert schema == {"properties": {"x": False}}


def test_an_answer_too_deep_for_the_validator_is_an_issue_not_a_crash() -> None:
    answer: Any = {}
    for _ in range(2000):
        answer = {"children": [answer]}
    schema = {
        "$defs": {"n": {"properties": {"children": {"items": {"$ref": "#/$defs/n"}}}}},
        "$ref": "#/$defs/n",
    }
    entries = validate_instance(answer, schema, "/answer")
    assert [entry.pointer for entry in entries] == ["/answer"]


# --- sizes of answers ------------------------------------------------------------------------------------


def test_json_size_and_depth() -> None:
    assert json_size({"a": "é"}) == len('{"a":"é"}'.encode())
    assert json_size([1, 2]) == 5
    assert json_size("x") == 3
    assert json_depth(1) == 0
    assert json_depth([]) == 1
    assert json_depth({"a": [1, {"b": {}}]}) == 4
    assert json_depth({"a": [1, {"b": 2}]}) == 3
    assert json_depth([[[[]]]], limit=2) == 3


def test_json_size_and_depth_follow_deep_values_without_recursion() -> None:
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert json_depth(deep) == 100_001
    assert json_size(deep) == 200_002
    nested: Any = "x"
    for _ in range(5_000):
        nested = {"k": nested}
    assert json_size(nested) == len('{"k":') * 5_000 + 3 + 5_000


def test_an_answer_takes_at_most_64_kib_as_json() -> None:
    assert ANSWER_MAX_BYTES == 65_536
    fits = "x" * (65_536 - 2)
    assert json_bounds_errors(fits) == []
    assert json_bounds_errors(fits + "x") == [
        ErrorEntry("/answer", "The answer takes 65,537 bytes as JSON; at most 65,536 are allowed")
    ]


def test_an_answer_nests_at_most_512_levels() -> None:
    def nested(levels: int) -> Any:
        value: Any = 1
        for _ in range(levels):
            value = [value]
        return value

    assert ANSWER_MAX_DEPTH == 512
    assert json_bounds_errors(nested(512)) == []
    [entry] = json_bounds_errors(nested(513))
    assert entry == ErrorEntry("/answer" + "/0" * 512, "The answer nests more than 512 levels deep")
    assert json_bounds_errors(nested(100_000), "/input", max_depth=128, what="The input")[0].detail == (
        "The input nests more than 128 levels deep"
    )


# --- never raises ----------------------------------------------------------------------------------------

KEYWORDS = [
    *("type", "properties", "items", "prefixItems", "required", "enum", "const", "not", "allOf", "anyOf"),
    *("oneOf", "$ref", "$defs", "definitions", "additionalProperties", "pattern", "if", "minimum"),
    *("maxLength", "$schema", "$id", "propertyNames", "format", "default"),
]
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
refs = st.sampled_from(["#/$defs/a", "#/$defs/b", "#/definitions/a", "#", "#/$defs/", "x"])
json_values = st.recursive(
    scalars | refs | st.sampled_from(KEYWORDS),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(KEYWORDS) | st.sampled_from(["a", "b"]) | st.text(max_size=4), inner, max_size=5
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_random_json_is_checked_without_raising(schema: Any) -> None:
    found = check_schema(schema, "/input/schema", NO_LINES)
    assert all(p.pointer.startswith("/input/schema") for p in found)
    assert len(found) == len(set(found))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, json_values)
def test_a_schema_that_keeps_the_rules_validates_without_raising(schema: Any, instance: Any) -> None:
    if check_schema(schema, "", NO_LINES):
        return
    for entry in validate_instance(instance, schema, "/answer"):
        assert entry.pointer.startswith("/answer")
