"""A local server no other website can drive (issue 27, item 5; ``parley.local.request_guard``): the
``Host`` check, ``--allow-host``, credentials refused in a query string and kept out of the access log."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tool_serving import serving_with

from parley.config import parse_operator_config
from parley.local.request_guard import (
    HostCheck,
    allow_host_value,
    carries_credential,
    credential_parameters,
    loggable_target,
    parse_host,
)
from parley.local.server import LocalServer, ServeOptions, running

OPERATOR = parse_operator_config(
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]",
    "test",
    environ={},
)
LISTING = "/v1/orgs/acme/playbooks/campaigns/definitions/interaction"
AUTH = "Authorization: Bearer dev-token\r\n"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    options = ServeOptions(port=0, clock="manual", allow_hosts=("parley.test", "pinned.test:9999"))
    with running(options, OPERATOR) as started:
        yield started


def exchange(server: LocalServer, head: str) -> tuple[int, dict[str, str], bytes]:
    """One raw request (``head`` without the blank line) on its own connection: status, headers, body."""
    with socket.create_connection(server.front.address, timeout=30) as conn:
        conn.sendall(f"{head}Connection: close\r\n\r\n".encode("latin-1"))
        received = bytearray()
        while chunk := conn.recv(65536):
            received.extend(chunk)
    raw_head, _, body = bytes(received).partition(b"\r\n\r\n")
    lines = raw_head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split(" ", 2)[1]), headers, body


def get(server: LocalServer, host: str | None, target: str = LISTING) -> tuple[int, dict[str, str], bytes]:
    host_line = f"Host: {host}\r\n" if host is not None else ""
    return exchange(server, f"GET {target} HTTP/1.1\r\n{host_line}{AUTH}")


def port_of(server: LocalServer) -> int:
    return server.front.address[1]


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}", "127.0.0.1", "localhost"],
)
def test_the_servers_own_names_are_answered(server: LocalServer, host: str) -> None:
    status, _, body = get(server, host.format(port=port_of(server)))
    assert status == 200, body


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",  # DNS rebinding: the attacker's name now resolves to 127.0.0.1
        "evil.example",
        "localhost.evil.example:{port}",
        "127.0.0.1:{other}",  # the right name, another port
        "10.0.0.7:{port}",  # an address it does not listen on
        "pinned.test:{port}",  # allowed on 9999 only
    ],
)
def test_another_host_is_a_400_problem_that_says_how_to_allow_it(server: LocalServer, host: str) -> None:
    port = port_of(server)
    status, headers, body = get(server, host.format(port=port, other=port + 1))

    assert status == 400
    assert headers["content-type"] == "application/problem+json"
    document = json.loads(body)
    assert document["reason"] == "bad_request"
    assert "does not answer for Host" in document["detail"] and "--allow-host" in document["detail"]


@pytest.mark.parametrize("host", ["parley.test", "parley.test:443", "PARLEY.test:{port}", "pinned.test:9999"])
def test_allow_host_names_are_answered(server: LocalServer, host: str) -> None:
    status, _, body = get(server, host.format(port=port_of(server)))
    assert status == 200, body


@pytest.mark.parametrize(
    ("head", "words"),
    [
        (f"GET {LISTING} HTTP/1.0\r\n", "Send a Host header"),  # HTTP/1.0 may leave it out: refused
        (f"GET {LISTING} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n", "one Host header"),
        (f"GET {LISTING} HTTP/1.1\r\nHost: a b\r\n", "not a host name"),
        (f"GET {LISTING} HTTP/1.1\r\nHost: [::1\r\n", "not a host name"),
        (f"GET {LISTING} HTTP/1.1\r\nHost: 127.0.0.1:99999\r\n", "not a host name"),
    ],
)
def test_a_missing_repeated_or_broken_host_is_a_400_problem(
    server: LocalServer, head: str, words: str
) -> None:
    status, headers, body = exchange(server, head + AUTH)
    # h11 refuses some of these itself (also 400, with its own detail): either way a problem document.
    assert status == 400
    assert headers["content-type"] == "application/problem+json"
    detail = json.loads(body)["detail"]
    assert words in detail or "not HTTP/1.1 this server can read" in detail


def test_every_route_is_checked(server: LocalServer) -> None:
    for target in ("/_local/clock", "/inbox/", "/openapi.json", "/mcp", "/nowhere"):
        assert get(server, "evil.example")[0] == 400, target


@pytest.mark.parametrize(
    "query",
    ["token=dev-token", "access_token=dev-token", "limit=5&api_key=dev-token", "X-Amz-Security-Token=abc",
     "Password=pw", "client-secret=s"],
)  # fmt: skip
def test_a_credential_in_the_query_string_is_refused(server: LocalServer, query: str) -> None:
    status, _, body = get(server, f"127.0.0.1:{port_of(server)}", f"{LISTING}?{query}")

    assert status == 400
    document = json.loads(body)
    assert document["reason"] == "bad_request"
    assert "never sent in a URL" in document["detail"] and "Authorization: Bearer" in document["detail"]
    assert "dev-token" not in document["detail"]


def test_other_query_parameters_are_answered(server: LocalServer) -> None:
    status, _, body = get(server, f"127.0.0.1:{port_of(server)}", f"{LISTING}?limit=5&include_retired=true")
    assert status == 200, body


# --- the access log, from a real `parley serve` ------------------------------------------------------


def test_the_access_log_drops_credentials_from_the_query(tmp_path: Path) -> None:
    operator = (
        "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]\n"
    )
    with serving_with(tmp_path, operator) as url:
        secret = "sk-query-7f3a9c"
        refused = httpx.get(f"{url}{LISTING}?limit=5&token={secret}&order=asc&API_KEY={secret}")
        answered = httpx.get(f"{url}{LISTING}?limit=5", headers={"Authorization": "Bearer dev-token"})
        assert (refused.status_code, answered.status_code) == (400, 200)
        log = tmp_path / "serve.log"
        deadline = time.monotonic() + 30
        while f"{LISTING}?limit=5 HTTP/1.1" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
    text = log.read_text()
    assert secret not in text
    assert f'"GET {LISTING}?limit=5&order=asc HTTP/1.1" 400' in text


# --- the rules, without a server ---------------------------------------------------------------------


def test_parse_host() -> None:
    assert parse_host("Example.COM:8000") == ("example.com", 8000)
    assert parse_host("[::1]:8000") == ("[::1]", 8000)
    assert parse_host("[::1]") == ("[::1]", None)
    assert parse_host("localhost") == ("localhost", None)
    for broken in ("", ":80", "a:b", "a:80:81", "::1", "[nope]:80", "[::1]x", "a b", "a:-1", "a:٣"):
        assert parse_host(broken) is None, broken


def test_a_server_on_every_address_answers_any_address_but_no_name() -> None:
    check = HostCheck.of("0.0.0.0", 8000)
    assert check.refusal("192.168.1.20:8000") is None and check.refusal("[fe80::1]:8000") is None
    assert check.refusal("localhost:8000") is None
    assert check.refusal("evil.example:8000") is not None
    assert check.refusal("192.168.1.20:8001") is not None


def test_the_host_named_by_host_is_answered() -> None:
    check = HostCheck.of("127.0.0.1", 8000, names=("devbox.local",))
    assert check.refusal("devbox.local:8000") is None and check.refusal("other.local:8000") is not None
    assert HostCheck.of("::1", 8000, names=("::1",)).refusal("[::1]:8000") is None


def test_allow_host_values() -> None:
    assert allow_host_value("Proxy.Example") == "proxy.example"
    assert allow_host_value("proxy:8443") == "proxy:8443"
    with pytest.raises(ValueError, match="not a host name"):
        allow_host_value("http://proxy/")


def test_credential_names_and_the_loggable_target() -> None:
    assert all(carries_credential(n) for n in ("token", "Access-Token", "api_key", "x_amz_security_token"))
    assert not any(carries_credential(n) for n in ("limit", "cursor", "run_id", "type", "terms", "to"))
    assert credential_parameters("/a?token=1&token=2&tok%65n=3&limit=1") == ["token"]
    assert loggable_target("/a?limit=1&token=x&order=asc") == "/a?limit=1&order=asc"
    assert loggable_target("/a?tok%65n=x") == "/a"
    assert loggable_target("/a") == "/a" and loggable_target("/a?") == "/a"


def test_the_oauth_callbacks_code_and_state_are_logged_without_their_values() -> None:
    target = "/v1/oauth/callback?code=c0de-secret&state=eyJhIn0.n0nce&iss=x"

    assert credential_parameters(target) == []  # the route takes them: not refused
    assert loggable_target(target) == "/v1/oauth/callback?code=…&state=…&iss=x"
    assert loggable_target("/v1/oauth/callback?STATE=s") == "/v1/oauth/callback?STATE=…"
