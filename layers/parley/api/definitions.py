"""Routes of ``http-api.md`` "Definitions": create, list, get, update and retire a definition.

Each route: who calls (``401``/``404``/``403``), then the body or query, then one service call.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel, ConfigDict

from parley.api.problems import json_response
from parley.api.requests import caller, parse_body, query_flag, query_limit, query_text
from parley.api.routing import PLAYBOOK_BASE, Routes
from parley.definitions.service import DEFAULT_LIMIT, MAX_LIMIT, require_type
from parley.ports.runtime import Runtime


class CreateDefinitionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    source: str


class UpdateDefinitionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str


class RetireDefinitionBody(BaseModel):
    """Retiring takes no fields; an empty body or ``{}``."""

    model_config = ConfigDict(extra="forbid")


def register_definition_routes(routes: Routes, runtime: Runtime) -> None:
    app = routes.app
    service = runtime.definition_service()
    collection = PLAYBOOK_BASE + "/definitions/<definition_type>"
    item = collection + "/<name>"

    @routes.add("POST", collection)
    def create_definition(org: str, playbook: str, definition_type: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        require_type(definition_type)
        body = parse_body(CreateDefinitionBody, app.current_event)
        definition = service.create_definition(ref, definition_type, body.name, body.source)
        location = f"/v1/orgs/{org}/playbooks/{playbook}/definitions/{definition_type}/{definition.name}"
        return json_response(definition.as_json(), 201, {"Location": location})

    @routes.add("GET", collection)
    def list_definitions(org: str, playbook: str, definition_type: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        require_type(definition_type)
        query = app.current_event.query_string_parameters or {}
        page = service.list_definitions(
            ref,
            definition_type,
            include_retired=query_flag(query, "include_retired"),
            limit=query_limit(query, DEFAULT_LIMIT, MAX_LIMIT),
            cursor=query_text(query, "cursor"),
        )
        return json_response(page.as_json())

    @routes.add("GET", item)
    def get_definition(org: str, playbook: str, definition_type: str, name: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        return json_response(service.get_definition(ref, definition_type, name).as_json())

    @routes.add("PUT", item)
    def update_definition(org: str, playbook: str, definition_type: str, name: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        require_type(definition_type)
        body = parse_body(UpdateDefinitionBody, app.current_event)
        return json_response(service.update_definition(ref, definition_type, name, body.source).as_json())

    @routes.add("POST", item + "/retire")
    def retire_definition(org: str, playbook: str, definition_type: str, name: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        require_type(definition_type)
        parse_body(RetireDefinitionBody, app.current_event)
        return json_response(service.retire_definition(ref, definition_type, name).as_json())
