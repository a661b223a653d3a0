"""The manual clock's advance takes a writer's token and JSON only (issue 27, item 5): what a page on
another website can send — a simple cross-site POST (form or ``text/plain``, no ``Authorization``) — moves
nothing."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from parley.config import parse_operator_config
from parley.local.server import LocalServer, ServeOptions, running

OPERATOR = parse_operator_config(
    """
principals:
  - {id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}
  - {id: viewer, token: viewer-token, grants: [{org: acme, playbook: campaigns, role: read}]}
  - {id: nobody, token: nobody-token}
""",
    "test",
    environ={},
)
WRITER = {"Authorization": "Bearer dev-token"}
ADVANCE = "/_local/clock/advance"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with running(ServeOptions(port=0, clock="manual"), OPERATOR) as started:
        yield started


@pytest.fixture
def http(server: LocalServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def now(http: httpx.Client) -> str:
    reply = http.get("/_local/clock")  # reading needs no token
    assert reply.status_code == 200, reply.text
    value: str = reply.json()["now"]
    return value


@pytest.mark.parametrize(
    ("headers", "content", "status", "reason"),
    [
        # What a cross-site form posts: no token, a form body.
        ({"Content-Type": "application/x-www-form-urlencoded"}, '{"seconds": 86400}', 401, "unauthenticated"),
        # A cross-site fetch with mode no-cors: text/plain, no token.
        ({"Content-Type": "text/plain"}, '{"seconds": 86400}', 401, "unauthenticated"),
        ({"Content-Type": "application/json"}, '{"seconds": 86400}', 401, "unauthenticated"),
        ({**WRITER, "Content-Type": "text/plain"}, '{"seconds": 86400}', 415, "unsupported_media_type"),
        ({**WRITER, "Content-Type": "application/x-www-form-urlencoded"}, "seconds=86400", 415,
         "unsupported_media_type"),
        ({**WRITER}, '{"seconds": 86400}', 415, "unsupported_media_type"),
        ({"Authorization": "Bearer viewer-token", "Content-Type": "application/json"}, '{"seconds": 86400}',
         403, "forbidden"),
        ({"Authorization": "Bearer nobody-token", "Content-Type": "application/json"}, '{"seconds": 86400}',
         403, "forbidden"),
        ({"Authorization": "Bearer wrong", "Content-Type": "application/json"}, '{"seconds": 86400}', 401,
         "unauthenticated"),
    ],
)  # fmt: skip
def test_what_is_not_a_writers_json_moves_nothing(
    http: httpx.Client, headers: dict[str, str], content: str, status: int, reason: str
) -> None:
    before = now(http)

    reply = http.post(ADVANCE, content=content, headers=headers)

    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.json()["reason"] == reason
    if status == 401:
        assert reply.headers["www-authenticate"] == "Bearer"
    assert now(http) == before


def test_a_writers_json_moves_the_clock(http: httpx.Client) -> None:
    before = now(http)

    moved = http.post(ADVANCE, json={"seconds": 60}, headers=WRITER)

    assert moved.status_code == 200, moved.text
    assert moved.json()["now"] == now(http) != before


def test_a_token_in_the_query_string_does_not_move_it_either(http: httpx.Client) -> None:
    before = now(http)
    reply = http.post(f"{ADVANCE}?token=dev-token", json={"seconds": 60})
    assert (reply.status_code, reply.json()["reason"]) == (400, "bad_request")
    assert now(http) == before


def test_another_host_does_not_move_it(http: httpx.Client) -> None:
    """DNS rebinding: the browser sends the attacker's name in Host."""
    before = now(http)
    reply = http.post(ADVANCE, json={"seconds": 60}, headers={**WRITER, "Host": "rebound.example"})
    assert (reply.status_code, reply.json()["reason"]) == (400, "bad_request")
    assert now(http) == before
