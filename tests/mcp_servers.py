"""A real MCP tool server for tests: mcp's ``MCPServer`` over streamable HTTP (stateless, JSON
responses), served by uvicorn on 127.0.0.1 in a thread of the test process.

respx does not see the mcp client's traffic (it goes through httpx2), so tests talk to this server
over real HTTP. Its tools, and how to make it fail on command:

- ``post_message(channel, text, thread_ts?)`` → structured ``{channel, ts}`` (writes);
- ``thread_replies(channel, ts, oldest?, limit?)`` → structured ``{messages: [...], has_more}``
  (read-only);
- ``json_text(value)`` → one text block holding JSON, no structured content (read-only);
- ``plain_text(words)`` → one text block that is not JSON (read-only);
- ``read_fails(reason)`` / ``write_fails(reason)`` → a tool error (``isError``), read-only / writing;
- ``slow(seconds)`` → answers after sleeping (read-only); ``server.finished`` lists the ``slow`` calls
  whose sleep has ended, so a test tells "gave up first" from "waited for the answer" without a clock;
- ``whoami()`` → echoes the ``Authorization`` header it received, in text and structured content
  (read-only), to test that results are scrubbed;
- ``post_echo(channel, text?, ts?, extra?)`` → structured ``{channel, ts}`` with ``ts`` exactly as it
  was sent (left out when not sent), so a test chooses what ``deliver.sent`` reads (writes);
- ``preview_post(channel, text)`` → the text ``Post "<text>" to <channel>? It will be seen by everyone
  in the channel.`` (read-only): a preview tool for approvals;
- ``ask_place(query)`` → a tool that asks (agent-runs.md, "A tool that asks"; read-only): the text
  ``I need to know which place you meant by "<query>".`` and, in the result's ``_meta`` under
  ``parley/interaction``, a ``choice`` request (Kyoto Station, recommended, or Kyoto Tower; custom and
  skip allowed) whose continuation is ``resolve_place`` with ``{"draft": query}``. The query
  ``"bad continuation"`` names ``thread_replies`` instead (a tool whose listing does not say it takes
  an answer); the query ``"twice"`` gives the continuation ``{"draft": "twice", "round": 1}``;
- ``resolve_place(draft, round=0)`` → the continuation (writes): its listing's ``_meta`` says
  ``parley/requires_interaction_response: true``. It reads the request's
  ``_meta["parley/interaction_response"]`` and answers the text ``Resolved <draft> to <the answer as
  JSON>.`` (``Resolved <draft> with no answer.`` without one); ``draft="twice", round=1`` asks again
  instead: a ``text`` request, ``Any note for the driver?``, continued by ``resolve_place`` with
  ``{"draft": "twice", "round": 2}``;
- ``server.answer_status(tool, status, headers, times=None)``: calls of that tool answer the HTTP status
  instead (``429`` with ``Retry-After``, ``500``…), the next ``times`` calls only when given;
  ``server.require_headers({...})``: any request without those header values answers ``401``;
- ``server.fail_next(tool, times)``: the next ``times`` calls of ``post_message`` or ``post_echo``
  answer a tool error (``isError``), then the tool works again;
- ``server.hide_tool(tool)``: the server stops listing the tool (``reset`` lists it again);
- ``server.received``: the headers of every HTTP request, lowercased names; ``server.calls``: each
  ``tools/call`` that reached the server, as ``(tool, arguments)``; ``server.metas``: the request
  ``_meta`` of each of those calls, at the same index (``{}`` when none; the ``io.modelcontextprotocol/``
  keys the mcp client adds on its own are left out).

Use ``running_tool_server()`` as a context manager, or the ``tool_server`` fixture of a test module.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

READ_ONLY = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)

#: The keys of agent-runs.md, "A tool that asks".
INTERACTION = "parley/interaction"
INTERACTION_RESPONSE = "parley/interaction_response"
REQUIRES_INTERACTION_RESPONSE = "parley/requires_interaction_response"
#: The prefix of the ``_meta`` keys the mcp client adds to every request on its own.
_RESERVED_META = "io.modelcontextprotocol/"

#: The request ``_meta`` of the ``tools/call`` being served (set by ``_Server.call_tool``; sync tools run
#: on a worker thread that anyio gives a copy of this context).
_request_meta: ContextVar[dict[str, Any] | None] = ContextVar("_request_meta", default=None)


class Posted(BaseModel):
    channel: str
    ts: str


class Reply(BaseModel):
    ts: str
    user: str
    text: str
    thread_ts: str


class Replies(BaseModel):
    messages: list[Reply]
    has_more: bool


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LocalToolServer:
    """The test server's state and controls (see the module's docstring)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.received: list[dict[str, str]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.finished: list[tuple[str, dict[str, Any]]] = []
        self.metas: list[dict[str, Any]] = []
        self._statuses: dict[str, tuple[int, dict[str, str], int | None]] = {}
        self._failing: dict[str, int] = {}
        self._hidden: set[str] = set()
        self._required: dict[str, str] = {}
        self._last_headers: dict[str, str] = {}
        self._posted = 0
        self.mcp = self._build()
        self._inner = self.mcp.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(allowed_hosts=[f"127.0.0.1:{port}"]),
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def answer_status(
        self, tool: str, status: int, headers: dict[str, str] | None = None, times: int | None = None
    ) -> None:
        self._statuses[tool] = (status, headers or {}, times)

    def fail_next(self, tool: str, times: int) -> None:
        self._failing[tool] = times

    def hide_tool(self, tool: str) -> None:
        self._hidden.add(tool)

    def require_headers(self, headers: dict[str, str]) -> None:
        self._required = {name.lower(): value for name, value in headers.items()}

    def reset(self) -> None:
        self.received.clear()
        self.calls.clear()
        self.finished.clear()
        self.metas.clear()
        self._statuses.clear()
        self._failing.clear()
        self._hidden.clear()
        self._required.clear()

    # --- the ASGI app: records headers, answers statuses on command, then hands over to mcp ----------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._inner(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        self.received.append(headers)
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
        if any(headers.get(name) != value for name, value in self._required.items()):
            await _answer(send, 401, {"WWW-Authenticate": "Bearer"}, b"")
            return
        tool = _called_tool(body)
        if tool is not None and tool in self._statuses:
            status, extra, times = self._statuses[tool]
            if times is not None:
                if times <= 1:
                    del self._statuses[tool]
                else:
                    self._statuses[tool] = (status, extra, times - 1)
            await _answer(send, status, extra, b"")
            return
        self._last_headers = headers
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self._inner(scope, replay, send)

    # --- the tools ---------------------------------------------------------------------------------

    def _record(self, call: tuple[str, dict[str, Any]]) -> None:
        """Record a call and its request ``_meta`` (at the same index of ``calls`` and ``metas``)."""
        self.calls.append(call)
        self.metas.append(dict(_request_meta.get() or {}))

    def _fail_if_asked(self, tool: str) -> None:
        left = self._failing.get(tool, 0)
        if left > 0:
            self._failing[tool] = left - 1
            raise ToolError(f"{tool} failed on command ({left - 1} more to come)")

    def _build(self) -> MCPServer:
        hidden = self._hidden

        class _Server(MCPServer):
            async def list_tools(self) -> list[Any]:
                return [tool for tool in await super().list_tools() if tool.name not in hidden]

            async def call_tool(
                self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
            ) -> Any:
                meta: Mapping[str, Any] = {}
                if context is not None:
                    meta = context.request_context.meta or {}
                own = {key: value for key, value in meta.items() if not key.startswith(_RESERVED_META)}
                token = _request_meta.set(own)
                try:
                    return await super().call_tool(name, arguments, context)
                finally:
                    _request_meta.reset(token)

        server: MCPServer = _Server("parley-test-tools")

        @server.tool(description="Post a message to a channel, or into a thread.", annotations=WRITES)
        def post_message(channel: str, text: str, thread_ts: str | None = None) -> Posted:
            self._record(("post_message", {"channel": channel, "text": text, "thread_ts": thread_ts}))
            self._fail_if_asked("post_message")
            self._posted += 1
            return Posted(channel=channel, ts=f"1700000000.{self._posted:06d}")

        @server.tool(description="Post a message; answer the ts it was given.", annotations=WRITES)
        def post_echo(channel: str, text: str = "", ts: Any = None, extra: Any = None) -> dict[str, Any]:
            self._record(("post_echo", {"channel": channel, "text": text, "ts": ts, "extra": extra}))
            self._fail_if_asked("post_echo")
            return {"channel": channel} if ts is None else {"channel": channel, "ts": ts}

        @server.tool(description="List the replies of a thread since a point.", annotations=READ_ONLY)
        def thread_replies(channel: str, ts: str, oldest: str = "0", limit: int = 15) -> Replies:
            self._record(("thread_replies", {"channel": channel, "ts": ts}))
            reply = Reply(ts="1700000001.000100", user="U1", text="approve", thread_ts=ts)
            return Replies(messages=[reply][:limit], has_more=False)

        @server.tool(
            description="Answer a JSON document as text.", annotations=READ_ONLY, structured_output=False
        )
        def json_text(value: int) -> str:
            self._record(("json_text", {"value": value}))
            return json.dumps({"value": value, "rows": [1, 2, 3]})

        @server.tool(description="Answer a text repeated.", annotations=READ_ONLY, structured_output=False)
        def repeat(text: str, times: int) -> str:
            self._record(("repeat", {"text": text, "times": times}))
            return text * times

        @server.tool(description="Answer plain words.", annotations=READ_ONLY, structured_output=False)
        def plain_text(words: str) -> str:
            self._record(("plain_text", {"words": words}))
            return f"You said: {words}"

        @server.tool(description="A read-only tool that fails.", annotations=READ_ONLY)
        def read_fails(reason: str) -> str:
            self._record(("read_fails", {"reason": reason}))
            raise ToolError(f"cannot read: {reason}")

        @server.tool(description="A writing tool that fails.", annotations=WRITES)
        def write_fails(reason: str) -> str:
            self._record(("write_fails", {"reason": reason}))
            raise ToolError(f"cannot write: {reason}")

        @server.tool(description="Answer after a while.", annotations=READ_ONLY)
        async def slow(seconds: float) -> str:
            self._record(("slow", {"seconds": seconds}))
            await anyio.sleep(seconds)
            self.finished.append(("slow", {"seconds": seconds}))
            return "done"

        @server.tool(description="Say which key the server received.", annotations=READ_ONLY)
        def whoami() -> dict[str, Any]:
            self._record(("whoami", {}))
            return {"authorization": self._last_headers.get("authorization")}

        @server.tool(
            description="Show what posting a message would do.",
            annotations=READ_ONLY,
            structured_output=False,
        )
        def preview_post(channel: str, text: str) -> str:
            self._record(("preview_post", {"channel": channel, "text": text}))
            return f'Post "{text}" to {channel}? It will be seen by everyone in the channel.'

        @server.tool(description="Find a place; asks which one when it is not sure.", annotations=READ_ONLY)
        def ask_place(query: str) -> CallToolResult:
            self._record(("ask_place", {"query": query}))
            tool = "thread_replies" if query == "bad continuation" else "resolve_place"
            arguments: dict[str, Any] = {"draft": query, "round": 1} if query == "twice" else {"draft": query}
            request = {
                "kind": "choice",
                "prompt": f"Which place did you mean by {query}?",
                "options": [
                    {"id": "station", "label": "Kyoto Station", "recommended": True},
                    {"id": "tower", "label": "Kyoto Tower"},
                ],
                "allow_custom": True,
                "allow_skip": True,
                "skip_label": "Skip this place",
                "continuation": {"tool": tool, "arguments": arguments},
            }
            return _asking(f'I need to know which place you meant by "{query}".', request)

        @server.tool(
            description="Resolve a place with the person's answer.",
            annotations=WRITES,
            meta={REQUIRES_INTERACTION_RESPONSE: True},
        )
        def resolve_place(draft: str, round: int = 0) -> CallToolResult:
            self._record(("resolve_place", {"draft": draft, "round": round}))
            if draft == "twice" and round == 1:
                request = {
                    "kind": "text",
                    "prompt": "Any note for the driver?",
                    "continuation": {"tool": "resolve_place", "arguments": {"draft": "twice", "round": 2}},
                }
                return _asking("I need a note for the driver.", request)
            response = (_request_meta.get() or {}).get(INTERACTION_RESPONSE)
            if not isinstance(response, dict) or "answer" not in response:
                return _text(f"Resolved {draft} with no answer.")
            return _text(f"Resolved {draft} to {json.dumps(response['answer'])}.")

        return server


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _asking(text: str, request: dict[str, Any]) -> CallToolResult:
    """A result that asks the person: ``request`` in the result's ``_meta`` under ``parley/interaction``."""
    return CallToolResult(content=[TextContent(type="text", text=text)], _meta={INTERACTION: request})


def _called_tool(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        name = (message.get("params") or {}).get("name")
        return name if isinstance(name, str) else None
    return None


async def _answer(send: Send, status: int, headers: dict[str, str], body: bytes) -> None:
    raw = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def serving_in_a_thread(app: Any, port: int, name: str) -> Iterator[None]:
    """The ASGI ``app`` served by uvicorn on ``127.0.0.1:port`` in a thread of this process for the block
    (started when the block begins; a server that does not start within 10 s is an error)."""
    config = uvicorn.Config(
        app,
        interface="asgi3",  # a bound method is not told apart from an ASGI2 app otherwise
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        ws="none",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"{name}-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the {name} did not start")
        time.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def running_tool_server() -> Iterator[LocalToolServer]:
    """A :class:`LocalToolServer` listening on a free port of 127.0.0.1 for the block."""
    port = free_port()
    state = LocalToolServer(port)
    with serving_in_a_thread(state, port, "test MCP server"):
        yield state


def unreachable_url() -> str:
    """The URL of a port of 127.0.0.1 that nothing listens on."""
    return f"http://127.0.0.1:{free_port()}/mcp"
