"""The web inbox's routes (``http-api.md``, "The web inbox"; ``parley.inbox.routes``): the page with its
policy, the redirect from ``/``, the page's files, its sign-in settings and ``GET /v1/me``, through the same
resolver and problem mapping as the API (``parley.api.routing.Routes``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any, cast

import pytest
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from parley.api.problems import register_problem_handlers
from parley.api.routing import Routes
from parley.config import parse_operator_config
from parley.inbox import CLIENT_ID_VARIABLE, COGNITO_DOMAIN_VARIABLE, MARKDOWN_IT_SHA256, MARKDOWN_IT_VERSION
from parley.inbox.routes import (
    ASSETS,
    content_security_policy,
    domain_origin,
    hosted_sign_in,
    register_inbox_routes,
)
from parley.local.events import api_gateway_event
from parley.ports.runtime import Runtime

OPERATOR = """
principals:
  - id: dev
    token: dev-token
    grants:
      - { org: acme, playbook: campaigns, role: write }
      - { org: acme, playbook: launches, role: read }
  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }
  - { id: boss, token: boss-token, grants: [{ org: acme, role: admin }] }
"""
STRICT = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
COGNITO = "https://parley-dev-123456789012.auth.eu-west-1.amazoncognito.com"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


Call = Callable[..., Reply]


@dataclass
class _Runtime:
    """What the inbox's routes use of the runtime: the operator configuration."""

    operator: Any


def _resolver(monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]) -> APIGatewayRestResolver:
    for name in (COGNITO_DOMAIN_VARIABLE, CLIENT_ID_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    app = APIGatewayRestResolver()
    routes = Routes(app)
    operator = parse_operator_config(OPERATOR, "test", environ={})
    register_inbox_routes(routes, cast(Runtime, _Runtime(operator)))
    register_problem_handlers(app, routes.allowed_methods)
    return app


def _caller(app: APIGatewayRestResolver) -> Call:
    def call(
        path: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        authorizer: dict[str, Any] | None = None,
        context_path: str | None = None,
    ) -> Reply:
        event = api_gateway_event(method, path, list((headers or {}).items()), b"")
        if authorizer is not None:
            event["requestContext"]["authorizer"] = authorizer
        if context_path is not None:
            event["requestContext"]["path"] = context_path
        result = app.resolve(event, None)
        merged = {
            name.lower(): values[-1] for name, values in (result.get("multiValueHeaders") or {}).items()
        }
        merged.update({name.lower(): value for name, value in (result.get("headers") or {}).items()})
        return Reply(result["statusCode"], merged, result.get("body") or "")

    return call


@pytest.fixture
def call(monkeypatch: pytest.MonkeyPatch) -> Call:
    return _caller(_resolver(monkeypatch, {}))


@pytest.fixture
def hosted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Call]:
    yield _caller(
        _resolver(monkeypatch, {COGNITO_DOMAIN_VARIABLE: COGNITO, CLIENT_ID_VARIABLE: "4f1abc2def"})
    )


# -- the page ---------------------------------------------------------------------------------------------


def test_the_page_is_served_with_a_strict_policy_and_never_cached(call: Call) -> None:
    page = call("/inbox")

    assert page.status == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"] == STRICT
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "<title>Parley inbox</title>" in page.body


def test_the_page_needs_no_token_and_answers_head_too(call: Call) -> None:
    assert call("/inbox", headers={"Authorization": "Bearer not-a-token"}).status == 200
    assert call("/inbox", method="HEAD").status == 200


