"""search, introspect, execute and dry_run through the API's Lambda handler, with moto's DynamoDB and a
real MCP server over HTTP on 127.0.0.1 (http-api.md, "Tool servers"; reasoning-format.md, "Before the
model is called", "The run's history")."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from mcp_servers import LocalToolServer, unreachable_url

from parley.api.app import build_handler
from parley.clock import ManualClock
from parley.config import parse_operator_config
from parley.definitions.store import DynamoDefinitionStore
from parley.ports.runtime import Runtime
from parley.ports.tools import Bounds
from parley.tools.client import McpToolClient

BASE = "/v1/orgs/acme/playbooks/campaigns"
CREDENTIAL = "sk-live-8d1e44c0b7"
SECRET = f"Bearer {CREDENTIAL}"
QUICK = Bounds(open_seconds=3, list_seconds=3, respond_seconds=1.5)
CHAT_TOOLS = ["post_message", "thread_replies", "json_text", "read_fails", "write_fails", "slow", "whoami"]


def operator_yaml(url: str) -> str:
    return f"""
principals:
  - {{ id: dev, token: dev-token, grants: [{{ org: acme, playbook: campaigns, role: write }}] }}
  - {{ id: viewer, token: viewer-token, grants: [{{ org: acme, playbook: campaigns, role: read }}] }}
tool_servers:
  - name: chat
    url: {url}
    orgs: [acme]
    playbooks: [campaigns]
    allowed: {json.dumps(CHAT_TOOLS)}
    headers: {{ Authorization: "{SECRET}" }}
  - name: other-org
    url: {url}
    orgs: [globex]
  - name: other-playbook
    url: {url}
    orgs: [acme]
    playbooks: [launches]
  - name: gone
    url: {unreachable_url()}
    orgs: [acme]
  - name: quiet
    url: {url}
    orgs: [acme]
    record_content: false
