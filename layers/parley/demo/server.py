"""``parley demo-chat``: a chat to deliver to and answer from, on this machine (``docs/demo-chat.md``).

One process, one port:

- ``/mcp``: an MCP server over streamable HTTP (stateless, JSON responses) with the chat tools of
  ``interaction-format.md``, "Sending through a tool": ``post_message`` (as the user ``parley``) and
  ``thread_replies`` (read-only), plus ``list_channels`` (read-only);
- ``/``: a small page that shows the channels and their threads, and posts a reply in a thread as a
  user the person names;
- ``/api/…``: plain JSON for that page, the ``parley demo-chat reply`` command and tests —
  ``GET /api/channels``, ``POST /api/reply``, and the failure switch (``parley.demo.failures``).

Every path answers only to ``Host: 127.0.0.1:<port>`` or ``localhost:<port>`` (and the ``--host`` given),
and a browser's cross-site ``Origin`` is refused: the DNS-rebinding guard the MCP transport has, kept
for the page's writes too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import signal
import socket
import sys
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Final

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from parley.demo.chat import BOT_USER, MAX_LIMIT, Chat, ChatError, NotInChat
from parley.demo.failures import HTTP_MODES, TOOL_MODES, FailureSwitch
from parley.listening import listen_failure

__all__ = ["TOOLS", "DemoChat", "DemoChatOptions", "build_app", "build_mcp_server", "running", "serve"]

TOOLS: Final = frozenset({"post_message", "thread_replies", "channel_messages", "list_channels"})
MCP_PATH: Final = "/mcp"
MAX_API_BODY: Final = 64 * 1024


@dataclass(frozen=True)
class DemoChatOptions:
    host: str = "127.0.0.1"
    port: int = 9001


class Posted(BaseModel):
    channel: str = Field(description="The channel the message landed in")
    ts: str = Field(description="The message's id, its timestamp, such as 1732960000.000100")


class ThreadMessage(BaseModel):
    ts: str = Field(description="The message's id, its timestamp")
    user: str = Field(description="Who posted it")
    text: str
    thread_ts: str = Field(description="The thread's first message (the parent names itself)")


class ThreadReplies(BaseModel):
    messages: list[ThreadMessage] = Field(description="Oldest first, the parent too while it is newer")
    has_more: bool = Field(description="Whether newer messages were left out past limit")


class ChannelSummary(BaseModel):
    channel: str
    messages: int


class Channels(BaseModel):
    channels: list[ChannelSummary]


def build_mcp_server(chat: Chat, failures: FailureSwitch) -> MCPServer[Any]:
    """The MCP server with the chat's tools."""
    server: MCPServer[Any] = MCPServer(
        "parley-demo-chat",
        instructions="A chat kept in memory: post messages into channels and threads, "
        "and read a thread's replies.",
        log_level="WARNING",
    )

    async def fail_if_switched(tool: str) -> None:
        failure = failures.take(tool, TOOL_MODES)
        if failure is None:
            return
        if failure.mode == "slow":
            await asyncio.sleep(failure.seconds)
            return
        raise ToolError(f"{tool} failed on purpose: the demo chat's failure switch is on (mode error)")

    async def post_message(
        channel: Annotated[str, Field(description="The channel to post in, such as maria")],
        text: Annotated[str, Field(description="The message")],
        thread_ts: Annotated[
            str | None, Field(description="Post as a reply in the thread of this message (its ts)")
        ] = None,
    ) -> Posted:
        await fail_if_switched("post_message")
        try:
            message = chat.post(channel, BOT_USER, text, thread_ts)
        except ChatError as exc:
            raise ToolError(str(exc)) from None
        return Posted(channel=message.channel, ts=message.ts)

    async def thread_replies(
        channel: Annotated[str, Field(description="The channel the thread is in")],
        ts: Annotated[str, Field(description="The thread's first message (its ts)")],
        oldest: Annotated[str, Field(description="Only messages newer than this ts; 0 for all")] = "0",
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="At most this many messages")] = 15,
    ) -> ThreadReplies:
        await fail_if_switched("thread_replies")
        try:
            messages, has_more = chat.thread(channel, ts, oldest, limit)
        except ChatError as exc:
            raise ToolError(str(exc)) from None
        return ThreadReplies(
            messages=[ThreadMessage(**message.as_listed()) for message in messages], has_more=has_more
        )

    async def channel_messages(
        channel: Annotated[str, Field(description="The channel to read")],
        oldest: Annotated[str, Field(description="Only messages newer than this ts; 0 for all")] = "0",
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="At most this many messages")] = 15,
    ) -> ThreadReplies:
        await fail_if_switched("channel_messages")
        try:
            messages, has_more = chat.channel(channel, oldest, limit)
        except ChatError as exc:
            raise ToolError(str(exc)) from None
        return ThreadReplies(
            messages=[ThreadMessage(**message.as_listed()) for message in messages], has_more=has_more
        )

    async def list_channels() -> Channels:
        await fail_if_switched("list_channels")
        return Channels(
            channels=[
                ChannelSummary(channel=name, messages=len(chat.messages(name))) for name in chat.channels()
            ]
        )

    writes = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    )
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.add_tool(
        post_message,
        description=f"Post a message as {BOT_USER} into a channel, or into a thread with thread_ts. "
        "Answers the channel and the message's ts. A new channel is created by its first message.",
        annotations=writes,
    )
    server.add_tool(
        thread_replies,
        description="The messages of a thread newer than oldest, oldest first, at most limit: "
        "the parent too (while newer than oldest), then its replies. has_more says some were left out.",
        annotations=reads,
    )
    server.add_tool(
        channel_messages,
        description="The messages of a channel newer than oldest, oldest first, at most limit, thread "
        "replies included (each names its thread's first message in thread_ts).",
        annotations=reads,
    )
    server.add_tool(
        list_channels, description="The chat's channels and how many messages each holds.", annotations=reads
    )
    return server


