"""The tool client's process-wide TLS context, and what a conversation's reads and tellings reuse
(``parley.tools.client.reusing_listings``; issue 26), against real MCP servers on 127.0.0.1.

- The TLS context is made once and checks certificates: a server whose certificate nobody vouches for
  is refused before anything is sent, and the same server is reached once its certificate is trusted.
- Within ``reusing_listings`` a call skips ``server/discover`` once the server's version is known, and
  ``tools/list`` only while the server's ``ttlMs`` lets its listing be stored; outside it (a delivery,
  a function's ``call``, ``execute``) every call discovers and lists.
- A tool the server no longer lists fails the call with the words a fresh listing gives, whether the
  listing was fresh or stored; a server that refuses the version it spoke before is opened afresh,
  the tool called once.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_servers import LocalToolServer, free_port
from self_signed import self_signed
from starlette.types import Receive, Scope, Send

from parley.ports.tools import Bounds, ServerAddress, ToolNotOffered, ToolServerFailure
from parley.tools.client import McpToolClient, forget_listings, reusing_listings, tls_context

QUICK = Bounds(open_seconds=3, list_seconds=3, respond_seconds=3)


@pytest.fixture(autouse=True)
def _forgetting() -> Iterator[None]:
    forget_listings()
    yield
    forget_listings()


@pytest.fixture
def client() -> McpToolClient:
    return McpToolClient(QUICK)


# --- servers -----------------------------------------------------------------------------------------------


class Recorder:
    """An ASGI app in front of an MCP app: records each request's ``mcp-method`` header, and answers
    the next ``refuse`` requests with ``400`` itself."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.methods: list[str] = []
        self.refuse = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
            if scope["method"] == "POST":
                self.methods.append(headers.get("mcp-method", "?"))
            if self.refuse > 0:
                self.refuse -= 1
                await send({"type": "http.response.start", "status": 400, "headers": []})
                await send({"type": "http.response.body", "body": b"Unsupported protocol version"})
                return
        await self.inner(scope, receive, send)


@contextmanager
def serving(app: Any, port: int, **tls: Any) -> Iterator[None]:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", **tls)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"mcp-reuse-test-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class ChatServer:
    """A small MCP server whose listing may be stored (``ttlMs``) or not, with tools to drop."""

    def __init__(self, ttl_ms: int) -> None:
        self.calls: list[str] = []
        self.port = free_port()
        hints: dict[CacheableMethod, CacheHint] = {"tools/list": CacheHint(ttl_ms=ttl_ms)} if ttl_ms else {}
        self.mcp: MCPServer[Any] = MCPServer("reuse-test", cache_hints=hints)

        @self.mcp.tool(name="thread_replies")
        def thread_replies(channel: str) -> dict[str, Any]:
            self.calls.append("thread_replies")
            return {"messages": [], "channel": channel}

        @self.mcp.tool(name="post_message")
        def post_message(channel: str, text: str) -> dict[str, Any]:
            self.calls.append("post_message")
            return {"channel": channel, "ts": "1.0"}

        security = TransportSecuritySettings(allowed_hosts=[f"127.0.0.1:{self.port}"])
        app = self.mcp.streamable_http_app(
            stateless_http=True, json_response=True, transport_security=security
        )
        self.recorder = Recorder(app)

    @property
    def address(self) -> ServerAddress:
        return ServerAddress("chat", f"http://127.0.0.1:{self.port}/mcp", {"Authorization": "Bearer k"})


@contextmanager
def chat_server(ttl_ms: int = 0) -> Iterator[ChatServer]:
    server = ChatServer(ttl_ms)
    with serving(server.recorder, server.port):
        yield server


def read(client: McpToolClient, server: ChatServer, tool: str = "thread_replies") -> Any:
    arguments = (
        {"channel": "C1", "text": "To answer, reply approve."}
        if tool == "post_message"
        else {"channel": "C1"}
    )
    with reusing_listings():
        return client.call_tool(server.address, tool, arguments)


# --- the TLS context ---------------------------------------------------------------------------------------


@pytest.fixture
def https_tools(tmp_path: Path) -> Iterator[tuple[ServerAddress, Path]]:
    """The test tool server over HTTPS with a self-signed certificate."""
    key_file, cert_file = self_signed(tmp_path)
    port = free_port()
    state = LocalToolServer(port)
    with serving(state, port, ssl_certfile=str(cert_file), ssl_keyfile=str(key_file)):
        yield ServerAddress("chat", f"https://127.0.0.1:{port}/mcp", {}), cert_file