"""


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: Any


Call = Callable[..., Reply]


@pytest.fixture
def runtime(dynamodb: tuple[Any, str], manual_clock: ManualClock, tools: LocalToolServer) -> Runtime:
    client, table = dynamodb
    return Runtime(
        definitions=DynamoDefinitionStore(client, table),
        clock=manual_clock,
        operator=parse_operator_config(operator_yaml(tools.url), "test", environ={}),
        tool_client=McpToolClient(QUICK),
    )


@pytest.fixture
def call(runtime: Runtime, load_event: Callable[[str], dict[str, Any]]) -> Call:
    handler = build_handler(runtime)

    def invoke(
        method: str,
        path: str,
        body: Any = None,
        query: dict[str, str] | None = None,
        token: str = "dev-token",
    ) -> Reply:
        event = load_event("api/get_definition")
        event["httpMethod"] = event["requestContext"]["httpMethod"] = method
        event["path"] = BASE + path
        event["pathParameters"] = {"proxy": (BASE + path).removeprefix("/v1/")}
        event["requestContext"]["path"] = "/prod" + BASE + path
        event["queryStringParameters"] = query
        event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} if query else None
        event["headers"]["Authorization"] = f"Bearer {token}"
        event["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
        if body is not None:
            event["body"] = json.dumps(body)
            event["headers"]["Content-Type"] = "application/json"
            event["multiValueHeaders"]["Content-Type"] = ["application/json"]
        result = handler(event, None)
        headers = {k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
        return Reply(result["statusCode"], headers, json.loads(result["body"]) if result["body"] else None)

    return invoke


def problem(reply: Reply, status: int, reason: str, kind: str | None, because: str | None) -> dict[str, Any]:
    assert reply.status == status, reply.body
    assert reply.headers["Content-Type"] == "application/problem+json"
    assert (reply.body["reason"], reply.body.get("kind"), reply.body.get("because")) == (
        reason,
        kind,
        because,
    )
    body: dict[str, Any] = reply.body
    return body


def events(call: Call) -> list[dict[str, Any]]:
    listed = call("GET", "/events", query={"order": "asc"})
    assert listed.status == 200, listed.body
    found: list[dict[str, Any]] = listed.body["events"]
    return found


def execute(call: Call, server: str, tool: str, arguments: Any) -> Reply:
    return call("POST", f"/tool-servers/{server}/tools/{tool}/execute", {"arguments": arguments})


def sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


# --- search and introspect -------------------------------------------------------------------------------


def test_search_shows_only_the_servers_serving_the_playbook_and_their_allowed_tools(call: Call) -> None:
    found = call("GET", "/tool-servers/search", token="viewer-token")
    assert found.status == 200, found.body
    assert found.headers["Cache-Control"] == "no-store"
    servers = {entry["server"]: entry for entry in found.body["servers"]}
    assert list(servers) == ["chat", "gone", "quiet"]
    chat = {tool["tool"]: tool for tool in servers["chat"]["tools"]}
    assert sorted(chat) == sorted(CHAT_TOOLS)  # plain_text is listed by the server, not allowed
    assert chat["thread_replies"] == {
        "tool": "thread_replies",
        "description": "List the replies of a thread since a point.",
        "read_only": True,
    }
    assert chat["post_message"]["read_only"] is False
    assert "plain_text" in {tool["tool"] for tool in servers["quiet"]["tools"]}  # no allowed: every tool
    assert servers["gone"]["tools"] == []
    assert servers["gone"]["because"] == "unreachable"


def test_search_terms_match_words_of_names_and_descriptions(call: Call) -> None:
    found = call("GET", "/tool-servers/search", query={"terms": "thread replies"})
    chat = next(entry for entry in found.body["servers"] if entry["server"] == "chat")
    assert chat["tools"][0]["tool"] == "thread_replies"
    assert {tool["tool"] for tool in chat["tools"]} <= {"thread_replies", "post_message"}
    nothing = call("GET", "/tool-servers/search", query={"terms": "zebra"})
    assert [entry["server"] for entry in nothing.body["servers"]] == ["gone"]


def test_introspect_gives_the_input_schema(call: Call) -> None:
    got = call("GET", "/tool-servers/chat/tools/post_message", token="viewer-token")
    assert got.status == 200, got.body
    assert got.body["server"] == "chat"
    assert got.body["tool"] == "post_message"
    assert got.body["read_only"] is False
    assert set(got.body["input_schema"]["properties"]) == {"channel", "text", "thread_ts"}


@pytest.mark.parametrize(
    ("server_name", "tool", "because"),
    [
        ("other-org", "post_message", "tool_server_not_configured"),
        ("other-playbook", "post_message", "tool_server_not_configured"),
        ("nobody", "post_message", "tool_server_not_configured"),
        ("chat", "plain_text", "tool_not_allowed"),
        ("quiet", "no_such_tool", "tool_not_listed"),
    ],
)
def test_a_tool_not_offered_is_not_found(
    call: Call, tools: LocalToolServer, server_name: str, tool: str, because: str
) -> None:
    for reply in (
        call("GET", f"/tool-servers/{server_name}/tools/{tool}"),
        execute(call, server_name, tool, {}),
    ):
        body = problem(reply, 404, "not_found", "tool_not_offered", because)
        assert "search" in body["detail"]
    assert tools.calls == []
    assert events(call) == []


def test_an_unreachable_server_is_unavailable(call: Call) -> None:
    reply = call("GET", "/tool-servers/gone/tools/anything")
    problem(reply, 503, "unavailable", "tool_server_failed", "unreachable")


# --- execute ---------------------------------------------------------------------------------------------


def test_execute_calls_once_and_records_the_call(call: Call, tools: LocalToolServer) -> None:
    arguments = {"channel": "C0ACME", "text": "Hello"}
    reply = execute(call, "chat", "post_message", arguments)
    assert reply.status == 200, reply.body
    assert reply.body["outcome"] == "answered"
    assert reply.body["is_error"] is False
    assert reply.body["answer"]["channel"] == "C0ACME"
    assert json.loads(reply.body["text"]) == reply.body["answer"]
    assert isinstance(reply.body["duration_ms"], int)
    assert [name for name, _ in tools.calls] == ["post_message"]

    started, answered = events(call)
    assert (started["type"], answered["type"]) == ("tool_call_started", "tool_call_answered")
    assert "run_id" not in started
    data = started["data"]
    assert data["call_id"] == answered["data"]["call_id"]
    assert (data["server"], data["tool"], data["read_only"], data["executed_by"]) == (
        "chat", "post_message", False, "dev",
    )  # fmt: skip
    assert data["arguments"] == arguments
    assert data["arguments_size"] == len(json.dumps(arguments, separators=(",", ":")))
    assert data["arguments_digest"] == sha256(arguments)
    result = answered["data"]
    assert result["is_error"] is False
    assert result["result"]["structuredContent"] == reply.body["answer"]
    assert result["result_digest"] == sha256(result["result"])
    assert result["result_size"] > 0
    assert result["jsonrpc_id"] is not None
    whole = call("GET", f"/events/{answered['id']}")
    assert whole.body["data"] == result


@pytest.mark.parametrize(("tool", "read_only"), [("read_fails", True), ("write_fails", False)])
def test_a_tool_error_is_an_answer(call: Call, tool: str, read_only: bool) -> None:
    reply = execute(call, "chat", tool, {"reason": "quota"})
    assert reply.status == 200, reply.body
    assert (reply.body["outcome"], reply.body["is_error"]) == ("tool_error", True)
    assert "quota" in reply.body["text"]
    started, answered = events(call)
    assert started["data"]["read_only"] is read_only
    assert answered["data"]["is_error"] is True


def test_a_slow_read_only_tool_is_tools_unfinished(call: Call) -> None:
    reply = execute(call, "chat", "slow", {"seconds": 5})
    body = problem(reply, 503, "tools_unfinished", "tools_unfinished", "server_failed")
    assert "1.5 seconds" in body["detail"]
    started, failed = events(call)
    assert failed["type"] == "tool_call_failed"
    assert failed["data"]["because"] == "timed_out"
    assert failed["data"]["call_id"] == started["data"]["call_id"]


def test_a_failing_writing_tool_is_effect_unknown(call: Call, tools: LocalToolServer) -> None:
    tools.answer_status("post_message", 500)
    reply = execute(call, "chat", "post_message", {"channel": "C1", "text": "x"})
    problem(reply, 409, "effect_unknown", "effect_unknown", "server_failed")
    assert [event["type"] for event in events(call)] == ["tool_call_started", "tool_call_failed"]
    assert events(call)[1]["data"]["because"] == "server_failure"


def test_a_failing_read_only_tool_is_tools_unfinished(call: Call, tools: LocalToolServer) -> None:
    tools.answer_status("thread_replies", 502)
    reply = execute(call, "chat", "thread_replies", {"channel": "C1", "ts": "1.0"})
    problem(reply, 503, "tools_unfinished", "tools_unfinished", "server_failed")


def test_429_is_rate_limited_with_retry_after(call: Call, tools: LocalToolServer) -> None:
    tools.answer_status("thread_replies", 429, {"Retry-After": "7"})
    reply = execute(call, "chat", "thread_replies", {"channel": "C1", "ts": "1.0"})
    problem(reply, 503, "unavailable", "tool_server_failed", "rate_limited")
    assert reply.headers["Retry-After"] == "7"


def test_a_refused_key(call: Call, tools: LocalToolServer) -> None:
    tools.require_headers({"Authorization": "Bearer rotated"})
    reply = execute(call, "chat", "thread_replies", {"channel": "C1", "ts": "1.0"})
    problem(reply, 503, "unavailable", "tool_server_failed", "key_refused")
    assert events(call) == []


def test_an_unreachable_server_on_execute(call: Call) -> None:
    reply = execute(call, "gone", "anything", {})
    problem(reply, 503, "unavailable", "tool_server_failed", "unreachable")
    assert events(call) == []


def test_arguments_are_checked_before_anything_is_sent(call: Call, tools: LocalToolServer) -> None:
    wrong = execute(call, "chat", "post_message", {"channel": 5})
    body = problem(wrong, 422, "invalid_input", None, None)
    assert {entry["pointer"] for entry in body["errors"]} == {"/arguments/channel", "/arguments"}
    large = execute(call, "chat", "post_message", {"channel": "C1", "text": "x" * 17_000})
    body = problem(large, 422, "invalid_input", None, None)
    assert body["errors"][0]["pointer"] == "/arguments"
    not_object = execute(call, "chat", "post_message", [1])
    problem(not_object, 422, "invalid_input", None, None)
    assert tools.calls == []
    assert events(call) == []


def test_execute_needs_write(call: Call, tools: LocalToolServer) -> None:
    reply = call(
        "POST", "/tool-servers/chat/tools/post_message/execute", {"arguments": {}}, token="viewer-token"
    )
    problem(reply, 403, "forbidden", None, None)
    assert tools.calls == []


def test_record_content_off_keeps_sizes_only(call: Call) -> None:
    reply = execute(call, "quiet", "json_text", {"value": 3})
    assert reply.status == 200, reply.body
    assert reply.body["answer"] == {"value": 3, "rows": [1, 2, 3]}
    started, answered = events(call)
    assert "arguments" not in started["data"] and "arguments_digest" not in started["data"]
    assert "result" not in answered["data"] and "result_digest" not in answered["data"]
    assert started["data"]["arguments_size"] == len('{"value":3}')
    assert answered["data"]["result_size"] > 0


def test_the_secret_header_is_sent_and_appears_nowhere(call: Call, tools: LocalToolServer) -> None:
    replies = [
        call("GET", "/tool-servers/search"),
        call("GET", "/tool-servers/chat/tools/whoami"),
        execute(call, "chat", "whoami", {}),
        execute(call, "chat", "post_message", {"channel": "C1", "text": f"my key is {SECRET}"}),
        execute(call, "chat", "slow", {"seconds": 5}),
        call("POST", "/tool-servers/chat/tools/whoami/dry-run", {"arguments": {"x": CREDENTIAL}}),
    ]
    # "quiet" (searched too) has no headers; every request of "chat" carried the key
    assert {headers.get("authorization") for headers in tools.received} == {SECRET, None}
    echoed = replies[2].body
    assert echoed["answer"] == {"authorization": "[secret]"}
    listed = events(call)
    assert len(listed) == 6
    whole = [call("GET", f"/events/{event['id']}").body for event in listed]
    shown = json.dumps([reply.body for reply in replies] + listed + whole) + repr(replies)
    assert CREDENTIAL not in shown
    assert "[secret]" in json.dumps(whole)


# --- dry_run ---------------------------------------------------------------------------------------------


def test_dry_run_checks_and_calls_nothing(call: Call, tools: LocalToolServer) -> None:
    reply = call(
        "POST", "/tool-servers/chat/tools/post_message/dry-run", {"arguments": {"channel": "C1", "text": "x"}}
    )
    assert reply.status == 200, reply.body
    assert reply.body["would_call"] is True
    assert reply.body["read_only"] is False
    assert [(c["check"], c["ok"]) for c in reply.body["checks"]] == [
        ("tool_server_configured", True),
        ("tool_allowed", True),
        ("tool_listed", True),
        ("arguments_size", True),
        ("arguments_match_schema", True),
    ]
    assert tools.calls == []
    assert events(call) == []


def test_dry_run_says_what_would_fail(call: Call, tools: LocalToolServer) -> None:
    wrong = call("POST", "/tool-servers/chat/tools/post_message/dry-run", {"arguments": {"channel": 5}})
    checks = {c["check"]: c for c in wrong.body["checks"]}
    assert wrong.body["would_call"] is False
    assert checks["arguments_match_schema"]["ok"] is False
    assert {e["pointer"] for e in checks["arguments_match_schema"]["errors"]} == {
        "/arguments/channel",
        "/arguments",
    }

    hidden = call("POST", "/tool-servers/other-org/tools/post_message/dry-run", {"arguments": {}})
    assert hidden.status == 200
    assert [(c["check"], c["ok"], c.get("because")) for c in hidden.body["checks"]] == [
        ("tool_server_configured", False, "tool_server_not_configured"),
        ("tool_allowed", None, None),
        ("tool_listed", None, None),
        ("arguments_size", True, None),
        ("arguments_match_schema", None, None),
    ]
    unlisted = call("POST", "/tool-servers/gone/tools/x/dry-run", {"arguments": {"a": "b" * 17_000}})
    checks = {c["check"]: c for c in unlisted.body["checks"]}
    assert (checks["tool_listed"]["ok"], checks["tool_listed"]["because"]) == (False, "unreachable")
    assert (checks["arguments_size"]["ok"], checks["arguments_size"]["because"]) == (False, "too_large")
    assert tools.calls == []


def test_lists_show_large_arguments_as_their_size(call: Call) -> None:
    execute(call, "chat", "post_message", {"channel": "C1", "text": "x" * 3000})
    started = events(call)[0]
    assert started["data"]["arguments"] == {"size": 3000 + len('{"channel":"C1","text":""}')}
    assert started["omitted"] == ["arguments"]