@dataclass
class DemoChat:
    """A demo chat being served: its memory, its failure switch and where it listens."""

    chat: Chat
    failures: FailureSwitch
    host: str
    port: int

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    @property
    def mcp_url(self) -> str:
        return self.url + MCP_PATH


def allowed_hosts(host: str, port: int) -> list[str]:
    names = dict.fromkeys([host, "127.0.0.1", "localhost"])
    return [f"[{name}]:{port}" if ":" in name else f"{name}:{port}" for name in names]


def build_app(chat: Chat, failures: FailureSwitch, host: str, port: int) -> ASGIApp:
    """The whole HTTP side: ``/mcp``, the page and ``/api``, behind the host guard and failure switch."""
    from parley.demo.page import PAGE

    hosts = allowed_hosts(host, port)
    origins = [f"http://{name}" for name in hosts]
    server = build_mcp_server(chat, failures)

    async def page(request: Request) -> Response:
        return HTMLResponse(PAGE, headers={"Cache-Control": "no-store"})

    async def markdown_it(request: Request) -> Response:
        """The Markdown renderer the page uses: the web inbox's vendored copy of markdown-it."""
        from importlib.resources import files

        script = files("parley.inbox").joinpath("markdown-it.min.js").read_text(encoding="utf-8")
        return Response(script, media_type="text/javascript", headers={"Cache-Control": "max-age=3600"})

    async def channels(request: Request) -> Response:
        return JSONResponse(
            {"channels": channel_view(chat), "failures": [f.as_json() for f in failures.armed()]}
        )

    async def reply(request: Request) -> Response:
        try:
            channel, thread, user, text = _reply_fields(await _json_body(request))
            message = chat.post(channel, user, text, thread)
        except _Refused as refused:
            return refused.response()
        except NotInChat as exc:
            return _Refused(str(exc), 404).response()
        except ChatError as exc:
            return _Refused(str(exc)).response()
        answer = {"channel": message.channel, "ts": message.ts, "thread_ts": message.thread_ts}
        return JSONResponse(answer, status_code=201)

    async def failure_switch(request: Request) -> Response:
        try:
            if request.method == "POST":
                failures.arm(await _json_body(request))
        except _Refused as refused:
            return refused.response()
        except ValueError as exc:
            return _Refused(str(exc)).response()
        if request.method == "DELETE":
            failures.clear()
        return JSONResponse({"failures": [f.as_json() for f in failures.armed()]})

    server.custom_route("/", methods=["GET"])(page)
    server.custom_route("/markdown-it.min.js", methods=["GET"])(markdown_it)
    server.custom_route("/api/channels", methods=["GET"])(channels)
    server.custom_route("/api/reply", methods=["POST"])(reply)
    server.custom_route("/api/failures", methods=["GET", "POST", "DELETE"])(failure_switch)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins),
    )
    return _Front(app, failures, frozenset(hosts), frozenset(origins))


def channel_view(chat: Chat) -> list[dict[str, Any]]:
    """The page's view: each channel's top-level messages, each with its replies."""
    view = []
    for name in chat.channels():
        threads: dict[str, dict[str, Any]] = {}
        for message in chat.messages(name):
            shown = {"ts": message.ts, "user": message.user, "text": message.text}
            if message.thread_ts is None:
                threads[message.ts] = {**shown, "replies": []}
            else:
                threads[message.thread_ts]["replies"].append(shown)
        view.append({"channel": name, "threads": list(threads.values())})
    return view


