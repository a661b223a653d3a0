"""The demo chat tool server in process (``parley.demo.server``): the tools through an in-memory MCP
client, and the HTTP side (page, ``/api``, host guard, failure switch) served from a thread."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from parley.demo.chat import Chat
from parley.demo.failures import FailureSwitch
from parley.demo.server import TOOLS, DemoChat, DemoChatOptions, allowed_hosts, build_mcp_server, running

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def call(chat: Chat, failures: FailureSwitch, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """Each tool call's result, through an in-memory client."""

    async def run() -> list[Any]:
        async with Client(build_mcp_server(chat, failures)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(run())


def test_the_tools_and_their_read_only_flags() -> None:
    async def run() -> Any:
        async with Client(build_mcp_server(Chat(), FailureSwitch(TOOLS))) as client:
            return await client.list_tools()

    tools = {tool.name: tool for tool in asyncio.run(run()).tools}

    assert set(tools) == TOOLS
    read_only = {name: tool.annotations.read_only_hint for name, tool in tools.items() if tool.annotations}
    assert read_only == {
        "post_message": False,
        "thread_replies": True,
        "channel_messages": True,
        "list_channels": True,
    }
    assert set(tools["post_message"].input_schema["properties"]) == {"channel", "text", "thread_ts"}
    assert tools["post_message"].input_schema["required"] == ["channel", "text"]
    replies_schema = tools["thread_replies"].input_schema
    assert set(replies_schema["properties"]) == {"channel", "ts", "oldest", "limit"}
    assert replies_schema["properties"]["limit"]["default"] == 15
    assert replies_schema["properties"]["oldest"]["default"] == "0"


def test_post_then_read_the_thread_as_structured_content() -> None:
    chat = Chat()
    (posted,) = call(
        chat, FailureSwitch(TOOLS), ("post_message", {"channel": "maria", "text": "Here is the draft"})
    )
    ts = posted.structured_content["ts"]
    answer = chat.post("maria", "maria", "approve, looks good", thread_ts=ts)

    told, read, channels = call(
        chat,
        FailureSwitch(TOOLS),
        ("post_message", {"channel": "maria", "thread_ts": ts, "text": "Thanks, noted."}),
        ("thread_replies", {"channel": "maria", "ts": ts, "oldest": ts, "limit": 15}),
        ("list_channels", {}),
    )

    told_ts = told.structured_content["ts"]
    assert posted.structured_content == {"channel": "maria", "ts": ts}
    assert not told.is_error
    assert read.structured_content == {
        "messages": [
            {"ts": answer.ts, "user": "maria", "text": "approve, looks good", "thread_ts": ts},
            {"ts": told_ts, "user": "parley", "text": "Thanks, noted.", "thread_ts": ts},
        ],
        "has_more": False,
    }
    assert channels.structured_content == {"channels": [{"channel": "maria", "messages": 3}]}


def test_an_unknown_channel_or_thread_is_a_tool_error_that_says_so() -> None:
    chat = Chat()
    chat.post("maria", "parley", "draft")

    no_channel, no_thread, bad_limit = call(
        chat,
        FailureSwitch(TOOLS),
        ("thread_replies", {"channel": "jon", "ts": "1.000000"}),
        ("post_message", {"channel": "maria", "thread_ts": "1.000000", "text": "hi"}),
        ("thread_replies", {"channel": "maria", "ts": "1.000000", "limit": 0}),
    )

    assert no_channel.is_error
    assert "there is no channel 'jon' (channels: maria)" in no_channel.content[0].text
    assert no_thread.is_error
    assert "there is no message 1.000000 in channel 'maria'" in no_thread.content[0].text
    assert bad_limit.is_error
    assert len(chat.messages("maria")) == 1


def test_the_tool_side_of_the_failure_switch_error_then_slow() -> None:
    chat, failures = Chat(), FailureSwitch(TOOLS)
    failures.arm({"tool": "post_message", "count": 1, "mode": "error"})
    failures.arm({"tool": "thread_replies", "count": 1, "mode": "slow", "seconds": 0.3})
    sent = chat.post("maria", "parley", "draft")

    started = time.monotonic()
    failed, worked, slow = call(
        chat,
        failures,
        ("post_message", {"channel": "maria", "text": "one"}),
        ("post_message", {"channel": "maria", "text": "two"}),
        ("thread_replies", {"channel": "maria", "ts": sent.ts}),
    )

    assert failed.is_error
    assert "failed on purpose" in failed.content[0].text
    assert not worked.is_error
    assert [m.text for m in chat.messages("maria")] == ["draft", "two"]
    assert not slow.is_error
    assert time.monotonic() - started >= 0.3


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoChat]:
    with running(DemoChatOptions(port=0)) as served:
        yield served


