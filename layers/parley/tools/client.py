"""The MCP client layer: list a tool server's tools and call one, over streamable HTTP, within bounds.

What the rest of the runtime sees (``reasoning-format.md``, "Before the model is called", "Limits on
time and failures"; ``interaction-format.md``, "Bounds"):

- :meth:`McpToolClient.list_tools` gives each tool with ``read_only`` taken from ``readOnlyHint``;
- :meth:`McpToolClient.call_tool` opens, lists, checks that the server lists the tool, calls
  ``before_call`` (where a caller records ``tool_call_started`` and makes its last checks), then calls
  the tool once, and gives a :class:`ToolAnswer`: the ``answer`` is the structured content, else the
  first text block parsed as JSON, else that text;
- bounds: 10 s to open, 10 s to list, 30 s to respond (:class:`Bounds`, injectable for tests);
- every lower-level error (httpx2, anyio, mcp) is translated here into :class:`ToolServerFailure`,
  whose ``because`` is the page's word: ``unreachable``, ``failing``, ``rate_limited`` (with the
  server's ``Retry-After`` in seconds) or ``key_refused``. A server that does not list the tool gives
  :class:`ToolNotOffered` with ``because`` ``tool_not_listed``. Nothing matches on message text.

Every exchange opens a new connection (Lambda keeps nothing open between events) over the process's
one TLS context (:func:`tls_context`: certificates checked; made once, since loading the CA bundle
cost about 26 ms of CPU an exchange). Within :func:`reusing_listings` (a conversation's reads and
tellings, issue 26) a call skips ``server/discover`` with the version the server spoke before, and
``tools/list`` while the server's ``ttlMs`` lets its listing be stored; see :class:`_Reuse` for why a
tool the server no longer lists still fails the call as before.

mcp 2's streamable-HTTP transport turns an HTTP error status into a generic JSON-RPC error, so the
status and ``Retry-After`` are read from the responses themselves, by an httpx2 event hook.

Lambda handlers are synchronous: each operation runs its coroutine on a private event loop
(``asyncio.run``; on a worker thread when the caller already runs a loop). The ``mcp`` package loads
with the first operation, never with this module.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar

from parley.coroutines import run_sync
from parley.ports.tools import (
    REQUIRES_INTERACTION_RESPONSE,
    Bounds,
    ListedTool,
    ServerAddress,
    Stage,
    ToolAnswer,
    ToolNotOffered,
    ToolServerFailure,
)

if TYPE_CHECKING:
    import ssl

    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.caching import CacheMode

#: JSON-RPC codes the client reads (``mcp_types.jsonrpc``), copied so that this module loads without mcp.
_REQUEST_TIMEOUT: Final = -32001
_INVALID_PARAMS: Final = -32602
#: How long a read or telling reuses the protocol version a server's ``server/discover`` gave
#: (:func:`reusing_listings`) before asking again.
VERSION_REUSE_SECONDS: Final = 3600.0

T = TypeVar("T")


class McpToolClient:
    """:class:`ToolClient` over the mcp package's streamable-HTTP client (a new connection per operation:
    Lambda keeps nothing open between events)."""

    def __init__(self, bounds: Bounds | None = None) -> None:
        self.bounds = bounds or Bounds()

    def __repr__(self) -> str:
        return f"McpToolClient(bounds={self.bounds!r})"

    def list_tools(self, address: ServerAddress) -> list[ListedTool]:
        listed, _ = run_sync(lambda: _exchange(address, self.bounds, None), thread_name="parley-tool-client")
        return listed

    def call_tool(
        self,
        address: ServerAddress,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        before_call: Callable[[ListedTool], None] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolAnswer:
        call = _Call(tool, dict(arguments), before_call, dict(meta) if meta else None, _REUSING.get())
        _, answer = run_sync(lambda: _exchange(address, self.bounds, call), thread_name="parley-tool-client")
        assert answer is not None
        return answer


def answer_of(structured_content: Any, content: list[Mapping[str, Any]]) -> tuple[Any, str | None]:
    """The page's answer and the first text block: the structured content, else the first text block
    parsed as JSON, else that text (``None`` when there is no text at all)."""
    text = next(
        (block.get("text") for block in content if block.get("type") == "text" and "text" in block), None
    )
    if structured_content is not None:
        return structured_content, text
    if text is None:
        return None, None
    try:
        return json.loads(text, parse_constant=_refuse_constant), text
    except (ValueError, RecursionError):
        return text, text


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from now: delay-seconds or an HTTP date (RFC 9110); ``None`` when
    absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(int(text))
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


# --- the exchange ------------------------------------------------------------------------------------------


@dataclass
class _Call:
    tool: str
    arguments: dict[str, Any]
    before_call: Callable[[ListedTool], None] | None
    meta: dict[str, Any] | None
    reuse: bool = False


@dataclass
class _Seen:
    """What the HTTP hooks saw: the last response's status and ``Retry-After``, the tools/call's id."""

    status: int | None = None
    retry_after: str | None = None
    jsonrpc_id: str | int | None = None
    #: Whether a ``tools/list`` and a ``tools/call`` were sent.
    listed: bool = False
    called: bool = False

    async def on_request(self, request: httpx2.Request) -> None:
        content = request.content
        if b'"tools/' not in content:
            return
        try:
            message = json.loads(content)
        except ValueError:
            return
        method = message.get("method") if isinstance(message, dict) else None
        if method == "tools/call":
            self.called = True
            self.jsonrpc_id = message.get("id")
        elif method == "tools/list":
            self.listed = True

    async def on_response(self, response: httpx2.Response) -> None:
        self.status = response.status_code
        self.retry_after = response.headers.get("retry-after")


class _CallerError(Exception):
    """An exception from ``before_call``, carried through the task groups to be raised unchanged."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("before_call failed")
        self.error = error


