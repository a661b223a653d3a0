"""The requests the front door answers without the mcp package (``parley.front.direct``): each answer is
the package's own — the same status, headers and JSON — and everything the package alone should judge
goes to it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from parley.api.operation import Services
from parley.clock import ManualClock
from parley.config import Principal, parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.front.direct import HANDSHAKE_VERSIONS, answer_directly
from parley.front.handler import answer_with_sdk
from parley.front.target import Target
from parley.ports.runtime import Runtime

OPERATOR = parse_operator_config(
    """
principals:
  - id: dev
    token: dev-token
    grants: [{ org: acme, playbook: campaigns, role: write }, { org: acme, playbook: lookout, role: read }]
  - { id: viewer, token: viewer-token, grants: [{ org: acme, playbook: campaigns, role: read }] }
  - { id: nobody, token: nobody-token }
""",
    "test",
    environ={},
)
SERVICES = Services(
    Runtime(definitions=DynamoDefinitionStore(None, "t"), clock=ManualClock(), operator=OPERATOR)
)
TARGETS = (Target(), Target("acme", "campaigns"))
PLAIN_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "claude-code", "version": "2.1.0"},
}


def event(message: Any, headers: dict[str, str] | None = None) -> tuple[dict[str, Any], bytes]:
    sent = {**PLAIN_HEADERS, **(headers or {})}
    body = message if isinstance(message, str) else json.dumps(message)
    return (
        {
            "path": "/mcp",
            "httpMethod": "POST",
            "headers": sent,
            "multiValueHeaders": {name: [value] for name, value in sent.items()},
            "requestContext": {"requestId": "r", "identity": {"sourceIp": "127.0.0.1"}},
            "body": body,
            "isBase64Encoded": False,
        },
        body.encode("utf-8"),
    )


def both(
    message: Any,
    headers: dict[str, str] | None = None,
    *,
    principal: str = "dev",
    target: Target = TARGETS[0],
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """What the front door answers itself (``None``: nothing) and what the mcp package answers."""
    caller: Principal = OPERATOR.principal_named(principal)
    sent, body = event(message, headers)
    direct = answer_directly(sent, body, caller, target)
    return direct, answer_with_sdk(sent, body, SERVICES, caller, target, lambda name: None)


def same(direct: dict[str, Any] | None, sdk: dict[str, Any]) -> bool:
    """The same proxy result: status, headers, encoding and JSON body (its keys may come in another order:
    the package writes a schema's own keywords first)."""
    assert direct is not None, "answered by the package, not directly"
    if direct["body"] or sdk["body"]:
        assert json.loads(direct["body"]) == json.loads(sdk["body"])
    return {**direct, "body": None} == {**sdk, "body": None}


def request(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


VERSIONS = (None, *HANDSHAKE_VERSIONS)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("principal", ["dev", "viewer", "nobody"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["tools/list", "ping", "initialize"])
def test_the_plain_requests_are_answered_as_the_package_answers_them(
    method: str, principal: str, target: Target, version: str | None
) -> None:
    headers = {"Mcp-Protocol-Version": version} if version else {}
    params = INITIALIZE if method == "initialize" else {}

    direct, sdk = both(request(method, params), headers, principal=principal, target=target)

    assert same(direct, sdk)


@pytest.mark.parametrize(
    "params",
    [
        {**INITIALIZE, "protocolVersion": offered}
        for offered in (*HANDSHAKE_VERSIONS, "2026-07-28", "1999-01-01", "")
    ]
    + [
        {**INITIALIZE, "capabilities": capabilities}
        for capabilities in (
            {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}, "url": {}}},
            {"sampling": {"context": {}, "tools": {}}, "experimental": {"x-thing": {"on": 1}}},
            {"roots": {}},
        )
    ]
    + [
        {**INITIALIZE, "clientInfo": {"name": "c", "version": "1", "title": "C", "description": "A client"}},
        {**INITIALIZE, "clientInfo": {"name": "c", "version": "1", "websiteUrl": "https://c.example"}},
    ],
)
def test_initialize_offers_and_clients(params: dict[str, Any]) -> None:
    for headers in ({}, {"Mcp-Protocol-Version": "2025-03-26"}):
        direct, sdk = both(request("initialize", params), headers)

        assert same(direct, sdk)


@pytest.mark.parametrize("request_id", [0, -5, 2**40, "abc", "", "ünï-42"])
def test_each_plain_id_comes_back(request_id: Any) -> None:
    direct, sdk = both(request("tools/list", request_id=request_id))

    assert same(direct, sdk)


@pytest.mark.parametrize(
    "headers",
    [
        {"Accept": "application/json"},
        {"Accept": "*/*"},
        {"Accept": "application/*;q=0.9"},
        {"Content-Type": "application/json; charset=utf-8"},
        {"Content-Length": "60"},
    ],
)
def test_headers_the_package_takes(headers: dict[str, str]) -> None:
    direct, sdk = both(request("tools/list"), headers)

    assert same(direct, sdk)


@pytest.mark.parametrize("params", [None, {}])
def test_the_initialized_notification_is_accepted(params: Any) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    if params is not None:
        message["params"] = params

    direct, sdk = both(message, {"Mcp-Protocol-Version": "2025-06-18"})

    assert same(direct, sdk)
    assert direct is not None and direct["statusCode"] == 202


@pytest.mark.parametrize(
    ("message", "headers"),
    [
        # another era, another method, or params the package reads
        (request("tools/list"), {"Mcp-Protocol-Version": "2026-07-28"}),
        (request("tools/list"), {"Mcp-Protocol-Version": "2099-01-01"}),
        (request("tools/call", {"name": "list_runs", "arguments": {}}), {}),
        (request("resources/list"), {}),
        (request("tools/list", {"cursor": "x"}), {}),
        (request("tools/list", {"_meta": {"progressToken": 1}}), {}),
        (request("ping", {"x": 1}), {}),
        ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, {}),
        # headers the package refuses
        (request("tools/list"), {"Accept": "text/event-stream"}),
        (request("tools/list"), {"Accept": ""}),
        (request("tools/list"), {"Content-Type": "text/plain"}),
        (request("tools/list"), {"Content-Type": "application/json-patch+json"}),
        (request("tools/list"), {"Content-Length": "5000000"}),
        # bodies that are not one plain request
        ([request("ping")], {}),
        ('{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}', {}),
        ('{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', {}),
        ("{not json", {}),
        (request("ping", request_id=None), {}),
        (request("ping", request_id=1.5), {}),
        (request("ping", request_id=True), {}),
        (request("ping", request_id=2**60), {}),
        ({**request("ping"), "jsonrpc": "1.0"}, {}),
        ({**request("ping"), "extra": 1}, {}),
        # an initialize the package reads in ways of its own
        (request("initialize", {**INITIALIZE, "capabilities": {"tasks": {}}}), {}),
        (request("initialize", {**INITIALIZE, "capabilities": {"roots": {"listChanged": "yes"}}}), {}),
        (request("initialize", {**INITIALIZE, "capabilities": {"roots": {"list_changed": True}}}), {}),
        (request("initialize", {**INITIALIZE, "capabilities": {"sampling": {"context": True}}}), {}),
        (request("initialize", {**INITIALIZE, "capabilities": []}), {}),
        (request("initialize", {**INITIALIZE, "clientInfo": {"name": "c"}}), {}),
        (request("initialize", {**INITIALIZE, "clientInfo": {"name": "c", "version": 1}}), {}),
        (request("initialize", {**INITIALIZE, "clientInfo": {"name": "c", "version": "1", "icons": []}}), {}),
        (request("initialize", {**INITIALIZE, "_meta": {}}), {}),
        (request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}), {}),
        (request("initialize", {**INITIALIZE, "protocolVersion": 2025}), {}),
    ],
)
def test_everything_else_goes_to_the_package(message: Any, headers: dict[str, str]) -> None:
    sent, body = event(message, headers)

    assert answer_directly(sent, body, OPERATOR.principal_named("dev"), Target()) is None
