"""The tool-client port: what the core asks of a tool server, and the values it gets back.

The MCP adapter (:class:`parley.tools.client.McpToolClient`) implements it; tests inject clients with
short bounds. ``interaction-format.md`` "Bounds" and ``reasoning-format.md`` "Limits on time and
failures" give the bounds and the ``because`` words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

Because = Literal["unreachable", "failing", "rate_limited", "key_refused"]
Stage = Literal["open", "list", "call"]
NotOfferedBecause = Literal[
    "tool_server_not_configured",
    "tool_not_allowed",
    "tool_not_listed",
    # A connection a person added to the org that cannot be used (issue 32; parley.tools.connected).
    "connection_pending",
    "connection_broken",
    "connection_not_allowed",
]
#: A tool's listing ``_meta`` key: the tool continues after a person's answer (``agent-runs.md``, "A tool
#: that asks").
REQUIRES_INTERACTION_RESPONSE: Final = "parley/requires_interaction_response"


@dataclass(frozen=True)
class Bounds:
    """How long each step may take, in seconds (``interaction-format.md``, "Bounds")."""

    open_seconds: float = 10.0
    list_seconds: float = 10.0
    respond_seconds: float = 30.0


@dataclass(frozen=True)
class ServerAddress:
    """Where a tool server is and the headers sent to it. The header values are secrets: never in a
    ``repr`` (only their names are shown)."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return f"ServerAddress(name={self.name!r}, url={self.url!r}, headers={sorted(self.headers)!r})"


@dataclass(frozen=True)
class ListedTool:
    """A tool as its server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    #: The listing's ``_meta`` says ``parley/requires_interaction_response: true``: a continuation.
    requires_interaction_response: bool = False


@dataclass(frozen=True)
class ToolAnswer:
    """What one call returned. ``result`` is the whole MCP result as JSON (``content``,
    ``structuredContent``, ``isError``), for the history; ``answer`` follows the page's rule."""

    tool: ListedTool
    is_error: bool
    answer: Any
    text: str | None
    result: dict[str, Any]
    duration_ms: int
    jsonrpc_id: str | int | None
    #: The result's ``_meta`` (such as a tool's ``parley/interaction`` request), if it had one.
    meta: dict[str, Any] | None = None


class ToolNotOffered(Exception):
    """The tool cannot be used by this playbook: ``because`` is ``tool_server_not_configured``,
    ``tool_not_allowed`` or ``tool_not_listed`` (kind ``tool_not_offered``), or, for a connection that
    cannot be used, ``connection_pending``, ``connection_broken`` or ``connection_not_allowed``."""

    def __init__(self, because: NotOfferedBecause, detail: str) -> None:
        super().__init__(detail)
        self.because: NotOfferedBecause = because
        self.detail = detail


class ToolServerFailure(Exception):
    """The server could not be used (kind ``tool_server_failed``).

    - ``because``: ``unreachable`` (no connection, or no response in time), ``failing`` (an error, or
      a refusal to list), ``rate_limited`` (429; ``retry_after_seconds`` when the server said how
      long), ``key_refused`` (401 or 403: check the key, do not retry).
    - ``stage``: where it happened. ``sent`` is true once the tool call itself was sent: the tool may
      have run (``tools_unfinished`` or ``effect_unknown`` follow, not a plain ``unavailable``).
    - ``timed_out``: a bound ran out; ``arguments_refused``: the server refused the call's arguments
      with a protocol error (``-32602``).
    - ``detail``: words for a person, holding no header value and no response body.
    """

    def __init__(
        self,
        because: Because,
        detail: str,
        *,
        stage: Stage,
        timed_out: bool = False,
        retry_after_seconds: float | None = None,
        arguments_refused: bool = False,
        duration_ms: int | None = None,
        jsonrpc_id: str | int | None = None,
    ) -> None:
        super().__init__(detail)
        self.because: Because = because
        self.detail = detail
        self.stage: Stage = stage
        self.timed_out = timed_out
        self.retry_after_seconds = retry_after_seconds
        self.arguments_refused = arguments_refused
        self.duration_ms = duration_ms
        self.jsonrpc_id = jsonrpc_id

    @property
    def sent(self) -> bool:
        return self.stage == "call"

    @property
    def history_because(self) -> str:
        """The ``because`` of ``tool_call_failed`` (``reasoning-format.md``, "The run's history")."""
        if self.arguments_refused:
            return "arguments_refused"
        return "timed_out" if self.timed_out else "server_failure"

    def __repr__(self) -> str:
        return f"ToolServerFailure(because={self.because!r}, stage={self.stage!r}, detail={self.detail!r})"


class ToolClient(Protocol):
    """The tool-client port of :class:`~parley.ports.runtime.Runtime`."""

    def list_tools(self, address: ServerAddress) -> list[ListedTool]:
        """Every tool the server lists. :class:`ToolServerFailure` when it cannot."""
        ...

    def call_tool(
        self,
        address: ServerAddress,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        before_call: Callable[[ListedTool], None] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolAnswer:
        """Open, list, call ``before_call`` with the listed tool (an exception from it stops the call
        before anything is sent, and propagates unchanged), then call the tool once.
        :class:`ToolNotOffered` (``tool_not_listed``) or :class:`ToolServerFailure`."""
        ...
