"""Routes of ``http-api.md`` "Tool servers": search, introspect, execute and dry_run.

search and introspect read (role ``read``); execute and dry_run are POSTs (role ``write``). A server
or tool the playbook may not use answers ``404 not_found`` with the kind ``tool_not_offered`` and a
``because`` (see ``parley.tools.service``); a tool server's failure is a ``503``/``409`` problem with
a ``because``, never a ``500``.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel, ConfigDict, Field

from parley.api.problems import json_response
from parley.api.requests import caller, parse_body, query_text
from parley.api.routing import PLAYBOOK_BASE, Routes
from parley.ports.runtime import Runtime
from parley.tools.service import ToolService


class ArgumentsBody(BaseModel):
    """``{arguments}``: the tool's arguments, a JSON object (``{}`` when left out)."""

    model_config = ConfigDict(extra="forbid")

    arguments: dict[str, Any] = Field(default_factory=dict)


def register_tool_routes(routes: Routes, runtime: Runtime) -> None:
    app = routes.app
    service = ToolService(runtime)
    servers = PLAYBOOK_BASE + "/tool-servers"
    tool = servers + "/<server>/tools/<tool>"

    @routes.add("GET", servers + "/search")
    def search(org: str, playbook: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        query = app.current_event.query_string_parameters or {}
        return json_response(service.search(ref, query_text(query, "terms")))

    @routes.add("GET", tool)
    def introspect(org: str, playbook: str, server: str, tool: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        return json_response(service.introspect(ref, server, tool))

    @routes.add("POST", tool + "/execute")
    def execute(org: str, playbook: str, server: str, tool: str) -> Response[str]:
        principal, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        body = parse_body(ArgumentsBody, app.current_event)
        return json_response(service.execute(ref, server, tool, body.arguments, by=principal.id))

    @routes.add("POST", tool + "/dry-run")
    def dry_run(org: str, playbook: str, server: str, tool: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        body = parse_body(ArgumentsBody, app.current_event)
        return json_response(service.dry_run(ref, server, tool, body.arguments))