@pytest.fixture
def http(demo: DemoChat) -> Iterator[httpx.Client]:
    demo.failures.clear()
    with httpx.Client(base_url=demo.url, timeout=10) as client:
        yield client


def test_the_page_is_plain_html_that_uses_the_api(http: httpx.Client) -> None:
    page = http.get("/")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "/api/channels" in page.text
    assert "/api/reply" in page.text
    assert "http://" not in page.text and "https://" not in page.text  # no external assets


def test_reply_through_the_api_and_see_it_in_the_channel_view(demo: DemoChat, http: httpx.Client) -> None:
    sent = demo.chat.post("view", "parley", "draft")

    replied = http.post(
        "/api/reply", json={"channel": "view", "thread": sent.ts, "user": "maria", "text": "ok"}
    )
    view = http.get("/api/channels").json()

    assert replied.status_code == 201
    assert replied.json() == {"channel": "view", "ts": replied.json()["ts"], "thread_ts": sent.ts}
    (channel,) = [c for c in view["channels"] if c["channel"] == "view"]
    assert channel["threads"] == [
        {"ts": sent.ts, "user": "parley", "text": "draft",
         "replies": [{"ts": replied.json()["ts"], "user": "maria", "text": "ok"}]}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"not json", 400, "not JSON"),
        (json.dumps({"channel": "nobody", "thread": "1.000000", "user": "m", "text": "x"}).encode(), 404,
         "there is no channel 'nobody'"),
        (json.dumps({"channel": "c", "user": "m", "text": 3}).encode(), 400, "are strings"),
        (json.dumps({"channel": "c", "user": "m", "text": "x", "as": "y"}).encode(), 400, "thread"),
        (json.dumps({"channel": "c", "user": "m", "text": " "}).encode(), 400, "text is empty"),
    ],
)  # fmt: skip
def test_a_bad_reply_is_refused_with_words(http: httpx.Client, body: bytes, status: int, words: str) -> None:
    refused = http.post("/api/reply", content=body, headers={"Content-Type": "application/json"})

    assert refused.status_code == status
    assert words in refused.json()["error"]


def test_foreign_hosts_and_origins_are_refused_on_every_path(demo: DemoChat, http: httpx.Client) -> None:
    assert http.get("/", headers={"Host": f"evil.example:{demo.port}"}).status_code == 421
    assert (
        http.post("/mcp", headers={**MCP_HEADERS, "Host": "evil.example"}, content=b"{}").status_code == 421
    )
    assert http.post("/api/reply", headers={"Origin": "http://evil.example"}, json={}).status_code == 403
    assert http.get("/", headers={"Host": f"localhost:{demo.port}"}).status_code == 200
    assert allowed_hosts("::1", 9001) == ["[::1]:9001", "127.0.0.1:9001", "localhost:9001"]


def test_the_http_side_of_the_failure_switch(http: httpx.Client) -> None:
    tools_call = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "thread_replies", "arguments": {}},
        }
    ).encode()
    armed = http.post("/api/failures", json={"tool": "thread_replies", "count": 2, "mode": "retry_after",
                                             "seconds": 2.5})  # fmt: skip
    assert armed.json() == {
        "failures": [{"tool": "thread_replies", "mode": "retry_after", "count": 2, "seconds": 2.5}]
    }

    first = http.post("/mcp", headers=MCP_HEADERS, content=tools_call)
    http.post("/api/failures", json={"tool": "thread_replies", "count": 1, "mode": "server_error"})
    second = http.post("/mcp", headers=MCP_HEADERS, content=tools_call)
    third = http.post("/mcp", headers=MCP_HEADERS, content=tools_call)

    assert (first.status_code, first.headers["retry-after"]) == (429, "3")
    assert second.status_code == 500
    assert third.status_code == 200  # the call reaches the tool again (and fails there: no arguments)
    assert http.get("/api/failures").json() == {"failures": []}


def test_failure_switch_refusals_and_clear(http: httpx.Client) -> None:
    refused = http.post("/api/failures", json={"tool": "send_email"})
    http.post("/api/failures", json={"tool": "post_message", "count": 3})
    cleared = http.delete("/api/failures")

    assert refused.status_code == 400
    assert (
        "tool is one of channel_messages, list_channels, post_message, thread_replies"
        in refused.json()["error"]
    )
    assert cleared.json() == {"failures": []}
