"""The MCP client layer against a real MCP server over HTTP on 127.0.0.1 (``tests/mcp_servers.py``):
listing with ``readOnlyHint``, the answer rule, the bounds, and every failure translated into the
page's ``because`` (reasoning-format.md, "Before the model is called", "Limits on time and failures")."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
from mcp_servers import LocalToolServer, unreachable_url

from parley.ports.tools import Bounds, ListedTool, ServerAddress, ToolNotOffered, ToolServerFailure
from parley.tools.client import McpToolClient, answer_of, retry_after_seconds

SECRET = "Bearer sk-test-5f3a9c2e7d"
QUICK = Bounds(open_seconds=3, list_seconds=3, respond_seconds=1.5)


@pytest.fixture
def address(tools: LocalToolServer) -> ServerAddress:
    return ServerAddress("chat", tools.url, {"Authorization": SECRET})


@pytest.fixture
def client() -> McpToolClient:
    return McpToolClient(QUICK)


def test_lists_tools_with_read_only_from_the_hint(client: McpToolClient, address: ServerAddress) -> None:
    listed = {tool.name: tool for tool in client.list_tools(address)}
    assert listed["thread_replies"].read_only is True
    assert listed["post_message"].read_only is False
    assert listed["post_message"].description == "Post a message to a channel, or into a thread."
    schema = listed["post_message"].input_schema
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"channel", "text"}


def test_sends_the_operators_headers(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    client.list_tools(address)
    assert tools.received
    assert all(headers.get("authorization") == SECRET for headers in tools.received)


def test_the_answer_is_the_structured_content(client: McpToolClient, address: ServerAddress) -> None:
    answer = client.call_tool(address, "post_message", {"channel": "C1", "text": "Hello"})
    assert answer.is_error is False
    assert answer.answer["channel"] == "C1"
    assert set(answer.answer) == {"channel", "ts"}
    assert answer.result["structuredContent"] == answer.answer
    assert answer.tool.read_only is False
    assert isinstance(answer.jsonrpc_id, (int, str))
    assert answer.duration_ms >= 0


def test_else_the_first_text_block_parsed_as_json(client: McpToolClient, address: ServerAddress) -> None:
    answer = client.call_tool(address, "json_text", {"value": 7})
    assert answer.answer == {"value": 7, "rows": [1, 2, 3]}
    assert answer.text == '{"value": 7, "rows": [1, 2, 3]}'


def test_else_that_text(client: McpToolClient, address: ServerAddress) -> None:
    answer = client.call_tool(address, "plain_text", {"words": "hi there"})
    assert answer.answer == "You said: hi there"
    assert answer.text == "You said: hi there"


def test_answer_rule_without_text() -> None:
    assert answer_of(None, [{"type": "image", "data": "…", "mimeType": "image/png"}]) == (None, None)
    assert answer_of([1], [{"type": "text", "text": "x"}]) == ([1], "x")
    assert answer_of(None, [{"type": "text", "text": "NaN"}]) == ("NaN", "NaN")


@pytest.mark.parametrize(("tool", "read_only"), [("read_fails", True), ("write_fails", False)])
def test_a_tool_error_is_an_answer_marked_is_error(
    client: McpToolClient, address: ServerAddress, tool: str, read_only: bool
) -> None:
    answer = client.call_tool(address, tool, {"reason": "disk full"})
    assert answer.is_error is True
    assert answer.tool.read_only is read_only
    assert answer.text is not None and "disk full" in answer.text


def test_before_call_sees_the_listed_tool_and_can_stop_the_call(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    seen: list[ListedTool] = []

    class Stop(Exception):
        pass

    def before(tool: ListedTool) -> None:
        seen.append(tool)
        raise Stop

    with pytest.raises(Stop):
        client.call_tool(address, "post_message", {"channel": "C1", "text": "x"}, before_call=before)
    assert [tool.name for tool in seen] == ["post_message"]
    assert tools.calls == []


def test_a_tool_the_server_does_not_list(client: McpToolClient, address: ServerAddress) -> None:
    with pytest.raises(ToolNotOffered) as raised:
        client.call_tool(address, "delete_everything", {})
    assert raised.value.because == "tool_not_listed"
    assert "search" in raised.value.detail


def test_an_unreachable_server(client: McpToolClient) -> None:
    with pytest.raises(ToolServerFailure) as raised:
        client.list_tools(ServerAddress("gone", unreachable_url(), {"Authorization": SECRET}))
    assert (raised.value.because, raised.value.stage, raised.value.sent) == ("unreachable", "open", False)
    assert SECRET not in str(raised.value) and SECRET not in repr(raised.value)


def test_a_slow_tool_past_the_bound(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    with pytest.raises(ToolServerFailure) as raised:
        client.call_tool(address, "slow", {"seconds": 30})
    # The client gave up at its bound (1.5 s), while the tool was still sleeping: not after its answer.
    assert tools.calls == [("slow", {"seconds": 30})]
    assert tools.finished == []
    failure = raised.value
    assert (failure.because, failure.stage, failure.sent, failure.timed_out) == (
        "unreachable",
        "call",
        True,
        True,
    )
    assert failure.history_because == "timed_out"
    assert "1.5 seconds" in failure.detail
    assert failure.jsonrpc_id is not None


def test_a_slow_tool_within_the_bound(address: ServerAddress) -> None:
    answer = McpToolClient(Bounds(respond_seconds=5)).call_tool(address, "slow", {"seconds": 0.2})
    assert answer.answer == {"result": "done"}


def test_429_is_rate_limited_with_retry_after(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    tools.answer_status("thread_replies", 429, {"Retry-After": "7"})
    with pytest.raises(ToolServerFailure) as raised:
        client.call_tool(address, "thread_replies", {"channel": "C1", "ts": "1.0"})
    assert (raised.value.because, raised.value.retry_after_seconds) == ("rate_limited", 7.0)
    assert raised.value.history_because == "server_failure"


def test_a_refused_key(client: McpToolClient, address: ServerAddress, tools: LocalToolServer) -> None:
    tools.require_headers({"Authorization": "Bearer another-key"})
    with pytest.raises(ToolServerFailure) as raised:
        client.list_tools(address)
    assert (raised.value.because, raised.value.stage) == ("key_refused", "open")


def test_a_server_error_on_the_call_is_failing_and_sent(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer
) -> None:
    tools.answer_status("post_message", 500)
    with pytest.raises(ToolServerFailure) as raised:
        client.call_tool(address, "post_message", {"channel": "C1", "text": "x"})
    assert (raised.value.because, raised.value.sent) == ("failing", True)
    assert raised.value.history_because == "server_failure"


def test_a_url_that_is_not_an_mcp_server(client: McpToolClient, tools: LocalToolServer) -> None:
    with pytest.raises(ToolServerFailure) as raised:
        client.list_tools(ServerAddress("wrong", tools.url.replace("/mcp", "/elsewhere")))
    assert raised.value.because == "failing"


def test_no_log_line_holds_the_header_value(
    client: McpToolClient, address: ServerAddress, tools: LocalToolServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client.call_tool(address, "post_message", {"channel": "C1", "text": "x"})
    tools.answer_status("post_message", 500)
    with pytest.raises(ToolServerFailure):
        client.call_tool(address, "post_message", {"channel": "C1", "text": "x"})
    assert caplog.records
    assert all("sk-test-5f3a9c2e7d" not in record.getMessage() for record in caplog.records)
    assert "sk-test" not in repr(address)


def test_works_inside_a_running_event_loop(client: McpToolClient, address: ServerAddress) -> None:
    import asyncio

    async def inside() -> list[ListedTool]:
        return client.list_tools(address)

    assert asyncio.run(inside())


def test_retry_after_forms() -> None:
    now = datetime(2026, 10, 17, 10, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("120") == 120.0
    assert retry_after_seconds("Sat, 17 Oct 2026 10:00:30 GMT", now) == 30.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None
