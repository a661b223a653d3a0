"""The registry of operations (``parley.api.registry``): one declaration per operation of http-api.md,
from which the HTTP routes, the MCP tools and the OpenAPI document are all made."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from parley.api.app import build_resolver
from parley.api.body_schemas import body_schema
from parley.api.openapi import openapi_document
from parley.api.operation import PLAYBOOK_PATH, Operation, Param, base_params
from parley.api.registry import BY_NAME, OPERATIONS
from parley.clock import ManualClock
from parley.config import OperatorConfig
from parley.definitions.store import DynamoDefinitionStore
from parley.errors import Problem
from parley.front.tools import input_schema
from parley.ports.runtime import Runtime

#: A row of a table of operations: | name | `METHOD /path` | body or query | success |
_ROW = re.compile(r"^\| ([a-z_]+) \| `(GET|POST|PUT|DELETE|PATCH) ([^`]+)` \|([^|]*)\|", re.MULTILINE)


def page_operations() -> dict[str, tuple[str, str, set[str], set[str]]]:
    """``name -> (method, whole path, query names, body fields)`` of http-api.md's tables (the page
    shipped in the package: the same text as docs/reference/http-api.md)."""
    text = files("parley.reference").joinpath("http-api.md").read_text(encoding="utf-8")
    found = {}
    for name, method, path, fields in _ROW.findall(text):
        whole = path if path.startswith("/v1/") else PLAYBOOK_PATH + path
        query: set[str] = set()
        body: set[str] = set()
        if fields.strip().startswith("query"):
            query = set(re.findall(r"`(\w+)`", fields))
        else:
            braced = re.search(r"\{([^}]*)\}", fields)
            if braced:
                body = {part.strip().rstrip("?") for part in braced.group(1).split(",") if part.strip()}
        found[name] = (method, whole, query, body)
    return found


def test_every_operation_of_the_page_is_declared_once_with_its_route_query_and_body() -> None:
    page = page_operations()

    assert len(page) == 26
    assert [op.name for op in OPERATIONS] == list(page)  # the page's order
    for operation in OPERATIONS:
        method, path, query, body = page[operation.name]
        assert (operation.method, operation.path) == (method, path), operation.name
        assert {p.name for p in operation.query_params} == query, operation.name
        fields = set(operation.body.model_fields) if operation.body is not None else set()
        assert fields == body, operation.name
        assert {p.name for p in operation.path_params} == set(re.findall(r"\{(\w+)\}", operation.route))


def test_the_http_routes_are_exactly_the_registry() -> None:
    runtime = Runtime(
        definitions=DynamoDefinitionStore(None, "t"), clock=ManualClock(), operator=OperatorConfig()
    )
    resolver = build_resolver(runtime)
    routes = {
        (route.func.__name__, route.method, route.path)
        for route in [*resolver._dynamic_routes, *resolver._static_routes]
        if route.method != "HEAD" and route.path.startswith("/v1/") and route.func.__name__ in BY_NAME
    }

    assert routes == {(op.name, op.method, op.rule) for op in OPERATIONS}


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.name)
def test_every_schema_of_an_operation_is_valid_json_schema(operation: Operation) -> None:
    for scoped in (False, True):
        Draft202012Validator.check_schema(input_schema(operation, scoped))
    Draft202012Validator.check_schema(dict(operation.output))
    if operation.body is not None:
        Draft202012Validator.check_schema(body_schema(operation.body))
    for param in operation.params:
        Draft202012Validator.check_schema(param.schema())


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.name)
def test_a_tools_arguments_are_its_routes_path_query_and_body_from_the_same_declarations(
    operation: Operation,
) -> None:
    unscoped, scoped = input_schema(operation, False), input_schema(operation, True)
    params = {p.name: p for p in (*base_params(operation), *operation.params)}
    body = body_schema(operation.body) if operation.body is not None else {"properties": {}, "required": []}

    # No name is both a parameter and a body field: a tool's arguments are one flat object.
    assert not set(params) & set(body["properties"])
    assert unscoped["properties"] == {**{n: p.schema() for n, p in params.items()}, **body["properties"]}
    assert set(scoped["properties"]) == set(unscoped["properties"]) - {p.name for p in base_params(operation)}
    assert set(unscoped["required"]) == {n for n, p in params.items() if p.required} | set(
        body.get("required", [])
    )
    assert unscoped["additionalProperties"] is False
    # The OpenAPI document is made from the same declarations.
    described = openapi_document()["paths"][operation.path][operation.method.lower()]
    assert [p["name"] for p in described["parameters"]] == list(params)
    for shown in described["parameters"]:
        assert shown["schema"] == {
            k: v for k, v in params[shown["name"]].schema().items() if k != "description"
        }
    if operation.body is not None:
        assert described["requestBody"]["content"]["application/json"]["schema"] == body
    if operation.status == 204:  # no body over HTTP
        assert "content" not in described["responses"]["204"]
        return
    assert described["responses"][str(operation.status)]["content"]["application/json"]["schema"] == dict(
        operation.output
    )


def test_the_annotations_say_what_each_tool_does() -> None:
    hints = {op.name: op.hints for op in OPERATIONS}

    assert {n for n, h in hints.items() if h.destructive} == {
        "retire_definition",
        "cancel_run",
        "answer_interaction",
        "execute",
        "remove_connection",
    }
    assert {n for n, h in hints.items() if h.open_world} >= {
        "search",
        "introspect",
        "execute",
        "run_definition",
    }
    for operation in OPERATIONS:
        # Every GET only reads and needs the read role; every other method needs write.
        assert (operation.method == "GET") == (operation.role == "read"), operation.name
        if operation.method == "GET":
            assert operation.hints.read_only and operation.hints.idempotent, operation.name
        assert not (operation.hints.read_only and operation.hints.destructive), operation.name
    assert hints["dry_run"].read_only  # it checks, calling and recording nothing
    assert not hints["run_definition"].read_only and not hints["create_definition"].idempotent


def test_every_operation_has_words_for_a_person_and_an_agent() -> None:
    for operation in OPERATIONS:
        assert operation.summary.endswith(".") and len(operation.summary) < 80, operation.name
        assert len(operation.description) > 80, operation.name
        for param in (*base_params(operation), *operation.params):
            assert param.description, (operation.name, param.name)
        if operation.body is not None:
            for name, field in body_schema(operation.body)["properties"].items():
                assert field.get("description"), (operation.name, name)


def test_every_problem_an_operation_answers_is_described_with_its_status() -> None:
    for operation in OPERATIONS:
        responses = openapi_document()["paths"][operation.path][operation.method.lower()]["responses"]
        assert {"401", "404", "500"} <= set(responses), operation.name
        if operation.writes:
            assert "403" in responses, operation.name
        if operation.body is not None:
            assert {"400", "413", "415", "422"} <= set(responses), operation.name
        if operation.query_params:
            assert "400" in responses, operation.name
        assert "WWW-Authenticate" in responses["401"]["headers"]


LIMIT = BY_NAME["list_runs"].query_params[-2]


@pytest.mark.parametrize(
    ("raw", "argument"),
    [("0", 0), ("101", 101), ("x", "x"), ("1.5", 1.5), ("", True), ("-1", -1)],
)
def test_a_query_value_and_a_tool_argument_are_refused_alike(raw: str, argument: Any) -> None:
    assert LIMIT.name == "limit"
    with pytest.raises(Problem) as from_query:
        LIMIT.from_query(raw)
    with pytest.raises(Problem) as from_argument:
        LIMIT.from_argument(argument)

    assert from_query.value.as_json() == from_argument.value.as_json()
    assert from_query.value.reason == "bad_request"


def test_typed_values_are_read_from_queries_and_arguments_alike() -> None:
    flag = Param("include_retired", "query", "x", kind="boolean")
    order = BY_NAME["list_playbook_events"].query_params[3]

    assert LIMIT.from_query("7") == LIMIT.from_argument(7) == 7
    assert flag.from_query("true") is flag.from_argument(True) is True
    assert order.from_query("asc") == order.from_argument("asc") == "asc"
    with pytest.raises(Problem, match="order is asc or desc"):
        order.from_argument("up")


def test_the_openapi_document_is_3_1_with_every_operation_once() -> None:
    document = openapi_document()
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]

    assert document["openapi"] == "3.1.0"
    assert sorted(ids) == sorted(BY_NAME)
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
