"""Checking a definition's source when it is saved: the entry point the definitions service calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parley.errors import Problem


@dataclass(frozen=True)
class CheckedDocument:
    """A document that passed every save-time check, with what the definition shows of it."""

    media_type: str
    description: str | None
    front_matter: dict[str, Any]
    body: str
    overview: str
    warnings: list[str] = field(default_factory=list)


def check_source(definition_type: str, source: str) -> CheckedDocument:
    """Check ``source`` as a document of ``definition_type``.

    Raises :class:`~parley.errors.Problem` ``invalid_input`` with every problem under ``/source``.
    """
    if definition_type == "interaction":
        from parley.documents.interaction import check_interaction_source

        return check_interaction_source(source)
    raise Problem(
        "invalid_input",
        f"Definitions of type {definition_type!r} cannot be saved by this runtime yet.",
    )
