"""The whole operator configuration (``http-api.md``, "Operator configuration"): its four sections,
``principals``, ``tool_servers``, ``limits`` and ``models``.

The sections are frozen dataclasses read by ``parley.reading`` rather than pydantic models: every
function reads this configuration on its first event, and pydantic's import and model building were most
of that event's own time (issue 20). Each field says how its value is read and checked (``reads``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from parley.config.connections import ConnectionRules
from parley.config.limits import Limits
from parley.config.models import ModelsConfig
from parley.config.principals import Principal, distinct_principals
from parley.config.tool_servers import ToolServer, distinct_servers
from parley.reading import items, reads, record, then


@dataclass(frozen=True)
class OperatorConfig:
    """The whole operator configuration; an empty one has no principals, so every call is 401."""

    principals: tuple[Principal, ...] = field(
        default=(), metadata=reads(then(items(record(Principal)), distinct_principals))
    )
    tool_servers: tuple[ToolServer, ...] = field(
        default=(), metadata=reads(then(items(record(ToolServer)), distinct_servers))
    )
    limits: Limits = field(default_factory=Limits, metadata=reads(record(Limits)))
    models: ModelsConfig = field(default_factory=ModelsConfig, metadata=reads(record(ModelsConfig)))
    connections: ConnectionRules = field(
        default_factory=ConnectionRules, metadata=reads(record(ConnectionRules))
    )

    def principal_named(self, principal_id: str) -> Principal:
        """The principal ``principal_id`` with its grants; one with none when the configuration does not
        name it (a JWT of the issuer for someone no grant mentions: every playbook is then not found)."""
        for principal in self.principals:
            if principal.id == principal_id:
                return principal
        return Principal(id=principal_id)


__all__ = ["OperatorConfig"]
