"""The runtime's errors, in one module (issue 30, as httpx keeps its own in ``_exceptions.py``).

Every exception the runtime raises of its own derives from :class:`ParleyError`::

    ParleyError
    ├── Problem                     what a caller is told: one per problem *reason* of http-api.md
    ├── OperatorConfigError         the operator configuration cannot be used (also a ValueError)
    ├── StoreConflict               the table: a write's condition did not hold
    ├── StoreContention             the table: another transaction holds the items; try again
    ├── ContentMissing              content too large for an item, and no content store (a RuntimeError)
    ├── ToolNotOffered              a tool this playbook cannot use
    ├── ToolServerFailure           a tool server that could not be used
    ├── SecretUnavailable           a tool server header's secret that cannot be read
    ├── RenderFailure               a template that cannot render with its data
    └── the errors of one package, kept beside the code that raises and catches them: the reading's
        ``Refused`` (``parley.reading``), the runs store's ``RequestsFull`` and ``RunTaken``, delivery's
        ``DeliveryRefused``, the workflow compiler's and expressions' (``NotCompiled``,
        ``ExpressionSyntaxError``, ``EventsFull``), the reasoning type's, the local server's, the
        authorizer's, the client's and the demo's.

The modules that raised these before keep their names (``parley.dynamo.StoreConflict``,
``parley.ports.tools.ToolServerFailure``, ``parley.templates.render.RenderFailure``…), so an import of
either place is the same class. An exception that was a ``ValueError``, ``RuntimeError``, ``OSError``
or ``PermissionError`` still is: the root is added, never a base taken away.

**Problem.** Every error the runtime raises for a caller is a :class:`Problem`; the API edge turns it
into an RFC 9457 document (see ``parley.api.problems``). Problems are one class, not a tree, because the
HTTP contract names errors by ``reason`` (and ``kind``/``because``), never by a language type::

    Problem(reason)            -> status from REASONS[reason]
      .kind                    e.g. "unworkable", "requests_full", "tools_called"
      .because                 e.g. "server_failed", "tool_error"
      .errors                  [{"pointer": ..., "detail": ...}] at most 20, then one that counts the rest

Lower-level errors (botocore, MCP, YAML, Liquid) are translated at the adapter edge with
``raise Problem(...) from exc``; nothing matches on message text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

PROBLEM_TYPE_BASE: Final = "https://on.auto/problems/"
MAX_LISTED_ERRORS: Final = 20

#: reason -> (HTTP status, title)
REASONS: Final[Mapping[str, tuple[int, str]]] = {
    "bad_request": (400, "Bad request"),
    "unauthenticated": (401, "Unauthenticated"),
    "forbidden": (403, "Forbidden"),
    "not_found": (404, "Not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "conflict": (409, "Conflict"),
    "tools_called": (409, "Tools called"),
    "effect_unknown": (409, "Effect unknown"),
    "cancelled": (409, "Cancelled"),
    "unanswered": (410, "Unanswered"),
    "content_too_large": (413, "Content too large"),
    "unsupported_media_type": (415, "Unsupported media type"),
    "invalid_input": (422, "Invalid input"),
    "internal": (500, "Internal error"),
    "unavailable": (503, "Unavailable"),
    "tools_unfinished": (503, "Tools unfinished"),
}


class ParleyError(Exception):
    """The root of every exception the runtime raises of its own (the tree is this module's docstring)."""


@dataclass(frozen=True)
class ErrorEntry:
    """One entry of a problem's ``errors``: where (a JSON Pointer into the request) and what."""

    pointer: str
    detail: str

    def as_json(self) -> dict[str, str]:
        return {"pointer": self.pointer, "detail": self.detail}


def capped_errors(entries: Iterable[ErrorEntry], limit: int = MAX_LISTED_ERRORS) -> list[ErrorEntry]:
    """Distinct entries in order, at most ``limit``, then one entry that counts the rest."""
    seen: set[ErrorEntry] = set()
    distinct: list[ErrorEntry] = []
    for entry in entries:
        if entry not in seen:
            seen.add(entry)
            distinct.append(entry)
    if len(distinct) <= limit:
        return distinct
    rest = len(distinct) - limit
    last = distinct[limit]
    noun = "issue is" if rest == 1 else "issues are"
    return [*distinct[:limit], ErrorEntry(last.pointer, f"{rest} more {noun} not shown")]


@dataclass
class Problem(ParleyError):
    """A failure the caller is told about, as an RFC 9457 problem with a ``reason``.

    ``errors`` is shown as given: build it with :func:`capped_errors` (or ``DocumentProblems``) so
    that it holds at most 20 entries and one that counts the rest.
    """

    reason: str
    detail: str
    kind: str | None = None
    because: str | None = None
    errors: list[ErrorEntry] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    instance: str | None = None

    def __post_init__(self) -> None:
        if self.reason not in REASONS:
            raise ValueError(f"unknown problem reason {self.reason!r}")
        super().__init__(self.detail)

    @property
    def status(self) -> int:
        return REASONS[self.reason][0]

    @property
    def title(self) -> str:
        return REASONS[self.reason][1]

    def as_json(self) -> dict[str, Any]:
        """The problem document's members, as ``http-api.md`` names them."""
        doc: dict[str, Any] = {
            "type": PROBLEM_TYPE_BASE + self.reason,
            "title": self.title,
            "status": self.status,
            "reason": self.reason,
            "detail": self.detail,
        }
        if self.kind is not None:
            doc["kind"] = self.kind
        if self.because is not None:
            doc["because"] = self.because
        if self.errors:
            doc["errors"] = [e.as_json() for e in self.errors]
        if self.instance is not None:
            doc["instance"] = self.instance
        return doc


# --- the configuration ----------------------------------------------------------------------------


class OperatorConfigError(ParleyError, ValueError):
    """The operator configuration cannot be used; the message names the source and the field."""


# --- the table (``parley.dynamo``) ----------------------------------------------------------------

#: A transaction item's cancellation code when its condition did not hold.
CONDITION_FAILED: Final = "ConditionalCheckFailed"


class StoreConflict(ParleyError):
    """A write's condition did not hold.

    ``reasons`` holds one cancellation code per item of a cancelled transaction (``"None"`` for the
    items that were fine), and is empty for a single write.
    """

    def __init__(self, code: str, reasons: Sequence[str] = ()) -> None:
        super().__init__(code)
        self.reasons = tuple(reasons)

    def failed(self, index: int) -> bool:
        """Whether the condition of the transaction's item ``index`` is one that did not hold."""
        return index < len(self.reasons) and self.reasons[index] == CONDITION_FAILED


class StoreContention(ParleyError):
    """Another transaction was writing the same items at that moment; trying again may succeed."""


# --- the ports: content and tools (``parley.ports.content``, ``parley.ports.tools``) ---------------


class ContentMissing(ParleyError, RuntimeError):
    """Content too large for an item, and no content store to keep it in."""


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


class ToolNotOffered(ParleyError):
    """The tool cannot be used by this playbook: ``because`` is ``tool_server_not_configured``,
    ``tool_not_allowed`` or ``tool_not_listed`` (kind ``tool_not_offered``), or, for a connection that
    cannot be used, ``connection_pending``, ``connection_broken`` or ``connection_not_allowed``."""

    def __init__(self, because: NotOfferedBecause, detail: str) -> None:
        super().__init__(detail)
        self.because: NotOfferedBecause = because
        self.detail = detail


class ToolServerFailure(ParleyError):
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


class SecretUnavailable(ParleyError):
    """A header's secret cannot be read (the server is then treated as failing: ``key_refused`` would
    tell the operator to check a key the server never saw)."""


# --- templates (``parley.templates.render``) -------------------------------------------------------


class RenderFailure(ParleyError):
    """A template that cannot render with this data.

    ``line`` is the line in the document (``first_line`` plus the line within the template) when
    the engine knows it. ``pointer`` is ``/input/<field...>`` when a missing input field stopped the
    render. ``structure_among_text`` marks a list or object rendered inside a longer text argument.
    """

    def __init__(
        self,
        line: int | None,
        message: str,
        pointer: str | None = None,
        *,
        structure_among_text: bool = False,
    ) -> None:
        super().__init__(line, message, pointer)
        self.line = line
        self.message = message
        self.pointer = pointer
        self.structure_among_text = structure_among_text

    def __str__(self) -> str:
        return f"Line {self.line}: {self.message}" if self.line is not None else self.message


__all__ = [
    "CONDITION_FAILED",
    "MAX_LISTED_ERRORS",
    "PROBLEM_TYPE_BASE",
    "REASONS",
    "Because",
    "ContentMissing",
    "ErrorEntry",
    "NotOfferedBecause",
    "OperatorConfigError",
    "ParleyError",
    "Problem",
    "RenderFailure",
    "SecretUnavailable",
    "Stage",
    "StoreConflict",
    "StoreContention",
    "ToolNotOffered",
    "ToolServerFailure",
    "capped_errors",
]
