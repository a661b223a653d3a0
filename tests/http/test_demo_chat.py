"""Black-box tests of ``parley demo-chat`` over real HTTP on 127.0.0.1, with the real MCP client
(``docs/demo-chat.md``; the chat example of ``interaction-format.md``, "Sending through a tool")."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.http

READY_WITHIN = 20.0


@dataclass
class DemoChat:
    url: str
    process: subprocess.Popen[bytes]
    output: Path

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=15)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_demo_chat(tmp: Path, port: int | None = None) -> DemoChat:
    port = port or free_port()
    output = tmp / f"demo-chat-{port}.log"
    command = [sys.executable, "-m", "parley.cli", "demo-chat", "--port", str(port)]
    started = time.monotonic()
    with output.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    while time.monotonic() - started < READY_WITHIN:
        if process.poll() is not None:
            raise AssertionError(f"parley demo-chat exited with {process.returncode}:\n{output.read_text()}")
        try:
            httpx.get(url + "/api/channels", timeout=1)
            return DemoChat(url, process, output)
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise AssertionError(f"parley demo-chat did not answer within {READY_WITHIN} s:\n{output.read_text()}")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoChat]:
    running = start_demo_chat(tmp_path_factory.mktemp("demo-chat"))
    yield running
    assert running.stop() == 0, running.output.read_text()


@pytest.fixture
def http(demo: DemoChat) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=demo.url, timeout=10) as client:
        client.delete("/api/failures")
        yield client


def mcp(url: str, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """Each call's result through one MCP client session over streamable HTTP; an exception raised by
    a call is its result."""

    async def run() -> list[Any]:
        results: list[Any] = []
        async with Client(url) as client:
            for name, arguments in calls:
                try:
                    results.append(await client.call_tool(name, arguments))
                except MCPError as exc:
                    results.append(exc)
        return results

    return asyncio.run(run())


def reply_from_terminal(demo: DemoChat, channel: str, thread: str, user: str, text: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "parley.cli", "demo-chat", "reply", "--url", demo.url, "--channel", channel,
         "--thread", thread, "--user", user, text],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_it_says_where_it_serves(demo: DemoChat) -> None:
    first_line = demo.output.read_text().splitlines()[0]
    assert first_line.startswith(f"The demo chat is serving {demo.url} (MCP endpoint {demo.mcp_url};")


def test_the_tools_listed_over_mcp_with_read_only_from_their_hints(demo: DemoChat) -> None:
    async def run() -> Any:
        async with Client(demo.mcp_url) as client:
            return await client.list_tools()

    tools = {tool.name: tool for tool in asyncio.run(run()).tools}

    assert {name: tool.annotations.read_only_hint for name, tool in tools.items() if tool.annotations} == {
        "post_message": False, "thread_replies": True, "channel_messages": True, "list_channels": True
    }  # fmt: skip
    assert tools["post_message"].output_schema is not None
    assert set(tools["post_message"].output_schema["properties"]) == {"channel", "ts"}


def test_deliver_reply_from_page_and_terminal_and_read_since_a_point(
    demo: DemoChat, http: httpx.Client
) -> None:
    # deliver: post_message {channel: to, text: message}; sent: {conversation: /channel, id: /ts}
    (posted,) = mcp(demo.mcp_url, ("post_message", {"channel": "maria", "text": "Here is the draft: …"}))
    assert not posted.is_error
    channel, ts = posted.structured_content["channel"], posted.structured_content["ts"]
    assert channel == "maria"

    # The person replies: once from the page's endpoint, once from the terminal.
    from_page = http.post(
        "/api/reply", json={"channel": "maria", "thread": ts, "user": "maria", "text": "hmm"}
    )
    assert from_page.status_code == 201
    printed = reply_from_terminal(demo, "maria", ts, "maria", "approve, looks good")

    # replies: thread_replies {channel, ts, oldest: since | default "0", limit: 15}
    everything, since_first = mcp(
        demo.mcp_url,
        ("thread_replies", {"channel": channel, "ts": ts, "oldest": "0", "limit": 15}),
        ("thread_replies", {"channel": channel, "ts": ts, "oldest": from_page.json()["ts"], "limit": 15}),
    )

    listed = everything.structured_content["messages"]
    assert [(m["user"], m["text"], m["thread_ts"]) for m in listed] == [
        ("parley", "Here is the draft: …", ts), ("maria", "hmm", ts), ("maria", "approve, looks good", ts)
    ]  # fmt: skip
    assert everything.structured_content["has_more"] is False
    assert listed[0]["ts"] == ts
    assert listed[1]["ts"] < listed[2]["ts"]
    assert since_first.structured_content == {"messages": listed[2:], "has_more": False}
    assert printed == f"Posted {listed[2]['ts']} as maria in #maria, thread {ts}.\n"


def test_tell_posts_in_the_thread_and_limit_says_there_is_more(demo: DemoChat) -> None:
    (posted,) = mcp(demo.mcp_url, ("post_message", {"channel": "jon", "text": "Draft for Jon"}))
    ts = posted.structured_content["ts"]

    told, first_two = mcp(
        demo.mcp_url,
        (
            "post_message",
            {"channel": "jon", "thread_ts": ts, "text": "Reply approve, or revise with a note."},
        ),
        ("thread_replies", {"channel": "jon", "ts": ts, "limit": 1}),
    )

    assert not told.is_error
    assert first_two.structured_content["has_more"] is True
    assert [m["ts"] for m in first_two.structured_content["messages"]] == [ts]


def test_an_unknown_channel_or_thread_is_a_tool_error(demo: DemoChat) -> None:
    no_channel, no_thread = mcp(
        demo.mcp_url,
        ("thread_replies", {"channel": "nobody-here", "ts": "1.000001", "oldest": "0", "limit": 15}),
        ("post_message", {"channel": "nobody-here", "thread_ts": "1.000001", "text": "hi"}),
    )

    assert no_channel.is_error
    assert "there is no channel 'nobody-here'" in no_channel.content[0].text
    assert no_thread.is_error


def test_the_failure_switch_fails_the_next_calls_then_lets_them_through(
    demo: DemoChat, http: httpx.Client
) -> None:
    http.post("/api/failures", json={"tool": "post_message", "count": 2, "mode": "error"})
    posting = ("post_message", {"channel": "failures", "text": "try"})

    first, second, third = mcp(demo.mcp_url, posting, posting, posting)

    assert first.is_error and second.is_error
    assert "failed on purpose" in first.content[0].text
    assert not third.is_error
    view = http.get("/api/channels").json()["channels"]
    assert [len(c["threads"]) for c in view if c["channel"] == "failures"] == [1]


@pytest.mark.parametrize(("mode", "status"), [("server_error", 500), ("retry_after", 429)])
def test_server_failures_reach_the_mcp_client_as_errors(
    demo: DemoChat, http: httpx.Client, mode: str, status: int
) -> None:
    http.post("/api/failures", json={"tool": "list_channels", "count": 1, "mode": mode, "seconds": 7})

    failed, worked = mcp(demo.mcp_url, ("list_channels", {}), ("list_channels", {}))

    assert isinstance(failed, MCPError)
    assert not worked.is_error
    # What the client does not show: the status and Retry-After, as a raw call sees them.
    http.post("/api/failures", json={"tool": "list_channels", "count": 1, "mode": mode, "seconds": 7})
    raw = http.post(
        "/mcp",
        headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_channels"}},
    )
    assert raw.status_code == status
    assert raw.headers.get("retry-after") == ("7" if mode == "retry_after" else None)


def test_a_slow_tool_answers_late_but_answers(demo: DemoChat, http: httpx.Client) -> None:
    http.post("/api/failures", json={"tool": "list_channels", "count": 1, "mode": "slow", "seconds": 1})

    started = time.monotonic()
    (listed,) = mcp(demo.mcp_url, ("list_channels", {}))

    assert time.monotonic() - started >= 1
    assert not listed.is_error


def test_the_page_loads(http: httpx.Client) -> None:
    page = http.get("/")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "<title>Parley demo chat</title>" in page.text
    assert '<script src="/markdown-it.min.js"></script>' in page.text
    renderer = http.get("/markdown-it.min.js")
    assert renderer.status_code == 200 and "markdownit" in renderer.text


def test_a_foreign_host_is_refused(demo: DemoChat, http: httpx.Client) -> None:
    port = demo.url.rsplit(":", 1)[1]
    assert http.post("/mcp", headers={"Host": f"rebound.example:{port}"}, json={}).status_code == 421
    assert http.post("/api/reply", headers={"Host": f"rebound.example:{port}"}, json={}).status_code == 421


def test_ctrl_c_stops_it_cleanly_and_a_taken_port_is_said(tmp_path: Path) -> None:
    second = start_demo_chat(tmp_path)
    port = second.url.rsplit(":", 1)[1]

    taken = subprocess.run(
        [sys.executable, "-m", "parley.cli", "demo-chat", "--port", port],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip

    assert second.stop(signal.SIGINT) == 0, second.output.read_text()
    assert taken.returncode == 1
    assert taken.stderr.startswith(f"parley demo-chat: port {port} on 127.0.0.1 is in use")
    assert "--port" in taken.stderr