class _Refused(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status

    def response(self) -> Response:
        return JSONResponse({"error": str(self)}, status_code=self.status)


async def _json_body(request: Request) -> Any:
    body: bytes = await request.body()
    if len(body) > MAX_API_BODY:
        raise _Refused(f"the body is at most {MAX_API_BODY:,} bytes", 413)
    try:
        return json.loads(body or b"null")
    except ValueError:
        raise _Refused("the body is not JSON") from None


def _reply_fields(body: object) -> tuple[str, str | None, str, str]:
    """``channel``, ``thread``, ``user``, ``text`` of a ``POST /api/reply`` body."""
    fields = ("channel", "thread", "user", "text")
    if not isinstance(body, dict) or set(body) - set(fields):
        raise _Refused('the body is {"channel", "thread", "user", "text"}, "thread" optional')
    channel, thread, user, text = (body.get(name) for name in fields)
    if not (isinstance(channel, str) and isinstance(user, str) and isinstance(text, str)):
        raise _Refused("channel, user and text are strings")
    if thread is not None and not isinstance(thread, str):
        raise _Refused("thread is the ts of the thread's first message, a string")
    return channel, thread, user, text


class _Front:
    """Before the app: refuse a foreign ``Host`` or ``Origin`` on every path, and give the failures
    the failure switch has armed for the HTTP side (``server_error``, ``retry_after``) to the MCP call
    of that tool, before the MCP server reads it."""

    def __init__(self, app: ASGIApp, failures: FailureSwitch, hosts: frozenset[str], origins: frozenset[str]):
        self.app = app
        self.failures = failures
        self.hosts = hosts
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if headers.get("host") not in self.hosts:
            await PlainTextResponse("Invalid Host header", status_code=421)(scope, receive, send)
            return
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            await PlainTextResponse("Invalid Origin header", status_code=403)(scope, receive, send)
            return
        if scope["path"] != MCP_PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(chunks)
        failure = self.failures.take(_called_tool(body), HTTP_MODES)
        if failure is not None:
            if failure.mode == "retry_after":
                wait = str(math.ceil(failure.seconds))
                response = PlainTextResponse(
                    "Too many calls (the demo chat's failure switch, mode retry_after)",
                    status_code=429,
                    headers={"Retry-After": wait},
                )
            else:
                response = PlainTextResponse(
                    "The chat failed (the demo chat's failure switch, mode server_error)", status_code=500
                )
            await response(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _called_tool(body: bytes) -> str:
    """The tool a JSON-RPC ``tools/call`` names; ``""`` for any other message."""
    try:
        message = json.loads(body)
    except ValueError:
        return ""
    if isinstance(message, dict) and message.get("method") == "tools/call":
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("name"), str):
            return str(params["name"])
    return ""


#: How to run a demo on another port, said when its port is in use.
PORT_HINT: Final = (
    "pass --port (0 picks a free one), and use that port in the operator configuration's url or base_url "
    "(examples/operator.yaml) and in reply --port"
)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening on ``host:port`` (0: a free port), for any of the demo servers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


def uvicorn_server(app: ASGIApp) -> Any:
    """A uvicorn server for ``app`` on a socket of :func:`listen`, quiet, for any of the demo servers."""
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn re-raises the signal it stopped on, so the process would end by SIGTERM rather than
        exit 0; this one stops on SIGTERM or Ctrl-C and returns."""

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGTERM, signal.SIGINT)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2
    )
    return Server(config)


@contextlib.contextmanager
def running(options: DemoChatOptions, chat: Chat | None = None) -> Iterator[DemoChat]:
    """A demo chat served from a background thread of this process (``port`` 0 picks one); stopped on
    exit. For tests of what calls it; ``parley demo-chat`` runs :func:`serve`."""
    chat = chat or Chat()
    failures = FailureSwitch(TOOLS)
    sock = listen(options.host, options.port)
    port = sock.getsockname()[1]
    server = uvicorn_server(build_app(chat, failures, options.host, port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="demo-chat", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the demo chat did not start")
            time.sleep(0.01)
        yield DemoChat(chat, failures, options.host, port)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def serve(options: DemoChatOptions) -> int:
    """Serve the demo chat until SIGTERM or Ctrl-C; returns the exit code (0 on a clean stop)."""
    try:
        sock = listen(options.host, options.port)
    except OSError as exc:
        print(
            f"parley demo-chat: {listen_failure(options.host, options.port, exc, PORT_HINT)}", file=sys.stderr
        )
        return 1
    with sock:
        port = sock.getsockname()[1]
        demo = DemoChat(Chat(), FailureSwitch(TOOLS), options.host, port)
        server = uvicorn_server(build_app(demo.chat, demo.failures, options.host, port))
        print(
            f"The demo chat is serving {demo.url} (MCP endpoint {demo.mcp_url}; open {demo.url}/ to read "
            "and reply). Ctrl-C stops it; everything in it is forgotten.",
            flush=True,
        )
        server.run(sockets=[sock])
    return 0
