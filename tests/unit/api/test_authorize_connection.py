"""``authorize_connection`` and ``GET /v1/oauth/callback`` through the API's and the MCP front door's Lambda
handlers (``parley.api.oauth``; issue 32, part 4), with moto, the in-memory connection secrets and a real
OAuth-protected MCP server on 127.0.0.1 (``tests/oauth_servers.py``).

The HTTP test (``tests/http/test_connection_oauth.py``) drives the same flow through ``parley serve``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from oauth_servers import OAuthToolServer, running_oauth_server

from parley.api.app import build_handler
from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.connections.model import Connection
from parley.definitions.model import PlaybookRef
from parley.definitions.store import DynamoDefinitionStore
from parley.front.handler import build_mcp_handler
from parley.local.events import api_gateway_event
from parley.ports.runtime import Runtime
from parley.tools.service import ToolService

HOST = "127.0.0.1:8123"
CALLBACK = f"http://{HOST}/v1/oauth/callback"
AUTHORIZE = "/v1/orgs/acme/connections/notes/authorize"
OPERATOR = """
principals:
  - { id: alice, token: alice-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: bob, token: bob-token, grants: [{ org: acme, playbook: campaigns, role: write }] }
  - { id: ada, token: ada-token, grants: [{ org: acme, role: admin }] }
  - { id: outsider, token: outsider-token, grants: [{ org: globex, playbook: campaigns, role: write }] }
connections:
  allowed_urls: ["http://127.0.0.1:*/*"]
