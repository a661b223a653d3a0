"""The local server's HTTP front (``parley.local.front``): what it answers to bytes that are not a
well-formed request, with its timeouts and limits — every answer a problem document, every stuck
connection closed."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from parley.config import parse_operator_config
from parley.local.front import FrontLimits
from parley.local.server import LocalServer, ServeOptions, running

OPERATOR = parse_operator_config(
    "principals: [{id: dev, token: dev-token, grants: [{org: acme, playbook: campaigns, role: write}]}]",
    "test",
    environ={},
)
LIMITS = FrontLimits(max_body=4096, header_seconds=0.5, body_seconds=0.5, keep_alive_seconds=1)
LISTING = "/v1/orgs/acme/playbooks/campaigns/definitions/interaction"
CLOSING = "Authorization: Bearer dev-token\r\nConnection: close\r\n\r\n"


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    # The raw requests below name the server "x" in Host (--allow-host x).
    options = ServeOptions(port=0, clock="manual", front=LIMITS, allow_hosts=("x",))
    with running(options, OPERATOR) as started:
        yield started


def exchange(server: LocalServer, data: bytes, *, wait: float = 5) -> bytes:
    """Send ``data`` on a new connection; everything the server sends until it closes (or ``wait``)."""
    with socket.create_connection(server.front.address, timeout=wait) as conn:
        conn.sendall(data)
        received = bytearray()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            received.extend(chunk)
        return bytes(received)


def closed_by_server(server: LocalServer, data: bytes, *, wait: float = 30) -> bytes:
    """Send ``data`` on a new connection; everything the server sent before it closed the connection.

    Fails when ``wait`` (far past the front's own timeouts of a second or less) runs out first: the
    close observed is the server's, never the test's own wait. Waiting up to a long deadline is no
    timed assertion; the front's timeouts are what ends the exchange.
    """
    with socket.create_connection(server.front.address, timeout=wait) as conn:
        conn.sendall(data)
        received = bytearray()
        while True:
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                pytest.fail(f"the server did not close the connection within {wait} s: {bytes(received)!r}")
            except ConnectionResetError:
                return bytes(received)  # closed by the server, abruptly
            if not chunk:
                return bytes(received)  # EOF: closed by the server
            received.extend(chunk)


def problem(raw: bytes) -> tuple[int, dict[str, object], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    assert b"content-type: application/problem+json" in head.lower(), head
    document = json.loads(body)
    assert document["status"] == status
    return status, document, head


def test_a_malformed_request_line_is_a_400_problem(server: LocalServer) -> None:
    status, document, head = problem(exchange(server, b"GARBAGE\r\n\r\n"))
    assert (status, document["reason"]) == (400, "bad_request")
    assert b"connection: close" in head.lower()


def test_conflicting_content_lengths_are_a_400_problem(server: LocalServer) -> None:
    raw = exchange(
        server,
        f"POST {LISTING} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{{}}".encode(),
    )
    status, document, _ = problem(raw)
    assert (status, document["reason"]) == (400, "bad_request")


def test_a_body_shorter_than_its_length_is_answered_and_closed_after_the_body_timeout(
    server: LocalServer,
) -> None:
    raw = closed_by_server(
        server, f'POST {LISTING} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{"name"'.encode()
    )
    status, document, head = problem(raw)
    assert (status, document["reason"]) == (400, "bad_request")
    assert "stopped arriving" in str(document["detail"])
    assert b"connection: close" in head.lower()


def test_half_sent_headers_are_closed_after_the_header_timeout(server: LocalServer) -> None:
    raw = closed_by_server(server, f"GET {LISTING} HTTP/1.1\r\nHost: x\r\nAuthor".encode())
    assert raw == b""


def test_an_idle_connection_is_closed(server: LocalServer) -> None:
    assert closed_by_server(server, b"") == b""


def test_a_body_over_the_limit_is_a_413_problem_before_it_is_read(server: LocalServer) -> None:
    raw = exchange(server, f"POST {LISTING} HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n".encode())
    status, document, head = problem(raw)
    assert (status, document["reason"]) == (413, "content_too_large")
    assert b"connection: close" in head.lower()


def test_a_chunked_body_over_the_limit_is_a_413_problem(server: LocalServer) -> None:
    chunk = b"x" * 3000
    data = f"POST {LISTING} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
    data += b"%x\r\n%s\r\n" % (len(chunk), chunk) * 2 + b"0\r\n\r\n"
    status, document, _ = problem(exchange(server, data))
    assert (status, document["reason"]) == (413, "content_too_large")


def test_headers_over_the_limit_are_a_400_problem(server: LocalServer) -> None:
    data = f"GET {LISTING} HTTP/1.1\r\nHost: x\r\nX-Big: {'a' * 100_000}".encode()  # and more to come
    status, document, _ = problem(exchange(server, data))
    assert (status, document["reason"]) == (400, "bad_request")


def test_an_unknown_method_reaches_the_api_and_is_a_405_problem(server: LocalServer) -> None:
    raw = exchange(
        server,
        f"BREW {LISTING} HTTP/1.1\r\nHost: x\r\n{CLOSING}".encode(),
    )
    status, document, head = problem(raw)
    assert (status, document["reason"]) == (405, "method_not_allowed")
    assert b"allow:" in head.lower()


def test_a_chunked_body_and_keep_alive_requests_are_answered(server: LocalServer) -> None:
    body = b'{"name": "x"}'
    data = f"POST {LISTING} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-token\r\n".encode()
    data += b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    data += b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    data += f"GET {LISTING} HTTP/1.1\r\nHost: x\r\n{CLOSING}".encode()
    raw = exchange(server, data)
    first, second = raw.split(b"HTTP/1.1 ")[1:]
    assert first.startswith(b"422 ") and b"/source" in first  # the source is missing: read as JSON
    assert second.startswith(b"200 ") and b'"definitions":[]' in second.replace(b" ", b"")


def test_header_names_in_lower_case_reach_the_handler(server: LocalServer) -> None:
    raw = exchange(
        server,
        f"GET {LISTING} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer dev-token\r\n"
        "connection: close\r\n\r\n".encode(),
    )
    assert raw.startswith(b"HTTP/1.1 200 "), raw[:200]
