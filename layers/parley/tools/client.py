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

mcp 2's streamable-HTTP transport turns an HTTP error status into a generic JSON-RPC error, so the
status and ``Retry-After`` are read from the responses themselves, by an httpx2 event hook.

Lambda handlers are synchronous: each operation runs its coroutine on a private event loop
(``asyncio.run``; on a worker thread when the caller already runs a loop). The ``mcp`` package loads
with the first operation, never with this module.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
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
    import httpx2
    from mcp import Client

#: JSON-RPC codes the client reads (``mcp_types.jsonrpc``), copied so that this module loads without mcp.
_REQUEST_TIMEOUT: Final = -32001
_INVALID_PARAMS: Final = -32602

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
        call = _Call(tool, dict(arguments), before_call, dict(meta) if meta else None)
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


@dataclass
class _Seen:
    """What the HTTP hooks saw: the last response's status and ``Retry-After``, the tools/call's id."""

    status: int | None = None
    retry_after: str | None = None
    jsonrpc_id: str | int | None = None

    async def on_request(self, request: httpx2.Request) -> None:
        content = request.content
        if b'"tools/call"' in content:
            try:
                message = json.loads(content)
            except ValueError:
                return
            if isinstance(message, dict) and message.get("method") == "tools/call":
                self.jsonrpc_id = message.get("id")

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
    import anyio
    import httpx2
    from mcp import Client
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
    )
    try:
        # One cancel scope for the whole exchange; its deadline moves on with each step, so the bounds
        # hold without leaving a task group's scope early.
        with anyio.CancelScope(deadline=anyio.current_time() + bounds.open_seconds) as scope:
            async with (
                http,
                Client(streamable_http_client(address.url, http_client=http), cache=None) as client,
            ):
                stage = "list"
                scope.deadline = anyio.current_time() + bounds.list_seconds
                listed = await _all_tools(client)
                if call is not None:
                    tool = _listed(listed, call.tool, address.name)
                    if call.before_call is not None:
                        try:
                            call.before_call(tool)
                        except Exception as exc:
                            raise _CallerError(exc) from exc
                    stage = "call"
                    scope.deadline = anyio.current_time() + bounds.respond_seconds
                    started = time.perf_counter()
                    result = await client.call_tool(call.tool, call.arguments, meta=call.meta)  # type: ignore[arg-type]
                    answer = _answer(tool, result, _millis_since(started), seen.jsonrpc_id)
                done = True
                # Closing gets the opening's bound; an answer already in hand is kept either way.
                scope.deadline = anyio.current_time() + bounds.open_seconds
        if scope.cancelled_caught and not done:
            raise _timed_out(address, stage, bounds, started, seen)
    except (ToolNotOffered, ToolServerFailure):
        raise
    except Exception as exc:
        inner = _caller_error(exc)
        if inner is not None:
            raise inner from None
        not_offered = _find(exc, ToolNotOffered)
        if not_offered is not None:
            raise not_offered from None
        if done:
            return listed, answer  # the work was done; only closing the connection failed
        raise _translated(exc, address, stage, started, seen) from None
    return listed, answer


async def _all_tools(client: Client) -> list[ListedTool]:
    tools: list[ListedTool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever still ends
        page = await client.list_tools(cursor=cursor)
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
    "McpToolClient",
    "answer_of",
    "retry_after_seconds",
]
