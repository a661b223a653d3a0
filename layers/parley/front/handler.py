"""The ``mcp`` function's Lambda entry, and the factory that builds it around injected ports.

``handle(event, context)`` is what API Gateway invokes for ``/mcp`` and
``/v1/orgs/{org}/playbooks/{playbook}/mcp`` (behind the same authorizer as every route); on its first
call it builds the runtime from the environment, never at import. ``build_mcp_handler(runtime)`` gives
the same handler around any runtime: ``parley serve`` and the tests use it.

Before the MCP server sees a request, the handler answers what HTTP would, as problems:

- who calls (the token, or on AWS the authorizer's principal): ``401`` with ``WWW-Authenticate``;
- on a playbook's endpoint, a playbook the caller cannot read: ``404``, as for every route;
- any method but ``POST``: ``405`` with ``Allow: POST`` (stateless: no server-sent stream is kept
  open, which a Lambda could not hold anyway);
- a body over 1 MiB: ``413``.

Then the mcp package's streamable-HTTP transport serves the request (stateless, JSON responses), on a
server made for this caller (``parley.front.server``) — unless it is one of the plain requests an agent
sends first (``initialize``, ``tools/list``, …), which ``parley.front.direct`` answers as the package
would without loading it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.front.guides import GuideReader, packaged_guide
from parley.front.target import Target, is_mcp_path, mcp_target

if TYPE_CHECKING:
    from parley.api.operation import Services
    from parley.config import Principal
    from parley.front.asgi import Receive, Scope, Send
    from parley.ports.runtime import Runtime

Handler = Callable[[Mapping[str, Any], Any], dict[str, Any]]


def build_mcp_handler(runtime: Runtime, guides: GuideReader | None = None) -> Handler:
    """A Lambda handler of the MCP front door around ``runtime``; ``guides`` reads the reference pages
    (those shipped in the package when left out)."""
    from parley.api.operation import Services

    services = Services(runtime)
    read_guide = guides or packaged_guide

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        from parley.api.log import logger
        from parley.errors import Problem

        logger().set_correlation_id((event.get("requestContext") or {}).get("requestId"))
        # The problems module loads with a problem only: it brings powertools' resolver (and asyncio),
        # which an agent's first requests, answered by front.direct, do not need.
        try:
            return _answer(event, runtime, services, read_guide)
        except Problem as problem:
            from parley.api.problems import problem_result

            return problem_result(problem)
        except Exception as exc:  # never a traceback to the client: a 500 problem, logged with its id
            from parley.api.problems import internal_problem, problem_result

            return problem_result(internal_problem(exc, path=event.get("path")))

    return handler


def _answer(
    event: Mapping[str, Any], runtime: Runtime, services: Services, guides: GuideReader
) -> dict[str, Any]:
    from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

    from parley.api.requests import MAX_BODY_BYTES, calling_principal, is_json_media_type
    from parley.auth import authorize
    from parley.errors import Problem
    from parley.front import asgi

    path = str(event.get("path") or "/")
    target = mcp_target(path)
    if target is None:
        raise Problem("not_found", f"There is nothing at {path}.")
    from parley.api.origin import api_base_url

    target = replace(target, base_url=api_base_url(event))
    principal = calling_principal(APIGatewayProxyEvent(dict(event)), runtime.operator)
    if target.org is not None and target.playbook is not None:
        authorize(principal, target.org, target.playbook, "read")
    method = str(event.get("httpMethod") or "").upper()
    if method != "POST":
        raise Problem(
            "method_not_allowed",
            f"{path} takes POST, not {method}: the MCP endpoint is stateless and keeps no stream open.",
            headers={"Allow": "POST"},
        )
    try:
        body = asgi.request_body(event)
    except ValueError:
        raise Problem("bad_request", "The body is not valid base64.") from None
    if len(body) > MAX_BODY_BYTES:
        raise Problem(
            "content_too_large",
            f"A body is at most {MAX_BODY_BYTES:,} bytes (1 MiB); this one is {len(body):,}.",
        )
    content_type = APIGatewayProxyEvent(dict(event)).headers.get("content-type")
    if not is_json_media_type(content_type):  # the transport's own answer would be plain text
        shown = f"{content_type!r}" if content_type else "none"
        raise Problem(
            "unsupported_media_type", f"Send JSON-RPC as application/json (Content-Type was {shown})."
        )
    from parley.front.direct import answer_directly

    direct = answer_directly(event, body, principal, target)
    if direct is not None:
        return direct
    return answer_with_sdk(event, body, services, principal, target, guides)


def answer_with_sdk(
    event: Mapping[str, Any],
    body: bytes,
    services: Services,
    principal: Principal,
    target: Target,
    guides: GuideReader,
) -> dict[str, Any]:
    """The mcp package's answer to a request the front door let through (its proxy result)."""
    from parley.front import asgi

    app = _mcp_app(services, principal, target, guides)
    return asgi.proxy_result(asgi.run(app, event, body), {"Cache-Control": "no-store"})


def _mcp_app(
    services: Services, principal: Principal, target: Target, guides: GuideReader
) -> Callable[[Scope, Receive, Send], Any]:
    """The streamable-HTTP transport (stateless, JSON responses) around this caller's server; its
    session manager runs for the one request."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        from parley.api.requests import MAX_BODY_BYTES
        from parley.front.server import build_server

        manager = StreamableHTTPSessionManager(
            app=build_server(services, principal, target, guides),
            json_response=True,
            stateless=True,
            # The token authenticates every request (no cookie rides along), so a page that rebinds a
            # name to 127.0.0.1 gains nothing; behind API Gateway the host is the API's own.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=MAX_BODY_BYTES,
        )
        async with manager.run():
            await manager.handle_request(scope, receive, send)

    return app


@functools.cache
def _default_handler() -> Handler:
    from parley.aws.environment import runtime_from_environment

    return build_mcp_handler(runtime_from_environment())


def handle(event: dict[str, Any], context: object) -> dict[str, Any]:
    """The Lambda entry of the mcp function."""
    return _default_handler()(event, context)


__all__ = ["Handler", "answer_with_sdk", "build_mcp_handler", "handle", "is_mcp_path", "mcp_target"]