async def _exchange(
    address: ServerAddress, bounds: Bounds, call: _Call | None
) -> tuple[list[ListedTool], ToolAnswer | None]:
    reuse = _Reuse.of(address) if call is not None and call.reuse else None
    try:
        return await _exchange_once(address, bounds, call, reuse)
    except _PinRefused:
        assert reuse is not None
        reuse.forget()
        return await _exchange_once(address, bounds, call, _Reuse(reuse.key, reuse.url, None))


async def _exchange_once(
    address: ServerAddress, bounds: Bounds, call: _Call | None, reuse: _Reuse | None
) -> tuple[list[ListedTool], ToolAnswer | None]:
    import anyio
    import httpx2
    from mcp import Client, MCPError
    from mcp.client.streamable_http import streamable_http_client

    seen = _Seen()
    stage: Stage = "open"
    listed: list[ListedTool] = []
    answer: ToolAnswer | None = None
    started: float | None = None
    done = False
    http = httpx2.AsyncClient(
        headers=dict(address.headers),
        # The cancel scope below bounds each step; httpx2's own timeouts only back it up.
        timeout=httpx2.Timeout(_longest(bounds), connect=bounds.open_seconds),
        event_hooks={"request": [seen.on_request], "response": [seen.on_response]},
        verify=tls_context(),
    )
    options = reuse.client_options() if reuse is not None else {"cache": None}
    try:
        # One cancel scope for the whole exchange; its deadline moves on with each step, so the bounds
        # hold without leaving a task group's scope early.
        with anyio.CancelScope(deadline=anyio.current_time() + bounds.open_seconds) as scope:
            async with (
                http,
                Client(streamable_http_client(address.url, http_client=http), **options) as client,
            ):
                stage = "list"
                scope.deadline = anyio.current_time() + bounds.list_seconds
                listed = await _all_tools(client, "use" if reuse is not None else "bypass")
                if call is not None and not seen.listed and all(t.name != call.tool for t in listed):
                    listed = await _all_tools(client, "refresh")  # a stored listing never refuses a tool
                if call is not None:
                    tool = _listed(listed, call.tool, address.name)
                    if call.before_call is not None:
                        try:
                            call.before_call(tool)
                        except Exception as exc:
                            raise _CallerError(exc) from exc
                    stage = "call"
                    scope.deadline = anyio.current_time() + bounds.respond_seconds
                    stored = reuse is not None and not seen.listed
                    started = time.perf_counter()
                    try:
                        result = await client.call_tool(call.tool, call.arguments, meta=call.meta)  # type: ignore[arg-type]
                    except MCPError:
                        if stored:
                            await _still_listed(client, call.tool, address.name, bounds, scope)
                        raise
                    answer = _answer(tool, result, _millis_since(started), seen.jsonrpc_id)
                    if stored and answer.is_error:
                        await _still_listed(client, call.tool, address.name, bounds, scope)
                    if reuse is not None and not answer.is_error:
                        reuse.succeeded(client)
                done = True
                # Closing gets the opening's bound; an answer already in hand is kept either way.
                scope.deadline = anyio.current_time() + bounds.open_seconds
        if scope.cancelled_caught and not done:
            raise _timed_out(address, stage, bounds, started, seen)
    except (ToolNotOffered, ToolServerFailure):
        if reuse is not None:
            reuse.forget()
        raise
    except Exception as exc:
        inner = _caller_error(exc)
        if inner is not None:
            raise inner from None
        if reuse is not None and not done:
            reuse.forget()
        not_offered = _find(exc, ToolNotOffered)
        if not_offered is not None:
            raise not_offered from None
        if done:
            return listed, answer  # the work was done; only closing the connection failed
        failure = _translated(exc, address, stage, started, seen)
        if reuse is not None and reuse.version is not None and _refused_before_call(failure, seen):
            raise _PinRefused from exc  # perhaps the version it spoke before: open afresh
        raise failure from None
    return listed, answer


