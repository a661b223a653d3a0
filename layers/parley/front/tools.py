"""An operation of the registry as an MCP tool, and a tool call as that operation's call.

- The tool's input schema is the operation's parameters (``org`` and ``playbook`` first, unless the
  endpoint is scoped to a playbook) and its body model's fields: the declarations the HTTP route checks
  with, so the two cannot drift. Its output schema is the HTTP success body's. A tool is written once as
  the JSON ``tools/list`` shows (:func:`tool_json`), which ``parley.front.direct`` sends as it is and the
  mcp package's server reads.
- A call goes through the same checks, in the same order, as an HTTP request (``parley.api.operation``)
  and the same ``invoke``. A success is ``content[0]``, a one-sentence summary, ``content[1]``, the
  output as JSON text, and ``structuredContent``, the HTTP response's body; a failure is ``isError`` with
  the problem's detail and the problem document (as JSON text) that HTTP would answer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from parley.api.operation import (
    ORG,
    PLAYBOOK,
    Call,
    Operation,
    Services,
    authorize_call,
    base_params,
    may_call,
    required,
)
from parley.errors import Problem
from parley.front.target import Target

if TYPE_CHECKING:
    from mcp_types import CallToolResult

    from parley.config import Principal


def offered(principal: Principal, target: Target) -> list[Operation]:
    """The operations the principal may call through the endpoint: a reader sees no tool that writes."""
    from parley.api.registry import OPERATIONS

    return [op for op in OPERATIONS if may_call(op, principal, target.org, target.playbook)]


def input_schema(operation: Operation, scoped: bool) -> dict[str, Any]:
    """The tool's arguments: the path and query parameters, then the body's fields."""
    from parley.api.body_schemas import body_json_schema

    params = (*(() if scoped else base_params(operation)), *operation.params)
    properties: dict[str, Any] = {p.name: p.schema() for p in params}
    needed = [p.name for p in params if p.required]
    if operation.body_model is not None:
        body = body_json_schema(operation.body_model)
        properties.update(body.get("properties") or {})
        needed.extend(body.get("required") or [])
    return {"type": "object", "properties": properties, "required": needed, "additionalProperties": False}


@functools.cache
def tool_json(name: str, scoped: bool) -> Mapping[str, Any]:
    """The operation ``name`` as a tool, in the JSON ``tools/list`` answers (the protocol's names, in the
    order the mcp package writes them); made once per process for each kind of endpoint."""
    from parley.api.registry import BY_NAME

    operation = BY_NAME[name]
    hints = operation.hints
    return MappingProxyType(
        {
            "annotations": {
                "destructiveHint": hints.destructive,
                "idempotentHint": hints.idempotent,
                "openWorldHint": hints.open_world,
                "readOnlyHint": hints.read_only,
                "title": operation.title,
            },
            "description": operation.description + _role_words(operation),
            "inputSchema": input_schema(operation, scoped),
            "name": operation.name,
            "outputSchema": dict(operation.output),
            "title": operation.title,
        }
    )


def _role_words(operation: Operation) -> str:
    if operation.who is not None:
        return " " + operation.who
    if operation.scope == "org":
        return " Any grant in the org may call it."
    return " It needs the write role on the playbook." if operation.writes else ""


def call_tool(
    services: Services, principal: Principal, target: Target, name: str, arguments: dict[str, Any]
) -> CallToolResult:
    """Call the operation ``name`` with the tool's ``arguments``; never raises."""
    from parley.api.registry import BY_NAME

    operation = BY_NAME.get(name)
    if operation is None:
        return failure(Problem("not_found", f"There is no tool named {name!r}; tools/list lists them."))
    try:
        call = _call(operation, principal, target, dict(arguments))
        answer = operation.invoke(services, call)
        return success(operation.summarize(services, call, answer.body), answer.body)
    except Problem as problem:
        return failure(problem)
    except Exception as exc:
        from parley.api.problems import internal_problem

        return failure(internal_problem(exc, tool=name))


def _call(operation: Operation, principal: Principal, target: Target, arguments: dict[str, Any]) -> Call:
    if target.scoped:
        org = target.org
        playbook = target.playbook if operation.scope == "playbook" else None
    else:
        bases = base_params(operation)
        missing = [p.name for p in bases if arguments.get(p.name) is None]
        if missing:
            raise required(missing)
        org = ORG.from_argument(arguments.pop("org"))
        playbook = (
            PLAYBOOK.from_argument(arguments.pop("playbook")) if operation.scope == "playbook" else None
        )
    assert org is not None
    authorize_call(operation, principal, org, playbook)
    values, fields = operation.values_from_arguments(arguments)
    return Call(
        principal, org, playbook, values, operation.body_from_fields(fields), base_url=target.base_url
    )


def success(summary: str, body: dict[str, Any]) -> CallToolResult:
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=summary), TextContent(type="text", text=_json(body))],
        structured_content=body,
    )


def failure(problem: Problem) -> CallToolResult:
    from mcp_types import CallToolResult, TextContent

    document = problem.as_json()
    return CallToolResult(
        content=[
            TextContent(type="text", text=problem.detail),
            TextContent(type="text", text=_json(document)),
        ],
        is_error=True,
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