@pytest.fixture
def fresh_tls_context(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    tls_context.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    tls_context.cache_clear()


def test_one_tls_context_a_process_that_checks_certificates() -> None:
    context = tls_context()
    assert tls_context() is context
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True


def test_a_certificate_nobody_vouches_for_is_refused(
    client: McpToolClient, https_tools: tuple[ServerAddress, Path], fresh_tls_context: pytest.MonkeyPatch
) -> None:
    address, _ = https_tools
    for _ in range(2):  # the second exchange uses the context the first made
        with pytest.raises(ToolServerFailure) as raised:
            client.call_tool(address, "post_message", {"channel": "C1", "text": "x"})
        assert (raised.value.because, raised.value.stage, raised.value.sent) == ("unreachable", "open", False)
    with reusing_listings(), pytest.raises(ToolServerFailure):
        client.call_tool(address, "post_message", {"channel": "C1", "text": "x"})


def test_the_same_server_is_reached_once_its_certificate_is_trusted(
    client: McpToolClient, https_tools: tuple[ServerAddress, Path], fresh_tls_context: pytest.MonkeyPatch
) -> None:
    address, cert_file = https_tools
    fresh_tls_context.setenv("SSL_CERT_FILE", str(cert_file))
    answer = client.call_tool(address, "post_message", {"channel": "C1", "text": "x"})
    assert answer.is_error is False and answer.answer["channel"] == "C1"


# --- what reads and tellings reuse -------------------------------------------------------------------------


def test_outside_reusing_listings_every_call_discovers_and_lists(client: McpToolClient) -> None:
    with chat_server(ttl_ms=60_000) as server:
        for _ in range(3):
            client.call_tool(server.address, "thread_replies", {"channel": "C1"})
    assert server.recorder.methods == ["server/discover", "tools/list", "tools/call"] * 3
    assert server.calls == ["thread_replies"] * 3


def test_a_read_skips_discover_once_the_version_is_known(client: McpToolClient) -> None:
    with chat_server(ttl_ms=0) as server:
        for _ in range(3):
            assert read(client, server).answer["channel"] == "C1"
    methods = server.recorder.methods
    assert methods == ["server/discover", "tools/list", "tools/call"] + ["tools/list", "tools/call"] * 2
    assert server.calls == ["thread_replies"] * 3


def test_other_credentials_are_another_server(client: McpToolClient) -> None:
    with chat_server(ttl_ms=60_000) as server:
        read(client, server)
        other = ServerAddress("chat", server.address.url, {"Authorization": "Bearer other"})
        with reusing_listings():
            client.call_tool(other, "thread_replies", {"channel": "C1"})
    assert server.recorder.methods == ["server/discover", "tools/list", "tools/call"] * 2


def test_a_listing_the_server_lets_be_stored_is_reused(client: McpToolClient) -> None:
    with chat_server(ttl_ms=60_000) as server:
        for _ in range(3):
            read(client, server)
        read(client, server, "post_message")  # a telling, through the same listing
    methods = server.recorder.methods
    assert methods == ["server/discover", "tools/list", "tools/call"] + ["tools/call"] * 3
    assert server.calls == ["thread_replies"] * 3 + ["post_message"]


def _words_without_reuse(client: McpToolClient, server: ChatServer, tool: str) -> str:
    with pytest.raises(ToolNotOffered) as raised:
        client.call_tool(server.address, tool, {"channel": "C1"})
    return raised.value.detail


@pytest.mark.parametrize("ttl_ms", [0, 60_000])
def test_a_tool_the_server_no_longer_lists_fails_the_read_as_before(
    client: McpToolClient, ttl_ms: int
) -> None:
    with chat_server(ttl_ms=ttl_ms) as server:
        read(client, server)
        read(client, server)
        server.mcp.remove_tool("thread_replies")
        server.recorder.methods.clear()
        with pytest.raises(ToolNotOffered) as raised:
            read(client, server)
        assert raised.value.because == "tool_not_listed"
        assert raised.value.detail == _words_without_reuse(client, server, "thread_replies")
        if ttl_ms:  # the stored listing let the call go; the server refused it, and a fresh listing decided
            assert server.recorder.methods[:3] == ["tools/call", "tools/list", "server/discover"]
        else:  # the fresh listing decided before anything was called
            assert server.recorder.methods[:2] == ["tools/list", "server/discover"]
    assert server.calls == ["thread_replies"] * 2


def test_a_tool_error_on_a_stored_listing_stands(client: McpToolClient) -> None:
    with chat_server(ttl_ms=60_000) as server:

        @server.mcp.tool(name="fails")
        def fails(channel: str) -> str:
            raise ToolError("the chat is down")

        read(client, server)
        server.recorder.methods.clear()
        answer = read(client, server, "fails")
        assert server.recorder.methods == ["tools/call", "tools/list"]  # listed afresh: still listed
    assert answer.is_error is True and "the chat is down" in (answer.text or "")


def test_a_server_that_refuses_the_known_version_is_opened_afresh(client: McpToolClient) -> None:
    with chat_server(ttl_ms=0) as server:
        read(client, server)
        server.recorder.methods.clear()
        server.recorder.refuse = 1  # the pinned version's first request
        assert read(client, server).answer["channel"] == "C1"
        assert server.recorder.methods == ["tools/list", "server/discover", "tools/list", "tools/call"]
        read(client, server)
    assert server.calls == ["thread_replies"] * 3


def test_a_failed_call_forgets_the_version(client: McpToolClient) -> None:
    with chat_server(ttl_ms=0) as server:
        read(client, server)
        server.recorder.refuse = 10  # the pinned listing refused, and the opening afresh
        with pytest.raises(ToolServerFailure) as raised:
            read(client, server)
        assert raised.value.because == "failing"
        server.recorder.refuse = 0
        server.recorder.methods.clear()
        read(client, server)
    assert server.recorder.methods == ["server/discover", "tools/list", "tools/call"]


def test_a_tool_missing_from_a_stored_listing_is_looked_for_afresh(client: McpToolClient) -> None:
    with chat_server(ttl_ms=60_000) as server:
        read(client, server)

        @server.mcp.tool(name="channel_messages")
        def channel_messages(channel: str) -> dict[str, Any]:
            return {"messages": []}

        server.recorder.methods.clear()
        assert read(client, server, "channel_messages").answer == {"messages": []}
        assert server.recorder.methods == ["tools/list", "tools/call"]
        with pytest.raises(ToolNotOffered):
            read(client, server, "never_listed")


def test_an_argument_that_names_a_method_is_not_taken_for_it(client: McpToolClient) -> None:
    with chat_server(ttl_ms=60_000) as server:
        read(client, server, "post_message")
        server.mcp.remove_tool("post_message")
        with reusing_listings(), pytest.raises(ToolNotOffered) as raised:
            client.call_tool(server.address, "post_message", {"channel": "C1", "text": "tools/list"})
    assert raised.value.because == "tool_not_listed"