async def _still_listed(
    client: Client, tool: str, server: str, bounds: Bounds, scope: anyio.CancelScope
) -> None:
    """After the server refused a call made on a listing from the process's store: list afresh;
    :class:`ToolNotOffered` when the tool is no longer listed, else the refusal stands (also when the
    listing cannot be made)."""
    import anyio

    scope.deadline = anyio.current_time() + bounds.list_seconds + bounds.open_seconds
    fresh: list[ListedTool] | None = None
    with anyio.move_on_after(bounds.list_seconds):
        try:
            fresh = await _all_tools(client, "refresh")
        except Exception:
            fresh = None
    if fresh is not None:
        _listed(fresh, tool, server)


# --- what a conversation's reads and tellings reuse -------------------------------------------------------


@contextlib.contextmanager
def reusing_listings() -> Iterator[None]:
    """Within the block, a call of :class:`McpToolClient` opens with the protocol version the same server
    (at the same URL, with the same headers) spoke to this process's last successful call, and takes
    the tools listing from the process's store while the server's ``ttlMs`` allows (see
    :class:`_Reuse`). A conversation's reads and tellings use it; a delivery's attempt, a function's
    ``call`` and ``execute`` never do."""
    token = _REUSING.set(True)
    try:
        yield
    finally:
        _REUSING.reset(token)


def forget_listings() -> None:
    """Forget every server's protocol version and stored listing (tests)."""
    _VERSIONS.clear()
    _listings.cache_clear()


_REUSING: Final = contextvars.ContextVar("parley_reusing_listings", default=False)
#: Per server (a digest of its URL and headers): the protocol version its last successful call spoke
#: (``server/discover``), and until when it is used without asking again (``time.monotonic``).
_VERSIONS: dict[str, tuple[str, float]] = {}


@functools.cache
def _listings() -> Any:
    """The process's store of tools listings (the mcp package's response cache, in memory)."""
    from mcp.client.caching import InMemoryResponseCacheStore

    return InMemoryResponseCacheStore(max_entries=256)


def _refused_before_call(failure: ToolServerFailure, seen: _Seen) -> bool:
    """The server answered, with an error that is neither a refused key, a rate limit nor its own
    failure (5xx), before any tool was called."""
    status = seen.status
    return failure.because == "failing" and status is not None and status < 500 and not seen.called


class _PinRefused(Exception):
    """A call opened with a remembered protocol version failed before any tool was called."""


