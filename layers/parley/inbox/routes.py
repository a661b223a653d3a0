"""Routes of the web inbox (``http-api.md``, "The web inbox"), registered by the api function's resolver.

- ``GET /`` redirects (``302``) to the page, ``GET /inbox``;
- ``GET /inbox`` is the page: one static HTML file with a strict ``Content-Security-Policy`` (only this
  origin's script, style and calls, plus the Cognito domain's token endpoint when sign-in goes through
  it), never cached;
- ``GET /inbox/inbox.js``, ``/inbox/inbox.css``, ``/inbox/markdown-it.min.js`` (and its
  ``markdown-it.LICENSE``): the page's files, with an ``ETag``;
- ``GET /inbox/config.json``: how the page signs in (see below);
- ``GET /v1/me``: who the bearer token names, ``{"id", "grants": [{"org", "playbook", "role"}]}``, so the
  page knows which playbooks to list and which orgs' connections to show (an org's ``admin`` grant has
  ``playbook: null``); ``401`` without a valid token.

The page and its files hold no secret and need no token (on AWS these routes have no authorizer); every
call the page makes carries the person's token.

How the page signs in comes from the api function's environment:

``PARLEY_INBOX_COGNITO_DOMAIN``
    The Cognito user pool domain of the hosted sign-in, as ``https://<prefix>.auth.<region>.amazoncognito.com``
    (a bare host is taken as ``https://<host>``; ``http://`` only for a loopback host, for tests).
``PARLEY_INBOX_CLIENT_ID``
    The user pool's app client: authorization code grant with PKCE, no secret, whose callback and sign-out
    URL is the page's own URL.

With both set, the page signs in through the hosted UI (authorization code + PKCE S256) and sends the ID
token as the bearer token; with neither (locally), it asks for a bearer token and keeps it in the tab's
``sessionStorage``. One without the other, or a value that is not a plain origin and client id, is logged
and ignored (the page then asks for a token), never put into the policy header.

This module imports nothing of ``parley.api`` (which imports it): it raises :class:`~parley.errors.Problem`
for the resolver's one problem mapping, and finds the caller as ``parley.api.requests`` does.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar
from urllib.parse import quote, urlsplit

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEvent

from parley.auth import authenticate, authorized_principal
from parley.errors import Problem
from parley.inbox import CLIENT_ID_VARIABLE, COGNITO_DOMAIN_VARIABLE

if TYPE_CHECKING:
    from parley.config import OperatorConfig, Principal
    from parley.ports.runtime import Runtime

LOG: Final = logging.getLogger("parley.inbox")

#: Where the page is; its files are under it.
INBOX_PATH: Final = "/inbox"
#: Who the token names (``GET /v1/me``).
ME_PATH: Final = "/v1/me"
PAGE: Final = "index.html"
CONFIG: Final = "config.json"
#: The page's files, by name, with their media types.
ASSETS: Final = {
    "inbox.js": "text/javascript; charset=utf-8",
    "inbox.css": "text/css; charset=utf-8",
    "markdown-it.min.js": "text/javascript; charset=utf-8",
    "markdown-it.LICENSE": "text/plain; charset=utf-8",
}
HTML: Final = "text/html; charset=utf-8"
JSON: Final = "application/json"
#: How often the page lists the requests again.
REFRESH_SECONDS: Final = 5
#: The scopes the page asks the hosted sign-in for (the app client allows these).
SCOPES: Final = ("openid", "email", "profile")

NO_STORE: Final = {"Cache-Control": "no-store"}
#: Every answer of these routes: the browser takes the media type as sent, and a URL (the sign-in's
#: ``?code=`` on the callback) never leaves as a referrer.
COMMON_HEADERS: Final = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}

_LOOPBACK: Final = ("127.0.0.1", "localhost", "[::1]")
_HOST: Final = re.compile(
    r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::[0-9]{1,5})?"
)
_CLIENT_ID: Final = re.compile(r"[A-Za-z0-9_+-]{1,128}")

Handler = TypeVar("Handler", bound=Callable[..., Any])


class RouteTable(Protocol):
    """What registers the routes: ``parley.api.routing.Routes`` (named by its shape, not imported)."""

    @property
    def app(self) -> APIGatewayRestResolver: ...

    def add(self, method: str, rule: str) -> Callable[[Handler], Handler]: ...


@dataclass(frozen=True)
class HostedSignIn:
    """The Cognito hosted sign-in: the domain's origin (``https://…``) and the app client's id."""

    domain: str
    client_id: str

    def as_json(self) -> dict[str, Any]:
        return {"domain": self.domain, "client_id": self.client_id, "scopes": list(SCOPES)}


def hosted_sign_in(environ: Mapping[str, str]) -> HostedSignIn | None:
    """The hosted sign-in the environment names, or ``None`` (the page asks for a bearer token)."""
    domain = environ.get(COGNITO_DOMAIN_VARIABLE, "").strip()
    client_id = environ.get(CLIENT_ID_VARIABLE, "").strip()
    if not domain and not client_id:
        return None
    origin = domain_origin(domain)
    if origin is None or not _CLIENT_ID.fullmatch(client_id):
        LOG.warning(
            "The inbox's hosted sign-in needs both %s (an https origin) and %s (an app client id); "
            "ignoring them, the page asks for a bearer token",
            COGNITO_DOMAIN_VARIABLE,
            CLIENT_ID_VARIABLE,
        )
        return None
    return HostedSignIn(origin, client_id)


def domain_origin(domain: str) -> str | None:
    """``https://<host>`` for a Cognito domain given as a host or an origin (a trailing ``/`` allowed);
    ``None`` for anything else (a path, a query, credentials, another scheme, odd characters)."""
    text = domain.strip().rstrip("/").lower()
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    host = parts.netloc
    if parts.path or parts.query or parts.fragment or not _HOST.fullmatch(host):
        return None
    if parts.scheme == "https" or (parts.scheme == "http" and host.rsplit(":", 1)[0] in _LOOPBACK):
        return f"{parts.scheme}://{host}"
    return None


def content_security_policy(sign_in: HostedSignIn | None) -> str:
    """The page's policy: nothing but this origin's script, style and calls (and the Cognito domain's
    token endpoint when the page signs in through it), images of this origin or ``data:``, no plugin,
    no frame, no ``<base>``, forms sent only here."""
    connect = "'self'" + (f" {sign_in.domain}" if sign_in is not None else "")
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            f"connect-src {connect}",
            "img-src 'self' data:",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        ]
    )


@cache
def asset_text(name: str) -> str:
    """A file of this package, read once per process."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


