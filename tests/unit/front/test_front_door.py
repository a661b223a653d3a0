"""The MCP front door's handler (``parley.front.handler``) on API Gateway proxy events: what it answers
before the MCP server sees a request, the JSON-RPC exchange itself, the tools as a principal may call
them, results as HTTP gives them, and the guides."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from parley.api.app import build_handler
from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.front.asgi import Reply as AsgiReply
from parley.front.asgi import http_scope, proxy_result, request_body
from parley.front.guides import GUIDES
from parley.front.handler import build_mcp_handler, mcp_target
from parley.front.server import instructions
from parley.front.target import Target
from parley.ports.runtime import Runtime

OPERATOR = """
principals:
  - id: dev
    token: dev-token
    grants: [{ org: acme, playbook: campaigns, role: write }, { org: acme, playbook: lookout, role: read }]
  - id: viewer
    token: viewer-token
    grants: [{ org: acme, playbook: campaigns, role: read }]
  - id: outsider
    token: outsider-token
    grants: [{ org: globex, playbook: launch, role: write }]
"""
WRITER = "dev-token"
READER = "viewer-token"
PLAYBOOK = "/v1/orgs/acme/playbooks/campaigns/mcp"
SOURCE = "---\ndescription: Asks for a yes\nto: someone\n---\nYes?\n"
#: The placeholder pages of this test (the real ones are parley.reference's; tests/http read those).
PAGES = {guide.name: f"# {guide.title}\n\nA placeholder of this test.\n" for guide in GUIDES}


@pytest.fixture
def runtime(dynamodb: tuple[Any, str], manual_clock: ManualClock, stub_check: Any) -> Runtime:
    client, table = dynamodb
    return Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(OPERATOR, "test", environ={}),
        check_document=stub_check,
    )


def event(
    path: str,
    body: Any = None,
    *,
    token: str | None = WRITER,
    method: str = "POST",
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **(headers or {}),
    }
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": sent,
        "multiValueHeaders": {k: [v] for k, v in sent.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "requestContext": {"requestId": "req-1", "identity": {"sourceIp": "127.0.0.1"}},
        "body": None if body is None else (body if isinstance(body, str) else json.dumps(body)),
        "isBase64Encoded": False,
    }


Call = Callable[..., dict[str, Any]]


@pytest.fixture
def rpc(runtime: Runtime) -> Call:
    """A JSON-RPC call on an endpoint: its whole proxy result, ``body`` parsed."""
    handler = build_mcp_handler(runtime, guides=PAGES.get)

    def call(
        method: str, params: dict[str, Any] | None = None, *, path: str = "/mcp", token: str = WRITER
    ) -> Any:
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        result = handler(event(path, message, token=token), None)
        assert result["statusCode"] == 200, result
        assert result["multiValueHeaders"]["Cache-Control"] == ["no-store"]
        return json.loads(result["body"])

    return call


def tool(rpc: Call, name: str, arguments: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    reply = rpc("tools/call", {"name": name, "arguments": arguments}, **kwargs)
    result: dict[str, Any] = reply["result"]
    return result


# --- before the MCP server ------------------------------------------------------------------------------


def test_the_endpoints_are_mcp_and_each_playbooks() -> None:
    assert mcp_target("/mcp") == Target()
    assert mcp_target(PLAYBOOK) == Target("acme", "campaigns")
    assert mcp_target("/v1/orgs/acme/playbooks/campaigns/runs") is None
    assert mcp_target("/v1/orgs/acme/mcp") is None


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_any_method_but_post_is_405_with_allow(runtime: Runtime, method: str) -> None:
    for path in ("/mcp", PLAYBOOK):
        result = build_mcp_handler(runtime)(event(path, method=method), None)
        body = json.loads(result["body"])

        assert result["statusCode"] == 405
        assert result["multiValueHeaders"]["Allow"] == ["POST"]
        assert body["reason"] == "method_not_allowed"


def test_no_token_or_a_bad_one_is_401_with_the_challenge(runtime: Runtime) -> None:
    for token in (None, "nope"):
        result = build_mcp_handler(runtime)(event("/mcp", {}, token=token), None)

        assert result["statusCode"] == 401
        assert result["multiValueHeaders"]["WWW-Authenticate"] == ["Bearer"]
        assert result["multiValueHeaders"]["Content-Type"] == ["application/problem+json"]


def test_the_authorizers_principal_is_taken_on_aws(runtime: Runtime, rpc: Call) -> None:
    sent = event("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, token=None)
    sent["requestContext"]["authorizer"] = {"principalId": "viewer"}

    result = build_mcp_handler(runtime)(sent, None)

    names = {t["name"] for t in json.loads(result["body"])["result"]["tools"]}
    assert "create_definition" not in names and "get_run" in names


def test_a_playbooks_endpoint_the_caller_cannot_read_is_404_as_any_route(runtime: Runtime) -> None:
    result = build_mcp_handler(runtime)(event("/v1/orgs/globex/playbooks/launch/mcp", {}), None)

    assert result["statusCode"] == 404
    assert json.loads(result["body"])["detail"] == "Org 'globex' has no playbook 'launch'."


def test_a_body_over_1_mib_is_413(runtime: Runtime) -> None:
    result = build_mcp_handler(runtime)(event("/mcp", "x" * (1024 * 1024 + 1)), None)

    assert result["statusCode"] == 413


def test_another_path_is_404(runtime: Runtime) -> None:
    assert build_mcp_handler(runtime)(event("/elsewhere", {}), None)["statusCode"] == 404


# --- the exchange ---------------------------------------------------------------------------------------


def test_initialize_tells_the_agent_what_parley_is(rpc: Call) -> None:
    reply = rpc(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    )
    result = reply["result"]

    assert result["serverInfo"]["name"] == "parley"
    assert set(result["capabilities"]) >= {"tools", "resources"}
    text = result["instructions"]
    for words in (
        "playbook",
        "definition",
        "run",
        "request",
        "answer_interaction",
        "answer_schema",
        "next_cursor",
    ):
        assert words in text
    for guide in ("interaction-format", "reasoning-format", "agent-runs", "http-api"):
        assert f"guide://{guide}" in text
    assert "acme/campaigns (write)" in text and "acme/lookout (read)" in text


def test_a_scoped_endpoints_instructions_name_its_playbook_only() -> None:
    principal = parse_operator_config(OPERATOR, "test", environ={}).principals[0]
    text = instructions(principal, Target("acme", "lookout"))

    assert "scoped to the playbook lookout of the org acme" in text
    assert "acme/lookout (read)" in text and "campaigns" not in text


def test_a_writer_is_offered_every_tool_and_a_reader_none_that_writes(rpc: Call) -> None:
    from parley.api.registry import OPERATIONS

    everything = {t["name"]: t for t in rpc("tools/list")["result"]["tools"]}
    read = {t["name"]: t for t in rpc("tools/list", token=READER)["result"]["tools"]}

    # Approving a connection takes the org's admin grant, which the writer has not.
    assert list(everything) == [op.name for op in OPERATIONS if op.name != "approve_connection"]
    assert set(read) == {op.name for op in OPERATIONS if op.role == "read"}
    assert all(t["annotations"]["readOnlyHint"] for t in read.values())
    assert everything["retire_definition"]["annotations"]["destructiveHint"] is True
    assert everything["execute"]["annotations"]["openWorldHint"] is True
    assert everything["get_run"]["inputSchema"]["required"] == ["org", "playbook", "run_id"]
    assert everything["list_models"]["inputSchema"]["required"] == ["org"]
    assert everything["get_run"]["outputSchema"]["required"][0] == "run_id"


def test_a_scoped_endpoint_offers_the_tools_of_the_callers_role_there_without_org_and_playbook(
    rpc: Call,
) -> None:
    on_lookout = rpc("tools/list", path="/v1/orgs/acme/playbooks/lookout/mcp")["result"]["tools"]

    # dev only reads lookout (and writes another playbook of the org: it may add connections to the org)
    assert all(
        t["annotations"]["readOnlyHint"]
        for t in on_lookout
        if t["name"] not in ("add_connection", "authorize_connection", "remove_connection")
    )
    for listed in on_lookout:
        assert not {"org", "playbook"} & set(listed["inputSchema"]["properties"]), listed["name"]


# --- tools and results ----------------------------------------------------------------------------------


def test_a_tools_result_is_a_summary_the_json_and_the_http_body(runtime: Runtime, rpc: Call) -> None:
    created = tool(
        rpc,
        "create_definition",
        {"org": "acme", "playbook": "campaigns", "type": "interaction", "name": "ask-yes", "source": SOURCE},
    )
    got = tool(rpc, "get_definition", {"type": "interaction", "name": "ask-yes"}, path=PLAYBOOK)
    http = build_handler(runtime)(
        {**event("/v1/orgs/acme/playbooks/campaigns/definitions/interaction/ask-yes", method="GET")}, None
    )

    assert created.get("isError") is not True
    assert created["content"][0]["text"] == "The interaction definition 'ask-yes' is saved as version 1."
    assert json.loads(created["content"][1]["text"]) == created["structuredContent"]
    assert got["structuredContent"] == json.loads(http["body"])
    assert got["content"][0]["text"] == "The interaction definition 'ask-yes' is at version 1 and active."


def test_a_failure_is_the_problem_http_answers(runtime: Runtime, rpc: Call) -> None:
    arguments = {"type": "interaction", "name": "bad-one", "source": "no front matter"}
    failed = tool(rpc, "create_definition", arguments, path=PLAYBOOK)
    http = build_handler(runtime)(
        {
            **event(
                "/v1/orgs/acme/playbooks/campaigns/definitions/interaction",
                {"name": "bad-one", "source": "no front matter"},
            )
        },
        None,
    )
    problem = json.loads(failed["content"][1]["text"])

    assert failed["isError"] is True
    assert "structuredContent" not in failed
    assert problem == json.loads(http["body"])
    assert problem["reason"] == "invalid_input" and problem["errors"][0]["pointer"] == "/source"
    assert failed["content"][0]["text"] == problem["detail"]


@pytest.mark.parametrize(
    ("arguments", "status", "pointer"),
    [
        ({"playbook": "campaigns", "type": "interaction"}, 422, "/org"),
        ({"org": "acme", "playbook": "campaigns"}, 422, "/type"),
        ({"org": "acme", "playbook": "campaigns", "type": "interaction", "limit": 0}, 400, None),
        ({"org": "acme", "playbook": "campaigns", "type": "interaction", "nope": 1}, 422, "/nope"),
        ({"org": "acme", "playbook": "campaigns", "type": "nonsense"}, 404, None),
        ({"org": "globex", "playbook": "launch", "type": "interaction"}, 404, None),
    ],
)
def test_arguments_are_checked_as_a_request_is(
    rpc: Call, arguments: dict[str, Any], status: int, pointer: str | None
) -> None:
    failed = tool(rpc, "list_definitions", arguments)
    problem = json.loads(failed["content"][1]["text"])

    assert failed["isError"] is True
    assert problem["status"] == status
    if pointer is not None:
        assert problem["errors"][0]["pointer"] == pointer


def test_a_reader_calling_a_tool_that_writes_is_refused_403(rpc: Call) -> None:
    failed = tool(
        rpc,
        "create_definition",
        {"org": "acme", "playbook": "campaigns", "type": "interaction", "name": "ask-yes", "source": SOURCE},
        token=READER,
    )

    assert json.loads(failed["content"][1]["text"])["reason"] == "forbidden"


def test_an_unknown_tool_is_a_404_problem(rpc: Call) -> None:
    failed = tool(rpc, "delete_everything", {})

    assert failed["isError"] is True
    assert json.loads(failed["content"][1]["text"])["reason"] == "not_found"


def test_list_models_takes_the_org_only(rpc: Call) -> None:
    listed = tool(rpc, "list_models", {"org": "acme"})
    scoped = tool(rpc, "list_models", {}, path=PLAYBOOK)
    elsewhere = tool(rpc, "list_models", {"org": "globex"})

    assert listed["structuredContent"]["object"] == "list"
    assert scoped["structuredContent"]["object"] == "list"
    assert json.loads(elsewhere["content"][1]["text"])["status"] == 404


# --- guides ---------------------------------------------------------------------------------------------


def test_the_guides_are_listed_and_read(rpc: Call) -> None:
    listed = rpc("resources/list")["result"]["resources"]
    read = rpc("resources/read", {"uri": "guide://agent-runs"})["result"]["contents"][0]
    missing = rpc("resources/read", {"uri": "guide://nothing"})

    assert [r["uri"] for r in listed] == [
        "guide://interaction-format",
        "guide://reasoning-format",
        "guide://agent-runs",
        "guide://output-shapes",
        "guide://workflow-format",
        "guide://http-api",
    ]
    assert all(r["mimeType"] == "text/markdown" for r in listed)
    assert read["text"] == PAGES["agent-runs"]
    assert missing["error"]["code"] == -32002


# --- the adapter ----------------------------------------------------------------------------------------


def test_an_event_becomes_an_asgi_scope_and_a_reply_a_proxy_result() -> None:
    sent = event("/mcp", None)
    sent["multiValueQueryStringParameters"] = {"a": ["1", "2"]}
    sent["body"] = base64.b64encode(b'{"x": 1}').decode()
    sent["isBase64Encoded"] = True
    body = request_body(sent)
    scope = http_scope(sent, body)
    reply = AsgiReply(
        202, [("content-type", "application/octet-stream"), ("content-length", "3")], bytearray(b"\x00\xff1")
    )

    assert body == b'{"x": 1}'
    assert scope["method"] == "POST" and scope["path"] == "/mcp" and scope["query_string"] == b"a=1&a=2"
    assert (b"authorization", b"Bearer dev-token") in scope["headers"]
    result = proxy_result(reply, {"Cache-Control": "no-store"})
    assert result["statusCode"] == 202 and result["isBase64Encoded"] is True
    assert base64.b64decode(result["body"]) == b"\x00\xff1"
    assert "Content-Length" not in result["multiValueHeaders"]


def test_the_exchange_runs_on_a_thread_of_its_own_where_a_loop_already_runs(runtime: Runtime) -> None:
    import asyncio

    loop = asyncio.new_event_loop()
    asyncio.events._set_running_loop(loop)  # as a test framework's (or a browser driver's) loop would
    try:
        result = build_mcp_handler(runtime)(
            event("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}), None
        )
    finally:
        asyncio.events._set_running_loop(None)
        loop.close()

    assert result["statusCode"] == 200
    assert json.loads(result["body"]) == {"jsonrpc": "2.0", "id": 1, "result": {}}
