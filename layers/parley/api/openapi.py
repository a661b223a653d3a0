"""The API described as OpenAPI 3.1 (``http-api.md``, "API description"), made from the registry.

Every operation is there with its path and query parameters (types, bounds, descriptions), its
request body (the body model's JSON Schema: the model the route checks with, as ``body_schemas.json``
keeps it), its success body and each problem it may answer, grouped by status. ``GET /openapi.json``
serves it, needing no token.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from parley.api.body_schemas import body_json_schema
from parley.api.operation import Operation, Param, base_params
from parley.api.shapes import problem_schema
from parley.errors import REASONS

OPENAPI_VERSION: Final = "3.1.0"
PROBLEM_REF: Final = "#/components/schemas/Problem"

_DESCRIPTION: Final = """\
Parley's HTTP API (the contract is http-api.md). Every route is relative to the API's base URL:
locally http://127.0.0.1:8000, on AWS https://<api>/<stage>. Requests carry
`Authorization: Bearer <token>`; every error is an RFC 9457 problem (application/problem+json).

The same operations are MCP tools of the same names at `POST /mcp` (each takes `org` and `playbook`)
and `POST /v1/orgs/{org}/playbooks/{playbook}/mcp` (scoped to that playbook)."""

_TAGS: Final = (
    ("Definitions", "Functions, saved as Markdown documents with front matter."),
    ("Runs", "Runs of functions, and the requests they ask."),
    ("Events", "What happened in a playbook."),
    ("Tool servers", "The MCP tool servers a playbook may call."),
    ("Models", "The models a reasoning function may name."),
    ("Connections", "MCP servers people add to their org, and the operator's rules for them."),
)


@functools.cache
def openapi_document() -> Mapping[str, Any]:
    """The OpenAPI document of every operation (built once per process)."""
    from parley.api.registry import OPERATIONS

    paths: dict[str, dict[str, Any]] = {}
    for operation in OPERATIONS:
        paths.setdefault(operation.path, {})[operation.method.lower()] = operation_object(operation)
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "Parley", "version": api_version(), "description": _DESCRIPTION},
        "tags": [{"name": name, "description": words} for name, words in _TAGS],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": (
                        "A token of the operator configuration locally; on AWS a JWT of the stage's issuer."
                    ),
                }
            },
            "schemas": {"Problem": problem_schema()},
        },
    }


def operation_object(operation: Operation) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "operationId": operation.name,
        "summary": operation.summary,
        "description": operation.description,
        "tags": [operation.tag],
        "parameters": [parameter_object(p) for p in (*base_params(operation), *operation.params)],
    }
    if operation.body_model is not None:
        shown["requestBody"] = {
            "required": operation.body_required,
            "content": {"application/json": {"schema": body_json_schema(operation.body_model)}},
        }
    success: dict[str, Any] = {
        "description": operation.summary,
        "headers": {"Cache-Control": {"schema": {"const": "no-store"}}},
        "content": {"application/json": {"schema": dict(operation.output)}},
    }
    if operation.status == 204:
        del success["content"]
    if operation.status == 201:
        success["headers"]["Location"] = {
            "description": "Where the new definition or connection is read.",
            "schema": {"type": "string"},
        }
    responses: dict[str, Any] = {str(operation.status): success}
    by_status: dict[int, list[str]] = {}
    for reason in operation.problem_reasons():
        by_status.setdefault(REASONS[reason][0], []).append(reason)
    for status, reasons in sorted(by_status.items()):
        responses[str(status)] = problem_response(reasons)
    shown["responses"] = responses
    return shown


def parameter_object(param: Param) -> dict[str, Any]:
    schema = param.schema()
    description = schema.pop("description")
    return {
        "name": param.name,
        "in": param.where,
        "required": param.required,
        "description": description,
        "schema": schema,
    }


def problem_response(reasons: list[str]) -> dict[str, Any]:
    status = REASONS[reasons[0]][0]
    response: dict[str, Any] = {
        "description": ", ".join(reasons),
        "content": {
            "application/problem+json": {
                "schema": {
                    "allOf": [
                        {"$ref": PROBLEM_REF},
                        {"properties": {"status": {"const": status}, "reason": {"enum": reasons}}},
                    ]
                }
            }
        },
    }
    if "unauthenticated" in reasons:
        response["headers"] = {"WWW-Authenticate": {"required": True, "schema": {"type": "string"}}}
    return response


def api_version() -> str:
    """The package's version (the API's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("parley")
    except PackageNotFoundError:  # the Lambda layer ships the package without its metadata
        return "0"