@dataclass(frozen=True)
class _Reuse:
    """What one call reuses (``reusing_listings``; interaction-format.md, "Bounds": a read or telling is
    one call of the tool, 10 seconds to open, 30 to respond).

    - **The protocol version.** A call with none known opens as any call does (``server/discover``,
      else ``initialize``); once it succeeds, a version ``server/discover`` gave is remembered for
      :data:`VERSION_REUSE_SECONDS`. A later call adopts it without asking (the mcp package's version
      pin: each request of the 2026-07-28 protocol names its version, and a server that no longer
      speaks it refuses). Nothing else the discover result said is reused. A call so opened that the
      server refuses before any tool is called (an error that is not a refused key, a rate limit, its
      own failure or a timeout) forgets the version and opens afresh, once.
    - **The listing.** Listed through the mcp package's response cache: the listing is stored for as
      long as the server's ``ttlMs`` says, and never when it says ``0`` (the protocol's default) or
      speaks only ``initialize``; the partition is the digest of the headers sent, so a listing is
      never served to other credentials. A tool missing from a stored listing is looked for in a
      fresh one. A stored listing that has the tool decides what a fresh one decides (``before_call``
      sees it) and gives the session the tool's ``outputSchema``, which the mcp package checks the
      result against. When the server refuses a call made on a stored listing (an MCP error, or a
      result marked ``isError``), the tools are listed afresh: a tool no longer listed is
      :class:`ToolNotOffered` (``tool_not_listed``, the words as before), else the refusal stands. A
      server that stops listing a tool yet still runs it is called while its own ``ttlMs`` lasts.

    Any failure forgets the version. The operator's allow-list is the caller's check, before every call.
    """

    key: str
    url: str
    version: str | None

    @classmethod
    def of(cls, address: ServerAddress) -> _Reuse:
        identity = json.dumps([address.url, sorted(address.headers.items())])
        key = hashlib.sha256(identity.encode()).hexdigest()
        known = _VERSIONS.get(key)
        version = known[0] if known is not None and known[1] > time.monotonic() else None
        return cls(key, address.url, version)

    def client_options(self) -> dict[str, Any]:
        from mcp.client.caching import CacheConfig

        cache = CacheConfig(store=_listings(), partition=self.key, target_id=self.url, default_ttl_ms=0)
        if self.version is None:
            return {"cache": cache}
        return {"cache": cache, "mode": self.version}

    def succeeded(self, client: Client) -> None:
        if self.version is None and client.session.discover_result is not None:
            _VERSIONS[self.key] = (client.protocol_version, time.monotonic() + VERSION_REUSE_SECONDS)

    def forget(self) -> None:
        _VERSIONS.pop(self.key, None)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's one TLS context for tool servers, made on first use: what httpx2 makes for
    ``verify=True`` (the system's CA bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), certificates and
    host names checked. Made anew for each exchange, loading the CA bundle took about 26 ms of CPU, half
    of a conversation's read; an ``SSLContext`` is safe to share between connections and threads."""
    import httpx2

    return httpx2.create_ssl_context(verify=True, trust_env=True)


async def _all_tools(client: Client, cache_mode: CacheMode = "refresh") -> list[ListedTool]:
    """Every page of the listing; the first from the process's store when ``cache_mode`` is ``use`` and
    the client has one, else from the server."""
    tools: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever still ends
        page = await client.list_tools(cursor=cursor, cache_mode=cache_mode)
        for tool in page.tools:
            annotations = tool.annotations
            tools.append(
                ListedTool(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=dict(tool.input_schema),
                    read_only=bool(annotations is not None and annotations.read_only_hint),
                    requires_interaction_response=bool(
                        (tool.meta or {}).get(REQUIRES_INTERACTION_RESPONSE) is True
                    ),
                )
            )
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


def _listed(listed: list[ListedTool], name: str, server: str) -> ListedTool:
    for tool in listed:
        if tool.name == name:
            return tool
    raise ToolNotOffered(
        "tool_not_listed",
        f"The tool server {server!r} does not list the tool {name!r}; call search for the tools it offers.",
    )


def _answer(tool: ListedTool, result: Any, duration_ms: int, jsonrpc_id: str | int | None) -> ToolAnswer:
    shown = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    whole = {key: shown[key] for key in ("content", "structuredContent", "isError") if key in shown}
    whole.setdefault("isError", bool(result.is_error))
    meta = shown.get("_meta")
    content = whole.get("content") or []
    answer, text = answer_of(result.structured_content, content)
    return ToolAnswer(
        tool=tool,
        is_error=bool(result.is_error),
        answer=answer,
        text=text,
        result=whole,
        duration_ms=duration_ms,
        jsonrpc_id=jsonrpc_id,
        meta=dict(meta) if isinstance(meta, dict) else None,
    )


def _timed_out(
    address: ServerAddress, stage: Stage, bounds: Bounds, started: float | None, seen: _Seen
) -> ToolServerFailure:
    seconds = {"open": bounds.open_seconds, "list": bounds.list_seconds, "call": bounds.respond_seconds}[
        stage
    ]
    doing = {"open": "open a connection", "list": "list its tools", "call": "respond to the call"}[stage]
    return ToolServerFailure(
        "unreachable",
        f"The tool server {address.name!r} did not {doing} within {_seconds(seconds)} seconds.",
        stage=stage,
        timed_out=True,
        duration_ms=_millis_since(started) if started is not None else None,
        jsonrpc_id=seen.jsonrpc_id if stage == "call" else None,
    )


def _translated(
    exc: BaseException, address: ServerAddress, stage: Stage, started: float | None, seen: _Seen
) -> ToolServerFailure:
    import httpx2
    from mcp import MCPError

    name = address.name
    common: dict[str, Any] = {
        "stage": stage,
        "duration_ms": _millis_since(started) if started is not None else None,
        "jsonrpc_id": seen.jsonrpc_id if stage == "call" else None,
    }
    leaves = list(_leaves(exc))
    if any(isinstance(leaf, httpx2.TimeoutException) for leaf in leaves):
        return ToolServerFailure(
            "unreachable", f"The tool server {name!r} did not respond in time.", timed_out=True, **common
        )
    if any(isinstance(leaf, (httpx2.ConnectError, OSError)) for leaf in leaves):
        return ToolServerFailure("unreachable", f"The tool server {name!r} cannot be reached.", **common)
    status = seen.status
    if status == 429:
        wait = retry_after_seconds(seen.retry_after)
        asked = f"; it asks to wait {_seconds(wait)} seconds" if wait is not None else ""
        return ToolServerFailure(
            "rate_limited",
            f"The tool server {name!r} asks to slow down (HTTP 429){asked}.",
            retry_after_seconds=wait,
            **common,
        )
    if status in (401, 403):
        return ToolServerFailure(
            "key_refused",
            f"The tool server {name!r} did not accept the key it was given (HTTP {status}); "
            "check that key, do not retry.",
            **common,
        )
    mcp_error = _find(exc, MCPError)
    if mcp_error is not None and mcp_error.code == _REQUEST_TIMEOUT:
        return ToolServerFailure(
            "unreachable", f"The tool server {name!r} did not respond in time.", timed_out=True, **common
        )
    if status is not None and status >= 400:
        return ToolServerFailure("failing", f"The tool server {name!r} failed (HTTP {status}).", **common)
    if any(isinstance(leaf, httpx2.TransportError) for leaf in leaves):
        return ToolServerFailure("unreachable", f"The tool server {name!r} cannot be reached.", **common)
    if mcp_error is not None:
        refused = stage == "call" and mcp_error.code == _INVALID_PARAMS
        what = "refused the call's arguments" if refused else f"failed (MCP error {mcp_error.code})"
        return ToolServerFailure(
            "failing", f"The tool server {name!r} {what}.", arguments_refused=refused, **common
        )
    doing = {"open": "on opening", "list": "on listing its tools", "call": "on the call"}[stage]
    return ToolServerFailure("failing", f"The tool server {name!r} failed {doing}.", **common)


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exception, the ones inside its groups, and their causes."""
    found: list[BaseException] = []
    stack: list[BaseException] = [exc]
    while stack and len(found) < 100:
        current = stack.pop()
        found.append(current)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        if current.__cause__ is not None:
            stack.append(current.__cause__)
    return found


def _find(exc: BaseException, kind: type[T]) -> T | None:
    for leaf in _leaves(exc):
        if isinstance(leaf, kind):
            return leaf
    return None


def _caller_error(exc: BaseException) -> BaseException | None:
    found = _find(exc, _CallerError)
    return found.error if found is not None else None


def _longest(bounds: Bounds) -> float:
    return max(bounds.open_seconds, bounds.list_seconds, bounds.respond_seconds)


def _millis_since(started: float | None) -> int:
    return 0 if started is None else round((time.perf_counter() - started) * 1000)


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


__all__ = [
    "VERSION_REUSE_SECONDS",
    "McpToolClient",
    "answer_of",
    "forget_listings",
    "retry_after_seconds",
    "reusing_listings",
    "tls_context",
]
