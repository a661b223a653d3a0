"""Domain errors, one per problem *reason* of ``http-api.md`` ("Problems").

Every error the runtime raises for a caller is a :class:`Problem`; the API edge turns it into an
RFC 9457 document (see ``parley.api.problems``). There is one class, not a tree, because the HTTP
contract names errors by ``reason`` (and ``kind``/``because``), never by a language type::

    Problem(reason)            -> status from REASONS[reason]
      .kind                    e.g. "unworkable", "requests_full", "tools_called"
      .because                 e.g. "server_failed", "tool_error"
      .errors                  [{"pointer": ..., "detail": ...}] at most 20, then one that counts the rest

Lower-level errors (botocore, MCP, YAML, Liquid) are translated at the adapter edge with
``raise Problem(...) from exc``; nothing matches on message text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

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
class Problem(Exception):
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