"""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str

    @property
    def body(self) -> Any:
        return json.loads(self.text)


Send = Callable[..., Reply]


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthToolServer]:
    with running_oauth_server() as running:
        yield running


@pytest.fixture
def runtime(dynamodb: tuple[Any, str], manual_clock: ManualClock, server: OAuthToolServer) -> Runtime:
    runtime = Runtime(
        definitions=DynamoDefinitionStore(*dynamodb),
        clock=manual_clock,
        operator=parse_operator_config(OPERATOR, "test", environ={}),
        loopback_connections=True,
    )
    runtime.connections.add(
        Connection(
            "acme", "notes", server.url, "pending", None, "alice", "2026-10-17T10:18:42Z", None, None, "none"
        )
    )
    return runtime


@pytest.fixture
def send(runtime: Runtime) -> Iterator[Send]:
    handler = build_handler(runtime)
    replies: list[Reply] = []

    def call(
        method: str, target: str, *, token: str | None = "alice-token", accept: str = "application/json"
    ) -> Reply:
        headers = [("Host", HOST), ("Accept", accept)]
        if token is not None:
            headers.append(("Authorization", f"Bearer {token}"))
        result = handler(api_gateway_event(method, target, headers, b""), None)
        flat = {k.lower(): v[0] for k, v in (result.get("multiValueHeaders") or {}).items()}
        flat.update({k.lower(): v for k, v in (result.get("headers") or {}).items()})
        reply = Reply(result["statusCode"], flat, result["body"])
        replies.append(reply)
        return reply

    call.replies = replies  # type: ignore[attr-defined]
    yield call


def come_back(url: str) -> dict[str, str]:
    answer = httpx.get(url, timeout=10)
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(CALLBACK + "?")
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def callback(query: dict[str, str]) -> str:
    return "/v1/oauth/callback?" + urlencode(query)


def test_a_person_authorizes_a_connection_and_the_tokens_are_kept(
    runtime: Runtime, send: Send, server: OAuthToolServer
) -> None:
    started = send("POST", AUTHORIZE)

    assert started.status == 200, started.text
    assert started.headers["cache-control"] == "no-store"
    url = started.body["authorization_url"]
    assert parse_qs(urlsplit(url).query)["redirect_uri"] == [CALLBACK]

    back = come_back(url)
    done = send("GET", callback(back), token=None)

    assert done.status == 200, done.text
    assert done.body["auth"] == "oauth" and done.body["status"] == "pending"
    record = runtime.connections.get("acme", "notes")
    assert record is not None and record.auth == "oauth" and record.status == "pending"
    kept = runtime.connection_secrets.read("acme", "notes")["oauth"]
    reply = httpx.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {kept['access_token']}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=10,
    )
    assert reply.status_code == 200 and "notes" in reply.text
    # No token, code or verifier in any answer.
    shown = " ".join(r.text + json.dumps(r.headers) for r in send.replies)  # type: ignore[attr-defined]
    for value in (
        *server.authorization.issued,
        kept["access_token"],
        kept["refresh_token"],
        kept.get("client_secret"),
    ):
        assert value is None or value not in shown


def test_a_browser_gets_a_page_that_says_it_is_done(send: Send) -> None:
    back = come_back(send("POST", AUTHORIZE).body["authorization_url"])

    page = send("GET", callback(back), token=None, accept="text/html,application/xhtml+xml")

    assert page.status == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "The connection notes of acme is authorized" in page.text
    assert "waits for an admin of the org to approve it" in page.text
    assert 'href="../../inbox#connections"' in page.text
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_an_unknown_used_or_expired_state_is_a_clear_400(send: Send, manual_clock: ManualClock) -> None:
    back = come_back(send("POST", AUTHORIZE).body["authorization_url"])

    assert send("GET", callback({"state": "nonsense", "code": "x"}), token=None).status == 400
    assert (
        send("GET", callback({"code": "x"}), token=None)
        .body["detail"]
        .startswith("The callback carries no state")
    )
    assert send("GET", callback(back), token=None).status == 200
    used = send("GET", callback(back), token=None)
    assert used.status == 400 and used.body["reason"] == "bad_request"
    assert "already used" in used.body["detail"]
    page = send("GET", callback(back), token=None, accept="text/html")
    assert (
        page.status == 400
        and "already used" in page.text
        and page.headers["content-type"].startswith("text/html")
    )

    late = come_back(send("POST", AUTHORIZE).body["authorization_url"])
    manual_clock.advance(601)
    expired = send("GET", callback(late), token=None)
    assert expired.status == 400 and "expired" in expired.body["detail"]


def test_a_state_brought_back_by_another_person_is_refused(send: Send) -> None:
    back = come_back(send("POST", AUTHORIZE).body["authorization_url"])

    other = send("GET", callback(back), token="bob-token")

    assert other.status == 403 and "started by someone else" in other.body["detail"]
    assert send("GET", callback(back), token="alice-token").status == 200


def test_only_the_person_who_added_it_or_an_admin_authorizes(send: Send) -> None:
    refused = send("POST", AUTHORIZE, token="bob-token")

    assert refused.status == 403 and "(alice) or an admin" in refused.body["detail"]
    assert send("POST", AUTHORIZE, token="ada-token").status == 200
    assert send("POST", AUTHORIZE, token="outsider-token").status == 404
    assert send("POST", AUTHORIZE, token=None).status == 401
    missing = send("POST", "/v1/orgs/acme/connections/wiki/authorize")
    assert missing.status == 404 and "has no connection 'wiki'" in missing.body["detail"]


def test_a_broken_connection_is_not_authorized(runtime: Runtime, send: Send) -> None:
    runtime.connections.set_status("acme", "notes", "broken")

    broken = send("POST", AUTHORIZE)

    assert broken.status == 409 and "remove it and add it again" in broken.body["detail"]


def test_the_mcp_tool_answers_the_same_authorization_url(runtime: Runtime) -> None:
    handler = build_mcp_handler(runtime)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "authorize_connection", "arguments": {"org": "acme", "name": "notes"}},
    }
    headers = [
        ("Host", HOST),
        ("Authorization", "Bearer alice-token"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]

    result = handler(api_gateway_event("POST", "/mcp", headers, json.dumps(message).encode()), None)

    structured = json.loads(result["body"])["result"]["structuredContent"]
    assert parse_qs(urlsplit(structured["authorization_url"]).query)["redirect_uri"] == [CALLBACK]


def test_the_kept_tokens_serve_the_tool_operations_refreshed_until_a_refresh_is_refused(
    runtime: Runtime,
    send: Send,
    server: OAuthToolServer,
    manual_clock: ManualClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="parley")
    back = come_back(send("POST", AUTHORIZE).body["authorization_url"])
    assert send("GET", callback(back), token=None).status == 200
    runtime.connections.set_status("acme", "notes", "active", approved_by="ada", at="2026-10-17T10:20:00Z")
    operations = ToolService(runtime)
    playbook = PlaybookRef("acme", "campaigns")

    executed = operations.execute(playbook, "notes", "notes", {"topic": "launch"}, by="alice")
    assert executed["outcome"] == "answered", executed
    first = runtime.connection_secrets.read("acme", "notes")["oauth"]

    # An hour later the token is about to expire: the next use refreshes it first.
    refreshes = server.authorization.refreshes
    manual_clock.advance(server.authorization.expires_in - 30)
    again = operations.execute(playbook, "notes", "notes", {"topic": "budget"}, by="alice")
    assert again["outcome"] == "answered", again
    assert server.authorization.refreshes == refreshes + 1
    second = runtime.connection_secrets.read("acme", "notes")["oauth"]
    assert second["access_token"] != first["access_token"]

    # Another hour, and the authorization server refuses the refresh: the connection is broken.
    server.authorization.refuse_refresh = True
    try:
        manual_clock.advance(server.authorization.expires_in)
        found = operations.search(playbook, None)
    finally:
        server.authorization.refuse_refresh = False
    entry = next(e for e in found["servers"] if e["server"] == "notes")
    assert entry["because"] == "connection_broken"
    record = runtime.connections.get("acme", "notes")
    assert record is not None and record.status == "broken"
    assert send("GET", "/v1/orgs/acme/connections/notes").status in (200, 404)  # D1's route, when merged

    # No token, code, verifier or client secret in any answer, event or log line.
    events = operations.store.list_events(
        playbook, run_id=None, event_type=None, since=None, descending=False, limit=100, after=None
    ).items
    shown = json.dumps(
        [executed, again, found, [e.data for e in events], [r.text for r in send.replies]],  # type: ignore[attr-defined]
        default=str,
    )
    # (the browser's own request of the authorization URL, made by this test through httpx, is not Parley's)
    logged = "\n".join(r.getMessage() for r in caplog.records if "/authorize?" not in r.getMessage())
    secrets = [
        *server.authorization.issued,
        first["access_token"],
        first["refresh_token"],
        second["access_token"],
        *(c.client_secret for c in server.authorization.registered if c.client_secret),
    ]
    for value in secrets:
        assert value not in shown
        assert value not in logged
    assert back["code"] not in logged and back["state"] not in logged


def test_a_head_of_the_callback_uses_nothing(send: Send) -> None:
    back = come_back(send("POST", AUTHORIZE).body["authorization_url"])

    assert send("HEAD", callback(back), token=None).status == 200
    assert send("GET", callback(back), token=None).status == 200
