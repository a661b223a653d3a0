"""Routes of ``http-api.md`` "Events": list_playbook_events and get_event.

Content (answers, outputs) is shown in a list where it takes at most 2 KiB as JSON, else as its size
(see ``parley.runs.events``); ``get_event`` shows it whole.
"""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response

from parley.api.problems import json_response
from parley.api.requests import caller, query_limit, query_text
from parley.api.routing import PLAYBOOK_BASE, Routes
from parley.ports.runtime import Runtime
from parley.runs.service import DEFAULT_LIMIT, MAX_LIMIT, run_service


def register_event_routes(routes: Routes, runtime: Runtime) -> None:
    app = routes.app
    service = run_service(runtime)
    collection = PLAYBOOK_BASE + "/events"

    @routes.add("GET", collection)
    def list_playbook_events(org: str, playbook: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        query = app.current_event.query_string_parameters or {}
        page = service.list_playbook_events(
            ref,
            event_type=query_text(query, "type"),
            since=query_text(query, "since"),
            run_id=query_text(query, "run_id"),
            order=query_text(query, "order") or "desc",
            limit=query_limit(query, DEFAULT_LIMIT, MAX_LIMIT),
            cursor=query_text(query, "cursor"),
        )
        return json_response(page.as_json())

    @routes.add("GET", collection + "/<event_id>")
    def get_event(org: str, playbook: str, event_id: str) -> Response[str]:
        _, ref = caller(app.current_event, runtime.operator, org, playbook, "read")
        return json_response(service.get_event(ref, event_id))
