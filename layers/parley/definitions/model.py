"""What a definition is, as ``http-api.md`` ("Definitions") shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

DEFINITION_TYPES: Final = ("interaction", "reasoning", "workflow")

Status = Literal["active", "retired"]


@dataclass(frozen=True)
class PlaybookRef:
    """The playbook a call is about: every definition lives in exactly one."""

    org: str
    playbook: str


@dataclass(frozen=True)
class Definition:
    """A definition at its latest version (the head), with its status.

    ``created_at`` is when the name was first saved; ``updated_at`` when the head last changed (a new
    version or retirement). Times are ISO 8601 UTC strings (``parley.clock.format_time``).
    """

    type: str
    name: str
    version: int
    status: Status
    media_type: str
    description: str | None
    source: str
    overview: str
    warnings: tuple[str, ...] = field(default=())
    created_at: str = ""
    updated_at: str = ""
    #: What the type adds to the definition as shown (a workflow's ``state_machine`` and ``schedule``).
    shows: dict[str, Any] | None = None
    #: The functions the definition calls, as ``type/name`` (a workflow's ``call: run_definition``
    #: tasks): their overviews list it under **Used by**. Not shown.
    uses: tuple[str, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "name": self.name,
            "version": self.version,
            "status": self.status,
            "media_type": self.media_type,
            "description": self.description,
            "source": self.source,
            "overview": self.overview,
            "warnings": list(self.warnings),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            **(self.shows or {}),
        }


@dataclass(frozen=True)
class DefinitionPage:
    """One page of ``list_definitions``; ``next_cursor`` is ``None`` on the last page."""

    definitions: tuple[Definition, ...]
    next_cursor: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "definitions": [d.as_json() for d in self.definitions],
            "next_cursor": self.next_cursor,
        }
