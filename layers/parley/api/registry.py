"""The registry: every operation of ``http-api.md``, in the page's order, by name.

It is the one source of the HTTP routes (:func:`register_routes`), of the MCP front door's tools
(``parley.front``) and of the OpenAPI document (``parley.api.openapi``). It loads the services' modules
with it (the body models wait for a call with a body: ``parley.api.bodies``): the api function imports
it when its first event is handled, never with ``parley.api.app``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from parley.api import connections, definitions, events, models, oauth, runs, tools
from parley.api.operation import Call, Operation, Services, authorize_call

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import Response

    from parley.api.routing import Routes
    from parley.ports.runtime import Runtime

OPERATIONS: Final[tuple[Operation, ...]] = (
    *definitions.OPERATIONS,
    *runs.OPERATIONS,
    *events.OPERATIONS,
    *tools.OPERATIONS,
    *models.OPERATIONS,
    # authorize_connection (parley.api.oauth) comes after approve_connection, as on the page.
    *connections.OPERATIONS[:4],
    *oauth.OPERATIONS,
    *connections.OPERATIONS[4:],
)

BY_NAME: Final[Mapping[str, Operation]] = MappingProxyType({op.name: op for op in OPERATIONS})


def register_routes(routes: Routes, runtime: Runtime, services: Services | None = None) -> None:
    """Register one HTTP route per operation: who calls (``401``, then ``404``/``403``), the path and
    query values, the body, then the operation."""
    shared = services or Services(runtime)
    for operation in OPERATIONS:
        routes.add(operation.method, operation.rule)(_route(routes, runtime, shared, operation))


def _route(routes: Routes, runtime: Runtime, services: Services, operation: Operation) -> Callable[..., Any]:
    from parley.api.origin import api_base_url
    from parley.api.problems import empty_response, json_response
    from parley.api.requests import calling_principal, parse_body

    app = routes.app

    def handle(**path: str) -> Response[str]:
        event = app.current_event
        principal = calling_principal(event, runtime.operator)
        org = path["org"]
        playbook = path.get("playbook")
        authorize_call(operation, principal, org, playbook)
        values = operation.values_from_http(path, event.query_string_parameters or {})
        model = operation.body
        body = parse_body(model, event) if model is not None else None
        call = Call(principal, org, playbook, values, body, base_url=api_base_url(event.raw_event))
        answer = operation.invoke(services, call)
        if answer.status == 204:
            return empty_response(answer.headers)
        return json_response(answer.body, answer.status, answer.headers)

    handle.__name__ = operation.name
    return handle
