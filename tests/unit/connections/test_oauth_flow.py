"""The OAuth flow of connections (``parley.connections.oauth``; issue 32, part 4) against a real
OAuth-protected MCP server on 127.0.0.1 (``tests/oauth_servers.py``): discovery, registration, PKCE,
``resource``, the ``state``'s rules, refresh at use and ``broken`` when it is refused.

The connection's record and secret are kept by small fakes of ``ConnectionStore`` and
``ConnectionSecrets``; the HTTP test (``tests/http/test_connection_oauth.py``) drives the same flow
through ``parley serve``.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from mcp_servers import running_tool_server, unreachable_url
from oauth_servers import OAuthToolServer, running_oauth_server

from parley.connections import oauth
from parley.connections.model import Connection
from parley.connections.secrets import SecretUnreadable
from parley.errors import Problem

NOW = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)
REDIRECT = "http://127.0.0.1:8000/v1/oauth/callback"
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}


class Secrets:
    """A ``ConnectionSecrets`` in a dict (``put`` replaces the whole value, as the real ones do)."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], dict[str, Any]] = {}

    def put(self, org: str, name: str, value: Mapping[str, Any]) -> None:
        self.values[(org, name)] = dict(value)

    def read(self, org: str, name: str) -> dict[str, Any]:
        try:
            return dict(self.values[(org, name)])
        except KeyError:
            raise SecretUnreadable(f"no secret for {name}") from None

    def delete(self, org: str, name: str) -> None:
        self.values.pop((org, name), None)


class Store:
    """A ``ConnectionStore`` of a few connections."""

    def __init__(self, *connections: Connection) -> None:
        self.connections = {(c.org, c.name): c for c in connections}

    def get(self, org: str, name: str) -> Connection | None:
        return self.connections.get((org, name))

    def set_auth(self, org: str, name: str, auth: Any) -> Connection:
        changed = dataclasses.replace(self.connections[(org, name)], auth=auth)
        self.connections[(org, name)] = changed
        return changed

    def set_status(self, org: str, name: str, status: Any, **_: Any) -> Connection:
        changed = dataclasses.replace(self.connections[(org, name)], status=status)
        self.connections[(org, name)] = changed
        return changed


def connection(url: str, name: str = "notes", status: Any = "pending") -> Connection:
    return Connection("acme", name, url, status, None, "alice", "2026-12-02T04:00:00Z", None, None, "none")


@pytest.fixture(scope="module")
def server() -> Iterator[OAuthToolServer]:
    with running_oauth_server() as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def come_back(url: str, http: httpx.Client) -> dict[str, str]:
    """Open the authorization URL as the browser would: the server approves at once and redirects to
    the redirect URI; its query."""
    answer = http.get(url)
    assert answer.status_code == 302, answer.text
    location = answer.headers["location"]
    assert location.startswith(REDIRECT + "?")
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def authorized(
    server: OAuthToolServer, http: httpx.Client, name: str = "notes"
) -> tuple[Store, Secrets, Connection]:
    store, secrets = Store(connection(server.url, name)), Secrets()
    first = store.get("acme", name)
    assert first is not None
    back = come_back(oauth.begin_authorization(first, "alice", secrets, REDIRECT, NOW, http), http)
    done = oauth.finish_authorization(
        back["state"], back["code"], None, caller=None, secrets=secrets, store=store, now=NOW, http=http
    )
    return store, secrets, done.connection


def tools_list(server: OAuthToolServer, headers: Mapping[str, str]) -> int:
    return httpx.post(server.url, json=LIST_TOOLS, headers={**MCP_ACCEPT, **headers}, timeout=10).status_code


