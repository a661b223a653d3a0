"""The DSL's own JSON Schema (workflow-format.md, "Document fields"): the vendored versions, and how an
error over forms (oneOf, anyOf) becomes one useful problem."""

from __future__ import annotations

import json

import pytest

from parley.workflow.document_schema import (
    DSL_VERSIONS,
    SCHEMA_FOLDER,
    SchemaProblem,
    document_problems,
    dsl_schema,
    task_problems,
)

HEAD = {"dsl": "1.0.3", "namespace": "tests", "name": "checks", "version": "1.0.0"}


@pytest.mark.parametrize("version", DSL_VERSIONS)
def test_each_version_is_vendored_with_its_licence(version: str) -> None:
    schema = dsl_schema(version)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["required"]) == {"document", "do"}
    assert "CallFunction" in [form.get("title") for form in schema["$defs"]["callTask"]["oneOf"]]
    assert json.loads((SCHEMA_FOLDER / f"workflow-{version}.json").read_text(encoding="utf-8")) == schema
    assert "Apache License" in (SCHEMA_FOLDER / "LICENSE.md").read_text(encoding="utf-8")
    assert f"workflow-{version}.json" in (SCHEMA_FOLDER / "README.md").read_text(encoding="utf-8")


def test_the_yaml_1_1_booleans_stayed_keys() -> None:
    assert "on" in dsl_schema("1.0.3")["properties"]["schedule"]["properties"]


def test_a_document_with_its_tasks_aside() -> None:
    assert document_problems({"document": HEAD, "do": [{"a": {"anything": True}}]}, "1.0.3") == []


def test_a_missing_field_is_named_at_its_own_place() -> None:
    assert document_problems({"document": {"dsl": "1.0.3"}, "do": []}, "1.0.3") == [
        SchemaProblem(("document", "namespace"), "'namespace' is required here"),
        SchemaProblem(("document", "name"), "'name' is required here"),
        SchemaProblem(("document", "version"), "'version' is required here"),
    ]


def test_a_value_of_no_form_names_the_types_the_forms_take() -> None:
    assert document_problems({"document": HEAD, "do": [], "timeout": 5}, "1.0.3") == [
        SchemaProblem(("timeout",), "Expected a mapping or text, found a whole number")
    ]


def test_a_mapping_of_no_form_names_the_fields_that_tell_them_apart() -> None:
    use = {"retries": {"p": {"backoff": {"quadratic": {}}}}}
    assert document_problems({"document": HEAD, "do": [], "use": use}, "1.0.3") == [
        SchemaProblem(
            ("use", "retries", "p", "backoff", "quadratic"),
            "'quadratic' is not a field here; expected constant, exponential, linear",
        ),
        SchemaProblem(
            ("use", "retries", "p", "backoff"), "Expected one of the fields constant, exponential or linear"
        ),
    ]


def test_a_value_that_fits_more_than_one_form() -> None:
    task = {"listen": {"to": {"one": {"with": {"type": "a"}}, "any": []}}}
    assert task_problems(task, "listen", "1.0.3") == [
        SchemaProblem(("listen", "to"), "Write one of any or one, not more")
    ]


def test_the_form_a_value_was_meant_as_is_followed() -> None:
    # the error is an object, not a reference to use.errors: its status is what is wrong
    task = {"raise": {"error": {"type": "https://example.com/late", "status": 4.5}}}
    assert task_problems(task, "raise", "1.0.3") == [
        SchemaProblem(("raise", "error", "status"), "Expected a whole number or text, found a number")
    ]


def test_an_error_takes_parleys_kind_and_because() -> None:
    error = {"type": "https://example.com/late", "status": 408, "kind": "late", "because": "slow"}
    assert task_problems({"raise": {"error": error}}, "raise", "1.0.3") == []


def test_a_duration_is_parleys_to_read_in_every_version() -> None:
    assert task_problems({"wait": "${ $data.delay }"}, "wait", "1.0.0") == []


def test_a_call_is_read_as_a_call_of_a_function_by_name() -> None:
    task = {"call": "run_definition", "with": {"type": "interaction", "name": "ask"}, "retries": 3}
    assert task_problems(task, "call", "1.0.3") == [
        SchemaProblem(
            ("retries",),
            "'retries' is not a field here; expected call, export, if, input, metadata, output, then, "
            "timeout, "
            "with",
        )
    ]


def test_the_tasks_inside_a_task_are_aside() -> None:
    task = {"try": [{"a": {"nothing": 1}}], "catch": {"do": [{"b": {}}]}}
    assert task_problems(task, "try", "1.0.3") == []


def test_a_switch_case_without_then() -> None:
    assert task_problems({"switch": [{"a": {"when": "${ true }"}}]}, "switch", "1.0.3") == [
        SchemaProblem(("switch", 0, "a", "then"), "'then' is required here")
    ]