@cache
def entity_tag(name: str) -> str:
    return '"' + hashlib.sha256(asset_text(name).encode("utf-8")).hexdigest()[:32] + '"'


def inbox_location(event: APIGatewayProxyEvent) -> str:
    """Where ``GET /`` sends the browser, relative to the URL it asked for, so that the stage's path
    (``/dev/`` on API Gateway's own domain) is kept: ``inbox`` from ``…/``, ``dev/inbox`` from ``…/dev``."""
    context = event.raw_event.get("requestContext")
    asked = context.get("path") if isinstance(context, Mapping) else None
    if not isinstance(asked, str) or not asked:
        asked = event.path or "/"
    if asked.endswith("/"):
        return "inbox"
    return quote(asked.rsplit("/", 1)[-1], safe="-._~") + "/inbox"


def calling_principal(event: APIGatewayProxyEvent, operator: OperatorConfig) -> Principal:
    """Who calls, as ``parley.api.requests.calling_principal`` finds it: the principal the API's JWT
    authorizer named on AWS, else the one whose bearer token the operator configuration holds; ``401``."""
    authorizer = (event.raw_event.get("requestContext") or {}).get("authorizer")
    if isinstance(authorizer, Mapping) and "principalId" in authorizer:
        principal_id = authorizer["principalId"]
        return authorized_principal(principal_id if isinstance(principal_id, str) else None, operator)
    return authenticate(event.headers.get("authorization"), operator)


def me(principal: Principal) -> dict[str, Any]:
    """``GET /v1/me``: the principal's id and grants, in the configuration's order."""
    return {
        "id": principal.id,
        "grants": [
            {"org": grant.org, "playbook": grant.playbook, "role": grant.role} for grant in principal.grants
        ],
    }


def _dumps(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _redirect(location: str) -> Response[str]:
    return Response(
        status_code=302,
        content_type="text/plain; charset=utf-8",
        body=f"See {location}\n",
        headers={"Location": location, **NO_STORE, **COMMON_HEADERS},
    )


def register_inbox_routes(routes: RouteTable, runtime: Runtime) -> None:
    """Register the inbox's routes; the hosted sign-in is read from the environment now (once per
    cold start)."""
    app = routes.app
    sign_in = hosted_sign_in(os.environ)
    page_headers = {
        "Content-Security-Policy": content_security_policy(sign_in),
        **COMMON_HEADERS,
    }
    config = {
        "cognito": sign_in.as_json() if sign_in is not None else None,
        "refresh_seconds": REFRESH_SECONDS,
    }

    @routes.add("GET", "/")
    def root() -> Response[str]:
        return _redirect(inbox_location(app.current_event))

    @routes.add("GET", INBOX_PATH)
    def page() -> Response[str]:
        if app.current_event.path.endswith("/"):  # /inbox/ would resolve the page's relative URLs wrongly
            return _redirect("../inbox")
        return Response(
            status_code=200, content_type=HTML, body=asset_text(PAGE), headers={**page_headers, **NO_STORE}
        )

    @routes.add("GET", INBOX_PATH + "/<name>")
    def asset(name: str) -> Response[str]:
        if name == CONFIG:
            return Response(
                status_code=200,
                content_type=JSON,
                body=_dumps(config),
                headers={**page_headers, **NO_STORE},
            )
        content_type = ASSETS.get(name)
        if content_type is None:
            raise Problem("not_found", f"There is nothing at {INBOX_PATH}/{name}.")
        tag = entity_tag(name)
        headers = {**page_headers, "Cache-Control": "no-cache", "ETag": tag}
        asked = app.current_event.headers.get("if-none-match")
        if asked is not None and tag in {each.strip() for each in asked.split(",")}:
            return Response(status_code=304, content_type=content_type, body="", headers=headers)
        return Response(status_code=200, content_type=content_type, body=asset_text(name), headers=headers)

    @routes.add("GET", ME_PATH)
    def who_am_i() -> Response[str]:
        principal = calling_principal(app.current_event, runtime.operator)
        return Response(
            status_code=200, content_type=JSON, body=_dumps(me(principal)), headers=dict(NO_STORE)
        )
