"""The API's Lambda entry and the factory that builds it around injected ports.

``handle(event, context)`` is the function API Gateway invokes: on its first call it builds the
runtime from the environment (``PARLEY_TABLE``, ``PARLEY_OPERATOR_CONFIG``), never at import.
``build_handler(runtime)`` gives the same handler around any :class:`~parley.ports.runtime.Runtime`: the
local server and the tests use it.

Only powertools' resolver and the problem mapping load with this module; the routes, the domain and
the boto3 client load on the first event (``make bench`` measures both).

powertools' resolver keeps the current event on a class attribute, so a handler serves one event at
a time per process — as Lambda does. The local server serializes its calls for that reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from parley.api.log import logger
from parley.api.problems import internal_problem, problem_result, register_problem_handlers
from parley.api.routing import Routes

if TYPE_CHECKING:
    from parley.ports.runtime import Runtime

Handler = Callable[[Mapping[str, Any], Any], dict[str, Any]]


def build_resolver(runtime: Runtime) -> APIGatewayRestResolver:
    """The resolver with every route and the problem mapping, working with ``runtime``'s ports."""
    # The registry brings the domain (pydantic bodies, the services' modules) with it: loaded when the
    # first event is handled, so the module's cold import stays close to powertools' own.
    from parley.api.description import register_description_routes
    from parley.api.oauth import register_oauth_routes
    from parley.api.registry import register_routes
    from parley.inbox.routes import register_inbox_routes

    app = APIGatewayRestResolver()
    routes = Routes(app)
    register_routes(routes, runtime)
    register_description_routes(routes)
    register_oauth_routes(routes, runtime)
    register_inbox_routes(routes, runtime)
    register_problem_handlers(app, routes.allowed_methods)
    return app


def build_handler(runtime: Runtime) -> Handler:
    """A Lambda handler for API Gateway REST proxy events around ``runtime``."""
    resolver = build_resolver(runtime)

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        request_id = (event.get("requestContext") or {}).get("requestId")
        logger().set_correlation_id(request_id)
        try:
            return resolver.resolve(event, context)
        except Exception as exc:  # an event the resolver could not even read: still a problem
            return problem_result(internal_problem(exc))

    return handler


@functools.cache
def _default_handler() -> Handler:
    from parley.aws.environment import runtime_from_environment

    return build_handler(runtime_from_environment())


def handle(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the API function."""
    return _default_handler()(event, context)
