"""The inbox's hosted sign-in (``http-api.md``, "The web inbox": "on AWS it signs in through the stage's
Cognito user pool (the hosted sign-in, authorization code with PKCE) and uses the ID token as the bearer
token") in a real browser, against ``parley serve`` started with ``PARLEY_INBOX_COGNITO_DOMAIN`` and
``PARLEY_INBOX_CLIENT_ID`` naming a fake Cognito domain on 127.0.0.1.

The fake speaks the three endpoints the page uses — ``/oauth2/authorize`` (it signs the person in at once
and sends the browser back with a code), ``/oauth2/token`` (it gives an ID token only for the code's PKCE
verifier, across origins as Cognito does) and ``/logout`` — and its ID token is a bearer token the local
server knows, so the page's calls go through as that principal's.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest
import uvicorn
from playwright.sync_api import Page, expect
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from tool_serving import serving_with

pytestmark = pytest.mark.http

CLIENT_ID = "inbox-test-client"
#: The ID token the fake gives: the local server's bearer token of ``dev``.
ID_TOKEN = "dev-token"


@dataclass
class FakeCognito:
    """A user pool domain's hosted sign-in, as far as the page uses it."""

    authorizations: list[dict[str, str]] = field(default_factory=list)
    exchanges: list[dict[str, str]] = field(default_factory=list)
    logouts: list[dict[str, str]] = field(default_factory=list)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def app(self) -> Starlette:
        async def authorize(request: Request) -> Response:
            query = dict(request.query_params)
            self.authorizations.append(query)
            code = uuid.uuid4().hex
            self.codes[code] = query
            back = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', '')})}"
            return RedirectResponse(back, status_code=302)

        async def token(request: Request) -> Response:
            form = dict(parse_qsl((await request.body()).decode()))
            self.exchanges.append(form)
            cors = {"Access-Control-Allow-Origin": request.headers.get("origin", "*")}
            asked = self.codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            challenge = (
                base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            )
            if (
                asked is None
                or form.get("grant_type") != "authorization_code"
                or form.get("client_id") != asked["client_id"]
                or form.get("redirect_uri") != asked["redirect_uri"]
                or asked.get("code_challenge_method") != "S256"
                or challenge != asked.get("code_challenge")
            ):
                return JSONResponse({"error": "invalid_grant"}, status_code=400, headers=cors)
            body = {
                "id_token": ID_TOKEN,
                "access_token": "access",
                "token_type": "Bearer",
                "expires_in": 3600,
            }
            return JSONResponse(body, headers=cors)

        async def logout(request: Request) -> Response:
            query = dict(request.query_params)
            self.logouts.append(query)
            return RedirectResponse(query["logout_uri"], status_code=302)

        return Starlette(
            routes=[
                Route("/oauth2/authorize", authorize),
                Route("/oauth2/token", token, methods=["POST"]),
                Route("/logout", logout),
            ]
        )


@contextmanager
def running_cognito() -> Iterator[FakeCognito]:
    fake = FakeCognito()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    fake.port = sock.getsockname()[1]
    config = uvicorn.Config(fake.app(), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="fake-cognito", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the fake Cognito did not start"
        time.sleep(0.01)
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass
class Setup:
    url: str
    cognito: FakeCognito


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("serve-inbox-sign-in")
    operator = (
        "principals:\n"
        "  - { id: dev, token: dev-token, grants: [{ org: acme, playbook: campaigns, role: write }] }\n"
    )
    with ExitStack() as stack:
        cognito = stack.enter_context(running_cognito())
        with pytest.MonkeyPatch.context() as env:
            env.setenv("PARLEY_INBOX_COGNITO_DOMAIN", cognito.url)
            env.setenv("PARLEY_INBOX_CLIENT_ID", CLIENT_ID)
            url = stack.enter_context(serving_with(tmp, operator))
        yield Setup(url, cognito)


def session_token(page: Page) -> Any:
    return page.evaluate("() => sessionStorage.getItem('parley.inbox.token')")


def test_the_page_signs_in_with_the_code_flow_and_pkce_and_calls_with_the_id_token(
    page: Page, setup: Setup
) -> None:
    cognito = setup.cognito
    with page.expect_response(lambda response: response.url == f"{setup.url}/inbox") as loaded:
        page.goto(f"{setup.url}/inbox")
    policy = loaded.value.headers["content-security-policy"]
    assert f"connect-src 'self' {cognito.url};" in policy
    expect(page.get_by_label("Bearer token")).to_be_hidden()

    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as dev")).to_be_visible()

    asked = cognito.authorizations[-1]
    assert {key: asked[key] for key in ("response_type", "client_id", "redirect_uri", "scope")} == {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": f"{setup.url}/inbox",
        "scope": "openid email profile",
    }
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert len(asked["state"]) >= 32
    exchange = cognito.exchanges[-1]
    assert exchange["grant_type"] == "authorization_code" and "client_secret" not in exchange
    assert len(exchange["code_verifier"]) >= 43
    assert page.url == f"{setup.url}/inbox"  # the code is gone from the address bar
    assert session_token(page) == ID_TOKEN
    expect(page.locator("#status")).to_contain_text("Updated")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    assert cognito.logouts[-1] == {"client_id": CLIENT_ID, "logout_uri": f"{setup.url}/inbox"}
    assert session_token(page) is None


def test_a_code_the_tab_did_not_ask_for_is_not_exchanged(page: Page, setup: Setup) -> None:
    exchanged = len(setup.cognito.exchanges)

    page.goto(f"{setup.url}/inbox?code=stolen&state=forged")

    expect(page.get_by_role("alert")).to_contain_text("The sign-in could not be checked")
    assert len(setup.cognito.exchanges) == exchanged
    assert page.url == f"{setup.url}/inbox"
    assert session_token(page) is None
