"""A document that passed its type's save-time checks (``parley.runs.kinds.check_source`` finds the type)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CheckedDocument:
    """A document that passed every save-time check, with what the definition shows of it."""

    media_type: str
    description: str | None
    front_matter: dict[str, Any]
    body: str
    overview: str
    warnings: list[str] = field(default_factory=list)
    #: What the type adds to the definition as shown (``Definition.shows``).
    shows: dict[str, Any] | None = None
    #: The functions the document calls, as ``type/name`` (``Definition.uses``).
    uses: tuple[str, ...] = ()