def test_the_page_has_no_inline_script_or_style_and_names_no_other_origin() -> None:
    files = resources.files("parley.inbox")
    page = files.joinpath("index.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.DOTALL)

    assert len(scripts) == 2
    assert all('src="inbox/' in attributes and not content.strip() for attributes, content in scripts)
    assert "<style" not in page and not re.search(r"\s(style|on[a-z]+)\s*=", page)
    for name in ("index.html", "inbox.js", "inbox.css"):
        text = files.joinpath(name).read_text(encoding="utf-8")
        assert not re.search(r"https?://", text), name
        assert "eval(" not in text and "new Function" not in text, name


def test_a_trailing_slash_is_sent_back_to_the_page(call: Call) -> None:
    reply = call("/inbox/")

    assert (reply.status, reply.headers["location"]) == (302, "../inbox")


@pytest.mark.parametrize(
    ("asked", "location"),
    [("/local/", "inbox"), ("/dev", "dev/inbox"), ("/dev/", "inbox"), ("/", "inbox")],
)
def test_the_root_redirects_to_the_page_keeping_the_stage(call: Call, asked: str, location: str) -> None:
    reply = call("/", context_path=asked)

    assert reply.status == 302
    assert reply.headers["location"] == location
    assert reply.headers["cache-control"] == "no-store"


# -- the page's files -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ASSETS))
def test_each_file_of_the_page_is_served_with_its_type_and_an_etag(call: Call, name: str) -> None:
    reply = call(f"/inbox/{name}")

    assert reply.status == 200
    assert reply.headers["content-type"] == ASSETS[name]
    assert reply.body == resources.files("parley.inbox").joinpath(name).read_text(encoding="utf-8")
    assert reply.headers["cache-control"] == "no-cache"
    again = call(f"/inbox/{name}", headers={"If-None-Match": reply.headers["etag"]})
    assert (again.status, again.body) == (304, "")


@pytest.mark.parametrize("name", ["routes.py", "__init__.py", "nothing.js", "index.html", "..", "%2e%2e"])
def test_nothing_else_of_the_package_is_served(call: Call, name: str) -> None:
    reply = call(f"/inbox/{name}")

    assert reply.status == 404
    assert reply.json()["reason"] == "not_found"


def test_a_route_of_the_inbox_takes_only_get(call: Call) -> None:
    reply = call("/inbox", method="POST")

    assert reply.status == 405
    assert reply.headers["allow"] == "GET, HEAD"


def test_the_vendored_markdown_it_is_the_npm_file_with_its_license() -> None:
    files = resources.files("parley.inbox")
    script = files.joinpath("markdown-it.min.js").read_bytes()
    license_text = files.joinpath("markdown-it.LICENSE").read_text(encoding="utf-8")

    assert hashlib.sha256(script).hexdigest() == MARKDOWN_IT_SHA256
    assert MARKDOWN_IT_VERSION.count(".") == 2
    assert "Vitaly Puzrin" in license_text and "Permission is hereby granted" in license_text


# -- signing in -------------------------------------------------------------------------------------------


def test_without_a_cognito_domain_the_page_asks_for_a_token(call: Call) -> None:
    config = call("/inbox/config.json")

    assert config.status == 200
    assert config.headers["cache-control"] == "no-store"
    assert config.json() == {"cognito": None, "refresh_seconds": 5}


def test_with_a_cognito_domain_the_page_signs_in_there_and_may_call_it(hosted: Call) -> None:
    config = hosted("/inbox/config.json").json()
    page = hosted("/inbox")

    assert config["cognito"] == {
        "domain": COGNITO,
        "client_id": "4f1abc2def",
        "scopes": ["openid", "email", "profile"],
    }
    assert f"connect-src 'self' {COGNITO};" in page.headers["content-security-policy"]
    assert page.headers["content-security-policy"] == STRICT.replace(
        "connect-src 'self'", f"connect-src 'self' {COGNITO}"
    )


@pytest.mark.parametrize(
    ("domain", "origin"),
    [
        (COGNITO, COGNITO),
        (COGNITO + "/", COGNITO),
        (
            "parley-dev.auth.eu-west-1.amazoncognito.com",
            "https://parley-dev.auth.eu-west-1.amazoncognito.com",
        ),
        ("https://Sign-In.Example.COM", "https://sign-in.example.com"),
        ("http://127.0.0.1:9123", "http://127.0.0.1:9123"),
        ("http://login.example.com", None),
        ("https://login.example.com/oauth2", None),
        ("https://login.example.com?x=1", None),
        ("https://user@login.example.com", None),
        ("https://login.example.com; script-src *", None),
        ("https://*.example.com", None),
        ("javascript:alert(1)", None),
        ("", None),
    ],
)
def test_the_cognito_domain_is_taken_as_a_plain_origin_only(domain: str, origin: str | None) -> None:
    assert domain_origin(domain) == origin


def test_a_domain_or_client_id_that_is_missing_or_odd_leaves_the_hosted_sign_in_off() -> None:
    assert hosted_sign_in({}) is None
    assert hosted_sign_in({COGNITO_DOMAIN_VARIABLE: COGNITO}) is None
    assert hosted_sign_in({CLIENT_ID_VARIABLE: "abc"}) is None
    assert hosted_sign_in({COGNITO_DOMAIN_VARIABLE: COGNITO, CLIENT_ID_VARIABLE: "a b"}) is None
    assert (
        hosted_sign_in({COGNITO_DOMAIN_VARIABLE: "https://x.example.com/a", CLIENT_ID_VARIABLE: "abc"})
        is None
    )
    signed = hosted_sign_in({COGNITO_DOMAIN_VARIABLE: f" {COGNITO} ", CLIENT_ID_VARIABLE: " abc "})
    assert signed is not None and (signed.domain, signed.client_id) == (COGNITO, "abc")
    assert content_security_policy(signed) == STRICT.replace(
        "connect-src 'self'", f"connect-src 'self' {COGNITO}"
    )


# -- GET /v1/me ---------------------------------------------------------------------------------------------


def test_me_names_the_principal_of_the_token_and_its_grants(call: Call) -> None:
    reply = call("/v1/me", headers={"Authorization": "Bearer dev-token"})

    assert reply.status == 200
    assert reply.headers["cache-control"] == "no-store"
    assert reply.json() == {
        "id": "dev",
        "grants": [
            {"org": "acme", "playbook": "campaigns", "role": "write"},
            {"org": "acme", "playbook": "launches", "role": "read"},
        ],
    }


def test_me_gives_an_orgs_admin_grant_without_a_playbook(call: Call) -> None:
    """The page's Connections view has a section for an org its person is only the admin of."""
    reply = call("/v1/me", headers={"Authorization": "Bearer boss-token"})

    assert reply.json() == {"id": "boss", "grants": [{"org": "acme", "playbook": None, "role": "admin"}]}


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic ZGV2"}])
def test_me_without_a_valid_token_is_401(call: Call, headers: dict[str, str]) -> None:
    reply = call("/v1/me", headers=headers)

    assert reply.status == 401
    assert reply.headers["www-authenticate"] == "Bearer"
    assert reply.json()["reason"] == "unauthenticated"


def test_on_aws_me_is_the_principal_the_authorizer_named(call: Call) -> None:
    named = call("/v1/me", authorizer={"principalId": "viewer"})
    unknown = call("/v1/me", authorizer={"principalId": "someone@example.com"})
    empty = call("/v1/me", authorizer={"principalId": ""})

    assert named.json() == {
        "id": "viewer",
        "grants": [{"org": "acme", "playbook": "campaigns", "role": "read"}],
    }
    assert unknown.json() == {"id": "someone@example.com", "grants": []}
    assert empty.status == 401


def test_the_api_function_serves_the_inbox(dynamodb: tuple[Any, str]) -> None:
    # The api function's resolver registers these routes (parley.api.app.build_resolver).
    from parley.api.app import build_handler
    from parley.clock import ManualClock
    from parley.definitions.store import DynamoDefinitionStore

    runtime = Runtime(
        definitions=DynamoDefinitionStore(*dynamodb),
        clock=ManualClock(),
        operator=parse_operator_config(OPERATOR, "test", environ={}),
    )
    handler = build_handler(runtime)

    def status(path: str, token: str | None = None) -> int:
        headers = [("Authorization", f"Bearer {token}")] if token else []
        result = handler(api_gateway_event("GET", path, headers, b""), None)
        return int(result["statusCode"])

    assert [status(path) for path in ("/", "/inbox", "/inbox/inbox.js", "/inbox/config.json", "/v1/me")] == [
        302,
        200,
        200,
        200,
        401,
    ]
    assert status("/v1/me", "viewer-token") == 200