def test_the_whole_flow_keeps_tokens_that_the_server_takes(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, secrets = Store(connection(server.url)), Secrets()
    registered = len(server.authorization.registered)
    conn = store.get("acme", "notes")
    assert conn is not None
    url = oauth.begin_authorization(conn, "alice", secrets, REDIRECT, NOW, http)

    asked = parse_qs(urlsplit(url).query)
    pending = secrets.read("acme", "notes")["pending"]
    assert url.startswith(server.origin + "/authorize?")
    assert asked["response_type"] == ["code"] and asked["code_challenge_method"] == ["S256"]
    assert asked["redirect_uri"] == [REDIRECT] and asked["resource"] == [server.url]
    assert asked["scope"] == ["notes"]
    # PKCE: the challenge is the verifier's SHA-256, and the verifier is not in the URL.
    digest = hashlib.sha256(pending["code_verifier"].encode()).digest()
    assert asked["code_challenge"] == [base64.urlsafe_b64encode(digest).rstrip(b"=").decode()]
    assert pending["code_verifier"] not in url
    # The state is kept as its hash only, bound to who asked, for ten minutes.
    assert asked["state"][0] not in str(secrets.values)
    assert pending["principal"] == "alice"
    assert pending["expires_at"] == int(NOW.timestamp()) + 600
    # Dynamic client registration, for Parley's redirect URI.
    assert len(server.authorization.registered) == registered + 1
    assert [str(u) for u in server.authorization.registered[-1].redirect_uris or []] == [REDIRECT]

    back = come_back(url, http)
    done = oauth.finish_authorization(
        back["state"], back["code"], None, caller="alice", secrets=secrets, store=store, now=NOW, http=http
    )

    assert done.principal == "alice" and done.connection.auth == "oauth"
    assert done.connection.status == "pending"  # approval still decides
    kept = secrets.read("acme", "notes")
    assert "pending" not in kept
    assert set(kept["oauth"]) >= {
        "client_id",
        "token_endpoint",
        "access_token",
        "refresh_token",
        "expires_at",
    }
    assert kept["oauth"]["resource"] == server.url
    assert kept["oauth"]["expires_at"] == int(NOW.timestamp()) + server.authorization.expires_in
    assert server.authorization.authorize_resources[-1] == server.url
    assert server.authorization.token_resources[-1] == server.url
    headers = oauth.fresh_oauth_headers(done.connection, secrets, store, NOW, http)
    assert tools_list(server, headers) == 200
    assert tools_list(server, {}) == 401


def test_a_second_authorization_keeps_the_registered_client(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    _, secrets, conn = authorized(server, http)
    registered = len(server.authorization.registered)

    come_back(oauth.begin_authorization(conn, "alice", secrets, REDIRECT, NOW, http), http)

    assert len(server.authorization.registered) == registered
    assert "oauth" in secrets.read("acme", "notes")  # the tokens stay until new ones come
    # Another redirect URI (another host of the API) registers again.
    oauth.begin_authorization(conn, "alice", secrets, "http://localhost:8000/v1/oauth/callback", NOW, http)
    assert len(server.authorization.registered) == registered + 1


def test_the_well_known_url_is_found_when_the_challenge_names_none(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    server.plain_challenge = True
    try:
        _, _, conn = authorized(server, http)
    finally:
        server.plain_challenge = False
    assert conn.auth == "oauth"


def begun(
    server: OAuthToolServer, http: httpx.Client, *names: str
) -> tuple[Store, Secrets, list[dict[str, str]]]:
    store = Store(*(connection(server.url, name) for name in names))
    secrets = Secrets()
    backs = []
    for name in names:
        conn = store.get("acme", name)
        assert conn is not None
        backs.append(come_back(oauth.begin_authorization(conn, "alice", secrets, REDIRECT, NOW, http), http))
    return store, secrets, backs


def finish(back: Mapping[str, str], store: Store, secrets: Secrets, http: httpx.Client, **kwargs: Any) -> Any:
    arguments: dict[str, Any] = {"caller": None, "now": NOW, **kwargs}
    return oauth.finish_authorization(
        back.get("state"),
        back.get("code"),
        back.get("error"),
        secrets=secrets,
        store=store,
        http=http,
        **arguments,
    )


def refused(reason: str, words: str, call: Any) -> None:
    with pytest.raises(Problem) as raised:
        call()
    assert raised.value.reason == reason
    assert words in raised.value.detail


def test_a_state_is_used_once(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    finish(back, store, secrets, http)

    refused("bad_request", "unknown, was already used", lambda: finish(back, store, secrets, http))


def test_a_state_expires_after_ten_minutes(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    refused(
        "bad_request", "expired", lambda: finish(back, store, secrets, http, now=NOW + timedelta(seconds=601))
    )
    # and it is gone: the right time does not bring it back
    refused("bad_request", "unknown", lambda: finish(back, store, secrets, http))
    assert "oauth" not in secrets.read("acme", "notes")


def test_a_state_from_another_person_is_refused(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    refused(
        "forbidden", "started by someone else", lambda: finish(back, store, secrets, http, caller="mallory")
    )
    # the person who asked still finishes it
    assert finish(back, store, secrets, http, caller="alice").connection.auth == "oauth"


def test_a_state_binds_its_connection(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (first, second) = begun(server, http, "notes", "wiki")
    crossed = {**first, "state": second["state"].split(".")[0] + "." + first["state"].split(".")[1]}

    refused("bad_request", "unknown", lambda: finish(crossed, store, secrets, http))
    for state in ("", "x", "e30.abc", "not base64!.x", "W10.abc", "a" * 2000):
        refused("bad_request", "", lambda s=state: finish({**first, "state": s}, store, secrets, http))
    # both still finish, each for its own connection
    assert finish(first, store, secrets, http).connection.name == "notes"
    assert finish(second, store, secrets, http).connection.name == "wiki"


def test_a_refusal_at_the_authorization_server_uses_the_state(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    refused(
        "bad_request",
        "did not authorize the connection (access_denied)",
        lambda: finish({"state": back["state"], "error": "access_denied"}, store, secrets, http),
    )
    refused("bad_request", "unknown", lambda: finish(back, store, secrets, http))


def test_a_code_the_server_refuses_is_a_clear_problem(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    refused(
        "bad_request", "refused the code", lambda: finish({**back, "code": "made-up"}, store, secrets, http)
    )


def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, secrets, conn = authorized(server, http)
    before = oauth.fresh_oauth_headers(conn, secrets, store, NOW, http)
    refreshes = server.authorization.refreshes
    lifetime = server.authorization.expires_in

    # more than a minute left: the same token
    assert (
        oauth.fresh_oauth_headers(conn, secrets, store, NOW + timedelta(seconds=lifetime - 61), http)
        == before
    )
    assert server.authorization.refreshes == refreshes
    # within a minute of its end: refreshed, kept, and the server takes only the new one
    soon = NOW + timedelta(seconds=lifetime - 59)
    after = oauth.fresh_oauth_headers(conn, secrets, store, soon, http)

    assert after != before and server.authorization.refreshes == refreshes + 1
    assert tools_list(server, after) == 200 and tools_list(server, before) == 401
    assert secrets.read("acme", "notes")["oauth"]["expires_at"] == int(soon.timestamp()) + lifetime
    assert server.authorization.token_resources[-1] == server.url
    assert oauth.fresh_oauth_headers(conn, secrets, store, soon, http) == after
    assert store.connections[("acme", "notes")].status == "pending"


def test_a_refresh_the_server_refuses_breaks_the_connection(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, secrets, conn = authorized(server, http)
    later = NOW + timedelta(hours=2)
    server.authorization.refuse_refresh = True
    try:
        with pytest.raises(SecretUnreadable, match="remove the connection and add it again"):
            oauth.fresh_oauth_headers(conn, secrets, store, later, http)
    finally:
        server.authorization.refuse_refresh = False
    assert store.connections[("acme", "notes")].status == "broken"


def test_an_expired_token_without_a_refresh_token_breaks_the_connection(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, secrets, conn = authorized(server, http)
    kept = secrets.read("acme", "notes")
    secrets.put(
        "acme", "notes", {**kept, "oauth": {k: v for k, v in kept["oauth"].items() if k != "refresh_token"}}
    )

    with pytest.raises(SecretUnreadable):
        oauth.fresh_oauth_headers(conn, secrets, store, NOW + timedelta(hours=2), http)
    assert store.connections[("acme", "notes")].status == "broken"


def test_an_authorization_server_out_of_reach_leaves_the_connection_as_it_is(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, secrets, conn = authorized(server, http)
    kept = secrets.read("acme", "notes")
    gone = unreachable_url().removesuffix("/mcp") + "/token"
    secrets.put("acme", "notes", {**kept, "oauth": {**kept["oauth"], "token_endpoint": gone}})

    with pytest.raises(SecretUnreadable, match="could not be refreshed now"):
        oauth.fresh_oauth_headers(conn, secrets, store, NOW + timedelta(hours=2), http)
    assert store.connections[("acme", "notes")].status == "pending"


def test_a_server_that_does_not_ask_for_oauth_is_a_conflict(http: httpx.Client) -> None:
    with running_tool_server() as plain:
        refused(
            "conflict",
            "does not ask for OAuth",
            lambda: oauth.begin_authorization(connection(plain.url), "alice", Secrets(), REDIRECT, NOW, http),
        )


def test_a_server_out_of_reach_is_unavailable(http: httpx.Client) -> None:
    refused(
        "unavailable",
        "could not be reached",
        lambda: oauth.begin_authorization(
            connection(unreachable_url()), "alice", Secrets(), REDIRECT, NOW, http
        ),
    )


def test_a_connection_that_sends_headers_is_not_authorized(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    headers = dataclasses.replace(connection(server.url), auth="headers")

    refused(
        "conflict",
        "sends headers",
        lambda: oauth.begin_authorization(headers, "alice", Secrets(), REDIRECT, NOW, http),
    )


@pytest.mark.parametrize(
    ("url", "server_url", "allowed"),
    [
        ("https://auth.example/token", "https://notes.example/mcp", True),
        ("http://auth.example/token", "https://notes.example/mcp", False),
        ("http://127.0.0.1:9/token", "http://127.0.0.1:8/mcp", True),
        ("http://127.0.0.1:9/token", "https://notes.example/mcp", False),
        ("http://169.254.169.254/latest", "http://127.0.0.1:8/mcp", False),
        ("file:///etc/passwd", "https://notes.example/mcp", False),
    ],
)
def test_only_https_is_fetched_but_on_loopback(url: str, server_url: str, allowed: bool) -> None:
    assert oauth._allowed(url, server_url) is allowed


class ReadBefore(Secrets):
    """Secrets whose next read answers what was kept before: a use that read the secret just before
    another use refreshed its token."""

    def __init__(self, kept: Secrets) -> None:
        super().__init__()
        self.values = kept.values
        self.stale: dict[str, Any] | None = None

    def read(self, org: str, name: str) -> dict[str, Any]:
        if self.stale is not None:
            stale, self.stale = self.stale, None
            return stale
        return super().read(org, name)


def test_two_uses_refreshing_at_once_do_not_break_the_connection(
    server: OAuthToolServer, http: httpx.Client
) -> None:
    store, kept, conn = authorized(server, http)
    secrets = ReadBefore(kept)
    soon = NOW + timedelta(seconds=server.authorization.expires_in - 30)
    before = secrets.read("acme", "notes")  # what the second use read, before the first refreshed

    first = oauth.fresh_oauth_headers(conn, secrets, store, soon, http)  # spends the refresh token
    secrets.stale = before
    refreshes = server.authorization.refreshes
    second = oauth.fresh_oauth_headers(conn, secrets, store, soon, http)  # refused, then reads again

    assert server.authorization.refreshes == refreshes  # the second refresh was refused
    assert second == first
    assert store.connections[("acme", "notes")].status == "pending"
    assert tools_list(server, second) == 200


def test_a_callback_naming_another_issuer_is_refused(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    refused(
        "bad_request", "(its iss)", lambda: finish(back, store, secrets, http, iss="https://evil.example")
    )
    refused("bad_request", "unknown", lambda: finish(back, store, secrets, http, iss=server.origin))


def test_a_callback_naming_the_issuer_is_taken(server: OAuthToolServer, http: httpx.Client) -> None:
    store, secrets, (back,) = begun(server, http, "notes")

    assert finish(back, store, secrets, http, iss=server.origin).connection.auth == "oauth"
