"""OAuth of connections (``http-api.md``, "Connections", **OAuth**; issue 32, part 4): the operation
``authorize_connection`` (``POST /v1/orgs/{org}/connections/{name}/authorize``, and its MCP tool) and the
route ``GET /v1/oauth/callback``, which has no bearer token (the browser comes back from the
authorization server; the ``state`` is the binding). The flow is :mod:`parley.connections.oauth`.

Who may authorize: the person who added the connection, or the org's ``admin`` (``403`` for anyone else
with a grant in the org): the tokens then act for whoever signs in at the authorization server. A
connection that is ``broken``, or whose URL the operator's rules no longer allow, is ``409``; one that
sends headers is ``409`` too.

The callback answers a small HTML page (``Accept: text/html``, a browser) or JSON, and its problems the
same way; the page says what happened and links to the inbox's connections view. It carries
``Referrer-Policy: no-referrer`` (its URL holds the code) and a policy that allows nothing to load.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any, Final

from parley.api.connections import NAME, may_add
from parley.api.operation import Answer, Call, Hints, Operation, Services
from parley.errors import Problem

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import Response

    from parley.api.routing import Routes
    from parley.config import Principal
    from parley.connections.model import Connection
    from parley.ports.runtime import Runtime

#: The callback's route (no token: ``cdk/parley_cdk/api.py`` serves it without the authorizer).
CALLBACK_RULE: Final = "/v1/oauth/callback"
#: Where the page sends the person next, relative to the callback (``<base>/inbox#connections``).
INBOX_CONNECTIONS: Final = "../../inbox#connections"

_PAGE_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}

AUTHORIZED: Final = {
    "type": "object",
    "required": ["authorization_url"],
    "properties": {
        "authorization_url": {
            "type": "string",
            "format": "uri",
            "description": "The authorization server's page: the person opens it in a browser, signs in and "
            "allows Parley; it comes back to /v1/oauth/callback, which keeps the tokens. It is valid for "
            "10 minutes and once.",
        }
    },
}


def may_authorize(principal: Principal, org: str) -> bool:
    """Whoever may add connections to the org (and so have added one), or its admin; each call still
    needs the connection to be theirs, or the admin grant."""
    return may_add(principal, org) or principal.is_admin_of(org)


def authorize_connection(services: Services, call: Call) -> Answer:
    from parley.connections.model import CONNECTION_NAME
    from parley.connections.oauth import begin_authorization, callback_url, http_client
    from parley.connections.rules import status_under

    runtime = services.runtime
    name = str(call.values["name"])
    connection = runtime.connections.get(call.org, name) if CONNECTION_NAME.match(name) else None
    if connection is None:
        raise Problem("not_found", f"Org {call.org!r} has no connection {name!r}.")
    principal = call.principal
    if connection.added_by != principal.id and not principal.is_admin_of(call.org):
        raise Problem(
            "forbidden",
            f"Only the person who added the connection {name!r} ({connection.added_by}) or an admin of the "
            "org may authorize it.",
        )
    status = status_under(connection, runtime.operator.connections)
    if status == "not_allowed":
        raise Problem(
            "conflict",
            f"The operator's rules no longer allow the URL of the connection {name!r}: it cannot be "
            "authorized.",
        )
    if status == "broken":
        raise Problem(
            "conflict", f"The connection {name!r} is broken: remove it and add it again, then authorize it."
        )
    if call.base_url is None:
        raise Problem("bad_request", "The request names no host, so there is no URL to come back to.")
    with http_client() as http:
        url = begin_authorization(
            connection,
            principal.id,
            runtime.connection_secrets,
            callback_url(call.base_url),
            runtime.clock.now(),
            http,
        )
    return Answer({"authorization_url": url})


def _summary(services: Services, call: Call, body: dict[str, Any]) -> str:
    return (
        f"Open authorization_url in a browser to authorize the connection {call.values['name']!r} "
        "(within 10 minutes); the tokens are kept when the browser comes back."
    )


OPERATIONS: Final = (
    Operation(
        name="authorize_connection",
        title="Authorize a connection",
        method="POST",
        route="/connections/{name}/authorize",
        scope="org",
        role="write",
        tag="Connections",
        summary="Start the OAuth authorization of a connection whose server asks for it.",
        description=(
            "Start the OAuth authorization of a connection whose MCP server answers 401 (the MCP "
            "authorization flow: protected-resource metadata, the authorization server's metadata, dynamic "
            "client registration, PKCE). Answers authorization_url: the person who asked opens it in a "
            "browser within 10 minutes, and the tokens are kept as the connection's secret when the "
            "browser comes back. Only the person who added the connection or an admin of the org may call "
            "it; the connection's status still follows approval."
        ),
        hints=Hints(read_only=False, idempotent=False, open_world=True),
        invoke=authorize_connection,
        summarize=_summary,
        params=(NAME,),
        output=AUTHORIZED,
        problems=("forbidden", "conflict", "bad_request", "unavailable"),
        permits=may_authorize,
        who="The one who added the connection may authorize it, or an admin of the org.",
    ),
)


# --- the callback ---------------------------------------------------------------------------------------


def register_oauth_routes(routes: Routes, runtime: Runtime) -> None:
    """``GET /v1/oauth/callback``: no bearer token needed; one that is sent must name who asked."""
    app = routes.app

    @routes.add("GET", CALLBACK_RULE)
    def oauth_callback() -> Response[str]:
        from parley.api.problems import internal_problem, json_response, problem_response

        event = app.current_event
        browser = "text/html" in (event.headers.get("accept") or "")
        if event.http_method == "HEAD":  # a code and a state are used once, by a GET only
            return _page(200, "Authorization", "Open this address to finish the authorization.")
        try:
            connection = _finish(event, runtime)
        except Problem as problem:
            return _problem_page(problem) if browser else problem_response(problem)
        except Exception as exc:
            internal = internal_problem(exc, path=CALLBACK_RULE)
            return _problem_page(internal) if browser else problem_response(internal)
        if browser:
            return _page(200, "Connected", _done_words(connection))
        return json_response(connection.public())


def _finish(event: Any, runtime: Runtime) -> Connection:
    from parley.connections.oauth import finish_authorization, http_client

    query = event.query_string_parameters or {}
    caller = None
    if event.headers.get("authorization"):
        from parley.api.requests import calling_principal

        caller = calling_principal(event, runtime.operator).id
    with http_client() as http:
        finished = finish_authorization(
            query.get("state"),
            query.get("code"),
            query.get("error"),
            caller=caller,
            secrets=runtime.connection_secrets,
            store=runtime.connections,
            now=runtime.clock.now(),
            http=http,
            iss=query.get("iss"),
        )
    return finished.connection


def _done_words(connection: Connection) -> str:
    waiting = (
        " It waits for an admin of the org to approve it before runs use it."
        if connection.status == "pending"
        else ""
    )
    return f"The connection {connection.name} of {connection.org} is authorized.{waiting}"


def _problem_page(problem: Problem) -> Response[str]:
    return _page(problem.status, problem.title, problem.detail)


def _page(status: int, title: str, words: str) -> Response[str]:
    from aws_lambda_powertools.event_handler import Response

    body = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)} · Parley</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(words)}</p>"
        f'<p><a href="{INBOX_CONNECTIONS}">Back to the connections</a></p>'
        "</body></html>\n"
    )
    return Response(
        status_code=status, content_type="text/html; charset=utf-8", body=body, headers=dict(_PAGE_HEADERS)
    )
