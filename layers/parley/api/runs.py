"""Routes of ``http-api.md`` "Runs": run_definition, get_run, list_runs, get_run_history, cancel_run,
answer_interaction and list_interactions.

Each route: who calls (``401``/``404``/``403``), then the body or query, then one service call.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel, ConfigDict

from parley.api.problems import json_response
from parley.api.requests import caller, parse_body, query_limit, query_text
from parley.api.routing import PLAYBOOK_BASE, Routes
from parley.ports.runtime import Runtime
from parley.runs.service import DEFAULT_LIMIT, MAX_LIMIT, run_service


class RunDefinitionBody(BaseModel):
    """``{input?, run_id?}``: ``input`` is checked by the run (a JSON object; ``{}`` when left out)."""

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    run_id: str | None = None


class AnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: Any
    claimed_for: str | None = None


class CancelBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str | None = None


def register_run_routes(routes: Routes, runtime: Runtime) -> None:
    app = routes.app
    service = run_service(runtime)
    runs = PLAYBOOK_BASE + "/runs"
    run = runs + "/<run_id>"

    @routes.add("POST", PLAYBOOK_BASE + "/definitions/<definition_type>/<name>/run")
    def run_definition(org: str, playbook: str, definition_type: str, name: str) -> Response[str]:
        principal, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        body = parse_body(RunDefinitionBody, app.current_event)
        started = service.run_definition(
            ref,
            definition_type,
            name,
            input_value=body.input if "input" in body.model_fields_set else {},
            run_id=body.run_id,
            started_by=principal.id,
        )
        return json_response(started.as_json())

    @routes.add("GET", runs)
    def list_runs(org: str, playbook: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        query = app.current_event.query_string_parameters or {}
        page = service.list_runs(
            ref,
            definition_type=query_text(query, "type"),
            name=query_text(query, "name"),
            status=query_text(query, "status"),
            limit=query_limit(query, DEFAULT_LIMIT, MAX_LIMIT),
            cursor=query_text(query, "cursor"),
        )
        return json_response(page.as_json())

    @routes.add("GET", run)
    def get_run(org: str, playbook: str, run_id: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        return json_response(service.get_run(ref, run_id).as_json())

    @routes.add("GET", run + "/history")
    def get_run_history(org: str, playbook: str, run_id: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        query = app.current_event.query_string_parameters or {}
        page = service.get_run_history(
            ref,
            run_id,
            limit=query_limit(query, DEFAULT_LIMIT, MAX_LIMIT),
            cursor=query_text(query, "cursor"),
        )
        return json_response(page.as_json())

    @routes.add("POST", run + "/cancel")
    def cancel_run(org: str, playbook: str, run_id: str) -> Response[str]:
        principal, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        body = parse_body(CancelBody, app.current_event)
        cancelled = service.cancel_run(ref, run_id, reason=body.reason, cancelled_by=principal.id)
        return json_response(cancelled.as_json())

    @routes.add("POST", run + "/answer")
    def answer_interaction(org: str, playbook: str, run_id: str) -> Response[str]:
        principal, ref = caller(app.current_event, runtime.operator, org, playbook, "write")
        body = parse_body(AnswerBody, app.current_event)
        fact = service.answer_interaction(
            ref, run_id, body.answer, claimed_for=body.claimed_for, answered_by=principal.id
        )
        return json_response(fact.as_json())

    @routes.add("GET", PLAYBOOK_BASE + "/interactions")
    def list_interactions(org: str, playbook: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        query = app.current_event.query_string_parameters or {}
        page = service.list_interactions(
            ref,
            to=query_text(query, "to"),
            definition_type=query_text(query, "type"),
            function=query_text(query, "function"),
            limit=query_limit(query, DEFAULT_LIMIT, MAX_LIMIT),
            cursor=query_text(query, "cursor"),
        )
        return json_response(page.as_json())
