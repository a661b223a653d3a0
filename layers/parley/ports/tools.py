"""The tool-client port: what the core asks of a tool server, and the values it gets back.

The MCP adapter (:class:`parley.tools.client.McpToolClient`) implements it; tests inject clients with
short bounds. ``interaction-format.md`` "Bounds" and ``reasoning-format.md`` "Limits on time and
failures" give the bounds and the ``because`` words. Its errors (:class:`ToolNotOffered`,
:class:`ToolServerFailure`) live in ``parley.errors``, named here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from parley.errors import Because as Because
from parley.errors import NotOfferedBecause as NotOfferedBecause
from parley.errors import Stage as Stage
from parley.errors import ToolNotOffered as ToolNotOffered
from parley.errors import ToolServerFailure as ToolServerFailure

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
